"""Numba kernels of the position-based chain solvers: FABRIK and follow-the-target.

Private. The wrappers in :mod:`ikrig.solvers.fabrik` and :mod:`ikrig.solvers.follow`
validate and flatten (:mod:`ikrig.solvers._options`); every kernel takes flat C-contiguous
float64 arrays:

* ``pos (M, m, 3)`` the chain's joint positions (``m = n + 1``, root first), read only;
* ``target (N, 3)``;
* ``rot (M, n, 4)`` the start world rotations of the solved joints and ``parent (M, 4)`` the
  world rotation of the chain root's parent; here and below ``M`` is 1 (one array shared by
  every problem) or ``N`` (one per problem). For
  chains given as positions both are ``parent_rotation_world`` (the input pose is the rest
  pose: every local rotation is the identity);
* for the constrained kernels the packed constraints ``kinds (n,)``, ``params (M, n, P)``
  (:mod:`ikrig.constraints._kernels`; each row holds the unit bone direction in the joint's
  own frame at ``P_BONE``).
* ``tol``: the tolerance as a fraction of each chain's length (sum of its bone lengths).

They return ``bad``: ``-1`` normally, the index of the first batch element whose inputs
were not finite (the wrapper raises), or ``-2`` when some elements were out of range: a
bone or a target distance beyond ``BIG`` or a bone below ``SMALL`` (their squares would
overflow or underflow float64). Those elements are left unsolved with
``err = -1`` and the wrapper solves them again rescaled by a power of two
(:func:`ikrig.solvers._rescale.rescue`). float32 inputs are never out of range.

Shared rules
------------
* Bone lengths are taken from the input and kept exactly: a joint is only ever placed at
  ``previous + length * unit direction``.
* A direction that cannot be formed (two points on top of each other) falls back to the
  bone's last well-defined direction, so nothing divides by zero.
* Straight-line stall: when every joint lies on the line from the root to the target (or,
  for a target at the root, on the chain's own line), FABRIK cannot leave that line. The
  chain is first bowed deterministically: bone ``i`` turns by
  ``BOW * (n - 1 - 2 i) / n`` radians about the bend axis (the user's ``bend_axis`` made
  perpendicular to the line, else :func:`v_any_perpendicular` of the line, which is +Z for a
  chain along X).
* Rotations. Free kernels turn each joint by the shortest arc from its input bone direction
  to its output one (world rotation ``W_i = arc_i * rot_i``; twist kept) and return the
  local rotations ``W_{i-1}^-1 W_i`` (``W_{-1}`` = ``parent``). Constrained kernels track each
  joint's world rotation: when a bone is placed with a wanted direction ``d``, ``d`` is
  projected (``project_direction`` with the parent frame as it now stands), the joint's
  rotation is turned by the shortest arc onto it, snapped with ``project_local`` and the
  child is placed along the snapped rotation's bone. Every forward placement therefore
  leaves the joint inside its limits.
* Constrained backward passes (FABRIK's, and follow's tail-first pass) place bones from the
  effector up. Bone ``i``'s wanted direction is projected with its parent frame as it
  stands (the parent has not moved yet: approximate), the joint is turned onto it, and if
  the child's rotation relative to bone ``i`` then breaks the child's limit, bone ``i`` is
  turned instead (``R_i = R_child * project_local(R_i^-1 R_child)^-1``) so that the child,
  which is already in place, stays inside its limit.
"""

from __future__ import annotations

import math

import numpy as np

from .._numba import njit
from ..constraints._kernels import P_BONE, project_direction_t, project_local_t
from ..math._qmath import (
    pick,
    q_between,
    q_conj,
    q_from_array,
    q_get,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    row_finite,
    v_any_perpendicular,
    v_cross,
    v_dot,
    v_from_array,
    v_get,
    v_norm,
    v_set,
)

BOW = 0.3  # radians: bow given to a chain that lies on the target line
EPS_LINE = 1e-6  # relative to the chain length: "on the line"
EPS_LEN = 1e-12  # relative to the chain length: "same point"
BIG = 2.0**400  # lengths beyond BIG or below SMALL: the element is rescaled (see above)
SMALL = 2.0**-400


@njit(cache=True)
def _rodrigues(w, d, c, s):
    """Rotate ``d`` about unit ``w`` by the angle with cosine ``c`` and sine ``s``."""
    x = v_cross(w, d)
    k = v_dot(w, d) * (1.0 - c)
    return (
        d[0] * c + x[0] * s + w[0] * k,
        d[1] * c + x[1] * s + w[1] * k,
        d[2] * c + x[2] * s + w[2] * k,
    )


@njit(cache=True)
def _measure(p, lengths, u):
    """Bone lengths and unit directions of the chain ``p`` (``(1, 0, 0)`` for a zero-length
    bone); returns the chain length."""
    total = 0.0
    for i in range(lengths.shape[0]):
        dx, dy, dz = p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2]
        li = math.sqrt(dx * dx + dy * dy + dz * dz)
        lengths[i] = li
        total += li
        if li > 0.0:
            u[i, 0], u[i, 1], u[i, 2] = dx / li, dy / li, dz / li
        else:
            u[i, 0], u[i, 1], u[i, 2] = 1.0, 0.0, 0.0
    return total


@njit(cache=True)
def _line_axis(p, t, lengths, total, u):
    """Unit direction of the root->target line (or the chain's own line) and whether every
    joint lies on it. ``u`` holds the bones' unit directions."""
    n = lengths.shape[0]
    rx, ry, rz = p[0, 0], p[0, 1], p[0, 2]
    dx, dy, dz = t[0] - rx, t[1] - ry, t[2] - rz
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn > EPS_LINE * total:
        a = (dx / dn, dy / dn, dz / dn)
    else:
        ex, ey, ez = p[n, 0] - rx, p[n, 1] - ry, p[n, 2] - rz
        en = math.sqrt(ex * ex + ey * ey + ez * ez)
        if en > EPS_LINE * total:
            a = (ex / en, ey / en, ez / en)
        else:
            a = v_get(u, 0)
            for i in range(n):
                if lengths[i] > EPS_LEN * total:
                    a = v_get(u, i)
                    break
    lim = (EPS_LINE * total) ** 2
    for j in range(1, n + 1):
        vx, vy, vz = p[j, 0] - rx, p[j, 1] - ry, p[j, 2] - rz
        c = vx * a[0] + vy * a[1] + vz * a[2]
        if vx * vx + vy * vy + vz * vz - c * c > lim:
            return a, False
    return a, True


@njit(cache=True)
def _bend_axis(a, bend):
    """Unit axis perpendicular to ``a``: ``bend`` made perpendicular, else a fixed one."""
    k = v_dot(bend, a)
    w = (bend[0] - k * a[0], bend[1] - k * a[1], bend[2] - k * a[2])
    nw = v_norm(w)
    if nw > 1e-6 * (v_norm(bend) + 1e-300):
        return (w[0] / nw, w[1] / nw, w[2] / nw)
    return v_any_perpendicular(a)


@njit(cache=True)
def _bow_direction(i, n, w, d):
    ang = BOW * (n - 1 - 2 * i) / n
    return _rodrigues(w, d, math.cos(ang), math.sin(ang))


@njit(cache=True)
def _place_along(p, i, li, d):
    """``p[i + 1] = p[i] + li * d``."""
    p[i + 1, 0] = p[i, 0] + li * d[0]
    p[i + 1, 1] = p[i, 1] + li * d[1]
    p[i + 1, 2] = p[i, 2] + li * d[2]


@njit(cache=True)
def _arc(a, b):
    """Shortest arc between two vectors of the same length (``q_between`` when opposite or
    zero)."""
    c = v_cross(a, b)
    w = v_dot(a, a) + v_dot(a, b)
    s2 = v_dot(c, c) + w * w
    if not w > 1e-12 * v_dot(a, a):
        return q_between(a, b)
    inv = 1.0 / math.sqrt(s2)
    return (c[0] * inv, c[1] * inv, c[2] * inv, w * inv)


@njit(cache=True)
def _free_rotations(pos_k, p, rot_k, pq, rw_k, rl_k):
    """Rotations of a free chain moved from ``pos_k`` to ``p``: each joint turns by the
    shortest arc from its old bone direction to its new one (``rw_k``, world) and
    ``rl_k`` gets the local rotations (relative to the previous joint, the root's to
    ``pq``). ``rw_k`` may be ``rl_k``."""
    prev = pq
    for i in range(rl_k.shape[0]):
        old = (pos_k[i + 1, 0] - pos_k[i, 0], pos_k[i + 1, 1] - pos_k[i, 1],
               pos_k[i + 1, 2] - pos_k[i, 2])  # fmt: skip
        new = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
        w = q_mul(_arc(old, new), q_get(rot_k, i))
        q_set(rw_k, i, w)
        q_set(rl_k, i, q_mul(q_conj(prev), w))
        prev = w


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
    e = _dist(p, n, t)
    e_best, it_best = e, 0
    a, on_line = _line_axis(p, t, lengths, total, u)
    if on_line and n > 1:
        w = _bend_axis(a, bend)
        for i in range(n):
            d = _bow_direction(i, n, w, v_get(u, i))
            v_set(u, i, d)
            _place_along(p, i, lengths[i], d)
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
        e = _dist(p, n, t)
        if e <= tol_k:
            break
        if e < e_best:
            e_best, it_best = e, it
    return e, it, e_best, it_best


@njit(cache=True, error_model="numpy")
def fabrik_free(pos, target, rot, parent, max_iter, tol, bend, out, rw, rl, err, iters, reached):
    """FABRIK without constraints, into ``out (N, m, 3)``, ``rw``, ``rl (N, n, 4)``, ``err
    (N,)`` float64, ``iters (N,)`` int64 and ``reached (N,)`` bool (passed in: cheaper than
    returning arrays; ``rw`` may be ``rl``, which then holds the local rotations). ``pos``
    may be ``(1, m, 3)``, one start pose for every target. Returns ``bad``.

    Passes almost always bring the effector nearer; where one did not (a chain bowed off
    the target line that was already nearly on the target, rounding), the passes are
    replayed from the start up to the best one, which is returned (no copy per pass)."""
    N, m = target.shape[0], pos.shape[1]
    n = m - 1
    lengths, u, _ = _scratch(n)
    bend_t = v_from_array(bend)
    skipped = False
    for k in range(N):
        pq, total, bad = _setup_free_k(pos, target, parent, k, out, lengths, u)
        if bad:
            return k
        p = out[k]
        if _out_of_range(p, n, target[k]):
            _skip(k, rw, rl, err, reached)
            iters[k] = 0
            skipped = True
            continue
        t = target[k]
        tol_k = tol * total
        e = _dist(p, n, t)
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
                    _place_along(p, i, lengths[i], a)
                e = _dist(p, n, t)
                it = 1
            else:
                e, it, e_best, it_best = _free_passes(p, t, lengths, u, total, bend_t,
                                                      max_iter, tol_k)  # fmt: skip
                if e > e_best:  # replay up to the best pass (deterministic)
                    _setup_free_k(pos, target, parent, k, out, lengths, u)
                    if it_best > 0:
                        _free_passes(p, t, lengths, u, total, bend_t, it_best, tol_k)
                    e = e_best
        _free_rotations(pick(pos, k), p, pick(rot, k), pq, rw[k], rl[k])
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol_k
    return -2 if skipped else -1


# --------------------------------------------------------------------------------------
# The constrained placement step
# --------------------------------------------------------------------------------------


@njit(cache=True)
def _chain_setup(pos_k, rot_k, params, p, r, lengths, bl):
    """Copy one element's positions and rotations, measure the bones and find each bone's
    direction in its joint's own frame (``rot^-1 (p[i+1] - p[i])``; the packed rest
    direction for a zero-length bone). Returns the chain length."""
    n = lengths.shape[0]
    for j in range(n + 1):
        p[j, 0], p[j, 1], p[j, 2] = pos_k[j, 0], pos_k[j, 1], pos_k[j, 2]
    total = 0.0
    for i in range(n):
        ri = q_normalize(q_get(rot_k, i))
        q_set(r, i, ri)
        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
        li = v_norm(d)
        lengths[i] = li
        total += li
        if li > 0.0:
            b = q_rotate(q_conj(ri), (d[0] / li, d[1] / li, d[2] / li))
        else:
            b = (params[i, P_BONE], params[i, P_BONE + 1], params[i, P_BONE + 2])
        v_set(bl, i, b)
    return total


@njit(cache=True)
def _place(i, d, p, r, parent_q, lengths, kinds, params, bl, total):
    """Place bone ``i`` along wanted direction ``d`` within joint ``i``'s constraint.

    Updates ``r[i]`` (world rotation) and ``p[i + 1]``; ``p[i]`` and the parent frame (``r[i
    - 1]`` or ``parent_q``) must be final.
    """
    par = parent_q if i == 0 else q_get(r, i - 1)
    ri = q_get(r, i)
    b = v_get(bl, i)
    cur = q_rotate(ri, b)
    if v_norm(d) <= EPS_LEN * total:
        d = cur
    dp = project_direction_t(kinds[i], params[i], par, d)
    cand = q_mul(q_between(cur, dp), ri)
    q = project_local_t(kinds[i], params[i], q_mul(q_conj(par), cand))
    ri = q_normalize(q_mul(par, q))
    q_set(r, i, ri)
    _place_along(p, i, lengths[i], q_rotate(ri, b))


@njit(cache=True)
def _turn_parent(i, n, arc, r, kinds, params, bl):
    """Turn joint ``i`` by the world rotation ``arc``, then, if its child's rotation relative
    to it breaks the child's limit, turn joint ``i`` instead so that the child (already
    placed) is inside. Updates ``r[i]``; returns bone ``i``'s new unit direction."""
    ri = q_normalize(q_mul(arc, q_get(r, i)))
    if i < n - 1:
        child = q_get(r, i + 1)
        qc = project_local_t(kinds[i + 1], params[i + 1], q_mul(q_conj(ri), child))
        ri = q_normalize(q_mul(child, q_conj(qc)))
    q_set(r, i, ri)
    return q_rotate(ri, v_get(bl, i))


@njit(cache=True)
def _snap_all(p, r, parent_q, lengths, kinds, params, bl):
    """Snap every joint's local rotation into its limits, root first, and redo the FK."""
    par = parent_q
    for i in range(lengths.shape[0]):
        q = project_local_t(kinds[i], params[i], q_mul(q_conj(par), q_get(r, i)))
        ri = q_normalize(q_mul(par, q))
        q_set(r, i, ri)
        _place_along(p, i, lengths[i], q_rotate(ri, v_get(bl, i)))
        par = ri


@njit(cache=True)
def _scratch(n):
    """Per-call scratch: bone lengths ``(n,)``, unit directions ``(n, 3)``, bones in their
    own frames ``(n, 3)``."""
    return np.empty(n), np.empty((n, 3)), np.empty((n, 3))


@njit(cache=True)
def _setup_k(pos, target, rot, parent, params, k, out, rw, lengths, bl):
    """Problem ``k`` of a constrained kernel: copy its chain into ``out[k]``, its start
    rotations into ``rw[k]`` and measure it (:func:`_chain_setup`). Returns ``(parent
    rotation, chain length, bad)``; ``bad`` for non-finite inputs."""
    pk = pick(pos, k)
    pq = q_normalize(q_from_array(pick(parent, k)))
    if not row_finite(pk, target, k):
        return pq, 0.0, True
    return pq, _chain_setup(pk, pick(rot, k), pick(params, k), out[k], rw[k], lengths, bl), False


@njit(cache=True)
def _setup_free_k(pos, target, parent, k, out, lengths, u):
    """Problem ``k`` of a free kernel: copy its chain into ``out[k]`` and measure it
    (:func:`_measure`). Returns as :func:`_setup_k`."""
    pk = pick(pos, k)
    pq = q_normalize(q_from_array(pick(parent, k)))
    if not row_finite(pk, target, k):
        return pq, 0.0, True
    p = out[k]
    for j in range(pk.shape[0]):
        p[j, 0], p[j, 1], p[j, 2] = pk[j, 0], pk[j, 1], pk[j, 2]
    return pq, _measure(p, lengths, u), False


@njit(cache=True)
def _local_rotations(r, parent_q, out_k):
    par = parent_q
    for i in range(r.shape[0]):
        ri = q_get(r, i)
        q_set(out_k, i, q_mul(q_conj(par), ri))
        par = ri


@njit(cache=True)
def _dist(p, j, t):
    dx, dy, dz = p[j, 0] - t[0], p[j, 1] - t[1], p[j, 2] - t[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True)
def _out_of_range(p, j, t):
    """Whether the chain ``p``'s bones (their largest coordinate difference) or joint
    ``j``'s distance to ``t`` are out of the range the kernels square safely (see the
    module notes on ``bad``). Uses no squares, so it cannot overflow itself."""
    far = max(abs(p[j, 0] - t[0]), abs(p[j, 1] - t[1]), abs(p[j, 2] - t[2]))
    big = 0.0
    for i in range(p.shape[0] - 1):
        for c in range(3):
            big = max(big, abs(p[i + 1, c] - p[i, c]))
    return not (far <= BIG and big <= BIG) or 0.0 < big < SMALL


@njit(cache=True)
def _skip(k, rw, rl, err, reached):
    """Leave element ``k`` unsolved for the wrapper's rescaled solve (``err = -1``)."""
    for i in range(rl.shape[1]):
        q_set(rw[k], i, (0.0, 0.0, 0.0, 1.0))
        q_set(rl[k], i, (0.0, 0.0, 0.0, 1.0))
    err[k] = -1.0
    reached[k] = False


@njit(cache=True)
def _bow_if_on_line(p, t, r, pq, lengths, kinds, params, bl, total, u, bend, need_turn, head):
    """Bow a straight chain lying on the target line (see the module notes), keeping the
    constraints (``_place``). With ``need_turn`` only when the first bone a follow pass moves
    would have to turn around (``head``: the root's bone; else the last bone)."""
    n = lengths.shape[0]
    for i in range(n):
        v_set(u, i, q_rotate(q_get(r, i), v_get(bl, i)))
    a, on_line = _line_axis(p, t, lengths, total, u)
    if not on_line or n < 2:
        return
    if need_turn:
        j = 0 if head else n - 1
        if head:
            d = (p[1, 0] - t[0], p[1, 1] - t[1], p[1, 2] - t[2])
        else:
            d = (t[0] - p[j, 0], t[1] - p[j, 1], t[2] - p[j, 2])
        if v_dot(d, v_get(u, j)) >= -EPS_LEN * total:
            return
    w = _bend_axis(a, bend)
    for i in range(n):
        _place(i, _bow_direction(i, n, w, v_get(u, i)), p, r, pq, lengths, kinds, params, bl,
               total)  # fmt: skip
        v_set(u, i, q_rotate(q_get(r, i), v_get(bl, i)))


# --------------------------------------------------------------------------------------
# FABRIK with constraints
# --------------------------------------------------------------------------------------


@njit(cache=True)
def fabrik_constrained(pos, target, rot, parent, kinds, params, max_iter, tol, bend,
                       out, rw, rl, err, iters, reached):  # fmt: skip
    """FABRIK with per-joint constraints and rotation tracking, into the outputs of
    :func:`fabrik_free` (``rw`` a separate array). Returns ``bad``.

    The input pose is first snapped into the limits (root first); a target out of reach
    gives one forward pass with every bone aimed at the target. Constrained passes need not
    bring the effector nearer, so the best pose so far (the snapped start pose included)
    is kept and returned.
    """
    N, m = target.shape[0], pos.shape[1]
    n = m - 1
    lengths, u, bl = _scratch(n)
    p_best, r_best = np.empty((m, 3)), np.empty((n, 4))
    bend_t = v_from_array(bend)
    skipped = False
    for k in range(N):
        pq, total, bad = _setup_k(pos, target, rot, parent, params, k, out, rw, lengths, bl)
        if bad:
            return k
        p = out[k]
        if _out_of_range(p, n, target[k]):
            _skip(k, rw, rl, err, reached)
            iters[k] = 0
            skipped = True
            continue
        r = rw[k]
        prm = pick(params, k)
        tol_k = tol * total
        t = (target[k, 0], target[k, 1], target[k, 2])
        _snap_all(p, r, pq, lengths, kinds, prm, bl)
        root = (p[0, 0], p[0, 1], p[0, 2])
        e = _dist(p, n, t)
        e_best = e
        it = 0
        if e > tol_k and max_iter > 0:
            p_best[:] = p
            r_best[:] = r
            if _dist(p, 0, t) >= total:
                for i in range(n):
                    _place(i, (t[0] - p[i, 0], t[1] - p[i, 1], t[2] - p[i, 2]),
                           p, r, pq, lengths, kinds, prm, bl, total)  # fmt: skip
                it = 1
                e = _dist(p, n, t)
            else:
                _bow_if_on_line(p, t, r, pq, lengths, kinds, prm, bl, total, u, bend_t,
                                False, False)  # fmt: skip
                while it < max_iter:
                    it += 1
                    p[n, 0], p[n, 1], p[n, 2] = t
                    for i in range(n - 1, -1, -1):
                        par = pq if i == 0 else q_get(r, i - 1)
                        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                        cur = q_rotate(q_get(r, i), v_get(bl, i))
                        if v_norm(d) <= EPS_LEN * total:
                            d = cur
                        dp = project_direction_t(kinds[i], prm[i], par, d)
                        dp = _turn_parent(i, n, q_between(cur, dp), r, kinds, prm, bl)
                        li = lengths[i]
                        p[i, 0] = p[i + 1, 0] - li * dp[0]
                        p[i, 1] = p[i + 1, 1] - li * dp[1]
                        p[i, 2] = p[i + 1, 2] - li * dp[2]
                    p[0, 0], p[0, 1], p[0, 2] = root
                    for i in range(n):
                        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                        _place(i, d, p, r, pq, lengths, kinds, prm, bl, total)
                    e = _dist(p, n, t)
                    if e <= tol_k:
                        break
                    if e < e_best:
                        e_best = e
                        p_best[:] = p
                        r_best[:] = r
            if e > e_best:  # a pass made it worse: back to the best pose so far
                e = e_best
                p[:] = p_best
                r[:] = r_best
        _local_rotations(r, pq, rl[k])
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol_k
    return -2 if skipped else -1


# --------------------------------------------------------------------------------------
# Follow the target
# --------------------------------------------------------------------------------------


@njit(cache=True)
def _turn(cur, d, w_fallback):
    """Shortest arc from ``cur`` to ``d``; a half turn about ``w_fallback`` when opposite."""
    c = v_dot(cur, d)
    nd = v_norm(d) * v_norm(cur)
    if c < -(1.0 - 1e-12) * nd:
        w = _bend_axis(cur, w_fallback)
        return (w[0], w[1], w[2], 0.0)
    return q_between(cur, d)


@njit(cache=True)
def follow_kernel(pos, target, rot, parent, kinds, params, head, constrained, tol, bend,
                  out, rw, rl, err, reached):  # fmt: skip
    """One follow-the-target pass (tail-first or head-first), optionally constrained, into
    the outputs of :func:`fabrik_free` (``rw`` a separate array). Without constraints the
    rotations are the free kernels' (shortest arcs). Returns ``bad``."""
    N, m = target.shape[0], pos.shape[1]
    n = m - 1
    lengths, u, bl = _scratch(n)
    bend_t = v_from_array(bend)
    skipped = False
    for k in range(N):
        if constrained:
            pq, total, bad = _setup_k(pos, target, rot, parent, params, k, out, rw, lengths, bl)
        else:
            pq, total, bad = _setup_free_k(pos, target, parent, k, out, lengths, u)
        if bad:
            return k
        p = out[k]
        if _out_of_range(p, 0, target[k]):
            _skip(k, rw, rl, err, reached)
            skipped = True
            continue
        r = rw[k]
        prm = pick(params, k)
        t = v_get(target, k)
        if constrained:
            _bow_if_on_line(p, t, r, pq, lengths, kinds, prm, bl, total, u, bend_t, True, head)
        else:
            if n > 1:
                # A straight chain whose first moved bone must turn exactly around (target on
                # the chain's line, behind the effector / ahead of the root) is bowed first.
                a, on_line = _line_axis(p, t, lengths, total, u)
                if on_line:
                    j = 0 if head else n - 1
                    if head:
                        d = (p[1, 0] - t[0], p[1, 1] - t[1], p[1, 2] - t[2])
                    else:
                        d = (t[0] - p[j, 0], t[1] - p[j, 1], t[2] - p[j, 2])
                    if v_dot(d, v_get(u, j)) < -EPS_LEN * total:
                        w = _bend_axis(a, bend_t)
                        for i in range(n):
                            db = _bow_direction(i, n, w, v_get(u, i))
                            _place_along(p, i, lengths[i], db)
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
                    rot_arc = _turn(cur, d, bend_t)
                    q_set(r, i, q_normalize(q_mul(rot_arc, q_get(r, i))))
                    _place(i, d, p, r, pq, lengths, kinds, prm, bl, total)
                else:
                    dn = v_norm(d)
                    _place_along(p, i, lengths[i], (d[0] / dn, d[1] / dn, d[2] / dn))
            e = _dist(p, 0, t)
        else:
            # Effector onto the target; each bone, from the effector up, turns towards its new
            # end and moves so that it ends there, dragging the root along.
            p[n, 0], p[n, 1], p[n, 2] = t
            for i in range(n - 1, -1, -1):
                cur = v_get(u, i)
                d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                if v_norm(d) <= eps:
                    d = cur
                arc = _turn(cur, d, bend_t)
                if constrained:
                    # The child's limit is relative to this bone: turn this bone to keep it.
                    bw = _turn_parent(i, n, arc, r, kinds, prm, bl)
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
            e = _dist(p, n, t)
        if constrained:
            _local_rotations(r, pq, rl[k])
        else:
            _free_rotations(pick(pos, k), p, pick(rot, k), pq, r, rl[k])
        err[k] = e
        reached[k] = e <= tol * total
    return -2 if skipped else -1
