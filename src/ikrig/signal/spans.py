"""Runs of True in boolean time series (``(F,)``, time along axis 0): finding them
(:func:`spans` in Python, :func:`spans_of` in kernels), switching with hysteresis, and
cleaning them (filling short gaps, dropping short runs); and the weight of a span of frames
eased in and out (:func:`span_weights`)."""

from __future__ import annotations

import numpy as np

from .._jit.setup import njit


@njit(cache=True)
def spans_of(mask):
    """``(starts, ends)`` lists of the runs of True in ``mask (F,)`` (``[start, end)``)."""
    F = mask.shape[0]
    starts = []
    ends = []
    f = 0
    while f < F:
        if mask[f]:
            s = f
            while f < F and mask[f]:
                f += 1
            starts.append(s)
            ends.append(f)
        else:
            f += 1
    return starts, ends


def spans(mask: np.ndarray) -> list[tuple[int, int]]:
    """``[start, end)`` index spans where ``mask (F,)`` is True."""
    starts, ends = spans_of(np.ascontiguousarray(mask, dtype=np.bool_))
    return list(zip(starts, ends))


@njit(cache=True)
def _hysteresis_run(enter, stay, out):
    on = False
    for f in range(enter.shape[0]):
        on = stay[f] if on else enter[f]
        out[f] = on


def hysteresis(enter: np.ndarray, stay: np.ndarray) -> np.ndarray:
    """``(F,)`` bool: on from a frame where ``enter`` until the first frame without ``stay``."""
    out = np.empty(len(enter), dtype=np.bool_)
    _hysteresis_run(
        np.ascontiguousarray(enter, dtype=np.bool_), np.ascontiguousarray(stay, dtype=np.bool_), out
    )
    return out


def clean_spans(mask: np.ndarray, min_frames: int, gap_frames: int) -> np.ndarray:
    """``mask (F,)`` with gaps of at most ``gap_frames`` between runs filled, then runs
    shorter than ``min_frames`` dropped (a copy)."""
    out = np.asarray(mask, dtype=bool).copy()
    runs = spans(out)
    for (_, e0), (s1, _) in zip(runs, runs[1:]):
        if s1 - e0 <= gap_frames:
            out[e0:s1] = True
    for s, e in spans(out):
        if e - s < min_frames:
            out[s:e] = False
    return out


def span_weights(frames: int, start: int, stop: int, blend_frames: float) -> np.ndarray:
    """``(frames,)`` weights: 1 on ``[start, stop)``, a smoothstep from 0 to 1 over the
    ``blend_frames`` frames before it and back to 0 over those after it, 0 elsewhere
    (exactly, so those frames stay as they are).

    Example:
        >>> span_weights(7, 3, 4, 2.0).round(3).tolist()
        [0.0, 0.0, 0.5, 1.0, 0.5, 0.0, 0.0]
    """
    i = np.arange(frames, dtype=np.float64)
    away = np.maximum(start - i, i - (stop - 1)).clip(min=0.0)  # frames from the span
    if blend_frames <= 0:
        return (away == 0).astype(np.float64)
    x = np.clip(1.0 - away / blend_frames, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)
