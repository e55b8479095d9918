"""Options and result types of the two-bone solver (:mod:`ikrig.solvers.two_bone`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..._checks import check_real
from ...errors import InputError
from ...pose import Motion

ROOT_ROTATIONS = ("bend_plane", "shortest_arc")


@dataclass(frozen=True)
class TwoBoneOptions:
    """Options of the two-bone solver (validated on construction).

    Attributes:
        soften: ozz's soft-IK ratio in ``[0, 1]``; targets farther than ``soften * L``
            (``L`` the chain's length) are pulled in smoothly so the knee does not snap
            straight. ``1`` (default) turns softening off. A softened target is not
            reached: the end stops short of it, except just past ``soften * L``, where
            ozz's rule (slope 4/3 at its start) puts the end slightly *beyond* the
            target (for ``d - soften * L`` up to about ``0.38 (1 - soften) L``).
        max_stretch: ``>= 1``; bones may lengthen up to this factor (both by the same
            factor) to reach a target beyond the chain's reach. ``1`` (default) turns
            stretching off. Combined with ``soften`` the stretch starts at ``soften * L``
            and makes up for the softening, so the end reaches the target again.
        keep_end_rotation: pose level only (:func:`solve_two_bone`): the end joint keeps its
            world rotation, as engines do for feet (default True). If False the end keeps
            its local rotation and turns with the mid joint.
        tolerance: ``> 0``; ``reached`` means the end lies within ``tolerance * L`` of the
            target (default ``1e-5``).
        root_rotation: how the rotation deltas are chosen (the positions at weight 1 are the
            same either way). ``"bend_plane"`` (default, as ozz): the root delta takes the
            old thigh direction and bend plane onto the new ones, the mid joint turns about
            its bend normal (a pure hinge); the root delta is *not* the shortest arc
            between the thigh directions when the bend plane turns. ``"shortest_arc"``: the
            root delta is the minimal rotation taking the old root->mid direction onto the
            new one, and the mid joint's change (in the root's turned frame) is the minimal
            rotation of its bone onto the new one, which in general is not about the old
            bend normal. Weights blend these rotations, so weighted poses differ too.

    Raises:
        InputError: a value out of range or not a number.

    Example:
        >>> TwoBoneOptions(soften=0.97).max_stretch
        1.0
    """

    soften: float = 1.0
    max_stretch: float = 1.0
    keep_end_rotation: bool = True
    tolerance: float = 1e-5
    root_rotation: str = "bend_plane"

    def __post_init__(self) -> None:
        check_real(self.soften, "soften", 0.0, 1.0)
        check_real(self.max_stretch, "max_stretch", 1.0, math.inf)
        check_real(self.tolerance, "tolerance", 0.0, math.inf, open_low=True)
        if not isinstance(self.keep_end_rotation, (bool, np.bool_)):
            raise InputError(
                f"keep_end_rotation: expected True or False, got {self.keep_end_rotation!r}"
            )
        if self.root_rotation not in ROOT_ROTATIONS:
            raise InputError(
                f"root_rotation: expected one of {ROOT_ROTATIONS}, got {self.root_rotation!r}"
            )


@dataclass(frozen=True, eq=False)
class TwoBonePositions:
    """Result of :func:`two_bone_positions`, over the problem's batch shape ``(...)``.

    Attributes:
        mid_world: ``(..., 3)`` new mid-joint (knee) position, world space.
        end_world: ``(..., 3)`` new end-joint (ankle) position, world space.
        root_rotation_world: ``(..., 4)`` xyzw world-space delta of the root joint:
            ``new_root_rotation_world = root_rotation_world * old_root_rotation_world``.
            By default it carries the bend plane and is not the shortest arc from the old
            to the new root->mid direction (see ``TwoBoneOptions.root_rotation``).
        mid_rotation_world: ``(..., 4)`` xyzw world-space delta of the mid joint (it includes
            the root's): ``new_mid_rotation_world = mid_rotation_world * old``.
        reached: ``(...)`` bool, the new end lies within ``tolerance * L`` of the target.
        stretch: ``(...)`` factor applied to both bone lengths (1 unless ``max_stretch > 1``;
            with ``weight < 1`` the blended ``1 + weight (s - 1)`` that was applied).

    Both deltas have ``w >= 0``; a degenerate chain gives identity deltas. For batches
    below ``PARALLEL_MIN`` the float arrays are views of one ``(..., 15)`` buffer (one
    allocation per call); copy one before resizing it in place.
    """

    mid_world: np.ndarray
    end_world: np.ndarray
    root_rotation_world: np.ndarray
    mid_rotation_world: np.ndarray
    reached: np.ndarray
    stretch: np.ndarray


class TwoBonePositionsOnly(NamedTuple):
    """Result of :func:`two_bone_positions_only`, over the batch shape ``(...)``.

    Attributes:
        mid_world: ``(..., 3)`` new mid-joint (knee) positions, world space.
        end_world: ``(..., 3)`` new end-joint (ankle) positions, world space.
        reached: ``(...)`` bool, the end lies within ``tolerance * L`` of the target.
    """

    mid_world: np.ndarray
    end_world: np.ndarray
    reached: np.ndarray


class TwoBoneSoA(NamedTuple):
    """Result of :func:`two_bone_positions_soa` (component-first arrays).

    Attributes:
        mid_world: ``(3, N)`` new mid-joint positions, world space.
        end_world: ``(3, N)`` new end-joint positions, world space.
        reached: ``(N,)`` bool, the end lies within ``tolerance * L`` of the target.
    """

    mid_world: np.ndarray
    end_world: np.ndarray
    reached: np.ndarray


@dataclass(frozen=True, eq=False)
class TwoBoneResult:
    """Result of :func:`solve_two_bone`.

    Attributes:
        motion: the new :class:`~ikrig.pose.Motion` (batch shape: the motion's and the
            target's, broadcast). Only the root and mid local rotations changed (and the
            end's, with ``keep_end_rotation``), plus the mid and end local translations when
            a bone stretched.
        reached: ``(...)`` bool, the end lies within ``tolerance * L`` of the target.
        mid_world: ``(..., 3)`` new mid-joint position, world space.
        end_world: ``(..., 3)`` new end-joint position, world space.
    """

    motion: Motion
    reached: np.ndarray
    mid_world: np.ndarray
    end_world: np.ndarray
