"""Numbers as fixed-decimal ASCII text, compiled: :func:`format_rows` writes a table of
floats (the BVH writer's motion rows) as Python's ``%.Nf`` does, several times faster.
Shared by :mod:`ikrig.io` (the BVH writer) and :mod:`ikrig.app.warmup` (which compiles it
ahead of a first run)."""

from __future__ import annotations

import math

import numpy as np

from .._jit.setup import njit, notify_compiling

__all__ = ["format_rows"]

_MAX_FAST_SCALED = 2.0**53  # |value| * 10**precision below this: exact integer arithmetic


@njit(cache=True)
def _write_digits(number, width, out, pos):
    """Write the non-negative integer ``number`` in decimal, zero-padded to ``width``."""
    digits, rest = 1, number // 10
    while rest > 0:
        digits += 1
        rest //= 10
    digits = max(digits, width)
    for i in range(pos + digits - 1, pos - 1, -1):
        out[i] = 48 + number % 10
        number //= 10
    return pos + digits


@njit(cache=True)
def _product_error(a, b, product):
    """The rounding error ``a * b - product`` exactly (Dekker's two-product, no FMA)."""
    split = 134217729.0  # 2**27 + 1
    ca, cb = split * a, split * b
    a_hi, b_hi = ca - (ca - a), cb - (cb - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return ((a_hi * b_hi - product) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


@njit(cache=True)
def _round_scaled(magnitude, unit):
    """``magnitude * unit`` rounded to an integer as if computed exactly, ties to even.

    Rounding the float64 product is right except when the product lands exactly half-way
    between integers; then the sign of its rounding error says which side the exact
    product is on. ``unit`` must be a power of ten up to ``10**22`` (exact in float64).
    """
    product = magnitude * unit
    nearest = np.rint(product)
    if abs(product - nearest) == 0.5:
        error = _product_error(magnitude, unit, product)
        if error > 0:
            nearest = product + 0.5
        elif error < 0:
            nearest = product - 0.5
    return np.int64(nearest)


@njit(cache=True)
def _write_fixed(value, precision, out, pos):
    """Write ``value`` with ``precision`` decimals at ``out[pos]``; return the end.

    Gives the same text as ``"%.{precision}f" % value`` for ``|value| * 10**precision``
    below 2**53.
    """
    unit = 10**precision
    scaled = _round_scaled(abs(value), float(unit))
    if math.copysign(1.0, value) < 0:
        out[pos] = 45  # "-", also for values that round to zero, as printf does
        pos += 1
    pos = _write_digits(scaled // unit, 1, out, pos)
    if precision > 0:
        out[pos] = 46  # "."
        pos = _write_digits(scaled % unit, precision, out, pos + 1)
    return pos


@njit(cache=True)
def _format_rows_kernel(values, precision, out):
    """Write ``values (F, C)`` as text rows into ``out`` (uint8); return the length used."""
    pos = 0
    for f in range(values.shape[0]):
        for c in range(values.shape[1]):
            if c > 0:
                out[pos] = 32
                pos += 1
            pos = _write_fixed(values[f, c], precision, out, pos)
        out[pos] = 10
        pos += 1
    return pos


def format_rows(values: np.ndarray, precision: int) -> bytes:
    """One line per frame: the values with ``precision`` decimals, separated by spaces.

    Compiled when every ``|value| * 10**precision`` is below 2**53 (always, for motion
    data), else Python's ``%`` formatting; both give the same text.
    """
    if values.size == 0:
        return b"\n" * len(values) if values.shape[1] == 0 else b""
    if np.abs(values).max() * 10.0**precision >= _MAX_FAST_SCALED:
        row = " ".join([f"%.{precision}f"] * values.shape[1]) + "\n"
        return "".join([row % tuple(frame) for frame in values.tolist()]).encode("ascii")
    out = np.empty(values.size * (precision + 20) + len(values), dtype=np.uint8)
    notify_compiling()
    length = _format_rows_kernel(np.ascontiguousarray(values), precision, out)
    return out[:length].tobytes()
