"""A character's hands: the joints a hand goal or a wrist tracker goes on.

:func:`find_hands` gives one hand per side, left first:

1. an arm named as one (:func:`~ikrig.character.naming.arm_limbs`: upper arm, forearm,
   hand, as Mixamo's ``LeftArm`` > ``LeftForeArm`` > ``LeftHand``);
2. else the joint of that side named as a hand or wrist (``hand``, ``wrist``, not a
   finger or helper) nearest the root: CMU's ``LeftShoulder`` > ``LeftElbow`` >
   ``LeftWrist`` names its upper arm as a shoulder, which (1) does not take as an arm;
3. else, by the tree: the arm is a chain of that side hanging from the spine (a joint on
   the path from the pelvis to the head, the head itself excluded) that is not a leg, and
   its hand is where the chain ends or branches into fingers (``shoulder.L`` >
   ``upper_arm.L`` > ``forearm.L`` ends at ``forearm.L``; Godot's ``r-arm`` >
   ``r-forearm`` at ``r-forearm``). Only chains of two joints or more are arms.

A side found by none of them has no hand, and a leg is never an arm: a quadruped's front
legs, named as arms or not, are feet.
"""

from __future__ import annotations

from ..skeleton import Skeleton
from .legs import Legs
from .naming import _tokens, arm_limbs, is_helper, side_of

__all__ = ["HAND_WORDS", "find_hands"]

HAND_WORDS = ("hand", "wrist")
"""Words that name a hand joint (rule 2)."""
_NOT_HAND = frozenset(("finger", "thumb", "index", "middle", "ring", "pinky", "little"))
SIDES = ("left", "right")


def find_hands(skeleton: Skeleton, legs: Legs | None = None, head: int = -1) -> dict[str, int]:
    """``{side: joint}`` the hands found (module docstring), left first.

    Args:
        skeleton: the character's skeleton.
        legs: its legs (their joints and everything below them are never a hand), or None.
        head: its head joint (rule 3's spine ends there), -1 for none: rule 3 is not used.

    Example:
        >>> names = ("Hips", "Chest", "LeftShoulder", "LeftElbow", "LeftWrist", "Head")
        >>> sk = Skeleton(names, [-1, 0, 1, 2, 3, 1], [[0, 1, 0], [0, .5, 0], [.2, 0, 0],
        ...               [.3, 0, 0], [.3, 0, 0], [0, .3, 0]])
        >>> find_hands(sk)
        {'left': 4}
    """
    below_legs = _leg_joints(skeleton, legs)
    out = {limb.side: limb.ankle for limb in arm_limbs(skeleton) if limb.ankle not in below_legs}
    for side in SIDES:
        if side in out:
            continue
        named = _named_hand(skeleton, side, below_legs)
        if named < 0 and head >= 0:
            named = _chain_hand(skeleton, side, below_legs, head)
        if named >= 0:
            out[side] = named
    return {side: out[side] for side in SIDES if side in out}


def _leg_joints(skeleton: Skeleton, legs: Legs | None) -> set[int]:
    """The legs' joints and every joint below them."""
    if legs is None:
        return set()
    hips = {leg.hip for leg in legs.legs}
    return {j for j in range(skeleton.num_joints) if j in hips or hips & set(skeleton.ancestors(j))}


def _named_hand(skeleton: Skeleton, side: str, excluded: set[int]) -> int:
    """Rule 2: the joint of ``side`` named as a hand or wrist nearest the root, or -1."""
    found = []
    for j, name in enumerate(skeleton.names):
        words = set(_tokens(name))
        if j in excluded or side_of(name) != side or is_helper(name) or words & _NOT_HAND:
            continue
        if any(w in HAND_WORDS for w in words):
            found.append((len(skeleton.ancestors(j)), j))
    return min(found)[1] if found else -1


def _chain_hand(skeleton: Skeleton, side: str, excluded: set[int], head: int) -> int:
    """Rule 3: the end of ``side``'s arm chain hanging from the spine, or -1."""
    spine = set(skeleton.ancestors(head))
    for j in range(skeleton.num_joints):
        name = skeleton.names[j]
        if int(skeleton.parents[j]) not in spine or j in excluded or side_of(name) != side:
            continue
        chain = [j]
        while len(kids := [c for c in skeleton.children(chain[-1])
                           if not is_helper(skeleton.names[c])]) == 1:  # fmt: skip
            chain.append(kids[0])
        if len(chain) >= 2:
            return chain[-1]
    return -1
