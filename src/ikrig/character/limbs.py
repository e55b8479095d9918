"""Limbs that look like legs but are not placed: legs named in no convention ikrig knows, front
legs named as arms whose chain holds a bone ikrig cannot solve through, or an override
that leaves a leg out. Foot placement then stands the body on the legs it has and the others
hang or sink, so it says so (:class:`UnplacedLimbWarning`) instead of reporting a clean
result.

A limb *reaches the floor* when its end (a leaf joint) does
(:func:`~ikrig.character.reach.reaches_floor`: within :data:`FLOOR_REACH` leg lengths of the
legs' floor in at least :data:`DOWN_SHARE` of the clip's frames); a hand at the end of a
hanging arm never is. Arms named as arms that reach it are front legs
(:func:`~ikrig.character.legs.find_legs`), so a four-legged rig named in the usual
conventions leaves none.
"""

from __future__ import annotations

import numpy as np

from ..skeleton import Skeleton
from .legs import Legs
from .naming import is_helper
from .reach import DOWN_SHARE, FLOOR_REACH, reaches_floor

__all__ = ["DOWN_SHARE", "FLOOR_REACH", "UnplacedLimbWarning", "unplaced_limbs"]


class UnplacedLimbWarning(UserWarning):
    """A limb reaches the floor in the clip but is no leg that foot placement places."""


_CONTROL_WORDS = ("control", "ctrl", "pole", "target")


def _control(name: str) -> bool:
    """A helper or control bone (``ik_foot_l``, Godot's ``r-LEGCONTROL``): no limb."""
    return is_helper(name) or any(w in name.lower() for w in _CONTROL_WORDS)


def unplaced_limbs(skeleton: Skeleton, legs: Legs, positions_world: np.ndarray) -> list[int]:
    """The limbs outside ``legs`` that reach the floor in a Y-up clip (module docstring):
    for each, the joint where it leaves the body (the top of a branch all of whose ends
    reach the floor), in joint order.

    Args:
        skeleton: the rig; legs: the legs placed (``leg_length`` is the unit).
        positions_world: ``(F, J, 3)`` the clip's world positions, Y up.
    """
    pos = np.asarray(positions_world, dtype=np.float64).reshape(-1, skeleton.num_joints, 3)
    hips = {leg.hip for leg in legs.legs}
    parents = skeleton.parents
    in_leg = [
        j in hips or bool(hips.intersection(skeleton.ancestors(j))) for j in range(len(parents))
    ]
    children: list[list[int]] = [[] for _ in parents]
    for j, p in enumerate(parents):
        if p >= 0:
            children[p].append(j)
    down = reaches_floor(pos, [leg.ankle for leg in legs.legs], legs.leg_length)  # (J,)
    # a branch reaches the floor when every end below it does, helper and control ends (a
    # thumb, an IK target) aside (children come after parents)
    reaches: list[bool | None] = [None] * len(parents)
    for j in reversed(range(len(parents))):
        said = [reaches[c] for c in children[j] if reaches[c] is not None]
        if in_leg[j]:
            reaches[j] = False
        elif said:
            reaches[j] = all(said)
        else:  # an end, or a hand whose fingers are all helpers: the end
            reaches[j] = None if _control(skeleton.names[j]) else bool(down[j])
    return [
        j for j in range(len(parents))
        if reaches[j] and not (parents[j] >= 0 and reaches[parents[j]])
    ]  # fmt: skip
