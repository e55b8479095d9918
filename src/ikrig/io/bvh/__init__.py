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
- ``End Site`` offsets go to ``Skeleton.end_site_parents`` / ``end_site_offsets``, in the
  order they are written: a joint's end sites after those of its descendants (as in most
  files, where only leaves have end sites).
- ``Frame Time: 0`` (seen in single-pose files) is read as ``frame_time=None`` and a clip
  without a frame time is written with ``Frame Time: 0``. Other frame times must be positive,
  finite and have a finite frame rate ``1 / frame_time`` (``5e-324`` is refused).

Limits, checked on reading (with the file and line) and on writing (``InputError``), so that
whatever reads writes back: ``OFFSET`` values and position channels at most ``1e30`` in
magnitude (FK sums stay finite), rotation channels at most ``1e7`` degrees (beyond that an
angle does not survive the round trip through a quaternion to six decimals); at most three
rotation channels per joint, neighbours about different axes (``Zrotation Xrotation
Xrotation`` is refused: it is not an Euler sequence). ``Frames:`` is a claim checked against
the file: memory is allocated for at most the rows the rest of the file can hold, and a
count beyond them is reported as missing rows. In a file without any channel every frame row
is an empty line, so the count can be at most the number of lines after ``Frame Time:``.
The clip itself takes 56 bytes per frame and joint, and joints without channels take no row
bytes, so a clip needing more than 1024 bytes per byte of file (and more than 256 MiB) is
refused at ``Frames:``.
Hierarchies of any depth are read and written (no recursion; indentation stops growing after
32 levels).

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
in bulk by a scanner that also counts the values on every line (compiled, or, for a file
under 4 MiB read before anything started Numba, its NumPy twin: the same values and
messages), so a malformed file raises :class:`~ikrig.errors.FileFormatError` naming the
file, the line and what was expected (wrong number of values in a row, a brace missing or
extra, an unknown channel, a value that is not a number, fewer or more rows than
``Frames:``, a missing ``MOTION``/``Frames``/``Frame Time``, a duplicate joint name, a
``CHANNELS`` count that does not match its names).
Messages quote at most 40 characters of the file. Line breaks may be LF, CRLF or CR; the
separators are ASCII whitespace (space, tab, CR, form feed, vertical tab) everywhere, in the
hierarchy, on the ``MOTION`` line and in the rows; other characters (a no-break space, say)
are part of a name. Blank lines and trailing spaces are accepted anywhere.

The code: this module holds the public API; the work is done in private modules,
:mod:`~ikrig.io.bvh._channels` (channel names, the column layout of a frame row),
:mod:`~ikrig.io.bvh._header` (the ``HIERARCHY`` part), :mod:`~ikrig.io.bvh._motion` (the
``MOTION`` part and reading a whole file), :mod:`~ikrig.io.bvh._rows` and
:mod:`~ikrig.io.bvh._scan` (the frame rows' numbers, in NumPy and compiled),
:mod:`~ikrig.io.bvh._compose` (rotation channels to quaternions, compiled),
:mod:`~ikrig.io.bvh._euler` (Euler angles for writing) and :mod:`~ikrig.io.bvh._write` (the
text written, loaded when writing).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..._files import write_parts
from ...errors import InputError
from ...pose import Motion
from ._motion import _parse_file
from .clip import BvhClip

__all__ = ["BvhClip", "format_bvh", "parse_bvh", "read_bvh", "to_bvh_clip", "write_bvh"]


def to_bvh_clip(motion: Motion) -> BvhClip:
    """Wrap a motion (for example :func:`ikrig.data.walk_clip`) as a :class:`BvhClip`.

    The root gets ``Xposition Yposition Zposition Zrotation Yrotation Xrotation`` channels,
    every other joint ``Zrotation Yrotation Xrotation`` (the CMU layout), so
    ``write_bvh(path, to_bvh_clip(walk_clip()))`` writes a BVH file in the motion's
    units. A joint whose translation leaves its skeleton offset in some frame (a glTF
    character's animated hips under a static root, say) gets the position channels too.

    Raises:
        InputError: the motion is not a clip ``(F,)`` or a pose.
    """
    if len(motion.batch_shape) > 1:
        raise InputError(f"motion: expected a clip (F,) or a pose, got {motion.batch_shape}")
    offsets = motion.skeleton.offsets
    size = max(float(np.abs(offsets).max(initial=0.0)), 1e-12)
    pos = motion.positions_local.reshape(-1, *offsets.shape)
    moves = (np.abs(pos - offsets).max(axis=(0, 2), initial=0.0) > 1e-9 * size).tolist()
    rot = ("Zrotation", "Yrotation", "Xrotation")
    channels = tuple(
        ("Xposition", "Yposition", "Zposition") + rot if p < 0 or moved else rot
        for p, moved in zip(motion.skeleton.parents, moves, strict=True)
    )
    return BvhClip(motion, channels)


def _parse_bytes(data: bytes, path) -> BvhClip:
    """Parse a whole BVH file given as bytes; see :func:`parse_bvh`."""
    motion, channels, values = _parse_file(data, path)
    return BvhClip(motion, channels, values, None if path is None else os.fspath(path))


def read_bvh(path: str | os.PathLike, data: bytes | None = None) -> BvhClip:
    """Read a BVH file; ``data``: its bytes, when the caller has read them already (to hash
    them, say), so that the file is not read twice.

    Returns:
        A :class:`BvhClip` whose motion has batch shape ``(F,)`` (``F`` may be 0), float64,
        rotations in radians as xyzw quaternions, positions in the file's units.

    Raises:
        FileFormatError: the file is malformed; the message names the file and the line.
        OSError: the file cannot be read.
    """
    return _parse_bytes(Path(path).read_bytes() if data is None else data, os.fspath(path))


def parse_bvh(text: str, path: str | os.PathLike | None = None) -> BvhClip:
    """Parse BVH text already in memory; ``path`` is only used in messages and ``clip.path``.

    Raises:
        FileFormatError: the text is malformed (the message names ``path`` or ``<string>``
            and the line).
    """
    if not isinstance(text, str):
        raise InputError(f"text: expected str, got {type(text).__name__}")
    return _parse_bytes(text.encode("utf-8"), path)


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
    from ._write import _format_bytes  # compiled formatting: Numba only when writing

    return _format_bytes(clip, precision).decode("utf-8")


def write_bvh(path: str | os.PathLike, clip: BvhClip, precision: int = 6) -> None:
    """Write a clip to a BVH file (UTF-8, LF line breaks); see :func:`format_bvh`.

    The write is atomic (:func:`ikrig._files.write_parts`): the text goes to a temporary file
    beside ``path`` that then replaces it in one step, so a failed or interrupted write
    leaves the previous file as it was.

    Raises:
        InputError: as :func:`format_bvh`.
        OSError: the file cannot be written.
    """
    from ._write import _format_parts  # compiled formatting: Numba only when writing

    write_parts(path, _format_parts(clip, precision))
