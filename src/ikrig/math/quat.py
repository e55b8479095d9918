"""Quaternion functions over ``(..., 4)`` arrays stored ``x, y, z, w`` (scalar last).

All quaternions are Hamilton quaternions; rotations are unit quaternions. ``quat_mul(a, b)``
rotates by ``b`` first, then by ``a`` (like matrix products ``A @ B``). Every function
broadcasts over leading batch axes and keeps float32 as float32. None divides by zero:
degenerate inputs give the documented fallback (usually the identity).
"""

from __future__ import annotations

from typing import cast

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._checks import float_dtype
from ..errors import InputError
from .vec import _f, _unbroadcastable, any_perpendicular, cross, dot, norm, tiny


def quat_identity(shape: int | tuple[int, ...] = (), dtype: DTypeLike = np.float64) -> np.ndarray:
    """Identity quaternions ``(0, 0, 0, 1)`` of shape ``shape + (4,)``."""
    dims = cast("tuple[int, ...]", (shape,) if np.isscalar(shape) else tuple(shape))  # type: ignore[arg-type]
    q = np.zeros(dims + (4,), dtype=dtype)
    q[..., 3] = 1
    return q


def quat_normalize(q: ArrayLike) -> np.ndarray:
    """Unit quaternions. ``q: (..., 4)`` -> ``(..., 4)``; a zero quaternion gives identity."""
    q = _f(q, last=4, name="q")
    n = norm(q)[..., None]
    ok = n > tiny(q.dtype)
    return np.where(ok, q / np.where(ok, n, 1), quat_identity((), q.dtype))


def quat_canonical(q: ArrayLike) -> np.ndarray:
    """The same rotation with ``w >= 0``. ``q: (..., 4)`` -> ``(..., 4)``."""
    q = _f(q, last=4, name="q")
    return np.where(q[..., 3:4] < 0, -q, q)


def quat_conj(q: ArrayLike) -> np.ndarray:
    """Conjugate ``(-x, -y, -z, w)``: the inverse of a unit quaternion."""
    q = _f(q, last=4, name="q")
    return q * np.array([-1, -1, -1, 1], dtype=q.dtype)


def quat_inv(q: ArrayLike) -> np.ndarray:
    """Inverse ``conj(q) / |q|^2`` of any non-zero quaternion; a zero quaternion gives identity."""
    q = _f(q, last=4, name="q")
    n2 = np.sum(q * q, axis=-1, keepdims=True)
    ok = n2 > tiny(q.dtype)
    return np.where(ok, quat_conj(q) / np.where(ok, n2, 1), quat_identity((), q.dtype))


def quat_mul(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Hamilton product ``a * b``: rotate by ``b``, then ``a``.

    ``a, b: (..., 4)`` xyzw -> ``(..., 4)``.
    """
    dt = float_dtype(a, b)
    a, b = _f(a, dt, 4, "a"), _f(b, dt, 4, "b")
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    try:
        x = aw * bx + ax * bw + ay * bz - az * by
    except ValueError:
        _unbroadcastable(("a", a.shape[:-1]), ("b", b.shape[:-1]))
        raise
    return np.stack(
        [
            x,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def quat_rotate(q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """Rotate vectors by unit quaternions. ``q: (..., 4)``, ``v: (..., 3)`` -> ``(..., 3)``."""
    dt = float_dtype(q, v)
    q, v = _f(q, dt, 4, "q"), _f(v, dt, 3, "v")
    u = q[..., :3]
    try:
        t = 2 * cross(u, v)
    except InputError:
        _unbroadcastable(("q", q.shape[:-1]), ("v", v.shape[:-1]))
        raise
    return v + q[..., 3:4] * t + cross(u, t)


def quat_from_axis_angle(axis: ArrayLike, angle: ArrayLike) -> np.ndarray:
    """Rotation by ``angle`` radians about ``axis``.

    ``axis: (..., 3)``, ``angle: (...)`` -> ``(..., 4)`` xyzw.

    ``axis`` need not be unit length; a zero axis gives the identity.
    """
    dt = float_dtype(axis, angle)
    axis, angle = _f(axis, dt, 3, "axis"), _f(angle, dt, name="angle")
    n = norm(axis)[..., None]
    ok = n > tiny(dt)
    unit = axis / np.where(ok, n, 1)
    half = 0.5 * angle[..., None]
    try:
        xyz = unit * np.sin(half)
    except ValueError:
        _unbroadcastable(("axis", axis.shape[:-1]), ("angle", angle.shape))
        raise
    q = np.concatenate([xyz, np.cos(half) + 0 * unit[..., :1]], axis=-1)
    return np.where(ok, q, quat_identity((), dt))


def quat_angle(q: ArrayLike) -> np.ndarray:
    """Rotation angle in ``[0, pi]`` of unit quaternions. ``q: (..., 4)`` -> ``(...)``."""
    q = _f(q, last=4, name="q")
    return 2 * np.arctan2(norm(q[..., :3]), np.abs(q[..., 3]))


def quat_to_axis_angle(q: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Axis and angle of unit quaternions: ``(..., 4)`` -> ``(axis (..., 3), angle (...))``.

    The angle is in ``[0, pi]``; for the identity the axis is +X.
    """
    q = quat_canonical(q)
    v = q[..., :3]
    n = norm(v)
    axis = np.where(
        (n > tiny(q.dtype))[..., None],
        v / np.where(n > tiny(q.dtype), n, 1)[..., None],
        np.array([1, 0, 0], dtype=q.dtype),
    )
    return axis, 2 * np.arctan2(n, q[..., 3])


def quat_from_rotvec(rotvec: ArrayLike) -> np.ndarray:
    """Quaternions from rotation vectors (axis * angle, radians). ``(..., 3)`` -> ``(..., 4)``."""
    rv = _f(rotvec, last=3, name="rotvec")
    angle = norm(rv)
    small = angle < 1e-4
    # sin(angle/2)/angle, with its Taylor series near zero
    safe = np.where(small, 1, angle)
    s = np.where(small, 0.5 - angle * angle / 48, np.sin(0.5 * safe) / safe)
    return np.concatenate([rv * s[..., None], np.cos(0.5 * angle)[..., None]], axis=-1)


def quat_to_rotvec(q: ArrayLike) -> np.ndarray:
    """Rotation vectors (axis times angle, angle in ``[0, pi]``) of unit quaternions."""
    q = quat_canonical(q)
    v = q[..., :3]
    n = norm(v)
    angle = 2 * np.arctan2(n, q[..., 3])
    small = n < 1e-6
    scale = np.where(small, 2 / np.maximum(q[..., 3], tiny(q.dtype)), angle / np.where(small, 1, n))
    return v * scale[..., None]


def quat_to_matrix(q: ArrayLike) -> np.ndarray:
    """Rotation matrices (acting on column vectors). ``q: (..., 4)`` -> ``(..., 3, 3)``."""
    q = _f(q, last=4, name="q")
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.stack(
        [
            1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy),
            2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx),
            2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy),
        ],
        axis=-1,
    )  # fmt: skip
    return m.reshape(q.shape[:-1] + (3, 3))


def quat_from_matrix(m: ArrayLike) -> np.ndarray:
    """Unit quaternions of rotation matrices. ``m: (..., 3, 3)`` -> ``(..., 4)``.

    Uses the numerically stable branch (largest of trace and diagonal) per element, then
    normalises, so slightly non-orthogonal matrices give the nearest-looking rotation.
    """
    m = _f(m, name="m")
    if m.ndim < 2 or m.shape[-2:] != (3, 3):
        raise InputError(f"m: expected shape (..., 3, 3), got {m.shape}")
    m00, m01, m02 = m[..., 0, 0], m[..., 0, 1], m[..., 0, 2]
    m10, m11, m12 = m[..., 1, 0], m[..., 1, 1], m[..., 1, 2]
    m20, m21, m22 = m[..., 2, 0], m[..., 2, 1], m[..., 2, 2]
    tr = m00 + m11 + m22
    cands = np.stack(
        [
            np.stack([1 + m00 - m11 - m22, m01 + m10, m02 + m20, m21 - m12], axis=-1),
            np.stack([m01 + m10, 1 + m11 - m00 - m22, m12 + m21, m02 - m20], axis=-1),
            np.stack([m02 + m20, m12 + m21, 1 + m22 - m00 - m11, m10 - m01], axis=-1),
            np.stack([m21 - m12, m02 - m20, m10 - m01, 1 + tr], axis=-1),
        ],
        axis=-2,
    )
    choice = np.argmax(np.stack([m00, m11, m22, tr], axis=-1), axis=-1)
    q = np.take_along_axis(cands, choice[..., None, None], axis=-2)[..., 0, :]
    return quat_normalize(q)


def quat_between(u: ArrayLike, v: ArrayLike) -> np.ndarray:
    """Shortest-arc rotation taking the direction of ``u`` to that of ``v``.

    ``u, v: (..., 3)`` (any non-zero length) -> ``(..., 4)``. Antiparallel vectors give a half
    turn about a deterministic axis perpendicular to ``u``; a zero vector gives the identity.
    """
    dt = float_dtype(u, v)
    u, v = _f(u, dt, 3, "u"), _f(v, dt, 3, "v")
    nu, nv = norm(u)[..., None], norm(v)[..., None]
    try:
        zero = (nu <= tiny(dt)) | (nv <= tiny(dt))
    except ValueError:
        _unbroadcastable(("u", u.shape[:-1]), ("v", v.shape[:-1]))
        raise
    un = u / np.where(zero, 1, nu)
    vn = v / np.where(zero, 1, nv)
    q = np.concatenate([cross(un, vn), (1 + dot(un, vn))[..., None]], axis=-1)
    opposite = norm(q)[..., None] < np.sqrt(np.finfo(dt).eps)
    half_turn = np.concatenate([any_perpendicular(un), np.zeros_like(un[..., :1])], axis=-1)
    q = np.where(opposite, half_turn, q)
    return np.where(zero, quat_identity((), dt), quat_normalize(q))


def quat_dot(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """4D dot product (``cos`` of half the angle between unit rotations, up to sign)."""
    return dot(a, b)


def quat_nlerp(a: ArrayLike, b: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Normalised linear interpolation along the shortest path.

    ``a, b: (..., 4)``, ``t: (...)`` (0 gives ``a``, 1 gives ``b`` up to sign) -> ``(..., 4)``.
    """
    dt = float_dtype(a, b, t)
    a, b, t = _f(a, dt, 4, "a"), _f(b, dt, 4, "b"), _f(t, dt, name="t")[..., None]
    try:
        b = np.where(quat_dot(a, b)[..., None] < 0, -b, b)
        return quat_normalize(a * (1 - t) + b * t)
    except (ValueError, InputError):
        _unbroadcastable(("a", a.shape[:-1]), ("b", b.shape[:-1]), ("t", t.shape[:-1]))
        raise


def quat_slerp(a: ArrayLike, b: ArrayLike, t: ArrayLike) -> np.ndarray:
    """Spherical linear interpolation along the shortest path (constant angular speed).

    ``a, b: (..., 4)`` unit, ``t: (...)`` -> ``(..., 4)``. Falls back to nlerp for nearly equal
    rotations, where both agree to rounding.
    """
    dt = float_dtype(a, b, t)
    a, b, t = _f(a, dt, 4, "a"), _f(b, dt, 4, "b"), _f(t, dt, name="t")[..., None]
    try:
        d = quat_dot(a, b)[..., None]
        b = np.where(d < 0, -b, b)
        d = np.abs(d)
        theta = np.arctan2(norm(a - b * d)[..., None], d)  # between a and b on the 4D sphere
        s = np.sin(theta)
        small = s < 1e-6
        safe = np.where(small, 1, s)
        wa = np.where(small, 1 - t, np.sin((1 - t) * theta) / safe)
        wb = np.where(small, t, np.sin(t * theta) / safe)
    except (ValueError, InputError):
        _unbroadcastable(("a", a.shape[:-1]), ("b", b.shape[:-1]), ("t", t.shape[:-1]))
        raise
    return quat_normalize(wa * a + wb * b)
