"""Numba kernels of FABRIK, free and constrained (private; the kernel contract and the shared
helpers are in :mod:`ikrig.solvers._harness.chain_common`)."""

from __future__ import annotations

import math

import numpy as np

from .._jit.setup import njit
from ..kernels.constraints import project_direction_t
from ..kernels.qmath import pick, q_between, q_get, q_rotate, v_from_array, v_get, v_norm, v_set
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
    rodrigues,
    scratch,
    setup_free_k,
    setup_k,
    skip,
    snap_all,
    turn_parent,
)
from ._harness.single_kernels import fits, not_one, rest_arrays, status, status_arrays

# --------------------------------------------------------------------------------------
# FABRIK, no constraints
# --------------------------------------------------------------------------------------


@njit(cache=True, error_model="numpy")
def _free_passes(p, t, lengths, u, total, bend, max_iter, tol_k):
    """Bow a chain lying on the target line, then run backward + forward passes on ``p``
    (``u``: the bones' unit directions) until the effector is within ``tol_k`` of ``t`` or
    after ``max_iter`` passes. Returns ``(error, passes, best error, passes to the best)``
    (the start, 0 passes, included)."""
    n = lengths.shape[0]
    tx, ty, tz = t[0], t[1], t[2]
    eps = EPS_LEN * total
    rx, ry, rz = p[0, 0], p[0, 1], p[0, 2]
    e = joint_dist(p, n, t)
    e_best, it_best = e, 0
    a, on_line = line_axis(p, t, lengths, total, u)
    if on_line and n > 1:
        w = bend_axis(a, bend)
        for i in range(n):
            d = bow_direction(i, n, w, v_get(u, i))
            v_set(u, i, d)
            place_along(p, i, lengths[i], d)
    it = 0
    while it < max_iter:
        it += 1
        # Backward: effector onto the target, each joint pulled towards its child.
        p[n, 0], p[n, 1], p[n, 2] = tx, ty, tz
        for i in range(n - 1, -1, -1):
            dx = p[i, 0] - p[i + 1, 0]
            dy = p[i, 1] - p[i + 1, 1]
            dz = p[i, 2] - p[i + 1, 2]
            dn = math.sqrt(dx * dx + dy * dy + dz * dz)
            if dn > eps:
                s = 1.0 / dn
                u[i, 0], u[i, 1], u[i, 2] = -dx * s, -dy * s, -dz * s
            li = lengths[i]
            p[i, 0] = p[i + 1, 0] - li * u[i, 0]
            p[i, 1] = p[i + 1, 1] - li * u[i, 1]
            p[i, 2] = p[i + 1, 2] - li * u[i, 2]
        # Forward: root back in place, each child pulled towards the parent.
        p[0, 0], p[0, 1], p[0, 2] = rx, ry, rz
        for i in range(n):
            dx = p[i + 1, 0] - p[i, 0]
            dy = p[i + 1, 1] - p[i, 1]
            dz = p[i + 1, 2] - p[i, 2]
            dn = math.sqrt(dx * dx + dy * dy + dz * dz)
            if dn > eps:
                s = 1.0 / dn
                u[i, 0], u[i, 1], u[i, 2] = dx * s, dy * s, dz * s
            li = lengths[i]
            p[i + 1, 0] = p[i, 0] + li * u[i, 0]
            p[i + 1, 1] = p[i, 1] + li * u[i, 1]
            p[i + 1, 2] = p[i, 2] + li * u[i, 2]
        e = joint_dist(p, n, t)
        if e <= tol_k:
            break
        if e < e_best:
            e_best, it_best = e, it
    return e, it, e_best, it_best


@njit(cache=True, error_model="numpy")
def fabrik_free(pos, target, rot, parent, settings, out, rw, rl, err, iters, reached):
    """FABRIK without constraints (``settings``: ``FABRIK_SETTINGS``), into ``out (N, m, 3)``,
    ``rw``, ``rl (N, n, 4)``, ``err (N,)`` float64, ``iters (N,)`` int64 and ``reached (N,)``
    bool (``rw`` may be ``rl``, which then holds the local rotations). ``pos`` may be ``(1,
    m, 3)``, one start pose for every target. Returns ``bad``.

    Passes almost always bring the effector nearer; where one did not (a chain bowed off
    the target line that was already nearly on the target, rounding), the passes are
    replayed from the start up to the best one, which is returned (no copy per pass)."""
    N, m = target.shape[0], pos.shape[1]
    n = m - 1
    inp = ChainInputs(pos, target, rot, parent)
    sc = scratch(n)
    lengths, u = sc.lengths, sc.u
    s = settings[0]
    max_iter, tol = s.max_iter, s.tol
    bend_t = v_from_array(s.bend)
    skipped = False
    for k in range(N):
        start = setup_free_k(inp, k, out, sc)
        if start.bad:
            return k
        pq, total = start.pq, start.total
        p = out[k]
        if out_of_range(p, n, target[k]):
            skip(k, rw, rl, err, reached)
            iters[k] = 0
            skipped = True
            continue
        t = target[k]
        tol_k = tol * total
        e = joint_dist(p, n, t)
        it = 0
        if e > tol_k and max_iter > 0:
            dx, dy, dz = t[0] - p[0, 0], t[1] - p[0, 1], t[2] - p[0, 2]
            dist = math.sqrt(dx * dx + dy * dy + dz * dz)
            if dist >= total:
                # Out of reach: every bone points straight at the target, in one pass.
                if dist > 0.0:
                    a = (dx / dist, dy / dist, dz / dist)
                else:
                    a = v_get(u, 0)
                for i in range(n):
                    place_along(p, i, lengths[i], a)
                e = joint_dist(p, n, t)
                it = 1
            else:
                e, it, e_best, it_best = _free_passes(p, t, lengths, u, total, bend_t,
                                                      max_iter, tol_k)  # fmt: skip
                if e > e_best:  # replay up to the best pass (deterministic)
                    setup_free_k(inp, k, out, sc)
                    if it_best > 0:
                        _free_passes(p, t, lengths, u, total, bend_t, it_best, tol_k)
                    e = e_best
        free_rotations(pick(pos, k), p, pick(rot, k), pq, rw[k], rl[k])
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol_k
    return -2 if skipped else -1


# --------------------------------------------------------------------------------------
# FABRIK with constraints
# --------------------------------------------------------------------------------------


STALL_PASSES = 8
"""Constrained passes without progress (see :data:`STALL_PROGRESS`) before a restart."""
STALL_PROGRESS = 0.01
"""Progress: the effector's distance to the target down by this fraction since the last
mark."""
FLIP_BITS = 5
"""Restart ``j`` flips bone ``i`` when bit ``i % FLIP_BITS`` of ``j`` is set."""
MAX_RESTARTS = 2**FLIP_BITS - 1
"""Restarts of one constrained solve at most: each flip pattern once."""


@njit(cache=True)
def restart_pose(ch, t, j):
    """Restart ``j`` (``1 <= j <= MAX_RESTARTS``) of a stalled constrained solve: the bones
    of flip pattern ``j`` (:data:`FLIP_BITS`) turned half round the root-to-target axis, and
    every bone placed again, root first, within its limits. The pose stays valid, the
    constraint frames stay the input pose's, and a chain lying in a plane with its target
    stays in that plane (a half turn about a line of the plane maps the plane onto
    itself)."""
    p = ch.p
    n = ch.lengths.shape[0]
    a = (t[0] - p[0, 0], t[1] - p[0, 1], t[2] - p[0, 2])
    la = v_norm(a)
    if la <= EPS_LEN * ch.total:
        return
    a = (a[0] / la, a[1] / la, a[2] / la)
    for i in range(n):
        d = q_rotate(q_get(ch.r, i), v_get(ch.bl, i))
        if (j >> (i % FLIP_BITS)) & 1:
            d = rodrigues(a, d, -1.0, 0.0)
        place(i, d, ch)


@njit(cache=True)
def fabrik_constrained(pos, target, rot, parent, kinds, params, settings,
                       out, rw, rl, err, iters, reached):  # fmt: skip
    """FABRIK with per-joint constraints and rotation tracking (``settings``:
    ``FABRIK_SETTINGS``), into the outputs of :func:`fabrik_free` (``rw`` a separate array).
    Returns ``bad``.

    The input pose is first snapped into the limits (root first); a target out of reach
    gives one forward pass with every bone aimed at the target. Constrained passes need not
    bring the effector nearer, so the best pose so far (the snapped start pose included)
    is kept and returned; passes that stall restart from another pose (:func:`restart_pose`,
    after :data:`STALL_PASSES`).
    """
    N, m = target.shape[0], pos.shape[1]
    n = m - 1
    inp = ChainInputs(pos, target, rot, parent)
    sc = scratch(n)
    lengths, u = sc.lengths, sc.u
    p_best, r_best = np.empty((m, 3)), np.empty((n, 4))
    s = settings[0]
    max_iter, tol = s.max_iter, s.tol
    bend_t = v_from_array(s.bend)
    skipped = False
    for k in range(N):
        start = setup_k(inp, params, k, out, rw, sc)
        if start.bad:
            return k
        pq, total = start.pq, start.total
        p = out[k]
        if out_of_range(p, n, target[k]):
            skip(k, rw, rl, err, reached)
            iters[k] = 0
            skipped = True
            continue
        r = rw[k]
        prm = pick(params, k)
        ch = ChainState(p, r, pq, lengths, sc.bl, total, kinds, prm)
        tol_k = tol * total
        t = (target[k, 0], target[k, 1], target[k, 2])
        snap_all(ch)
        root = (p[0, 0], p[0, 1], p[0, 2])
        e = joint_dist(p, n, t)
        e_best = e
        it = 0
        if e > tol_k and max_iter > 0:
            p_best[:] = p
            r_best[:] = r
            if joint_dist(p, 0, t) >= total:
                for i in range(n):
                    place(i, (t[0] - p[i, 0], t[1] - p[i, 1], t[2] - p[i, 2]), ch)
                it = 1
                e = joint_dist(p, n, t)
            else:
                bow_if_on_line(ch, t, u, bend_t, False, False)
                e_mark, it_mark, restarts = e, 0, 0
                while it < max_iter:
                    it += 1
                    p[n, 0], p[n, 1], p[n, 2] = t
                    for i in range(n - 1, -1, -1):
                        par = pq if i == 0 else q_get(r, i - 1)
                        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                        cur = q_rotate(q_get(r, i), v_get(sc.bl, i))
                        if v_norm(d) <= EPS_LEN * total:
                            d = cur
                        dp = project_direction_t(kinds[i], prm[i], par, d)
                        dp = turn_parent(i, q_between(cur, dp), ch)
                        li = lengths[i]
                        p[i, 0] = p[i + 1, 0] - li * dp[0]
                        p[i, 1] = p[i + 1, 1] - li * dp[1]
                        p[i, 2] = p[i + 1, 2] - li * dp[2]
                    p[0, 0], p[0, 1], p[0, 2] = root
                    for i in range(n):
                        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                        place(i, d, ch)
                    e = joint_dist(p, n, t)
                    if e <= tol_k:
                        break
                    if e < e_best:
                        e_best = e
                        p_best[:] = p
                        r_best[:] = r
                    if e < e_mark * (1.0 - STALL_PROGRESS):
                        e_mark, it_mark = e, it
                    elif it - it_mark >= STALL_PASSES and restarts < MAX_RESTARTS:
                        restarts += 1
                        restart_pose(ch, t, restarts)
                        # the error is the restarted pose's now, a candidate as any pass's:
                        # a solve that ends here, or later after passes that do worse,
                        # keeps the best pose unless the restart beat it
                        e = joint_dist(p, n, t)
                        e_mark, it_mark = e, it
                        if e < e_best:
                            e_best = e
                            p_best[:] = p
                            r_best[:] = r
            if e > e_best:  # a pass made it worse: back to the best pose so far
                e = e_best
                p[:] = p_best
                r[:] = r_best
        local_rotations(r, pq, rl[k])
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol_k
    return -2 if skipped else -1


@njit(cache=True, error_model="numpy")
def fabrik_free_one(pos, target, settings, out, rl):
    """:func:`fabrik_free` for one problem (see :mod:`._harness.single_kernels`)."""
    m = pos.shape[0]
    if not fits(pos, target, out, rl, 3):
        return not_one()
    rest = rest_arrays(m - 1)
    a = status_arrays()
    rl1 = rl.reshape((1, m - 1, 4))
    bad = fabrik_free(pos.reshape((1, m, 3)), target.reshape((1, 3)), rest.rot, rest.parent,
                      settings, out.reshape((1, m, 3)), rl1, rl1, a.err, a.iters,
                      a.reached)  # fmt: skip
    return status(a, bad)
