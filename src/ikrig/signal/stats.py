"""Order statistics of the small samples the clip metrics and the foot pipeline pool: NumPy's
own results, bit for bit, without its general machinery (tens of microseconds a call)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["median", "percentile"]


def percentile(values: np.ndarray, q: float, axis: int | None = None):
    """``np.percentile(values, q, axis=axis)`` (the linear method, bit for bit) of a
    non-empty float array without NaN: a float of a 1-D array (``axis`` None; a clip's
    metrics take thirty of them), or along the first axis (``axis=0``) of ``values (n,
    ...)`` an array ``(...)``.

    >>> percentile(np.array([3.0, 1.0, 2.0, 4.0]), 50.0)
    2.5
    """
    if axis == 0:
        values = _samples_last(values)
    n = values.shape[-1] if axis == 0 else values.size
    pos = q / 100.0 * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    part = np.partition(values, (lo, hi) if hi > lo else lo, axis=-1)
    a, b, t = part[..., lo], part[..., hi], pos - lo
    if axis is None:
        a, b = float(a), float(b)
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t


def _samples_last(values: np.ndarray) -> np.ndarray:
    """``values (n, ...)`` as a C-contiguous ``(..., n)`` copy: partitioning each sample
    along contiguous memory is several times faster than along a strided first axis."""
    return np.ascontiguousarray(np.moveaxis(values, 0, -1))


def median(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=0)`` (bit for bit) of a float array ``(n, ...)``, ``n >= 1``,
    without NaN: ``(...)``."""
    n = len(values)
    k = n // 2
    values = _samples_last(values)
    if n % 2:
        return np.partition(values, k, axis=-1)[..., k]
    part = np.partition(values, (k - 1, k), axis=-1)
    return (part[..., k - 1] + part[..., k]) / 2.0
