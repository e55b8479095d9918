"""2D angle limits: :class:`AngleLimit2D`."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._checks import unit_vector
from ..kernels import constraints as K
from .base import Constraint, _angle_range, _bone_dir, _row, _set_angle_range


@dataclass(frozen=True)
class AngleLimit2D(Constraint):
    """Limit the signed angle between a bone and its parent bone in the chain's plane.

    The angle is measured from the parent bone to the bone, counter-clockwise about
    ``normal`` (a unit vector in the parent joint's frame, ``+Z`` by default: the XY plane
    of a 2D chain). For the chain root the bone's rest direction stands in for the parent
    bone, so the angle is the root's rotation from its rest pose. In 3D the joint acts as a
    hinge about ``normal``: allowed local rotations are rotations about ``normal`` whose
    resulting angle lies in ``[min_angle, max_angle]``.

    An angle outside the range is clamped to the **nearer end around the circle**, not on the
    number line: the range ``[10, 20]`` degrees takes -100 to 10 (110 degrees away, against
    120 from 20) but -170 to 20 (170 degrees away, against 180 from 10), although -170 lies
    below 10. Angles are only defined modulo 360 degrees, so the nearer end is the smallest
    rotation into the range, the exact nearest allowed rotation that :meth:`project` returns
    for every solver; with an asymmetric range it can be either end. An angle exactly
    opposite the middle of the forbidden arc (equally far from both ends) goes to
    ``min_angle``. This rule places an angle that starts outside its limits (``ccd_2d``'s
    start angles, and every projection in CCD, FABRIK, follow and DLS); ``ccd_2d`` stops a
    turn of an angle inside its limits at the end it runs into instead, since a joint turning
    continuously cannot pass through the forbidden arc.

    Attributes:
        min_angle, max_angle: radians, ``-2 pi <= min_angle <= max_angle <= 2 pi``; a range of
            ``2 pi`` or more means no limit (a free hinge).
        normal: the plane normal, in the parent joint's frame (normalised on construction).

    Raises:
        InputError: non-finite, out-of-range or reversed angles; a zero normal.

    Example:
        >>> lim = AngleLimit2D.degrees(-90, 90)
        >>> q = [0.0, 0.0, np.sin(1.0), np.cos(1.0)]  # 2 rad about +Z
        >>> np.round(lim.project(q, [1.0, 0.0, 0.0]), 4)  # clamped to 90 degrees
        array([0.    , 0.    , 0.7071, 0.7071])
    """

    min_angle: float
    max_angle: float
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)

    kind = K.KIND_ANGLE_2D

    def __post_init__(self) -> None:
        _set_angle_range(self)
        object.__setattr__(self, "normal", unit_vector(self.normal, "normal"))

    @classmethod
    def degrees(
        cls,
        min_deg: float,
        max_deg: float,
        normal: tuple[float, float, float] = (0.0, 0.0, 1.0),
    ) -> AngleLimit2D:
        """The limit from angles in degrees."""
        return cls(math.radians(min_deg), math.radians(max_deg), normal)

    def params(
        self, bone_local: ArrayLike, parent_bone_local: ArrayLike | None = None
    ) -> np.ndarray:
        n = np.asarray(self.normal)
        b = _bone_dir(bone_local)
        offset = np.zeros(b.shape[:-1])
        if parent_bone_local is not None:
            pb = _bone_dir(parent_bone_local)
            pb_p = pb - (pb @ n)[..., None] * n
            b_p = b - (b @ n)[..., None] * n
            ok = (np.linalg.norm(pb_p, axis=-1) > 1e-12) & (np.linalg.norm(b_p, axis=-1) > 1e-12)
            ang = np.arctan2(np.cross(pb_p, b_p) @ n, np.sum(pb_p * b_p, axis=-1))
            offset = np.where(ok, ang, 0.0)
        lo, hi = _angle_range(self.min_angle, self.max_angle)
        if lo == -K.HINGE_FREE:
            offset = np.zeros(offset.shape)
        return _row(offset.shape, lo - offset, hi - offset, n, b)
