"""Step 2 of foot placement: foot contacts from the animation, and pinning curves.

A foot is in contact when one of its sole points (heel = ankle, toe) is near the clip's own
floor and moving slowly, with hysteresis (stricter thresholds to enter than to stay) and a
minimum span. The pinning curve is 1 during contact, 0 in the air, with smooth ramps before a
contact (placing) and after it (lifting). Thresholds are in leg lengths and seconds, so they
hold for any unit and frame rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._checks import in_range, positive
from ._foot_kernels import hysteresis


@dataclass(frozen=True)
class ContactOptions:
    """Thresholds for contact detection (lengths in leg lengths, times in seconds).

    Attributes:
        height_on: a sole point this close to its floor level may start a contact (0.03).
        height_off: ... and must stay this close to keep it (0.05).
        speed_on: horizontal speed (leg lengths per second) to start a contact (0.45).
        speed_off: ... and to keep it (0.75).
        min_span: shorter contacts are dropped (0.08 s).
        max_gap: shorter gaps between contacts are filled (0.05 s).
        floor_percentile: each sole point's floor level is this percentile of its height (5).
        blend_in: seconds of ramp before a contact, while the foot is placed (0.12).
        blend_out: seconds of ramp after a contact, while the foot lifts (0.12).
    """

    height_on: float = 0.03
    height_off: float = 0.05
    speed_on: float = 0.45
    speed_off: float = 0.75
    min_span: float = 0.08
    max_gap: float = 0.05
    floor_percentile: float = 5.0
    blend_in: float = 0.12
    blend_out: float = 0.12

    def __post_init__(self):
        for name in ("height_on", "height_off", "speed_on", "speed_off"):
            positive(getattr(self, name), name)
        in_range(self.floor_percentile, "floor_percentile", 0.0, 50.0)
        for name in ("min_span", "max_gap", "blend_in", "blend_out"):
            in_range(getattr(self, name), name, 0.0, 10.0)


def horizontal_speed(positions, frame_time: float) -> np.ndarray:
    """Speed in the XZ plane. ``positions: (F, ..., 3)`` -> ``(F, ...)``; central differences."""
    p = np.asarray(positions, dtype=np.float64)[..., [0, 2]]
    if len(p) < 2:
        return np.zeros(p.shape[:-1])
    v = np.gradient(p, frame_time, axis=0)
    return np.linalg.norm(v, axis=-1)


def _hysteresis(enter, stay) -> np.ndarray:
    out = np.empty(len(enter), dtype=np.bool_)
    hysteresis(np.ascontiguousarray(enter), np.ascontiguousarray(stay), out)
    return out


def _spans(mask) -> list[tuple[int, int]]:
    """``[start, end)`` index spans where ``mask`` is True."""
    m = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    d = np.diff(m.astype(np.int8))
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist()))


def _clean(mask, min_frames: int, gap_frames: int) -> np.ndarray:
    out = np.asarray(mask, dtype=bool).copy()
    spans = _spans(out)
    for (_, e0), (s1, _) in zip(spans, spans[1:]):
        if s1 - e0 <= gap_frames:
            out[e0:s1] = True
    for s, e in _spans(out):
        if e - s < min_frames:
            out[s:e] = False
    return out


def detect_contacts(heights, speeds, leg_length: float, frame_time: float, options=None):
    """Per-foot contact flags from sole-point heights and speeds.

    Args:
        heights: ``(F, feet, points)`` height of each sole point over its own floor level.
        speeds: ``(F, feet, points)`` horizontal speed of each sole point.
        leg_length: the length unit.
        frame_time: seconds per frame.
        options: :class:`ContactOptions`.

    Returns:
        ``(F, feet)`` bool.
    """
    o = options or ContactOptions()
    h = np.asarray(heights, dtype=np.float64) / leg_length
    s = np.asarray(speeds, dtype=np.float64) / leg_length
    enter = ((h < o.height_on) & (s < o.speed_on)).any(axis=-1)
    stay = ((h < o.height_off) & (s < o.speed_off)).any(axis=-1)
    min_frames = int(round(o.min_span / frame_time))
    gap_frames = int(round(o.max_gap / frame_time))
    cols = [
        _clean(_hysteresis(enter[:, k], stay[:, k]), min_frames, gap_frames)
        for k in range(enter.shape[1])
    ]
    return np.stack(cols, axis=-1) if cols else np.zeros(h.shape[:2], dtype=bool)


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


def pinning_curve(contacts, frame_time: float, blend_in: float, blend_out: float):
    """Pinning weights from contact flags: 1 in contact, smooth ramps around, 0 in the air.

    Args:
        contacts: ``(F, feet)`` bool.
        frame_time: seconds per frame.
        blend_in: ramp length (s) before each contact (placing).
        blend_out: ramp length (s) after each contact (lifting).

    Returns:
        ``(F, feet)`` float64 in [0, 1].
    """
    c = np.asarray(contacts, dtype=bool)
    F = len(c)
    t = np.arange(F) * frame_time
    out = np.zeros(c.shape)
    for k in range(c.shape[1]):
        idx = np.flatnonzero(c[:, k])
        if len(idx) == 0:
            continue
        # time to the next contact frame and since the previous one
        nxt = np.searchsorted(idx, np.arange(F))
        prev = nxt - 1
        after = np.where(nxt < len(idx), t[idx[np.minimum(nxt, len(idx) - 1)]] - t, np.inf)
        since = np.where(prev >= 0, t - t[idx[np.maximum(prev, 0)]], np.inf)
        w_in = _smoothstep(1 - after / blend_in) if blend_in > 0 else (after == 0) * 1.0
        w_out = _smoothstep(1 - since / blend_out) if blend_out > 0 else (since == 0) * 1.0
        # 1 - (1 - a)(1 - b): like max(a, b) where one ramp is 0, but without its kink
        # where the placing and lifting ramps of a short swing cross
        out[:, k] = np.maximum(1 - (1 - w_in) * (1 - w_out), c[:, k])
    return out
