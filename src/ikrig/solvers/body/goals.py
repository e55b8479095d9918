"""The goals of the whole-body solver (:func:`~ikrig.solvers.body.solve_body`).

Each goal names one joint (by name or index) and holds world targets over a batch shape
that broadcasts with the motion's: ``(3,)`` for one target for every frame, ``(F, 3)`` for
one per frame, ``(C, F, 3)`` for a crowd. A target row that is all NaN means "no goal that
frame" (a NaN among finite numbers is an error). ``weight`` is a number ``>= 0`` or an
array of them over the same kind of batch shape; 0 also means "no goal that frame". A weight
below 1 also blends the goal's target from where the input pose has it (the joint's point,
its rotation, the point its forward axis meets at the target's distance) toward the given
one, as FinalIK's effector weights do, so a weight that ramps from 0 to 1 blends a goal in
without a pop; above 1 a weight only weighs a goal against the others.

Units: positions in the data's units, rotations as unit quaternions ``x, y, z, w``, directions
in the joint's own frame (the frame whose rotation is the joint's world rotation from
:func:`ikrig.pose.fk`: its local rotation turns its children's offsets).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..._checks import as_float, off_unit, unit_vector
from ...errors import InputError
from ...skeleton import Skeleton

__all__ = [
    "AimGoal",
    "Goal",
    "KeepGoal",
    "LookAtGoal",
    "OrientationGoal",
    "PositionGoal",
    "goals_from_targets",
]


def _rows(value, name: str, last: int) -> np.ndarray:
    """Target rows ``(..., last)`` as float64: each row all finite or all NaN, else
    InputError naming ``name`` and the first bad row."""
    a = as_float(value, name, last=last, dtype=np.float64, finite=False)
    nan = np.isnan(a)
    bad = (nan.any(-1) & ~nan.all(-1)) | np.isinf(a).any(-1)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"{name}: NaN or infinite value inside a row at index {where} (a row"
                         " is all finite, or all NaN for no goal that frame)")  # fmt: skip
    out = a.copy()
    out.flags.writeable = False
    return out


def _quat_rows(value, name: str) -> np.ndarray:
    """Unit quaternion rows ``(..., 4)`` (all-NaN rows allowed), normalised; those off
    unit length by more than :data:`ikrig._checks.UNIT_TOLERANCE` refused."""
    q = _rows(value, name, 4)
    n = np.sqrt(np.einsum("...i,...i->...", q, q))
    off = off_unit(q) & ~np.isnan(n)
    if off.any():
        where = tuple(int(i) for i in np.argwhere(off)[0])
        raise InputError(f"{name}: not a unit quaternion (length {n[where]:.6g}) at index {where}")
    out = q / n[..., None]
    out.flags.writeable = False
    return out


def _weight(value, name: str = "weight") -> np.ndarray:
    """A weight ``>= 0``: a number or an array of them (read-only float64)."""
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name}: must be a number >= 0 or an array of them, got {value!r}")
    w = as_float(value, name, dtype=np.float64, finite=False)
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise InputError(f"{name}: must be finite and >= 0")
    w = w.copy()
    w.flags.writeable = False
    return w


def _joint(value, name: str = "joint") -> str | int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, int, np.integer)):
        raise InputError(f"{name}: expected a joint name or index, got {value!r}")
    return value if isinstance(value, str) else int(value)


def _set(obj, name: str, value) -> None:
    object.__setattr__(obj, name, value)


def _restore(cls: type, fields: dict) -> Goal:
    """A goal of type ``cls`` with ``fields`` (already checked: it was pickled)."""
    goal: Goal = object.__new__(cls)
    for name, value in fields.items():
        _set(goal, name, value)
    return goal


class Goal:
    """Base of the goal records: a joint (name or index) and a weight (see the module notes).
    Goals are immutable; they are checked when made, their joint when solved."""

    __slots__ = ("joint", "weight")
    joint: str | int
    weight: np.ndarray

    def __init__(self, joint: str | int, weight: float | ArrayLike = 1.0) -> None:
        _set(self, "joint", _joint(joint))
        _set(self, "weight", _weight(weight))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __reduce__(self) -> tuple:
        """Pickle by fields (goals travel to worker processes), rebuilt without checks."""
        names = [n for c in type(self).__mro__ for n in getattr(c, "__slots__", ())]
        return (_restore, (type(self), {n: getattr(self, n) for n in names}))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.joint!r})"


class PositionGoal(Goal):
    """The joint (or a point fixed to it) at a world point.

    Attributes:
        joint: name or index.
        target_world: ``(..., 3)`` world positions; all-NaN rows: no goal that frame.
        weight: number or array ``>= 0``.
        offset_local: ``(3,)`` a point in the joint's frame instead of the joint itself (an
            end site: ``skeleton.end_site_offsets[k]`` on ``skeleton.end_site_parents[k]``);
            ``None``: the joint.
        strength: number or array ``>= 0`` (over the batch, as ``weight``): scales the goal
            against the others without blending its target, as ``weight`` below 1 does. A
            *hint* (``ikrig.app.tracking`` uses 0.02) gives way to every full goal and
            still settles what they leave free, as the prior does, only much harder.

    Example:
        >>> PositionGoal("hand", [0.5, 1.2, 0.3]).target_world.shape
        (3,)
    """

    __slots__ = ("target_world", "offset_local", "strength")
    target_world: np.ndarray
    offset_local: tuple[float, float, float] | None
    strength: np.ndarray

    def __init__(
        self,
        joint: str | int,
        target_world: ArrayLike,
        weight: float | ArrayLike = 1.0,
        *,
        offset_local: ArrayLike | None = None,
        strength: float | ArrayLike = 1.0,
    ) -> None:
        super().__init__(joint, weight)
        _set(self, "target_world", _rows(target_world, "target_world", 3))
        _set(self, "strength", _weight(strength, "strength"))
        off = None
        if offset_local is not None:
            a = as_float(offset_local, "offset_local", dtype=np.float64)
            if a.shape != (3,):
                raise InputError(f"offset_local: expected 3 numbers, got shape {a.shape}")
            off = (float(a[0]), float(a[1]), float(a[2]))
        _set(self, "offset_local", off)


class OrientationGoal(Goal):
    """The joint's world rotation (its frame's, as :func:`ikrig.pose.fk` gives it).

    Attributes:
        joint: name or index.
        target_world: ``(..., 4)`` unit quaternions ``x, y, z, w``; all-NaN rows: no goal.
        weight: number or array ``>= 0``. An orientation residual of one radian weighs like
            a position residual of the skeleton's reach ``L`` (see ``BodyOptions``).

    Example:
        >>> OrientationGoal("head", [0, 0, 0, 1]).target_world.tolist()
        [0.0, 0.0, 0.0, 1.0]
    """

    __slots__ = ("target_world",)
    target_world: np.ndarray

    def __init__(
        self, joint: str | int, target_world: ArrayLike, weight: float | ArrayLike = 1.0
    ) -> None:
        super().__init__(joint, weight)
        _set(self, "target_world", _quat_rows(target_world, "target_world"))


class KeepGoal(Goal):
    """The joint stays where the input pose has it (a planted foot), frame by frame.

    Example:
        >>> KeepGoal("LeftFoot", weight=2.0).joint
        'LeftFoot'
    """

    __slots__ = ()


class AimGoal(Goal):
    """A local axis of the joint points at a world point, its up axis turned toward a pole.

    Attributes:
        joint: name or index.
        target_world: ``(..., 3)`` the point to aim at; all-NaN rows: no goal that frame.
        forward_local: ``(3,)`` the axis, in the joint's frame (normalised).
        up_local: ``(3,)`` or ``None``: an axis of the joint's frame turned toward the pole
            (about the forward axis); given with ``pole_world``.
        pole_world: ``(..., 3)`` or ``None``: a world point the up axis leans toward.
        weight: number or array ``>= 0``; the residual is the chord between the unit
            forward axis and the unit direction to the target, times the reach ``L``.

    Example:
        >>> AimGoal("Head", [0, 1.6, 2.0], forward_local=[0, 0, 1]).forward_local
        (0.0, 0.0, 1.0)
    """

    __slots__ = ("target_world", "forward_local", "up_local", "pole_world")
    target_world: np.ndarray
    forward_local: tuple[float, float, float]
    up_local: tuple[float, float, float] | None
    pole_world: np.ndarray | None

    def __init__(
        self,
        joint: str | int,
        target_world: ArrayLike,
        forward_local: ArrayLike,
        up_local: ArrayLike | None = None,
        pole_world: ArrayLike | None = None,
        weight: float | ArrayLike = 1.0,
    ) -> None:
        super().__init__(joint, weight)
        _set(self, "target_world", _rows(target_world, "target_world", 3))
        fwd = unit_vector(forward_local, "forward_local")
        _set(self, "forward_local", fwd)
        if (up_local is None) != (pole_world is None):
            raise InputError("up_local, pole_world: give both or neither")
        up, pole = None, None
        if up_local is not None:
            up = unit_vector(up_local, "up_local")
            if abs(float(np.dot(up, fwd))) > 1 - 1e-6:
                raise InputError("up_local: must not be parallel to forward_local")
            pole = _rows(pole_world, "pole_world", 3)
        _set(self, "up_local", up)
        _set(self, "pole_world", pole)


class LookAtGoal(Goal):
    """The joint (a head) looks at a world point, the turn shared with its ancestors.

    The joint's ``forward_local`` axis is aimed at ``target_world`` as an :class:`AimGoal`
    would, but only the joints of ``chain`` (ancestors of ``joint``) and the joint itself
    turn for it, each by its share: ``chain_weights`` (one per chain joint, then the
    joint's own as the last entry), relative shares ``> 0``; ``None``: the shares grow
    linearly from the chain's first joint to the head (``1, 2, ..., n + 1``).

    Example:
        >>> g = LookAtGoal("Head", [0, 1.6, 2], [0, 0, 1], chain=("Spine", "Neck"))
        >>> g.chain_weights
        (1.0, 2.0, 3.0)
    """

    __slots__ = ("target_world", "forward_local", "chain", "chain_weights")
    target_world: np.ndarray
    forward_local: tuple[float, float, float]
    chain: tuple[str | int, ...]
    chain_weights: tuple[float, ...]

    def __init__(
        self,
        joint: str | int,
        target_world: ArrayLike,
        forward_local: ArrayLike,
        chain: Sequence[str | int] = (),
        chain_weights: Sequence[float] | None = None,
        weight: float | ArrayLike = 1.0,
    ) -> None:
        super().__init__(joint, weight)
        _set(self, "target_world", _rows(target_world, "target_world", 3))
        _set(self, "forward_local", unit_vector(forward_local, "forward_local"))
        if isinstance(chain, (str, int, np.integer)):
            raise InputError("chain: expected a sequence of joint names or indices")
        names = tuple(_joint(j, "chain") for j in chain)
        _set(self, "chain", names)
        n = len(names) + 1
        if chain_weights is None:
            _set(self, "chain_weights", tuple(float(i) for i in range(1, n + 1)))
            return
        w = as_float(chain_weights, "chain_weights", dtype=np.float64, finite=False)
        if w.shape != (n,) or not (np.isfinite(w).all() and (w > 0).all()):
            raise InputError(f"chain_weights: expected {n} finite numbers > 0 (the chain's,"
                             f" then the joint's own), got {chain_weights!r}")  # fmt: skip
        _set(self, "chain_weights", tuple(float(x) for x in w))


def goals_from_targets(
    skeleton: Skeleton,
    positions_world: ArrayLike | None,
    rotations_world: ArrayLike | None,
    position_weight: float | ArrayLike = 1.0,
    rotation_weight: float | ArrayLike = 1.0,
) -> list[Goal]:
    """Goals from per-frame targets of every joint (the ``ikrig fit`` targets file).

    Args:
        skeleton: the :class:`~ikrig.skeleton.Skeleton` the targets belong to.
        positions_world: ``(..., J, 3)`` world positions, NaN where a joint has no position
            goal that frame, or ``None``.
        rotations_world: ``(..., J, 4)`` world rotations ``x, y, z, w``, NaN where none, or
            ``None``.
        position_weight, rotation_weight: weights of every position / orientation goal
            (numbers or arrays over the targets' batch shape).

    Returns:
        A :class:`PositionGoal` for each joint with a position in some frame, then an
        :class:`OrientationGoal` for each joint with a rotation in some frame.

    Raises:
        InputError: shapes that do not match the skeleton, NaN inside a row, non-unit
            quaternions.

    Example:
        >>> sk = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [1, 0, 0]])
        >>> pos = np.full((5, 2, 3), np.nan)
        >>> pos[:, 1] = [1.0, 0.5, 0.0]
        >>> [type(g).__name__ for g in goals_from_targets(sk, pos, None)]
        ['PositionGoal']
    """
    J = skeleton.num_joints
    out: list[Goal] = []
    for name, value, last in (("positions_world", positions_world, 3),
                              ("rotations_world", rotations_world, 4)):  # fmt: skip
        if value is None:
            continue
        a = as_float(value, name, last=last, dtype=np.float64, finite=False)
        if a.ndim < 2 or a.shape[-2] != J:
            raise InputError(f"{name}: expected shape (..., {J}, {last}), got {a.shape}")
        rows = _rows(a, name, last) if last == 3 else _quat_rows(a, name)
        given = ~np.isnan(rows).all(-1).reshape(-1, J).all(0)
        for j in np.flatnonzero(given):
            joint = skeleton.names[j]
            if last == 3:
                out.append(PositionGoal(joint, rows[..., j, :], position_weight))
            else:
                out.append(OrientationGoal(joint, rows[..., j, :], rotation_weight))
    return out
