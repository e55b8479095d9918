"""Frame-rate-independent smoothing with a half-life: critically damped springs.

A spring follows its goal; ``halflife`` is the time (seconds) in which it closes half the
distance. The update is exact for a goal moving linearly over a frame, so the same
half-life gives the same motion at 30 or 120 fps, and value and velocity stay continuous
(no kinks that would show as knee pops). Offline and live use the same kernel: offline runs
it over all frames, live over one frame with the carried state, so both give bit-identical
frames.

State is named, as in Daniel Holden's spring code: a :class:`SpringBank` holds ``n``
springs' ``value``, ``velocity`` and last ``goal``; a :class:`SpringRate` holds the
``halflife``, the frame time ``dt`` and the two constants derived from them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .._numba import njit


class SpringRate(NamedTuple):
    """A half-life at a frame time, with its derived constants (see :func:`spring_rate`).

    Attributes:
        halflife: seconds to close half the distance (``<= 0``: the goal passes through).
        dt: seconds per frame.
        y: ``2 ln 2 / halflife``.
        eydt: ``exp(-y dt)``.
    """

    halflife: float
    dt: float
    y: float
    eydt: float


class SpringBank(NamedTuple):
    """The state of ``n`` springs, ``(n,)`` float64 arrays updated in place. A NaN value
    means fresh: that spring starts at rest on its next goal.

    Attributes:
        value: the springs' positions.
        velocity: their velocities (per second).
        goal: the goal each had last frame.
    """

    value: np.ndarray
    velocity: np.ndarray
    goal: np.ndarray


def spring_bank(n: int) -> SpringBank:
    """A fresh bank of ``n`` springs (NaN: each starts at rest on its first goal)."""
    value, velocity, goal = np.full((3, n), np.nan)
    return SpringBank(value, velocity, goal)


@njit(cache=True)
def spring_rate(halflife, dt):
    """The :class:`SpringRate` of ``halflife`` seconds at ``dt`` seconds per frame."""
    y = 2.0 * math.log(2.0) / max(halflife, 1e-9)
    return SpringRate(halflife, dt, y, math.exp(-y * dt))


@njit(cache=True)
def spring_step(x, v, g0, g1, rate):
    """One frame of a spring: value ``x`` and velocity ``v`` follow a goal that moves
    linearly from ``g0`` to ``g1`` over the frame (``rate``: :class:`SpringRate`). Returns
    the new ``(x, v)``: the exact solution for such a ramp, no lag bias, and the same curve
    at any frame rate for piecewise-linear goals."""
    y, eydt, dt = rate.y, rate.eydt, rate.dt
    r = (g1 - g0) / dt
    u0 = x - g0 + 2.0 * r / y
    du0 = v - r
    c = du0 + y * u0
    return g1 - 2.0 * r / y + (u0 + c * dt) * eydt, r + (du0 - c * y * dt) * eydt


@njit(cache=True)
def spring_advance(bank, i, goal, rate):
    """Advance spring ``i`` of ``bank`` (:class:`SpringBank`) toward ``goal`` by one frame
    and return its value. A fresh spring (NaN) starts at rest on ``goal``; a ``halflife <=
    0`` passes the goal through."""
    if rate.halflife <= 0.0:
        return goal
    if bank.value[i] != bank.value[i]:
        bank.value[i] = goal
        bank.velocity[i] = 0.0
        bank.goal[i] = goal
    x, v = spring_step(bank.value[i], bank.velocity[i], bank.goal[i], goal, rate)
    bank.value[i] = x
    bank.velocity[i] = v
    bank.goal[i] = goal
    return x


@njit(cache=True)
def _spring_run(goals, rate, bank, out):
    """Run the springs of ``bank (K,)`` over ``goals (F, K)`` into ``out (F, K)``."""
    for f in range(goals.shape[0]):
        for k in range(goals.shape[1]):
            g1 = goals[f, k]
            x, v = spring_step(bank.value[k], bank.velocity[k], bank.goal[k], g1, rate)
            bank.value[k] = x
            bank.velocity[k] = v
            bank.goal[k] = g1
            out[f, k] = x


def smooth(
    goals: np.ndarray, dt: float, halflife: float, state: Sequence[np.ndarray] | None = None
) -> np.ndarray:
    """Smooth signals over time with critically damped springs.

    Args:
        goals: ``(F, ...)`` goal values per frame (any trailing shape).
        dt: seconds per frame.
        halflife: seconds; ``0`` returns the goals unchanged.
        state: a :class:`SpringBank` (or any ``(value, velocity, goal)`` arrays) of the
            trailing size to start from, updated in place; None starts at rest on the
            first goal. A bank fresh from :func:`spring_bank` starts on the first goal too.

    Returns:
        ``(F, ...)`` float64 smoothed values.
    """
    g = np.asarray(goals, dtype=np.float64)
    if halflife <= 0 or g.shape[0] == 0:
        return g.copy()
    flat = np.ascontiguousarray(g.reshape(g.shape[0], -1))
    if state is None:
        state = (flat[0].copy(), np.zeros(flat.shape[1]), flat[0].copy())
    bank = SpringBank(*(a.reshape(-1) for a in state))
    if np.isnan(bank.value[0]):
        bank.value[:], bank.velocity[:], bank.goal[:] = flat[0], 0.0, flat[0]
    out = np.empty_like(flat)
    _spring_run(flat, spring_rate(float(halflife), float(dt)), bank, out)
    return out.reshape(g.shape)


class Spring:
    """Live counterpart of :func:`smooth`: carries value, velocity and last goal between frames.

    Example:
        >>> s = Spring(halflife=0.1)
        >>> float(s.update(np.array([0.0]), dt=1 / 30)[0])  # starts at rest on the goal
        0.0
        >>> 0.0 < float(s.update(np.array([1.0]), dt=1 / 30)[0]) < 1.0
        True
    """

    def __init__(self, halflife: float):
        self.halflife = float(halflife)
        self.state: SpringBank | None = None

    def update(self, goal: np.ndarray, dt: float) -> np.ndarray:
        """The smoothed value ``goal.shape`` after one frame of ``dt`` seconds toward ``goal``."""
        g = np.asarray(goal, dtype=np.float64)
        if self.state is None:
            self.state = spring_bank(g.size)
        return smooth(g[None], dt, self.halflife, self.state)[0]
