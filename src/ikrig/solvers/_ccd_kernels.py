"""Numba kernels of 3D CCD (see :mod:`ikrig.solvers.ccd`; planar CCD is in
:mod:`._ccd2d_kernels`).

Everything here is private. The public wrappers validate and shape the inputs
(:mod:`ikrig.solvers._harness.problem`); the kernels take flat, C-contiguous float64 ``(N, ...)``
arrays (or ``(M, ...)`` with ``M`` 1, shared by every problem, or ``N``) and their settings
as a one-element ``CCD_SETTINGS`` structured array, write into output arrays passed in and
return ``bad``: ``-1``, or the index of the first problem whose inputs hold NaN or infinity
(the wrapper turns that into an :class:`~ikrig.errors.InputError`). They compute in float64
with the tuple helpers of :mod:`ikrig.kernels.qmath`; inside, a problem is a
:class:`~ikrig.solvers._harness.frame_chain.FrameChain` and a
:class:`~ikrig.solvers._harness.frame_chain.FrameState`.

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
   more than ``EPS`` at a saddle of the error (:func:`kick_due`: the whole chain on the
   target line at a saddle, not at a minimum such as a single bone or a chain folded as
   near as it gets; or a joint left alone with the target behind while the chain is off
   the line, its other joints held by their limits) is the sweep redone with a kick: each
   collinear joint that needs to turn (the target behind ``p_i``, or ahead but nearer than
   the effector) turns about the bend axis by ``pi - kick`` or ``kick``. A kick is tried
   once per fixed point, again only from a strictly better one; as the best pose is
   returned, a vain kick costs sweeps only.
5. The result is the best pose seen (free sweeps never raise the error; before a kick and,
   with constraints, before every sweep the pose is kept if it is the best so far), from
   unit rotations. Zero-length vectors (a zero-length bone, a target at ``p_i``) skip the
   joint.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit.setup import njit
from ..kernels.constraints import project_local_t
from ..kernels.qmath import (
    chain_fk,
    identity_rotations,
    pick,
    q_conj,
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
    v_normalize,
    v_sub,
)
from ._harness.chain_common import settings_record
from ._harness.frame_chain import IDENTITY_Q, FrameChain, FrameState, Outputs, positions_chain
from ._harness.single_kernels import fits, not_one, rest_arrays, status, status_arrays

EPS = 1e-7  # sine below which two directions count as collinear
LINE = 1e-6  # sine below which a bone counts as lying on the effector-target line
STILL = 1e-14  # relative effector move below which a joint's turn counts as none
TINY = 1e-12  # lengths below TINY * chain length count as zero
KICK = 0.25  # radians
RENORMALISE = 8  # sweeps between renormalisations of the local rotations (drift ~1e-15)


CCD_SETTINGS = np.dtype(
    [
        ("max_iter", np.int64),  # sweeps before giving up
        ("tol", np.float64),  # tolerance, a fraction of each chain's length
        ("bend", np.float64, (3,)),  # world bend axis (zeros: automatic)
        ("cos_step", np.float64),  # cos(max_step); -2 without a limit
        ("sin_half_step", np.float64),  # sin and cos of max_step / 2
        ("cos_half_step", np.float64),
        ("sin_half_kick", np.float64),  # sin and cos of half the small kick, min(KICK, step)
        ("cos_half_kick", np.float64),
        ("sin_half_back", np.float64),  # ... of half the large one, min(pi - KICK, step)
        ("cos_half_back", np.float64),
    ]
)


def ccd_settings(max_iterations: int, tolerance: float, bend, max_step: float | None):
    """The kernels' ``settings``: a read-only one-element ``CCD_SETTINGS`` array."""
    step = math.pi if max_step is None else min(float(max_step), math.pi)
    k1 = min(KICK, step)
    k2 = min(math.pi - KICK, step)
    cos_max = -2.0 if max_step is None or step >= math.pi else math.cos(step)
    return settings_record(
        CCD_SETTINGS,
        max_iter=max_iterations,
        tol=tolerance,
        bend=bend,
        cos_step=cos_max,
        sin_half_step=math.sin(0.5 * step),
        cos_half_step=math.cos(0.5 * step),
        sin_half_kick=math.sin(0.5 * k1),
        cos_half_kick=math.cos(0.5 * k1),
        sin_half_back=math.sin(0.5 * k2),
        cos_half_back=math.cos(0.5 * k2),
    )


@njit(cache=True)
def kick_due(pos, n, t, tiny2, behind):
    """Whether a sweep that turned no joint stopped at a saddle of the error (module step 4).

    ``behind``: the sweep left a joint alone whose effector and the target ``t`` (a tuple)
    lie on one line through it, the target behind. That joint sits at a maximum of the
    error in its own turn, so off the target line (some bone, longer than
    ``sqrt(tiny2)``, not on the line through the effector and the target) this is a
    saddle, the other joints held where they are by their limits.

    On the line, with ``g`` the direction from the target to the effector, ``r`` the error
    and ``u_i = +-1`` bone ``i``'s direction along ``g``, the Hessian of the squared error
    in the bones' small bends is ``-r diag(l_i u_i) + w w^T`` (``w_i = l_i u_i``): it has a
    negative eigenvalue iff two or more bones point along ``g``, or one does and the root
    lies beyond the target along ``g`` (a negative determinant). Otherwise the line pose is
    a minimum (a single bone, a chain pointing at an unreachable target, one folded as near
    as it gets). Joint limits are ignored (the best pose covers them).
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
            return behind
        if v_dot(v, g) > 0.0:
            away += 1
    if away >= 2:
        return True
    return away == 1 and v_dot(v_sub(v_get(pos, 0), t), g) > math.sqrt(tiny2 * g2)


@njit(cache=True)
def _ccd_solve(ch, t, s, st, best):
    """Solve the chain ``ch`` (:class:`FrameChain`) in place for the target ``t`` (a tuple),
    with the settings record ``s``: ``st.rl`` is updated, ``st.pos`` and ``st.rw`` hold the
    final FK (``st``: :class:`FrameState`); ``best (n, 4)``: scratch. Returns ``(error,
    iterations, tolerance in data units)``."""
    bone, pq, root, kinds, params = ch.bone, ch.pq, ch.root, ch.kinds, ch.params
    rl, pos, rw = st.rl, st.pos, st.rw
    tol_rel, max_iter, bend = s.tol, s.max_iter, v_from_array(s.bend)
    cos_max, s_max, c_max = s.cos_step, s.sin_half_step, s.cos_half_step
    s_k1, c_k1, s_k2, c_k2 = s.sin_half_kick, s.cos_half_kick, s.sin_half_back, s.cos_half_back
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
            behind = False  # a joint left alone, the target behind it (module step 4)
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
                        behind = behind or not kick
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
            if (
                kick
                or h_max > EPS * EPS
                or not (err < kick_err and kick_due(pos, n, t, tiny2, behind))
            ):
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
def _ccd_one(k, ch, rl0, target, s, outs, rw, best):
    """Problem ``k`` (its chain ``ch``): start from local rotations ``rl0 (n, 4)``, solve
    with the settings record ``s`` and write its row of ``outs`` (:class:`Outputs`);
    ``rw``: its world rotations, ``best``: scratch."""
    outs.rl[k, :, :] = rl0
    st = FrameState(outs.rl[k], outs.pos[k], rw)
    e, it, tol_k = _ccd_solve(ch, v_get(target, k), s, st, best)
    outs.err[k] = e
    outs.iters[k] = it
    outs.reached[k] = e <= tol_k


@njit(cache=True)
def ccd_positions_kernel(positions, target, parent, kinds, params, settings, pos_out, rl_out,
                         err, iters, reached):  # fmt: skip
    """3D CCD of chains given by joint positions (the input pose is the rest pose).

    Args:
        positions: ``(M, n + 1, 3)`` world joint positions.
        target: ``(N, 3)`` world targets.
        parent: ``(M, 4)`` world rotation of the chain root's parent: every joint's frame in
            the input pose, whose local rotations are the identity
            (:func:`~ikrig.kernels.qmath.rest_frame`).
        kinds, params: packed constraints ``(n,)``, ``(M, n, P)``.
        settings: one-element ``CCD_SETTINGS`` (:func:`ccd_settings`).
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
    s = settings[0]
    outs = Outputs(pos_out, rl_out, err, iters, reached)
    for k in range(target.shape[0]):
        if not row_finite(pick(positions, k), target, k):
            return k
        ch = positions_chain(positions, parent, kinds, params, k, bone)
        _ccd_one(k, ch, rl0, target, s, outs, rw, best)
    return -1


@njit(cache=True)
def ccd_pose_kernel(bone, rot_local, parent, root, target, kinds, params, settings, pos_out,
                    rl_out, rw_out, err, iters, reached):  # fmt: skip
    """3D CCD of chains given by their joint frames (the pose-level solver).

    Args:
        bone: ``(N, n, 3)`` each solved joint's bone in its own frame (the next joint's local
            translation); rot_local: ``(N, n, 4)`` start local rotations of the solved
            joints; parent: ``(N, 4)`` world rotation of the chain root's parent; root:
            ``(N, 3)`` world position of the chain root.
        target, kinds, params, settings: as for :func:`ccd_positions_kernel` (``params
            (1, n, P)``).
        pos_out, rl_out, rw_out, err, iters, reached: outputs (``rw_out (N, n, 4)`` the new
            world rotations).

    Returns:
        ``bad``: the first problem with a non-finite target, or -1.
    """
    best = np.empty((bone.shape[1], 4))
    s = settings[0]
    outs = Outputs(pos_out, rl_out, err, iters, reached)
    for k in range(target.shape[0]):
        t = v_get(target, k)
        if not math.isfinite(t[0] + t[1] + t[2]):
            return k
        ch = FrameChain(bone[k], q_get(parent, k), v_get(root, k), IDENTITY_Q, kinds,
                        pick(params, k))  # fmt: skip
        _ccd_one(k, ch, rot_local[k], target, s, outs, rw_out[k], best)
    return -1


@njit(cache=True)
def ccd_positions_one(pos, target, settings, out, rl):
    """:func:`ccd_positions_kernel` for one free problem (see
    :mod:`._harness.single_kernels`)."""
    m = pos.shape[0]
    if not fits(pos, target, out, rl, 3):
        return not_one()
    rest = rest_arrays(m - 1)
    a = status_arrays()
    bad = ccd_positions_kernel(pos.reshape((1, m, 3)), target.reshape((1, 3)), rest.parent,
                               rest.kinds, rest.params, settings, out.reshape((1, m, 3)),
                               rl.reshape((1, m - 1, 4)), a.err, a.iters, a.reached)  # fmt: skip
    return status(a, bad)
