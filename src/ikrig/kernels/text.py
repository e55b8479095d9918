"""Numbers as fixed-decimal ASCII text, compiled: :func:`format_rows` writes a table of
floats (the BVH writer's motion rows) as Python's ``%.Nf`` does, several times faster (a
big table in chunks of rows, one per thread, joined: the same bytes).
Shared by :mod:`ikrig.io` (the BVH writer) and :mod:`ikrig.app.warmup` (which compiles it
ahead of a first run)."""

from __future__ import annotations

import math

import numpy as np

from .._jit.setup import njit, notify_compiling, numba, prange

__all__ = ["format_rows", "format_rows_buffer"]

_MAX_FAST_SCALED = 2.0**53  # |value| * 10**precision below this: exact integer arithmetic


_PAIRS = np.frombuffer("".join(f"{k:02d}" for k in range(100)).encode(), np.uint8).copy()
"""The two ASCII digits of 0 to 99, in order: digits are written two at a time."""
_TENS = np.array([10**k for k in range(20)], dtype=np.uint64)


@njit(cache=True)
def _write_digits(number, width, out, pos):
    """Write the non-negative integer ``number`` in decimal, zero-padded to ``width``.

    Unsigned arithmetic and two digits per division: a division by a constant is then a
    multiplication and a shift."""
    n = np.uint64(number)
    digits = 1
    while digits < 20 and n >= _TENS[digits]:
        digits += 1
    digits = max(digits, width)
    i = pos + digits
    while n >= np.uint64(100):
        pair = np.uint64(2) * (n % np.uint64(100))
        n //= np.uint64(100)
        i -= 2
        out[i] = _PAIRS[pair]
        out[i + 1] = _PAIRS[pair + np.uint64(1)]
    if n >= np.uint64(10):
        pair = np.uint64(2) * n
        i -= 2
        out[i] = _PAIRS[pair]
        out[i + 1] = _PAIRS[pair + np.uint64(1)]
    else:
        i -= 1
        out[i] = np.uint8(48) + np.uint8(n)
    while i > pos:  # zero padding up to ``width``
        i -= 1
        out[i] = 48
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
    if math.copysign(1.0, value) < 0:
        out[pos] = 45  # "-", also for values that round to zero, as printf does
        pos += 1
    unit = 10**precision
    scaled = _round_scaled(abs(value), float(unit))
    pos = _write_digits(scaled // unit, 1, out, pos)
    if precision > 0:
        out[pos] = 46  # "."
        pos = _write_digits(scaled % unit, precision, out, pos + 1)
    return pos


@njit(cache=True)
def _write_row(values, f, precision, out, pos):
    """Write row ``f`` of ``values``, spaces between the numbers, and a line break."""
    for c in range(values.shape[1]):
        if c > 0:
            out[pos] = 32
            pos += 1
        pos = _write_fixed(values[f, c], precision, out, pos)
    out[pos] = 10
    return pos + 1


@njit(cache=True)
def _format_rows_kernel(values, precision, out):
    """Write ``values (F, C)`` as text rows into ``out`` (uint8); return the length used."""
    pos = 0
    for f in range(values.shape[0]):
        pos = _write_row(values, f, precision, out, pos)
    return pos


@njit(cache=True, parallel=True)
def _format_chunks(values, precision, bounds, out, ends):
    """:func:`_format_rows_kernel` on the rows ``bounds[k]`` to ``bounds[k + 1]`` of each
    chunk ``k`` at once, one thread each: chunk ``k`` writes from byte ``bounds[k] * room``
    of ``out`` (``room``: the most one row can take) and ends at ``ends[k]``."""
    room = values.shape[1] * (precision + 20) + 1
    for k in prange(bounds.shape[0] - 1):
        pos = bounds[k] * room
        for f in range(bounds[k], bounds[k + 1]):
            pos = _write_row(values, f, precision, out, pos)
        ends[k] = pos


PARALLEL_VALUES = 200_000
"""Tables of at least this many values are formatted in chunks of rows, one per thread."""


def format_rows(values: np.ndarray, precision: int) -> bytes:
    """:func:`format_rows_buffer`'s text as bytes."""
    return format_rows_buffer(values, precision).tobytes()


def format_rows_buffer(values: np.ndarray, precision: int) -> np.ndarray:
    """One line per frame: the values with ``precision`` decimals, separated by spaces, as
    ASCII in a ``uint8`` array (a view of the work buffer: no copy of a big text).

    Compiled when every ``|value| * 10**precision`` is below 2**53 (always, for motion
    data), else Python's ``%`` formatting; both give the same text.
    """
    if values.size == 0:
        return np.frombuffer(b"\n" * len(values) if values.shape[1] == 0 else b"", np.uint8)
    if np.abs(values).max() * 10.0**precision >= _MAX_FAST_SCALED:
        row = " ".join([f"%.{precision}f"] * values.shape[1]) + "\n"
        text = "".join([row % tuple(frame) for frame in values.tolist()]).encode("ascii")
        return np.frombuffer(text, np.uint8)
    out = np.empty(values.size * (precision + 20) + len(values), dtype=np.uint8)
    notify_compiling()
    values = np.ascontiguousarray(values)
    threads = numba.get_num_threads()
    if threads > 1 and values.size >= PARALLEL_VALUES:
        bounds = np.linspace(0, len(values), threads + 1).astype(np.int64)
        ends = np.empty(threads, dtype=np.int64)
        _format_chunks(values, precision, bounds, out, ends)
        room = values.shape[1] * (precision + 20) + 1
        length = int(ends[0])
        for b, e in zip(bounds[1:-1], ends[1:]):  # each chunk moved up behind the one before
            n = int(e) - int(b) * room
            out[length : length + n] = out[int(b) * room : int(e)]
            length += n
        return out[:length]
    length = _format_rows_kernel(values, precision, out)
    return out[:length]
