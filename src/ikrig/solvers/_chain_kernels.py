"""Numba kernels of the position-based chain solvers: FABRIK and follow-the-target.

Private. The wrappers in :mod:`ikrig.solvers.fabrik` and :mod:`ikrig.solvers.follow`
validate and flatten; every kernel takes flat C-contiguous float64 arrays:

* ``pos (N, m, 3)`` the chain's joint positions (``m = n + 1``, root first), read only;
* ``target (N, 3)``;
* for the constrained kernels also ``rot (N, n, 4)`` the world rotations of the solved
  joints, ``parent (N, 4)`` the world rotation of the chain root's parent, and the packed
  constraints ``kinds (n,)``, ``params (n, P)`` (:mod:`ikrig.constraints._kernels`; the unit
  bone directions in the joints' own frames are ``params[:, P_BONE:P_BONE + 3]``).

They return new arrays and an integer ``bad``: ``-1`` normally, else the index of the first
batch element whose inputs were not finite (the wrapper raises).

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
* Constrained kernels keep each joint's world rotation. When a bone is placed with a wanted
  direction ``d``: ``d`` is projected (``project_direction`` with the parent frame as it now
  stands), the joint's rotation is turned by the shortest arc onto it, snapped with
  ``project_local`` and the child is placed along the snapped rotation's bone. Every forward
  placement therefore leaves the joint inside its limits.
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
from ..constraints._kernels import (
    P_BONE,
    project_direction_t,
    project_local_t,
    q_between,
    q_conj,
    q_mul,
    q_normalize,
    q_rotate,
    v_any_perpendicular,
    v_cross,
    v_dot,
    v_norm,
)

BOW = 0.3  # radians: bow given to a chain that lies on the target line
EPS_LINE = 1e-6  # relative to the chain length: "on the line"
EPS_LEN = 1e-12  # relative to the chain length: "same point"


@njit(cache=True)
def _finite_row(pos, target, k):
    s = target[k, 0] + target[k, 1] + target[k, 2]
    for j in range(pos.shape[1]):
        s += pos[k, j, 0] + pos[k, j, 1] + pos[k, j, 2]
    return math.isfinite(s)


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
            a = (u[0, 0], u[0, 1], u[0, 2])
            for i in range(n):
                if lengths[i] > EPS_LEN * total:
                    a = (u[i, 0], u[i, 1], u[i, 2])
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


# --------------------------------------------------------------------------------------
# FABRIK, no constraints
# --------------------------------------------------------------------------------------


@njit(cache=True, error_model="numpy")
def fabrik_free(pos, target, max_iter, tol, bend, out, err, iters, reached):
    """FABRIK without constraints, into ``out (N, m, 3)``, ``err (N,)`` float64, ``iters
    (N,)`` int64 and ``reached (N,)`` bool (passed in: cheaper than returning arrays).
    Returns ``bad``."""
    N, m = pos.shape[0], pos.shape[1]
    n = m - 1
    lengths = np.empty(n)
    u = np.empty((n, 3))
    bend_t = (bend[0], bend[1], bend[2])
    for k in range(N):
        if not _finite_row(pos, target, k):
            return k
        p = out[k]
        for j in range(m):
            p[j, 0], p[j, 1], p[j, 2] = pos[k, j, 0], pos[k, j, 1], pos[k, j, 2]
        tx, ty, tz = target[k, 0], target[k, 1], target[k, 2]
        total = 0.0
        for i in range(n):
            dx, dy, dz = p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2]
            li = math.sqrt(dx * dx + dy * dy + dz * dz)
            lengths[i] = li
            total += li
            if li > 0.0:
                u[i, 0], u[i, 1], u[i, 2] = dx / li, dy / li, dz / li
            else:
                u[i, 0], u[i, 1], u[i, 2] = 1.0, 0.0, 0.0
        rx, ry, rz = p[0, 0], p[0, 1], p[0, 2]
        ex, ey, ez = p[n, 0] - tx, p[n, 1] - ty, p[n, 2] - tz
        e = math.sqrt(ex * ex + ey * ey + ez * ez)
        if e <= tol:
            err[k] = e
            iters[k] = 0
            reached[k] = True
            continue
        dx, dy, dz = tx - rx, ty - ry, tz - rz
        dist = math.sqrt(dx * dx + dy * dy + dz * dz)
        if dist >= total:
            # Out of reach: every bone points straight at the target, in one pass.
            if dist > 0.0:
                ax, ay, az = dx / dist, dy / dist, dz / dist
            else:
                ax, ay, az = u[0, 0], u[0, 1], u[0, 2]
            for i in range(n):
                li = lengths[i]
                p[i + 1, 0] = p[i, 0] + li * ax
                p[i + 1, 1] = p[i, 1] + li * ay
                p[i + 1, 2] = p[i, 2] + li * az
            ex, ey, ez = p[n, 0] - tx, p[n, 1] - ty, p[n, 2] - tz
            e = math.sqrt(ex * ex + ey * ey + ez * ez)
            err[k] = e
            iters[k] = 1
            reached[k] = e <= tol
            continue
        a, on_line = _line_axis(p, target[k], lengths, total, u)
        if on_line and n > 1:
            w = _bend_axis(a, bend_t)
            for i in range(n):
                d = _bow_direction(i, n, w, (u[i, 0], u[i, 1], u[i, 2]))
                u[i, 0], u[i, 1], u[i, 2] = d
                li = lengths[i]
                p[i + 1, 0] = p[i, 0] + li * d[0]
                p[i + 1, 1] = p[i, 1] + li * d[1]
                p[i + 1, 2] = p[i, 2] + li * d[2]
        it = 0
        while it < max_iter:
            it += 1
            # Backward: effector onto the target, each joint pulled towards its child.
            p[n, 0], p[n, 1], p[n, 2] = tx, ty, tz
            for i in range(n - 1, -1, -1):
                dx, dy, dz = p[i, 0] - p[i + 1, 0], p[i, 1] - p[i + 1, 1], p[i, 2] - p[i + 1, 2]
                dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                li = lengths[i]
                if dn > EPS_LEN * total:
                    s = 1.0 / dn
                    u[i, 0], u[i, 1], u[i, 2] = -dx * s, -dy * s, -dz * s
                p[i, 0] = p[i + 1, 0] - li * u[i, 0]
                p[i, 1] = p[i + 1, 1] - li * u[i, 1]
                p[i, 2] = p[i + 1, 2] - li * u[i, 2]
            # Forward: root back in place, each child pulled towards the parent.
            p[0, 0], p[0, 1], p[0, 2] = rx, ry, rz
            for i in range(n):
                dx, dy, dz = p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2]
                dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                li = lengths[i]
                if dn > EPS_LEN * total:
                    s = 1.0 / dn
                    u[i, 0], u[i, 1], u[i, 2] = dx * s, dy * s, dz * s
                p[i + 1, 0] = p[i, 0] + li * u[i, 0]
                p[i + 1, 1] = p[i, 1] + li * u[i, 1]
                p[i + 1, 2] = p[i, 2] + li * u[i, 2]
            ex, ey, ez = p[n, 0] - tx, p[n, 1] - ty, p[n, 2] - tz
            e = math.sqrt(ex * ex + ey * ey + ez * ez)
            if e <= tol:
                break
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol
    return -1


# --------------------------------------------------------------------------------------
# Frames for position-level chains and the constrained placement step
# --------------------------------------------------------------------------------------


@njit(cache=True)
def parallel_frames(pos, parent, params):
    """World rotations ``(N, n, 4)`` of a position-level chain's joints.

    Joint ``i``'s frame is its parent's frame (``parent`` for the root) turned by the
    shortest arc that takes the rest bone direction (``params[i, P_BONE:]``, seen from the
    parent's frame) onto the bone as it stands; a zero-length bone keeps its parent's frame.
    """
    N, m = pos.shape[0], pos.shape[1]
    n = m - 1
    rot = np.empty((N, n, 4))
    for k in range(N):
        prev = (parent[k, 0], parent[k, 1], parent[k, 2], parent[k, 3])
        for i in range(n):
            b = (params[i, P_BONE], params[i, P_BONE + 1], params[i, P_BONE + 2])
            d = (
                pos[k, i + 1, 0] - pos[k, i, 0],
                pos[k, i + 1, 1] - pos[k, i, 1],
                pos[k, i + 1, 2] - pos[k, i, 2],
            )
            r = q_normalize(q_mul(q_between(q_rotate(prev, b), d), prev))
            rot[k, i, 0], rot[k, i, 1], rot[k, i, 2], rot[k, i, 3] = r
            prev = r
    return rot


@njit(cache=True)
def _get_q(a, i):
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])


@njit(cache=True)
def _set_q(a, i, q):
    a[i, 0], a[i, 1], a[i, 2], a[i, 3] = q


@njit(cache=True)
def _bone_of(bl, i):
    return (bl[i, 0], bl[i, 1], bl[i, 2])


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
        ri = q_normalize(_get_q(rot_k, i))
        _set_q(r, i, ri)
        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
        li = v_norm(d)
        lengths[i] = li
        total += li
        if li > 0.0:
            b = q_rotate(q_conj(ri), (d[0] / li, d[1] / li, d[2] / li))
        else:
            b = (params[i, P_BONE], params[i, P_BONE + 1], params[i, P_BONE + 2])
        bl[i, 0], bl[i, 1], bl[i, 2] = b
    return total


@njit(cache=True)
def _place(i, d, p, r, parent_q, lengths, kinds, params, bl, total):
    """Place bone ``i`` along wanted direction ``d`` within joint ``i``'s constraint.

    Updates ``r[i]`` (world rotation) and ``p[i + 1]``; ``p[i]`` and the parent frame (``r[i
    - 1]`` or ``parent_q``) must be final.
    """
    par = parent_q if i == 0 else _get_q(r, i - 1)
    ri = _get_q(r, i)
    b = _bone_of(bl, i)
    cur = q_rotate(ri, b)
    if v_norm(d) <= EPS_LEN * total:
        d = cur
    dp = project_direction_t(kinds[i], params[i], par, d)
    cand = q_mul(q_between(cur, dp), ri)
    q = project_local_t(kinds[i], params[i], q_mul(q_conj(par), cand))
    ri = q_normalize(q_mul(par, q))
    _set_q(r, i, ri)
    bw = q_rotate(ri, b)
    li = lengths[i]
    p[i + 1, 0] = p[i, 0] + li * bw[0]
    p[i + 1, 1] = p[i, 1] + li * bw[1]
    p[i + 1, 2] = p[i, 2] + li * bw[2]


@njit(cache=True)
def _turn_parent(i, n, arc, r, kinds, params, bl):
    """Turn joint ``i`` by the world rotation ``arc``, then, if its child's rotation relative
    to it breaks the child's limit, turn joint ``i`` instead so that the child (already
    placed) is inside. Updates ``r[i]``; returns bone ``i``'s new unit direction."""
    ri = _get_q(r, i)
    b = _bone_of(bl, i)
    ri = q_normalize(q_mul(arc, ri))
    if i < n - 1:
        child = _get_q(r, i + 1)
        qc = project_local_t(kinds[i + 1], params[i + 1], q_mul(q_conj(ri), child))
        ri = q_normalize(q_mul(child, q_conj(qc)))
    _set_q(r, i, ri)
    return q_rotate(ri, b)


@njit(cache=True)
def _snap_all(p, r, parent_q, lengths, kinds, params, bl):
    """Snap every joint's local rotation into its limits, root first, and redo the FK."""
    n = lengths.shape[0]
    par = parent_q
    for i in range(n):
        q = project_local_t(kinds[i], params[i], q_mul(q_conj(par), _get_q(r, i)))
        ri = q_normalize(q_mul(par, q))
        _set_q(r, i, ri)
        bw = q_rotate(ri, _bone_of(bl, i))
        li = lengths[i]
        p[i + 1, 0] = p[i, 0] + li * bw[0]
        p[i + 1, 1] = p[i, 1] + li * bw[1]
        p[i + 1, 2] = p[i, 2] + li * bw[2]
        par = ri


@njit(cache=True)
def _local_rotations(r, parent_q, out_k):
    n = r.shape[0]
    par = parent_q
    for i in range(n):
        ri = _get_q(r, i)
        _set_q(out_k, i, q_mul(q_conj(par), ri))
        par = ri


@njit(cache=True)
def _dist(p, j, t):
    dx, dy, dz = p[j, 0] - t[0], p[j, 1] - t[1], p[j, 2] - t[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


# --------------------------------------------------------------------------------------
# FABRIK with constraints
# --------------------------------------------------------------------------------------


@njit(cache=True)
def fabrik_constrained(pos, target, rot, parent, kinds, params, max_iter, tol, bend):
    """FABRIK with per-joint constraints and rotation tracking.

    Returns ``(out (N, m, 3), rot_world (N, n, 4), rot_local (N, n, 4), err, iters, reached,
    bad)``. The input pose is first snapped into the limits (root first); a target out of
    reach gives one forward pass with every bone aimed at the target.
    """
    N, m = pos.shape[0], pos.shape[1]
    n = m - 1
    out = np.empty_like(pos)
    rw = np.empty_like(rot)
    rl = np.empty_like(rot)
    err = np.empty(N)
    iters = np.zeros(N, dtype=np.int64)
    reached = np.zeros(N, dtype=np.bool_)
    lengths = np.empty(n)
    u = np.empty((n, 3))
    bl = np.empty((n, 3))
    bend_t = (bend[0], bend[1], bend[2])
    for k in range(N):
        if not _finite_row(pos, target, k):
            return out, rw, rl, err, iters, reached, k
        p = out[k]
        r = rw[k]
        total = _chain_setup(pos[k], rot[k], params, p, r, lengths, bl)
        pq = q_normalize(_get_q(parent, k))
        t = (target[k, 0], target[k, 1], target[k, 2])
        _snap_all(p, r, pq, lengths, kinds, params, bl)
        root = (p[0, 0], p[0, 1], p[0, 2])
        e = _dist(p, n, t)
        it = 0
        if e > tol:
            dist = _dist(p, 0, t)
            if dist >= total:
                for i in range(n):
                    _place(i, (t[0] - p[i, 0], t[1] - p[i, 1], t[2] - p[i, 2]),
                           p, r, pq, lengths, kinds, params, bl, total)  # fmt: skip
                it = 1
                e = _dist(p, n, t)
            else:
                for i in range(n):
                    bw = q_rotate(_get_q(r, i), _bone_of(bl, i))
                    u[i, 0], u[i, 1], u[i, 2] = bw
                a, on_line = _line_axis(p, t, lengths, total, u)
                if on_line and n > 1:
                    w = _bend_axis(a, bend_t)
                    for i in range(n):
                        d = _bow_direction(i, n, w, (u[i, 0], u[i, 1], u[i, 2]))
                        _place(i, d, p, r, pq, lengths, kinds, params, bl, total)
                while it < max_iter:
                    it += 1
                    p[n, 0], p[n, 1], p[n, 2] = t
                    for i in range(n - 1, -1, -1):
                        par = pq if i == 0 else _get_q(r, i - 1)
                        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                        if v_norm(d) <= EPS_LEN * total:
                            d = q_rotate(_get_q(r, i), _bone_of(bl, i))
                        dp = project_direction_t(kinds[i], params[i], par, d)
                        arc = q_between(q_rotate(_get_q(r, i), _bone_of(bl, i)), dp)
                        dp = _turn_parent(i, n, arc, r, kinds, params, bl)
                        li = lengths[i]
                        p[i, 0] = p[i + 1, 0] - li * dp[0]
                        p[i, 1] = p[i + 1, 1] - li * dp[1]
                        p[i, 2] = p[i + 1, 2] - li * dp[2]
                    p[0, 0], p[0, 1], p[0, 2] = root
                    for i in range(n):
                        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                        _place(i, d, p, r, pq, lengths, kinds, params, bl, total)
                    e = _dist(p, n, t)
                    if e <= tol:
                        break
        _local_rotations(r, pq, rl[k])
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol
    return out, rw, rl, err, iters, reached, -1


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
def follow_kernel(pos, target, rot, parent, kinds, params, head, constrained, tol, bend):
    """One follow-the-target pass (tail-first or head-first), optionally constrained.

    Returns ``(out (N, m, 3), rot_world (N, n, 4), rot_local (N, n, 4), err, reached, bad)``;
    the rotation arrays are only filled when ``constrained``.
    """
    N, m = pos.shape[0], pos.shape[1]
    n = m - 1
    out = np.empty_like(pos)
    rw = np.empty_like(rot)
    rl = np.empty_like(rot)
    err = np.empty(N)
    reached = np.zeros(N, dtype=np.bool_)
    lengths = np.empty(n)
    u = np.empty((n, 3))
    bl = np.empty((n, 3))
    bend_t = (bend[0], bend[1], bend[2])
    for k in range(N):
        if not _finite_row(pos, target, k):
            return out, rw, rl, err, reached, k
        p = out[k]
        r = rw[k]
        t = (target[k, 0], target[k, 1], target[k, 2])
        pq = (0.0, 0.0, 0.0, 1.0)
        if constrained:
            pq = q_normalize(_get_q(parent, k))
            total = _chain_setup(pos[k], rot[k], params, p, r, lengths, bl)
            for i in range(n):
                bw = q_rotate(_get_q(r, i), _bone_of(bl, i))
                u[i, 0], u[i, 1], u[i, 2] = bw
        else:
            for j in range(m):
                p[j, 0], p[j, 1], p[j, 2] = pos[k, j, 0], pos[k, j, 1], pos[k, j, 2]
            total = 0.0
            for i in range(n):
                d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                li = v_norm(d)
                lengths[i] = li
                total += li
                if li > 0.0:
                    u[i, 0], u[i, 1], u[i, 2] = d[0] / li, d[1] / li, d[2] / li
                else:
                    u[i, 0], u[i, 1], u[i, 2] = 1.0, 0.0, 0.0
        eps = EPS_LEN * total
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
                if v_dot(d, (u[j, 0], u[j, 1], u[j, 2])) < -eps:
                    w = _bend_axis(a, bend_t)
                    for i in range(n):
                        db = _bow_direction(i, n, w, (u[i, 0], u[i, 1], u[i, 2]))
                        if constrained:
                            _place(i, db, p, r, pq, lengths, kinds, params, bl, total)
                            db = q_rotate(_get_q(r, i), _bone_of(bl, i))
                        else:
                            li = lengths[i]
                            p[i + 1, 0] = p[i, 0] + li * db[0]
                            p[i + 1, 1] = p[i, 1] + li * db[1]
                            p[i + 1, 2] = p[i, 2] + li * db[2]
                        u[i, 0], u[i, 1], u[i, 2] = db
        if head:
            # Root onto the target; each bone then turns towards its old end.
            p[0, 0], p[0, 1], p[0, 2] = t
            for i in range(n):
                cur = (u[i, 0], u[i, 1], u[i, 2])
                d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                if v_norm(d) <= eps:
                    d = cur
                if constrained:
                    rot_arc = _turn(cur, d, bend_t)
                    _set_q(r, i, q_normalize(q_mul(rot_arc, _get_q(r, i))))
                    _place(i, d, p, r, pq, lengths, kinds, params, bl, total)
                else:
                    dn = v_norm(d)
                    li = lengths[i]
                    p[i + 1, 0] = p[i, 0] + li * d[0] / dn
                    p[i + 1, 1] = p[i, 1] + li * d[1] / dn
                    p[i + 1, 2] = p[i, 2] + li * d[2] / dn
            e = _dist(p, 0, t)
        else:
            # Effector onto the target; each bone, from the effector up, turns towards its new
            # end and moves so that it ends there, dragging the root along.
            p[n, 0], p[n, 1], p[n, 2] = t
            for i in range(n - 1, -1, -1):
                cur = (u[i, 0], u[i, 1], u[i, 2])
                d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
                if v_norm(d) <= eps:
                    d = cur
                arc = _turn(cur, d, bend_t)
                if constrained:
                    # The child's limit is relative to this bone: turn this bone to keep it.
                    bw = _turn_parent(i, n, arc, r, kinds, params, bl)
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
                r0 = _get_q(r, 0)
                q0 = project_local_t(kinds[0], params[0], q_mul(q_conj(pq), r0))
                r0n = q_normalize(q_mul(pq, q0))
                delta = q_normalize(q_mul(r0n, q_conj(r0)))
                if abs(delta[3]) < 1.0 - 1e-15:
                    for i in range(n):
                        _set_q(r, i, q_normalize(q_mul(delta, _get_q(r, i))))
                    for j in range(n):
                        v = q_rotate(delta, (p[j, 0] - t[0], p[j, 1] - t[1], p[j, 2] - t[2]))
                        p[j, 0], p[j, 1], p[j, 2] = t[0] + v[0], t[1] + v[1], t[2] + v[2]
            e = _dist(p, n, t)
        if constrained:
            _local_rotations(r, pq, rl[k])
        err[k] = e
        reached[k] = e <= tol
    return out, rw, rl, err, reached, -1
