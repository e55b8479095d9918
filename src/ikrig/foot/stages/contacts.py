"""Step 2: foot contacts from the animation, and pinning curves.

A foot is in contact when one of its sole points (heel, toe) is near the clip's own floor
and moving slowly, with hysteresis: :func:`contact_rule`'s stricter thresholds to enter than
to stay. Offline and live use that one rule. Offline, seeing the whole clip, speeds are
central differences, contacts shorter than ``min_span`` are dropped and gaps shorter than
``max_gap`` filled, and the pinning curve ramps up *before* a contact starts
(:func:`pinning_curve`); live, speeds are backward differences and the pin ramps linearly
once a contact has started. Thresholds are in leg lengths and seconds, so they hold for any
unit and frame rate.

Offline, a foot that *stands* is in contact too (:func:`standing_feet`): one of its sole
points stays put (within ``stand_radius``) for ``stand_span`` and within ``stand_height``
of its floor level. A stand recorded a little above the walk's floor (the floor levels are
a low percentile over the whole clip, so the walk sets them), or with jitter in its speeds,
otherwise has no contact at all, and its feet are left out of the footprints and of what
the body stands on: on stairs they float over a tread or hang over an edge.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..._jit.setup import NUMPY_ERRORS, njit
from ...character.legs import Legs
from ...character.sole import FootSole
from ...pose import Motion
from ...signal.filters import running_max
from ...signal.spans import clean_spans, hysteresis
from ...signal.springs import lane
from ..context import FootContext, check_clip
from ..options import ContactOptions
from ..state import DetectState

RULE_FIELDS = ("height_on", "height_off", "speed_on", "speed_off", "blend_in", "blend_out")
CONTACT_RULE = np.dtype([(name, np.float64) for name in RULE_FIELDS])
"""The thresholds of :func:`contact_rule` and the live pin ramps (leg lengths, leg lengths
per second, seconds); see :class:`~ikrig.foot.options.ContactOptions`."""


@functools.lru_cache(maxsize=32)
def contact_rule_of(options: ContactOptions) -> np.ndarray:
    """The ``(1,)`` :data:`CONTACT_RULE` record of ``options`` (cached, read-only)."""
    rule = np.array([tuple(float(getattr(options, n)) for n in RULE_FIELDS)], CONTACT_RULE)
    rule.flags.writeable = False
    return rule


@njit(cache=True)
def contact_rule(height, speed, rule):
    """The contact rule on sole points, scalars or arrays alike: ``(enter, stay)``, a point
    lower than ``height_on`` over its floor level and slower than ``speed_on`` may start a
    contact, one within ``height_off`` and ``speed_off`` keeps it (``height`` in leg
    lengths, ``speed`` in leg lengths per second, ``rule``: a :data:`CONTACT_RULE` record)."""
    enter = (height < rule.height_on) & (speed < rule.speed_on)
    stay = (height < rule.height_off) & (speed < rule.speed_off)
    return enter, stay


def horizontal_speed(positions: np.ndarray, frame_time: float) -> np.ndarray:
    """Speed in the XZ plane. ``positions: (F, ..., 3)`` -> ``(F, ...)``; central
    differences (one-sided on the first and last frame, as ``np.gradient``)."""
    p = np.ascontiguousarray(positions, dtype=np.float64)
    out = np.zeros(p.shape[:-1])
    if len(p) >= 2 and out.size:
        _speed_rows(p.reshape(len(p), -1, 3), float(frame_time), out.reshape(len(p), -1))
    return out


@njit(cache=True, **NUMPY_ERRORS)
def _speed_rows(p, dt, out):
    """:func:`horizontal_speed` of ``p (F, C, 3)``, ``F >= 2``, into ``out (F, C)``."""
    F = p.shape[0]
    for f in range(F):
        a, b = max(f - 1, 0), min(f + 1, F - 1)
        span = dt if f == 0 or f == F - 1 else 2.0 * dt
        for c in range(p.shape[1]):
            vx = (p[b, c, 0] - p[a, c, 0]) / span
            vz = (p[b, c, 2] - p[a, c, 2]) / span
            out[f, c] = np.sqrt(vx * vx + vz * vz)


def detect_contacts(
    heights: np.ndarray,
    speeds: np.ndarray,
    leg_length: float,
    frame_time: float,
    options: ContactOptions | None = None,
    standing: np.ndarray | None = None,
) -> np.ndarray:
    """Per-foot contact flags of a whole clip from sole-point heights and speeds.

    Args:
        heights: ``(F, feet, points)`` height of each sole point over its own floor level.
        speeds: ``(F, feet, points)`` horizontal speed of each sole point.
        leg_length: the length unit.
        frame_time: seconds per frame.
        options: :class:`~ikrig.foot.options.ContactOptions`.
        standing: ``(F, feet)`` bool, frames where a foot stands (:func:`standing_feet`):
            in contact whatever the heights and speeds say; None: none.

    Returns:
        ``(F, feet)`` bool.
    """
    o = options or ContactOptions()
    h = np.ascontiguousarray(heights, dtype=np.float64) / leg_length
    s = np.ascontiguousarray(speeds, dtype=np.float64) / leg_length
    frames, feet = h.shape[:2]
    enter = np.empty((frames, feet), dtype=bool)
    stay = np.empty((frames, feet), dtype=bool)
    _rule_rows(h, s, contact_rule_of(o), enter, stay)
    if standing is not None:
        enter |= standing
        stay |= standing
    min_frames = int(round(o.min_span / frame_time))
    gap_frames = int(round(o.max_gap / frame_time))
    cols = [
        clean_spans(hysteresis(enter[:, k], stay[:, k]), min_frames, gap_frames)
        for k in range(feet)
    ]
    return np.stack(cols, axis=-1) if cols else np.zeros(h.shape[:2], dtype=bool)


def standing_feet(
    points: np.ndarray,
    heights: np.ndarray,
    leg_length: float,
    frame_time: float,
    options: ContactOptions | None = None,
) -> np.ndarray:
    """``(F, feet)`` bool: the frames where a foot stands (module docstring), offline.

    A sole point stands over a window of ``stand_span`` (centred on a frame) when it moves
    by at most ``stand_radius`` along each world axis and stays within ``stand_height`` of
    its floor level; every frame of such a window inside the clip stands, and a foot
    stands where one of its points does.

    Args:
        points: ``(F, feet, points, 3)`` world sole points.
        heights: ``(F, feet, points)`` height of each over its own floor level.
        leg_length: the length unit; frame_time: seconds per frame.
        options: :class:`~ikrig.foot.options.ContactOptions`.
    """
    o = options or ContactOptions()
    p = np.asarray(points, dtype=np.float64)
    frames = p.shape[0]
    radius = int(round(0.5 * o.stand_span / frame_time)) if frame_time > 0 else 0
    if radius < 1 or frames < 2 * radius + 1:
        return np.zeros(p.shape[:2], dtype=bool)
    flat = p.reshape(frames, -1)
    spread = (running_max(flat, radius) + running_max(-flat, radius)).reshape(p.shape)
    high = running_max(np.asarray(heights, dtype=np.float64).reshape(frames, -1), radius)
    still = (spread.max(axis=-1) <= o.stand_radius * leg_length) & (
        high.reshape(p.shape[:-1]) <= o.stand_height * leg_length
    )
    centres = still.any(axis=-1).astype(np.float64)  # (F, feet)
    centres[:radius] = centres[-radius:] = 0.0  # windows that reach past the clip's ends
    return running_max(centres, radius) > 0


@njit(cache=True)
def _rule_rows(h, s, rule, enter, stay):
    """:func:`contact_rule` on each point of ``h, s (F, feet, points)``; a foot enters
    (``enter (F, feet)``) or stays (``stay``) where any of its points does."""
    r = rule[0]
    for f in range(h.shape[0]):
        for k in range(h.shape[1]):
            e = keep = False
            for p in range(h.shape[2]):
                on, held = contact_rule(h[f, k, p], s[f, k, p], r)
                e = e or on
                keep = keep or held
            enter[f, k], stay[f, k] = e, keep


def pinning_curve(
    contacts: np.ndarray, frame_time: float, blend_in: float, blend_out: float
) -> np.ndarray:
    """Pinning weights from contact flags: 1 in contact, smooth ramps around, 0 in the air.

    Args:
        contacts: ``(F, feet)`` bool.
        frame_time: seconds per frame.
        blend_in: ramp length (s) before each contact (placing).
        blend_out: ramp length (s) after each contact (lifting).

    Returns:
        ``(F, feet)`` float64 in [0, 1].
    """
    c = np.ascontiguousarray(contacts, dtype=bool)
    out = np.zeros(c.shape)
    if c.size:
        _pins_kernel(c, float(frame_time), float(blend_in), float(blend_out), out)
    return out


@njit(cache=True)
def _pins_kernel(c, frame_time, blend_in, blend_out, out):
    """:func:`pinning_curve` of ``c (F, feet)`` into ``out`` (zeros on entry)."""
    F = c.shape[0]
    for k in range(c.shape[1]):
        # the next contact frame at or after each frame, then the last one before it
        nxt = np.full(F, -1)
        n = -1
        for f in range(F - 1, -1, -1):
            if c[f, k]:
                n = f
            nxt[f] = n
        if n < 0:
            continue  # no contact: no pin
        prev = -1
        for f in range(F):
            t = f * frame_time
            after = nxt[f] * frame_time - t if nxt[f] >= 0 else math.inf
            since = t - prev * frame_time if prev >= 0 else math.inf
            w_in = _ramp(after, blend_in)
            w_out = _ramp(since, blend_out)
            # 1 - (1 - a)(1 - b): like max(a, b) where one ramp is 0, but without its kink
            # where the placing and lifting ramps of a short swing cross
            out[f, k] = max(1 - (1 - w_in) * (1 - w_out), 1.0 if c[f, k] else 0.0)
            if c[f, k]:
                prev = f


@njit(cache=True)
def _ramp(gap, blend):
    """The pin of a frame ``gap`` seconds from a contact, on a ramp of ``blend`` seconds:
    :func:`~ikrig.signal.easing.smoothstep` of ``1 - gap / blend`` (1 at the contact only
    when ``blend`` is 0)."""
    if not blend > 0:
        return 1.0 if gap == 0 else 0.0
    x = min(max(1 - gap / blend, 0.0), 1.0)
    return x * x * (3 - 2 * x)


def detect_foot_contacts(
    motion: Motion,
    legs: Legs,
    sole: FootSole,
    options: ContactOptions,
    fk: tuple[np.ndarray, np.ndarray] | None = None,
    points: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Step 2, offline: contact flags ``(F, feet)`` and pinning curve ``(F, feet)`` of a clip
    (``fk``: its world rotations and positions, ``points``: its sole points ``(F, feet, 2,
    3)`` world, :meth:`~ikrig.character.sole.FootSole.points_world`, if already computed)."""
    check_clip(motion)
    dt = float(motion.frame_time or 0.0)
    if points is None:
        points = sole.points_world(*(motion.fk() if fk is None else fk))
    heights = points[..., 1] - sole.floor - sole.heights
    speeds = horizontal_speed(points, dt)
    standing = standing_feet(points, heights, legs.leg_length, dt, options)
    contacts = detect_contacts(heights, speeds, legs.leg_length, dt, options, standing)
    pins = pinning_curve(contacts, dt, options.blend_in, options.blend_out)
    return contacts, pins


@njit(cache=True)
def detect_run(points, heights, floor, unit, dt, rule, state, pins, flags):
    """Live contact detection over ``F`` frames of sole ``points (F, K, 2, 3)``: the
    :func:`contact_rule` with backward-difference speeds (0 on the first frame), the pin
    ramping linearly toward 1 in contact and 0 out of it over ``blend_in``/``blend_out``.

    Args:
        heights: ``(K, 2)`` the sole points' planted heights; floor: the clip's floor;
            unit: the leg length; dt: seconds per frame.
        rule: ``(1,)`` :data:`CONTACT_RULE`; state: ``(lanes, K)`` :data:`DETECT`, in
            place (frame ``f`` uses lane ``f % lanes``).
        pins, flags: ``(F, K)`` out.
    """
    r = rule[0]
    rate_in = dt / r.blend_in if r.blend_in > 0 else 1.0
    rate_out = dt / r.blend_out if r.blend_out > 0 else 1.0
    for f in range(points.shape[0]):
        states = lane(state, f)
        for k in range(points.shape[1]):
            s = states[k]
            last = s.last
            enter = False
            stay = False
            for p in range(2):
                h = (points[f, k, p, 1] - floor - heights[k, p]) / unit
                speed = 0.0
                if last[p, 0] == last[p, 0]:
                    dx = points[f, k, p, 0] - last[p, 0]
                    dz = points[f, k, p, 2] - last[p, 2]
                    speed = math.sqrt(dx * dx + dz * dz) / dt / unit
                on, keep = contact_rule(h, speed, r)
                enter = enter or on
                stay = stay or keep
                for c in range(3):
                    last[p, c] = points[f, k, p, c]
            s.contact = stay if s.contact else enter
            if s.contact:
                s.pin = min(s.pin + rate_in, 1.0)
            else:
                s.pin = max(s.pin - rate_out, 0.0)
            pins[f, k] = s.pin
            flags[f, k] = s.contact


def detect_live(
    ctx: FootContext, points: np.ndarray, dt: float, state: DetectState
) -> tuple[np.ndarray, np.ndarray]:
    """Step 2, live: pins and contact flags ``(F, feet)`` of sole ``points (F, feet, 2, 3)``
    (:func:`detect_run`), carrying ``state`` (:data:`DetectState`)."""
    sole = ctx.sole
    pins = np.empty(points.shape[:2])
    flags = np.empty(points.shape[:2], dtype=np.bool_)
    rule = ctx.memo("contact rule", lambda: contact_rule_of(ctx.options.contacts))
    floor, unit = float(sole.floor), ctx.unit
    detect_run(points, sole.heights, floor, unit, float(dt), rule, state, pins, flags)
    return pins, flags
