"""BVH (Biovision Hierarchy) motion files: read and write.

A BVH file has two parts. ``HIERARCHY`` lists the joints depth first, each with an ``OFFSET``
(its rest translation in the parent's space), a ``CHANNELS`` line and its children (``JOINT``
blocks, or an ``End Site`` with only an ``OFFSET``). ``MOTION`` gives ``Frames:``,
``Frame Time:`` (seconds) and one row per frame with one value per channel, in the order the
channels were declared.

How the values map onto a :class:`~ikrig.pose.Motion` (``rotations_local (F, J, 4)`` xyzw,
``positions_local (F, J, 3)``):

- Rotation channels (``Xrotation``, ``Yrotation``, ``Zrotation``, any number, any order) are
  degrees in the file and compose intrinsically in the order listed: ``Zrotation Yrotation
  Xrotation`` means ``R = Rz @ Ry @ Rx`` (SciPy order ``"ZYX"``). A joint without rotation
  channels has the identity rotation.
- Position channels (``Xposition``, ``Yposition``, ``Zposition``) give the joint's local
  translation and **replace** its ``OFFSET`` in ``positions_local``; a component without a
  channel keeps the ``OFFSET``'s value. This matters for files whose root ``OFFSET`` is not
  zero: the root's position is the channel values, not ``OFFSET`` plus channel values. A joint
  without position channels has ``positions_local`` equal to its ``OFFSET`` in every frame.
  The ``OFFSET`` itself is kept in ``Skeleton.offsets`` (and written back unchanged).
- ``End Site`` offsets go to ``Skeleton.end_site_parents`` / ``end_site_offsets``.
- ``Frame Time: 0`` (seen in single-pose files) is read as ``frame_time=None`` and a clip
  without a frame time is written with ``Frame Time: 0``.

Writing keeps the clip's hierarchy and channel layout, joints depth first, values printed
with ``precision`` decimals (default 6, rounded exactly as ``"%.6f"`` does, by a compiled
formatter). Position channels take their values from ``positions_local``; components
without a channel are not written. Rotation channels are Euler angles decomposed from
``rotations_local``. A rotation has two Euler triples (for
Tait-Bryan orders ``(a, b, c)`` and ``(a + pi, pi - b, c + pi)``, for proper Euler orders
``(a + pi, -b, c + pi)``), each angle also up to ``2 pi k``. The writer picks, per frame, the
one closest to ``BvhClip.source_values`` (the values read from the file) when their shape
matches the clip, else closest to the previous written frame, so a read-write-read round trip
gives back the file's values to the printed precision and edited clips stay close to the
original curves. At gimbal lock (middle angle at +-90 degrees, or 0/180 for proper Euler
orders) only the sum or difference of the outer angles is defined: the first angle keeps its
reference value. A joint with one or two rotation channels is decomposed with the missing
axes appended (``Zrotation Xrotation`` as ``"ZXY"``) and the appended angles are dropped, which
is exact when the rotation has no component about them.

Parsing: the header is tokenised in Python with line numbers; the ``MOTION`` rows are parsed
in bulk by a compiled scanner that also counts the values on every line, so a malformed file
raises :class:`~ikrig.errors.FileFormatError` naming the file, the line and what was expected
(wrong number of values in a row, a brace missing or extra, an unknown channel, a value that
is not a number, fewer or more rows than ``Frames:``, a missing ``MOTION``/``Frames``/
``Frame Time``, a duplicate joint name, a ``CHANNELS`` count that does not match its names).
Line breaks may be LF, CRLF or CR; tabs, blank lines and trailing spaces are accepted anywhere.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._numba import njit, notify_compiling
from ..errors import FileFormatError, InputError
from ..math import quat_normalize, quat_to_euler
from ..pose import Motion
from ..skeleton import Skeleton

__all__ = ["BvhClip", "format_bvh", "parse_bvh", "read_bvh", "write_bvh"]


class _Channel(NamedTuple):
    kind: str  # "position" or "rotation"
    axis: int  # 0 = X, 1 = Y, 2 = Z


_CHANNELS = {
    f"{axis_name}{kind}": _Channel(kind, axis)
    for kind in ("position", "rotation")
    for axis, axis_name in enumerate("xyz")
}
_CHANNEL_NAMES = "Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation"


def _channel(name: str) -> _Channel | None:
    """The kind and axis of a channel name (case-insensitive), or None if unknown."""
    return _CHANNELS.get(name.lower())


# --------------------------------------------------------------------------------------------
# The clip
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BvhClip:
    """A BVH clip: the motion plus what is needed to write it back in the same layout.

    Attributes:
        motion: the :class:`~ikrig.pose.Motion`, batch shape ``(F,)``: ``rotations_local
            (F, J, 4)`` xyzw, ``positions_local (F, J, 3)`` in the file's units, ``frame_time``
            in seconds (``None`` when the file says 0).
        channels: per joint, the channel names exactly as in the file, e.g. ``("Xposition",
            "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")``; ``()`` for a
            joint without channels.
        source_values: ``(F, C)`` float64, the channel values as read (degrees for rotations),
            or ``None``. Only used as the reference when choosing among equivalent Euler
            angles on writing.
        path: the file the clip was read from, or ``None``.

    Raises:
        InputError: ``channels`` does not have one entry per joint, names an unknown channel,
            or ``source_values`` is not a finite 2-D array with one column per channel.
    """

    motion: Motion
    channels: tuple[tuple[str, ...], ...]
    source_values: np.ndarray | None = None
    path: str | None = None

    def __post_init__(self):
        if not isinstance(self.motion, Motion):
            raise InputError(f"motion: expected an ikrig Motion, got {type(self.motion).__name__}")
        channels = tuple(tuple(str(name) for name in joint) for joint in self.channels)
        _check_channels(channels, self.motion.skeleton)
        object.__setattr__(self, "channels", channels)
        if self.source_values is not None:
            source = _checked_source_values(self.source_values, channels)
            object.__setattr__(self, "source_values", source)
        if self.path is not None:
            object.__setattr__(self, "path", os.fspath(self.path))

    @property
    def frame_time(self) -> float | None:
        """Seconds per frame, or ``None``."""
        return self.motion.frame_time

    @property
    def num_frames(self) -> int:
        """Number of frames ``F`` (1 for a single pose)."""
        return self.motion.num_frames

    @property
    def fps(self) -> float | None:
        """Frames per second ``1 / frame_time``, or ``None`` without a frame time."""
        return None if self.frame_time is None else 1.0 / self.frame_time

    @property
    def duration(self) -> float | None:
        """``num_frames * frame_time`` in seconds, or ``None`` without a frame time."""
        return None if self.frame_time is None else self.num_frames * self.frame_time

    def with_motion(self, motion: Motion) -> BvhClip:
        """The same clip layout with another motion (an edited copy of this one).

        ``source_values`` is kept as the Euler reference; it is used only while the new
        motion has as many frames as it has rows.

        Raises:
            InputError: the motion's skeleton has a different number of joints or different
                parents than this clip's.
        """
        if not isinstance(motion, Motion):
            raise InputError(f"motion: expected an ikrig Motion, got {type(motion).__name__}")
        if not np.array_equal(motion.skeleton.parents, self.motion.skeleton.parents):
            raise InputError(
                "motion: its skeleton's hierarchy (parents) differs from the clip's; a BVH"
                " clip's channel layout needs the same joints in the same order"
            )
        return replace(self, motion=motion)


def _check_channels(channels: tuple[tuple[str, ...], ...], skeleton: Skeleton) -> None:
    """Raise InputError unless there is one tuple of known channel names per joint."""
    if len(channels) != skeleton.num_joints:
        raise InputError(
            f"channels: expected one entry per joint ({skeleton.num_joints}), got {len(channels)}"
        )
    for name, joint_channels in zip(skeleton.names, channels):
        for channel in joint_channels:
            if _channel(channel) is None:
                raise InputError(
                    f"channels: joint {name!r} has unknown channel {channel!r};"
                    f" expected {_CHANNEL_NAMES}"
                )


def _checked_source_values(values, channels) -> np.ndarray:
    """``values`` as a read-only finite ``(F, C)`` float64 array, else InputError."""
    num_channels = sum(len(c) for c in channels)
    source = np.array(values, dtype=np.float64)
    if source.ndim != 2 or source.shape[1] != num_channels:
        raise InputError(
            f"source_values: expected shape (F, {num_channels}) (one column per channel),"
            f" got {source.shape}"
        )
    if not np.isfinite(source).all():
        raise InputError("source_values: contains NaN or infinite values")
    source.flags.writeable = False
    return source


# --------------------------------------------------------------------------------------------
# Channel layout: which column of a frame row feeds which joint, axis and kind
# --------------------------------------------------------------------------------------------


class _RotationSlot(NamedTuple):
    """The k-th rotation channel of every joint that has at least k + 1 of them."""

    joints: np.ndarray  # (n,) joint index
    axes: np.ndarray  # (n,) rotation axis, 0..2
    columns: np.ndarray  # (n,) column of the frame rows


class _Layout(NamedTuple):
    num_channels: int
    position_joints: np.ndarray  # (P,)
    position_axes: np.ndarray  # (P,)
    position_columns: np.ndarray  # (P,)
    rotation_slots: tuple[_RotationSlot, ...]
    rotation_axes: tuple[tuple[int, ...], ...]  # per joint, its rotation axes in order
    column_labels: tuple[str, ...]  # "joint channel" per column, for messages


def _channel_layout(channels, names, file_order=None) -> _Layout:
    """Map the columns of a frame row to joints, axes and kinds.

    Args:
        channels: per joint, its channel names (all known).
        names: joint names, for messages.
        file_order: the joint indices in the order they appear in the file (depth first);
            default ``range(J)``.
    """
    order = range(len(channels)) if file_order is None else file_order
    positions, rotations, labels = [], [], []
    rotation_axes = [()] * len(channels)
    for j in order:
        axes = []
        for name in channels[j]:
            kind, axis = _channel(name)
            column = len(labels)
            if kind == "position":
                positions.append((j, axis, column))
            else:
                rotations.append((len(axes), j, axis, column))
                axes.append(axis)
            labels.append(f"{names[j]} {name}")
        rotation_axes[j] = tuple(axes)
    slots = tuple(
        _RotationSlot(*_int_columns([r[1:] for r in rotations if r[0] == k], 3))
        for k in range(max((r[0] + 1 for r in rotations), default=0))
    )
    return _Layout(
        len(labels), *_int_columns(positions, 3), slots, tuple(rotation_axes), tuple(labels)
    )


def _int_columns(rows, width: int) -> list[np.ndarray]:
    """The columns of a list of integer tuples, as int64 arrays (empty ones for no rows)."""
    table = np.array(rows, dtype=np.int64).reshape(-1, width)
    return [table[:, i] for i in range(width)]


# --------------------------------------------------------------------------------------------
# Reading: the hierarchy
# --------------------------------------------------------------------------------------------


class _Token(NamedTuple):
    text: str
    line: int  # 1-based line number in the file


_TOKEN = re.compile(r"[{}]|[^\s{}]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_COUNT = re.compile(r"[0-9]+\Z")
_NON_SPACE = re.compile(rb"\S+")
_BRACES = ("{", "}")


def _header_tokens(header: str) -> list[_Token]:
    """Split the hierarchy text into tokens (braces are always tokens of their own)."""
    return [
        _Token(match.group(), number)
        for number, line in enumerate(header.split("\n"), 1)
        for match in _TOKEN.finditer(line)
    ]


class _TokenStream:
    """A cursor over header tokens that reports problems as FileFormatError."""

    def __init__(self, tokens: list[_Token], path, end_line: int, end_what: str):
        self.tokens = tokens
        self.position = 0
        self.path = path
        self.end_line = end_line  # where to report "found the end"
        self.end_what = end_what  # "MOTION" or "the end of the file"

    def at_end(self) -> bool:
        return self.position >= len(self.tokens)

    def peek(self) -> _Token | None:
        return None if self.at_end() else self.tokens[self.position]

    def next(self, expected: str) -> _Token:
        """The next token; at the end, raise ``expected <expected>, found <the end>``."""
        if self.at_end():
            raise self.error(self.end_line, f"expected {expected}, found {self.end_what}")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def rest_of_line(self, line: int) -> list[_Token]:
        """Consume and return the tokens left on ``line``, stopping at a brace."""
        rest = []
        while (token := self.peek()) is not None and token.line == line:
            if token.text in _BRACES:
                break
            rest.append(self.next(""))
        return rest

    def error(self, line: int | None, reason: str) -> FileFormatError:
        return FileFormatError(self.path, line, reason)


@dataclass
class _Hierarchy:
    """Joints and end sites collected while parsing, in file (depth-first) order."""

    names: list[str] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    offsets: list[tuple[float, float, float]] = field(default_factory=list)
    channels: list[tuple[str, ...]] = field(default_factory=list)
    site_parents: list[int] = field(default_factory=list)
    site_offsets: list[tuple[float, float, float]] = field(default_factory=list)
    defined_at: dict[str, int] = field(default_factory=dict)  # name -> line

    def add_joint(self, name: str, parent: int, line: int) -> int:
        self.names.append(name)
        self.parents.append(parent)
        self.offsets.append((0.0, 0.0, 0.0))
        self.channels.append(())
        self.defined_at[name] = line
        return len(self.names) - 1

    def skeleton(self) -> Skeleton:
        return Skeleton(
            tuple(self.names),
            np.array(self.parents, dtype=np.int64),
            np.array(self.offsets, dtype=np.float64).reshape(-1, 3),
            np.array(self.site_parents, dtype=np.int64),
            np.array(self.site_offsets, dtype=np.float64).reshape(-1, 3),
        )


def _parse_hierarchy(stream: _TokenStream) -> _Hierarchy:
    """Parse ``HIERARCHY`` and its ``ROOT`` blocks (several roots are allowed)."""
    first = stream.next("'HIERARCHY'")
    if first.text.upper() != "HIERARCHY":
        raise stream.error(
            first.line, f"expected 'HIERARCHY' to start the file, found {first.text!r}"
        )
    hierarchy = _Hierarchy()
    last_close = None
    while not stream.at_end():
        token = stream.next("ROOT")
        if token.text.upper() == "ROOT":
            last_close = _parse_joint(stream, hierarchy, -1, token)
        elif token.text == "}":
            raise stream.error(token.line, "unexpected '}': more closing braces than opening ones")
        else:
            hint = ""
            if last_close is not None and token.text.upper() in ("JOINT", "OFFSET", "CHANNELS"):
                hint = f" (did an extra '}}' at line {last_close} close the root early?)"
            raise stream.error(token.line, f"expected ROOT or MOTION, found {token.text!r}{hint}")
    if not hierarchy.names:
        raise stream.error(stream.end_line, "expected ROOT: the hierarchy has no joints")
    return hierarchy


def _parse_joint(stream: _TokenStream, hierarchy: _Hierarchy, parent: int, keyword: _Token) -> int:
    """Parse a ``ROOT``/``JOINT`` block after its keyword; return the line of its ``}``."""
    name = _joint_name(stream, keyword)
    if name in hierarchy.defined_at:
        raise stream.error(
            keyword.line,
            f"duplicate joint name {name!r} (first defined at line {hierarchy.defined_at[name]})",
        )
    j = hierarchy.add_joint(name, parent, keyword.line)
    opening = _expect_open_brace(stream, f"after {keyword.text} {name}")
    seen: dict[str, int] = {}
    while True:
        token = stream.next(f"'}}' closing joint {name!r} (opened at line {opening.line})")
        word = token.text.upper()
        if token.text == "}":
            break
        if word in seen and word in ("OFFSET", "CHANNELS"):
            raise stream.error(
                token.line, f"joint {name!r} has a second {word} line (first at line {seen[word]})"
            )
        seen.setdefault(word, token.line)
        if word == "OFFSET":
            hierarchy.offsets[j] = _parse_offset(stream, token)
        elif word == "CHANNELS":
            hierarchy.channels[j] = _parse_channels(stream, token)
        elif word == "JOINT":
            _parse_joint(stream, hierarchy, j, token)
        elif word == "END":
            _parse_end_site(stream, hierarchy, j, token)
        else:
            raise stream.error(token.line, _unexpected_in_joint(token, name, opening.line))
    if "OFFSET" not in seen:
        raise stream.error(opening.line, f"joint {name!r} has no OFFSET line")
    return token.line


def _unexpected_in_joint(token: _Token, name: str, opened_at: int) -> str:
    """The message for a token that cannot appear inside a joint block."""
    if token.text.upper() == "ROOT":
        return f"expected '}}' closing joint {name!r} (opened at line {opened_at}) before ROOT"
    return (
        f"unexpected {token.text!r} in joint {name!r}: expected OFFSET, CHANNELS, JOINT,"
        " End Site or '}'"
    )


def _joint_name(stream: _TokenStream, keyword: _Token) -> str:
    """The joint name: every token after the keyword on its line, up to a brace."""
    parts = [token.text for token in stream.rest_of_line(keyword.line)]
    if not parts:
        raise stream.error(keyword.line, f"expected a joint name after {keyword.text}")
    return " ".join(parts)


def _expect_open_brace(stream: _TokenStream, context: str) -> _Token:
    token = stream.next(f"'{{' {context}")
    if token.text != "{":
        raise stream.error(token.line, f"expected '{{' {context}, found {token.text!r}")
    return token


def _parse_offset(stream: _TokenStream, keyword: _Token) -> tuple[float, float, float]:
    """The three numbers following ``OFFSET`` on its line."""
    values = stream.rest_of_line(keyword.line)
    if len(values) != 3:
        raise stream.error(keyword.line, f"expected 3 numbers after OFFSET, found {len(values)}")
    return tuple(_header_number(stream, token, "OFFSET") for token in values)


def _header_number(stream: _TokenStream, token: _Token, what: str) -> float:
    if not _NUMBER.match(token.text):
        raise stream.error(token.line, f"expected a number in {what}, found {token.text!r}")
    return float(token.text)


def _parse_channels(stream: _TokenStream, keyword: _Token) -> tuple[str, ...]:
    """The channel names of a ``CHANNELS <count> <names...>`` line, checked."""
    rest = stream.rest_of_line(keyword.line)
    if not rest or not _COUNT.match(rest[0].text):
        found = repr(rest[0].text) if rest else "nothing"
        raise stream.error(
            keyword.line, f"expected the channel count after CHANNELS, found {found}"
        )
    count, names = int(rest[0].text), [token.text for token in rest[1:]]
    if count != len(names):
        raise stream.error(
            keyword.line, f"CHANNELS says {count} channels but lists {len(names)} names"
        )
    for name in names:
        if _channel(name) is None:
            raise stream.error(keyword.line, f"unknown channel {name!r}; expected {_CHANNEL_NAMES}")
    positions = [_channel(name).axis for name in names if _channel(name).kind == "position"]
    if len(set(positions)) != len(positions):
        raise stream.error(keyword.line, "a position channel is listed twice")
    return tuple(names)


def _parse_end_site(stream: _TokenStream, hierarchy: _Hierarchy, parent: int, keyword: _Token):
    """Parse an ``End Site { OFFSET x y z }`` block after its ``End`` keyword."""
    rest = stream.rest_of_line(keyword.line)
    if not rest or rest[0].text.upper() != "SITE":
        raise stream.error(keyword.line, "expected 'End Site'")
    opening = _expect_open_brace(stream, "after End Site")
    offset = None
    while (
        token := stream.next(f"'}}' closing End Site (opened at line {opening.line})")
    ).text != "}":
        if token.text.upper() != "OFFSET" or offset is not None:
            raise stream.error(token.line, f"expected one OFFSET in End Site, found {token.text!r}")
        offset = _parse_offset(stream, token)
    if offset is None:
        raise stream.error(opening.line, "End Site has no OFFSET line")
    hierarchy.site_parents.append(parent)
    hierarchy.site_offsets.append(offset)


# --------------------------------------------------------------------------------------------
# Reading: the MOTION header
# --------------------------------------------------------------------------------------------

_MOTION_LINE = re.compile(rb"^[ \t]*MOTION[ \t\r]*$", re.MULTILINE | re.IGNORECASE)
_FRAMES_LINE = re.compile(rb"\s*Frames\s*:\s*(\S*)\s*", re.IGNORECASE)
_FRAME_TIME_LINE = re.compile(rb"\s*Frame\s+Time\s*:\s*(\S*)\s*", re.IGNORECASE)


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
    count, frames_line = _decode(match.group(1)), found[1]
    if not _COUNT.match(count):
        raise FileFormatError(path, frames_line, f"expected a frame count, found {count!r}")
    found = _next_nonblank_line(data, found[2], frames_line + 1)
    match = found and _FRAME_TIME_LINE.fullmatch(found[0])
    if not match:
        line = found[1] if found else frames_line + 1
        raise FileFormatError(path, line, "expected 'Frame Time: <seconds>'")
    text = _decode(match.group(1))
    frame_time = float(text) if _NUMBER.match(text) else -1.0
    if not (0.0 <= frame_time < np.inf):
        raise FileFormatError(path, found[1], f"expected a frame time >= 0, found {text!r}")
    return _MotionHeader(int(count), frame_time or None, frames_line, found[2], found[1] + 1)


# --------------------------------------------------------------------------------------------
# Reading: the frame rows (compiled scanner)
# --------------------------------------------------------------------------------------------

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


class _Rows(NamedTuple):
    """Where the frame rows are: for messages about them."""

    data: bytes
    start: int  # byte offset of the first row
    first_line: int  # line number of the first row
    header: _MotionHeader
    labels: tuple[str, ...]  # per column, "joint channel"
    path: object


def _parse_rows(rows: _Rows) -> np.ndarray:
    """The ``(F, C)`` frame values, checked: C numbers per non-blank line, F such lines.

    Raises:
        FileFormatError: the first problem in file order (a row with the wrong number of
            values, a row past ``Frames:``, a token that is not a number, too few rows).
    """
    num_frames, num_channels = rows.header.num_frames, len(rows.labels)
    buf = np.frombuffer(rows.data, dtype=np.uint8, offset=rows.start)
    values = np.empty(num_frames * num_channels)
    line_counts = np.zeros(rows.data.count(b"\n", rows.start) + 1, dtype=np.int64)
    slow_index = np.empty(values.size, dtype=np.int64)  # untouched pages cost nothing
    slow_start = np.empty(values.size, dtype=np.int64)
    notify_compiling()
    _, bad, n_slow = _scan_numbers(buf, values, line_counts, slow_index, slow_start)
    if bad >= 0:
        bad_line = rows.data.count(b"\n", rows.start, rows.start + bad)
        _check_row_counts(rows, line_counts[:bad_line])
        raise _bad_token_error(rows, bad, bad_line, line_counts)
    _check_row_counts(rows, line_counts)
    filled = np.flatnonzero(line_counts)
    if num_channels and len(filled) < num_frames:
        last = rows.first_line + int(filled[-1]) if len(filled) else rows.first_line - 1
        raise FileFormatError(
            rows.path,
            last,
            f"expected {num_frames} frame rows ('Frames:' at line {rows.header.frames_line}),"
            f" found only {len(filled)}",
        )
    _convert_slow_numbers(rows, values, slow_index[:n_slow], slow_start[:n_slow])
    return values.reshape(num_frames, num_channels)


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
    token = _NON_SPACE.match(rows.data, rows.start + offset).group()
    column = int(line_counts[line])
    where = ""
    if column < len(rows.labels):
        frame = np.count_nonzero(line_counts[:line])
        where = f" for frame {frame}, column {column + 1} ({rows.labels[column]})"
    shown = token[:40].decode("utf-8", errors="replace")
    return FileFormatError(
        rows.path, rows.first_line + line, f"expected a number{where}, found {shown!r}"
    )


def _convert_slow_numbers(rows: _Rows, values, indices, starts) -> None:
    """Convert the numbers the compiled fast path left out, with Python's exact ``float``."""
    for index, start in zip(indices.tolist(), starts.tolist()):
        token = _NON_SPACE.match(rows.data, rows.start + start).group()
        value = float(token)
        if not np.isfinite(value):
            line = rows.first_line + rows.data.count(b"\n", rows.start, rows.start + start)
            raise FileFormatError(rows.path, line, f"number out of range: {token.decode()!r}")
        values[index] = value


# --------------------------------------------------------------------------------------------
# Reading: from values to a Motion, and the public functions
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _quat_mul_scalars(ax, ay, az, aw, bx, by, bz, bw):
    """Hamilton product ``a * b`` of two quaternions given as x, y, z, w scalars."""
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


@njit(cache=True)
def _compose_rotations_kernel(values, columns, axes, out):
    """``out[f, j]`` (xyzw) = product over k of the rotation about axis ``axes[j, k]`` by
    ``values[f, columns[j, k]]`` degrees, composed intrinsically (left to right); a row of
    ``columns`` ends at its first -1. ``values: (F, C)``, ``columns, axes: (J, K)``."""
    half_radians_per_degree = np.pi / 360.0
    for f in range(values.shape[0]):
        for j in range(columns.shape[0]):
            x, y, z, w = 0.0, 0.0, 0.0, 1.0
            for k in range(columns.shape[1]):
                if columns[j, k] < 0:
                    break
                half = values[f, columns[j, k]] * half_radians_per_degree
                axis, sin_half = axes[j, k], np.sin(half)
                ex = sin_half if axis == 0 else 0.0
                ey = sin_half if axis == 1 else 0.0
                ez = sin_half if axis == 2 else 0.0
                x, y, z, w = _quat_mul_scalars(x, y, z, w, ex, ey, ez, np.cos(half))
            out[f, j, 0], out[f, j, 1], out[f, j, 2], out[f, j, 3] = x, y, z, w


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
    notify_compiling()
    _compose_rotations_kernel(values, columns, axes, rotations)
    return rotations


def _positions_from_channels(values: np.ndarray, layout: _Layout, offsets: np.ndarray):
    """``(F, J, 3)`` local translations: the OFFSETs, with position channels replacing theirs."""
    positions = np.repeat(offsets[None], len(values), axis=0)
    positions[:, layout.position_joints, layout.position_axes] = values[:, layout.position_columns]
    return positions


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


def _decode(data: bytes) -> str:
    """Text of the hierarchy: UTF-8 when valid, else Latin-1 (which never fails)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _normalise_line_breaks(data: bytes) -> bytes:
    """Drop a UTF-8 byte order mark; turn old-Mac CR-only line breaks into LF."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\n" not in data and b"\r" in data:
        data = data.replace(b"\r", b"\n")
    return data


def _parse_bytes(data: bytes, path) -> BvhClip:
    """Parse a whole BVH file given as bytes; see :func:`parse_bvh`."""
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
    motion = Motion(
        skeleton,
        _rotations_from_channels(values, layout, skeleton.num_joints),
        _positions_from_channels(values, layout, skeleton.offsets),
        motion_header.frame_time,
    )
    return BvhClip(motion, channels, values, None if path is None else os.fspath(path))


def read_bvh(path: str | os.PathLike) -> BvhClip:
    """Read a BVH file.

    Returns:
        A :class:`BvhClip` whose motion has batch shape ``(F,)`` (``F`` may be 0), float64,
        rotations in radians as xyzw quaternions, positions in the file's units.

    Raises:
        FileFormatError: the file is malformed; the message names the file and the line.
        OSError: the file cannot be read.
    """
    return _parse_bytes(Path(path).read_bytes(), os.fspath(path))


def parse_bvh(text: str, path: str | os.PathLike | None = None) -> BvhClip:
    """Parse BVH text already in memory; ``path`` is only used in messages and ``clip.path``.

    Raises:
        FileFormatError: the text is malformed (the message names ``path`` or ``<string>``
            and the line).
    """
    if not isinstance(text, str):
        raise InputError(f"text: expected str, got {type(text).__name__}")
    return _parse_bytes(text.encode("utf-8"), path)


# --------------------------------------------------------------------------------------------
# Writing: Euler angles from quaternions, close to a reference
# --------------------------------------------------------------------------------------------

_GIMBAL_TOLERANCE = 1e-6  # |cos(middle)| (Tait-Bryan) or |sin(middle)| (proper) below this
_TWO_PI = 2.0 * np.pi


class _EulerPlan(NamedTuple):
    """How to decompose the rotation of each joint that has rotation channels."""

    joints: np.ndarray  # (G,) joint index
    orders: tuple[str, ...]  # (G,) SciPy order, missing axes appended
    proper: np.ndarray  # (G,) bool: first and third axes equal
    parity: np.ndarray  # (G,) +1 for XYZ/YZX/ZXY, -1 for XZY/ZYX/YXZ (Tait-Bryan only)
    keep_first: np.ndarray  # (G,) at gimbal lock keep the first angle (else the third)


def _euler_order(axes: tuple[int, ...], joint: str) -> str:
    """The 3-axis order used to write rotation channels about ``axes`` (1 to 3 of them).

    Raises:
        InputError: more than three rotation channels, or two neighbours about one axis.
    """
    if not 1 <= len(axes) <= 3 or any(a == b for a, b in zip(axes, axes[1:])):
        listed = " ".join("XYZ"[a] + "rotation" for a in axes)
        raise InputError(
            f"joint {joint!r}: rotation channels '{listed}' cannot be written as Euler angles"
            " (at most 3, neighbours about different axes)"
        )
    missing = tuple(a for a in range(3) if a not in axes)
    return "".join("XYZ"[a] for a in (axes + missing)[:3])


def _euler_plan(layout: _Layout, names) -> _EulerPlan:
    """The decomposition plan of every joint with rotation channels (InputError if none fits)."""
    joints = [j for j, axes in enumerate(layout.rotation_axes) if axes]
    orders = tuple(_euler_order(layout.rotation_axes[j], names[j]) for j in joints)
    proper = np.array([o[0] == o[2] for o in orders], dtype=bool)
    parity = np.array([1 if o in ("XYZ", "YZX", "ZXY") else -1 for o in orders])
    keep_first = np.array([len(layout.rotation_axes[j]) == 3 for j in joints], dtype=bool)
    return _EulerPlan(np.array(joints, dtype=np.int64), orders, proper, parity, keep_first)


def _principal_euler(rotations: np.ndarray, plan: _EulerPlan) -> np.ndarray:
    """``(F, G, 3)`` radians: one Euler triple per planned joint, from ``quat_to_euler``."""
    out = np.empty((len(rotations), len(plan.joints), 3))
    for order in sorted(set(plan.orders)):
        group = [g for g, o in enumerate(plan.orders) if o == order]
        q = quat_normalize(rotations[:, plan.joints[group]])
        out[:, group] = quat_to_euler(q, order)
    return out


@njit(cache=True)
def _wrap_near(x, reference):
    """``x + 2 pi k`` closest to ``reference``."""
    return x + _TWO_PI * np.floor((reference - x) / _TWO_PI + 0.5)


@njit(cache=True)
def _closest_regular(a, b, c, alt_b, ra, rb, rc):
    """The Euler triple closest to ``(ra, rb, rc)`` among ``(a, b, c)``, ``(a + pi, alt_b,
    c + pi)`` and their ``2 pi k`` shifts (away from gimbal lock)."""
    a1, b1, c1 = _wrap_near(a, ra), _wrap_near(b, rb), _wrap_near(c, rc)
    a2, b2, c2 = _wrap_near(a + np.pi, ra), _wrap_near(alt_b, rb), _wrap_near(c + np.pi, rc)
    d1 = (a1 - ra) ** 2 + (b1 - rb) ** 2 + (c1 - rc) ** 2
    d2 = (a2 - ra) ** 2 + (b2 - rb) ** 2 + (c2 - rc) ** 2
    if d2 < d1:
        return a2, b2, c2
    return a1, b1, c1


@njit(cache=True)
def _closest_locked(a, b, c, alt_b, s, keep_first, ra, rb, rc):
    """At gimbal lock only ``a + s c`` is defined: keep the reference's first angle (or its
    third when ``keep_first`` is False) and solve for the other."""
    b_out = _wrap_near(b, rb)
    b_alt = _wrap_near(alt_b, rb)
    if abs(b_alt - rb) < abs(b_out - rb):
        b_out = b_alt
    locked = a + s * c
    if keep_first:
        return ra, b_out, _wrap_near(s * (locked - ra), rc)
    return _wrap_near(locked - s * rc, ra), b_out, rc


@njit(cache=True)
def _closest_euler_kernel(principal, reference, sequential, proper, parity, keep_first, out):
    """Pick, per frame and joint, the Euler triple equivalent to ``principal`` closest to a
    reference: ``reference[f]`` or, if ``sequential``, the previous output frame (frame 0
    uses ``reference[0]``). All arrays in radians; ``principal, out: (F, G, 3)``."""
    for f in range(principal.shape[0]):
        for g in range(principal.shape[1]):
            ref = out[f - 1, g] if sequential and f > 0 else reference[0 if sequential else f, g]
            a, b, c = principal[f, g, 0], principal[f, g, 1], principal[f, g, 2]
            if proper[g]:
                alt_b, locked = -b, abs(np.sin(b)) < _GIMBAL_TOLERANCE
                s = 1.0 if np.cos(b) > 0 else -1.0
            else:
                alt_b, locked = np.pi - b, abs(np.cos(b)) < _GIMBAL_TOLERANCE
                s = float(parity[g]) if np.sin(b) > 0 else -float(parity[g])
            if locked:
                triple = _closest_locked(a, b, c, alt_b, s, keep_first[g], ref[0], ref[1], ref[2])
            else:
                triple = _closest_regular(a, b, c, alt_b, ref[0], ref[1], ref[2])
            out[f, g, 0], out[f, g, 1], out[f, g, 2] = triple


def _euler_reference(clip: BvhClip, layout: _Layout, plan: _EulerPlan, num_frames: int):
    """``(reference (F or 1, G, 3) radians, sequential)`` for :func:`_closest_euler_kernel`.

    The file's values when their shape matches the clip; else zeros for frame 0 and the
    previous written frame after it. Appended (unwritten) axes have reference 0.
    """
    source = clip.source_values
    if source is None or source.shape != (num_frames, layout.num_channels):
        return np.zeros((1, len(plan.joints), 3)), True
    reference = np.zeros((num_frames, len(plan.joints), 3))
    slot_of_joint = np.full(len(layout.rotation_axes), -1)
    slot_of_joint[plan.joints] = np.arange(len(plan.joints))
    for k, slot in enumerate(layout.rotation_slots):
        reference[:, slot_of_joint[slot.joints], k] = np.radians(source[:, slot.columns])
    return reference, False


def _euler_degrees(clip, rotations, layout: _Layout, plan: _EulerPlan) -> np.ndarray:
    """``(F, G, 3)`` Euler angles in degrees for the planned joints, closest to the reference."""
    principal = _principal_euler(rotations, plan)
    reference, sequential = _euler_reference(clip, layout, plan, len(rotations))
    out = np.empty_like(principal)
    notify_compiling()
    _closest_euler_kernel(
        principal, reference, sequential, plan.proper, plan.parity, plan.keep_first, out
    )
    return np.degrees(out)


# --------------------------------------------------------------------------------------------
# Writing: text
# --------------------------------------------------------------------------------------------


def _depth_first_order(parents: np.ndarray) -> list[int]:
    """Joint indices in depth-first pre-order (children in index order), as BVH lists them."""
    children = [[] for _ in parents]
    roots = []
    for j, p in enumerate(parents.tolist()):
        (roots if p < 0 else children[p]).append(j)
    order, stack = [], roots[::-1]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(children[j][::-1])
    return order


def _check_writable_names(names) -> None:
    """Raise InputError for a joint name that would not read back the same."""
    for name in names:
        if any(ch in name for ch in "{}\t\r\n") or name != name.strip() or "  " in name:
            raise InputError(
                f"joint name {name!r} cannot be written to BVH (braces, tabs, line breaks,"
                " leading, trailing or repeated spaces)"
            )


def _clip_arrays(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """``(F, J, 4)`` rotations and ``(F, J, 3)`` positions in float64; a pose is one frame.

    Raises:
        InputError: the motion has more than one batch axis.
    """
    if len(motion.batch_shape) > 1:
        raise InputError(
            f"motion: a BVH clip needs batch shape (F,) or (), got {motion.batch_shape}"
        )
    J = motion.num_joints
    rotations = motion.rotations_local.reshape(-1, J, 4).astype(np.float64)
    positions = motion.positions_local.reshape(-1, J, 3).astype(np.float64)
    return rotations, positions


def _channel_values(clip: BvhClip, layout: _Layout) -> np.ndarray:
    """``(F, C)`` channel values to write: positions in file units, rotations in degrees."""
    rotations, positions = _clip_arrays(clip.motion)
    values = np.empty((len(rotations), layout.num_channels))
    values[:, layout.position_columns] = positions[:, layout.position_joints, layout.position_axes]
    plan = _euler_plan(layout, clip.motion.skeleton.names)
    if len(plan.joints):
        degrees = _euler_degrees(clip, rotations, layout, plan)
        slot_of_joint = np.full(len(layout.rotation_axes), -1)
        slot_of_joint[plan.joints] = np.arange(len(plan.joints))
        for k, slot in enumerate(layout.rotation_slots):
            values[:, slot.columns] = degrees[:, slot_of_joint[slot.joints], k]
    return values


class _Tree(NamedTuple):
    """What the hierarchy writer needs, indexed by joint."""

    skeleton: Skeleton
    channels: tuple[tuple[str, ...], ...]
    children: list[list[int]]
    end_sites: list[list[np.ndarray]]  # offsets of the end sites under each joint
    number: str  # "%.6f"-style format of one offset component


def _tree(skeleton: Skeleton, channels, precision: int) -> _Tree:
    children = [[] for _ in skeleton.names]
    end_sites = [[] for _ in skeleton.names]
    for j, p in enumerate(skeleton.parents.tolist()):
        if p >= 0:
            children[p].append(j)
    for parent, offset in zip(skeleton.end_site_parents.tolist(), skeleton.end_site_offsets):
        end_sites[parent].append(offset)
    return _Tree(skeleton, channels, children, end_sites, f"%.{precision}f")


def _offset_line(tree: _Tree, indent: str, offset) -> str:
    return f"{indent}OFFSET " + " ".join(tree.number % v for v in offset)


def _joint_lines(tree: _Tree, j: int, depth: int) -> list[str]:
    """The lines of joint ``j``'s block, its children and end sites included."""
    indent, inner = "\t" * depth, "\t" * (depth + 1)
    keyword = "ROOT" if tree.skeleton.parents[j] < 0 else "JOINT"
    lines = [f"{indent}{keyword} {tree.skeleton.names[j]}", indent + "{"]
    lines.append(_offset_line(tree, inner, tree.skeleton.offsets[j]))
    lines.append(f"{inner}CHANNELS " + " ".join([str(len(tree.channels[j])), *tree.channels[j]]))
    for child in tree.children[j]:
        lines += _joint_lines(tree, child, depth + 1)
    for offset in tree.end_sites[j]:
        site = [f"{inner}End Site", inner + "{", _offset_line(tree, inner + "\t", offset)]
        lines += site + [inner + "}"]
    return lines + [indent + "}"]


def _format_hierarchy(skeleton: Skeleton, channels, precision: int) -> list[str]:
    """The lines of the ``HIERARCHY`` section, tab-indented, joints depth first."""
    tree = _tree(skeleton, channels, precision)
    lines = ["HIERARCHY"]
    for root in np.flatnonzero(skeleton.parents < 0).tolist():
        lines += _joint_lines(tree, root, 0)
    return lines


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


def _format_rows(values: np.ndarray, precision: int) -> bytes:
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


def _check_precision(precision) -> int:
    """``precision`` as an int in 0..17, else InputError."""
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)):
        raise InputError(f"precision: expected an integer number of decimals, got {precision!r}")
    if not 0 <= precision <= 17:
        raise InputError(f"precision: expected 0 to 17 decimals, got {precision}")
    return int(precision)


def _format_bytes(clip: BvhClip, precision: int) -> bytes:
    """The BVH text of a clip as ASCII/UTF-8 bytes; see :func:`format_bvh`."""
    precision = _check_precision(precision)
    skeleton = clip.motion.skeleton
    _check_writable_names(skeleton.names)
    layout = _channel_layout(clip.channels, skeleton.names, _depth_first_order(skeleton.parents))
    values = _channel_values(clip, layout)
    frame_time = 0.0 if clip.frame_time is None else float(clip.frame_time)
    lines = _format_hierarchy(skeleton, clip.channels, precision)
    lines += ["MOTION", f"Frames: {len(values)}", f"Frame Time: {frame_time!r}", ""]
    return "\n".join(lines).encode("utf-8") + _format_rows(values, precision)


def format_bvh(clip: BvhClip, precision: int = 6) -> str:
    """The BVH text of a clip (LF line breaks).

    Args:
        clip: the clip; its motion has batch shape ``(F,)`` (or ``()`` for one frame).
        precision: decimals printed for offsets and channel values (degrees, file units),
            0 to 17; values are rounded exactly as ``"%.6f"`` does.

    Raises:
        InputError: a bad ``precision``, a motion with more than one batch axis, a joint
            name that cannot be written, or rotation channels that are not an Euler sequence
            (more than three, or two neighbours about the same axis).
    """
    return _format_bytes(clip, precision).decode("utf-8")


def write_bvh(path: str | os.PathLike, clip: BvhClip, precision: int = 6) -> None:
    """Write a clip to a BVH file (UTF-8, LF line breaks); see :func:`format_bvh`.

    Raises:
        InputError: as :func:`format_bvh`.
        OSError: the file cannot be written.
    """
    Path(path).write_bytes(_format_bytes(clip, precision))
