"""File input and output: BVH motion capture (:mod:`ikrig.io.bvh`) and glTF 2.0 characters
(:mod:`ikrig.io.gltf`; pygltflib, the ``[gltf]`` extra, is imported only when a file is
read); :mod:`ikrig.io.clips` picks the format by a file's suffix."""

from .bvh import BvhClip, format_bvh, parse_bvh, read_bvh, to_bvh_clip, write_bvh
from .clips import CLIP_SUFFIXES, clip_format, read_clip, write_clip
from .gltf import (
    GltfClip,
    bvh_to_gltf,
    check_gltf,
    files_outside_allowed,
    gltf_to_bvh,
    list_animations,
    list_skins,
    motion_to_gltf,
    read_gltf,
    write_gltf,
)

__all__ = [
    "CLIP_SUFFIXES",
    "bvh_to_gltf",
    "BvhClip",
    "check_gltf",
    "clip_format",
    "files_outside_allowed",
    "format_bvh",
    "gltf_to_bvh",
    "GltfClip",
    "list_animations",
    "list_skins",
    "motion_to_gltf",
    "parse_bvh",
    "read_bvh",
    "read_clip",
    "read_gltf",
    "to_bvh_clip",
    "write_bvh",
    "write_clip",
    "write_gltf",
]
