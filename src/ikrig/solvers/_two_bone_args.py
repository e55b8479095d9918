"""Argument checks and shaping of the two-bone solver (private; see
:mod:`ikrig.solvers.two_bone`)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

_SHAPE3 = (3,)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _check_real(value, name: str, lo: float, hi: float, open_low: bool = False) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise InputError(f"{name}: expected a number, got {value!r}")
    v = float(value)
    low_ok = v > lo if open_low else v >= lo
    if not (math.isfinite(v) and low_ok and v <= hi):
        bounds = f"{'(' if open_low else '['}{lo}, {hi}{']' if math.isfinite(hi) else ')'}"
        raise InputError(f"{name}: must be a finite number in {bounds}, got {value!r}")


def _points(x, name: str) -> np.ndarray:
    """``x`` as a float array ``(..., 3)`` (float32 kept, other numbers as float64)."""
    if type(x) is np.ndarray and (x.dtype == _F32 or x.dtype == _F64):
        a = x
    else:
        try:
            a = np.asarray(x)
        except Exception as exc:  # ragged lists and the like
            raise InputError(f"{name}: cannot be read as a numeric array ({exc})") from None
        if a.dtype.kind not in "fiub":
            raise InputError(f"{name}: expected numbers, got dtype {a.dtype}")
        if a.dtype != _F32:
            a = a.astype(_F64)
    if a.ndim == 0 or a.shape[-1] != 3:
        raise InputError(f"{name}: expected shape (..., 3), got {a.shape}")
    return a


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


def _raise_nonfinite(named) -> None:
    """Raise InputError for the first argument holding NaN or inf (exact, slow check)."""
    for name, a in named:
        if a is None or isinstance(a, float):
            continue
        bad = ~np.isfinite(a)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise InputError(f"{name}: contains NaN or infinite values (first at index {where})")


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
    try:
        return tuple(np.broadcast_shapes(*[s for _, s in shapes]))
    except ValueError:
        listing = ", ".join(f"{name} {s}" for name, s in shapes)
        raise InputError(f"batch shapes do not broadcast: {listing}") from None


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
            _raise_nonfinite((("twist_angle", tw),))
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
