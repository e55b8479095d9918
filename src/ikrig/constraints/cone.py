"""Ball-and-socket joints: :class:`Cone`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._checks import in_range, unit_vector
from ..kernels import constraints as K
from .base import Constraint, _bone_dir, _row


@dataclass(frozen=True)
class Cone(Constraint):
    """Ball-and-socket: the bone stays within ``limit`` radians of the cone axis; twist free.

    Attributes:
        limit: the cone's half-angle in radians, ``0 <= limit <= pi``.
        axis: the cone axis in the parent joint's frame, or ``None`` (default): the parent
            bone's direction (the bone may deviate by ``limit`` from straight on), and for
            the chain root the bone's rest direction.

    Raises:
        InputError: a limit outside ``[0, pi]`` or a zero axis.

    Example:
        >>> cone = Cone.degrees(30)
        >>> q = [0.0, 0.0, np.sin(0.5), np.cos(0.5)]  # bone turned 1 rad about +Z
        >>> q2 = cone.project(q, [1.0, 0.0, 0.0])
        >>> round(float(np.degrees(2 * np.arctan2(q2[2], q2[3]))), 6)
        30.0
    """

    limit: float
    axis: tuple[float, float, float] | None = None

    kind = K.KIND_CONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "limit", in_range(self.limit, "limit", 0.0, math.pi))
        if self.axis is not None:
            object.__setattr__(self, "axis", unit_vector(self.axis, "axis"))

    @classmethod
    def degrees(cls, limit_deg: float, axis: tuple[float, float, float] | None = None) -> Cone:
        """The cone from a half-angle in degrees."""
        return cls(math.radians(limit_deg), axis)

    def params(
        self, bone_local: ArrayLike, parent_bone_local: ArrayLike | None = None
    ) -> np.ndarray:
        b = _bone_dir(bone_local)
        if self.axis is not None:
            a = np.asarray(self.axis)
        elif parent_bone_local is not None:
            a = _bone_dir(parent_bone_local)
        else:
            a = b
        shape = np.broadcast_shapes(b.shape[:-1], a.shape[:-1])
        return _row(shape, math.cos(self.limit), math.sin(self.limit), a, b)
