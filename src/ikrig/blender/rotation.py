"""Blender's pose-bone rotation modes <-> ikrig's unit quaternions (x, y, z, w).

A pose bone keeps its rotation in one of eight modes, and its F-curves hold that mode's
values: ``QUATERNION`` (``rotation_quaternion``: w, x, y, z), the six Euler orders
(``rotation_euler``: the angles about x, y and z, in radians; mode ``"XYZ"`` turns about X
first, then Y, then Z, about the fixed axes) and ``AXIS_ANGLE`` (``rotation_axis_angle``:
angle, then the axis x, y, z). Blender normalises a quaternion and an axis before it uses
them; so does :func:`quat_from_mode`.

Going back, one rotation has many spellings (q and -q, Euler triples 2 pi apart or the
other Tait-Bryan branch, an angle about an axis or minus it about the opposite axis):
:func:`mode_from_quat` writes the one nearest a reference, frame by frame the previous
frame's values (or the original action's, where it had keys), so that curves stay
continuous and an unchanged clip is written back as it was.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from ..math.euler import quat_from_euler, quat_to_euler
from ..math.quat import quat_from_axis_angle, quat_normalize, quat_to_axis_angle

__all__ = [
    "EULER_MODES", "MODES", "mode_from_quat", "mode_path", "mode_size", "quat_from_mode",
]  # fmt: skip

EULER_MODES = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
"""Blender's Euler orders: the first letter is the first turn, about the fixed axes."""
MODES = ("QUATERNION", *EULER_MODES, "AXIS_ANGLE")
"""Every rotation mode of a pose bone."""


def mode_path(mode: str) -> str:
    """The pose-bone property (F-curve data path tail) that holds ``mode``'s values.

    Example:
        >>> mode_path("ZYX"), mode_path("QUATERNION")
        ('rotation_euler', 'rotation_quaternion')
    """
    _check_mode(mode)
    if mode == "QUATERNION":
        return "rotation_quaternion"
    return "rotation_axis_angle" if mode == "AXIS_ANGLE" else "rotation_euler"


def mode_size(mode: str) -> int:
    """How many F-curves (array indices) ``mode`` has: 4, or 3 for an Euler order."""
    _check_mode(mode)
    return 3 if mode in EULER_MODES else 4


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise InputError(f"rotation_mode: expected one of {', '.join(MODES)}, got {mode!r}")


def _euler_indices(mode: str) -> list[int]:
    """Which of Blender's (x, y, z) angles ikrig's extrinsic order ``mode.lower()`` lists
    first, second, third."""
    return ["XYZ".index(c) for c in mode]


def quat_from_mode(values: ArrayLike, mode: str) -> np.ndarray:
    """Unit quaternions (x, y, z, w) of a pose bone's rotation values.

    Args:
        values: ``(..., 4)`` for ``QUATERNION`` (w, x, y, z) and ``AXIS_ANGLE`` (angle in
            radians, then the axis), ``(..., 3)`` Euler angles (about x, y, z) otherwise.
        mode: one of :data:`MODES`.

    Returns:
        ``(..., 4)`` float64 xyzw. A zero quaternion or a zero axis is the identity, as in
        Blender.

    Raises:
        InputError: an unknown mode, or values of the wrong trailing size.

    Example:
        >>> quat_from_mode([np.pi / 2, 0, 0], "XYZ").round(4)
        array([0.7071, 0.    , 0.    , 0.7071])
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 0 or v.shape[-1] != mode_size(mode):
        raise InputError(f"values: expected (..., {mode_size(mode)}) for {mode}, got {v.shape}")
    if mode == "QUATERNION":
        return quat_normalize(v[..., [1, 2, 3, 0]])
    if mode == "AXIS_ANGLE":
        axis = v[..., 1:]
        zero = np.linalg.norm(axis, axis=-1) == 0
        axis = np.where(zero[..., None], [0.0, 1.0, 0.0], axis)
        return quat_from_axis_angle(axis, np.where(zero, 0.0, v[..., 0]))
    return quat_from_euler(v[..., _euler_indices(mode)], mode.lower())


def _nearest_turn(a: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """``a`` moved by whole turns (2 pi) to lie within pi of ``ref``."""
    return a + 2 * np.pi * np.round((ref - a) / (2 * np.pi))


def _euler_near(q: np.ndarray, mode: str, ref: np.ndarray) -> np.ndarray:
    order = _euler_indices(mode)
    a = quat_to_euler(q, mode.lower())  # angles in the order's sequence
    b = a + [np.pi, 0.0, np.pi]
    b[..., 1] = np.pi - a[..., 1]  # the other Tait-Bryan branch, the same rotation
    r = ref[..., order]
    a, b = _nearest_turn(a, r), _nearest_turn(b, r)
    pick_b = np.abs(b - r).sum(-1) < np.abs(a - r).sum(-1)
    seq = np.where(pick_b[..., None], b, a)
    out = np.empty_like(seq)
    out[..., order] = seq
    return out


def _axis_angle_near(q: np.ndarray, ref: np.ndarray) -> np.ndarray:
    axis, angle = quat_to_axis_angle(q)
    ref_axis = ref[..., 1:]
    norm = np.linalg.norm(ref_axis, axis=-1, keepdims=True)
    unit_ref = np.where(norm > 0, ref_axis / np.where(norm > 0, norm, 1.0), [0.0, 1.0, 0.0])
    still = angle < 1e-12  # no rotation: any axis; keep the reference's
    axis = np.where(still[..., None], unit_ref, axis)
    flip = np.einsum("...i,...i->...", axis, unit_ref) < 0
    axis = np.where(flip[..., None], -axis, axis)
    angle = _nearest_turn(np.where(flip, -angle, angle), ref[..., 0])
    return np.concatenate([angle[..., None], axis * np.where(norm > 0, norm, 1.0)], axis=-1)


def mode_from_quat(q: ArrayLike, mode: str, reference: ArrayLike | None = None) -> np.ndarray:
    """A pose bone's rotation values for unit quaternions, each the spelling nearest its
    reference.

    Args:
        q: ``(N, 4)`` xyzw unit quaternions, one per frame in order.
        mode: one of :data:`MODES`.
        reference: ``(N, k)`` values in ``mode`` (``k`` = :func:`mode_size`) to stay near,
            NaN rows where there is none (then the previous frame's output is used, and the
            plain spelling for a first frame); None: no references. An axis-angle
            reference also gives the axis length to keep.

    Returns:
        ``(N, k)`` float64 values that :func:`quat_from_mode` turns back into ``q``.

    Example:
        >>> q = quat_from_mode([[0.1, 0.2, 7.0]], "XYZ")
        >>> mode_from_quat(q, "XYZ", [[0.1, 0.2, 7.0]]).round(6)
        array([[0.1, 0.2, 7. ]])
    """
    q = quat_normalize(np.asarray(q, dtype=np.float64).reshape(-1, 4))
    k = mode_size(mode)
    ref = np.full((len(q), k), np.nan) if reference is None else np.asarray(reference, float)
    if ref.shape != (len(q), k):
        raise InputError(f"reference: expected shape ({len(q)}, {k}), got {ref.shape}")
    out = np.empty((len(q), k))
    prev = None
    if mode == "QUATERNION":
        for i in range(len(q)):  # a sign per frame: as near the reference as can be
            r = ref[i] if np.isfinite(ref[i]).all() else prev
            wxyz = q[i, [3, 0, 1, 2]]
            out[i] = -wxyz if r is not None and np.dot(wxyz, r) < 0 else wxyz
            prev = out[i]
        return out
    plain = {"AXIS_ANGLE": np.array([0.0, 0.0, 1.0, 0.0])}.get(mode, np.zeros(3))
    known = np.isfinite(ref).all(axis=-1)
    if known.all():  # every frame has its own reference: all at once
        return _axis_angle_near(q, ref) if mode == "AXIS_ANGLE" else _euler_near(q, mode, ref)
    for i in range(len(q)):  # a gap in the reference: follow the previous frame
        r = ref[i] if known[i] else (plain if prev is None else prev)
        one = q[i : i + 1]
        near = _axis_angle_near(one, r[None]) if mode == "AXIS_ANGLE" else None
        out[i] = near[0] if near is not None else _euler_near(one, mode, r[None])[0]
        prev = out[i]
    return out
