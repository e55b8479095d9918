"""BVH motion capture files: :mod:`~ikrig.io.bvh.file` (read, parse, format, write; the
public functions, re-exported here) and :mod:`~ikrig.io.bvh.clip` (the
:class:`BvhClip` record), with private helpers for the header, the motion lines, the channel
layouts, Euler angles and the writer."""

from .clip import BvhClip
from .file import format_bvh, parse_bvh, read_bvh, to_bvh_clip, write_bvh

__all__ = ["BvhClip", "format_bvh", "parse_bvh", "read_bvh", "to_bvh_clip", "write_bvh"]
