"""Input validation and batch broadcasting shared by the public functions.

The one home of every generic rule (one function per rule): numbers and options, angles
and axes, arrays of points, finiteness, and batch shapes. Each raises
:class:`ikrig.errors.InputError` with the argument's name, so a user sees which argument
was wrong and how. None of them uses ``assert``.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import NoReturn

import numpy as np

from .errors import InputError

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
_FLOATS = (F32, F64)

# --------------------------------------------------------------------------------------
# Numbers and options
# --------------------------------------------------------------------------------------


def _number(value, name: str) -> float:
    """``float(value)`` for a number (not a bool), else InputError."""
    if isinstance(value, bool):
        raise InputError(f"{name}: must be a number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be a number, got {value!r}") from None


def positive(value, name: str) -> float:
    """A finite number ``> 0``, returned as a float."""
    v = _number(value, name)
    if not np.isfinite(v) or v <= 0:
        raise InputError(f"{name}: must be a finite number > 0, got {value!r}")
    return v


def in_range(value, name: str, lo: float, hi: float) -> float:
    """``float(value)`` if ``lo <= value <= hi``, else InputError."""
    v = float(value)
    if not (lo <= v <= hi):
        raise InputError(f"{name}: must be in [{lo}, {hi}], got {value!r}")
    return v


def check_real(value, name: str, lo: float, hi: float, open_low: bool = False) -> float:
    """A real number (not a bool, not a string) that is finite and in ``[lo, hi]`` (``(lo,
    hi]`` with ``open_low``), returned as a float. An infinite ``hi`` reads as ``[lo, inf)``
    in the message."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise InputError(f"{name}: expected a number, got {value!r}")
    v = float(value)
    low_ok = v > lo if open_low else v >= lo
    if not (math.isfinite(v) and low_ok and v <= hi):
        bounds = f"{'(' if open_low else '['}{lo}, {hi}{']' if math.isfinite(hi) else ')'}"
        raise InputError(f"{name}: must be a finite number in {bounds}, got {value!r}")
    return v


def check_iterations(value, name: str = "max_iterations") -> int:
    """An integer ``>= 0`` (0: only measure the start pose)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name}: must be an integer >= 0, got {value!r}")
    return int(value)


def positive_int(value, name: str) -> int:
    """An integer ``>= 1`` (a count of things)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: must be an integer >= 1, got {value!r}")
    return int(value)


def check_tolerance(value, name: str = "tolerance") -> float:
    """A finite number ``>= 0`` (a tolerance: a fraction of a length, or radians)."""
    v = _number(value, name)
    if not np.isfinite(v) or v < 0:
        raise InputError(f"{name}: must be a finite number >= 0, got {value!r}")
    return v


def check_step(value, name: str = "max_step") -> float | None:
    """``None`` (no limit) or a number of radians ``> 0``."""
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be None or a number of radians, got {value!r}") from None
    if not (v > 0) or np.isnan(v):
        raise InputError(f"{name}: must be None or > 0 (radians), got {value!r}")
    return v


def check_axis(value, name: str = "bend_axis") -> tuple[float, float, float] | None:
    """``None`` (automatic) or a finite non-zero 3-vector, returned as a tuple of floats."""
    if value is None:
        return None
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name}: must be None or 3 numbers, got {value!r}") from None
    if a.shape != (3,) or not np.isfinite(a).all() or not np.any(a):
        raise InputError(f"{name}: must be None or a finite non-zero 3-vector, got {value!r}")
    return (float(a[0]), float(a[1]), float(a[2]))


def check_options(options, cls, default):
    """``default`` for ``None``, ``options`` if it is a ``cls``, else InputError."""
    if options is None:
        return default
    if not isinstance(options, cls):
        raise InputError(f"options: expected {cls.__name__}, got {type(options).__name__}")
    return options


_SHARED_FIELDS = (
    ("max_iterations", check_iterations),
    ("tolerance", check_tolerance),
    ("max_step", check_step),
    ("bend_axis", check_axis),
    ("keep_effector_world", bool),
)


def check_fields(opts) -> None:
    """Check and normalise, in place, the fields of a frozen ``*Options`` dataclass that the
    solvers share (``max_iterations``, ``tolerance``, ``max_step``, ``bend_axis``,
    ``keep_effector_world``), those ``opts`` has, so that one option name means one thing
    and fails with one message everywhere."""
    names = {f.name for f in fields(opts)}
    for name, check in _SHARED_FIELDS:
        if name in names:
            object.__setattr__(opts, name, check(getattr(opts, name)))


# --------------------------------------------------------------------------------------
# Angles and directions (constraint geometry)
# --------------------------------------------------------------------------------------


def unit_vector(v, name: str) -> tuple[float, float, float]:
    """Three finite numbers, not all zero, returned normalised as a tuple of floats."""
    a = np.asarray(v, dtype=np.float64)
    if a.shape != (3,) or not np.isfinite(a).all():
        raise InputError(f"{name}: expected 3 finite numbers, got {v!r}")
    n = float(np.linalg.norm(a))
    if n <= 1e-12:
        raise InputError(f"{name}: must not be the zero vector")
    u = a / n
    return (float(u[0]), float(u[1]), float(u[2]))


def check_angle(value, name: str, bound: float) -> float:
    """A finite angle in radians within ``+-bound``, returned as a float."""
    v = float(value)
    if not np.isfinite(v) or abs(v) > bound + 1e-12:
        raise InputError(
            f"{name}: must be a finite angle in radians within +-{bound:.4g}, got {value!r}"
        )
    return v


def angle_pair(lo, hi, names: tuple[str, str], bound: float = 2 * np.pi) -> tuple[float, float]:
    """Two angles (:func:`check_angle`) with ``lo <= hi``, returned as floats."""
    a = check_angle(lo, names[0], bound)
    b = check_angle(hi, names[1], bound)
    if a > b:
        raise InputError(f"{names[0]} ({a!r}) must not exceed {names[1]} ({b!r})")
    return a, b


# --------------------------------------------------------------------------------------
# Arrays
# --------------------------------------------------------------------------------------


def float_dtype(*arrays) -> np.dtype:
    """The floating dtype for a result: float32 if every float input is float32, else float64.

    Integer and Python-number inputs do not force float64 on their own.
    """
    dt = None
    for a in arrays:
        if a is None:
            continue
        adt = getattr(a, "dtype", None)
        if adt is None or adt.kind not in "f":
            continue
        dt = adt if dt is None else np.promote_types(dt, adt)
    if dt is None:
        return np.dtype(np.float64)
    return np.dtype(np.float32) if dt == np.float32 else np.dtype(np.float64)


def _read_array(x, name: str) -> np.ndarray:
    try:
        return np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise InputError(f"{name}: cannot be read as a numeric array ({exc})") from None


def as_float(x, name: str, last: int | None = None, dtype=None, finite: bool = True) -> np.ndarray:
    """Convert ``x`` to a float array, checking its trailing dimension and finiteness.

    Args:
        x: array-like.
        name: the argument's name, used in error messages.
        last: required size of the last axis (3 for vectors, 4 for quaternions), or None.
        dtype: target float dtype; default keeps float32 as float32, anything else float64.
        finite: if True, NaN or infinite values raise.

    Raises:
        InputError: wrong trailing size, non-numeric data or non-finite values.
    """
    a = x if type(x) is np.ndarray else _read_array(x, name)
    if a.dtype.kind not in "fiub":
        raise InputError(f"{name}: expected numbers, got dtype {a.dtype}")
    if dtype is None:
        dtype = np.float32 if a.dtype == np.float32 else np.float64
    a = a.astype(dtype, copy=False)
    if last is not None and (a.ndim == 0 or a.shape[-1] != last):
        raise InputError(f"{name}: expected shape (..., {last}), got {a.shape}")
    if finite and not np.isfinite(a).all():
        check_finite(a, name)
    return a


def as_points(x, name: str, last: int = 3, ndim: int = 1) -> np.ndarray:
    """``x`` as a float32/float64 array shaped ``(..., last)`` (``ndim`` 1) or ``(..., k,
    last)`` (``ndim`` 2; the message calls ``k`` ``n + 1``, joints of a chain). float32 and
    float64 arrays are kept as they are, other numbers become float64. The cheap checks only:
    values are not looked at (see :func:`check_finite`)."""
    a = x if isinstance(x, np.ndarray) else _read_array(x, name)
    if a.dtype not in _FLOATS:
        if a.dtype.kind not in "fiub":
            raise InputError(f"{name}: expected numbers, got dtype {a.dtype}")
        a = a.astype(np.float64)
    if a.ndim < ndim or a.shape[-1] != last:
        want = f"(..., n + 1, {last})" if ndim == 2 else f"(..., {last})"
        raise InputError(f"{name}: expected shape {want}, got {a.shape}")
    return a


def check_out(out, wanted) -> tuple[np.ndarray, ...]:
    """Caller-owned output buffers: ``out`` must be a tuple (or list) of ``len(wanted)``
    writeable C-contiguous arrays, array ``i`` of the shape and dtype ``wanted[i] = (name,
    shape, dtype)``, no two of them overlapping. Returns them as a tuple; else InputError
    (one line, naming the first buffer that does not fit)."""
    names = ", ".join(name for name, _, _ in wanted)
    if not isinstance(out, (tuple, list)) or len(out) != len(wanted):
        got = f"{len(out)} items" if isinstance(out, (tuple, list)) else type(out).__name__
        raise InputError(f"out: expected a tuple of {len(wanted)} arrays ({names}), got {got}")
    for a, (name, shape, dtype) in zip(out, wanted):
        if not isinstance(a, np.ndarray):
            raise InputError(f"{name}: expected a {dtype} array of shape {shape}, got"
                             f" {type(a).__name__}")  # fmt: skip
        if a.shape != tuple(shape) or a.dtype != dtype:
            raise InputError(f"{name}: expected a {dtype} array of shape {tuple(shape)}, got"
                             f" {a.dtype} {a.shape}")  # fmt: skip
        if not (a.flags.c_contiguous and a.flags.writeable):
            raise InputError(f"{name}: must be a writeable C-contiguous array")
    for i, a in enumerate(out):
        for b in out[i + 1 :]:
            if np.may_share_memory(a, b):
                raise InputError(f"out: the buffers must not overlap ({names})")
    return tuple(out)


# --------------------------------------------------------------------------------------
# Finiteness
# --------------------------------------------------------------------------------------


def check_finite(a, name: str) -> None:
    """InputError (one line: the argument and the index of its first bad value) unless
    every value of the array ``a`` is finite."""
    finite = np.isfinite(a)
    if not finite.all():
        where = tuple(int(i) for i in np.argwhere(~finite)[0])
        raise InputError(f"{name}: contains NaN or infinite values (first at index {where})")


def check_finite_each(**named) -> None:
    """:func:`check_finite` of each named value in order (array-likes and numbers, read as
    floats; ``None`` skipped): the error names the first argument holding NaN or infinity."""
    for name, value in named.items():
        if value is not None:
            check_finite(as_float(value, name, finite=False), name)


UNIT_TOLERANCE = 1e-3
"""How far a rotation given as a target or a joint's world rotation may be from unit length
(``| |q| - 1 | <= 1e-3``: a float32 rotation's rounding passes, a zero or unnormalised
quaternion does not)."""


def off_unit(q: np.ndarray) -> np.ndarray:
    """``(...)`` bool: the quaternions of ``q (..., 4)`` whose length is off 1 by more than
    :data:`UNIT_TOLERANCE` (NaN ones included)."""
    q64 = np.asarray(q, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        length = np.sqrt(np.einsum("...i,...i->...", q64, q64))
    return ~(np.abs(length - 1.0) <= UNIT_TOLERANCE)


def check_unit_quaternions(q: np.ndarray, name: str) -> None:
    """InputError (one line: the argument and the index of its first bad rotation) unless
    every quaternion of ``q (..., 4)`` is a unit one (:func:`off_unit`)."""
    bad = off_unit(q)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        raise InputError(f"{name}: not a unit quaternion x, y, z, w (first at index {where})")


def raise_nonfinite(**named) -> NoReturn:
    """Raise InputError naming the first named argument that holds NaN or infinity (and
    where), for a kernel that reported a non-finite input: :func:`check_finite_each`, then a
    generic message if none does."""
    check_finite_each(**named)
    raise InputError("inputs contain NaN or infinite values")  # pragma: no cover


# --------------------------------------------------------------------------------------
# Batch shapes
# --------------------------------------------------------------------------------------


def batch_shape(*named) -> tuple:
    """The broadcast of named batch shapes ``(name, shape)``, or InputError listing them."""
    first = named[0][1]
    for _, s in named:
        if s != first:
            break
    else:
        return tuple(first)
    try:
        return np.broadcast_shapes(*[s for _, s in named])
    except ValueError:
        listing = ", ".join(f"{n} {s}" for n, s in named)
        raise InputError(f"batch shapes do not broadcast: {listing}") from None


def broadcast_batch(*pairs):
    """Broadcast the batch (leading) shapes of several arrays with known trailing sizes.

    Args:
        pairs: ``(name, array, trailing_ndim)`` tuples.

    Returns:
        (batch_shape, [arrays broadcast to batch_shape + their trailing shape]).
    """
    batch = batch_shape(*[(n, a.shape[: a.ndim - k]) for n, a, k in pairs])
    out = [np.broadcast_to(a, batch + a.shape[a.ndim - k :]) for _, a, k in pairs]
    return batch, out
