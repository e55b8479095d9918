"""Which clips a batch reads and where each one's result goes.

INPUTS are files, folders (searched recursively for ``.bvh``, ``.glb`` and ``.gltf`` files)
or glob patterns (``**`` included). The outputs mirror the inputs' tree under the output
folder: each clip's path relative to the common folder of all the inputs is kept, so
``lib/a/x.bvh`` and ``lib/b/x.bvh`` never meet.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError
from ..io.clips import CLIP_SUFFIXES

__all__ = ["ClipPath", "expand_inputs"]

_MAGIC = ("*", "?", "[")


class ClipPath(NamedTuple):
    """One clip of a batch: where it is read, its path relative to the inputs' common folder
    (the key in the manifest) and where its result is written."""

    source: Path
    relative: str
    output: Path


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
    outputs: dict[Path, Path] = {}
    for real, given in sorted(seen.items()):
        rel = real.relative_to(root).as_posix()
        out = out_root / rel
        if out.suffix.lower() not in CLIP_SUFFIXES:
            out = out.with_suffix(".bvh")
        if out in outputs:
            raise InputError(f"clips {outputs[out]} and {given} would both be written to {out}")
        outputs[out] = given
        clips.append(ClipPath(given, rel, out))
    return clips
