"""Numba kernels of the CCD solvers (see :mod:`ikrig.solvers.ccd` and :mod:`ikrig.solvers.ccd2d`).

Everything here is private. The public wrappers validate and shape the inputs
(:mod:`ikrig.solvers._options`); the kernels take flat, C-contiguous float64 ``(N, ...)``
arrays (or ``(M, ...)`` with ``M`` 1, shared by every problem, or ``N``), write into output
arrays passed in and return ``bad``: ``-1``, or the index of the first problem whose inputs
hold NaN or infinity (the wrapper turns that into an :class:`~ikrig.errors.InputError`).
They compute in float64 with the tuple helpers of :mod:`ikrig.math._qmath`.

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

Planar CCD works on joint angles (see :func:`ccd2d_kernel`).
"""

from __future__ import annotations

import math

import numpy as np

from .._numba import njit
from ..constraints._kernels import project_local_t
from ..math._qmath import (
    chain_fk,
    identity_rotations,
    nearest_in_range,
    pick,
    q_conj,
    q_get,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    rest_frame,
    row_finite,
    v_any_perpendicular,
    v_cross,
    v_dot,
    v_from_array,
    v_get,
    v_norm,
    v_sub,
    wrap_angle,
)

EPS = 1e-7  # sine below which two directions count as collinear
TINY = 1e-12  # lengths below TINY * chain length count as zero
KICK = 0.25  # radians
RENORMALISE = 8  # sweeps between renormalisations of the local rotations (drift ~1e-15)


def step_constants(max_step: float | None) -> tuple:
    """``(cos(step), sin(step / 2), cos(step / 2), sin/cos of half the small kick, sin/cos
    of half the large kick)`` for the 3D kernel; ``cos(step)`` is -2 without a limit."""
    step = math.pi if max_step is None else min(float(max_step), math.pi)
    k1 = min(KICK, step)
    k2 = min(math.pi - KICK, step)
    cos_max = -2.0 if max_step is None or step >= math.pi else math.cos(step)
    return (
        cos_max,
        math.sin(0.5 * step),
        math.cos(0.5 * step),
        math.sin(0.5 * k1),
        math.cos(0.5 * k1),
        math.sin(0.5 * k2),
        math.cos(0.5 * k2),
    )


@njit(cache=True)
def _ccd_solve(bone, rl, pq, root, t, bend, kinds, params, tol_rel, steps, max_iter, pos, rw):
    """Solve one chain in place (``rl`` is updated; ``pos``, ``rw`` hold the final FK).

    ``pq``, ``root``, ``t``, ``bend``: tuples. Returns ``(error, iterations, tolerance in
    data units)``.
    """
    cos_max, s_max, c_max, s_k1, c_k1, s_k2, c_k2 = steps
    n = bone.shape[0]
    length = 0.0
    for i in range(n):
        length += v_norm(v_get(bone, i))
    tol = tol_rel * length
    tiny2 = (TINY * length) ** 2
    bn2 = v_dot(bend, bend)
    err = 0.0
    it = 0
    moved = True
    while True:
        if it % RENORMALISE == 0:
            for i in range(n):
                q_set(rl, i, q_normalize(q_get(rl, i)))
        chain_fk(bone, rl, pq, root, pos, rw)
        e = v_get(pos, n)
        err = v_norm(v_sub(t, e))
        if err <= tol or it >= max_iter or not moved:
            break  # (not moved: the last sweep turned no joint, neither will the next)
        it += 1
        moved = False
        for i in range(n - 1, -1, -1):
            par = pq if i == 0 else q_get(rw, i - 1)
            o = v_get(pos, i)
            a = v_sub(e, o)
            b = v_sub(t, o)
            la2 = v_dot(a, a)
            lb2 = v_dot(b, b)
            if not (la2 > tiny2 and lb2 > tiny2):
                continue
            c = v_cross(a, b)
            d = v_dot(a, b)
            s2 = v_dot(c, c)
            exact = False  # the turn takes the effector exactly onto the target line
            if s2 <= (EPS * EPS) * (la2 * lb2):
                # Collinear: turn about the bend axis, or not at all.
                if d > 0.0 and lb2 >= la2:
                    continue
                u = (0.0, 0.0, 0.0)
                u2 = 0.0
                if bn2 > 0.0:
                    k = v_dot(bend, a) / la2
                    u = (bend[0] - k * a[0], bend[1] - k * a[1], bend[2] - k * a[2])
                    u2 = v_dot(u, u)
                if u2 > (EPS * EPS) * bn2:
                    inv = 1.0 / math.sqrt(u2)
                    u = (u[0] * inv, u[1] * inv, u[2] * inv)
                else:
                    u = v_any_perpendicular(a)
                sh, ch = (s_k1, c_k1) if d > 0.0 else (s_k2, c_k2)
                q = (u[0] * sh, u[1] * sh, u[2] * sh, ch)
            else:
                lab = math.sqrt(la2 * lb2)
                if d < cos_max * lab:
                    inv = s_max / math.sqrt(s2)
                    q = (c[0] * inv, c[1] * inv, c[2] * inv, c_max)
                else:
                    # shortest arc (a x b, |a||b| + a.b): norm sqrt(2 |a||b| (|a||b| + a.b))
                    w = lab + d
                    inv = 1.0 / math.sqrt(2.0 * lab * w)
                    q = (c[0] * inv, c[1] * inv, c[2] * inv, w * inv)
                    exact = True
            # World turn q about p_i -> local: L' = (Wp^-1 q Wp) L = (Wp^-1 q.xyz, q.w) L.
            # (Unit up to rounding; the local rotations are renormalised every RENORMALISE
            # sweeps and at the end.)
            v = q_rotate(q_conj(par), (q[0], q[1], q[2]))
            nq = q_mul((v[0], v[1], v[2], q[3]), q_get(rl, i))
            if kinds[i] == 0:
                if exact:
                    r = la2 / lab  # |a| / |b|: the effector lands on the target line
                    f = (b[0] * r, b[1] * r, b[2] * r)
                else:
                    f = q_rotate(q, a)
            else:
                nq = q_normalize(project_local_t(kinds[i], params[i], q_normalize(nq)))
                # the effector in the joint's own (old) frame, then through the new frame
                f = q_rotate(q_mul(par, nq), q_rotate(q_conj(q_get(rw, i)), a))
            e = (o[0] + f[0], o[1] + f[1], o[2] + f[2])
            moved = True
            q_set(rl, i, nq)
    for i in range(n):
        q_set(rl, i, q_normalize(q_get(rl, i)))
    return err, it, tol


@njit(cache=True)
def _ccd_one(k, bone, rl0, pq, root, target, bend, kinds, params, tol, steps, max_iter,
             pos_out, rl_out, rw, err, iters, reached):  # fmt: skip
    """Problem ``k``: start from local rotations ``rl0 (n, 4)`` and write its outputs."""
    rl_out[k, :, :] = rl0
    e, it, tol_k = _ccd_solve(bone, rl_out[k], pq, root, v_get(target, k), v_from_array(bend),
                              kinds, params, tol, steps, max_iter, pos_out[k], rw)  # fmt: skip
    err[k] = e
    iters[k] = it
    reached[k] = e <= tol_k


@njit(cache=True)
def ccd_positions_kernel(positions, target, parent, bend, kinds, params, tol, steps, max_iter,
                         pos_out, rl_out, err, iters, reached):  # fmt: skip
    """3D CCD of chains given by joint positions (the input pose is the rest pose).

    Args:
        positions: ``(M, n + 1, 3)`` world joint positions.
        target: ``(N, 3)`` world targets.
        parent: ``(M, 4)`` world rotation of the chain root's parent: every joint's frame in
            the input pose, whose local rotations are the identity
            (:func:`~ikrig.math._qmath.rest_frame`).
        bend: ``(3,)`` world bend axis for collinear configurations (zeros: automatic).
        kinds, params: packed constraints ``(n,)``, ``(M, n, P)``.
        tol: tolerance, fraction of the chain length; steps: :func:`step_constants`;
        max_iter: iteration limit.
        pos_out, rl_out, err, iters, reached: outputs ``(N, n + 1, 3)``, ``(N, n, 4)``,
            ``(N,)``.

    Returns:
        ``bad``: the first problem with non-finite inputs, or -1.
    """
    n = positions.shape[1] - 1
    bone = np.empty((n, 3))
    rw = np.empty((n, 4))
    rl0 = identity_rotations(n)
    for k in range(target.shape[0]):
        pk = pick(positions, k)
        if not row_finite(pk, target, k):
            return k
        pq = rest_frame(pk, pick(parent, k), bone)
        _ccd_one(k, bone, rl0, pq, v_get(pk, 0), target, bend, kinds, pick(params, k), tol,
                 steps, max_iter, pos_out, rl_out, rw, err, iters, reached)  # fmt: skip
    return -1


@njit(cache=True)
def ccd_pose_kernel(bone, rot_local, parent, root, target, bend, kinds, params, tol, steps,
                    max_iter, pos_out, rl_out, rw_out, err, iters, reached):  # fmt: skip
    """3D CCD of chains given by their joint frames (the pose-level solver).

    Args:
        bone: ``(N, n, 3)`` each solved joint's bone in its own frame (the next joint's local
            translation); rot_local: ``(N, n, 4)`` start local rotations of the solved
            joints; parent: ``(N, 4)`` world rotation of the chain root's parent; root:
            ``(N, 3)`` world position of the chain root.
        target, bend, kinds, params, tol, steps, max_iter: as for
            :func:`ccd_positions_kernel` (``params (1, n, P)``).
        pos_out, rl_out, rw_out, err, iters, reached: outputs (``rw_out (N, n, 4)`` the new
            world rotations).

    Returns:
        ``bad``: the first problem with a non-finite target, or -1.
    """
    for k in range(target.shape[0]):
        t = v_get(target, k)
        if not math.isfinite(t[0] + t[1] + t[2]):
            return k
        _ccd_one(k, bone[k], rot_local[k], q_get(parent, k), v_get(root, k), target, bend,
                 kinds, pick(params, k), tol, steps, max_iter, pos_out, rl_out, rw_out[k], err,
                 iters, reached)  # fmt: skip
    return -1


# ---------------------------------------------------------------------------------------
# Planar CCD on joint angles.


@njit(cache=True)
def _limit(a, lo, hi):
    """A joint angle after a turn: wrapped for a free joint, clamped for a limited one."""
    if lo <= -math.pi and hi >= math.pi:
        return wrap_angle(a)
    return min(max(a, lo), hi)


@njit(cache=True)
def ccd2d_kernel(positions, target, limits, tol, max_step, max_iter, bend_sign,
                 pos_out, ang_out, rl_out, err, iters, reached):  # fmt: skip
    """Planar CCD on angles relative to the parent bone, with angle limits.

    Args:
        positions: ``(M, n + 1, D)`` joint positions, ``D`` 2 or 3 (z is ignored).
        target: ``(N, D)`` targets (z ignored).
        limits: ``(n, 2)`` radians, min and max of each joint angle, ``hi - lo < 2 pi``;
            ``(-pi, pi)`` exactly marks a free joint (angles wrap to ``(-pi, pi]``).
        tol: fraction of the chain length; max_step: radians (pi: none); max_iter.
        bend_sign: +1 or -1, the turn direction tried first in collinear configurations.
        pos_out, ang_out, rl_out, err, iters, reached: outputs ``(N, n + 1, D)`` (z = 0),
            ``(N, n)``, ``(N, n, 4)``, ``(N,)``.

    ``ang_out[i]`` is the angle of bone ``i`` from bone ``i - 1``; bone 0's is measured from
    its own input direction (+X for a zero-length root bone). ``rl_out`` turn about +Z by the
    change of each angle. Returns ``bad``.
    """
    N = target.shape[0]
    n = positions.shape[1] - 1
    step = max_step
    kick = min(KICK, step)
    lens = np.empty(n)
    cs = np.empty(n)
    sn = np.empty(n)
    theta0 = np.empty(n)
    theta = np.empty(n)
    px = np.empty(n + 1)
    py = np.empty(n + 1)
    for k in range(N):
        pk = pick(positions, k)
        if not row_finite(pk, target, k, 2):
            return k
        # Bone lengths and start angles; a zero-length bone follows its parent's direction.
        length = 0.0
        for i in range(n):
            lens[i] = math.hypot(pk[i + 1, 0] - pk[i, 0], pk[i + 1, 1] - pk[i, 1])
            length += lens[i]
        tiny = TINY * length
        tol_k = tol * length
        phi_ref = 0.0  # the root bone's input direction: the root angle's zero
        if lens[0] > tiny:
            phi_ref = math.atan2(pk[1, 1] - pk[0, 1], pk[1, 0] - pk[0, 0])
        phi_prev = phi_ref
        for i in range(n):
            phi = phi_prev
            if lens[i] > tiny:
                phi = math.atan2(pk[i + 1, 1] - pk[i, 1], pk[i + 1, 0] - pk[i, 0])
            theta0[i] = wrap_angle(phi - phi_prev)
            phi_prev = phi
            theta[i] = nearest_in_range(limits[i, 0], limits[i, 1], theta0[i])
            cs[i] = math.cos(theta[i])
            sn[i] = math.sin(theta[i])
        rx, ry = pk[0, 0], pk[0, 1]
        tx, ty = target[k, 0], target[k, 1]
        c_ref, s_ref = math.cos(phi_ref), math.sin(phi_ref)
        it = 0
        e = 0.0
        moved = True
        while True:
            # FK with unit complex numbers: (C, S) is the bone's world direction.
            C, S = c_ref, s_ref
            px[0], py[0] = rx, ry
            for i in range(n):
                C, S = C * cs[i] - S * sn[i], C * sn[i] + S * cs[i]
                px[i + 1] = px[i] + lens[i] * C
                py[i + 1] = py[i] + lens[i] * S
            ex, ey = px[n], py[n]
            e = math.hypot(tx - ex, ty - ey)
            if e <= tol_k or it >= max_iter or not moved:
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
                free = lo <= -math.pi and hi >= math.pi
                old = theta[i]
                exact = False  # the full turn: the effector lands on the target line
                if cr * cr <= (EPS * EPS) * (la2 * lb2):
                    if d > 0.0 and lb2 >= la2:
                        continue
                    turn = kick if d > 0.0 else math.pi - kick
                    turn = min(turn, step)
                    new = _limit(old + bend_sign * turn, lo, hi)
                    if new == old:
                        new = _limit(old - bend_sign * turn, lo, hi)
                    delta = new - old
                else:
                    delta = math.atan2(cr, d)
                    exact = True
                    if delta > step:
                        delta = step
                        exact = False
                    elif delta < -step:
                        delta = -step
                        exact = False
                    new = _limit(old + delta, lo, hi)
                    if not free:
                        exact = exact and new - old == delta
                        delta = new - old
                if new == old:
                    continue
                if exact:
                    inv = 1.0 / math.sqrt(la2 * lb2)
                    cd, sd = d * inv, cr * inv
                    r = math.sqrt(la2 / lb2)
                    ex, ey = px[i] + bx * r, py[i] + by * r
                else:
                    cd, sd = math.cos(delta), math.sin(delta)
                    ex = px[i] + cd * ax - sd * ay
                    ey = py[i] + sd * ax + cd * ay
                c2 = cs[i] * cd - sn[i] * sd
                s2 = cs[i] * sd + sn[i] * cd
                inv = 1.0 / math.sqrt(c2 * c2 + s2 * s2)
                cs[i], sn[i] = c2 * inv, s2 * inv
                theta[i] = new
                moved = True
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol_k
        for i in range(n + 1):
            pos_out[k, i, 0] = px[i]
            pos_out[k, i, 1] = py[i]
        for i in range(n):
            ang_out[k, i] = theta[i]
            h = 0.5 * wrap_angle(theta[i] - theta0[i])
            q_set(rl_out[k], i, (0.0, 0.0, math.sin(h), math.cos(h)))
    return -1
