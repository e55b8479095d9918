"""Clip files of any supported format, chosen by suffix: BVH (``.bvh``) and glTF 2.0
(``.glb``, ``.gltf``).

:func:`read_clip` gives a :class:`~ikrig.io.bvh.BvhClip` or a
:class:`~ikrig.io.gltf.clip.GltfClip`; both carry ``motion``, and both are written back by
:func:`write_clip` with a new motion: in their own format with everything else of the file
kept, or converted when the output's suffix names the other format (a BVH written as a
skeleton-only glTF, a glTF animation as a BVH with the CMU channel layout).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..pose import Motion
from .bvh import BvhClip, read_bvh, to_bvh_clip, write_bvh
from .gltf.clip import GltfClip

__all__ = ["CLIP_SUFFIXES", "AnyClip", "clip_format", "read_clip", "write_clip"]

AnyClip = BvhClip | GltfClip

CLIP_SUFFIXES = (".bvh", ".glb", ".gltf")
"""The clip files ikrig reads and writes."""


def clip_format(path: str | os.PathLike[str]) -> str:
    """``"bvh"`` or ``"gltf"`` by the file's suffix (case-insensitive).

    Raises:
        InputError: another suffix.
    """
    suffix = Path(os.fspath(path)).suffix.lower()
    if suffix == ".bvh":
        return "bvh"
    if suffix in (".glb", ".gltf"):
        return "gltf"
    raise InputError(f"{os.fspath(path)}: not a clip file (expected .bvh, .glb or .gltf)")


def read_clip(
    path: str | os.PathLike[str],
    animation: str | int | None = None,
    fps: float | None = None,
    data: bytes | None = None,
    allow_outside: bool | None = None,
    skin: str | int | None = None,
) -> AnyClip:
    """Read a clip file by its suffix.

    Args:
        path: a ``.bvh``, ``.glb`` or ``.gltf`` file.
        animation: for glTF, the animation's name or index (default: the first); a BVH file
            holds one clip, so any value is an error there.
        fps: for glTF, the sampling rate (default: the keys' own, see
            :func:`~ikrig.io.gltf.read.read_gltf`); an error for BVH (its frames are fixed).
        data: a BVH file's bytes, when the caller has read them already (a batch hashes
            them), so that it is not read twice; a glTF file is read from ``path`` (it may
            refer to files beside it).
        allow_outside: for glTF, read buffer files outside the file's folder tree (see
            :func:`~ikrig.io.gltf.read.read_gltf`; ``None``: the default, off unless
            ``ikrig --allow-outside``).
        skin: for glTF, the skin's name or index (default: the one with the most joints).

    Raises:
        InputError: an unknown suffix, or ``animation``/``fps``/``skin`` given for a BVH
            file.
        FileFormatError: a malformed file (the message names the file and, for BVH, the
            line).
    """
    if clip_format(path) == "gltf":
        from .gltf.read import read_gltf

        return read_gltf(path, animation=animation, fps=fps, skin=skin, allow_outside=allow_outside)
    for name, value in (("animation", animation), ("fps", fps), ("skin", skin)):
        if value is not None:
            raise InputError(f"{os.fspath(path)}: --{name} applies to glTF files, not BVH")
    return read_bvh(path, data)


def write_clip(path: str | os.PathLike[str], clip: AnyClip, motion: Motion | None = None) -> None:
    """Write ``clip`` with ``motion`` (default: its own) to ``path``, atomically, in the
    format ``path``'s suffix names.

    - same format: a BVH keeps its hierarchy and channel layout, a glTF every other byte of
      meaning (:func:`~ikrig.io.gltf.write.write_gltf`; ``motion`` must have the clip's
      frames, sampled at ``clip.times``);
    - BVH to glTF: a skeleton-only character (:func:`~ikrig.io.gltf.build.motion_to_gltf`);
    - glTF to BVH: the CMU channel layout (:func:`~ikrig.io.bvh.to_bvh_clip`).

    Raises:
        InputError: an unknown suffix, or a motion that does not fit the clip.
    """
    motion = clip.motion if motion is None else motion
    target = clip_format(path)
    if target == "bvh":
        out = clip.with_motion(motion) if isinstance(clip, BvhClip) else to_bvh_clip(motion)
        write_bvh(path, out)
        return
    from .gltf.write import write_gltf

    if isinstance(clip, GltfClip):
        write_gltf(path, clip, motion)
        return
    from .gltf.build import motion_to_gltf

    name = Path(clip.path).stem if clip.path else "ikrig"
    write_gltf(path, motion_to_gltf(motion, name))
