"""Argument checks and shaping of the two-bone solver (private; see
:mod:`ikrig.solvers.two_bone`)."""

from __future__ import annotations

import math

import numpy as np

from ..._checks import as_points, batch_shape, check_finite_each
from ...errors import InputError

_SHAPE3 = (3,)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _scalar_or_array(x, name: str):
    """A Python float for scalars, else a float array (finiteness is checked later)."""
    if isinstance(x, (float, int, np.floating, np.integer)) and not isinstance(x, bool):
        v = float(x)
        if not math.isfinite(v):
            raise InputError(f"{name}: must be finite, got {x!r}")
        return v
    try:
        a = np.asarray(x)
    except Exception as exc:
        raise InputError(f"{name}: cannot be read as a numeric array ({exc})") from None
    if a.dtype.kind not in "fiu":
        raise InputError(f"{name}: expected numbers, got dtype {a.dtype}")
    if a.ndim == 0:
        return _scalar_or_array(float(a), name)
    return a if a.dtype == _F32 else a.astype(_F64)


_rows_cache: dict = {}


def _filled_rows(dtype: np.dtype, n: int) -> np.ndarray:
    """``(3, n)`` C-contiguous rows weight 1, cos 1, sin 0, cached for recent sizes."""
    key = (dtype, n)
    a = _rows_cache.get(key)
    if a is None:
        a = np.empty((3, n), dtype=dtype)
        a[0:2] = 1.0
        a[2] = 0.0
        if len(_rows_cache) >= 8:
            _rows_cache.clear()
        _rows_cache[key] = a
    return a


def _single_problem(r, m, e, t, p):
    """The five inputs as-is if they are one problem ready for the kernel, else None.

    Ready: float32 or float64 ndarrays of shape ``(3,)``, one dtype, C-contiguous and
    writeable. One function with straight-line tests keeps single calls cheap.
    """
    if not (
        type(r) is np.ndarray
        and type(m) is np.ndarray
        and type(e) is np.ndarray
        and type(t) is np.ndarray
        and (p is None or type(p) is np.ndarray)
    ):
        return None
    dt = r.dtype
    if not (
        (dt is _F32 or dt is _F64)
        and m.dtype is dt
        and e.dtype is dt
        and t.dtype is dt
        and r.shape == _SHAPE3
        and m.shape == _SHAPE3
        and e.shape == _SHAPE3
        and t.shape == _SHAPE3
        and r.flags.carray
        and m.flags.carray
        and e.flags.carray
        and t.flags.carray
    ):
        return None
    if p is not None and not (p.dtype is dt and p.shape == _SHAPE3 and p.flags.carray):
        return None
    return r, m, e, t, p


def _chain_points(root_world, mid_world, end_world, target_world, pole_world):
    """The five position arguments as float arrays ``(..., 3)`` (``None`` pole kept),
    checked: InputError naming the argument."""
    return (
        as_points(root_world, "root_world"), as_points(mid_world, "mid_world"),
        as_points(end_world, "end_world"), as_points(target_world, "target_world"),
        None if pole_world is None else as_points(pole_world, "pole_world"),
    )  # fmt: skip


def _dtype_and_batch(root, mid, end, target, pole, w, tw):
    """Working dtype (float32 only if every position is), batch shape and size."""
    dt = root.dtype
    if (
        mid.dtype != dt
        or end.dtype != dt
        or target.dtype != dt
        or (pole is not None and pole.dtype != dt)
    ):
        dt = _F64
    shape = root.shape
    batch = shape[:-1]
    if not (
        mid.shape == shape
        and end.shape == shape
        and target.shape == shape
        and (pole is None or pole.shape == shape)
        and (type(w) is float or w.shape == batch)
        and (type(tw) is float or tw.shape == batch)
    ):
        batch = _broadcast_batch(root, mid, end, target, pole, w, tw)
    return dt, batch, math.prod(batch)


def _flat(a: np.ndarray, batch: tuple, dt: np.dtype) -> np.ndarray:
    """``a`` broadcast to ``batch + (3,)``, as a flat, C-contiguous, writeable ``dt`` array.

    (Writeable: Numba compiles read-only arrays as a different type, so keeping one
    flavour avoids extra compilations.)
    """
    if a.ndim == 1 and len(batch) == 0 and a.dtype == dt and a.flags.writeable:
        return a if a.flags.c_contiguous else a.copy()
    if a.shape[:-1] != batch:
        a = np.broadcast_to(a, batch + (3,))
    a = np.ascontiguousarray(a, dtype=dt)
    if not a.flags.writeable:
        a = a.copy()
    return a.reshape(-1)


def _broadcast_batch(root, mid, end, target, pole, w, tw) -> tuple[int, ...]:
    shapes = [("root_world", root.shape[:-1]), ("mid_world", mid.shape[:-1])]
    shapes += [("end_world", end.shape[:-1]), ("target_world", target.shape[:-1])]
    if pole is not None:
        shapes.append(("pole_world", pole.shape[:-1]))
    for name, a in (("weight", w), ("twist_angle", tw)):
        if isinstance(a, np.ndarray):
            shapes.append((name, a.shape))
    return batch_shape(*shapes)


def _weight_rows(w, tw, batch, n, dt, serial: bool) -> np.ndarray:
    """``(3, m)`` rows weight, cos(twist), sin(twist) for the kernels.

    The serial kernel takes ``m = 1`` (broadcast) or ``n``; the parallel one needs ``n``.
    """
    m = 1 if serial and type(w) is float and type(tw) is float else n
    rows = np.empty((3, m), dtype=dt)
    if type(tw) is float:
        rows[1] = math.cos(tw)
        rows[2] = math.sin(tw)
    else:
        if not np.isfinite(tw).all():
            check_finite_each(twist_angle=tw)
        tw = np.broadcast_to(tw, batch).reshape(n)
        rows[1] = np.cos(tw)
        rows[2] = np.sin(tw)
    rows[0] = w if type(w) is float else np.broadcast_to(w, batch).reshape(n)
    return rows


def _check_out(out, dt, n):
    try:
        out_mid, out_end, out_reached = out
    except (TypeError, ValueError):
        raise InputError("out: expected (mid_out, end_out, reached_out)") from None
    for name, a, shape, adt in (
        ("out[0]", out_mid, (3, n), dt),
        ("out[1]", out_end, (3, n), dt),
        ("out[2]", out_reached, (n,), np.dtype(np.bool_)),
    ):
        if not isinstance(a, np.ndarray) or a.shape != shape or a.dtype != adt:
            raise InputError(f"{name}: expected a {adt} array of shape {shape}")
        if not (a.flags.c_contiguous and a.flags.writeable):
            raise InputError(f"{name}: must be writeable and C-contiguous")
    return out_mid, out_end, out_reached
