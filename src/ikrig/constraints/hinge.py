"""Hinge joints: :class:`Hinge`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._checks import unit_vector
from ..errors import InputError
from ..kernels import constraints as K
from .base import Constraint, _angle_range, _bone_dir, _row, _set_angle_range


@dataclass(frozen=True)
class Hinge(Constraint):
    """Rotation only about one axis, optionally within an angle range.

    Allowed local rotations are ``R(axis, theta)`` with ``theta`` in ``[min_angle,
    max_angle]`` (modulo 2 pi), ``theta = 0`` being the rest pose. ``axis`` is given in the
    parent joint's frame (a rotation's axis is the same in the joint's own frame).

    Attributes:
        axis: the hinge axis (normalised on construction).
        min_angle, max_angle: radians, both ``None`` (free hinge) or both given with
            ``-2 pi <= min_angle <= max_angle <= 2 pi``.

    Raises:
        InputError: zero axis, only one limit, reversed or non-finite limits.

    Example:
        >>> knee = Hinge((1.0, 0.0, 0.0), 0.0, 2.5)
        >>> q = [0.0, 0.3, 0.0, 0.9539392]  # about +Y: not allowed
        >>> np.round(knee.project(q, [0.0, -1.0, 0.0]), 4)
        array([0., 0., 0., 1.])
    """

    axis: tuple[float, float, float]
    min_angle: float | None = None
    max_angle: float | None = None

    kind = K.KIND_HINGE

    def __post_init__(self) -> None:
        object.__setattr__(self, "axis", unit_vector(self.axis, "axis"))
        if (self.min_angle is None) != (self.max_angle is None):
            raise InputError("Hinge: give both min_angle and max_angle, or neither (free)")
        if self.min_angle is not None:
            _set_angle_range(self)

    @classmethod
    def degrees(
        cls,
        axis: tuple[float, float, float],
        min_deg: float | None = None,
        max_deg: float | None = None,
    ) -> Hinge:
        """The hinge from limits in degrees."""
        lo = None if min_deg is None else math.radians(min_deg)
        hi = None if max_deg is None else math.radians(max_deg)
        return cls(axis, lo, hi)

    def params(
        self, bone_local: ArrayLike, parent_bone_local: ArrayLike | None = None
    ) -> np.ndarray:
        b = _bone_dir(bone_local)
        if self.min_angle is None or self.max_angle is None:
            lo, hi = -K.HINGE_FREE, K.HINGE_FREE
        else:
            lo, hi = _angle_range(self.min_angle, self.max_angle)
        return _row(b.shape[:-1], lo, hi, self.axis, b)
