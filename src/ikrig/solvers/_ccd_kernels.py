"""Numba kernels of the CCD solvers (see :mod:`ikrig.solvers.ccd` and :mod:`ikrig.solvers.ccd2d`).

Everything here is private. The public wrappers validate and shape the inputs
(:mod:`ikrig.solvers._problem`); the kernels take flat, C-contiguous float64 ``(N, ...)``
arrays (or ``(M, ...)`` with ``M`` 1, shared by every problem, or ``N``), write into output
arrays passed in and return ``bad``: ``-1``, or the index of the first problem whose inputs
hold NaN or infinity (the wrapper turns that into an :class:`~ikrig.errors.InputError`).
They compute in float64 with the tuple helpers of :mod:`ikrig.math._qmath`.

3D CCD, per problem (the start pose is first projected onto the constraints):

1. forward kinematics of the chain from its current local rotations (world rotations and
   positions of every joint, the effector last);
2. stop when the effector is within ``tol * chain length`` of the target, at the iteration
   limit, or when the previous sweep moved the effector nowhere (nothing would change);
3. sweep from the joint before the effector back to the root. Joint ``i`` turns by the
   shortest arc taking ``effector - p_i`` to ``target - p_i`` (clamped to the maximum step),
   then is projected onto its constraint. Only the effector position is tracked during the
   sweep: ``p_i`` and the parent's world rotation depend on joints ``< i`` only, untouched
   yet, so the FK of step 1 stays valid for them.
4. A joint whose effector and target lie on one line through ``p_i`` with the target
   behind is left alone (plain CCD's fixed point). Only when a sweep turns no joint by
   more than ``EPS`` and the whole chain lies on the target line at a saddle of the error
   (:func:`line_saddle`; not at a minimum such as a single bone or a chain folded as near
   as it gets) is the sweep redone with a kick: each collinear joint that needs to turn
   (the target behind ``p_i``, or ahead but nearer than the effector) turns about the bend
   axis by ``pi - kick`` or ``kick``. A kick is tried once per fixed point, again only from
   a strictly better one; as the best pose is returned, a vain kick costs sweeps only.
5. The result is the best pose seen (free sweeps never raise the error; before a kick and,
   with constraints, before every sweep the pose is kept if it is the best so far), from
   unit rotations. Zero-length vectors (a zero-length bone, a target at ``p_i``) skip the
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
    nearest_angle_in_interval,
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
    v_normalize,
    v_sub,
    wrap_angle,
)

EPS = 1e-7  # sine below which two directions count as collinear
LINE = 1e-6  # sine below which a bone counts as lying on the effector-target line
STILL = 1e-14  # relative effector move below which a joint's turn counts as none
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
def line_saddle(pos, n, t, tiny2):
    """Whether the chain ``pos (n + 1, >= 3)`` lies on the target line at a saddle of the error.

    Every bone (longer than ``sqrt(tiny2)``) must lie on the line through the effector and
    the target ``t`` (a tuple). With ``g`` the direction from the target to the effector,
    ``r`` the error and ``u_i = +-1`` bone ``i``'s direction along ``g``, the Hessian of the
    squared error in the bones' small bends is ``-r diag(l_i u_i) + w w^T`` (``w_i = l_i
    u_i``): it has a negative eigenvalue iff two or more bones point along ``g``, or one does
    and the root lies beyond the target along ``g`` (a negative determinant). Otherwise the
    line pose is a minimum (a single bone, a chain pointing at an unreachable target, one
    folded as near as it gets). Joint limits are ignored (the best pose covers them).
    """
    g = v_sub(v_get(pos, n), t)
    g2 = v_dot(g, g)
    if not g2 > tiny2:
        return False
    away = 0
    for i in range(n):
        v = v_sub(v_get(pos, i + 1), v_get(pos, i))
        lv2 = v_dot(v, v)
        if not lv2 > tiny2:
            continue
        c = v_cross(v, g)
        if v_dot(c, c) > (LINE * LINE) * (lv2 * g2):
            return False
        if v_dot(v, g) > 0.0:
            away += 1
    if away >= 2:
        return True
    return away == 1 and v_dot(v_sub(v_get(pos, 0), t), g) > math.sqrt(tiny2 * g2)


@njit(cache=True)
def _ccd_solve(bone, rl, pq, root, t, bend, kinds, params, tol_rel, steps, max_iter, pos, rw,
               best):  # fmt: skip
    """Solve one chain in place (``rl`` is updated; ``pos``, ``rw`` hold the final FK).
    ``pq``, ``root``, ``t``, ``bend``: tuples; ``best (n, 4)``: scratch. Returns ``(error,
    iterations, tolerance in data units)``."""
    cos_max, s_max, c_max, s_k1, c_k1, s_k2, c_k2 = steps
    n = bone.shape[0]
    length = 0.0
    for i in range(n):
        length += v_norm(v_get(bone, i))
    tol = tol_rel * length
    tiny2 = (TINY * length) ** 2
    bn2 = v_dot(bend, bend)
    guard = False  # constrained sweeps may raise the error; free ones never do
    for i in range(n):  # the start pose inside the constraints
        if kinds[i] != 0:
            q = q_normalize(project_local_t(kinds[i], params[i], q_normalize(q_get(rl, i))))
            q_set(rl, i, q)
            guard = True
    best_err = kick_err = math.inf
    err = 0.0
    it = 0
    moved = True
    while True:
        if it % RENORMALISE == 0:
            for i in range(n):
                q_set(rl, i, q_normalize(q_get(rl, i)))
        chain_fk(bone, rl, pq, root, pos, rw)
        err = v_norm(v_sub(t, v_get(pos, n)))
        if err <= tol or it >= max_iter or not moved:
            break  # (not moved: the last sweep turned no joint, neither will the next)
        if guard and err < best_err:  # the best pose so far: the start of this sweep
            best_err = err
            best[:, :] = rl
        it += 1
        kick = False  # a plain sweep; redone with the kick at a saddle (module step 4)
        while True:
            e = v_get(pos, n)
            h_max = 0.0  # the largest (effector move / its reach)^2 of a joint
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
                if s2 <= (EPS * EPS) * (la2 * lb2) and (kick or d < 0.0):
                    # Collinear with the target behind (or kicking): plain CCD's fixed point.
                    if not kick or (d > 0.0 and lb2 >= la2):
                        continue
                    u = v_any_perpendicular(a)
                    if bn2 > 0.0:  # the bend axis made perpendicular to a, unless along a
                        k = v_dot(bend, a) / la2
                        ub = (bend[0] - k * a[0], bend[1] - k * a[1], bend[2] - k * a[2])
                        if v_dot(ub, ub) > (EPS * EPS) * bn2:
                            u = v_normalize(ub, u)
                    sh, ch = (s_k1, c_k1) if d > 0.0 else (s_k2, c_k2)
                    q = (u[0] * sh, u[1] * sh, u[2] * sh, ch)
                else:
                    lab = math.sqrt(la2 * lb2)
                    if d < cos_max * lab:
                        inv = s_max / math.sqrt(s2)
                        q = (c[0] * inv, c[1] * inv, c[2] * inv, c_max)
                    else:
                        # Shortest arc (a x b, |a||b| + a.b), normalised by its own norm: near
                        # a half turn |a||b| + a.b cancels (an angle error ~1e-16 / sin, but
                        # 2 |a||b| (|a||b| + a.b) as the norm shortened bones by percents).
                        w = lab + d
                        inv = 1.0 / math.sqrt(s2 + w * w)
                        q = (c[0] * inv, c[1] * inv, c[2] * inv, w * inv)
                        exact = True
                # World turn q about p_i -> local: L' = (Wp^-1 q Wp) L = (Wp^-1 q.xyz, q.w) L
                v = q_rotate(q_conj(par), (q[0], q[1], q[2]))
                nq = q_mul((v[0], v[1], v[2], q[3]), q_get(rl, i))
                if kinds[i] == 0:
                    h2 = 4.0 * (q[0] * q[0] + q[1] * q[1] + q[2] * q[2])  # |f - a|^2 / |a|^2
                    if exact:
                        r = la2 / lab  # |a| / |b|: the effector lands on the target line
                        f = (b[0] * r, b[1] * r, b[2] * r)
                    else:
                        f = q_rotate(q, a)
                else:
                    nq = q_normalize(project_local_t(kinds[i], params[i], q_normalize(nq)))
                    # the effector in the joint's own (old) frame, then through the new one
                    f = q_rotate(q_mul(par, nq), q_rotate(q_conj(q_get(rw, i)), a))
                    df = v_sub(f, a)
                    h2 = v_dot(df, df) / la2
                h_max = max(h_max, h2)
                e = (o[0] + f[0], o[1] + f[1], o[2] + f[2])
                q_set(rl, i, nq)
            moved = h_max > STILL * STILL
            if kick or h_max > EPS * EPS or not (err < kick_err and line_saddle(pos, n, t, tiny2)):
                break
            kick = True
            kick_err = err * (1.0 - 1e-9)
            chain_fk(bone, rl, pq, root, pos, rw)
            if err < best_err:  # keep the pose before the kick (free sweeps only lower err)
                best_err = err
                best[:, :] = rl
    restore = best_err < err  # (else the pose is the best: free sweeps never raise the error)
    for i in range(n):
        q_set(rl, i, q_normalize(q_get(best if restore else rl, i)))
    if restore:
        chain_fk(bone, rl, pq, root, pos, rw)
        err = v_norm(v_sub(t, v_get(pos, n)))
    return err, it, tol


@njit(cache=True)
def _ccd_one(k, bone, rl0, pq, root, target, bend, kinds, params, tol, steps, max_iter,
             pos_out, rl_out, rw, best, err, iters, reached):  # fmt: skip
    """Problem ``k``: start from local rotations ``rl0 (n, 4)`` and write its outputs."""
    rl_out[k, :, :] = rl0
    e, it, tol_k = _ccd_solve(bone, rl_out[k], pq, root, v_get(target, k), v_from_array(bend),
                              kinds, params, tol, steps, max_iter, pos_out[k], rw,
                              best)  # fmt: skip
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
    best = np.empty((n, 4))
    rl0 = identity_rotations(n)
    for k in range(target.shape[0]):
        pk = pick(positions, k)
        if not row_finite(pk, target, k):
            return k
        pq = rest_frame(pk, pick(parent, k), bone)
        _ccd_one(k, bone, rl0, pq, v_get(pk, 0), target, bend, kinds, pick(params, k), tol,
                 steps, max_iter, pos_out, rl_out, rw, best, err, iters, reached)  # fmt: skip
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
    best = np.empty((bone.shape[1], 4))
    for k in range(target.shape[0]):
        t = v_get(target, k)
        if not math.isfinite(t[0] + t[1] + t[2]):
            return k
        _ccd_one(k, bone[k], rot_local[k], q_get(parent, k), v_get(root, k), target, bend,
                 kinds, pick(params, k), tol, steps, max_iter, pos_out, rl_out, rw_out[k], best,
                 err, iters, reached)  # fmt: skip
    return -1


# ---------------------------------------------------------------------------------------
# Planar CCD on joint angles.


@njit(cache=True)
def _limit(a, lo, hi):
    """A joint angle after a turn: wrapped for a free joint, clamped for a limited one (a
    turn stops at the end it runs into; it never jumps across the forbidden arc)."""
    if lo <= -math.pi and hi >= math.pi:
        return wrap_angle(a)
    return min(max(a, lo), hi)


@njit(cache=True)
def _planar_fk(lens, cs, sn, c_ref, s_ref, P):
    """Joint positions ``P[:, :2]`` from unit complex joint turns; ``P[0]`` is the root."""
    C, S = c_ref, s_ref
    for i in range(lens.shape[0]):
        C, S = C * cs[i] - S * sn[i], C * sn[i] + S * cs[i]
        P[i + 1, 0] = P[i, 0] + lens[i] * C
        P[i + 1, 1] = P[i, 1] + lens[i] * S


@njit(cache=True)
def _ccd2d_solve(lens, cs, sn, theta, limits, P, t, c_ref, s_ref, tol_k, tiny, step, max_iter,
                 bend_sign, best):  # fmt: skip
    """Solve one planar chain in place (joint turns ``cs``, ``sn``, angles ``theta``; ``P``
    the final joints); as :func:`_ccd_solve`, a kick turning first towards ``bend_sign``
    and the other way if a limit blocks that. Returns ``(error, iterations)``."""
    n = lens.shape[0]
    tx, ty = t[0], t[1]
    it = 0
    e = 0.0
    best_e = kick_e = math.inf
    moved = True
    while True:
        _planar_fk(lens, cs, sn, c_ref, s_ref, P)
        e = math.hypot(tx - P[n, 0], ty - P[n, 1])
        if e <= tol_k or it >= max_iter or not moved:
            break
        it += 1
        kick = False  # a plain sweep; redone with the kick at a saddle
        while True:
            ex, ey = P[n, 0], P[n, 1]
            turned = 0.0  # the largest turn of a joint
            for i in range(n - 1, -1, -1):
                ax, ay = ex - P[i, 0], ey - P[i, 1]
                bx, by = tx - P[i, 0], ty - P[i, 1]
                la2 = ax * ax + ay * ay
                lb2 = bx * bx + by * by
                if not (la2 > tiny * tiny and lb2 > tiny * tiny):
                    continue
                cr = ax * by - ay * bx
                d = ax * bx + ay * by
                lo, hi = limits[i, 0], limits[i, 1]
                old = theta[i]
                exact = False  # the full turn: the effector lands on the target line
                if cr * cr <= (EPS * EPS) * (la2 * lb2) and (kick or d < 0.0):
                    if not kick or (d > 0.0 and lb2 >= la2):
                        continue
                    turn = min(KICK if d > 0.0 else math.pi - KICK, step)
                    new = _limit(old + bend_sign * turn, lo, hi)
                    if new == old:
                        new = _limit(old - bend_sign * turn, lo, hi)
                    delta = new - old
                else:
                    delta = min(max(math.atan2(cr, d), -step), step)
                    new = _limit(old + delta, lo, hi)
                    exact = delta < step and delta > -step
                    if not (lo <= -math.pi and hi >= math.pi):
                        exact = exact and new - old == delta
                        delta = new - old
                if new == old:
                    continue
                if exact:
                    inv = 1.0 / math.sqrt(la2 * lb2)
                    cd, sd = d * inv, cr * inv
                    r = math.sqrt(la2 / lb2)
                    ex, ey = P[i, 0] + bx * r, P[i, 1] + by * r
                else:
                    cd, sd = math.cos(delta), math.sin(delta)
                    ex = P[i, 0] + cd * ax - sd * ay
                    ey = P[i, 1] + sd * ax + cd * ay
                c2 = cs[i] * cd - sn[i] * sd
                s2 = cs[i] * sd + sn[i] * cd
                inv = 1.0 / math.sqrt(c2 * c2 + s2 * s2)
                cs[i], sn[i] = c2 * inv, s2 * inv
                theta[i] = new
                turned = max(turned, abs(delta))
            moved = turned > STILL
            if kick or turned > EPS or not (e < kick_e and line_saddle(P, n, t, tiny * tiny)):
                break
            kick = True
            kick_e = e * (1.0 - 1e-9)
            _planar_fk(lens, cs, sn, c_ref, s_ref, P)
            if e < best_e:  # only a kick raises the error: keep the pose before it
                best_e = e
                best[0, :], best[1, :], best[2, :] = theta, cs, sn
    if best_e < e:
        theta[:], cs[:], sn[:] = best[0], best[1], best[2]
        _planar_fk(lens, cs, sn, c_ref, s_ref, P)
        e = math.hypot(tx - P[n, 0], ty - P[n, 1])
    return e, it


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
    its own input direction (+X for a zero-length root bone). A start angle outside its
    limits goes to the nearer end on the circle; sweeps, kicks and the best pose are as in
    3D. ``rl_out`` turn about +Z by the change of each angle. Returns ``bad``.
    """
    N = target.shape[0]
    n = positions.shape[1] - 1
    lens = np.empty(n)
    cs = np.empty(n)
    sn = np.empty(n)
    theta0 = np.empty(n)
    theta = np.empty(n)
    best = np.empty((3, n))
    P = np.zeros((n + 1, 3))
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
            theta[i] = nearest_angle_in_interval(limits[i, 0], limits[i, 1], theta0[i])
            cs[i] = math.cos(theta[i])
            sn[i] = math.sin(theta[i])
        P[0, 0], P[0, 1] = pk[0, 0], pk[0, 1]
        t = (target[k, 0], target[k, 1], 0.0)
        c_ref, s_ref = math.cos(phi_ref), math.sin(phi_ref)
        e, it = _ccd2d_solve(lens, cs, sn, theta, limits, P, t, c_ref, s_ref, tol_k, tiny,
                             max_step, max_iter, bend_sign, best)  # fmt: skip
        err[k] = e
        iters[k] = it
        reached[k] = e <= tol_k
        for i in range(n + 1):
            pos_out[k, i, 0] = P[i, 0]
            pos_out[k, i, 1] = P[i, 1]
        for i in range(n):
            ang_out[k, i] = theta[i]
            h = 0.5 * wrap_angle(theta[i] - theta0[i])
            q_set(rl_out[k], i, (0.0, 0.0, math.sin(h), math.cos(h)))
    return -1
