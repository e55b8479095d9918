"""The add-on's whole-body jobs on a clip read from Blender: a bone that follows a point
(an empty) over a span of frames, the body following, and a head that looks at one.

Both take the clip as :func:`~ikrig.blender.armature.read_motion` gives it (metres, Y up)
and the target's world position per frame in the same world (an empty may move), and give
the new clip, to be written back by :func:`~ikrig.blender.keys.write_action`. A span is
``[start, stop)`` of 0-based frame indices of the clip; ``blend_frames`` eases in and out
on each side (:func:`~ikrig.signal.spans.span_weights`), so frames outside stay as they are.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._checks import as_points
from ..errors import InputError
from ..pose import Motion

__all__ = ["follow_point", "look_at_point"]

STILL = 1e-9
"""A target that moves less than this (metres) over its span is one point."""


def _span(motion: Motion, start: int, stop: int) -> None:
    F = motion.num_frames
    if not (0 <= start < stop <= F):
        raise InputError(f"frames: the span {start}:{stop} is not within the clip's 0:{F}")


def _targets(motion: Motion, target_world: ArrayLike) -> np.ndarray:
    t = as_points(target_world, "target_world")
    if t.shape == (3,):
        t = np.broadcast_to(t, (motion.num_frames, 3))
    if t.shape != (motion.num_frames, 3):
        raise InputError(f"target_world: expected (3,) or ({motion.num_frames}, 3), got {t.shape}")
    return np.asarray(t, dtype=np.float64)


def follow_point(
    motion: Motion,
    bone: str,
    target_world: ArrayLike,
    start: int,
    stop: int,
    blend_frames: float = 0.0,
) -> Motion:
    """The clip with ``bone`` on ``target_world`` over frames ``[start, stop)``, the whole
    body following and the feet kept where they are (:func:`ikrig.app.body.pin_motion`);
    a moving target is followed frame by frame with the same goals.

    Args:
        motion: a clip ``(F, J)`` with a frame time, Y up.
        bone: the joint (bone) name.
        target_world: ``(3,)`` or ``(F, 3)`` the point per frame.
        start, stop: the span, 0-based frame indices.
        blend_frames: frames of ease in and out on each side.

    Raises:
        InputError: an unknown bone, a span outside the clip, targets of the wrong shape.

    Example:
        >>> from ikrig.data import walk_clip
        >>> clip = walk_clip(seconds=1.0, fps=30)
        >>> at = clip.positions_world()[15, clip.skeleton.index("LeftHand")] + [0, 0.1, 0]
        >>> out = follow_point(clip, "LeftHand", at, 10, 20, blend_frames=3)
        >>> hand = out.positions_world()[10:20, out.skeleton.index("LeftHand")]
        >>> bool(np.abs(hand - at).max() < 1e-3)
        True
    """
    from ..app.body import Pin, foot_keep_goals, pin_motion
    from ..signal.spans import span_weights
    from ..solvers.body import PositionGoal, solve_body

    motion.skeleton.index(bone)
    _span(motion, start, stop)
    t = _targets(motion, target_world)
    if np.ptp(t[start:stop], axis=0).max() <= STILL:  # one point: the CLI's own job
        pin = Pin(bone, t[start], start, stop)
        return pin_motion(motion, [pin], blend_frames * float(motion.frame_time or 0.0)).motion
    w = span_weights(motion.num_frames, start, stop, blend_frames)
    frames = np.flatnonzero(w > 0)
    sk = motion.skeleton
    tied = {sk.index(bone), *sk.ancestors(bone)}
    keeps = [
        g
        for g in foot_keep_goals(motion)
        if sk.index(g.joint) not in tied and sk.index(bone) not in sk.ancestors(g.joint)
    ]
    goals = [PositionGoal(bone, t[frames], weight=w[frames]), *keeps]
    solved = solve_body(motion[frames], goals).motion
    rl, pl = motion.rotations_local.copy(), motion.positions_local.copy()
    rl[frames], pl[frames] = solved.rotations_local, solved.positions_local
    return motion.replace(rotations_local=rl, positions_local=pl)


def look_at_point(
    motion: Motion,
    head: str,
    target_world: ArrayLike,
    start: int,
    stop: int,
    blend_frames: float = 0.0,
) -> tuple[Motion, np.ndarray]:
    """The clip with ``head`` (and the default chain above it,
    :func:`~ikrig.solvers.look.look_chain`) turned to look at ``target_world`` over frames
    ``[start, stop)``; the head's forward axis is read off the clip
    (:func:`ikrig.app.head.head_forward`).

    Returns:
        ``(motion, reached (F,) bool)``.

    Raises:
        InputError: an unknown head, a span outside the clip, targets of the wrong shape.
    """
    from ..app.head import head_forward
    from ..signal.spans import span_weights
    from ..solvers.aim import AimAxes
    from ..solvers.look import look_at, look_chain

    j = motion.skeleton.index(head)
    _span(motion, start, stop)
    t = _targets(motion, target_world)
    w = span_weights(motion.num_frames, start, stop, blend_frames)
    t = np.where((w > 0)[:, None], t, np.nan)
    forward, _ = head_forward(motion, j)
    chain = look_chain(motion, j)
    result = look_at(motion, j, t, w, chain=chain, axes=AimAxes(forward_local=forward))
    return result.motion, np.asarray(result.reached)
