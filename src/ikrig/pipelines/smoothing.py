"""Step 8 of foot placement: frame-rate-independent smoothing with a half-life.

A critically damped spring follows its goal; ``halflife`` is the time (seconds) in which it
closes half the distance. The update is exact for a goal held constant over a frame, so the
same half-life gives the same motion at 30 or 120 fps, and position and velocity stay
continuous (no kinks that would show as knee pops). Offline and live use the same kernel:
offline runs it over all frames, live over one frame with the carried state, so both give
bit-identical frames.
"""

from __future__ import annotations

import math

import numpy as np

from .._numba import njit


@njit(cache=True)
def spring_step(x, v, g0, g1, y, eydt, dt):
    """One frame of the spring: value ``x`` and velocity ``v`` follow a goal that moves
    linearly from ``g0`` to ``g1`` over the frame (``y = 2 ln 2 / halflife``, ``eydt =
    exp(-y dt)``). Returns the new ``(x, v)``. The exact solution for such a ramp: no lag
    bias, and the same curve at any frame rate for piecewise-linear goals."""
    r = (g1 - g0) / dt
    u0 = x - g0 + 2.0 * r / y
    du0 = v - r
    c = du0 + y * u0
    return g1 - 2.0 * r / y + (u0 + c * dt) * eydt, r + (du0 - c * y * dt) * eydt


@njit(cache=True)
def spring_rate(halflife, dt):
    """``(y, exp(-y dt))`` of a half-life (seconds) for :func:`spring_step`."""
    y = 2.0 * math.log(2.0) / max(halflife, 1e-9)
    return y, math.exp(-y * dt)


@njit(cache=True)
def spring_advance(state, i, goal, halflife, y, eydt, dt):
    """Advance spring ``i`` of a ``(3, n)`` state (rows value, velocity, last goal; a NaN
    value means fresh: it starts at rest on ``goal``) by one frame; returns the value.
    A ``halflife <= 0`` passes the goal through."""
    if halflife <= 0.0:
        return goal
    if state[0, i] != state[0, i]:
        state[0, i] = goal
        state[1, i] = 0.0
        state[2, i] = goal
    x, v = spring_step(state[0, i], state[1, i], state[2, i], goal, y, eydt, dt)
    state[0, i] = x
    state[1, i] = v
    state[2, i] = goal
    return x


def new_spring_state(n: int) -> np.ndarray:
    """A fresh ``(3, n)`` spring state for :func:`spring_advance` (NaN: starts on its goal)."""
    return np.full((3, n), np.nan)


@njit(cache=True)
def _spring_run(goals, dt, halflife, x, v, g, out):
    """Run the spring over ``goals (F, K)`` from state ``x, v, g (K,)`` (updated in place)."""
    y, eydt = spring_rate(halflife, dt)
    for f in range(goals.shape[0]):
        for k in range(goals.shape[1]):
            g1 = goals[f, k]
            x[k], v[k] = spring_step(x[k], v[k], g[k], g1, y, eydt, dt)
            g[k] = g1
            out[f, k] = x[k]


def smooth(goals, dt: float, halflife: float, state=None):
    """Smooth signals over time with a critically damped spring.

    Args:
        goals: ``(F, ...)`` goal values per frame (any trailing shape).
        dt: seconds per frame.
        halflife: seconds; ``0`` returns the goals unchanged.
        state: ``(x, v, g)`` arrays (value, velocity, last goal) of the trailing shape to
            start from, updated in place; None starts at rest on the first goal.

    Returns:
        ``(F, ...)`` float64 smoothed values.
    """
    g = np.asarray(goals, dtype=np.float64)
    if halflife <= 0 or g.shape[0] == 0:
        return g.copy()
    flat = np.ascontiguousarray(g.reshape(g.shape[0], -1))
    if state is None:
        state = (flat[0].copy(), np.zeros(flat.shape[1]), flat[0].copy())
    x, v, g0 = (a.reshape(-1) for a in state)
    out = np.empty_like(flat)
    _spring_run(flat, float(dt), float(halflife), x, v, g0, out)
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
        self.state = None

    def update(self, goal, dt: float) -> np.ndarray:
        g = np.asarray(goal, dtype=np.float64)
        if self.state is None:
            self.state = (g.reshape(-1).copy(), np.zeros(g.size), g.reshape(-1).copy())
        return smooth(g[None], dt, self.halflife, self.state)[0]
