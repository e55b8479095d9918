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
def _spring_run(goals, dt, halflife, x, v, g, out):
    """Run the spring over ``goals (F, K)`` from state ``x, v, g (K,)`` (updated in place).

    The goal moves linearly from the previous frame's goal ``g`` to this frame's over the
    frame, and the spring's exact solution for such a ramp is used: no lag bias, and the same
    curve at any frame rate for piecewise-linear goals.
    """
    y = 2.0 * math.log(2.0) / max(halflife, 1e-9)
    eydt = math.exp(-y * dt)
    for f in range(goals.shape[0]):
        for k in range(goals.shape[1]):
            g1 = goals[f, k]
            r = (g1 - g[k]) / dt
            u0 = x[k] - g[k] + 2.0 * r / y
            du0 = v[k] - r
            c = du0 + y * u0
            x[k] = g1 - 2.0 * r / y + (u0 + c * dt) * eydt
            v[k] = r + (du0 - c * y * dt) * eydt
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
