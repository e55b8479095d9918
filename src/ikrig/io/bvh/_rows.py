"""A BVH file's frame rows as numbers, in NumPy (private to :mod:`ikrig.io.bvh`): the
:class:`Scan` record that both this scanner and the compiled one
(:mod:`~ikrig.io.bvh._scan`) fill, and :func:`scan_numpy`; :mod:`~ikrig.io.bvh._motion`
picks one of them (:data:`NUMPY_ROW_BYTES`).

Both read the same grammar, ``[+-]?(digits[.digits]|.digits)([eE][+-]?digits)?`` separated
by ASCII whitespace (space, tab, CR, LF, VT, FF), into the same correctly rounded floats,
and report the same things (values per line, the first bad token, the numbers left to
Python's ``float``), so :mod:`~ikrig.io.bvh._motion` checks and words every problem once,
whichever ran. The NumPy scanner lets Python's ``bytes.split`` and ``float`` do the work
(correctly rounded, as the compiled fast path is) after one look at the bytes: anything
but digits, signs, points, exponents and whitespace (``nan``, ``inf``, ``1_0``, which
``float`` would take) is a bad token. It spares a small file Numba's start-up (0.35 s);
the compiled scanner is about seven times faster a megabyte, so rows from
:data:`NUMPY_ROW_BYTES` on are scanned compiled.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

NUMPY_ROW_BYTES = 4 * 2**20
"""Frame rows of at least this many bytes are always scanned compiled (below, before
anything imported Numba, the NumPy scanner runs: :mod:`ikrig._jit.lazy`). The NumPy scan
takes about 0.05 s a megabyte; Numba's start-up and the compiled scan of a big file cost
about 0.35 s plus 0.005 s a megabyte."""

_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_TOKEN = re.compile(rb"[^ \t\n\r\v\f]+")
_NUMBER_BYTES = np.zeros(256, dtype=bool)
_NUMBER_BYTES[list(b"0123456789+-.eE \t\n\r\v\f")] = True


class Scan(NamedTuple):
    """What a scan of the frame rows found: ``line_counts`` (numbers per line), ``bad``
    (byte offset of the first bad token, -1 for none), the ``slow`` numbers' indices in
    ``out`` and their byte offsets (``(2, n)``), which the caller converts with Python's
    ``float`` (and refuses when infinite)."""

    line_counts: np.ndarray
    bad: int
    slow: np.ndarray


def scan_numpy(data: bytes, start: int, num_lines: int, out: np.ndarray) -> Scan:
    """Scan the ``num_lines`` lines of frame rows of ``data`` from byte ``start`` (the line
    breaks after ``start``, plus one): their numbers into ``out`` (in file order, numbers
    beyond ``out.size`` counted but not stored), with Python's ``bytes.split`` and
    ``float``. The same values, counts and first bad token as the compiled
    :func:`ikrig.io.bvh._scan.scan_rows`; the slow numbers it lists are only
    the infinite ones (``1e999``, which the caller refuses with their line)."""
    rows = data[start:]
    if not _NUMBER_BYTES[np.frombuffer(rows, dtype=np.uint8)].all():
        return _scan_to_bad_token(rows, num_lines)
    tokens = rows.split()
    try:
        values = np.fromiter(map(float, tokens), dtype=np.float64, count=len(tokens))
    except ValueError:  # "1.2.3", "--1", "1e": characters of numbers, no number
        return _scan_to_bad_token(rows, num_lines)
    n = min(len(values), out.size)
    out[:n] = values[:n]
    infinite = np.flatnonzero(~np.isfinite(values[:n]))
    slow = np.zeros((2, len(infinite)), dtype=np.int64)
    if len(infinite):  # rare: their byte offsets, for the message
        slow[0] = infinite
        slow[1] = np.array([m.start() for m in _TOKEN.finditer(rows)])[infinite]
    return Scan(_line_counts(rows, num_lines), -1, slow)


def _line_counts(rows: bytes, num_lines: int) -> np.ndarray:
    """The numbers (tokens) on each of the ``num_lines`` lines of ``rows`` (the lines past
    its end hold none)."""
    counts = np.zeros(num_lines, dtype=np.int64)
    found = np.fromiter(map(len, map(bytes.split, rows.split(b"\n"))), dtype=np.int64)
    counts[: len(found)] = found[:num_lines]
    return counts


def _scan_to_bad_token(rows: bytes, num_lines: int) -> Scan:
    """The scan of rows holding a bad token: its byte offset and the counts of the lines
    up to it (its own line's only up to it), as the compiled scan stops there. The values
    are not needed: the caller reports the token."""
    bad = next(m.start() for m in _TOKEN.finditer(rows) if not _NUMBER.fullmatch(m.group()))
    return Scan(_line_counts(rows[:bad], num_lines), bad, np.zeros((2, 0), dtype=np.int64))
