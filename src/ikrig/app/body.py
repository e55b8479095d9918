"""Whole-body jobs on a clip: ``fit`` a skeleton to per-frame targets, ``pin`` a joint to a
point for a span of frames.

Both build goals for :func:`ikrig.solvers.body.solve_body` and keep everything else of the
clip: a pinned clip's frames outside its spans and blends are the source's, bit for bit,
and its feet keep their place (a :class:`~ikrig.solvers.body.KeepGoal` on each foot joint,
see :func:`foot_keep_goals`).
Positions are in the clip's own units and axes; a span of frames is a Python slice
``[start, stop)`` of 0-based indices.

Example:
    >>> import numpy as np
    >>> from ikrig.data import walk_clip
    >>> clip = walk_clip(seconds=1.0, fps=40)
    >>> hand = clip.skeleton.index("LeftHand")
    >>> at = clip.positions_world()[20, hand] + [0.0, 0.1, 0.0]
    >>> out = pin_motion(clip, [Pin("LeftHand", at, 15, 26)], blend_seconds=0.1)
    >>> bool(np.array_equal(out.motion.rotations_local[:10], clip.rotations_local[:10]))
    True
    >>> float(np.abs(out.motion.positions_world()[15:26, hand] - at).max()) < 1e-3
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..character.legs import find_legs
from ..character.up import detect_up, to_y_up
from ..errors import InputError
from ..pose import Motion
from ..signal.spans import span_weights
from ..solvers.body import (
    BodyOptions,
    BodyResult,
    Goal,
    KeepGoal,
    PositionGoal,
    goals_from_targets,
    solve_body,
)
from .tracking import knee_hints


@dataclass(frozen=True)
class Pin:
    """A joint held on a point over frames ``start`` to ``stop - 1``.

    Attributes:
        joint: the joint's name.
        at_world: ``(3,)`` the point, world space of the clip.
        start, stop: the span, 0-based frame indices, ``start < stop``.
    """

    joint: str
    at_world: ArrayLike
    start: int
    stop: int


@dataclass(frozen=True)
class BodyOutcome:
    """What a whole-body job made: the new ``motion`` (the clip's frames and skeleton), the
    solver's ``result`` on the frames it solved, those ``frames`` (indices), the ``goals``
    solved (the result's goal axis) and how many of them, the last, are ``hints`` (weak
    goals the job added, not the user's)."""

    motion: Motion
    result: BodyResult
    frames: np.ndarray
    goals: tuple[Goal, ...] = ()
    hints: int = 0


def _check_pin(pin: Pin, motion: Motion) -> np.ndarray:
    where = f"pin {pin.joint!r}"
    if pin.joint not in motion.skeleton.names:
        raise InputError(f"{where}: no joint of that name in the skeleton")
    at = np.asarray(pin.at_world, dtype=np.float64)
    if at.shape != (3,) or not np.isfinite(at).all():
        raise InputError(f"{where}: at_world must be 3 finite numbers, got {pin.at_world!r}")
    F = motion.num_frames
    if not (0 <= pin.start < pin.stop <= F):
        raise InputError(f"{where}: frames {pin.start}:{pin.stop} are not within 0:{F}")
    return at


def foot_keep_goals(motion: Motion) -> list[KeepGoal]:
    """One :class:`KeepGoal` per foot joint found (each leg's ankle, and toe when there is
    one), on every frame: planted feet stay planted, and a swinging foot keeps its path, so
    that it is where the source has it when it lands (a keep that only held feet in contact
    let a swinging foot drift with the body and snapped it back at the next contact, a pop
    of 3 x the source's largest acceleration on a CMU walk). None when no legs are found."""
    clip = to_y_up(motion, detect_up(motion))
    try:
        legs = find_legs(clip.skeleton, pose_world=clip.positions_world())
    except InputError:
        return []
    names = motion.skeleton.names
    return [
        KeepGoal(names[joint]) for leg in legs.legs for joint in (leg.ankle, leg.toe) if joint >= 0
    ]


def _keeps_beside(keeps: list[KeepGoal], pinned: list[str], motion: Motion) -> list[KeepGoal]:
    """``keeps`` without those on a pinned joint, above one or below one (a pinned ankle
    moves its toe; a pinned toe needs its ankle free): they would fight the pin."""
    sk = motion.skeleton

    def tied(k: int, j: int) -> bool:
        return k == j or k in sk.ancestors(j) or j in sk.ancestors(k)

    pins = [sk.index(name) for name in pinned]
    return [g for g in keeps if not any(tied(sk.index(g.joint), j) for j in pins)]


def pin_motion(
    motion: Motion,
    pins: Sequence[Pin],
    blend_seconds: float = 0.2,
    keep_feet: bool = True,
    options: BodyOptions | None = None,
) -> BodyOutcome:
    """Hold joints on points over spans of a clip, blended in and out.

    Only the frames within a span or its blend are solved; the others are returned as
    they are. The feet keep their place (``keep_feet``): planted ones stay planted.

    Args:
        motion: a clip, batch ``(F,)`` with a frame time.
        pins: one :class:`Pin` each.
        blend_seconds: the ease in and out on each side of a span.
        keep_feet: keep the feet where the clip has them.
        options: :class:`~ikrig.solvers.body.BodyOptions`.
    """
    if len(motion.batch_shape) != 1 or not motion.frame_time:
        raise InputError("motion: expected a clip (F,) with a frame time")
    if not pins:
        raise InputError("pins: give at least one")
    F = motion.num_frames
    blend = max(float(blend_seconds), 0.0) / motion.frame_time
    goals: list = []
    active = np.zeros(F, dtype=bool)
    for pin in pins:
        at = _check_pin(pin, motion)
        w = span_weights(F, pin.start, pin.stop, blend)
        active |= w > 0
        target = np.where((w > 0)[:, None], at, np.nan)
        goals.append((pin.joint, target, w))
    frames = np.flatnonzero(active)
    part = motion[frames]
    body: list[Goal] = [PositionGoal(j, t[frames], weight=w[frames]) for j, t, w in goals]
    if keep_feet:
        body += _keeps_beside(foot_keep_goals(motion), [p.joint for p in pins], motion)
    result = solve_body(part, body, options)
    rl = motion.rotations_local.copy()
    pl = motion.positions_local.copy()
    rl[frames] = result.motion.rotations_local
    pl[frames] = result.motion.positions_local
    return BodyOutcome(Motion(motion.skeleton, rl, pl, motion.frame_time), result, frames,
                       tuple(body))  # fmt: skip


def fit_goals(
    motion: Motion,
    positions_world: ArrayLike,
    rotations_world: ArrayLike,
    frame_time: float,
) -> tuple[Motion, list[Goal], int]:
    """The preferred clip and the goals ``ikrig fit`` solves (:func:`fit_motion`).

    The goals are the targets' (:func:`~ikrig.solvers.body.goals_from_targets`); when the
    preferred pose is a single pose (tracking from a rest or bind pose) the knee hints of
    :func:`ikrig.app.tracking.knee_hints` follow them. Returns ``(clip, goals, hints)``:
    the preferred clip of the targets' ``F`` frames, the goals, and how many of them (the
    last) are hints.
    """
    pos = np.asarray(positions_world, dtype=np.float64)
    rot = np.asarray(rotations_world, dtype=np.float64)
    F = pos.shape[0]
    single = motion.batch_shape != (F,)
    first = motion if not motion.batch_shape else motion[0]
    if single:
        rl = np.broadcast_to(first.rotations_local, (F,) + first.rotations_local.shape).copy()
        pl = np.broadcast_to(first.positions_local, (F,) + first.positions_local.shape).copy()
        clip = Motion(motion.skeleton, rl, pl, frame_time)
    else:
        clip = motion.replace(frame_time=frame_time)
    goals: list[Goal] = list(goals_from_targets(motion.skeleton, pos, rot))
    hints = knee_hints(first, pos, rot, frame_time) if single and F > 0 else []
    return clip, goals + hints, len(hints)


def fit_motion(
    motion: Motion,
    positions_world: ArrayLike,
    rotations_world: ArrayLike,
    frame_time: float,
    options: BodyOptions | None = None,
) -> BodyOutcome:
    """Solve a skeleton to per-frame targets (``ikrig fit``).

    Args:
        motion: the preferred pose: a clip of the targets' ``F`` frames, or a single pose
            (or a clip of another length: its first frame) used for every frame, with knee
            hints (:func:`fit_goals`).
        positions_world: ``(F, J, 3)`` targets, NaN where a joint has none that frame.
        rotations_world: ``(F, J, 4)`` xyzw targets, NaN where none.
        frame_time: seconds per frame of the result.
        options: :class:`~ikrig.solvers.body.BodyOptions`.
    """
    clip, goals, hints = fit_goals(motion, positions_world, rotations_world, frame_time)
    result = solve_body(clip, goals, options)
    return BodyOutcome(result.motion, result, np.arange(clip.batch_shape[0]), tuple(goals),
                       hints)  # fmt: skip
