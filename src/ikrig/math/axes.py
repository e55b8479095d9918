"""Up axes: the fixed turn that takes a Z-up or X-up world into ikrig's Y-up one.

``"y"``: identity. ``"z"``: -90 degrees about X, so +Z goes to +Y and +Y to -Z (X stays;
both worlds right-handed). ``"x"``: +90 degrees about Z, so +X goes to +Y and +Y to -X (Z
stays). The turn back is the conjugate (the inverse) of the same quaternion.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from .quat import quat_conj, quat_rotate

UP_AXES = ("y", "z", "x")
"""The up axes ikrig reads (positive directions)."""

_S = math.sqrt(0.5)
_TO_Y_UP = {
    "y": (0.0, 0.0, 0.0, 1.0),
    "z": (-_S, 0.0, 0.0, _S),  # -90 deg about X
    "x": (0.0, 0.0, _S, _S),  # +90 deg about Z
}


def check_up(up: object, what: str = "up") -> str:
    """``up`` if it is one of :data:`UP_AXES`.

    Raises:
        InputError: anything else (the message names ``what``).
    """
    if not isinstance(up, str) or up not in _TO_Y_UP:
        raise InputError(f"{what}: expected one of {', '.join(UP_AXES)}, got {up!r}")
    return up


def to_y_up_quat(up: str) -> np.ndarray:
    """The unit quaternion ``(4,)`` xyzw (float64) that turns a world whose up is ``up``
    into Y-up.

    Raises:
        InputError: ``up`` is not one of :data:`UP_AXES`.
    """
    return np.array(_TO_Y_UP[check_up(up)], dtype=np.float64)


def points_to_y_up(points: np.ndarray, up: str) -> np.ndarray:
    """Points or vectors ``(..., 3)`` of an ``up`` world in the Y-up world (float64; a new
    array, also for ``"y"``).

    Raises:
        InputError: ``up`` is not one of :data:`UP_AXES`.
    """
    return quat_rotate(to_y_up_quat(up), np.asarray(points, dtype=np.float64))


def points_from_y_up(points: np.ndarray, up: str) -> np.ndarray:
    """The inverse of :func:`points_to_y_up`: Y-up points ``(..., 3)`` in an ``up`` world.

    Raises:
        InputError: ``up`` is not one of :data:`UP_AXES`.
    """
    return quat_rotate(quat_conj(to_y_up_quat(up)), np.asarray(points, dtype=np.float64))
