"""Up axes: the fixed turn that takes a Z-up or X-up world into ikrig's Y-up one.

``"y"``: identity. ``"z"``: -90 degrees about X, so +Z goes to +Y and +Y to -Z (both worlds
right-handed). ``"x"``: +90 degrees about Z, so +X goes to +Y and +Y to -X.
"""

from __future__ import annotations

import math

import numpy as np

UP_AXES = ("y", "z", "x")
"""The up axes ikrig reads (positive directions)."""

_S = math.sqrt(0.5)
_TO_Y_UP = {
    "y": np.array([0.0, 0.0, 0.0, 1.0]),
    "z": np.array([-_S, 0.0, 0.0, _S]),  # -90 deg about X
    "x": np.array([0.0, 0.0, _S, _S]),  # +90 deg about Z
}


def to_y_up_quat(up: str) -> np.ndarray:
    """The unit quaternion ``(4,)`` xyzw that turns a world whose up is ``up`` into Y-up.

    Raises:
        ValueError: ``up`` is not one of :data:`UP_AXES` (callers check user input first).
    """
    try:
        return _TO_Y_UP[up].copy()
    except KeyError:
        raise ValueError(f"up: expected one of {UP_AXES}, got {up!r}") from None
