"""Which clips a batch reads and where each one's result goes.

INPUTS are files, folders (searched recursively for ``.bvh``, ``.glb`` and ``.gltf`` files)
or glob patterns (``**`` included). The outputs mirror the inputs' tree under the output
folder: each clip's path relative to the common folder of all the inputs is kept, so
``lib/a/x.bvh`` and ``lib/b/x.bvh`` never meet. With ``--animation all``
(:func:`each_animation`) a glTF file gives one clip per animation, written beside each
other as ``NAME@INDEX-ANIMATION.glb``.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError
from ..io.clips import CLIP_SUFFIXES

__all__ = ["ALL_ANIMATIONS", "ClipPath", "each_animation", "expand_inputs"]

_MAGIC = ("*", "?", "[")


ALL_ANIMATIONS = "all"
"""The ``--animation`` of a batch that places every animation of each glTF file."""


class ClipPath(NamedTuple):
    """One clip of a batch: where it is read, its path relative to the inputs' common folder
    (the key in the manifest), where its result is written and, for one of the animations
    of a glTF file (:func:`each_animation`), which one (name, or index when names repeat;
    ``None``: the batch's ``--animation``)."""

    source: Path
    relative: str
    output: Path
    animation: str | None = None


def _is_clip(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in CLIP_SUFFIXES


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _static_prefix(pattern: str) -> Path:
    """The folder a glob pattern starts from (its part before the first wildcard)."""
    parts = Path(pattern).parts
    fixed = []
    for part in parts:
        if any(c in part for c in _MAGIC):
            break
        fixed.append(part)
    return Path(*fixed) if fixed else Path(".")


def _expand_one(spec: str) -> tuple[Path, list[Path]]:
    """``(base folder, clip files)`` of one INPUT."""
    path = Path(spec)
    if path.is_dir():
        return path, sorted(p for p in path.rglob("*") if _is_clip(p))
    if path.is_file():
        return path.parent, [path]
    if any(c in spec for c in _MAGIC):
        found: list[Path] = []
        for match in sorted(glob.glob(spec, recursive=True)):
            m = Path(match)
            if m.is_dir():
                found += sorted(p for p in m.rglob("*") if _is_clip(p))
            elif _is_clip(m):
                found.append(m)
        if not found:
            raise InputError(
                f"input {spec!r}: the pattern matches no clip file (.bvh, .glb, .gltf)"
            )
        return _static_prefix(spec), found
    raise InputError(f"input {spec!r}: no such file, folder or matching pattern")


def expand_inputs(specs: list[str], out_dir: str | os.PathLike[str]) -> list[ClipPath]:
    """Every clip the INPUTS name, once each, sorted, with its mirrored output path.

    Files already under ``out_dir`` are left out (a batch never reads its own results).

    Raises:
        InputError: an input that names nothing, no clip at all, or two clips that would be
            written to the same output.
    """
    out_root = Path(os.path.realpath(out_dir))
    bases, files = [], []
    for spec in specs:
        base, found = _expand_one(spec)
        bases.append(Path(os.path.realpath(base)))
        files += found
    seen: dict[Path, Path] = {}
    for f in files:
        real = Path(os.path.realpath(f))
        if real not in seen and not _inside(real, out_root):
            seen[real] = f
    if not files:
        raise InputError("no clip file (.bvh, .glb, .gltf) in the inputs")
    if not seen:
        raise InputError(
            f"every clip of the inputs lies in the output folder {os.fspath(out_dir)!r}, whose"
            " files a batch never reads; give -o a folder outside the inputs"
        )
    root = Path(os.path.commonpath([*bases, *(r.parent for r in seen)]))
    clips: list[ClipPath] = []
    for real, given in sorted(seen.items()):
        rel = real.relative_to(root).as_posix()
        out = out_root / rel
        if out.suffix.lower() not in CLIP_SUFFIXES:
            out = out.with_suffix(".bvh")
        clips.append(ClipPath(given, rel, out))
    return _distinct(clips)


def _distinct(clips: list[ClipPath]) -> list[ClipPath]:
    """``clips``, once it is checked that no two are written to the same file."""
    outputs: dict[Path, ClipPath] = {}
    for c in clips:
        if c.output in outputs:
            first = outputs[c.output]
            raise InputError(
                f"clips {first.source} and {c.source} would both be written to {c.output}"
            )
        outputs[c.output] = c
    return clips


def each_animation(clips: list[ClipPath]) -> list[ClipPath]:
    """``--animation all``: each glTF clip once per animation of its file, as
    ``DIR/NAME@INDEX-ANIMATION.glb`` (its output and manifest key; the animation's name
    reduced to letters, digits, ``.``, ``_`` and ``-``). BVH clips, glTF files without
    animations and files whose animations cannot be listed (reading the clip then records
    the error) stay one clip each.

    Raises:
        InputError: two clips that would be written to the same output.
    """
    out: list[ClipPath] = []
    for c in clips:
        names = _animation_names(c.source)
        if len(names) == 0:
            out.append(c)
            continue
        rel = Path(c.relative)
        for i, name in enumerate(names):
            slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:48]
            file = f"{rel.stem}@{i}" + (f"-{slug}" if slug else "") + rel.suffix
            pick = name if names.count(name) == 1 else str(i)
            out.append(
                ClipPath(c.source, (rel.parent / file).as_posix(), c.output.parent / file, pick)
            )
    return _distinct(out)


def _animation_names(source: Path) -> list[str]:
    """The animations of a glTF file (as :func:`ikrig.io.list_animations` names them); none
    for a BVH file, a glTF file without animations or one that cannot be read."""
    from ..io import clip_format, list_animations

    if clip_format(source) != "gltf":
        return []
    try:
        return [name for _, name, _, _ in list_animations(source)]
    except Exception:  # noqa: BLE001 - reading the clip records the error, one clip
        return []
