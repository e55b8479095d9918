"""Chains of joints: which joints a chain solver moves, and moving results back into a pose.

A chain runs from its root joint down the hierarchy to its end effector: ``joints[0]`` is the
chain root (it may rotate but does not move), ``joints[-1]`` is the effector (it is moved by
the joints above it; its own rotation is not solved). A chain of ``n + 1`` joints has ``n``
bones and ``n`` solved joints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import HierarchyError, InputError
from ..math.quat import quat_between, quat_conj, quat_mul
from ..pose import Motion
from ..skeleton import Skeleton


@dataclass(frozen=True, eq=False)
class Chain:
    """A chain of a :class:`~ikrig.skeleton.Skeleton`'s joints with optional joint constraints.

    Attributes:
        joints: ``n + 1`` joint indices from the chain root to the end effector, each the
            parent of the next.
        constraints: ``n`` entries, one per solved joint (``joints[:-1]``): a constraint object
            from :mod:`ikrig.constraints` or ``None`` for a free joint. Default: all free.

    Example:
        >>> from ikrig.skeleton import Skeleton
        >>> sk = Skeleton(("a", "b", "c"), [-1, 0, 1], [[0, 0, 0], [1, 0, 0], [1, 0, 0]])
        >>> Chain.between(sk, "a", "c").joints
        (0, 1, 2)
    """

    joints: tuple[int, ...]
    constraints: tuple = ()

    def __post_init__(self) -> None:
        joints = tuple(int(j) for j in self.joints)
        if len(joints) < 2:
            raise InputError(f"chain: needs at least 2 joints (one bone), got {len(joints)}")
        cons = tuple(self.constraints) if self.constraints else (None,) * (len(joints) - 1)
        if len(cons) != len(joints) - 1:
            raise InputError(
                f"chain: {len(cons)} constraints for {len(joints) - 1} solved joints"
                " (one per joint from the root to the joint before the effector)"
            )
        object.__setattr__(self, "joints", joints)
        object.__setattr__(self, "constraints", cons)

    @classmethod
    def between(
        cls,
        skeleton: Skeleton,
        root: str | int,
        effector: str | int,
        constraints: Sequence | None = None,
    ) -> Chain:
        """The chain from joint ``root`` down to joint ``effector`` (names or indices)."""
        return cls(skeleton.chain(root, effector), tuple(constraints or ()))

    @property
    def num_bones(self) -> int:
        return len(self.joints) - 1

    def check(self, skeleton: Skeleton) -> None:
        """Raise HierarchyError unless each joint is the parent of the next in ``skeleton``."""
        for a, b in zip(self.joints, self.joints[1:]):
            if not (0 <= b < skeleton.num_joints) or skeleton.parents[b] != a:
                raise HierarchyError(f"chain: joint {b} is not a child of joint {a}")


def chain_world(motion: Motion, chain: Chain) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World frames of a chain in a pose.

    Returns:
        ``rotations_world (..., n + 1, 4)``, ``positions_world (..., n + 1, 3)`` of the chain's
        joints, and ``parent_rotation_world (..., 4)``: the world rotation of the chain root's
        parent (identity when the root is a skeleton root).
    """
    chain.check(motion.skeleton)
    rot_w, pos_w = motion.fk()
    idx = list(chain.joints)
    parent = int(motion.skeleton.parents[chain.joints[0]])
    if parent >= 0:
        parent_rot = rot_w[..., parent, :]
    else:
        parent_rot = np.zeros(motion.batch_shape + (4,), dtype=motion.dtype)
        parent_rot[..., 3] = 1
    return rot_w[..., idx, :], pos_w[..., idx, :], parent_rot


def rotations_from_positions(
    rotations_world: np.ndarray, positions_old: np.ndarray, positions_new: np.ndarray
) -> np.ndarray:
    """New world rotations of solved joints whose bones were moved by a position solver.

    Each joint turns by the shortest arc taking its old bone direction to the new one, so its
    twist about the bone is kept.

    Args:
        rotations_world: ``(..., n + 1, 4)`` xyzw old world rotations of the chain joints.
        positions_old: ``(..., n + 1, 3)`` old world positions.
        positions_new: ``(..., n + 1, 3)`` new world positions (same bone lengths).

    Returns:
        ``(..., n, 4)`` new world rotations of ``joints[:-1]``. A zero-length bone keeps its
        joint's rotation.
    """
    old_dir = positions_old[..., 1:, :] - positions_old[..., :-1, :]
    new_dir = positions_new[..., 1:, :] - positions_new[..., :-1, :]
    return quat_mul(quat_between(old_dir, new_dir), rotations_world[..., :-1, :])


def write_chain(
    motion: Motion, chain: Chain, rotations_world_new: ArrayLike, keep_effector_world: bool = True
) -> tuple[Motion, np.ndarray]:
    """A new Motion with the chain's solved joints set to new world rotations.

    Args:
        motion: the pose the chain was solved from.
        chain: the chain.
        rotations_world_new: ``(..., n, 4)`` xyzw new world rotations of ``chain.joints[:-1]``.
        keep_effector_world: keep the effector joint's world rotation (else its local one).

    Returns:
        ``(motion, rotations_local (..., n, 4))``: the new Motion and the new local rotations
        of the solved joints.
    """
    rot_w, _, parent_rot = chain_world(motion, chain)
    rl = motion.rotations_local.copy()
    new_w = np.asarray(rotations_world_new, dtype=motion.dtype)
    parents_w = np.concatenate([parent_rot[..., None, :], new_w[..., :-1, :]], axis=-2)
    local = quat_mul(quat_conj(parents_w), new_w)
    idx = list(chain.joints[:-1])
    rl[..., idx, :] = local
    if keep_effector_world:
        eff = chain.joints[-1]
        rl[..., eff, :] = quat_mul(quat_conj(new_w[..., -1, :]), rot_w[..., -1, :])
    new = motion.replace(rotations_local=rl)
    return new, new.rotations_local[..., idx, :]  # as the Motion keeps them (unit length)


def bone_vectors_local(skeleton: Skeleton, chain: Chain) -> np.ndarray:
    """``(n, 3)`` each solved joint's bone (offset of the next chain joint) in its own frame."""
    return skeleton.offsets[list(chain.joints[1:])]


__all__ = [
    "Chain",
    "bone_vectors_local",
    "chain_world",
    "rotations_from_positions",
    "write_chain",
]
