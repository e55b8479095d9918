"""A character put where the user says: a clip placed at a point with a heading, or moved
along a path, and the contacts of clips that walk in place.

Most game walk cycles have no root motion: the character walks on the spot, its stance foot
sliding back under it as on a treadmill. These free functions turn and move such a clip (or
any clip) before its feet are planted: :func:`place_at` stands it at ``(x, z)`` facing a
heading, :func:`follow_path` moves it along a :class:`TravelPath` read from a CSV file
(:func:`read_path`). Both move only the root joints, turning each frame about the vertical
axis through the pelvis's frame-0 position (:func:`move_roots`), so bone lengths and the
clip's own motion relative to its start are kept. :func:`walk_the_belt` makes such a clip
walk instead: its root carried forward at the speed its stance feet slide back.

Headings are radians about +Y, from +Z toward +X: heading 0 faces +Z, ``pi / 2`` faces +X
(degrees only at the command line). A clip's own facing (:func:`facing`) is read off its
hips over its first second.

A clip that walks in place shows no contact to the velocity rule of
:func:`~ikrig.foot.stages.contacts.detect_contacts` (its stance foot slides at the walking
speed). :func:`treadmill_contacts` finds the belt, the velocity at which the clip's planted
sole points slide, and detects contacts on the clip moved against it, where the stance feet
stand still: the same rule, relative to the ground the clip walks on.
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

import numpy as np

from ..character.legs import Legs, pelvis_joint
from ..character.sole import FootSole, estimate_sole
from ..errors import FileFormatError, InputError
from ..math.quat import quat_mul
from ..pose import Motion
from ..signal.filters import zero_lag_smooth
from .context import check_clip
from .options import ContactOptions
from .stages.contacts import detect_foot_contacts

__all__ = [
    "TravelPath", "belt_velocity", "facing", "follow_path", "move_roots", "path_headings",
    "place_at", "read_path", "travel", "treadmill_contacts", "walk_the_belt",
]  # fmt: skip

FACING_WINDOW = 1.0
"""Seconds: a clip's facing is the mean over its first this many seconds (about a gait
cycle, so the pelvis's swing from side to side cancels)."""
HEADING_SMOOTHING = 0.25
"""Seconds: half-width of the zero-lag (Hann) window that smooths a path's tangent."""
BELT_WINDOW = 0.5
"""Seconds: half-width of the running median that reads the belt off the planted points."""
MOVING = 1e-6
"""Leg lengths per second: a path slower than this has no tangent there (held)."""

PATH_HEADERS = (("time", "x", "z"), ("time", "x", "z", "heading"))


class TravelPath(NamedTuple):
    """A path to move a clip along (:func:`read_path`).

    Attributes:
        times: ``(N,)`` seconds from the clip's first frame, increasing.
        xz: ``(N, 2)`` where the pelvis is at those times, in the clip's units.
        headings: ``(N,)`` radians (unwrapped: consecutive values differ by less than pi),
            or None to face along the path.
        name: where it was read from, for messages.
    """

    times: np.ndarray
    xz: np.ndarray
    headings: np.ndarray | None = None
    name: str = "<path>"


def _number(text: str, column: str, where: tuple[str, int]) -> float:
    try:
        value = float(text)
    except ValueError:
        raise FileFormatError(where[0], where[1], f"{column}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise FileFormatError(where[0], where[1], f"{column}: {text!r} is not finite")
    return value


def read_path(path: str | os.PathLike[str]) -> TravelPath:
    """Read a path file: CSV with the header ``time,x,z`` or ``time,x,z,heading``, then one
    row per point: time in seconds from the clip's first frame (increasing), ``x`` and ``z``
    in the clip's units, heading in degrees (0 faces +Z, 90 faces +X). Blank lines are
    skipped.

    Raises:
        FileFormatError: a bad header, a row with the wrong number of values, a value that
            is not a finite number, a time not after the previous one, no rows (the message
            names the file and line).
        OSError: the file cannot be read.
    """
    name = os.fspath(path)
    with open(name, encoding="utf-8-sig") as f:
        lines = f.read().splitlines()
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    if not numbered:
        raise FileFormatError(name, None, "empty; expected the header 'time,x,z[,heading]'")
    line_no, header = numbered[0]
    columns = tuple(c.strip().lower() for c in header.split(","))
    if columns not in PATH_HEADERS:
        raise FileFormatError(
            name, line_no, f"expected the header 'time,x,z' or 'time,x,z,heading', got {header!r}"
        )
    rows: list[list[float]] = []
    for line_no, line in numbered[1:]:
        fields = line.split(",")
        if len(fields) != len(columns):
            raise FileFormatError(
                name, line_no, f"expected {len(columns)} values ({','.join(columns)}), got"
                f" {len(fields)}"
            )  # fmt: skip
        row = [_number(t.strip(), c, (name, line_no)) for t, c in zip(fields, columns)]
        if rows and row[0] <= rows[-1][0]:
            raise FileFormatError(
                name, line_no, f"time {row[0]:g} is not after the previous row's {rows[-1][0]:g}"
            )
        rows.append(row)
    if not rows:
        raise FileFormatError(name, None, "no rows after the header; expected time,x,z rows")
    table = np.array(rows, dtype=np.float64)
    headings = np.unwrap(np.radians(table[:, 3])) if len(columns) == 4 else None
    return TravelPath(table[:, 0], table[:, 1:3].copy(), headings, name)


def facing(motion: Motion, legs: Legs) -> float:
    """The heading a clip faces (radians, 0 = +Z, pi/2 = +X), over its first
    :data:`FACING_WINDOW` seconds (a pose: that pose).

    With two legs, square to the line between the hips: forward of it by the legs' sides
    (``left`` and ``right``), else on the side the toes point to. Otherwise the mean
    direction from ankle to toe.

    Raises:
        InputError: none of these tells (two legs with neither sides nor toes, or a
            horizontal direction of zero length).
    """
    first = motion
    if motion.batch_shape and motion.frame_time is not None:
        first = motion[: max(1, round(FACING_WINDOW / motion.frame_time))]
    pos = first.positions_world().reshape(-1, motion.num_joints, 3).astype(np.float64)
    toes_xz = np.zeros(2)
    for leg in legs.legs:
        if leg.toe >= 0:
            toes_xz += np.sum(pos[:, leg.toe] - pos[:, leg.ankle], axis=0)[[0, 2]]
    forward = toes_xz
    if len(legs.legs) == 2:
        a, b = legs.legs
        sign = 0.0
        if {a.side, b.side} == {"left", "right"}:
            sign = 1.0 if a.side == "left" else -1.0
        across = pos[:, a.hip] - pos[:, b.hip]  # (-az, ax) is forward of a hips' line a - b
        square = np.sum(np.stack([-across[:, 2], across[:, 0]], axis=-1), axis=0)
        if sign == 0.0:
            sign = float(np.sign(square @ toes_xz))
        forward = sign * square
    n = float(np.hypot(*forward))
    if not (n > 0 and math.isfinite(n)):
        raise InputError(
            "heading: cannot tell which way the clip faces (two legs named left and right, or"
            " toes, are needed)"
        )
    return math.atan2(forward[0], forward[1])


def move_roots(motion: Motion, angles, pivot_xz, targets_xz) -> Motion:
    """``motion`` turned about the vertical axis through ``pivot_xz`` by ``angles`` and
    moved so that the pivot lands on ``targets_xz``, frame by frame.

    Args:
        motion: a clip ``(F,)`` (or a pose, ``F = 1``), Y up.
        angles: ``()`` or ``(F,)`` radians about +Y (+Z turns toward +X).
        pivot_xz: ``(2,)`` the point turned about.
        targets_xz: ``(2,)`` or ``(F, 2)`` where the pivot goes.

    Returns:
        A new Motion: only the root joints' local rotations and positions change (heights
        kept); the dtype is kept.
    """
    shape = motion.batch_shape
    F = motion.num_frames
    a = np.broadcast_to(np.asarray(angles, dtype=np.float64), (F,))
    t = np.broadcast_to(np.asarray(targets_xz, dtype=np.float64), (F, 2))
    pivot = np.asarray(pivot_xz, dtype=np.float64)
    roots = np.flatnonzero(motion.skeleton.parents < 0)
    rl = np.array(motion.rotations_local, dtype=np.float64).reshape(F, -1, 4)
    pl = np.array(motion.positions_local, dtype=np.float64).reshape(F, -1, 3)
    q = np.zeros((F, 1, 4))
    q[:, 0, 1], q[:, 0, 3] = np.sin(0.5 * a), np.cos(0.5 * a)
    rl[:, roots] = quat_mul(q, rl[:, roots])
    c, s = np.cos(a)[:, None], np.sin(a)[:, None]
    x, z = pl[:, roots, 0] - pivot[0], pl[:, roots, 2] - pivot[1]
    pl[:, roots, 0] = c * x + s * z + t[:, :1]
    pl[:, roots, 2] = c * z - s * x + t[:, 1:]
    dt = motion.dtype
    return motion.replace(
        rotations_local=rl.reshape(shape + rl.shape[1:]).astype(dt, copy=False),
        positions_local=pl.reshape(shape + pl.shape[1:]).astype(dt, copy=False),
    )


def _pivot(motion: Motion, legs: Legs) -> np.ndarray:
    """The pelvis's ``(x, z)`` at frame 0."""
    first = motion[0] if motion.batch_shape else motion
    return first.positions_world()[pelvis_joint(motion.skeleton, legs)][[0, 2]].astype(float)


def place_at(
    motion: Motion,
    legs: Legs,
    at: tuple[float, float] | None = None,
    heading: float | None = None,
) -> Motion:
    """The clip moved so that its pelvis is at ``at = (x, z)`` at frame 0 (None: where it
    is), turned to face ``heading`` (radians, :func:`facing`'s convention; None: as it
    faces). A clip that walks in place then walks on that spot; a clip with root motion
    keeps it, turned with it.

    Raises:
        InputError: ``at`` or ``heading`` not finite; :func:`facing`'s errors.
    """
    pivot = _pivot(motion, legs)
    target = pivot if at is None else _place(at)
    angle = 0.0 if heading is None else _turn(motion, legs, heading)
    return move_roots(motion, angle, pivot, target)


def _place(at) -> np.ndarray:
    target = np.asarray(at, dtype=np.float64)
    if target.shape != (2,) or not np.isfinite(target).all():
        raise InputError(f"at: expected two finite numbers (x, z), got {at!r}")
    return target


def _turn_to(heading: float, now: float) -> float:
    if not math.isfinite(heading):
        raise InputError(f"heading: expected a finite angle, got {heading!r}")
    return float(heading) - now


def _turn(motion: Motion, legs: Legs, heading: float) -> float:
    _turn_to(heading, 0.0)  # the heading's check first
    return _turn_to(heading, facing(motion, legs))


def path_headings(path: TravelPath, times: np.ndarray, unit: float = 1.0) -> np.ndarray | None:
    """Headings (radians, unwrapped) along ``path`` at ``times (F,)``: the path's own,
    interpolated linearly in time, or else its tangent, smoothed over
    :data:`HEADING_SMOOTHING` seconds each side; where the path stands still (or beyond its
    ends) the heading turns linearly from the last one to the next, and is held before the
    first and after the last. None when the path never moves (``unit``: the length of
    :data:`MOVING`, a leg length)."""
    times = np.asarray(times, dtype=np.float64)
    if path.headings is not None:
        return np.interp(times, path.times, path.headings)
    if len(times) < 2:
        return None
    dt = float(times[1] - times[0])
    xz = np.stack([np.interp(times, path.times, path.xz[:, k]) for k in (0, 1)], axis=-1)
    velocity = zero_lag_smooth(np.gradient(xz, dt, axis=0), round(HEADING_SMOOTHING / dt))
    moving = np.flatnonzero(np.hypot(velocity[:, 0], velocity[:, 1]) > MOVING * unit)
    if len(moving) == 0:
        return None
    angles = np.unwrap(np.arctan2(velocity[moving, 0], velocity[moving, 1]))
    return np.interp(np.arange(len(times)), moving, angles)


def follow_path(
    motion: Motion, legs: Legs, path: TravelPath, heading: float | None = None
) -> Motion:
    """The clip moved along ``path``: at each frame's time (``frame * frame_time``) its
    pelvis's frame-0 position goes to the path's point (interpolated linearly in time, held
    before the first and after the last), and it faces ``heading`` (radians) if given, else
    the path's headings (:func:`path_headings`). The clip's own motion relative to its first
    frame (an in-place clip's sway) is kept, turned with it.

    Raises:
        InputError: a clip without frame time; :func:`facing`'s errors.
    """
    check_clip(motion)
    times = np.arange(motion.num_frames) * float(motion.frame_time or 0.0)
    targets = np.stack([np.interp(times, path.times, path.xz[:, k]) for k in (0, 1)], axis=-1)
    if heading is not None:
        angles: np.ndarray | float = _turn(motion, legs, heading)
    else:
        along = path_headings(path, times, legs.leg_length)
        angles = 0.0 if along is None else along - facing(motion, legs)
    return move_roots(motion, angles, _pivot(motion, legs), targets)


def travel(
    motion: Motion,
    legs: Legs,
    at: tuple[float, float] | None = None,
    heading: float | None = None,
    path: str | os.PathLike[str] | TravelPath | None = None,
    walk: bool = False,
) -> Motion:
    """:func:`follow_path` when a ``path`` (a file or a :class:`TravelPath`) is given, else
    :func:`place_at`; ``motion`` itself when nothing is asked. With ``walk``, a clip that
    walks in place is first made to walk (:func:`walk_the_belt`), then placed at ``at``
    and turned so that it walks toward ``heading`` (its way from first to last frame; a
    clip that goes nowhere is turned by :func:`facing`).

    Raises:
        InputError: both ``at`` and ``path``, or ``walk`` and ``path``; the errors of those
            functions and :func:`read_path`.
    """
    if walk:
        if path is not None:
            raise InputError("walk and path: give one (walking, the clip goes its own way)")
        walked = walk_the_belt(motion, legs)
        pivot = _pivot(motion, legs)
        way = _pivot(walked[-1:], legs) - pivot if walked.num_frames > 1 else np.zeros(2)
        if heading is None or not np.hypot(*way) > MOVING * legs.leg_length:
            return place_at(walked, legs, at, heading)
        angle = _turn_to(heading, math.atan2(way[0], way[1]))
        target = pivot if at is None else _place(at)
        return move_roots(walked, angle, pivot, target)
    if path is not None:
        if at is not None:
            raise InputError("at and path: give one (the path says where the clip is)")
        if not isinstance(path, TravelPath):
            path = read_path(path)
        return follow_path(motion, legs, path, heading)
    if at is None and heading is None:
        return motion
    return place_at(motion, legs, at, heading)


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
    their running median over :data:`BELT_WINDOW` seconds each side, smoothed over as long
    (zero-lag Hann), held over stretches without a low point (a run's flights).
    ``fk``: the clip's world rotations and positions, if already computed.
    """
    check_clip(motion)
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
    if motion.num_frames < 2:
        return motion
    o = options or ContactOptions()
    fk = motion.fk() if fk is None else fk
    sole = estimate_sole(motion, legs, o.floor_percentile, fk=fk)
    belt = belt_velocity(motion, legs, sole, o, fk)
    return _carried(motion, belt, float(motion.frame_time or 0.0))
