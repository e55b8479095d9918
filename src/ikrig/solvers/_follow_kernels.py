"""Numba kernel of follow-the-target (private; the kernel contract and the shared helpers are
in :mod:`ikrig.solvers._harness.chain_common`)."""

from __future__ import annotations

import numpy as np

from .._jit.setup import njit
from ..kernels.constraints import project_local_t
from ..kernels.qmath import (
    pick,
    q_between,
    q_conj,
    q_get,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    v_dot,
    v_from_array,
    v_get,
    v_norm,
    v_set,
)
from ._harness.chain_common import (
    EPS_LEN,
    ChainInputs,
    ChainState,
    bend_axis,
    bow_direction,
    bow_if_on_line,
    free_rotations,
    joint_dist,
    line_axis,
    local_rotations,
    out_of_range,
    place,
    place_along,
    scratch,
    setup_free_k,
    setup_k,
    skip,
    turn_parent,
)
from ._harness.single_kernels import fits, not_one, rest_arrays, status, status_arrays


@njit(cache=True)
def half_turn_or_arc(cur, d, w_fallback):
    """Shortest arc from ``cur`` to ``d``; a half turn about ``w_fallback`` when opposite."""
    c = v_dot(cur, d)
    nd = v_norm(d) * v_norm(cur)
    if c < -(1.0 - 1e-12) * nd:
        w = bend_axis(cur, w_fallback)
        return (w[0], w[1], w[2], 0.0)
    return q_between(cur, d)


@njit(cache=True)
def follow_kernel(pos, target, rot, parent, kinds, params, constrained, settings,
                  out, rw, rl, err, reached):  # fmt: skip
    """One follow-the-target pass (``settings``: ``FOLLOW_SETTINGS``; tail-first, or
    head-first for ``head``), constrained when ``constrained``, into the outputs of
    :func:`~ikrig.solvers._fabrik_kernels.fabrik_free` without ``iters`` (``rw`` a separate
    array). Without constraints the
    rotations are the free kernels' (shortest arcs). Returns ``bad``."""
    N, m = target.shape[0], pos.shape[1]
    n = m - 1
    inp = ChainInputs(pos, target, rot, parent)
    sc = scratch(n)
    lengths, u = sc.lengths, sc.u
    s = settings[0]
    tol, head = s.tol, s.head
    bend_t = v_from_array(s.bend)
    skipped = False
    for k in range(N):
        if constrained:
            start = setup_k(inp, params, k, out, rw, sc)
        else:
            start = setup_free_k(inp, k, out, sc)
        if start.bad:
            return k
        pq, total = start.pq, start.total
        p = out[k]
        if out_of_range(p, 0, target[k]):
            skip(k, rw, rl, err, reached)
            skipped = True
            continue
        r = rw[k]
        prm = pick(params, k)
        ch = ChainState(p, r, pq, lengths, sc.bl, total, kinds, prm)
        t = v_get(target, k)
        if constrained:
            bow_if_on_line(ch, t, u, bend_t, True, head)
        else:
            if n > 1:
                # A straight chain whose first moved bone must turn exactly around (target on
                # the chain's line, behind the effector / ahead of the root) is bowed first.
                a, on_line = line_axis(p, t, lengths, total, u)
                if on_line:
                    j = 0 if head else n - 1
                    if head:
                        d = (p[1, 0] - t[0], p[1, 1] - t[1], p[1, 2] - t[2])
                    else:
                        d = (t[0] - p[j, 0], t[1] - p[j, 1], t[2] - p[j, 2])
                    if v_dot(d, v_get(u, j)) < -EPS_LEN * total:
                        w = bend_axis(a, bend_t)
                        for i in range(n):
                            db = bow_direction(i, n, w, v_get(u, i))
                            place_along(p, i, lengths[i], db)
                            v_set(u, i, db)
        eps = EPS_LEN * total
        if head:
            # Root onto the target; each bone then turns towards its old end.
            p[0, 0], p[0, 1], p[0, 2] = t
            for i in range(n):
                cur = v_get(u, i)
                d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                if v_norm(d) <= eps:
                    d = cur
                if constrained:
                    rot_arc = half_turn_or_arc(cur, d, bend_t)
                    q_set(r, i, q_normalize(q_mul(rot_arc, q_get(r, i))))
                    place(i, d, ch)
                else:
                    dn = v_norm(d)
                    place_along(p, i, lengths[i], (d[0] / dn, d[1] / dn, d[2] / dn))
            e = joint_dist(p, 0, t)
        else:
            # Effector onto the target; each bone, from the effector up, turns towards its new
            # end and moves so that it ends there, dragging the root along.
            p[n, 0], p[n, 1], p[n, 2] = t
            for i in range(n - 1, -1, -1):
                cur = v_get(u, i)
                d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                if v_norm(d) <= eps:
                    d = cur
                arc = half_turn_or_arc(cur, d, bend_t)
                if constrained:
                    # The child's limit is relative to this bone: turn this bone to keep it.
                    bw = turn_parent(i, arc, ch)
                else:
                    bw = q_rotate(arc, cur)
                    nb = v_norm(bw)
                    bw = (bw[0] / nb, bw[1] / nb, bw[2] / nb)
                li = lengths[i]
                p[i, 0] = p[i + 1, 0] - li * bw[0]
                p[i, 1] = p[i + 1, 1] - li * bw[1]
                p[i, 2] = p[i + 1, 2] - li * bw[2]
            if constrained:
                # The root's own limit (relative to its fixed parent frame): turn the whole
                # chain rigidly about the target, which keeps every other joint's rotation.
                r0 = q_get(r, 0)
                q0 = project_local_t(kinds[0], prm[0], q_mul(q_conj(pq), r0))
                r0n = q_normalize(q_mul(pq, q0))
                delta = q_normalize(q_mul(r0n, q_conj(r0)))
                if abs(delta[3]) < 1.0 - 1e-15:
                    for i in range(n):
                        q_set(r, i, q_normalize(q_mul(delta, q_get(r, i))))
                    for j in range(n):
                        v = q_rotate(delta, (p[j, 0] - t[0], p[j, 1] - t[1], p[j, 2] - t[2]))
                        p[j, 0], p[j, 1], p[j, 2] = t[0] + v[0], t[1] + v[1], t[2] + v[2]
            e = joint_dist(p, n, t)
        if constrained:
            local_rotations(r, pq, rl[k])
        else:
            free_rotations(pick(pos, k), p, pick(rot, k), pq, r, rl[k])
        err[k] = e
        reached[k] = e <= tol * total
    return -2 if skipped else -1


@njit(cache=True)
def follow_one(pos, target, settings, out, rl):
    """:func:`follow_kernel` for one free problem (see :mod:`._harness.single_kernels`);
    one iteration."""
    m = pos.shape[0]
    if not fits(pos, target, out, rl, 3):
        return not_one()
    rest = rest_arrays(m - 1)
    a = status_arrays()
    a.iters[0] = 1
    bad = follow_kernel(pos.reshape((1, m, 3)), target.reshape((1, 3)), rest.rot, rest.parent,
                        rest.kinds, rest.params, False, settings, out.reshape((1, m, 3)),
                        np.empty((1, m - 1, 4)), rl.reshape((1, m - 1, 4)), a.err,
                        a.reached)  # fmt: skip
    return status(a, bad)
