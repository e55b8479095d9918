"""Numba kernels of the CCD solvers (see :mod:`ikrig.solvers.ccd` and :mod:`ikrig.solvers.ccd2d`).

Everything here is private. The public wrappers validate and shape the inputs; the kernels
take flat, C-contiguous ``(N, ...)`` arrays, allocate their outputs and return them together
with a status code (0, or the 1-based position of the first input argument that holds a NaN
or an infinity; the wrapper turns that into an :class:`~ikrig.errors.InputError`).

Every constant is read from a small ``consts`` array of the working dtype (a Python float
literal is a float64 constant to Numba and would widen float32 arithmetic).

The scalar quaternion helpers at the top (tuples in, tuples out, no allocation) are shared
with the damped-least-squares kernels.

3D CCD, per problem and iteration:

1. forward kinematics of the chain from its current local rotations (world rotations and
   positions of every joint, the effector last);
2. stop when the effector is within ``tol * chain length`` of the target, at the iteration
   limit, or when the previous sweep turned no joint at all (nothing would change);
3. sweep from the joint before the effector back to the root. Joint ``i`` turns by the
   shortest arc taking ``effector - p_i`` to ``target - p_i`` (clamped to the maximum step);
   the turn is applied to its local rotation, which is then projected onto the joint's
   constraint. Only the effector position is tracked during the sweep: ``p_i`` and the
   parent's world rotation depend on joints ``< i`` only, which the sweep has not touched
   yet, so the FK of step 1 stays valid for them.
4. Collinear configurations (effector and target on one line through ``p_i``) are fixed
   points of plain CCD. When the turn is needed (the target is behind ``p_i``, or in front of
   it but nearer than the effector) the joint turns about the bend axis instead: by
   ``pi - kick`` for a target behind, by ``kick`` for a nearer target in front. Nothing
   happens when the target is in front and farther than the effector (the chain already
   points at it). Zero-length vectors (a zero-length bone, a target at ``p_i``) skip the
   joint.
"""

from __future__ import annotations

import math

import numpy as np

from .._numba import njit
from ..constraints._kernels import project_local_t

# Layout of the ``consts`` array of the 3D kernel.
C_ZERO = 0
C_ONE = 1
C_TWO = 2
C_TOL = 3  # tolerance, fraction of the chain length
C_COS_MAX = 4  # cos(max step), or -2 when there is no maximum
C_S_MAX = 5  # sin(max step / 2)
C_C_MAX = 6  # cos(max step / 2)
C_S_K1 = 7  # sin / cos of half the small kick (nearer target in front)
C_C_K1 = 8
C_S_K2 = 9  # sin / cos of half the large kick (target behind)
C_C_K2 = 10
C_EPS = 11  # sine below which two directions count as collinear
C_TINY = 12  # lengths below tiny * chain length count as zero
N_CONSTS = 13

# Layout of the ``consts`` array of the planar kernel.
D_ZERO = 0
D_ONE = 1
D_HALF = 2
D_TOL = 3
D_MAX_STEP = 4  # radians, pi when there is no maximum
D_KICK = 5
D_EPS = 6
D_TINY = 7
D_PI = 8
D_TWO_PI = 9
N_CONSTS_2D = 10

EPS = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-7}
TINY = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}
KICK = 0.25  # radians


def make_consts(dtype, tolerance: float, max_step: float | None) -> np.ndarray:
    """The ``consts`` array of the 3D kernel for ``dtype`` and the solver options."""
    dtype = np.dtype(dtype)
    step = math.pi if max_step is None else min(float(max_step), math.pi)
    k1 = min(KICK, step)
    k2 = min(math.pi - KICK, step)
    c = np.zeros(N_CONSTS, dtype=dtype)
    c[C_ONE] = 1.0
    c[C_TWO] = 2.0
    c[C_TOL] = tolerance
    c[C_COS_MAX] = -2.0 if max_step is None or step >= math.pi else math.cos(step)
    c[C_S_MAX] = math.sin(0.5 * step)
    c[C_C_MAX] = math.cos(0.5 * step)
    c[C_S_K1] = math.sin(0.5 * k1)
    c[C_C_K1] = math.cos(0.5 * k1)
    c[C_S_K2] = math.sin(0.5 * k2)
    c[C_C_K2] = math.cos(0.5 * k2)
    c[C_EPS] = EPS[dtype]
    c[C_TINY] = TINY[dtype]
    c.setflags(write=False)
    return c


def make_consts_2d(dtype, tolerance: float, max_step: float | None) -> np.ndarray:
    """The ``consts`` array of the planar kernel for ``dtype`` and the solver options."""
    dtype = np.dtype(dtype)
    step = math.pi if max_step is None else min(float(max_step), math.pi)
    c = np.zeros(N_CONSTS_2D, dtype=dtype)
    c[D_ONE] = 1.0
    c[D_HALF] = 0.5
    c[D_TOL] = tolerance
    c[D_MAX_STEP] = step
    c[D_KICK] = min(KICK, step)
    c[D_EPS] = EPS[dtype]
    c[D_TINY] = TINY[dtype]
    c[D_PI] = math.pi
    c[D_TWO_PI] = 2.0 * math.pi
    c.setflags(write=False)
    return c


# ---------------------------------------------------------------------------------------
# Scalar quaternion helpers (xyzw), shared with the DLS kernels.


@njit(cache=True, error_model="numpy")
def qmul(ax, ay, az, aw, bx, by, bz, bw):
    """Hamilton product ``a * b`` (rotate by b, then a) of scalar quaternions."""
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


@njit(cache=True, error_model="numpy")
def qrot(qx, qy, qz, qw, vx, vy, vz, two):
    """Rotate ``v`` by the unit quaternion ``q`` (``two`` is 2 in the working dtype)."""
    tx = two * (qy * vz - qz * vy)
    ty = two * (qz * vx - qx * vz)
    tz = two * (qx * vy - qy * vx)
    return (
        vx + qw * tx + qy * tz - qz * ty,
        vy + qw * ty + qz * tx - qx * tz,
        vz + qw * tz + qx * ty - qy * tx,
    )


@njit(cache=True, error_model="numpy")
def qnormalize(x, y, z, w, one, zero):
    """Unit quaternion; a zero quaternion gives the identity."""
    n2 = x * x + y * y + z * z + w * w
    if not n2 > zero:
        return zero, zero, zero, one
    inv = one / np.sqrt(n2)
    return x * inv, y * inv, z * inv, w * inv


@njit(cache=True, error_model="numpy")
def perpendicular(ax, ay, az, zero, one):
    """A unit vector perpendicular to ``a`` (crossing it with its least aligned axis)."""
    bx, by, bz = abs(ax), abs(ay), abs(az)
    if bx <= by and bx <= bz:  # a x X
        px, py, pz = zero, az, -ay
    elif by <= bz:  # a x Y
        px, py, pz = -az, zero, ax
    else:  # a x Z
        px, py, pz = ay, -ax, zero
    n2 = px * px + py * py + pz * pz
    if not n2 > zero:
        return one, zero, zero
    inv = one / np.sqrt(n2)
    return px * inv, py * inv, pz * inv


@njit(cache=True, error_model="numpy")
def project_joint(kind, params_row, q4, x, y, z, w):
    """The local rotation ``(x, y, z, w)`` projected onto a joint constraint (kind 0: free)."""
    r = project_local_t(kind, params_row, (float(x), float(y), float(z), float(w)))
    q4[0] = r[0]  # back to the working dtype
    q4[1] = r[1]
    q4[2] = r[2]
    q4[3] = r[3]
    return q4[0], q4[1], q4[2], q4[3]


@njit(cache=True, error_model="numpy")
def chain_fk(bone, rl, pq, root, pos, rw, two):
    """World rotations ``rw (n, 4)`` and positions ``pos (n + 1, 3)`` of one chain.

    ``bone (n, 3)``: each solved joint's bone in its own frame; ``rl (n, 4)``: local
    rotations; ``pq (4,)``: world rotation of the chain root's parent; ``root (3,)``.
    """
    n = bone.shape[0]
    wx, wy, wz, ww = pq[0], pq[1], pq[2], pq[3]
    px, py, pz = root[0], root[1], root[2]
    pos[0, 0] = px
    pos[0, 1] = py
    pos[0, 2] = pz
    for i in range(n):
        wx, wy, wz, ww = qmul(wx, wy, wz, ww, rl[i, 0], rl[i, 1], rl[i, 2], rl[i, 3])
        rw[i, 0] = wx
        rw[i, 1] = wy
        rw[i, 2] = wz
        rw[i, 3] = ww
        bx, by, bz = qrot(wx, wy, wz, ww, bone[i, 0], bone[i, 1], bone[i, 2], two)
        px += bx
        py += by
        pz += bz
        pos[i + 1, 0] = px
        pos[i + 1, 1] = py
        pos[i + 1, 2] = pz


@njit(cache=True, error_model="numpy")
def _ccd_solve(bone, rl, pq, root, target, bend, kinds, params, c, max_iter, pos, rw, q4):
    """Solve one chain in place (``rl`` is updated; ``pos``, ``rw`` hold the final FK).

    Returns ``(error, iterations, tolerance in data units)``.
    """
    zero = c[C_ZERO]
    one = c[C_ONE]
    two = c[C_TWO]
    cos_max = c[C_COS_MAX]
    s_max = c[C_S_MAX]
    c_max = c[C_C_MAX]
    eps = c[C_EPS]
    n = bone.shape[0]
    length = zero
    for i in range(n):
        length += np.sqrt(bone[i, 0] ** 2 + bone[i, 1] ** 2 + bone[i, 2] ** 2)
    tol = c[C_TOL] * length
    tiny = c[C_TINY] * length
    tiny2 = tiny * tiny
    tx, ty, tz = target[0], target[1], target[2]
    bnx, bny, bnz = bend[0], bend[1], bend[2]
    bn2 = bnx * bnx + bny * bny + bnz * bnz
    err = zero
    it = 0
    moved = True
    while True:
        chain_fk(bone, rl, pq, root, pos, rw, two)
        ex, ey, ez = pos[n, 0], pos[n, 1], pos[n, 2]
        dx, dy, dz = tx - ex, ty - ey, tz - ez
        err = np.sqrt(dx * dx + dy * dy + dz * dz)
        if err <= tol or it >= max_iter:
            break
        if not moved:
            break  # the last sweep turned no joint: neither will the next
        it += 1
        moved = False
        for i in range(n - 1, -1, -1):
            if i == 0:
                px_, py_, pz_, pw_ = pq[0], pq[1], pq[2], pq[3]
            else:
                px_, py_, pz_, pw_ = rw[i - 1, 0], rw[i - 1, 1], rw[i - 1, 2], rw[i - 1, 3]
            ox, oy, oz = pos[i, 0], pos[i, 1], pos[i, 2]
            ax, ay, az = ex - ox, ey - oy, ez - oz
            bx, by, bz = tx - ox, ty - oy, tz - oz
            la2 = ax * ax + ay * ay + az * az
            lb2 = bx * bx + by * by + bz * bz
            if not (la2 > tiny2 and lb2 > tiny2):
                continue
            lab = np.sqrt(la2 * lb2)
            cx, cy, cz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
            d = ax * bx + ay * by + az * bz
            s2 = cx * cx + cy * cy + cz * cz
            exact = False  # the turn takes the effector exactly onto the target line
            if s2 <= (eps * lab) ** 2:
                # Collinear: turn about the bend axis, or not at all.
                if d > zero and lb2 >= la2:
                    continue
                ux, uy, uz = zero, zero, zero
                u2 = zero
                if bn2 > zero:
                    k = (bnx * ax + bny * ay + bnz * az) / la2
                    ux, uy, uz = bnx - k * ax, bny - k * ay, bnz - k * az
                    u2 = ux * ux + uy * uy + uz * uz
                if u2 > (eps * eps) * bn2:
                    inv = one / np.sqrt(u2)
                    ux, uy, uz = ux * inv, uy * inv, uz * inv
                else:
                    ux, uy, uz = perpendicular(ax, ay, az, zero, one)
                if d > zero:
                    sh, ch = c[C_S_K1], c[C_C_K1]
                else:
                    sh, ch = c[C_S_K2], c[C_C_K2]
                qx, qy, qz, qw = ux * sh, uy * sh, uz * sh, ch
            elif d < cos_max * lab:
                inv = s_max / np.sqrt(s2)
                qx, qy, qz, qw = cx * inv, cy * inv, cz * inv, c_max
            else:
                # shortest arc (a x b, |a||b| + a.b) has norm sqrt(2 |a||b| (|a||b| + a.b))
                w = lab + d
                inv = one / np.sqrt(two * lab * w)
                qx, qy, qz, qw = cx * inv, cy * inv, cz * inv, w * inv
                exact = True
            # World turn q about p_i -> local: L' = (Wp^-1 q Wp) L = (Wp^-1 q.xyz, q.w) L.
            vx, vy, vz = qrot(-px_, -py_, -pz_, pw_, qx, qy, qz, two)
            lx, ly, lz, lw = rl[i, 0], rl[i, 1], rl[i, 2], rl[i, 3]
            nx, ny, nz, nw = qmul(vx, vy, vz, qw, lx, ly, lz, lw)
            nx, ny, nz, nw = qnormalize(nx, ny, nz, nw, one, zero)
            kind = kinds[i]
            if kind == 0:
                if exact:
                    r = np.sqrt(la2 / lb2)
                    ex, ey, ez = bx * r, by * r, bz * r
                else:
                    ex, ey, ez = qrot(qx, qy, qz, qw, ax, ay, az, two)
            else:
                nx, ny, nz, nw = project_joint(kind, params[i], q4, nx, ny, nz, nw)
                nx, ny, nz, nw = qnormalize(nx, ny, nz, nw, one, zero)
                # effector in the joint's own (old) frame, then through the new frame
                wx, wy, wz, ww = rw[i, 0], rw[i, 1], rw[i, 2], rw[i, 3]
                fx, fy, fz = qrot(-wx, -wy, -wz, ww, ax, ay, az, two)
                wx, wy, wz, ww = qmul(px_, py_, pz_, pw_, nx, ny, nz, nw)
                ex, ey, ez = qrot(wx, wy, wz, ww, fx, fy, fz, two)
            ex, ey, ez = ex + ox, ey + oy, ez + oz
            moved = True
            rl[i, 0] = nx
            rl[i, 1] = ny
            rl[i, 2] = nz
            rl[i, 3] = nw
    return err, it, tol


@njit(cache=True, error_model="numpy")
def _finite(a):
    for v in a.ravel():
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True, error_model="numpy")
def ccd_positions_kernel(positions, target, bend, kinds, params, consts, max_iter):
    """CCD of identity-framed chains given by joint positions.

    Args:
        positions: ``(N, n + 1, 3)`` world joint positions (the bones are their differences,
            every local rotation is the identity).
        target: ``(N, 3)`` world targets.
        bend: ``(3,)`` world bend axis for collinear configurations (zeros: automatic).
        kinds, params: packed constraints ``(n,)``, ``(n, P)``.
        consts: see :func:`make_consts`.
        max_iter: iteration limit.

    Returns:
        ``(status, positions (N, n + 1, 3), rotations_local (N, n, 4), error (N,),
        iterations (N,), reached (N,))``; ``status`` is 1 or 2 when ``positions`` or
        ``target`` is not finite (outputs are then undefined), else 0.
    """
    N = positions.shape[0]
    n = positions.shape[1] - 1
    dt = positions.dtype
    pos_out = np.empty((N, n + 1, 3), dtype=dt)
    rl_out = np.zeros((N, n, 4), dtype=dt)
    err = np.empty(N, dtype=dt)
    iters = np.zeros(N, dtype=np.int64)
    reached = np.zeros(N, dtype=np.bool_)
    if not _finite(positions):
        return 1, pos_out, rl_out, err, iters, reached
    if not _finite(target):
        return 2, pos_out, rl_out, err, iters, reached
    one = consts[C_ONE]
    bone = np.empty((n, 3), dtype=dt)
    rw = np.empty((n, 4), dtype=dt)
    pq = np.zeros(4, dtype=dt)
    pq[3] = one
    q4 = np.empty(4, dtype=dt)
    for k in range(N):
        for i in range(n):
            for j in range(3):
                bone[i, j] = positions[k, i + 1, j] - positions[k, i, j]
            rl_out[k, i, 3] = one
        e, it, tol = _ccd_solve(
            bone,
            rl_out[k],
            pq,
            positions[k, 0],
            target[k],
            bend,
            kinds,
            params,
            consts,
            max_iter,
            pos_out[k],
            rw,
            q4,
        )
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol
    return 0, pos_out, rl_out, err, iters, reached


@njit(cache=True, error_model="numpy")
def ccd_pose_kernel(
    bone, rot_local, parent_rot, root, target, bend, kinds, params, consts, max_iter
):
    """CCD of chains given by local frames (the pose-level solver).

    Args:
        bone: ``(N, n, 3)`` each solved joint's bone (next joint's local translation).
        rot_local: ``(N, n, 4)`` start local rotations of the solved joints.
        parent_rot: ``(N, 4)`` world rotation of the chain root's parent.
        root: ``(N, 3)`` world position of the chain root.
        target: ``(N, 3)``; bend, kinds, params, consts, max_iter: as for
            :func:`ccd_positions_kernel`.

    Returns:
        ``(status, positions (N, n + 1, 3), rotations_local (N, n, 4),
        rotations_world (N, n, 4), error (N,), iterations (N,), reached (N,))``; ``status``
        is 5 when ``target`` is not finite, else 0.
    """
    N = bone.shape[0]
    n = bone.shape[1]
    dt = bone.dtype
    pos_out = np.empty((N, n + 1, 3), dtype=dt)
    rl_out = rot_local.copy()
    rw_out = np.empty((N, n, 4), dtype=dt)
    err = np.empty(N, dtype=dt)
    iters = np.zeros(N, dtype=np.int64)
    reached = np.zeros(N, dtype=np.bool_)
    if not _finite(target):
        return 5, pos_out, rl_out, rw_out, err, iters, reached
    q4 = np.empty(4, dtype=dt)
    for k in range(N):
        e, it, tol = _ccd_solve(
            bone[k],
            rl_out[k],
            parent_rot[k],
            root[k],
            target[k],
            bend,
            kinds,
            params,
            consts,
            max_iter,
            pos_out[k],
            rw_out[k],
            q4,
        )
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol
    return 0, pos_out, rl_out, rw_out, err, iters, reached


# ---------------------------------------------------------------------------------------
# Planar CCD on joint angles.


@njit(cache=True, error_model="numpy")
def _wrap(a, pi, two_pi):
    """Angle wrapped to ``(-pi, pi]``."""
    if a > pi or a <= -pi:
        a -= two_pi * np.floor((a + pi) / two_pi)
        if a <= -pi:
            a += two_pi
    return a


@njit(cache=True, error_model="numpy")
def _limit(a, lo, hi, pi, two_pi):
    """A joint angle after a turn: wrapped for a free joint, clamped for a limited one."""
    if lo <= -pi and hi >= pi:
        return _wrap(a, pi, two_pi)
    if a < lo:
        return lo
    if a > hi:
        return hi
    return a


@njit(cache=True, error_model="numpy")
def _start_angle(t, lo, hi, pi, two_pi):
    """The start angle ``t`` (in ``(-pi, pi]``) in a limited joint's range: the representative
    ``t`` or ``t +- 2 pi`` inside ``[lo, hi]``, else the circularly nearer end."""
    if lo <= -pi and hi >= pi:
        return t
    if lo <= t <= hi:
        return t
    if lo <= t + two_pi <= hi:
        return t + two_pi
    if lo <= t - two_pi <= hi:
        return t - two_pi
    dlo = abs(_wrap(t - lo, pi, two_pi))
    dhi = abs(_wrap(t - hi, pi, two_pi))
    return lo if dlo <= dhi else hi


@njit(cache=True, error_model="numpy")
def ccd2d_kernel(positions, target, limits, consts, max_iter, bend_sign):
    """Planar CCD on angles relative to the parent bone, with angle limits.

    Args:
        positions: ``(N, n + 1, D)`` joint positions, ``D`` 2 or 3 (z is ignored).
        target: ``(N, D)`` targets (z ignored).
        limits: ``(n, 2)`` radians, min and max of each joint angle, ``hi - lo < 2 pi``;
            ``(-pi, pi)`` exactly marks a free joint (angles wrap to ``(-pi, pi]``).
        consts: see :func:`make_consts_2d`; max_iter: iteration limit.
        bend_sign: +1 or -1, the turn direction tried first in collinear configurations.

    Returns:
        ``(status, positions (N, n + 1, D) with z = 0, angles (N, n),
        rotations_local (N, n, 4), error (N,), iterations (N,), reached (N,))``; ``status``
        is 1 or 2 when ``positions`` or ``target`` is not finite, else 0. ``angles[i]`` is
        the angle of bone ``i`` relative to bone ``i - 1`` (bone 0: relative to +X);
        ``rotations_local`` turn about +Z by the change of each angle.
    """
    N = positions.shape[0]
    n = positions.shape[1] - 1
    D = positions.shape[2]
    dt = positions.dtype
    pos_out = np.zeros((N, n + 1, D), dtype=dt)
    ang_out = np.empty((N, n), dtype=dt)
    rl_out = np.zeros((N, n, 4), dtype=dt)
    err = np.empty(N, dtype=dt)
    iters = np.zeros(N, dtype=np.int64)
    reached = np.zeros(N, dtype=np.bool_)
    if not _finite(positions[:, :, :2].copy()):
        return 1, pos_out, ang_out, rl_out, err, iters, reached
    if not _finite(target[:, :2].copy()):
        return 2, pos_out, ang_out, rl_out, err, iters, reached
    zero = consts[D_ZERO]
    half = consts[D_HALF]
    max_step = consts[D_MAX_STEP]
    kick = consts[D_KICK]
    eps = consts[D_EPS]
    pi = consts[D_PI]
    two_pi = consts[D_TWO_PI]
    one = consts[D_ONE]
    lens = np.empty(n, dtype=dt)
    cs = np.empty(n, dtype=dt)
    sn = np.empty(n, dtype=dt)
    theta0 = np.empty(n, dtype=dt)
    theta = np.empty(n, dtype=dt)
    px = np.empty(n + 1, dtype=dt)
    py = np.empty(n + 1, dtype=dt)
    for k in range(N):
        # Bone lengths and start angles; a zero-length bone follows its parent's direction.
        length = zero
        for i in range(n):
            bx = positions[k, i + 1, 0] - positions[k, i, 0]
            by = positions[k, i + 1, 1] - positions[k, i, 1]
            lens[i] = np.sqrt(bx * bx + by * by)
            length += lens[i]
        tiny = consts[D_TINY] * length
        tol = consts[D_TOL] * length
        phi_prev = zero
        for i in range(n):
            bx = positions[k, i + 1, 0] - positions[k, i, 0]
            by = positions[k, i + 1, 1] - positions[k, i, 1]
            phi = np.arctan2(by, bx) if lens[i] > tiny else phi_prev
            theta0[i] = _wrap(phi - phi_prev, pi, two_pi)
            phi_prev = phi
            theta[i] = _start_angle(theta0[i], limits[i, 0], limits[i, 1], pi, two_pi)
        for i in range(n):
            cs[i] = np.cos(theta[i])
            sn[i] = np.sin(theta[i])
        rx, ry = positions[k, 0, 0], positions[k, 0, 1]
        tx, ty = target[k, 0], target[k, 1]
        it = 0
        e = zero
        moved = True
        while True:
            # FK with unit complex numbers: (C, S) is the bone's world direction.
            C, S = one, zero
            px[0], py[0] = rx, ry
            for i in range(n):
                C, S = C * cs[i] - S * sn[i], C * sn[i] + S * cs[i]
                px[i + 1] = px[i] + lens[i] * C
                py[i + 1] = py[i] + lens[i] * S
            ex, ey = px[n], py[n]
            e = np.sqrt((tx - ex) ** 2 + (ty - ey) ** 2)
            if e <= tol or it >= max_iter or not moved:
                break
            it += 1
            moved = False
            for i in range(n - 1, -1, -1):
                ax, ay = ex - px[i], ey - py[i]
                bx, by = tx - px[i], ty - py[i]
                la2 = ax * ax + ay * ay
                lb2 = bx * bx + by * by
                if not (la2 > tiny * tiny and lb2 > tiny * tiny):
                    continue
                cr = ax * by - ay * bx
                d = ax * bx + ay * by
                lo, hi = limits[i, 0], limits[i, 1]
                free = lo <= -pi and hi >= pi
                old = theta[i]
                exact = False  # the full turn: the effector lands on the target line
                if cr * cr <= (eps * eps) * (la2 * lb2):
                    if d > zero and lb2 >= la2:
                        continue
                    turn = kick if d > zero else pi - kick
                    turn = turn if turn < max_step else max_step
                    new = _limit(old + bend_sign * turn, lo, hi, pi, two_pi)
                    if new == old:
                        new = _limit(old - bend_sign * turn, lo, hi, pi, two_pi)
                    delta = new - old
                else:
                    delta = np.arctan2(cr, d)
                    exact = True
                    if delta > max_step:
                        delta = max_step
                        exact = False
                    elif delta < -max_step:
                        delta = -max_step
                        exact = False
                    new = _limit(old + delta, lo, hi, pi, two_pi)
                    if not free:
                        exact = exact and new - old == delta
                        delta = new - old
                if new == old:
                    continue
                if exact:
                    inv = one / np.sqrt(la2 * lb2)
                    cd, sd = d * inv, cr * inv
                    r = np.sqrt(la2 / lb2)
                    ex, ey = px[i] + bx * r, py[i] + by * r
                else:
                    cd, sd = np.cos(delta), np.sin(delta)
                    ex = px[i] + cd * ax - sd * ay
                    ey = py[i] + sd * ax + cd * ay
                c2 = cs[i] * cd - sn[i] * sd
                s2 = cs[i] * sd + sn[i] * cd
                inv = one / np.sqrt(c2 * c2 + s2 * s2)
                cs[i], sn[i] = c2 * inv, s2 * inv
                theta[i] = new
                moved = True
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol
        for i in range(n + 1):
            pos_out[k, i, 0] = px[i]
            pos_out[k, i, 1] = py[i]
        for i in range(n):
            ang_out[k, i] = theta[i]
            h = half * _wrap(theta[i] - theta0[i], pi, two_pi)
            rl_out[k, i, 2] = np.sin(h)
            rl_out[k, i, 3] = np.cos(h)
    return 0, pos_out, ang_out, rl_out, err, iters, reached
