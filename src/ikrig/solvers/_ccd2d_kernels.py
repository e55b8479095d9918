"""Numba kernel of planar CCD on joint angles (see :mod:`ikrig.solvers.ccd2d`).

Private. Inputs as for the 3D kernels (:mod:`._ccd_kernels`), settings as a one-element
``CCD2D_SETTINGS`` structured array. Inside, a problem is a :class:`PlanarChain` (what does
not change) and a :class:`PlanarState` (what the solve updates); sweeps, kicks and the best
pose are as in 3D.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit.setup import njit
from ..kernels.qmath import nearest_angle_in_interval, pick, q_set, row_finite, wrap_angle
from ._ccd_kernels import EPS, KICK, STILL, TINY, kick_due
from ._harness.chain_common import settings_record
from ._harness.single_kernels import apart, fits, free_limits, not_one, status, status_arrays

CCD2D_SETTINGS = np.dtype(
    [
        ("max_iter", np.int64),  # sweeps before giving up
        ("tol", np.float64),  # tolerance, a fraction of each chain's length
        ("step", np.float64),  # largest turn per sweep, radians (pi: none)
        ("bend_sign", np.float64),  # +1 or -1: the turn tried first in collinear set-ups
    ]
)


def ccd2d_settings(max_iterations: int, tolerance: float, max_step: float, bend_sign: float):
    """The kernel's ``settings``: a read-only one-element ``CCD2D_SETTINGS`` array."""
    return settings_record(CCD2D_SETTINGS, max_iter=max_iterations, tol=tolerance,
                           step=max_step, bend_sign=bend_sign)  # fmt: skip


class PlanarChain(NamedTuple):
    """One planar problem's fixed parts."""

    lens: np.ndarray  # (n,) bone lengths
    limits: np.ndarray  # (n, 2) radians, min and max of each joint angle
    c_ref: float  # cos and sin of the root bone's input direction (the root angle's zero)
    s_ref: float
    tol_k: float  # tolerance in data units
    tiny: float  # lengths below this count as zero


class PlanarState(NamedTuple):
    """One planar problem while it is solved (updated in place)."""

    cs: np.ndarray  # (n,) cos and sin of each joint's angle
    sn: np.ndarray
    theta: np.ndarray  # (n,) joint angles (a stale one: read it with _angle)
    stale: np.ndarray  # (n,) bool: theta[i] lags cs[i], sn[i] (a free joint turned)
    P: np.ndarray  # (n + 1, 3) joint positions (z unused), P[0] the root
    best: np.ndarray  # (3, n) scratch: theta, cs, sn of the pose before a kick


@njit(cache=True)
def _limit(a, lo, hi):
    """A joint angle after a turn: wrapped for a free joint, clamped for a limited one (a
    turn stops at the end it runs into; it never jumps across the forbidden arc)."""
    if lo <= -math.pi and hi >= math.pi:
        return wrap_angle(a)
    return min(max(a, lo), hi)


@njit(cache=True)
def _angle(st, i):
    """Joint ``i``'s angle, first brought up to date if it is stale: a free joint turns
    by its cosine and sine alone (no arc tangent per turn), its angle is read back from
    them when it is needed (kicks, the best pose, the result)."""
    if st.stale[i]:
        st.theta[i] = wrap_angle(math.atan2(st.sn[i], st.cs[i]))
        st.stale[i] = False
    return st.theta[i]


@njit(cache=True)
def _fresh_angles(st):
    for i in range(st.theta.shape[0]):
        _angle(st, i)


@njit(cache=True)
def _planar_fk(ch, st):
    """Joint positions ``st.P[:, :2]`` from the unit complex joint turns ``st.cs``,
    ``st.sn``; ``st.P[0]`` is the root."""
    lens, cs, sn, P = ch.lens, st.cs, st.sn, st.P
    C, S = ch.c_ref, ch.s_ref
    for i in range(lens.shape[0]):
        C, S = C * cs[i] - S * sn[i], C * sn[i] + S * cs[i]
        P[i + 1, 0] = P[i, 0] + lens[i] * C
        P[i + 1, 1] = P[i, 1] + lens[i] * S


@njit(cache=True, inline="always")
def _turn(cs, sn, i, cd, sd):
    """Turn joint ``i``'s unit complex angle ``(cs[i], sn[i])`` by ``(cd, sd)``,
    renormalised."""
    c2 = cs[i] * cd - sn[i] * sd
    s2 = cs[i] * sd + sn[i] * cd
    inv = 1.0 / math.sqrt(c2 * c2 + s2 * s2)
    cs[i], sn[i] = c2 * inv, s2 * inv


@njit(cache=True)
def _ccd2d_solve(ch, st, t, s):
    """Solve the planar chain ``ch`` (:class:`PlanarChain`) in place for the target ``t``
    with the settings record ``s`` (``st``, a :class:`PlanarState`: joint turns ``cs``,
    ``sn``, angles ``theta``, ``P`` the final joints); as
    :func:`~ikrig.solvers._ccd_kernels._ccd_solve`, a kick turning first towards
    ``bend_sign`` and the other way if a limit blocks that. Returns ``(error,
    iterations)``."""
    lens, limits, tol_k, tiny = ch.lens, ch.limits, ch.tol_k, ch.tiny
    cs, sn, theta, stale, P, best = st.cs, st.sn, st.theta, st.stale, st.P, st.best
    step, max_iter, bend_sign = s.step, s.max_iter, s.bend_sign
    unstepped = step >= math.pi  # no largest turn per sweep
    n = lens.shape[0]
    tx, ty = t[0], t[1]
    it = 0
    e = 0.0
    best_e = kick_e = math.inf
    moved = True
    while True:
        _planar_fk(ch, st)
        e = math.hypot(tx - P[n, 0], ty - P[n, 1])
        if e <= tol_k or it >= max_iter or not moved:
            break
        it += 1
        kick = False  # a plain sweep; redone with the kick at a saddle
        while True:
            ex, ey = P[n, 0], P[n, 1]
            turned = 0.0  # the largest turn of a joint
            behind = False  # a joint left alone, the target behind it
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
                exact = False  # the full turn: the effector lands on the target line
                if cr * cr <= (EPS * EPS) * (la2 * lb2) and (kick or d < 0.0):
                    if not kick or (d > 0.0 and lb2 >= la2):
                        behind = behind or not kick
                        continue
                    old = _angle(st, i)
                    turn = min(KICK if d > 0.0 else math.pi - KICK, step)
                    new = _limit(old + bend_sign * turn, lo, hi)
                    if new == old:
                        new = _limit(old - bend_sign * turn, lo, hi)
                    delta = new - old
                elif unstepped and lo <= -math.pi and hi >= math.pi:
                    # a free joint's full turn, by its cosine and sine: no arc tangent
                    if cr == 0.0:
                        continue
                    inv = 1.0 / math.sqrt(la2 * lb2)
                    _turn(cs, sn, i, d * inv, cr * inv)
                    r = math.sqrt(la2 / lb2)
                    ex, ey = P[i, 0] + bx * r, P[i, 1] + by * r
                    stale[i] = True
                    # the turn's size only meets thresholds far below 1: its sine will do
                    turned = max(turned, abs(cr * inv) if d > 0.0 else 1.0)
                    continue
                else:
                    old = theta[i]
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
                _turn(cs, sn, i, cd, sd)
                theta[i] = new
                turned = max(turned, abs(delta))
            moved = turned > STILL
            if kick or turned > EPS or not (e < kick_e and kick_due(P, n, t, tiny * tiny, behind)):
                break
            kick = True
            kick_e = e * (1.0 - 1e-9)
            _planar_fk(ch, st)
            if e < best_e:  # only a kick raises the error: keep the pose before it
                best_e = e
                _fresh_angles(st)
                best[0, :], best[1, :], best[2, :] = theta, cs, sn
    if best_e < e:
        theta[:], cs[:], sn[:] = best[0], best[1], best[2]
        stale[:] = False
        _planar_fk(ch, st)
        e = math.hypot(tx - P[n, 0], ty - P[n, 1])
    _fresh_angles(st)
    return e, it


@njit(cache=True)
def ccd2d_kernel(positions, target, limits, settings, pos_out, ang_out, rl_out, err, iters,
                 reached):  # fmt: skip
    """Planar CCD on angles relative to the parent bone, with angle limits.

    Args:
        positions: ``(M, n + 1, D)`` joint positions, ``D`` 2 or 3 (z is ignored).
        target: ``(N, D)`` targets (z ignored).
        limits: ``(n, 2)`` radians, min and max of each joint angle, ``hi - lo < 2 pi``;
            ``(-pi, pi)`` exactly marks a free joint (angles wrap to ``(-pi, pi]``).
        settings: one-element ``CCD2D_SETTINGS`` (:func:`ccd2d_settings`).
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
    stale = np.zeros(n, dtype=np.bool_)
    best = np.empty((3, n))
    P = np.zeros((n + 1, 3))
    st = PlanarState(cs, sn, theta, stale, P, best)
    s = settings[0]
    tol = s.tol
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
        ch = PlanarChain(lens, limits, math.cos(phi_ref), math.sin(phi_ref), tol_k, tiny)
        e, it = _ccd2d_solve(ch, st, t, s)
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


@njit(cache=True)
def ccd2d_one(pos, target, settings, out, rl, ang):
    """:func:`ccd2d_kernel` for one free problem (see :mod:`._harness.single_kernels`),
    into ``out (m, D)`` (z set to 0 for ``D = 3``), ``rl (n, 4)`` and ``ang (n,)``."""
    m, D = pos.shape
    if not ((D == 2 or D == 3) and fits(pos, target, out, rl, D) and ang.shape[0] == m - 1
            and apart(ang, pos)
            and apart(ang, target) and apart(ang, out) and apart(ang, rl)):  # fmt: skip
        return not_one()
    out[:] = 0.0
    a = status_arrays()
    bad = ccd2d_kernel(pos.reshape((1, m, D)), target.reshape((1, D)), free_limits(m - 1),
                       settings, out.reshape((1, m, D)), ang.reshape((1, m - 1)),
                       rl.reshape((1, m - 1, 4)), a.err, a.iters, a.reached)  # fmt: skip
    return status(a, bad)
