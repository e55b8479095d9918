"""Numba kernels of the damped-least-squares solver (see :mod:`ikrig.solvers.dls`).

Private. The wrapper validates and flattens (:mod:`ikrig.solvers._harness.problem`); the kernels
take float64 ``(N, ...)`` arrays (or ``(M, ...)``, ``M`` 1 or ``N``) and their settings as
a one-element ``DLS_SETTINGS`` structured array, write into output arrays passed in and
return ``bad`` (-1, or the index of the first problem whose inputs hold NaN or infinity).
They compute in float64 with the tuple helpers of :mod:`ikrig.kernels.qmath`. Inside, a
problem is a :class:`~ikrig.solvers._harness.frame_chain.FrameChain`, its :class:`Goals`, its
:class:`Active` residual rows and a :class:`~ikrig.solvers._harness.frame_chain.FrameState`; the
step itself (Jacobian, damped solve, straight-chain tests) is in :mod:`._dls_step`.

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
from typing import NamedTuple

import numpy as np

from .._jit.setup import njit
from ..kernels.qmath import (
    all_finite,
    chain_fk,
    identity_rotations,
    pick,
    q_conj,
    q_get,
    q_log,
    q_mul,
    q_set,
    row_finite,
    v_from_array,
    v_get,
    v_sub,
)
from ._dls_step import aligned, apply_step, damped_step, jacobian, kick_axis, straight
from ._harness.chain_common import settings_record
from ._harness.frame_chain import FrameChain, FrameState, Outputs, positions_chain
from ._harness.single_kernels import status, status_arrays

KICK = 0.25  # radians
STALL = 1e-10  # a step below this (radians) counts as no step
TINY = 1e-12  # lengths below TINY * chain length count as zero
LAM_MAX = 1e4  # largest damping, fraction of the chain length
LAM_UP = 4.0  # damping factor after a rejected step
BIG = 2.0**400  # chain lengths or target distances beyond BIG or lengths below SMALL
SMALL = 2.0**-400  # would overflow or underflow when squared: left to the wrapper

DLS_SETTINGS = np.dtype(
    [
        ("max_iter", np.int64),  # iterations before giving up
        ("tol", np.float64),  # position tolerance, a fraction of the chain length
        ("rtol", np.float64),  # orientation tolerance, radians
        ("damping", np.float64),  # the smallest damping, a fraction of the chain length
        ("max_step", np.float64),  # largest joint turn per iteration, radians (1e30: none)
        ("clamp", np.float64),  # largest residual per iteration, fraction of the length
        ("bend", np.float64, (3,)),  # world bend axis (zeros: automatic)
    ]
)


def dls_settings(opts) -> np.ndarray:
    """The kernels' ``settings`` of checked ``DLSOptions``: a read-only one-element
    ``DLS_SETTINGS`` array."""
    step = 1e30 if opts.max_step is None else opts.max_step
    return settings_record(DLS_SETTINGS, max_iter=opts.max_iterations, tol=opts.tolerance,
                           rtol=opts.rotation_tolerance, damping=opts.damping, max_step=step,
                           clamp=opts.clamp, bend=opts._bend)  # fmt: skip


class Goals(NamedTuple):
    """One problem's goals (``G`` of them)."""

    effectors: np.ndarray  # (G,) int64 chain-joint index of each goal's effector (0..n)
    tpos: np.ndarray  # (G, 3) world target positions
    trot: np.ndarray  # (G, 4) unit world target rotations
    wpos: np.ndarray  # (G,) position weights (0: inactive)
    wrot: np.ndarray  # (G,) orientation weights (0: inactive)


class Active(NamedTuple):
    """One problem's active residual rows and its scales."""

    rows: np.ndarray  # (2 G,) int64: 2 g for goal g's position, 2 g + 1 for its orientation
    m: int  # the active rows are rows[:m]; 3 residuals each
    length: float  # chain length
    tol: float  # position tolerance, data units
    rtol: float  # orientation tolerance, radians


class DLSScratch(NamedTuple):
    """Per-call scratch of :func:`_dls_solve` (:func:`_scratch`)."""

    jac: np.ndarray  # (6 G, 3 n) weighted Jacobian
    amat: np.ndarray  # (6 G, 6 G) normal matrix, then its Cholesky factor
    res: np.ndarray  # (6 G,) weighted residuals
    ysol: np.ndarray  # (6 G,) solution of the normal equations
    dth: np.ndarray  # (3 n,) world-axis angular increments
    rows: np.ndarray  # (2 G,) int64 active rows
    rl_best: np.ndarray  # (n, 4) the best state since the start or the last kick
    rl_keep: np.ndarray  # (n, 4) the best state before the last kick


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
def _skip(k, rl0, outs):
    """Leave problem ``k`` unsolved (finite placeholders, ``err = -1``)."""
    outs.rl[k, :, :] = rl0
    outs.pos[k, :, :] = 0.0
    outs.err[k] = -1.0
    outs.iters[k] = 0
    outs.reached[k] = False


@njit(cache=True, inline="always")
def _evaluate(ch, goals, act, st, res):
    """FK of the chain ``ch`` in the state ``st`` (into ``st.pos``, ``st.rw``) and the
    weighted residuals ``res (3 m,)`` of the goals' active rows.

    Returns ``(error, reached, largest unweighted residual in data units)``.
    """
    pos, rw = st.pos, st.rw
    effectors, tpos, trot, wpos, wrot = (goals.effectors, goals.tpos, goals.trot, goals.wpos,
                                         goals.wrot)  # fmt: skip
    rows, length, tol, rtol = act.rows, act.length, act.tol, act.rtol
    n = ch.bone.shape[0]
    chain_fk(ch.bone, st.rl, ch.pq, ch.root, pos, rw)
    q_set(rw, n, q_mul(q_get(rw, n - 1), ch.eff_local))
    err2 = 0.0
    reached = True
    biggest = 0.0
    for r in range(act.m):
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
def _active(goals, s, length, rows):
    """The :class:`Active` rows of ``goals`` (3 per goal with a position weight, 3 per goal
    with a rotation weight; ``rows`` filled) for a chain of ``length``."""
    wpos, wrot = goals.wpos, goals.wrot
    m = 0
    for g in range(wpos.shape[0]):
        if wpos[g] > 0.0:
            rows[m] = 2 * g
            m += 1
        if wrot[g] > 0.0:
            rows[m] = 2 * g + 1
            m += 1
    return Active(rows, m, length, s.tol * length, s.rtol)


@njit(cache=True)
def _dls_solve(ch, goals, s, st, sc):
    """Solve the chain ``ch`` (:class:`FrameChain`) for ``goals`` (:class:`Goals`) with the
    settings record ``s``, in place: ``st.rl`` is updated, ``st.pos`` and ``st.rw (n + 1,
    4)`` hold the FK (``st``: :class:`FrameState`; ``sc``: :class:`DLSScratch`).

    Returns ``(error, iterations, reached)``. ``sc.rl_best``: the best state since the
    start or the last kick; ``sc.rl_keep``: the best state before the last kick (a kick's
    result is accepted whatever its error, so the solve ends in whichever of the two is
    better and never worse than the start).
    """
    rl, pos, res, dth, rl_best, rl_keep = st.rl, st.pos, sc.res, sc.dth, sc.rl_best, sc.rl_keep
    max_step, max_iter = s.max_step, s.max_iter
    n = ch.bone.shape[0]
    length = 0.0
    for i in range(n):
        b = v_get(ch.bone, i)
        length += math.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
    dmax = s.clamp * length
    tiny = TINY * length
    act = _active(goals, s, length, sc.rows)
    m = act.m
    lam_min = s.damping * length
    lam_max = max(LAM_MAX, s.damping) * length
    lam = lam_min
    err_best = 0.0
    err_keep = math.inf  # no kick yet
    it = 0
    free_pass = True  # the next state is accepted whatever its error (start, after a kick)
    while True:
        err, reached, biggest = _evaluate(ch, goals, act, st, res)
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
            err, reached, biggest = _evaluate(ch, goals, act, st, res)
        if reached or it >= max_iter:
            break
        if biggest > dmax:  # clamp: scale every residual alike (keeps the optimum)
            k = dmax / biggest
            for a in range(3 * m):
                res[a] *= k
        it += 1
        jacobian(goals, act, pos, sc.jac)
        biggest = damped_step(3 * m, n, lam, max_step, sc)
        if biggest <= STALL:
            # No step. Unless the chain lies on one line, this is an optimum of the goals.
            on_line, first = straight(pos, tiny)
            if not on_line:
                break
            # On one line: stop if every bone points along its goals' residuals (the chain
            # points straight at unreachable targets); else bend it.
            if aligned(goals, act, pos, tiny):
                break
            # Kick: bend every joint about the bend axis (made perpendicular to the chain).
            # Here rl is the best state since the last kick: keep it if it is the best yet.
            if err < err_keep:
                rl_keep[:] = rl
                err_keep = err
            u = kick_axis(pos, v_from_array(s.bend), tiny, first)
            kick = min(KICK, max_step)
            free_pass = True
            for i in range(n):
                dth[3 * i] = u[0] * kick
                dth[3 * i + 1] = u[1] * kick
                dth[3 * i + 2] = u[2] * kick
        apply_step(ch, st, dth)
    if err_keep < err:  # the state before a kick was better: end there
        rl[:] = rl_keep
        err, reached, biggest = _evaluate(ch, goals, act, st, res)
    return err, it, reached


@njit(cache=True)
def _scratch(n, G):
    """The :class:`DLSScratch` of chains of ``n`` bones with ``G`` goals."""
    mmax = 6 * G
    return DLSScratch(
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
def _dls_one(k, ch, rl0, goals, s, outs, rw, sc):
    """Problem ``k`` (its chain ``ch`` and :class:`Goals`): start from local rotations ``rl0
    (n, 4)``, solve with the settings record ``s`` and write its row of ``outs``
    (:class:`Outputs`); ``rw (n + 1, 4)``: its world rotations."""
    outs.rl[k, :, :] = rl0
    e, it, ok = _dls_solve(ch, goals, s, FrameState(outs.rl[k], outs.pos[k], rw), sc)
    outs.err[k] = e
    outs.iters[k] = it
    outs.reached[k] = ok


@njit(cache=True)
def _targets_finite(tpos, trot, k):
    return all_finite(tpos[k]) and all_finite(pick(trot, k))


@njit(cache=True)
def dls_positions_kernel(positions, parent, effectors, tpos, trot, wpos, wrot, kinds, params,
                         settings, pos_out, rl_out, err, iters, reached):  # fmt: skip
    """Damped least squares of chains given by joint positions (the input pose is the rest
    pose: :func:`~ikrig.kernels.qmath.rest_frame`; the effector's frame too).

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
    sc = _scratch(n, effectors.shape[0])
    s = settings[0]
    outs = Outputs(pos_out, rl_out, err, iters, reached)
    skipped = False
    for k in range(tpos.shape[0]):
        pk = pick(positions, k)
        if not (row_finite(pk, pk, 0) and _targets_finite(tpos, trot, k)):
            return k
        ch = positions_chain(positions, parent, kinds, params, k, bone)
        if _out_of_range(bone, ch.root, tpos[k], wpos):
            _skip(k, rl0, outs)
            skipped = True
            continue
        goals = Goals(effectors, tpos[k], pick(trot, k), wpos, wrot)
        _dls_one(k, ch, rl0, goals, s, outs, rw, sc)
    return -2 if skipped else -1


@njit(cache=True)
def dls_pose_kernel(bone, rot_local, parent, root, eff_local, effectors, tpos, trot, wpos, wrot,
                    kinds, params, settings, pos_out, rl_out, rw_out, err, iters,
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
        kinds, params: packed constraints ``(n,)``, ``(M, n, P)``.
        settings: one-element ``DLS_SETTINGS`` (:func:`dls_settings`).
        pos_out, rl_out, rw_out, err, iters, reached: outputs ``(N, n + 1, 3)``,
            ``(N, n, 4)``, ``(N, n + 1, 4)`` (world rotations, the effector's last),
            ``(N,)``.

    Returns:
        ``bad``: the first problem with a non-finite target position or rotation, -2 when
        some problems were left out of range (:func:`_out_of_range`), else -1.
    """
    sc = _scratch(bone.shape[1], effectors.shape[0])
    s = settings[0]
    outs = Outputs(pos_out, rl_out, err, iters, reached)
    skipped = False
    for k in range(tpos.shape[0]):
        if not _targets_finite(tpos, trot, k):
            return k
        if _out_of_range(bone[k], v_get(root, k), tpos[k], wpos):
            _skip(k, rot_local[k], outs)
            rw_out[k, :, :] = 0.0
            rw_out[k, :, 3] = 1.0
            skipped = True
            continue
        ch = FrameChain(bone[k], q_get(parent, k), v_get(root, k), q_get(eff_local, k), kinds,
                        pick(params, k))  # fmt: skip
        goals = Goals(effectors, tpos[k], pick(trot, k), wpos, wrot)
        _dls_one(k, ch, rot_local[k], goals, s, outs, rw_out[k], sc)
    return -2 if skipped else -1


@njit(cache=True)
def dls_positions_one(pos, target, goal, settings, out, rl):
    """:func:`dls_positions_kernel` for one problem whose one goal is the effector's
    position (``goal``: ``(parent, effectors, trot, wpos, wrot, kinds, params)`` as the
    general path makes them; see :mod:`._single_kernels`)."""
    m = pos.shape[0]
    parent, effectors, trot, wpos, wrot, kinds, params = goal
    a = status_arrays()
    bad = dls_positions_kernel(pos.reshape((1, m, 3)), parent, effectors,
                               target.reshape((1, 1, 3)), trot, wpos, wrot, kinds, params,
                               settings, out.reshape((1, m, 3)), rl.reshape((1, m - 1, 4)),
                               a.err, a.iters, a.reached)  # fmt: skip
    return status(a, bad)
