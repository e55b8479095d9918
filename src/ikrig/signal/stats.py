"""Order statistics of the small samples the clip metrics and the foot pipeline pool: NumPy's
own results, bit for bit, without its general machinery (tens of microseconds a call)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["medians", "nan_percentiles", "percentile", "percentiles"]


def percentile(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)`` (the linear method, bit for bit) of a non-empty 1-D
    float array without NaN: a clip's metrics take thirty of them.

    >>> percentile(np.array([3.0, 1.0, 2.0, 4.0]), 50.0)
    2.5
    """
    a, b, t = _neighbours(values, q)
    return float(_lerp(float(a), float(b), t))


def percentiles(values: np.ndarray, q: float) -> np.ndarray:
    """``np.percentile(values, q, axis=0)`` (bit for bit) of a float array ``(n, ...)``,
    ``n >= 1``, without NaN: ``(...)``."""
    a, b, t = _neighbours(_samples_last(values), q)
    return _lerp(a, b, t)


def nan_percentiles(values: np.ndarray, q: float) -> np.ndarray:
    """``np.nanpercentile(values, q, axis=0)`` (bit for bit) of a float array ``(n, k)``
    whose every column holds at least one number: ``(k,)``. One sort of all columns (NaN
    sorts last) instead of NumPy's column-by-column loop (about 1.5 ms a clip's metrics).

    >>> nan_percentiles(np.array([[1.0, np.nan], [3.0, 2.0], [2.0, 4.0]]), 50.0).tolist()
    [2.0, 3.0]
    """
    part = np.sort(values, axis=0)
    count = np.count_nonzero(~np.isnan(values), axis=0)
    pos = q / 100.0 * (count - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, count - 1)
    cols = np.arange(values.shape[1])
    a, b, t = part[lo, cols], part[hi, cols], pos - lo
    return np.where(t >= 0.5, b - (b - a) * (1.0 - t), a + (b - a) * t)


def _neighbours(values: np.ndarray, q: float):
    """The two order statistics around the ``q``-th percentile along the last axis, and
    the fraction between them."""
    n = values.shape[-1]
    pos = q / 100.0 * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    part = np.partition(values, (lo, hi) if hi > lo else lo, axis=-1)
    return part[..., lo], part[..., hi], pos - lo


def _lerp(a, b, t: float):
    """NumPy's interpolation between neighbours (from the nearer end)."""
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t


def medians(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=0)`` (bit for bit) of a float array ``(n, ...)``, ``n >= 1``,
    without NaN: ``(...)``."""
    n = len(values)
    k = n // 2
    values = _samples_last(values)
    if n % 2:
        return np.partition(values, k, axis=-1)[..., k]
    part = np.partition(values, (k - 1, k), axis=-1)
    return (part[..., k - 1] + part[..., k]) / 2.0


def _samples_last(values: np.ndarray) -> np.ndarray:
    """``values (n, ...)`` as a C-contiguous ``(..., n)`` copy: partitioning each sample
    along contiguous memory is several times faster than along a strided first axis."""
    return np.ascontiguousarray(np.moveaxis(values, 0, -1))
