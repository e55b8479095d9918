"""Which way a clip's head looks: its forward axis read off the clip (for ``ikrig look`` and
the body playground's look-at goal).

A head joint's frame is whatever the rig's author chose (+Z, +Y, -X...). The forward axis
is the direction the character faces over its first second
(:func:`ikrig.foot.travel.facing`), seen from the head over those frames
(:func:`ikrig.character.head.axis_local`): the head is taken to look where the body faces.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..character.head import axis_local
from ..character.legs import find_legs
from ..errors import IkrigError, InputError
from ..foot.travel import FACING_WINDOW, facing
from ..pose import Motion
from ..solvers.look import DEFAULT_FORWARD_LOCAL

__all__ = ["head_forward"]


def head_forward(
    motion: Motion, head: int, given: ArrayLike | None = None
) -> tuple[np.ndarray, str]:
    """``(forward axis (3,) in the joint's frame, how it was found)``.

    ``given`` (not all zero) is returned as it is. Else the way the clip faces (a motion of
    one pose or of F frames, Y up), seen from ``head``; else, when the clip's legs or facing
    cannot be read, :data:`~ikrig.solvers.look.DEFAULT_FORWARD_LOCAL` (+Z).

    Raises:
        InputError: ``given`` is all zero.

    Example:
        >>> from ikrig.data import walk_clip
        >>> clip = walk_clip(seconds=1.0, fps=30)
        >>> axis, how = head_forward(clip, clip.skeleton.index("Head"))
        >>> bool(axis[2] > 0.9), how.endswith("seen from the joint)")
        (True, True)
    """
    if given is not None:
        v = np.asarray(given, dtype=np.float64)
        if not np.any(v):
            raise InputError("--forward: must not be 0,0,0")
        return v, f"{_axis(v)} (given)"
    try:
        pose = motion.positions_world()
        legs = find_legs(motion.skeleton, pose_world=pose.reshape(-1, motion.num_joints, 3))
        heading = facing(motion, legs)
        way = np.array([math.sin(heading), 0.0, math.cos(heading)])
        ft = motion.frame_time
        n = 1 if ft is None else max(1, round(FACING_WINDOW / ft))
        axis = axis_local(motion, head, way, None if not motion.batch_shape else slice(0, n))
        return axis, f"{_axis(axis)} (where the clip faces, seen from the joint)"
    except IkrigError:
        v = np.asarray(DEFAULT_FORWARD_LOCAL, dtype=np.float64)
        return v, f"{_axis(v)} (the clip's facing could not be read; pass --forward X,Y,Z)"


def _axis(v: np.ndarray) -> str:
    return "(" + ", ".join(f"{x:.3g}" for x in v) + ")"
