"""Twist limits: :class:`TwistLimit`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..kernels import constraints as K
from .base import Constraint, _angle_range, _bone_dir, _row, _set_angle_range


@dataclass(frozen=True)
class TwistLimit(Constraint):
    """Limit the twist about the bone axis; swing is free.

    The twist of a local rotation ``q`` is the angle of its swing-twist decomposition about
    the bone axis ``b`` (the bone's direction in the joint's own frame):
    ``2 atan2(q_xyz . b, q_w)``, 0 in the rest pose. Allowed: twist in ``[min_angle,
    max_angle]`` (modulo 2 pi).

    Position-based solvers (FABRIK, follow) only see bone directions; they enforce a twist
    limit by snapping each joint's rotation (see :mod:`ikrig.kernels.constraints`).

    Attributes:
        min_angle, max_angle: radians, ``-2 pi <= min_angle <= max_angle <= 2 pi``.

    Raises:
        InputError: non-finite, out-of-range or reversed angles.

    Example:
        >>> lim = TwistLimit.degrees(-45, 45)
        >>> q = [np.sin(0.75), 0.0, 0.0, np.cos(0.75)]  # 1.5 rad about the bone (+X)
        >>> np.round(lim.project(q, [1.0, 0.0, 0.0]), 4)
        array([0.3827, 0.    , 0.    , 0.9239])
    """

    min_angle: float
    max_angle: float

    kind = K.KIND_TWIST

    def __post_init__(self) -> None:
        _set_angle_range(self)

    @classmethod
    def degrees(cls, min_deg: float, max_deg: float) -> TwistLimit:
        """The limit from angles in degrees."""
        return cls(math.radians(min_deg), math.radians(max_deg))

    def params(
        self, bone_local: ArrayLike, parent_bone_local: ArrayLike | None = None
    ) -> np.ndarray:
        b = _bone_dir(bone_local)
        lo, hi = _angle_range(self.min_angle, self.max_angle)
        return _row(b.shape[:-1], lo, hi, b, b)
