"""Euler angles <-> quaternions for every axis order, with SciPy's order convention.

An order is three letters. Upper case (``"ZYX"``) means intrinsic rotations about the moving
axes, composed left to right: ``R = Rz(a0) @ Ry(a1) @ Rx(a2)``; this is what a BVH
``CHANNELS ... Zrotation Yrotation Xrotation`` line means. Lower case (``"xyz"``) means
extrinsic rotations about the fixed axes, applied in the listed order. All 12 sequences
(6 Tait-Bryan, 6 proper Euler) are accepted. Angles are radians.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._checks import float_dtype
from ..errors import InputError
from .quat import quat_mul
from .vec import _f

_AXES = "xyz"


def parse_order(order: str) -> tuple[tuple[int, int, int], bool]:
    """Axis indices (0=x, 1=y, 2=z) and ``intrinsic`` flag of an order string.

    Raises:
        InputError: not three letters from xyz of one case, or two equal neighbours.
    """
    if (
        not isinstance(order, str)
        or len(order) != 3
        or not (order.isupper() or order.islower())
        or any(c not in _AXES for c in order.lower())
    ):
        raise InputError(f"order: expected 3 letters from 'xyz' (or 'XYZ'), got {order!r}")
    first, second, third = (_AXES.index(c) for c in order.lower())
    if first == second or second == third:
        raise InputError(f"order: consecutive axes must differ, got {order!r}")
    return (first, second, third), order.isupper()


def _axis_quat(axis: int, angle: np.ndarray) -> np.ndarray:
    q = np.zeros(angle.shape + (4,), dtype=angle.dtype)
    q[..., axis] = np.sin(0.5 * angle)
    q[..., 3] = np.cos(0.5 * angle)
    return q


def quat_from_euler(angles: ArrayLike, order: str = "XYZ") -> np.ndarray:
    """Quaternions from Euler angles. ``angles: (..., 3)`` radians -> ``(..., 4)`` xyzw.

    ``angles[..., k]`` is the angle about the k-th axis of ``order``.
    """
    idx, intrinsic = parse_order(order)
    a = _f(angles)
    if a.ndim == 0 or a.shape[-1] != 3:
        raise InputError(f"angles: expected shape (..., 3), got {a.shape}")
    q0, q1, q2 = (_axis_quat(idx[k], a[..., k]) for k in range(3))
    if intrinsic:
        return quat_mul(quat_mul(q0, q1), q2)
    return quat_mul(q2, quat_mul(q1, q0))


def quat_to_euler(q: ArrayLike, order: str = "XYZ") -> np.ndarray:
    """Euler angles of unit quaternions. ``q: (..., 4)`` xyzw -> ``(..., 3)`` radians.

    Angles are in ``(-pi, pi]``; the middle one is in ``[-pi/2, pi/2]`` for Tait-Bryan orders
    and ``[0, pi]`` for proper Euler orders. At gimbal lock (middle angle at its limit) only
    the sum or difference of the outer angles is defined: the first intrinsic angle is then
    set to 0 (the third for extrinsic orders); float64 treats a middle angle within 1e-12 of
    its limit as locked (SciPy: 1e-7), float32 within 1e-3. Direct method of Bernardes and
    Viollet (2022).
    """
    idx, intrinsic = parse_order(order)
    q = _f(q)
    if q.ndim == 0 or q.shape[-1] != 4:
        raise InputError(f"q: expected shape (..., 4), got {q.shape}")
    # Work on the extrinsic sequence; an intrinsic order is the reversed extrinsic one.
    i, j, k = idx[::-1] if intrinsic else idx
    proper = i == k
    if proper:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    w = q[..., 3]
    if proper:
        a, b, c, d = w, q[..., i], q[..., j], q[..., k] * sign
    else:
        a = w - q[..., j]
        b = q[..., i] + q[..., k] * sign
        c = q[..., j] + w
        d = q[..., k] * sign - q[..., i]
    t2: np.ndarray = 2 * np.arctan2(np.hypot(c, d), np.hypot(a, b))
    half_sum = np.arctan2(b, a)
    half_diff = np.arctan2(d, c)
    # only a lock to rounding is snapped: a middle angle 1e-8 short of its limit still has
    # well-defined outer angles, and snapping it lost 5e-9 of the rotation
    eps = 1e-3 if q.dtype == np.float32 else 1e-12
    at_zero = np.abs(t2) <= eps
    at_pi = np.abs(t2 - np.pi) <= eps
    t1 = np.where(at_zero, 2 * half_sum, np.where(at_pi, -2 * half_diff, half_sum - half_diff))
    t3 = np.where(at_zero | at_pi, 0.0, half_sum + half_diff)
    if not proper:
        t3 = t3 * sign
        t2 = t2 - np.pi / 2
    out = np.stack([t1, t2, t3], axis=-1)
    out = (out + np.pi) % (2 * np.pi) - np.pi  # wrap to [-pi, pi)
    out = np.where(out <= -np.pi, out + 2 * np.pi, out)  # ... and to (-pi, pi]
    if intrinsic:
        out = out[..., ::-1]
    return out.astype(float_dtype(q), copy=False)
