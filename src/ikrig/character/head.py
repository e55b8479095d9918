"""A character's head: which joint it is (by name), and which of its local axes points a
given world way in a clip (its forward axis, for a look-at).

:func:`find_head` reads joint names the way :mod:`~ikrig.character.naming` does (any
namespace, any case, CamelCase or separators): a joint whose name has the word ``head`` (or
``skull``) and no helper word (``HeadTop_End``, ``head_nub``, ``ik_head`` are not heads)
nor a side. Among several, the one with the fewest other words, then the deepest (a rig's
control joint hanging from the root, Godot's ``HEAD``, loses to the real ``head`` under
the neck).

:func:`axis_local` turns a world direction into a joint's frame over a clip's frames and
averages it: with the direction the character faces, that is the head's forward axis,
assuming the head looks where the body faces on average over those frames (the head's
joint frame is whatever the rig's author chose: +Z, +Y, -X...).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from ..math.quat import quat_conj, quat_rotate
from ..pose import Motion, fk
from ..skeleton import Skeleton
from .naming import _tokens, is_helper, side_of

__all__ = ["HEAD_WORDS", "axis_local", "find_head", "head_or_top"]

HEAD_WORDS = ("head", "skull")
"""Words that name a head joint."""


def find_head(skeleton: Skeleton) -> int:
    """The index of the head joint, found by name (module docstring).

    Raises:
        InputError: no joint is named as a head ("no head joint found; pass --joint NAME").

    Example:
        >>> sk = Skeleton(("Hips", "Neck", "Head", "HeadTop_End"), [-1, 0, 1, 2],
        ...               [[0, 1, 0], [0, .5, 0], [0, .1, 0], [0, .2, 0]])
        >>> find_head(sk)
        2
    """
    found = []
    for j, name in enumerate(skeleton.names):
        words = _tokens(name)
        if not any(w in HEAD_WORDS for w in words) or is_helper(name) or side_of(name):
            continue
        others = [w for w in words if w not in HEAD_WORDS and not w.isdigit() and len(w) > 1]
        found.append((len(others), -len(skeleton.ancestors(j)), j))
    if not found:
        raise InputError("no head joint found; pass --joint NAME")
    return min(found)[2]


def head_or_top(skeleton: Skeleton, pose_world: ArrayLike) -> int:
    """The head found by name (:func:`find_head`), else the highest joint of the pose
    ``pose_world (J, 3)`` (Y up) that has no side and is no helper (CesiumMan's
    ``Skeleton_neck_joint_2``, a rig's ``face``): the top of the spine; -1 for none.

    Example:
        >>> sk = Skeleton(("hips", "spine", "face", "hand.L"), [-1, 0, 1, 1],
        ...               [[0, 1, 0], [0, .5, 0], [0, .3, 0], [.3, .4, 0]])
        >>> head_or_top(sk, [[0, 1, 0], [0, 1.5, 0], [0, 1.8, 0], [.3, 1.9, 0]])
        2
    """
    try:
        return find_head(skeleton)
    except InputError:
        pass
    y = np.asarray(pose_world, dtype=np.float64)[:, 1]
    found = [(float(y[j]), j) for j, name in enumerate(skeleton.names)
             if not side_of(name) and not is_helper(name)]  # fmt: skip
    return max(found)[1] if found else -1


def axis_local(
    motion: Motion, joint: str | int, direction_world: ArrayLike, frames: slice | None = None
) -> np.ndarray:
    """The unit axis ``(3,)`` (float64) of ``joint``'s frame that points along
    ``direction_world`` on average over a clip's ``frames`` (default: all).

    Each frame's direction is turned into the joint's frame (by the inverse of its world
    rotation), and the mean is normalised.

    Raises:
        InputError: an unknown joint, a direction that is not 3 finite numbers (not all
            zero), no frames, or frames whose axes cancel out.

    Example:
        >>> sk = Skeleton(("root", "head"), [-1, 0], [[0, 1, 0], [0, .5, 0]])
        >>> axis_local(Motion.rest(sk, (3,)), "head", [0, 0, 2]).tolist()
        [0.0, 0.0, 1.0]
    """
    j = motion.skeleton.index(joint)
    d = np.asarray(direction_world, dtype=np.float64)
    if d.shape != (3,) or not np.isfinite(d).all() or not d.any():
        raise InputError(f"direction_world: expected 3 finite numbers, not all zero, got {d!r}")
    path = list(reversed(motion.skeleton.ancestors(j))) + [j]
    rl = motion.rotations_local.reshape(-1, motion.num_joints, 4)
    if frames is not None:
        rl = rl[frames]
    if len(rl) == 0:
        raise InputError("axis_local: no frames to read the axis from")
    pl = np.zeros((len(path), 3))
    rot_w = fk(np.arange(-1, len(path) - 1), rl[:, path].astype(np.float64), pl)[0][:, -1]
    mean = quat_rotate(quat_conj(rot_w), d / np.linalg.norm(d)).mean(axis=0)
    n = float(np.linalg.norm(mean))
    if not n > 1e-6:
        raise InputError(
            f"axis_local: {motion.skeleton.names[j]!r} turns every way over the frames"
        )
    return mean / n
