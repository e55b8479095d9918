"""Offline filters over time (axis 0, ``(F, ...)``): zero-lag smoothing, running maximum,
upper envelope, and the change of angular velocity behind the knee-pop measure.

They see the whole signal, so unlike a spring (:mod:`~ikrig.signal.springs`) they can
smooth without lag and rise ahead of a need.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

TAP_LOOP_MAX = 12
"""Up to this radius :func:`zero_lag_smooth` adds shifted copies; above, a windowed view."""


def zero_lag_smooth(x: ArrayLike, radius: int) -> np.ndarray:
    """Offline smoothing of ``x (F, ...)`` along axis 0 without lag: a normalised Hann
    (cos^2) window of half-width ``radius`` frames, the ends padded with the end values.

    Being symmetric, it leaves straight stretches as they are and only rounds corners off,
    with an error of second order in the curvature (a causal spring lags by an amount of
    first order in the velocity). ``radius < 1`` returns a copy.
    """
    x = np.array(x, dtype=np.float64)
    r = int(radius)
    if r < 1 or len(x) == 0:
        return x
    w = np.cos(0.5 * np.pi * np.arange(-r, r + 1) / (r + 1)) ** 2
    w /= w.sum()
    pad = _edge_pad(x, r)
    if r > TAP_LOOP_MAX:
        return np.lib.stride_tricks.sliding_window_view(pad, 2 * r + 1, axis=0) @ w
    # one pass per tap over the whole signal: 2-3x faster than a windowed view for the
    # radii a clip's filters use (a few to a dozen frames)
    out = w[0] * pad[: len(x)]
    for k in range(1, 2 * r + 1):
        out += w[k] * pad[k : k + len(x)]
    return out


def running_max(x: ArrayLike, radius: int) -> np.ndarray:
    """Maximum of ``x (F, ...)`` over ``+-radius`` frames along axis 0 (ends padded)."""
    x = np.asarray(x)
    if radius < 1 or len(x) == 0:
        return x.copy()
    pad = _edge_pad(x, radius)
    out = pad[: len(x)].copy()
    for k in range(1, 2 * radius + 1):
        np.maximum(out, pad[k : k + len(x)], out=out)
    return out


def _edge_pad(x: np.ndarray, r: int) -> np.ndarray:
    """``x (F, ...)`` with its first and last rows repeated ``r`` times before and after."""
    return np.concatenate([np.repeat(x[:1], r, axis=0), x, np.repeat(x[-1:], r, axis=0)])


def upper_envelope(x: ArrayLike, radius: int) -> np.ndarray:
    """A smooth curve ``>= x (F, ...)`` along axis 0, offline: the running maximum over
    ``radius`` frames each side, then :func:`zero_lag_smooth` over the same half-width.
    Each frame's value is a weighted mean of maxima of windows that all contain that frame,
    so it is never below it; it follows ``x`` where ``x`` is flat, rises ``radius`` frames
    ahead of a rise and turns a one-frame spike into a smooth bump. ``radius < 1`` returns
    a copy."""
    x = np.array(x, dtype=np.float64)
    r = int(radius)
    if r < 1 or len(x) == 0:
        return x
    top = running_max(x, r)
    return zero_lag_smooth(top, r)


def angular_jump(angles: ArrayLike, frame_time: float, frames: int) -> np.ndarray:
    """Change of angular velocity (rad/s) over ``frames`` frames, ``(F, ...)``:
    ``(a[t+W] - 2 a[t] + a[t-W]) / (W frame_time)``, zero within ``W`` frames of the ends."""
    a = np.asarray(angles, dtype=np.float64)
    W = frames
    out = np.zeros_like(a)
    if len(a) > 2 * W:
        out[W:-W] = (a[2 * W :] - 2.0 * a[W:-W] + a[: -2 * W]) / (W * frame_time)
    return out


def jerk_excess(
    angles_result: ArrayLike, angles_source: ArrayLike, frame_time: float, window: float
) -> np.ndarray:
    """How much each frame's change of angular velocity over ``window`` seconds (rad/s)
    exceeds the largest the source has within ``window``, ``(F, ...)``: the knee-pop
    measure of :func:`ikrig.metrics.knee_pops`."""
    W = max(1, int(round(window / frame_time)))
    jump_r = np.abs(angular_jump(angles_result, frame_time, W))
    jump_s = np.abs(angular_jump(angles_source, frame_time, W))
    return jump_r - running_max(jump_s, W) if len(jump_r) else jump_r
