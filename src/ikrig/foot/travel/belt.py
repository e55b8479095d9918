"""The belt under a clip that walks in place, and what it gives: the clip's contacts on
the spot (:func:`treadmill_contacts`), the clip made to walk (:func:`walk_the_belt`), and a
short cycle repeated (:func:`repeat_cycle`).

Most game walk cycles have no root motion: the character walks on the spot, its stance foot
sliding back under it as on a treadmill. The belt (:func:`belt_velocity`) is the velocity at
which the clip's planted sole points slide. Carried against it (its root moved by minus the
belt's integral), the clip walks, and its stance feet stand still in the world, as in a
clip recorded walking: :func:`treadmill_contacts` detects contacts there (the usual rule,
relative to the ground the clip walks on) and keeps the clip on the spot,
:func:`walk_the_belt` returns the walking clip itself.

An animation's stance feet need not slide at one speed through a stance (the shared game
cycles speed theirs up by a factor of two to six from heel strike to toe-off); the belt is
one speed per second of clip, so a walked cycle's stance feet stand still on average and
foot lock holds them for the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...character.legs import Legs, pelvis_joint
from ...character.sole import FootSole, estimate_sole
from ...errors import InputError
from ...pose import Motion
from ...signal.filters import zero_lag_smooth
from ..context import check_clip
from ..options import ContactOptions
from ..stages.contacts import detect_foot_contacts
from .roots import move_roots

__all__ = [
    "BELT_WINDOW", "SEAM", "belt_velocity", "repeat_cycle", "treadmill_contacts",
    "walk_the_belt",
]  # fmt: skip

BELT_WINDOW = 0.5
"""Seconds: half-width of the running median that reads the belt off the planted points."""
SEAM = 1e-3
"""Leg lengths: a cycle whose last pose is this close to its first (every joint) is closed:
its last frame repeats the first."""


def repeat_cycle(motion: Motion, legs: Legs, cycles: int) -> Motion:
    """A cycle ``(F,)`` played ``cycles`` times in a row. A closed cycle (its last pose the
    first's, to :data:`SEAM`) shares that frame between repeats (``(F - 1) cycles + 1``
    frames), an open one does not (``F cycles``); each repeat's roots are moved on
    horizontally by the cycle's travel (last minus first, plus one frame's step for an open
    cycle: zero for a cycle in place), so that a clip with root motion goes on. Turns are
    not carried on: a cycle that turns repeats its turn from the same heading.

    Raises:
        InputError: ``cycles`` not a whole number >= 1; a clip without frame time or with
            fewer than two frames to repeat.
    """
    if isinstance(cycles, bool) or not isinstance(cycles, (int, np.integer)) or cycles < 1:
        raise InputError(f"cycles: expected a whole number >= 1, got {cycles!r}")
    check_clip(motion)
    return _repeat_cycle(motion, legs, cycles)


def _repeat_cycle(motion: Motion, legs: Legs, cycles: int) -> Motion:
    """:func:`repeat_cycle` on a checked clip and count."""
    if cycles == 1:
        return motion
    F = motion.num_frames
    if F < 2:
        raise InputError(f"cycles: a clip of {F} frame cannot be repeated as a cycle")
    p = motion.positions_world()
    closed = float(np.max(np.abs(p[-1] - p[0]))) <= SEAM * legs.leg_length
    n = F - 1 if closed else F
    roots = np.flatnonzero(motion.skeleton.parents < 0)
    pl = np.asarray(motion.positions_local, dtype=np.float64)
    travel = pl[-1, roots] - pl[0, roots] + (0.0 if closed else pl[-1, roots] - pl[-2, roots])
    travel[:, 1] = 0.0
    idx = np.concatenate([np.tile(np.arange(n), cycles), [F - 1] if closed else []]).astype(int)
    k = np.concatenate([np.repeat(np.arange(cycles), n), [cycles - 1] if closed else []])
    out = pl[idx].copy()
    out[:, roots] += k[:, None, None] * travel[None]
    return motion.replace(
        rotations_local=motion.rotations_local[idx],
        positions_local=out.astype(motion.dtype, copy=False),
    )


def _running_median(x: np.ndarray, radius: int) -> np.ndarray:
    """NaN-ignoring median of ``x (F, 2)`` over ``+-radius`` frames (ends padded with NaN),
    taken every ``radius // 8`` frames and interpolated between (the belt is smoothed over
    ``radius`` afterwards); NaN where a window has no value. In blocks: memory stays flat."""
    F = len(x)
    pad = np.full((F + 2 * radius, x.shape[1]), np.nan)
    pad[radius : radius + F] = x
    windows = np.lib.stride_tricks.sliding_window_view(pad, 2 * radius + 1, 0)  # a view
    centers = np.unique(np.append(np.arange(0, F, max(1, radius // 8)), F - 1))
    medians = np.full((len(centers), x.shape[1]), np.nan)
    for a in range(0, len(centers), 1024):
        part = windows[centers[a : a + 1024]]
        rows = np.flatnonzero((~np.isnan(part)).any(axis=-1).all(axis=-1))
        medians[a + rows] = np.nanmedian(part[rows], axis=-1)
    ok = ~np.isnan(medians[:, 0])
    if not ok.any():
        return np.full(x.shape, np.nan)
    frames = np.arange(F)
    out = np.stack([np.interp(frames, centers[ok], medians[ok, k]) for k in (0, 1)], axis=-1)
    return out


def _planted_velocity(motion: Motion, legs: Legs, sole: FootSole, height: float, fk) -> np.ndarray:
    """``(F, 2)`` the velocity of each frame's lowest sole point (over its planted height),
    NaN where it is higher than ``height`` leg lengths; ``F >= 2``."""
    pts = sole.points_world(*(motion.fk() if fk is None else fk))  # (F, feet, 2, 3)
    F = len(pts)
    heights = (pts[..., 1] - sole.floor - sole.heights).reshape(F, -1)
    velocity = np.gradient(pts[..., [0, 2]], float(motion.frame_time or 0.0), axis=0)
    low = np.argmin(heights, axis=1)
    v = velocity.reshape(F, -1, 2)[np.arange(F), low]
    v[heights[np.arange(F), low] >= height * legs.leg_length] = np.nan
    return v


def _belt(v: np.ndarray, radius: int) -> np.ndarray:
    """The running median of ``v (F, 2)`` (NaN: no value) over ``+-radius`` frames, along
    and across its mean direction (so that turning the clip turns the belt), interpolated where a
    window has no value and smoothed over as long (zero-lag Hann); zeros without values."""
    known = np.flatnonzero(~np.isnan(v[:, 0]))
    if len(known) == 0:
        return np.zeros(v.shape)
    mean = np.mean(v[known], axis=0)
    n = float(np.hypot(*mean))
    u = mean / n if n > 0 else np.array([1.0, 0.0])
    axes = np.array([u, [-u[1], u[0]]])
    if len(v) <= 2 * radius + 1:  # one window holds the clip: one belt, not a ramp
        return np.broadcast_to(np.median(v[known] @ axes.T, axis=0) @ axes, v.shape).copy()
    return zero_lag_smooth(_running_median(v @ axes.T, radius) @ axes, radius)


def belt_velocity(
    motion: Motion,
    legs: Legs,
    sole: FootSole,
    options: ContactOptions | None = None,
    fk=None,
    window: float = BELT_WINDOW,
) -> np.ndarray:
    """The belt under a clip: ``(F, 2)`` the horizontal (x, z) velocity at which its
    planted sole points move, per second (zero for a clip whose feet stand still; minus the
    walking velocity for one that walks in place).

    Each frame's lowest sole point (over its planted height), when lower than
    ``options.height_off`` leg lengths, gives a velocity (central differences); the belt is
    their running median over ``window`` seconds each side, smoothed over as long
    (zero-lag Hann), held over stretches without a low point (a run's flights); in a clip no
    longer than the window, their median over the clip (a constant: no ramp from windows
    cut short at the ends).
    ``fk``: the clip's world rotations and positions, if already computed.
    """
    check_clip(motion)
    return _belt_velocity(motion, legs, sole, options, fk, window)


def _belt_velocity(
    motion: Motion,
    legs: Legs,
    sole: FootSole,
    options: ContactOptions | None,
    fk: Any,
    window: float = BELT_WINDOW,
) -> np.ndarray:
    """:func:`belt_velocity` on a checked clip."""
    o = options or ContactOptions()
    if motion.num_frames < 2:
        return np.zeros((motion.num_frames, 2))
    v = _planted_velocity(motion, legs, sole, o.height_off, fk)
    return _belt(v, max(1, round(window / float(motion.frame_time or 0.0))))


def _median_speed(v: np.ndarray) -> float:
    return float(np.median(np.hypot(v[:, 0], v[:, 1])))


def treadmill_contacts(
    motion: Motion, legs: Legs, options: ContactOptions | None = None, fk=None
) -> tuple[np.ndarray, np.ndarray] | None:
    """Contacts of a clip that walks in place, or None for one that does not.

    A clip walks in place when its body stays while its planted feet slide too fast for a
    contact to start: the median speed of its pelvis (its travel over twice
    :data:`BELT_WINDOW`, per second) is at most ``options.speed_on`` leg lengths per
    second, and those of its planted points and of its belt (:func:`belt_velocity`) are
    above it. Its contacts are then those of
    :func:`~ikrig.foot.stages.contacts.detect_foot_contacts` on the clip moved against the
    belt (the root carried by minus the belt's integral), where the stance feet stand still.

    Returns:
        ``(contacts (F, feet) bool, pins (F, feet))`` as
        :func:`~ikrig.foot.stages.contacts.detect_foot_contacts` gives them, or None.
    """
    check_clip(motion)
    o = options or ContactOptions()
    if motion.num_frames < 2:
        return None
    fk = motion.fk() if fk is None else fk
    dt = float(motion.frame_time or 0.0)
    radius = max(1, round(BELT_WINDOW / dt))
    limit = o.speed_on * legs.leg_length
    pelvis = fk[1][:, pelvis_joint(motion.skeleton, legs)][:, [0, 2]].astype(np.float64)
    span = min(2 * radius, len(pelvis) - 1)  # its travel over a second, or the whole clip
    if _median_speed((pelvis[span:] - pelvis[:-span]) / (span * dt)) > limit:
        return None  # the body travels (the cheap test first: most clips end here)
    sole = estimate_sole(motion, legs, o.floor_percentile, fk=fk)
    v = _planted_velocity(motion, legs, sole, o.height_off, fk)
    known = v[~np.isnan(v[:, 0])]
    if len(known) == 0 or _median_speed(known) <= limit:
        return None  # the planted feet stand still in most frames
    belt = _belt(v, radius)
    if _median_speed(belt) <= limit:
        return None
    return detect_foot_contacts(_carried(motion, belt, dt), legs, sole, o)


def _carried(motion: Motion, belt: np.ndarray, dt: float) -> Motion:
    """``motion`` with its roots carried by minus the integral of ``belt (F, 2)`` (per
    second; trapezoids, 0 at frame 0)."""
    steps = np.cumsum(0.5 * (belt[1:] + belt[:-1]) * dt, axis=0)
    return move_roots(motion, 0.0, np.zeros(2), -np.concatenate([np.zeros((1, 2)), steps]))


def walk_the_belt(
    motion: Motion, legs: Legs, options: ContactOptions | None = None, fk=None
) -> Motion:
    """A clip that walks in place made to walk: its roots carried forward by the integral
    of minus its belt (:func:`belt_velocity`), from where they are at frame 0, so that its
    stance feet stand still in the world, as in a clip recorded walking. Its contacts,
    foot lock and footprints are then those of any walk. A clip whose planted feet stand
    still has a belt of zero and is returned moved by nothing (to the belt's noise).

    Raises:
        InputError: a clip without frame time.
    """
    check_clip(motion)
    return _walk_the_belt(motion, legs, options, fk)


def _walk_the_belt(
    motion: Motion, legs: Legs, options: ContactOptions | None = None, fk: Any = None
) -> Motion:
    """:func:`walk_the_belt` on a checked clip."""
    if motion.num_frames < 2:
        return motion
    o = options or ContactOptions()
    fk = motion.fk() if fk is None else fk
    sole = estimate_sole(motion, legs, o.floor_percentile, fk=fk)
    belt = _belt_velocity(motion, legs, sole, o, fk)
    return _carried(motion, belt, float(motion.frame_time or 0.0))
