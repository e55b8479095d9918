"""A glTF document's tables as records: each field as the file has it, the glTF default
where it is absent (see :mod:`ikrig.io.gltf.document`, which builds them once).

pygltflib leaves some nested parts of its objects as plain dicts; :func:`field` reads either,
and only this module and the document's buffer code call it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .uri import short_text


def field(obj: Any, key: str, default: Any = None) -> Any:
    """A field of a pygltflib object or of a plain dict (nested objects may stay dicts);
    ``default`` when it is absent or ``None``."""
    if obj is None:
        return default
    value = obj.get(key, default) if isinstance(obj, dict) else getattr(obj, key, default)
    return default if value is None else value


def _items(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


@dataclass(frozen=True, slots=True)
class Node:
    """One node: its fields as in the file, ``None`` where absent (``children`` empty)."""

    index: int
    name: Any
    children: tuple[Any, ...]
    translation: Any
    rotation: Any
    scale: Any
    matrix: Any
    mesh: Any
    skin: Any
    camera: Any
    extensions: Any

    @property
    def label(self) -> str:
        """``k 'name'`` for messages."""
        name = self.name
        k = self.index
        return f"{k} {short_text(name)}" if isinstance(name, str) and name else str(k)


@dataclass(frozen=True, slots=True)
class Skin:
    """One skin: its joints (node indices) and inverse bind matrices (an accessor)."""

    index: int
    name: Any
    joints: tuple[Any, ...]
    inverse_bind_matrices: Any

    @property
    def label(self) -> str:
        """The skin's name, or ``skin<index>`` when it has none."""
        return self.name or f"skin{self.index}"


@dataclass(frozen=True, slots=True)
class Sampler:
    """An animation sampler: key times and values (accessors), interpolation."""

    input: Any
    output: Any
    interpolation: Any


@dataclass(frozen=True, slots=True)
class ChannelTarget:
    """An animation channel: its sampler, the node and path it animates."""

    sampler: Any
    node: Any
    path: Any


@dataclass(frozen=True, slots=True)
class Animation:
    """One animation: its samplers and channels."""

    index: int
    name: Any
    samplers: tuple[Sampler, ...]
    channels: tuple[ChannelTarget, ...]

    @property
    def label(self) -> str:
        """The animation's name, or ``animation<index>`` when it has none."""
        name = self.name
        return name if isinstance(name, str) and name else f"animation{self.index}"


@dataclass(frozen=True, slots=True)
class Primitive:
    """A mesh primitive: ``attributes`` (name -> accessor), indices, mode, material."""

    attributes: dict[str, Any]
    indices: Any
    mode: Any
    material: Any


@dataclass(frozen=True, slots=True)
class Mesh:
    """A mesh: its name and primitives."""

    index: int
    name: Any
    primitives: tuple[Primitive, ...]


@dataclass(frozen=True, slots=True)
class Material:
    """What a viewer takes of a material: whether it has a PBR block, its base colour
    factor and its base colour texture (a texture index)."""

    pbr: bool
    base_color_factor: Any
    base_color_texture: Any


@dataclass(frozen=True, slots=True)
class Sparse:
    """An accessor's sparse part: count, index layout and places, value places."""

    count: Any
    index_type: Any
    index_view: Any
    index_offset: Any
    value_view: Any
    value_offset: Any
    complete: bool


@dataclass(frozen=True, slots=True)
class Accessor:
    """An accessor's layout and place."""

    component_type: Any
    type: Any
    count: Any
    buffer_view: Any
    byte_offset: Any
    normalized: Any
    sparse: Sparse | None


def node_record(k: int, n: Any) -> Node:
    return Node(
        k, field(n, "name"), _items(field(n, "children", [])),
        field(n, "translation"), field(n, "rotation"), field(n, "scale"), field(n, "matrix"),
        field(n, "mesh"), field(n, "skin"), field(n, "camera"), field(n, "extensions"),
    )  # fmt: skip


def skin_record(i: int, s: Any) -> Skin:
    joints = _items(field(s, "joints", []))
    return Skin(i, field(s, "name"), joints, field(s, "inverseBindMatrices"))


def animation_record(a: int, anim: Any) -> Animation:
    samplers = tuple(
        Sampler(field(s, "input", -1), field(s, "output", -1), field(s, "interpolation", "LINEAR"))
        for s in field(anim, "samplers", [])
    )
    targets = [(ch, field(ch, "target")) for ch in field(anim, "channels", [])]
    channels = tuple(
        ChannelTarget(field(ch, "sampler"), field(target, "node"), field(target, "path"))
        for ch, target in targets
    )
    return Animation(a, field(anim, "name"), samplers, channels)


def _attributes(attrs: Any) -> dict[str, Any]:
    if attrs is None:
        return {}
    pairs = attrs.items() if isinstance(attrs, dict) else vars(attrs).items()
    return {k: v for k, v in pairs if v is not None}


def mesh_record(m: int, mesh: Any) -> Mesh:
    prims = tuple(
        Primitive(
            _attributes(field(p, "attributes")),
            field(p, "indices"),
            field(p, "mode", 4),
            field(p, "material"),
        )  # fmt: skip
        for p in field(mesh, "primitives", [])
    )
    return Mesh(m, field(mesh, "name"), prims)


def material_record(_: int, mat: Any) -> Material:
    pbr = field(mat, "pbrMetallicRoughness")
    texture = field(pbr, "baseColorTexture")
    return Material(
        pbr is not None, field(pbr, "baseColorFactor"),
        None if texture is None else field(texture, "index"),
    )  # fmt: skip


def _sparse(sparse: Any) -> Sparse | None:
    if sparse is None:
        return None
    idx, val = field(sparse, "indices"), field(sparse, "values")
    return Sparse(
        field(sparse, "count", 0), field(idx, "componentType"),
        field(idx, "bufferView", -1), field(idx, "byteOffset", 0),
        field(val, "bufferView", -1), field(val, "byteOffset", 0),
        idx is not None and val is not None,
    )  # fmt: skip


def accessor_record(_: int, acc: Any) -> Accessor:
    return Accessor(
        field(acc, "componentType"), field(acc, "type"), field(acc, "count", 0),
        field(acc, "bufferView"), field(acc, "byteOffset", 0), field(acc, "normalized", False),
        _sparse(field(acc, "sparse")),
    )  # fmt: skip
