"""Order statistics of the small 1-D samples the clip metrics pool."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["percentile"]


def percentile(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)`` (the linear method, bit for bit) of a non-empty 1-D
    array, without NumPy's general machinery: a clip's metrics take thirty of them.

    >>> percentile(np.array([3.0, 1.0, 2.0, 4.0]), 50.0)
    2.5
    """
    pos = q / 100.0 * (values.size - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, values.size - 1)
    part = np.partition(values, (lo, hi)) if hi > lo else np.partition(values, lo)
    a, b, t = float(part[lo]), float(part[hi]), pos - lo
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t
