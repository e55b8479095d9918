"""Numba kernel of the damped-least-squares solver (see :mod:`ikrig.solvers.dls`).

Private. The wrapper validates and flattens; the kernel takes ``(N, ...)`` arrays, allocates
its outputs and returns them with a status code (0, or the 1-based position of the first
argument holding NaN or infinity). Constants come from a ``consts`` array of the working
dtype (see :mod:`ikrig.solvers._ccd_kernels` for why).

Per problem and iteration:

1. forward kinematics: world rotations ``W_i`` and positions ``p_i`` of the chain's joints
   (``W_n = W_{n-1} * effector_local``);
2. residuals of the goals: position ``t_g - p_m`` and orientation ``log(T_g W_m^-1)`` (a world
   rotation vector) for effector ``m = effector[g]``; stop when every active goal is within
   tolerance, or at the iteration limit;
3. weighted Jacobian ``J`` of the active rows over ``3 n`` world-axis angular increments
   (joint ``i``'s rotation about world axis ``k`` through ``p_i``): the position block of
   joint ``i < m`` is ``w (e_k x (p_m - p_i))``, the orientation block of every joint that
   turns ``W_m`` (``i <= m``, ``i < n``) is ``w L I``, ``L`` the chain length (so a radian
   weighs like a displacement of one chain length);
4. the residuals are scaled down together so that no goal's exceeds ``clamp * L`` (target
   clamping after Buss and Kim, uniform so that the weighted optimum stays put), then
   ``dtheta = J^T (J J^T + (lambda L)^2 I)^-1 e`` (Cholesky of the small ``m x m`` system),
   scaled down so that no joint turns by more than ``max_step``;
5. a vanishing step (``J^T e = 0``) ends the solve at an optimum of the weighted goals
   (conflicting or unreachable goals), except when the chain lies on one line: then, if
   every bone before each position effector points along that goal's residual, the chain
   points straight at unreachable targets and the solve stops too; otherwise the straight
   chain is a saddle (a target ahead but nearer, or behind) and every joint turns by
   ``kick`` about the bend axis, which bends the chain;
6. joint ``i``'s world increment ``w_i`` becomes the local update
   ``L_i <- exp(W_{i-1}^-1 w_i) L_i``, then ``L_i`` is projected onto its constraint;
7. Levenberg-Marquardt acceptance: a step that increases the weighted error is undone and
   the damping multiplied by 4; an accepted step halves it, down to its floor
   ``damping * L``. Fixed damping oscillates near singular poses (a chain stretched toward
   an unreachable target: the step ``|e| / (2 lambda)`` of the near-null modes is large);
   with acceptance the error never grows and such chains settle straight. A kick's result
   is accepted unconditionally (it leaves a saddle). Rejected steps count as iterations.
"""

from __future__ import annotations

import numpy as np

from .._numba import njit
from ._ccd_kernels import (
    _finite,
    chain_fk,
    perpendicular,
    project_joint,
    qmul,
    qnormalize,
    qrot,
)

C_ZERO = 0
C_ONE = 1
C_HALF = 2
C_TWO = 3
C_TOL = 4  # position tolerance, fraction of the chain length
C_RTOL = 5  # orientation tolerance, radians
C_LAMBDA = 6  # damping, fraction of the chain length
C_MAX_STEP = 7  # radians per joint and iteration
C_CLAMP = 8  # largest residual per goal, fraction of the chain length
C_KICK = 9  # radians
C_STALL = 10  # a step below this (radians) counts as no step
C_EPS = 11  # sine below which directions count as parallel
C_TINY = 12  # lengths below tiny * chain length count as zero
C_LAM_MAX = 13  # largest damping, fraction of the chain length
C_LAM_UP = 14  # damping factor after a rejected step
N_CONSTS = 15

EPS = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-7}
TINY = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}
STALL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-10}
KICK = 0.25


def make_consts(dtype, tolerance, rotation_tolerance, damping, max_step, clamp) -> np.ndarray:
    """The ``consts`` array for ``dtype`` and the solver options."""
    dtype = np.dtype(dtype)
    step = 1e30 if max_step is None else float(max_step)
    c = np.zeros(N_CONSTS, dtype=dtype)
    c[C_ONE] = 1.0
    c[C_HALF] = 0.5
    c[C_TWO] = 2.0
    c[C_TOL] = tolerance
    c[C_RTOL] = rotation_tolerance
    c[C_LAMBDA] = damping
    c[C_MAX_STEP] = min(step, 1e30)
    c[C_CLAMP] = clamp
    c[C_KICK] = min(KICK, step)
    c[C_STALL] = STALL[dtype]
    c[C_EPS] = EPS[dtype]
    c[C_TINY] = TINY[dtype]
    c[C_LAM_MAX] = max(1e4, damping)
    c[C_LAM_UP] = 4.0
    c.setflags(write=False)
    return c


@njit(cache=True, error_model="numpy")
def _rotvec(x, y, z, w, zero, two):
    """Rotation vector (angle in [0, pi]) of a unit quaternion, and its angle."""
    if w < zero:
        x, y, z, w = -x, -y, -z, -w
    s = np.sqrt(x * x + y * y + z * z)
    angle = two * np.arctan2(s, w)
    if s > zero:
        k = angle / s
    else:
        k = two
    return x * k, y * k, z * k, angle


@njit(cache=True, error_model="numpy")
def _exp(vx, vy, vz, half, one, zero):
    """Unit quaternion of a rotation vector."""
    a = np.sqrt(vx * vx + vy * vy + vz * vz)
    h = half * a
    if a > zero:
        k = np.sin(h) / a
    else:
        k = half
    return vx * k, vy * k, vz * k, np.cos(h)


@njit(cache=True, error_model="numpy")
def _evaluate(
    bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, rows, m, length, tol,
    rtol, pos, rw, res, c,
):  # fmt: skip
    """FK of the chain and the weighted goal residuals ``res (3 m,)``.

    Returns ``(error, reached, largest unweighted residual in data units)``.
    """
    zero = c[C_ZERO]
    two = c[C_TWO]
    n = bone.shape[0]
    chain_fk(bone, rl, pq, root, pos, rw, two)
    qx, qy, qz, qw = qmul(
        rw[n - 1, 0], rw[n - 1, 1], rw[n - 1, 2], rw[n - 1, 3],
        eff_local[0], eff_local[1], eff_local[2], eff_local[3],
    )  # fmt: skip
    rw[n, 0], rw[n, 1], rw[n, 2], rw[n, 3] = qx, qy, qz, qw
    err2 = zero
    reached = True
    biggest = zero
    for r in range(m):
        g = rows[r] // 2
        e = effectors[g]
        if rows[r] % 2 == 0:
            w = wpos[g]
            dx = tpos[g, 0] - pos[e, 0]
            dy = tpos[g, 1] - pos[e, 1]
            dz = tpos[g, 2] - pos[e, 2]
            dist = np.sqrt(dx * dx + dy * dy + dz * dz)
            reached = reached and dist <= tol
            err2 += (w * dist) ** 2
            if dist > biggest:
                biggest = dist
        else:
            w = wrot[g] * length
            ex, ey, ez, ew = qmul(
                trot[g, 0], trot[g, 1], trot[g, 2], trot[g, 3],
                -rw[e, 0], -rw[e, 1], -rw[e, 2], rw[e, 3],
            )  # fmt: skip
            dx, dy, dz, ang = _rotvec(ex, ey, ez, ew, zero, two)
            reached = reached and ang <= rtol
            err2 += (w * ang) ** 2
            if ang * length > biggest:
                biggest = ang * length
        res[3 * r] = w * dx
        res[3 * r + 1] = w * dy
        res[3 * r + 2] = w * dz
    return np.sqrt(err2), reached, biggest


@njit(cache=True, error_model="numpy")
def _dls_solve(
    bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, bend, kinds, params,
    c, max_iter, pos, rw, jac, amat, res, ysol, dth, rows, q4, rl_best,
):  # fmt: skip
    """Solve one chain in place (``rl`` updated; ``pos``, ``rw (n + 1, 4)`` hold the FK).

    Returns ``(error, iterations, reached)``.
    """
    zero = c[C_ZERO]
    one = c[C_ONE]
    half = c[C_HALF]
    two = c[C_TWO]
    eps = c[C_EPS]
    n = bone.shape[0]
    G = effectors.shape[0]
    length = zero
    for i in range(n):
        length += np.sqrt(bone[i, 0] ** 2 + bone[i, 1] ** 2 + bone[i, 2] ** 2)
    tol = c[C_TOL] * length
    rtol = c[C_RTOL]
    max_step = c[C_MAX_STEP]
    dmax = c[C_CLAMP] * length
    tiny = c[C_TINY] * length
    # Active rows: 3 per goal with a position weight, 3 per goal with a rotation weight.
    m = 0
    for g in range(G):
        if wpos[g] > zero:
            rows[m] = 2 * g
            m += 1
        if wrot[g] > zero:
            rows[m] = 2 * g + 1
            m += 1
    lam_min = c[C_LAMBDA] * length
    lam_max = c[C_LAM_MAX] * length
    lam = lam_min
    err_best = zero
    it = 0
    free_pass = True  # the next state is accepted whatever its error (start, after a kick)
    while True:
        err, reached, biggest = _evaluate(
            bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, rows, m,
            length, tol, rtol, pos, rw, res, c,
        )  # fmt: skip
        if free_pass or err <= err_best:
            # accept: remember the state, relax the damping toward its floor
            for i in range(n):
                for j in range(4):
                    rl_best[i, j] = rl[i, j]
            if not free_pass:
                lam = max(lam * half, lam_min)
            err_best = err
            free_pass = False
        else:
            # reject (the error grew): back to the best state, damp harder
            for i in range(n):
                for j in range(4):
                    rl[i, j] = rl_best[i, j]
            lam = min(lam * c[C_LAM_UP], lam_max)
            err, reached, biggest = _evaluate(
                bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, rows, m,
                length, tol, rtol, pos, rw, res, c,
            )  # fmt: skip
        if reached or it >= max_iter:
            break
        if biggest > dmax:  # clamp: scale every residual alike (keeps the optimum)
            k = dmax / biggest
            for a in range(3 * m):
                res[a] *= k
        it += 1
        # Weighted Jacobian of the active rows.
        mm = 3 * m
        for a in range(mm):
            for b in range(3 * n):
                jac[a, b] = zero
        for r in range(m):
            g = rows[r] // 2
            e = effectors[g]
            a = 3 * r
            if rows[r] % 2 == 0:
                w = wpos[g]
                for i in range(min(e, n)):
                    rx = w * (pos[e, 0] - pos[i, 0])
                    ry = w * (pos[e, 1] - pos[i, 1])
                    rz = w * (pos[e, 2] - pos[i, 2])
                    b = 3 * i
                    jac[a + 1, b] = -rz
                    jac[a + 2, b] = ry
                    jac[a, b + 1] = rz
                    jac[a + 2, b + 1] = -rx
                    jac[a, b + 2] = -ry
                    jac[a + 1, b + 2] = rx
            else:
                w = wrot[g] * length
                for i in range(min(e + 1, n)):
                    b = 3 * i
                    jac[a, b] = w
                    jac[a + 1, b + 1] = w
                    jac[a + 2, b + 2] = w
        # A = J J^T + lambda^2 I, then Cholesky (lower) in place and two solves.
        for a in range(mm):
            for b in range(a + 1):
                s = zero
                for k in range(3 * n):
                    s += jac[a, k] * jac[b, k]
                amat[a, b] = s
            amat[a, a] += lam * lam
        for a in range(mm):
            for b in range(a + 1):
                s = amat[a, b]
                for k in range(b):
                    s -= amat[a, k] * amat[b, k]
                if a == b:
                    amat[a, a] = np.sqrt(s) if s > zero else one
                else:
                    amat[a, b] = s / amat[b, b]
        for a in range(mm):
            s = res[a]
            for k in range(a):
                s -= amat[a, k] * ysol[k]
            ysol[a] = s / amat[a, a]
        for a in range(mm - 1, -1, -1):
            s = ysol[a]
            for k in range(a + 1, mm):
                s -= amat[k, a] * ysol[k]
            ysol[a] = s / amat[a, a]
        # dtheta = J^T y, then the per-joint step limit.
        biggest = zero
        for b in range(3 * n):
            s = zero
            for a in range(mm):
                s += jac[a, b] * ysol[a]
            dth[b] = s
        for i in range(n):
            s = np.sqrt(dth[3 * i] ** 2 + dth[3 * i + 1] ** 2 + dth[3 * i + 2] ** 2)
            if s > biggest:
                biggest = s
        if biggest > max_step:
            k = max_step / biggest
            for b in range(3 * n):
                dth[b] *= k
        if biggest <= c[C_STALL]:
            # No step. Unless the chain lies on one line, this is an optimum of the goals.
            fx, fy, fz, f2 = zero, zero, zero, zero
            straight = True
            for i in range(n):
                bx = pos[i + 1, 0] - pos[i, 0]
                by = pos[i + 1, 1] - pos[i, 1]
                bz = pos[i + 1, 2] - pos[i, 2]
                b2 = bx * bx + by * by + bz * bz
                if b2 <= tiny * tiny:
                    continue
                if f2 == zero:
                    fx, fy, fz, f2 = bx, by, bz, b2
                    continue
                cx, cy, cz = fy * bz - fz * by, fz * bx - fx * bz, fx * by - fy * bx
                if cx * cx + cy * cy + cz * cz > (eps * eps) * f2 * b2:
                    straight = False
            if not straight:
                break
            # On one line: stop if every bone points along its goals' residuals (the chain
            # points straight at unreachable targets); else bend it.
            aligned = True
            for r in range(m):
                g = rows[r] // 2
                if rows[r] % 2 == 1:
                    continue
                e = effectors[g]
                dx = tpos[g, 0] - pos[e, 0]
                dy = tpos[g, 1] - pos[e, 1]
                dz = tpos[g, 2] - pos[e, 2]
                for i in range(min(e, n)):
                    bx = pos[i + 1, 0] - pos[i, 0]
                    by = pos[i + 1, 1] - pos[i, 1]
                    bz = pos[i + 1, 2] - pos[i, 2]
                    if bx * bx + by * by + bz * bz <= tiny * tiny:
                        continue
                    if bx * dx + by * dy + bz * dz <= zero:
                        aligned = False
            if aligned:
                break
            # Kick: bend every joint about the bend axis (made perpendicular to the chain).
            ax = pos[n, 0] - pos[0, 0]
            ay = pos[n, 1] - pos[0, 1]
            az = pos[n, 2] - pos[0, 2]
            a2 = ax * ax + ay * ay + az * az
            if not a2 > tiny * tiny:
                ax, ay, az, a2 = fx, fy, fz, f2
            if not a2 > tiny * tiny:
                ax, ay, az, a2 = one, zero, zero, one
            ux, uy, uz = bend[0], bend[1], bend[2]
            kk = (ux * ax + uy * ay + uz * az) / a2
            ux, uy, uz = ux - kk * ax, uy - kk * ay, uz - kk * az
            u2 = ux * ux + uy * uy + uz * uz
            b2 = bend[0] ** 2 + bend[1] ** 2 + bend[2] ** 2
            if u2 > eps * eps * b2 and b2 > zero:
                inv = one / np.sqrt(u2)
                ux, uy, uz = ux * inv, uy * inv, uz * inv
            else:
                inv = one / np.sqrt(a2)
                ux, uy, uz = perpendicular(ax * inv, ay * inv, az * inv, zero, one)
            kick = c[C_KICK]
            free_pass = True
            for i in range(n):
                dth[3 * i] = ux * kick
                dth[3 * i + 1] = uy * kick
                dth[3 * i + 2] = uz * kick
        # Apply: L_i <- exp(W_{i-1}^-1 w_i) L_i, then the constraint.
        for i in range(n):
            if i == 0:
                px_, py_, pz_, pw_ = pq[0], pq[1], pq[2], pq[3]
            else:
                px_, py_, pz_, pw_ = rw[i - 1, 0], rw[i - 1, 1], rw[i - 1, 2], rw[i - 1, 3]
            vx, vy, vz = qrot(
                -px_, -py_, -pz_, pw_, dth[3 * i], dth[3 * i + 1], dth[3 * i + 2], two
            )
            dx, dy, dz, dw = _exp(vx, vy, vz, half, one, zero)
            nx, ny, nz, nw = qmul(dx, dy, dz, dw, rl[i, 0], rl[i, 1], rl[i, 2], rl[i, 3])
            nx, ny, nz, nw = qnormalize(nx, ny, nz, nw, one, zero)
            if kinds[i] != 0:
                nx, ny, nz, nw = project_joint(kinds[i], params[i], q4, nx, ny, nz, nw)
                nx, ny, nz, nw = qnormalize(nx, ny, nz, nw, one, zero)
            rl[i, 0], rl[i, 1], rl[i, 2], rl[i, 3] = nx, ny, nz, nw
    return err, it, reached


@njit(cache=True, error_model="numpy")
def dls_kernel(
    bone, rot_local, parent_rot, root, eff_local, effectors, tpos, trot, wpos, wrot, bend,
    kinds, params, consts, max_iter,
):  # fmt: skip
    """Damped least squares over ``N`` chains.

    Args:
        bone: ``(N, n, 3)`` each solved joint's bone in its own frame.
        rot_local: ``(N, n, 4)`` start local rotations; ``parent_rot (N, 4)``: world rotation
            of the chain root's parent; ``root (N, 3)``; ``eff_local (N, 4)``: the effector
            joint's (fixed) local rotation.
        effectors: ``(G,)`` int, chain-joint index of each goal's effector (0..n).
        tpos: ``(N, G, 3)`` world target positions; ``trot (N, G, 4)`` (or ``(1, G, 4)``, for
            every problem) unit world target rotations.
        wpos, wrot: ``(G,)`` float64 position and orientation weights (0: inactive).
        bend: ``(3,)`` world bend axis for collinear set-ups (zeros: automatic).
        kinds, params: packed constraints; consts: see :func:`make_consts`; max_iter.

    Returns:
        ``(status, positions (N, n + 1, 3), rotations_local (N, n, 4), rotations_world
        (N, n + 1, 4), error (N,), iterations (N,), reached (N,))``; ``status`` is 7 or 8 for
        a non-finite ``tpos`` or ``trot`` (outputs undefined), else 0.
    """
    N = bone.shape[0]
    n = bone.shape[1]
    G = effectors.shape[0]
    dt = bone.dtype
    pos_out = np.empty((N, n + 1, 3), dtype=dt)
    rl_out = rot_local.copy()
    rw_out = np.empty((N, n + 1, 4), dtype=dt)
    err = np.empty(N, dtype=dt)
    iters = np.zeros(N, dtype=np.int64)
    reached = np.zeros(N, dtype=np.bool_)
    if not _finite(tpos):
        return 7, pos_out, rl_out, rw_out, err, iters, reached
    if not _finite(trot):
        return 8, pos_out, rl_out, rw_out, err, iters, reached
    mmax = 6 * G
    jac = np.empty((mmax, 3 * n), dtype=dt)
    amat = np.empty((mmax, mmax), dtype=dt)
    res = np.empty(mmax, dtype=dt)
    ysol = np.empty(mmax, dtype=dt)
    dth = np.empty(3 * n, dtype=dt)
    rows = np.empty(2 * G, dtype=np.int64)
    q4 = np.empty(4, dtype=dt)
    rl_best = np.empty((n, 4), dtype=dt)
    for k in range(N):
        e, it, ok = _dls_solve(
            bone[k], rl_out[k], parent_rot[k], root[k], eff_local[k], effectors, tpos[k],
            trot[k if trot.shape[0] > 1 else 0], wpos, wrot, bend, kinds, params, consts,
            max_iter, pos_out[k], rw_out[k], jac, amat, res, ysol, dth, rows, q4, rl_best,
        )  # fmt: skip
        err[k] = e
        iters[k] = it
        reached[k] = ok
    return 0, pos_out, rl_out, rw_out, err, iters, reached


@njit(cache=True, error_model="numpy")
def dls_positions_kernel(
    positions, effectors, tpos, trot, wpos, wrot, bend, kinds, params, consts, max_iter
):
    """Damped least squares over identity-framed chains given by ``(N, n + 1, 3)`` positions.

    Same as :func:`dls_kernel` with ``bone`` the differences of ``positions``, identity start
    and effector rotations. ``status`` is 1 for non-finite positions.
    """
    N = positions.shape[0]
    n = positions.shape[1] - 1
    dt = positions.dtype
    bone = np.empty((N, n, 3), dtype=dt)
    rl = np.zeros((N, n, 4), dtype=dt)
    pq = np.zeros((N, 4), dtype=dt)
    root = np.empty((N, 3), dtype=dt)
    one = consts[C_ONE]
    for k in range(N):
        for j in range(3):
            root[k, j] = positions[k, 0, j]
            for i in range(n):
                bone[k, i, j] = positions[k, i + 1, j] - positions[k, i, j]
        for i in range(n):
            rl[k, i, 3] = one
        pq[k, 3] = one
    bad = not _finite(positions)
    status, p, r, w, e, it, ok = dls_kernel(
        bone, rl, pq, root, pq, effectors, tpos, trot, wpos, wrot, bend, kinds, params, consts,
        0 if bad else max_iter,
    )  # fmt: skip
    return (1 if bad else status), p, r, w, e, it, ok
