"""Frame-rate-independent smoothing with a half-life: critically damped springs.

A spring follows its goal; ``halflife`` is the time (seconds) in which it closes half the
distance. The update is exact for a goal moving linearly over a frame, so the same
half-life gives the same motion at 30 or 120 fps, and value and velocity stay continuous
(no kinks that would show as knee pops). Offline and live use the same kernel: offline runs
it over all frames, live over one frame with the carried state, so both give bit-identical
frames.

State is named, as in Daniel Holden's spring code. A *spring bank* is an ``(n,)`` record
array of :data:`SPRING` (``value``, ``velocity`` and last ``goal`` of each spring); a
*rate* is a ``(1,)`` record array of :data:`RATE` (the ``halflife``, the frame time ``dt``
and the two constants derived from them). Record arrays cross into compiled kernels at the
cost of a plain array, and the kernels read them by field name (``rate[0].y``).

**Lanes.** Kernels that run over frames take their state (springs and any other records)
as ``(lanes, n)``: frame ``f`` uses lane ``f % lanes`` (:func:`lane`). One lane is carried
through the frames of a clip; a crowd of characters, one frame each, has one lane per
character (:func:`spring_lanes`), so the same kernels place them all at once.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._jit.setup import njit

SPRING = np.dtype([("value", np.float64), ("velocity", np.float64), ("goal", np.float64)])
"""One spring: its ``value``, ``velocity`` (per second) and the ``goal`` it had last frame.
A NaN value means fresh: the spring starts at rest on its next goal."""

RATE = np.dtype(
    [("halflife", np.float64), ("dt", np.float64), ("y", np.float64), ("eydt", np.float64)]
)
"""A half-life (seconds; ``<= 0``: the goal passes through) at a frame time ``dt``, with
``y = 2 ln 2 / halflife`` and ``eydt = exp(-y dt)``."""

SpringBank = np.ndarray
"""``(n,)`` record array of :data:`SPRING`, updated in place by the kernels."""


def spring_bank(n: int) -> SpringBank:
    """A fresh bank of ``n`` springs (NaN: each starts at rest on its first goal)."""
    bank = np.empty(n, SPRING)
    bank["value"] = bank["velocity"] = bank["goal"] = np.nan
    return bank


def spring_lanes(lanes: int, n: int) -> np.ndarray:
    """Fresh banks of ``n`` springs for ``lanes`` lanes: ``(lanes, n)`` (see the module)."""
    return spring_bank(lanes * n).reshape(lanes, n)


def as_lanes(state: np.ndarray, n: int) -> np.ndarray:
    """``state``, ``(n,)`` (one lane) or ``(lanes, n)``, as a ``(lanes, n)`` view."""
    return state.reshape(-1, n)


@njit(cache=True)
def lane(state, f):
    """The lane of ``state (lanes, ...)`` that frame ``f`` uses: ``f % lanes``."""
    return state[f % state.shape[0]]


@functools.lru_cache(maxsize=256)
def spring_rate(halflife: float, dt: float) -> np.ndarray:
    """The ``(1,)`` :data:`RATE` record of ``halflife`` seconds at ``dt`` seconds per frame
    (cached, read-only: a live placer asks for the same few rates every frame)."""
    halflife, dt = float(halflife), float(dt)
    y = 2.0 * math.log(2.0) / max(halflife, 1e-9)
    rate = np.array([(halflife, dt, y, math.exp(-y * dt))], dtype=RATE)
    rate.flags.writeable = False
    return rate


@njit(cache=True)
def spring_step(x, v, g0, g1, rate):
    """One frame of a spring: value ``x`` and velocity ``v`` follow a goal that moves
    linearly from ``g0`` to ``g1`` over the frame (``rate``: a :data:`RATE` record).
    Returns the new ``(x, v)``: the exact solution for such a ramp, no lag bias, and the
    same curve at any frame rate for piecewise-linear goals."""
    y, eydt, dt = rate.y, rate.eydt, rate.dt
    r = (g1 - g0) / dt
    u0 = x - g0 + 2.0 * r / y
    du0 = v - r
    c = du0 + y * u0
    return g1 - 2.0 * r / y + (u0 + c * dt) * eydt, r + (du0 - c * y * dt) * eydt


@njit(cache=True)
def spring_advance(bank, i, goal, rate):
    """Advance spring ``i`` of ``bank`` (:data:`SPRING` records) toward ``goal`` by one
    frame and return its value (``rate``: a :data:`RATE` record). A fresh spring (NaN)
    starts at rest on ``goal``; a ``halflife <= 0`` passes the goal through."""
    if rate.halflife <= 0.0:
        return goal
    s = bank[i]
    if s.value != s.value:
        s.value = goal
        s.velocity = 0.0
        s.goal = goal
    x, v = spring_step(s.value, s.velocity, s.goal, goal, rate)
    s.value = x
    s.velocity = v
    s.goal = goal
    return x


@njit(cache=True)
def _spring_run(goals, rate, banks, out):
    """Run the springs of ``banks (lanes, K)`` over ``goals (F, K)`` into ``out (F, K)``
    (a fresh spring starts at rest on its first goal)."""
    r = rate[0]
    for f in range(goals.shape[0]):
        bank = lane(banks, f)
        for k in range(goals.shape[1]):
            out[f, k] = spring_advance(bank, k, goals[f, k], r)


def smooth(
    goals: np.ndarray, dt: float, halflife: float, state: SpringBank | None = None
) -> np.ndarray:
    """Smooth signals over time with critically damped springs.

    Args:
        goals: ``(F, ...)`` goal values per frame (any trailing shape).
        dt: seconds per frame.
        halflife: seconds; ``0`` returns the goals unchanged.
        state: a spring bank (:func:`spring_bank`) of the trailing size to start from,
            or its lanes (:func:`spring_lanes`; frame ``f`` uses lane ``f % lanes``),
            updated in place; None starts at rest on the first goal, and so does a fresh
            bank.

    Returns:
        ``(F, ...)`` float64 smoothed values.
    """
    g = np.asarray(goals, dtype=np.float64)
    if halflife <= 0 or g.shape[0] == 0:
        return g.copy()
    flat = np.ascontiguousarray(g.reshape(g.shape[0], -1))
    n = flat.shape[1]
    bank = spring_lanes(1, n) if state is None else as_lanes(state, n)
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
