"""The ``MOTION`` part of a BVH file, and reading a whole file (private to :mod:`ikrig.io.bvh`).

After the ``Frames:`` and ``Frame Time:`` lines, the frame rows are parsed in bulk by a
compiled scanner (:mod:`~ikrig.io.bvh._scan`; for a small file in a process that has not
started Numba, its NumPy twin in :mod:`~ikrig.io.bvh._rows`) that converts every number
(exactly: Clinger's fast path, Python's ``float`` for the rare rest) and counts the values on
each line, so that a row with the wrong number of values, a token that is not a number or a
wrong row count is reported with its line, by this module whichever scanner ran. The
``(F, C)`` channel values then become local rotations (rotation channels composed
intrinsically, degrees to xyzw quaternions, by a compiled kernel, :mod:`~ikrig.io.bvh._compose`,
or its NumPy twin here) and local positions (position channels replacing the ``OFFSET``).
:func:`_parse_file` puts hierarchy and motion together.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

import numpy as np

from ..._jit.lazy import prefer_numpy, spending
from ...errors import FileFormatError
from ...pose import Motion
from ._channels import _channel_layout, _Layout
from ._header import (
    _COUNT,
    _NUMBER,
    MAX_COORDINATE,
    _cut,
    _decode,
    _header_tokens,
    _parse_hierarchy,
    _shown,
    _TokenStream,
)
from ._rows import NUMPY_ROW_BYTES, Scan, scan_numpy

# --------------------------------------------------------------------------------------------
# Reading: the MOTION header
# --------------------------------------------------------------------------------------------

# ASCII whitespace other than LF (space, \t \r \v \f) separates, as everywhere in the file
_MOTION_LINE = re.compile(rb"^[ \t\r\v\f]*MOTION[ \t\r\v\f]*$", re.MULTILINE | re.IGNORECASE)
_FRAMES_LINE = re.compile(rb"\s*Frames\s*:\s*(\S*)\s*", re.IGNORECASE)
_FRAME_TIME_LINE = re.compile(rb"\s*Frame\s+Time\s*:\s*(\S*)\s*", re.IGNORECASE)
_NON_SPACE = re.compile(rb"\S+")


MAX_DEGREES = 1e7  # largest |angle| of a rotation channel: exact round trips to 6 decimals
_MAX_COUNT_DIGITS = 18  # a frame count of more digits cannot fit in any file


class _MotionHeader(NamedTuple):
    num_frames: int
    frame_time: float | None
    frames_line: int  # line of "Frames:"
    data_start: int  # byte offset of the first frame row
    data_line: int  # line number of the first frame row


def _next_nonblank_line(data: bytes, start: int, line: int) -> tuple[bytes, int, int] | None:
    """The next non-blank line at or after byte ``start`` (which begins line ``line``).

    Returns ``(text, its line number, byte offset after it)``, or None at the end of data.
    """
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        text = data[start:end]
        if text.strip():
            return text, line, end
        start, line = end, line + 1
    return None


def _parse_motion_header(data: bytes, start: int, line: int, path) -> _MotionHeader:
    """Parse ``Frames: <n>`` and ``Frame Time: <seconds>`` after the ``MOTION`` line."""
    found = _next_nonblank_line(data, start, line)
    match = found and _FRAMES_LINE.fullmatch(found[0])
    if not match:
        raise FileFormatError(path, found[1] if found else line, "expected 'Frames: <count>'")
    assert found is not None  # a match needs a line
    count, frames_line = _decode(match.group(1)), found[1]
    if not _COUNT.match(count):
        raise FileFormatError(path, frames_line, f"expected a frame count, found {_shown(count)}")
    if len(count.lstrip("0")) > _MAX_COUNT_DIGITS:
        raise FileFormatError(
            path, frames_line, f"frame count {_shown(count)} is larger than any file can hold"
        )
    found = _next_nonblank_line(data, found[2], frames_line + 1)
    match = found and _FRAME_TIME_LINE.fullmatch(found[0])
    if not match:
        line = found[1] if found else frames_line + 1
        raise FileFormatError(path, line, "expected 'Frame Time: <seconds>'")
    assert found is not None  # a match needs a line
    text = _decode(match.group(1))
    frame_time = float(text) if _NUMBER.match(text) else -1.0
    if not (0.0 <= frame_time < np.inf and (frame_time == 0 or 1.0 / frame_time < np.inf)):
        raise FileFormatError(
            path,
            found[1],
            "expected a frame time >= 0 (seconds; 0 for none) whose 1/frame time is finite,"
            f" found {_shown(text)}",
        )
    return _MotionHeader(int(count), frame_time or None, frames_line, found[2], found[1] + 1)


# --------------------------------------------------------------------------------------------
# Reading: the frame rows (compiled scanner or its NumPy twin)
# --------------------------------------------------------------------------------------------


class _Rows(NamedTuple):
    """Where the frame rows are: for messages about them."""

    data: bytes
    start: int  # byte offset of the first row
    first_line: int  # line number of the first row
    header: _MotionHeader
    labels: tuple[str, ...]  # per column, "joint channel"
    path: str | os.PathLike | None


def _parse_rows(rows: _Rows) -> np.ndarray:
    """The ``(F, C)`` frame values, checked: C numbers per non-blank line, F such lines.

    Raises:
        FileFormatError: the first problem in file order (a row with the wrong number of
            values, a row past ``Frames:``, a token that is not a number, too few rows).
    """
    num_frames, num_channels = rows.header.num_frames, len(rows.labels)
    size = len(rows.data) - rows.start
    num_lines = rows.data.count(b"\n", rows.start) + 1
    if not num_channels:  # every frame row is an (empty) line: at most one frame per line
        if num_frames > num_lines:
            raise _too_few_rows(rows, num_lines, num_lines, "lines")
        return np.zeros((num_frames, 0))
    # 'Frames:' is only a claim: never allocate more rows than the rest of the file can hold
    # (a row of C values takes at least 2 C - 1 bytes and its line break)
    most_rows = min(num_frames, num_lines, (size + 1) // (2 * num_channels))
    values: np.ndarray = np.empty(most_rows * num_channels)
    scan = _scan(rows, num_lines, values)
    line_counts = scan.line_counts
    if scan.bad >= 0:
        bad_line = rows.data.count(b"\n", rows.start, rows.start + scan.bad)
        _check_row_counts(rows, line_counts[:bad_line])
        raise _bad_token_error(rows, scan.bad, bad_line, line_counts)
    _check_row_counts(rows, line_counts)
    filled = np.flatnonzero(line_counts)
    if len(filled) < num_frames:
        last = rows.first_line + int(filled[-1]) if len(filled) else rows.first_line - 1
        raise _too_few_rows(rows, len(filled), last, "")
    _convert_slow_numbers(rows, values, scan.slow[0], scan.slow[1])
    values = values.reshape(num_frames, num_channels)
    _check_ranges(rows, values, filled)
    return values


def _scan(rows: _Rows, num_lines: int, out: np.ndarray) -> Scan:
    """The frame rows' numbers into ``out`` (``num_lines`` lines from ``rows.start``), by
    the compiled scanner or, while that is cheaper, its NumPy twin: the same results."""
    if prefer_numpy(len(rows.data) - rows.start, NUMPY_ROW_BYTES):
        with spending():
            return scan_numpy(rows.data, rows.start, num_lines, out)
    from ._scan import scan_rows  # imports Numba: only for this path

    return scan_rows(rows.data, rows.start, num_lines, len(rows.labels), out)


def _token_at(rows: _Rows, offset: int) -> bytes:
    """The token starting at byte ``offset`` of the rows (the caller found one there)."""
    match = _NON_SPACE.match(rows.data, rows.start + offset)
    assert match is not None
    return match.group()


def _too_few_rows(rows: _Rows, found: int, line: int, unit: str) -> FileFormatError:
    """'expected F frame rows, found only n' (``unit`` "lines" for files without channels)."""
    what = f"{found} {unit}" if unit else f"{found}"
    empty = " (empty lines: no joint has channels)" if unit else ""
    return FileFormatError(
        rows.path,
        line,
        f"expected {rows.header.num_frames} frame rows{empty} ('Frames:' at line"
        f" {rows.header.frames_line}), found only {what}",
    )


# A clip takes 56 bytes per frame and joint (a quaternion and a translation, float64). Joints
# without channels cost memory but no bytes in the rows, so a small file can claim a huge
# clip; refuse one that would need more than this many bytes per byte of file (and at least
# MIN_CLIP_BUDGET). Real files stay far below: 200 joints, only the root animated: ~190.
CLIP_BYTES_PER_FILE_BYTE = 1024
MIN_CLIP_BUDGET = 256 * 2**20


def _check_clip_memory(rows: _Rows, num_joints: int) -> None:
    """Refuse a clip whose arrays would need far more memory than its file could describe."""
    need = 56 * rows.header.num_frames * num_joints
    budget = max(MIN_CLIP_BUDGET, CLIP_BYTES_PER_FILE_BYTE * len(rows.data))
    if need > budget:
        raise FileFormatError(
            rows.path,
            rows.header.frames_line,
            f"{rows.header.num_frames} frames x {num_joints} joints would need"
            f" {need / 2**30:.3g} GiB, more than a file of {len(rows.data)} bytes can describe",
        )


def _check_ranges(rows: _Rows, values: np.ndarray, filled: np.ndarray) -> None:
    """Refuse position values beyond ``MAX_COORDINATE`` and angles beyond ``MAX_DEGREES``
    (the first in file order), naming the line."""
    rotation = np.array([label.lower().endswith("rotation") for label in rows.labels])
    limits = np.where(rotation, MAX_DEGREES, MAX_COORDINATE)
    bad = ~(np.abs(values) <= limits)
    if not bad.any():
        return
    frame, column = divmod(int(np.argmax(bad.ravel())), values.shape[1])
    limit = "|angle| <= 1e7 degrees" if rotation[column] else "|x| <= 1e30"
    raise FileFormatError(
        rows.path,
        rows.first_line + int(filled[frame]),
        f"value {values[frame, column]:.6g} for frame {frame}, column {column + 1}"
        f" ({_cut(rows.labels[column])}) is out of range ({limit})",
    )


def _check_row_counts(rows: _Rows, line_counts: np.ndarray) -> None:
    """Raise for the first line with a wrong number of values or past the last frame."""
    num_frames, num_channels = rows.header.num_frames, len(rows.labels)
    filled = np.flatnonzero(line_counts)
    wrong = filled[line_counts[filled] != num_channels]
    extra = filled[num_frames] if len(filled) > num_frames else None
    if len(wrong) and (extra is None or wrong[0] < extra):
        line, frame = int(wrong[0]), int(np.searchsorted(filled, wrong[0]))
        raise FileFormatError(
            rows.path,
            rows.first_line + line,
            f"frame {frame} has {line_counts[line]} values, expected {num_channels} (one per"
            " channel declared in the hierarchy)",
        )
    if extra is not None:
        raise FileFormatError(
            rows.path,
            rows.first_line + int(extra),
            f"more frame rows than the {num_frames} that 'Frames:' (line"
            f" {rows.header.frames_line}) declares",
        )


def _bad_token_error(rows: _Rows, offset: int, line: int, line_counts) -> FileFormatError:
    """The error for the non-numeric token at byte ``offset`` of the rows (on row ``line``)."""
    token = _token_at(rows, offset)
    column = int(line_counts[line])
    where = ""
    if column < len(rows.labels):
        frame = np.count_nonzero(line_counts[:line])
        where = f" for frame {frame}, column {column + 1} ({rows.labels[column]})"
    where = where.replace(rows.labels[column], _cut(rows.labels[column])) if where else ""
    return FileFormatError(
        rows.path, rows.first_line + line, f"expected a number{where}, found {_shown(token)}"
    )


def _convert_slow_numbers(rows: _Rows, values, indices, starts) -> None:
    """Convert the numbers the compiled fast path left out, with Python's exact ``float``."""
    for index, start in zip(indices.tolist(), starts.tolist()):
        token = _token_at(rows, start)
        value = float(token)
        if not np.isfinite(value):
            line = rows.first_line + rows.data.count(b"\n", rows.start, rows.start + start)
            raise FileFormatError(rows.path, line, f"number out of range: {_shown(token)}")
        values[index] = value


# --------------------------------------------------------------------------------------------
# From channel values to rotations and positions
# --------------------------------------------------------------------------------------------


NUMPY_ROTATIONS = 2_000_000
"""Frames times joints from which the rotations are always composed compiled (below,
before anything imported Numba, in NumPy: :mod:`ikrig._jit.lazy`)."""


def _rotations_from_channels(values: np.ndarray, layout: _Layout, num_joints: int) -> np.ndarray:
    """``(F, J, 4)`` xyzw local rotations from ``(F, C)`` channel values in degrees.

    Rotation channels compose intrinsically in the listed order (``q = q1 * q2 * q3``);
    joints without rotation channels get the identity.
    """
    most = len(layout.rotation_slots)  # the most rotation channels any joint has
    columns = np.full((num_joints, most), -1, dtype=np.int64)
    axes = np.zeros((num_joints, most), dtype=np.int64)
    for k, slot in enumerate(layout.rotation_slots):
        columns[slot.joints, k] = slot.columns
        axes[slot.joints, k] = slot.axes
    rotations = np.empty((len(values), num_joints, 4))
    if prefer_numpy(len(values) * num_joints, NUMPY_ROTATIONS):
        with spending():
            _compose_numpy(values, columns, axes, rotations)
    else:
        from ._compose import compose_rotations  # imports Numba: only for this path

        compose_rotations(values, columns, axes, rotations)
    return rotations


def _compose_numpy(values, columns, axes, out) -> None:
    """:func:`ikrig.io.bvh._compose.compose_rotations` in NumPy, one channel slot at a time
    over all frames and joints: the same products and sums in the same order (the zero
    components too, for the same signed zeros), so the same floats."""
    shape = (len(values), columns.shape[0])
    x, y, z, w = np.zeros(shape), np.zeros(shape), np.zeros(shape), np.ones(shape)
    zero = np.zeros(shape)
    for k in range(columns.shape[1]):
        joints = np.flatnonzero(columns[:, k] >= 0)  # a joint's slots come first
        half = values[:, columns[joints, k]] * (np.pi / 360.0)
        sin_half, bw = np.sin(half), np.cos(half)
        axis = axes[joints, k]
        bx, by, bz = (np.where(axis == a, sin_half, zero[:, joints]) for a in range(3))
        ax, ay, az, aw = x[:, joints], y[:, joints], z[:, joints], w[:, joints]
        x[:, joints] = aw * bx + ax * bw + ay * bz - az * by
        y[:, joints] = aw * by - ax * bz + ay * bw + az * bx
        z[:, joints] = aw * bz + ax * by - ay * bx + az * bw
        w[:, joints] = aw * bw - ax * bx - ay * by - az * bz
    out[..., 0], out[..., 1], out[..., 2], out[..., 3] = x, y, z, w


def _positions_from_channels(values: np.ndarray, layout: _Layout, offsets: np.ndarray):
    """``(F, J, 3)`` local translations: the OFFSETs, with position channels replacing theirs."""
    positions = np.repeat(offsets[None], len(values), axis=0)
    positions[:, layout.position_joints, layout.position_axes] = values[:, layout.position_columns]
    return positions


# --------------------------------------------------------------------------------------------
# The whole file
# --------------------------------------------------------------------------------------------


def _split_motion(data: bytes, path) -> tuple[str, re.Match]:
    """The hierarchy text and the match of the ``MOTION`` line.

    Raises:
        FileFormatError: there is no ``MOTION`` line (after checking the hierarchy parses,
            so that a broken hierarchy is reported first).
    """
    match = _MOTION_LINE.search(data)
    header = _decode(data if match is None else data[: match.start()])
    if match is None:
        end_line = header.count("\n") + 1
        _parse_hierarchy(
            _TokenStream(_header_tokens(header), path, end_line, "the end of the file")
        )
        raise FileFormatError(path, end_line, "expected a MOTION line after the hierarchy")
    return header, match


def _normalise_line_breaks(data: bytes) -> bytes:
    """Drop a UTF-8 byte order mark; turn old-Mac CR-only line breaks into LF."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\n" not in data and b"\r" in data:
        data = data.replace(b"\r", b"\n")
    return data


def _parse_file(data: bytes, path) -> tuple[Motion, tuple[tuple[str, ...], ...], np.ndarray]:
    """Parse a whole BVH file given as bytes: ``(motion, channels, values)`` for a clip."""
    data = _normalise_line_breaks(data)
    header, motion_match = _split_motion(data, path)
    motion_line = header.count("\n") + 1
    stream = _TokenStream(_header_tokens(header), path, motion_line, "MOTION")
    hierarchy = _parse_hierarchy(stream)
    skeleton = hierarchy.skeleton()
    channels = tuple(hierarchy.channels)
    layout = _channel_layout(channels, skeleton.names)
    motion_header = _parse_motion_header(data, motion_match.end() + 1, motion_line + 1, path)
    rows = _Rows(
        data,
        motion_header.data_start,
        motion_header.data_line,
        motion_header,
        layout.column_labels,
        path,
    )
    values = _parse_rows(rows)
    _check_clip_memory(rows, skeleton.num_joints)
    motion = Motion(
        skeleton,
        _rotations_from_channels(values, layout, skeleton.num_joints),
        _positions_from_channels(values, layout, skeleton.offsets),
        motion_header.frame_time,
    )
    return motion, channels, values
