"""Offline filters over time (axis 0, ``(F, ...)``): zero-lag smoothing, running maximum,
upper envelope, and the change of angular velocity behind the knee-pop measure.

They see the whole signal, so unlike a spring (:mod:`~ikrig.signal.springs`) they can
smooth without lag and rise ahead of a need.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import ArrayLike

from .._jit.setup import NUMPY_ERRORS, njit, notify_compiling
from ..errors import InputError


def zero_lag_smooth(x: ArrayLike, radius: int) -> np.ndarray:
    """Offline smoothing of ``x (F, ...)`` along axis 0 without lag: a normalised Hann
    (cos^2) window of half-width ``radius`` frames, the ends padded with the end values.

    Being symmetric, it leaves straight stretches as they are and only rounds corners off,
    with an error of second order in the curvature (a causal spring lags by an amount of
    first order in the velocity). ``radius < 1`` returns a copy.
    """
    x = np.array(x, dtype=np.float64, order="C")
    r = check_radius(radius)
    if r < 1 or len(x) == 0:
        return x
    out = np.empty(x.shape)
    notify_compiling()
    smooth_rows(_rows(x), hann_window(r), _rows(out))
    return out


MAX_RADIUS = 100_000
"""The widest smoothing window, in frames either side (a frame time near 0 asks for
windows of billions of frames)."""


def check_radius(radius: float) -> int:
    """``radius`` as whole frames, checked to be finite and at most :data:`MAX_RADIUS`.

    Raises:
        InputError: a NaN, infinite or too large radius (one line: the frame time is
            likely too small).
    """
    r = float(radius)
    if not r <= MAX_RADIUS:
        raise InputError(
            f"smoothing window of {r:.3g} frames either side (at most {MAX_RADIUS}): the"
            " clip's frame time is too small"
        )
    return int(r)


def _rows(x: np.ndarray) -> np.ndarray:
    """``x (F, ...)``, C-contiguous, as ``(F, C)`` (a view, so a kernel's writes land in
    ``x``)."""
    return x.reshape(len(x), int(np.prod(x.shape[1:])))


@functools.lru_cache(maxsize=64)
def hann_window(radius: int) -> np.ndarray:
    """The ``2 radius + 1`` weights of :func:`zero_lag_smooth` (read-only), summing to 1.

    Raises:
        InputError: ``radius`` beyond :data:`MAX_RADIUS` (see :func:`check_radius`).
    """
    radius = check_radius(radius)
    w = np.cos(0.5 * np.pi * np.arange(-radius, radius + 1) / (radius + 1)) ** 2
    w /= w.sum()
    w.flags.writeable = False
    return w


@njit(cache=True)
def smooth_rows(x, w, out):
    """:func:`zero_lag_smooth` of ``x (F, C)`` with the weights ``w`` (:func:`hann_window`)
    into ``out (F, C)``: ``out[f] = sum_k w[k] x[f - r + k]``, the index clamped to the
    ends, the terms added in order of ``k``."""
    F, r = x.shape[0], (len(w) - 1) // 2
    for f in range(F):
        for c in range(x.shape[1]):
            acc = w[0] * x[min(max(f - r, 0), F - 1), c]
            for k in range(1, len(w)):
                acc += w[k] * x[min(max(f - r + k, 0), F - 1), c]
            out[f, c] = acc


def running_max(x: ArrayLike, radius: int) -> np.ndarray:
    """Maximum of ``x (F, ...)`` over ``+-radius`` frames along axis 0 (ends padded); NaN
    where the window holds one."""
    x = np.asarray(x)
    if radius < 1 or len(x) == 0:
        return x.copy()
    x = np.ascontiguousarray(x)
    out = np.empty_like(x)
    notify_compiling()
    max_rows(_rows(x), int(radius), _rows(out))
    return out


@njit(cache=True)
def max_rows(x, r, out):
    """:func:`running_max` of ``x (F, C)`` over ``+-r`` frames into ``out (F, C)``."""
    F = x.shape[0]
    for f in range(F):
        for c in range(x.shape[1]):
            m = x[max(f - r, 0), c]
            for k in range(f - r + 1, f + r + 1):
                v = x[min(max(k, 0), F - 1), c]
                if v > m or v != v:
                    m = v
            out[f, c] = m


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
    a = np.ascontiguousarray(angles, dtype=np.float64)
    out = np.empty_like(a)
    if len(a):
        notify_compiling()
        jump_rows(_rows(a), int(frames), float(frame_time), _rows(out))
    return out


@njit(cache=True, **NUMPY_ERRORS)
def jump_rows(a, W, frame_time, out):
    """:func:`angular_jump` of ``a (F, C)`` over ``W`` frames into ``out (F, C)`` (NumPy's
    division: a zero frame time gives inf or NaN, not an exception)."""
    F, scale = a.shape[0], W * frame_time
    for f in range(F):
        for c in range(a.shape[1]):
            inner = W <= f < F - W
            out[f, c] = (a[f + W, c] - 2.0 * a[f, c] + a[f - W, c]) / scale if inner else 0.0


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
