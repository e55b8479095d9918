"""glTF 2.0 characters (pygltflib, the ``[gltf]`` extra, imported only when a file is read):
:mod:`~ikrig.io.gltf.read` (one skin and one animation of a file), :mod:`~ikrig.io.gltf.write`
(the placed animation written back, the rest of the file kept), :mod:`~ikrig.io.gltf.build`
(a glTF made from a motion, BVH <-> glTF), :mod:`~ikrig.io.gltf.check` (a document checked
before it is read), :mod:`~ikrig.io.gltf.clip` (the :class:`GltfClip` record),
:mod:`~ikrig.io.gltf.skin` (skinned meshes and their matrices) and
:mod:`~ikrig.io.gltf.uri` (which files a ``.gltf`` may read), with private helpers. Each
public name here is imported from its module when first asked for."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .build import bvh_to_gltf, gltf_to_bvh, motion_to_gltf
    from .check import check_gltf
    from .clip import GltfClip
    from .read import list_animations, list_skins, read_gltf
    from .uri import files_outside_allowed
    from .write import write_gltf

_HOME = {
    "GltfClip": ".clip", "bvh_to_gltf": ".build", "check_gltf": ".check",
    "files_outside_allowed": ".uri", "gltf_to_bvh": ".build", "list_animations": ".read",
    "list_skins": ".read", "motion_to_gltf": ".build", "read_gltf": ".read",
    "write_gltf": ".write",
}  # fmt: skip
"""The submodule of each public name, imported when the name is first asked for."""

__all__ = [
    "GltfClip",
    "bvh_to_gltf",
    "check_gltf",
    "files_outside_allowed",
    "gltf_to_bvh",
    "list_animations",
    "list_skins",
    "motion_to_gltf",
    "read_gltf",
    "write_gltf",
]


def __getattr__(name: str) -> Any:
    """The public names, each from its module when first asked for."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_HOME[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
