"""Easing curves and smooth extrema: scalar Numba functions for the kernels, and
:func:`smoothstep` on arrays. Each is flat (zero slope) where it meets its end values."""

from __future__ import annotations

import math

import numpy as np

from .._jit.setup import njit


def smoothstep(x: np.ndarray) -> np.ndarray:
    """``3x^2 - 2x^3`` of ``x`` clipped to [0, 1] (zero slope at both ends)."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


@njit(cache=True)
def smootherstep(u):
    """``6u^5 - 15u^4 + 10u^3`` of ``u`` clipped to [0, 1] (zero slope and curvature at both
    ends)."""
    u = min(max(u, 0.0), 1.0)
    return u * u * u * (u * (6.0 * u - 15.0) + 10.0)


@njit(cache=True)
def swing_bump(u):
    """``16 u^2 (1 - u)^2``: 1 at mid-swing, 0 with zero slope at lift-off and landing."""
    u = min(max(u, 0.0), 1.0)
    return 16.0 * u * u * (1.0 - u) ** 2


@njit(cache=True)
def smooth_max(a, b, k):
    """A smooth maximum of ``a`` and ``b``: ``>= max(a, b)``, within ``k / 2`` of it, and
    without the kink of ``max`` where they cross (``k`` in the same units)."""
    return 0.5 * (a + b + math.sqrt((a - b) ** 2 + k * k))


@njit(cache=True)
def smooth_min(a, b, k):
    """A smooth minimum: ``<= min(a, b)``, within ``k / 2`` of it (see :func:`smooth_max`)."""
    return 0.5 * (a + b - math.sqrt((a - b) ** 2 + k * k))
