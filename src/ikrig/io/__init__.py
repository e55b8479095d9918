"""File input and output: BVH motion capture (:mod:`ikrig.io.bvh`) and glTF 2.0 characters
(:mod:`ikrig.io.gltf`; pygltflib, the ``[gltf]`` extra, is imported only when a file is
read); :mod:`ikrig.io.clips` picks the format by a file's suffix.

Each name is imported from its submodule when first asked for (``from ikrig.io import
read_bvh`` loads the BVH reader, not the glTF modules): ``ikrig info`` imports only what
it reads."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    **dict.fromkeys(("BvhClip", "format_bvh", "parse_bvh", "read_bvh", "to_bvh_clip",
                     "write_bvh"), ".bvh"),
    **dict.fromkeys(("CLIP_SUFFIXES", "clip_format", "read_clip", "write_clip"), ".clips"),
}  # fmt: skip
"""The submodule of each name; the others are :mod:`~ikrig.io.gltf`'s."""

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


def __getattr__(name: str) -> Any:
    """The public names, each from its submodule when first asked for."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOME.get(name, ".gltf"), __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
