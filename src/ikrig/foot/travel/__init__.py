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
speed): :mod:`ikrig.foot.travel.belt` finds the belt, the velocity at which its planted sole points
slide, and its contacts relative to it (:func:`treadmill_contacts`, re-exported here with
:func:`belt_velocity`, :func:`walk_the_belt`, :func:`repeat_cycle` and :func:`move_roots`).
"""

from __future__ import annotations

import math
import os
from typing import NamedTuple

import numpy as np

from ...character.legs import Legs, pelvis_joint
from ...errors import FileFormatError, InputError
from ...pose import Motion
from ...signal.filters import zero_lag_smooth
from ..context import check_clip
from .belt import (
    _walk_the_belt,
    belt_velocity,
    repeat_cycle,
    treadmill_contacts,
    walk_the_belt,
)
from .roots import move_roots

__all__ = [
    "TravelPath", "belt_velocity", "facing", "follow_path", "move_roots", "path_headings",
    "place_at", "read_path", "repeat_cycle", "travel", "treadmill_contacts", "walk_the_belt",
]  # fmt: skip

FACING_WINDOW = 1.0
"""Seconds: a clip's facing is the mean over its first this many seconds (about a gait
cycle, so the pelvis's swing from side to side cancels)."""
HEADING_SMOOTHING = 0.25
"""Seconds: half-width of the zero-lag (Hann) window that smooths a path's tangent."""
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

    The body tells first: the toes point forward (ankle to toe), else the knees do (a
    knee's way off its hip-to-ankle line). With two legs the heading is square to the line
    between the hips, on the side those point to, or by the legs' sides (``left`` and
    ``right``) when they tell nothing: names can be mirrored (the Godot robot's ``l-thigh``
    is on its right). Otherwise the body's way itself.

    Raises:
        InputError: none of these tells (a horizontal direction of zero length).
    """
    first = motion
    if motion.batch_shape and motion.frame_time is not None:
        first = motion[: max(1, round(FACING_WINDOW / motion.frame_time))]
    pos = first.positions_world().reshape(-1, motion.num_joints, 3).astype(np.float64)
    forward = _body_forward(pos, legs)
    if len(legs.legs) == 2:
        a, b = legs.legs
        across = pos[:, a.hip] - pos[:, b.hip]  # (-az, ax) is forward of a hips' line a - b
        square = np.sum(np.stack([-across[:, 2], across[:, 0]], axis=-1), axis=0)
        sign = float(np.sign(square @ forward))
        if sign == 0.0 and {a.side, b.side} == {"left", "right"}:
            sign = 1.0 if a.side == "left" else -1.0
        forward = sign * square
    n = float(np.hypot(*forward))
    if not (n > 0 and math.isfinite(n)):
        raise InputError(
            "heading: cannot tell which way the clip faces (toes, bent knees, or two legs"
            " named left and right are needed)"
        )
    return math.atan2(forward[0], forward[1])


FACING_TELL = 0.05
"""A body tells its way by toes or knees when their mean horizontal offset (ankle to toe, or
the knee off its hip-to-ankle midpoint) is at least this many leg lengths; less is a foot
joint that points down or a straight leg, whose way is noise."""


def _body_forward(pos: np.ndarray, legs: Legs) -> np.ndarray:
    """``(2,)`` xz: the toes' mean way (ankle to toe) over ``pos (F, J, 3)``, else the knees'
    (off the hip-to-ankle midpoint), when it is at least :data:`FACING_TELL`; else zeros."""
    least = FACING_TELL * legs.leg_length
    toes = [
        np.mean(pos[:, g.toe] - pos[:, g.ankle], axis=0)[[0, 2]] for g in legs.legs if g.toe >= 0
    ]
    knees = [
        np.mean(pos[:, g.knee] - 0.5 * (pos[:, g.hip] + pos[:, g.ankle]), axis=0)[[0, 2]]
        for g in legs.legs
    ]
    for ways in (toes, knees):
        if ways and np.hypot(*np.mean(ways, axis=0)) >= least:
            return np.mean(ways, axis=0)
    return np.zeros(2)


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
    return _follow_path(motion, legs, path, heading)


def _follow_path(
    motion: Motion, legs: Legs, path: TravelPath, heading: float | None = None
) -> Motion:
    """:func:`follow_path` on a checked clip."""
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
    cycles: int = 1,
) -> Motion:
    """:func:`follow_path` when a ``path`` (a file or a :class:`TravelPath`) is given, else
    :func:`place_at`; ``motion`` itself when nothing is asked. With ``walk``, a clip that
    walks in place is first made to walk (:func:`walk_the_belt`), then placed at ``at``
    and turned so that it walks toward ``heading`` (its way from first to last frame; a
    clip that goes nowhere is turned by :func:`facing`). ``cycles``: the clip is first
    repeated so many times (:func:`repeat_cycle`).

    Raises:
        InputError: both ``at`` and ``path``, or ``walk`` and ``path``; the errors of those
            functions and :func:`read_path`.
    """
    motion = repeat_cycle(motion, legs, cycles)  # (the one check of the clip)
    if walk:
        if path is not None:
            raise InputError("walk and path: give one (walking, the clip goes its own way)")
        walked = _walk_the_belt(motion, legs)
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
        return _follow_path(motion, legs, path, heading)
    if at is None and heading is None:
        return motion
    return place_at(motion, legs, at, heading)
