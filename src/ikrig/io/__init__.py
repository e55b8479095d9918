"""File input and output: BVH motion capture (:mod:`ikrig.io.bvh`)."""

from .bvh import BvhClip, format_bvh, parse_bvh, read_bvh, to_bvh_clip, write_bvh

__all__ = ["BvhClip", "format_bvh", "parse_bvh", "read_bvh", "to_bvh_clip", "write_bvh"]
