"""Vector functions over ``(..., 3)`` (or ``(..., 2)``) arrays.

Every function broadcasts over leading batch axes and keeps float32 as float32. None of them
divides by zero: degenerate inputs (zero vectors) give the documented fallback.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._checks import as_float, batch_shape, float_dtype
from ..errors import InputError


def _f(
    x: ArrayLike, dtype: DTypeLike | None = None, last: int | None = None, name: str = "x"
) -> np.ndarray:
    """``x`` as a float array: float32 kept, anything else float64 (or ``dtype``); ``last``
    the size its last axis must have. Values are not looked at (NaN passes through).

    Raises:
        InputError: non-numeric data, or a last axis of another size (naming ``name``).
    """
    return as_float(x, name, last, dtype, finite=False)


def _unbroadcastable(*named: tuple[str, tuple]) -> None:
    """After NumPy refused to broadcast: InputError listing the batch shapes ``(name,
    shape)`` when they do not broadcast (:func:`~ikrig._checks.batch_shape`); returns when
    they do (the caller re-raises NumPy's error)."""
    batch_shape(*named)


def tiny(dtype: DTypeLike) -> float:
    """Smallest length treated as non-zero for ``dtype`` (about 1e-30 / 1e-300 scaled up)."""
    return 1e-30 if np.dtype(dtype) == np.float32 else 1e-200


def dot(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Dot product over the last axis. ``a, b: (..., D)`` -> ``(...)``."""
    dt = float_dtype(a, b)
    a, b = _f(a, dt, name="a"), _f(b, dt, name="b")
    if a.ndim and b.ndim and a.shape[-1] != b.shape[-1]:
        raise InputError(f"a, b: last axes differ: shapes {a.shape} and {b.shape}")
    try:
        return np.sum(a * b, axis=-1)
    except ValueError:
        _unbroadcastable(("a", a.shape[:-1]), ("b", b.shape[:-1]))
        raise


def cross(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Cross product. ``a, b: (..., 3)`` -> ``(..., 3)``."""
    dt = float_dtype(a, b)
    a, b = _f(a, dt, 3, "a"), _f(b, dt, 3, "b")
    try:
        return np.stack(
            [
                a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0],
            ],
            axis=-1,
        )
    except ValueError:
        _unbroadcastable(("a", a.shape[:-1]), ("b", b.shape[:-1]))
        raise


def norm(v: ArrayLike) -> np.ndarray:
    """Euclidean length over the last axis. ``v: (..., D)`` -> ``(...)``."""
    v = _f(v, name="v")
    return np.sqrt(np.sum(v * v, axis=-1))


def normalize(v: ArrayLike, fallback: ArrayLike | None = None) -> np.ndarray:
    """Unit vectors. ``v: (..., D)`` -> ``(..., D)``.

    Vectors shorter than :func:`tiny` give ``fallback`` (broadcast to ``(..., D)``; default
    zeros) instead of NaN.
    """
    v = _f(v, name="v")
    n = norm(v)[..., None]
    ok = n > tiny(v.dtype)
    out = v / np.where(ok, n, 1)
    if fallback is None:
        return np.where(ok, out, 0)
    fb = _f(fallback, v.dtype, name="fallback")
    try:
        return np.where(ok, out, np.broadcast_to(fb, v.shape))
    except ValueError:
        raise InputError(f"fallback: shape {fb.shape} does not broadcast to v {v.shape}") from None


def angle_between(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Unsigned angle in radians, in ``[0, pi]``. ``a, b: (..., 3)`` -> ``(...)``.

    Uses ``atan2(|a x b|, a . b)``, accurate for nearly parallel vectors; a zero vector gives 0.
    """
    return np.arctan2(norm(cross(a, b)), dot(a, b))


def triangle_angle(a: ArrayLike, b: ArrayLike, c: ArrayLike) -> np.ndarray:
    """The angle in radians, in ``[0, pi]``, between sides ``a`` and ``b`` of a triangle whose
    third side is ``c`` (law of cosines), ``c`` clamped to what ``a`` and ``b`` can span:
    ``pi`` for ``c >= a + b`` (a straight two-bone limb), 0 for ``c <= |a - b|``. Arrays
    broadcast; a zero side gives NaN.

    Example:
        >>> round(float(triangle_angle(3.0, 4.0, 5.0)), 6) == round(np.pi / 2, 6)
        True
    """
    a, b, c = (np.asarray(x) for x in (a, b, c))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.arccos(np.clip((a * a + b * b - c * c) / (2 * a * b), -1.0, 1.0))


def project_on_plane(v: ArrayLike, normal: ArrayLike) -> np.ndarray:
    """Remove the component of ``v`` along ``normal``. ``v, normal: (..., 3)`` -> ``(..., 3)``.

    ``normal`` need not be unit length; a zero normal leaves ``v`` unchanged.
    """
    dt = float_dtype(v, normal)
    v = _f(v, dt, 3, "v")
    n = normalize(_f(normal, dt, 3, "normal"))
    try:
        return v - dot(v, n)[..., None] * n
    except (ValueError, InputError):
        _unbroadcastable(("v", v.shape[:-1]), ("normal", n.shape[:-1]))
        raise


def signed_angle_2d(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Signed angle from ``a`` to ``b`` in radians, in ``(-pi, pi]``, counter-clockwise positive.

    ``a, b: (..., 2)`` -> ``(...)``. A zero vector gives 0.
    """
    dt = float_dtype(a, b)
    a, b = _f(a, dt, 2, "a"), _f(b, dt, 2, "b")
    try:
        c = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    except ValueError:
        _unbroadcastable(("a", a.shape[:-1]), ("b", b.shape[:-1]))
        raise
    d = a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1]
    return np.arctan2(c, d)


def any_perpendicular(v: ArrayLike) -> np.ndarray:
    """A unit vector perpendicular to ``v``. ``v: (..., 3)`` -> ``(..., 3)``.

    Deterministic: crosses ``v`` with the coordinate axis it is least aligned with. A zero
    ``v`` gives +X.
    """
    v = _f(v, last=3, name="v")
    a = np.abs(v)
    axis = np.zeros_like(v)
    k = np.argmin(a, axis=-1)
    np.put_along_axis(axis, k[..., None], 1.0, axis=-1)
    return normalize(cross(v, axis), fallback=np.array([1.0, 0.0, 0.0], dtype=v.dtype))
