"""The compiled scanner of a BVH file's frame rows (private to :mod:`ikrig.io.bvh`; its
NumPy twin and the record both fill are in :mod:`~ikrig.io.bvh._rows`).

:func:`_scan_numbers` converts every number of the rows (exactly: Clinger's fast path, the
rest left to Python's ``float``) and counts the values on each line, in one pass.
:func:`scan_rows` runs it, or on a big file (``PARALLEL_BYTES``) splits the rows at line
breaks into one chunk per thread and scans the chunks at once (:func:`_scan_chunks`),
each number going straight to its row and column; any irregularity (a bad token, a blank
line among the rows) sends the file back to the one-pass scan, whose results and messages
are the reference.
"""

from __future__ import annotations

import numpy as np

from ..._jit.setup import njit, numba, prange
from ._rows import Scan

_POW10 = np.array([10.0**k for k in range(23)])  # all exact in float64
_MAX_EXACT_MANTISSA = 2**53
_OK, _SLOW, _BAD = 0, 1, 2


@njit(cache=True)
def _is_space(c) -> bool:
    return c == 32 or 9 <= c <= 13  # space, \t \n \v \f \r


@njit(cache=True)
def _parse_exponent(buf, pos):
    """Parse ``[+-]digits`` at ``buf[pos]``; returns ``(value, end, ok)``, value clamped."""
    negative = pos < buf.size and buf[pos] == 45
    if pos < buf.size and (buf[pos] == 45 or buf[pos] == 43):
        pos += 1
    value, digits = 0, 0
    while pos < buf.size and 48 <= buf[pos] <= 57:
        value = min(value * 10 + (buf[pos] - 48), 100000)
        digits += 1
        pos += 1
    return (-value if negative else value), pos, digits > 0


@njit(cache=True)
def _parse_number(buf, pos):
    """Parse the decimal number whose token starts at ``buf[pos]`` (bytes, uint8).

    Returns ``(value, end, status)``: ``status`` is ``_OK`` (value exact: the correctly
    rounded float, as Python's ``float`` gives), ``_SLOW`` (valid but beyond the exact fast
    path, more than 15-16 significant digits or a large exponent: the caller recomputes it) or
    ``_BAD`` (not a number; ``end`` is undefined).
    """
    n = buf.size
    negative = buf[pos] == 45
    if buf[pos] == 45 or buf[pos] == 43:
        pos += 1
    mantissa, significant, digits, exp10 = 0, 0, 0, 0
    exact, after_point = True, False
    while pos < n:
        c = buf[pos]
        if 48 <= c <= 57:
            digits += 1
            if significant < 18:
                mantissa = mantissa * 10 + (c - 48)
                if mantissa > 0:
                    significant += 1
                if after_point:
                    exp10 -= 1
            else:  # beyond 18 significant digits: drop it, noting its place and value
                if not after_point:
                    exp10 += 1
                if c != 48:
                    exact = False
        elif c == 46 and not after_point:
            after_point = True
        else:
            break
        pos += 1
    if digits == 0:
        return 0.0, pos, _BAD
    if pos < n and (buf[pos] == 101 or buf[pos] == 69):  # e E
        exponent, pos, ok = _parse_exponent(buf, pos + 1)
        if not ok:
            return 0.0, pos, _BAD
        exp10 += exponent
    if pos < n and not _is_space(buf[pos]):
        return 0.0, pos, _BAD
    if not exact or mantissa > _MAX_EXACT_MANTISSA or exp10 < -22 or exp10 > 22:
        return 0.0, pos, _SLOW
    # Clinger's fast path: both factors are exact, so one rounding gives the correct float.
    value = mantissa * _POW10[exp10] if exp10 >= 0 else mantissa / _POW10[-exp10]
    return (-value if negative else value), pos, _OK


@njit(cache=True)
def _scan_numbers(buf, out, line_counts, slow_index, slow_start):
    """Parse every whitespace-separated number of ``buf`` (uint8) into ``out``.

    ``line_counts[i]`` counts the numbers on line ``i`` (``\\n``-separated). Numbers past
    ``out.size`` are counted but not stored. Numbers the fast path cannot convert exactly
    are listed in ``slow_index`` (their index in ``out``) and ``slow_start`` (byte offset).

    Returns ``(numbers found, byte offset of the first bad token or -1, slow count)``; the
    scan stops at a bad token, leaving the counts of its line incomplete.
    """
    pos, line, k, n_slow = 0, 0, 0, 0
    while pos < buf.size:
        c = buf[pos]
        if c == 10:
            line += 1
            pos += 1
        elif _is_space(c):
            pos += 1
        else:
            value, end, status = _parse_number(buf, pos)
            if status == _BAD:
                return k, pos, n_slow
            if k < out.size:
                out[k] = value
                if status == _SLOW:
                    slow_index[n_slow] = k
                    slow_start[n_slow] = pos
                    n_slow += 1
            k += 1
            line_counts[line] += 1
            pos = end
    return k, -1, n_slow


PARALLEL_BYTES = 2**20
"""Rows of at least this many bytes are scanned in chunks, one per thread: below it waking
the threads costs more than it saves."""


@njit(cache=True, parallel=True)
def _scan_chunks(buf, cuts, first_line, width, out, line_counts, slow, counts):
    """Scan chunk ``k`` of ``buf`` (bytes ``cuts[k]`` to ``cuts[k + 1]``, which start lines,
    the first being line ``first_line[k]``) on its own thread: the ``c``-th number of line
    ``i`` goes to ``out[i * width + c]`` (when ``c < width`` and inside ``out``), and
    ``line_counts[i]`` counts the numbers of line ``i``.

    ``slow``: ``(2, N)`` the slow numbers' indices in ``out`` and byte offsets, chunk ``k``
    from ``first_line[k] * width`` on; ``counts``: ``(K, 2)`` per chunk the slow numbers
    and the byte offset of its first bad token (-1: none; the chunk stops there)."""
    for k in prange(cuts.shape[0] - 1):
        pos, end, line, col = cuts[k], cuts[k + 1], first_line[k], 0
        base, n_slow = first_line[k] * width, 0
        counts[k, 1] = -1
        while pos < end:
            c = buf[pos]
            if c == 10:
                line += 1
                col = 0
                pos += 1
            elif _is_space(c):
                pos += 1
            else:
                value, stop, status = _parse_number(buf, pos)
                if status == _BAD:
                    counts[k, 1] = pos
                    break
                index = line * width + col
                if col < width and index < out.size:
                    out[index] = value
                    if status == _SLOW:
                        slow[0, base + n_slow] = index
                        slow[1, base + n_slow] = pos
                        n_slow += 1
                col += 1
                line_counts[line] += 1
                pos = stop
        counts[k, 0] = n_slow


def scan_rows(data: bytes, start: int, num_lines: int, width: int, out: np.ndarray) -> Scan:
    """:func:`ikrig.io.bvh._rows.scan_numpy`, compiled. Scan the ``num_lines`` lines of
    frame rows of ``data`` from byte ``start`` (the line breaks after ``start``, plus
    one): their numbers into ``out``
    (row after row, ``width`` values each: the file's numbers in order when every line
    holds ``width`` values), with :func:`_scan_numbers` or, for big, regular rows, in
    chunks on every thread (the same values and counts)."""
    buf = np.frombuffer(data, dtype=np.uint8, offset=start)
    threads = numba.get_num_threads()
    if threads > 1 and width > 0 and len(buf) >= PARALLEL_BYTES:
        cuts = [0]
        for k in range(1, threads):
            nl = data.find(b"\n", start + k * len(buf) // threads)
            if nl < 0:
                break
            cuts.append(max(nl + 1 - start, cuts[-1]))
        cuts.append(len(buf))
        first = [0]
        for a, b in zip(cuts[:-2], cuts[1:-1]):
            first.append(first[-1] + data.count(b"\n", start + a, start + b))
        line_counts = np.zeros(num_lines, dtype=np.int64)
        slow = np.empty((2, out.size), dtype=np.int64)  # untouched pages cost nothing
        counts = np.zeros((len(cuts) - 1, 2), dtype=np.int64)
        _scan_chunks(buf, np.array(cuts, dtype=np.int64), np.array(first, dtype=np.int64),
                     width, out, line_counts, slow, counts)  # fmt: skip
        filled = np.flatnonzero(line_counts)
        rows = min(len(filled), out.size // width)
        if (counts[:, 1] < 0).all() and (filled[:rows] == np.arange(rows)).all():
            parts = [slow[:, f * width : f * width + n] for f, n in zip(first, counts[:, 0])]
            return Scan(line_counts, -1, np.concatenate(parts, axis=1))
    # one pass, in file order: the reference (packs the numbers whatever the lines hold)
    line_counts = np.zeros(num_lines, dtype=np.int64)
    slow = np.empty((2, out.size), dtype=np.int64)
    _, bad, n_slow = _scan_numbers(buf, out, line_counts, slow[0], slow[1])
    return Scan(line_counts, int(bad), slow[:, :n_slow])
