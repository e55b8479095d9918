"""Options of the whole-body solver (:class:`BodyOptions`).

Lengths are fractions of the skeleton's *reach* ``L``: the summed rest bone lengths of its
longest root-to-leaf path (end sites included), so that one option value means the same on a
skeleton in centimetres and one in metres. Angles are radians.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..._checks import check_iterations, check_real, check_tolerance
from ...constraints import Constraint
from ...errors import InputError

__all__ = ["BodyOptions", "ROOT_MODES"]

ROOT_MODES = ("free", "translate", "pinned")
"""``free``: the root joints translate and turn; ``translate``: they translate only (their
rotation is kept, as a locked joint's); ``pinned``: they stay where the input has them but
turn (lock them too to keep their rotation).

In ``free`` mode a *reference root* turns as in ``translate``: when the goals' lowest
common ancestor (the body's base, a pelvis) lies below the root and turns freely (not
locked, no constraint), the root and the joints between it and the base keep their input
rotations unless one of them is in a look-at chain (a rig's floor-level root, a glTF
armature node). The root's move and the base's turn reach every placement their turns
would, so the goals are met as before; the pelvis turns instead of sharing its turn with
a root that the prior would swing away."""


def _joint_key(key, name: str) -> str | int:
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (str, int, np.integer)):
        raise InputError(f"{name}: expected joint names or indices as keys, got {key!r}")
    return key if isinstance(key, str) else int(key)


def _stiffness(value):
    """``None``, a read-only mapping joint -> stiffness ``>= 0`` or a ``(J,)`` float64 array."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            out[_joint_key(k, "stiffness")] = check_real(v, f"stiffness[{k!r}]", 0.0, np.inf)
        return out
    a = np.array(value, dtype=np.float64) if not isinstance(value, str) else None
    if a is None or a.ndim != 1 or not (np.isfinite(a).all() and (a >= 0).all()):
        raise InputError("stiffness: expected None, {joint: k >= 0} or a (J,) array of k >= 0")
    a.flags.writeable = False
    return a


def _constraints(value) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError("constraints: expected a mapping {joint: Constraint}")
    out = {}
    for k, c in value.items():
        if c is not None and not isinstance(c, Constraint):
            raise InputError(
                f"constraints[{k!r}]: expected a constraint from ikrig.constraints or None,"
                f" got {type(c).__name__}"
            )
        out[_joint_key(k, "constraints")] = c
    return out


@dataclass(frozen=True)
class BodyOptions:
    """Options of :func:`~ikrig.solvers.body.solve_body` (checked on construction; joint
    names are checked against the skeleton when solving).

    Attributes:
        max_iterations: Levenberg-Marquardt iterations per frame at most (0: only measure).
        tolerance: a position goal is reached within ``tolerance * L``.
        rotation_tolerance: an orientation, aim or look-at goal within this angle, radians.
        stiffness: how strongly each joint keeps its input (preferred) rotation: ``None``
            (1 for every joint), ``{joint: k}`` (the others 1) or ``(J,)`` numbers ``>= 0``.
            Turning joint ``j`` by ``theta`` radians costs as much as a position residual of
            ``prior_weight * k_j * L * theta``, the same per radian for every joint (as a
            posture task's): what the goals leave free is shared out as the least total
            turn. A root's ``k`` also holds its translation (a move by ``L`` costs as a turn
            of one radian).
        constraints: ``{joint: Constraint}`` (``Cone``, ``Hinge``, ``TwistLimit`` of
            :mod:`ikrig.constraints`) relative to the skeleton's rest frames; the bone of a
            joint is its child with the longest offset (its end site for a leaf).
        locked: joints whose local rotation stays as the input has it.
        root: ``"free"``, ``"translate"`` or ``"pinned"`` (:data:`ROOT_MODES`).
        warm_start: frame ``f`` of a clip (the last batch axis) starts from frame
            ``f - 1``'s correction applied to its own input; else from its input.
        prior_weight: ``mu`` above: the scale of the pull toward the input pose. Small, so
            that reachable goals are met (their bias is about ``mu**2 (L / l)**2 l`` per
            radian of turn, ``l`` the lever arm of the goals on a joint: ``2.5e-5 L`` for
            ``l = L / 10``) while the prior settles everything the goals leave free. At
            ``1e-4`` that was decided by tolerance-level residuals (a pinned wrist's chest
            jumped 0.5 rad in a frame); at ``1e-3`` the bias met the tolerance on short
            levers and such frames ran to the iteration limit.
        max_step: largest joint turn per iteration, radians.
        init_from_positions: start a frame whose joints and their children have position
            goals from the rotations that point each such joint's bones at its children's
            targets (exact when bone lengths match), and whose joints have orientation goals
            from those orientations, when that is nearer the goals.
        temporal_weight: ``tau``: a second pull, toward the frame's warm start (the previous
            frame's correction applied to this frame's input), per radian as the prior's
            (``tau * k_j * L * theta``); only with ``warm_start``, along the last batch axis.
            What the goals leave free then changes little from frame to frame (as a
            velocity-damped differential IK's does) instead of settling at the input's
            optimum each frame; the result depends on the frames before. On a frame with no
            previous solution (the first, or after a frame returned as its input) both pulls
            are toward the input. 0: the prior alone, each frame's optimum.
            The default, ``3e-4``, keeps what the goals leave free from jumping where the
            optimum moves fast (a straight knee's bend plane, a swivel that flips): six
            trackers, the rest pose as the input, 300 frames of each shared clip
            (``benchmarks/bench_body.py``'s setting), the largest acceleration of a joint
            without a goal, % of a leg per frame squared, against the clip's own: mocapbank
            19.1 at ``0``, 2.8 at ``2e-4``, 1.4 at ``3e-4`` (the clip 0.7, mink 7.1);
            aalto 16.8, 6.8, 5.1 (1.5; mink 19.0); reactidle 26.0, 2.2, 0.8 (0.9; 2.1);
            cmu_131 3.9, 2.2, 1.5 (1.3; 3.9). The mean joint error against the clip moves by
            at most 1.5 % of itself (a ratio to mink's on cmu_01_01 1.0026 at ``0``, 1.0044
            at ``3e-4``; pybvh 1.0055, 0.9971; mocapbank 0.9598, 0.9742).

    Raises:
        InputError: a value out of range or of the wrong type.

    Example:
        >>> BodyOptions(root="pinned", locked=("Hips",)).root
        'pinned'
    """

    max_iterations: int = 100
    tolerance: float = 1e-4
    rotation_tolerance: float = 1e-3
    stiffness: Mapping[str | int, float] | ArrayLike | None = None
    constraints: Mapping[str | int, Constraint | None] | None = None
    locked: Sequence[str | int] = ()
    root: str = "free"
    warm_start: bool = True
    prior_weight: float = 5e-4
    max_step: float = 0.5
    init_from_positions: bool = True
    temporal_weight: float = 3e-4

    def __post_init__(self) -> None:
        s = object.__setattr__
        s(self, "max_iterations", check_iterations(self.max_iterations))
        s(self, "tolerance", check_tolerance(self.tolerance))
        s(
            self,
            "rotation_tolerance",
            check_tolerance(self.rotation_tolerance, "rotation_tolerance"),
        )
        s(self, "stiffness", _stiffness(self.stiffness))
        s(self, "constraints", _constraints(self.constraints))
        if isinstance(self.locked, (str, int, np.integer)):
            raise InputError("locked: expected a sequence of joint names or indices")
        s(self, "locked", tuple(_joint_key(j, "locked") for j in self.locked))
        if self.root not in ROOT_MODES:
            raise InputError(f"root: expected one of {', '.join(ROOT_MODES)}, got {self.root!r}")
        for name in ("warm_start", "init_from_positions"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InputError(f"{name}: expected True or False")
            s(self, name, bool(getattr(self, name)))
        s(self, "prior_weight", check_real(self.prior_weight, "prior_weight", 0.0, 1e6))
        s(self, "temporal_weight", check_real(self.temporal_weight, "temporal_weight", 0.0, 1e6))
        s(self, "max_step", check_real(self.max_step, "max_step", 0.0, 10.0, open_low=True))
