"""Numba kernel of the damped-least-squares solver (see :mod:`ikrig.solvers.dls`).

Private. The wrapper validates and flattens (:mod:`ikrig.solvers._problem`); the kernels
take float64 ``(N, ...)`` arrays (or ``(M, ...)``, ``M`` 1 or ``N``), write into output
arrays passed in and return ``bad`` (-1, or the index of the first problem whose inputs
hold NaN or infinity). They compute in float64 with the tuple helpers of
:mod:`ikrig.math._qmath`.

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
   every bone before each position effector points along that goal's residual (or the
   residual is below rounding, ``TINY * L``), the chain points straight at unreachable
   targets or is on them and the solve stops too; otherwise the straight
   chain is a saddle (a target ahead but nearer, or behind) and every joint turns by
   ``kick`` about the bend axis, which bends the chain;
6. joint ``i``'s world increment ``w_i`` becomes the local update
   ``L_i <- exp(W_{i-1}^-1 w_i) L_i``, then ``L_i`` is projected onto its constraint;
7. Levenberg-Marquardt acceptance: a step that increases the weighted error is undone and
   the damping multiplied by 4; an accepted step halves it, down to its floor
   ``damping * L``. Fixed damping oscillates near singular poses (a chain stretched toward
   an unreachable target: the step ``|e| / (2 lambda)`` of the near-null modes is large);
   with acceptance the error never grows and such chains settle straight. A kick's result
   is accepted unconditionally (it leaves a saddle), but the state before the kick is kept
   and the solve ends in it if nothing after the kick did better: the result is never
   worse than the start. Rejected steps count as iterations.
"""

from __future__ import annotations

import math

import numpy as np

from .._numba import njit
from ..constraints._kernels import project_local_t
from ..math._qmath import (
    all_finite,
    chain_fk,
    identity_rotations,
    pick,
    q_conj,
    q_exp,
    q_get,
    q_log,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    rest_frame,
    row_finite,
    v_any_perpendicular,
    v_from_array,
    v_get,
    v_sub,
)

KICK = 0.25  # radians
STALL = 1e-10  # a step below this (radians) counts as no step
EPS = 1e-7  # sine below which directions count as parallel
TINY = 1e-12  # lengths below TINY * chain length count as zero
LAM_MAX = 1e4  # largest damping, fraction of the chain length
LAM_UP = 4.0  # damping factor after a rejected step
BIG = 2.0**400  # chain lengths or target distances beyond BIG or lengths below SMALL
SMALL = 2.0**-400  # would overflow or underflow when squared: left to the wrapper


@njit(cache=True)
def _out_of_range(bone, root, tp, wpos):
    """Whether a problem's bones or a position goal's distance from the root (their largest
    coordinates, no squares) are out of the range the kernel squares safely. Such problems
    are left unsolved (``err = -1``, the kernel returns -2) and the wrapper solves them
    again rescaled by a power of two."""
    big = 0.0
    for i in range(bone.shape[0]):
        big = max(big, abs(bone[i, 0]), abs(bone[i, 1]), abs(bone[i, 2]))
    if not big <= BIG or 0.0 < big < SMALL:
        return True
    for g in range(tp.shape[0]):
        d = v_sub(v_get(tp, g), root)
        if wpos[g] > 0.0 and not max(abs(d[0]), abs(d[1]), abs(d[2])) <= BIG:
            return True
    return False


@njit(cache=True)
def _skip(k, rl0, pos_out, rl_out, err, iters, reached):
    """Leave problem ``k`` unsolved (finite placeholders, ``err = -1``)."""
    rl_out[k, :, :] = rl0
    pos_out[k, :, :] = 0.0
    err[k] = -1.0
    iters[k] = 0
    reached[k] = False


@njit(cache=True)
def _evaluate(bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, rows, m,
              length, tol, rtol, pos, rw, res):  # fmt: skip
    """FK of the chain and the weighted goal residuals ``res (3 m,)``.

    Returns ``(error, reached, largest unweighted residual in data units)``.
    """
    n = bone.shape[0]
    chain_fk(bone, rl, pq, root, pos, rw)
    q_set(rw, n, q_mul(q_get(rw, n - 1), eff_local))
    err2 = 0.0
    reached = True
    biggest = 0.0
    for r in range(m):
        g = rows[r] // 2
        e = effectors[g]
        if rows[r] % 2 == 0:
            w = wpos[g]
            d = v_sub(v_get(tpos, g), v_get(pos, e))
            dist = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
            reached = reached and dist <= tol
            err2 += (w * dist) ** 2
            biggest = max(biggest, dist)
        else:
            w = wrot[g] * length
            d, ang = q_log(q_mul(q_get(trot, g), q_conj(q_get(rw, e))))
            reached = reached and ang <= rtol
            err2 += (w * ang) ** 2
            biggest = max(biggest, ang * length)
        res[3 * r] = w * d[0]
        res[3 * r + 1] = w * d[1]
        res[3 * r + 2] = w * d[2]
    return math.sqrt(err2), reached, biggest


@njit(cache=True)
def _kick_axis(pos, bend, tiny, first):
    """Unit axis to bend a straight chain about: ``bend`` made perpendicular to the chain's
    line, else a fixed perpendicular of the line."""
    n = pos.shape[0] - 1
    a = v_sub(v_get(pos, n), v_get(pos, 0))
    a2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
    if not a2 > tiny * tiny:
        a = first
        a2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
    if not a2 > tiny * tiny:
        a, a2 = (1.0, 0.0, 0.0), 1.0
    kk = (bend[0] * a[0] + bend[1] * a[1] + bend[2] * a[2]) / a2
    u = (bend[0] - kk * a[0], bend[1] - kk * a[1], bend[2] - kk * a[2])
    u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    b2 = bend[0] ** 2 + bend[1] ** 2 + bend[2] ** 2
    if u2 > EPS * EPS * b2 and b2 > 0.0:
        inv = 1.0 / math.sqrt(u2)
        return (u[0] * inv, u[1] * inv, u[2] * inv)
    inv = 1.0 / math.sqrt(a2)
    return v_any_perpendicular((a[0] * inv, a[1] * inv, a[2] * inv))


@njit(cache=True)
def _dls_solve(
    bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, bend, kinds, params, opts,
    max_iter, pos, rw, jac, amat, res, ysol, dth, rows, rl_best, rl_keep,
):  # fmt: skip
    """Solve one chain in place (``rl`` updated; ``pos``, ``rw (n + 1, 4)`` hold the FK).

    ``opts``: ``(tolerance, rotation tolerance, damping, max step, clamp)``. Returns
    ``(error, iterations, reached)``. ``rl_best``: the best state since the start or the
    last kick; ``rl_keep``: the best state before the last kick (a kick's result is
    accepted whatever its error, so the solve ends in whichever of the two is better and
    never worse than the start).
    """
    tol_rel, rtol, damping, max_step, clamp = opts
    n = bone.shape[0]
    G = effectors.shape[0]
    length = 0.0
    for i in range(n):
        b = v_get(bone, i)
        length += math.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
    tol = tol_rel * length
    dmax = clamp * length
    tiny = TINY * length
    # Active rows: 3 per goal with a position weight, 3 per goal with a rotation weight.
    m = 0
    for g in range(G):
        if wpos[g] > 0.0:
            rows[m] = 2 * g
            m += 1
        if wrot[g] > 0.0:
            rows[m] = 2 * g + 1
            m += 1
    lam_min = damping * length
    lam_max = max(LAM_MAX, damping) * length
    lam = lam_min
    err_best = 0.0
    err_keep = math.inf  # no kick yet
    it = 0
    free_pass = True  # the next state is accepted whatever its error (start, after a kick)
    while True:
        err, reached, biggest = _evaluate(
            bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, rows, m,
            length, tol, rtol, pos, rw, res,
        )  # fmt: skip
        if free_pass or err <= err_best:
            # accept: remember the state, relax the damping toward its floor
            rl_best[:] = rl
            if not free_pass:
                lam = max(lam * 0.5, lam_min)
            err_best = err
            free_pass = False
        else:
            # reject (the error grew): back to the best state, damp harder
            rl[:] = rl_best
            lam = min(lam * LAM_UP, lam_max)
            err, reached, biggest = _evaluate(
                bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, rows, m,
                length, tol, rtol, pos, rw, res,
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
        jac[:mm, :] = 0.0
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
                s = 0.0
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
                    amat[a, a] = math.sqrt(s) if s > 0.0 else 1.0
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
        biggest = 0.0
        for b in range(3 * n):
            s = 0.0
            for a in range(mm):
                s += jac[a, b] * ysol[a]
            dth[b] = s
        for i in range(n):
            s = math.sqrt(dth[3 * i] ** 2 + dth[3 * i + 1] ** 2 + dth[3 * i + 2] ** 2)
            biggest = max(biggest, s)
        if biggest > max_step:
            k = max_step / biggest
            for b in range(3 * n):
                dth[b] *= k
        if biggest <= STALL:
            # No step. Unless the chain lies on one line, this is an optimum of the goals.
            first = (0.0, 0.0, 0.0)
            f2 = 0.0
            straight = True
            for i in range(n):
                bv = v_sub(v_get(pos, i + 1), v_get(pos, i))
                b2 = bv[0] * bv[0] + bv[1] * bv[1] + bv[2] * bv[2]
                if b2 <= tiny * tiny:
                    continue
                if f2 == 0.0:
                    first, f2 = bv, b2
                    continue
                cx = first[1] * bv[2] - first[2] * bv[1]
                cy = first[2] * bv[0] - first[0] * bv[2]
                cz = first[0] * bv[1] - first[1] * bv[0]
                if cx * cx + cy * cy + cz * cz > (EPS * EPS) * f2 * b2:
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
                d = v_sub(v_get(tpos, g), v_get(pos, e))
                if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= tiny * tiny:
                    continue  # on its target (to rounding): nothing to bend for
                for i in range(min(e, n)):
                    bv = v_sub(v_get(pos, i + 1), v_get(pos, i))
                    if bv[0] * bv[0] + bv[1] * bv[1] + bv[2] * bv[2] <= tiny * tiny:
                        continue
                    if bv[0] * d[0] + bv[1] * d[1] + bv[2] * d[2] <= 0.0:
                        aligned = False
            if aligned:
                break
            # Kick: bend every joint about the bend axis (made perpendicular to the chain).
            # Here rl is the best state since the last kick: keep it if it is the best yet.
            if err < err_keep:
                rl_keep[:] = rl
                err_keep = err
            u = _kick_axis(pos, bend, tiny, first)
            kick = min(KICK, max_step)
            free_pass = True
            for i in range(n):
                dth[3 * i] = u[0] * kick
                dth[3 * i + 1] = u[1] * kick
                dth[3 * i + 2] = u[2] * kick
        # Apply: L_i <- exp(W_{i-1}^-1 w_i) L_i, then the constraint.
        for i in range(n):
            par = pq if i == 0 else q_get(rw, i - 1)
            v = q_rotate(q_conj(par), (dth[3 * i], dth[3 * i + 1], dth[3 * i + 2]))
            nq = q_normalize(q_mul(q_exp(v), q_get(rl, i)))
            if kinds[i] != 0:
                nq = q_normalize(project_local_t(kinds[i], params[i], nq))
            q_set(rl, i, nq)
    if err_keep < err:  # the state before a kick was better: end there
        rl[:] = rl_keep
        err, reached, biggest = _evaluate(
            bone, rl, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, rows, m,
            length, tol, rtol, pos, rw, res,
        )  # fmt: skip
    return err, it, reached


@njit(cache=True)
def _scratch(n, G):
    """Jacobian, normal matrix, residual, solution, step, active rows, best rotations
    (since the last kick, and before it)."""
    mmax = 6 * G
    return (
        np.empty((mmax, 3 * n)),
        np.empty((mmax, mmax)),
        np.empty(mmax),
        np.empty(mmax),
        np.empty(3 * n),
        np.empty(2 * G, dtype=np.int64),
        np.empty((n, 4)),
        np.empty((n, 4)),
    )


@njit(cache=True)
def _dls_one(
    k, bone, rl0, pq, root, eff_local, effectors, tpos, trot, wpos, wrot, bend, kinds, params,
    opts, max_iter, pos_out, rl_out, rw, err, iters, reached, scratch,
):  # fmt: skip
    """Problem ``k``: start from local rotations ``rl0 (n, 4)`` and write its outputs."""
    jac, amat, res, ysol, dth, rows, rl_best, rl_keep = scratch
    rl_out[k, :, :] = rl0
    e, it, ok = _dls_solve(
        bone, rl_out[k], pq, root, eff_local, effectors, tpos[k], pick(trot, k), wpos, wrot,
        v_from_array(bend), kinds, params, opts, max_iter, pos_out[k], rw, jac, amat, res, ysol,
        dth, rows, rl_best, rl_keep,
    )  # fmt: skip
    err[k] = e
    iters[k] = it
    reached[k] = ok


@njit(cache=True)
def _targets_finite(tpos, trot, k):
    return all_finite(tpos[k]) and all_finite(pick(trot, k))


@njit(cache=True)
def dls_positions_kernel(positions, parent, effectors, tpos, trot, wpos, wrot, bend, kinds,
                         params, opts, max_iter, pos_out, rl_out, err, iters, reached):  # fmt: skip
    """Damped least squares of chains given by joint positions (the input pose is the rest
    pose: :func:`~ikrig.math._qmath.rest_frame`; the effector's frame too).

    Args:
        positions: ``(M, n + 1, 3)``; parent: ``(M, 4)``; the others as for
            :func:`dls_pose_kernel`.

    Returns:
        ``bad``: the first problem with non-finite positions or targets, -2 when some
        problems were left out of range (:func:`_out_of_range`), else -1.
    """
    n = positions.shape[1] - 1
    bone = np.empty((n, 3))
    rw = np.empty((n + 1, 4))
    rl0 = identity_rotations(n)
    scratch = _scratch(n, effectors.shape[0])
    skipped = False
    for k in range(tpos.shape[0]):
        pk = pick(positions, k)
        if not (row_finite(pk, pk, 0) and _targets_finite(tpos, trot, k)):
            return k
        pq = rest_frame(pk, pick(parent, k), bone)
        if _out_of_range(bone, v_get(pk, 0), tpos[k], wpos):
            _skip(k, rl0, pos_out, rl_out, err, iters, reached)
            skipped = True
            continue
        _dls_one(k, bone, rl0, pq, v_get(pk, 0), (0.0, 0.0, 0.0, 1.0), effectors, tpos, trot,
                 wpos, wrot, bend, kinds, pick(params, k), opts, max_iter, pos_out, rl_out, rw,
                 err, iters, reached, scratch)  # fmt: skip
    return -2 if skipped else -1


@njit(cache=True)
def dls_pose_kernel(bone, rot_local, parent, root, eff_local, effectors, tpos, trot, wpos, wrot,
                    bend, kinds, params, opts, max_iter, pos_out, rl_out, rw_out, err, iters,
                    reached):  # fmt: skip
    """Damped least squares over ``N`` chains given by their joint frames.

    Args:
        bone: ``(N, n, 3)`` each solved joint's bone in its own frame.
        rot_local: ``(N, n, 4)`` start local rotations; ``parent (N, 4)``: world rotation
            of the chain root's parent; ``root (N, 3)``; ``eff_local (N, 4)``: the effector
            joint's (fixed) local rotation.
        effectors: ``(G,)`` int, chain-joint index of each goal's effector (0..n).
        tpos: ``(N, G, 3)`` world target positions; ``trot (M, G, 4)`` unit world target
            rotations (``M`` 1 or ``N``).
        wpos, wrot: ``(G,)`` float64 position and orientation weights (0: inactive).
        bend: ``(3,)`` world bend axis for collinear set-ups (zeros: automatic).
        kinds, params: packed constraints ``(n,)``, ``(M, n, P)``; opts: ``(tolerance,
            rotation tolerance, damping, max step, clamp)``; max_iter.
        pos_out, rl_out, rw_out, err, iters, reached: outputs ``(N, n + 1, 3)``,
            ``(N, n, 4)``, ``(N, n + 1, 4)`` (world rotations, the effector's last),
            ``(N,)``.

    Returns:
        ``bad``: the first problem with a non-finite target position or rotation, -2 when
        some problems were left out of range (:func:`_out_of_range`), else -1.
    """
    scratch = _scratch(bone.shape[1], effectors.shape[0])
    skipped = False
    for k in range(tpos.shape[0]):
        if not _targets_finite(tpos, trot, k):
            return k
        if _out_of_range(bone[k], v_get(root, k), tpos[k], wpos):
            _skip(k, rot_local[k], pos_out, rl_out, err, iters, reached)
            rw_out[k, :, :] = 0.0
            rw_out[k, :, 3] = 1.0
            skipped = True
            continue
        _dls_one(k, bone[k], rot_local[k], q_get(parent, k), v_get(root, k),
                 q_get(eff_local, k), effectors, tpos, trot, wpos, wrot, bend, kinds,
                 pick(params, k), opts, max_iter, pos_out, rl_out, rw_out[k], err, iters,
                 reached, scratch)  # fmt: skip
    return -2 if skipped else -1
