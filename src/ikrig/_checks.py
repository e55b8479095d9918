"""Input validation shared by the public functions.

Each helper raises :class:`ikrig.errors.InputError` with the argument's name, so a user sees
which argument was wrong and how. None of them uses ``assert``.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError


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
    try:
        a = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise InputError(f"{name}: cannot be read as a numeric array ({exc})") from None
    if a.dtype.kind not in "fiub":
        raise InputError(f"{name}: expected numbers, got dtype {a.dtype}")
    if dtype is None:
        dtype = np.float32 if a.dtype == np.float32 else np.float64
    a = a.astype(dtype, copy=False)
    if last is not None and (a.ndim == 0 or a.shape[-1] != last):
        raise InputError(f"{name}: expected shape (..., {last}), got {a.shape}")
    if finite and not np.isfinite(a).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])
        raise InputError(f"{name}: contains NaN or infinite values (first at index {bad})")
    return a


def broadcast_batch(*pairs):
    """Broadcast the batch (leading) shapes of several arrays with known trailing sizes.

    Args:
        pairs: ``(name, array, trailing_ndim)`` tuples.

    Returns:
        (batch_shape, [arrays broadcast to batch_shape + their trailing shape]).
    """
    try:
        batch = np.broadcast_shapes(*[a.shape[: a.ndim - k] for _, a, k in pairs])
    except ValueError:
        shapes = ", ".join(f"{n}{a.shape}" for n, a, _ in pairs)
        raise InputError(f"batch shapes do not broadcast: {shapes}") from None
    out = [np.broadcast_to(a, batch + a.shape[a.ndim - k :]) for _, a, k in pairs]
    return batch, out


def positive(value: float, name: str) -> float:
    """Return ``float(value)`` if it is finite and > 0, else raise InputError."""
    v = float(value)
    if not np.isfinite(v) or v <= 0.0:
        raise InputError(f"{name}: must be a finite number > 0, got {value!r}")
    return v


def in_range(value: float, name: str, lo: float, hi: float) -> float:
    """Return ``float(value)`` if lo <= value <= hi, else raise InputError."""
    v = float(value)
    if not (lo <= v <= hi):
        raise InputError(f"{name}: must be in [{lo}, {hi}], got {value!r}")
    return v
