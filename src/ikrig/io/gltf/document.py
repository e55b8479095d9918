"""The glTF document object the readers share: one file's tables as records, its buffers
and its accessors decoded.

:class:`GltfDocument` wraps the parsed file (a ``pygltflib.GLTF2``, its JSON decoded by
:mod:`ikrig.io.gltf._json`) once. The node, skin, animation and mesh readers take it and
read named fields of small records (:class:`Node`, :class:`Skin`, :class:`Animation`, ...)
instead of the pygltflib objects, whose nested parts may stay plain dicts: this module is
the only reader code that looks into them (:func:`field`). A record keeps each value as the
file has it, with the glTF default where it is absent; :func:`~ikrig.io.gltf.check.check_document`
has checked the types the readers rely on before they run. Buffers are read once each, and
accessors decoded with NumPy. Every structural problem raises
:class:`~ikrig.errors.FileFormatError` naming the file, and an accessor this reader does
not decode raises :class:`~ikrig.errors.InputError` naming the accessor index.
"""

from __future__ import annotations

import importlib
import os
import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import FileFormatError, InputError
from ._json import gltf2_class
from ._spec import COMPONENTS, NUM_COMPONENTS
from .check import zero_fill_problem
from .uri import data_uri_bytes, external_path, read_external, short_text

WIDTHS = {k: NUM_COMPONENTS[k] for k in ("SCALAR", "VEC2", "VEC3", "VEC4", "MAT4")}
"""Accessor types this reader decodes -> number of components (MAT2/MAT3 are padded per
column for 1- and 2-byte components and are never needed for skeletons: not decoded)."""

_NORMALISE = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}


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


def _node(k: int, n: Any) -> Node:
    return Node(
        k, field(n, "name"), _items(field(n, "children", [])),
        field(n, "translation"), field(n, "rotation"), field(n, "scale"), field(n, "matrix"),
        field(n, "mesh"), field(n, "skin"), field(n, "camera"), field(n, "extensions"),
    )  # fmt: skip


def _skin(i: int, s: Any) -> Skin:
    joints = _items(field(s, "joints", []))
    return Skin(i, field(s, "name"), joints, field(s, "inverseBindMatrices"))


def _animation(a: int, anim: Any) -> Animation:
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


def _mesh(m: int, mesh: Any) -> Mesh:
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


def _material(mat: Any) -> Material:
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


def _accessor(acc: Any) -> Accessor:
    return Accessor(
        field(acc, "componentType"), field(acc, "type"), field(acc, "count", 0),
        field(acc, "bufferView"), field(acc, "byteOffset", 0), field(acc, "normalized", False),
        _sparse(field(acc, "sparse")),
    )  # fmt: skip


def load_document(path: str | os.PathLike) -> Any:
    """The ``pygltflib.GLTF2`` of a ``.glb`` or ``.gltf`` file.

    Raises:
        InputError: pygltflib is not installed (the message gives the install command).
        FileFormatError: the file is missing or pygltflib cannot parse it.
    """
    try:
        pygltflib = importlib.import_module("pygltflib")  # the [gltf] extra, untyped
    except ImportError:
        raise InputError(
            f"{os.fspath(path)}: reading glTF needs pygltflib (pip install 'ikrig[gltf]')"
        ) from None
    p = Path(path)
    if not p.is_file():
        raise FileFormatError(p, None, "no such file")
    try:
        with warnings.catch_warnings():  # its notes on odd chunks and versions: errors follow
            warnings.filterwarnings("ignore", module="pygltflib")
            doc = gltf2_class(pygltflib).load(p)
    except Exception as exc:  # pygltflib raises struct, json, key and value errors alike
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise FileFormatError(p, None, f"not a readable glTF 2.0 file ({reason})") from None
    if doc is None:
        raise FileFormatError(p, None, "not a readable glTF 2.0 file")
    return doc


class GltfDocument:
    """One glTF document as the readers see it (see the module docstring).

    Args:
        raw: the ``pygltflib.GLTF2`` (binary blob loaded), kept as :attr:`raw`.
        path: the file it was read from: names it in messages and locates external
            buffers (``None``: a document in memory, ``<document>`` in messages).
        allow_outside: buffer files may lie outside the file's folder tree (see
            :mod:`ikrig.io.gltf.uri`); at most ``byteLength`` bytes of one are read.

    The tables (:attr:`nodes`, :attr:`skins`, :attr:`animations`, :attr:`meshes`,
    :attr:`materials`, :attr:`accessors`) are built on first use, after the document was
    checked.
    """

    def __init__(
        self, raw: Any, path: str | os.PathLike | None = None, allow_outside: bool = False
    ):
        self.raw = raw
        self.path = "<document>" if path is None else os.fspath(path)
        self.base = Path(self.path).parent if path is not None else Path(".")
        self.allow_outside = allow_outside
        self._cache: dict[int, bytes] = {}

    @classmethod
    def load(cls, path: str | os.PathLike, allow_outside: bool = False) -> GltfDocument:
        """The document of a ``.glb`` or ``.gltf`` file (see :func:`load_document`)."""
        return cls(load_document(path), path, allow_outside)

    def fail(self, reason: str) -> FileFormatError:
        """The FileFormatError for ``reason``, naming the file."""
        return FileFormatError(self.path, None, reason)

    def table(self, name: str) -> list[Any]:
        """The raw objects of a top-level array (``"nodes"``, ``"accessors"``, ...)."""
        return list(field(self.raw, name, []) or [])

    @cached_property
    def nodes(self) -> tuple[Node, ...]:
        return tuple(_node(k, n) for k, n in enumerate(self.table("nodes")))

    @cached_property
    def skins(self) -> tuple[Skin, ...]:
        return tuple(_skin(i, s) for i, s in enumerate(self.table("skins")))

    @cached_property
    def animations(self) -> tuple[Animation, ...]:
        return tuple(_animation(a, anim) for a, anim in enumerate(self.table("animations")))

    @cached_property
    def meshes(self) -> tuple[Mesh, ...]:
        return tuple(_mesh(m, mesh) for m, mesh in enumerate(self.table("meshes")))

    @cached_property
    def materials(self) -> tuple[Material, ...]:
        return tuple(_material(m) for m in self.table("materials"))

    @cached_property
    def texture_sources(self) -> tuple[Any, ...]:
        """The image index of each texture (``None`` where absent)."""
        return tuple(field(t, "source") for t in self.table("textures"))

    @cached_property
    def image_views(self) -> tuple[Any, ...]:
        """The bufferView of each image (``None`` for an external or data-URI image)."""
        return tuple(field(i, "bufferView") for i in self.table("images"))

    @cached_property
    def accessors(self) -> tuple[Accessor, ...]:
        return tuple(_accessor(a) for a in self.table("accessors"))

    @cached_property
    def extensions_required(self) -> list[str]:
        """The names in ``extensionsRequired`` (strings only, as listed)."""
        return [e for e in field(self.raw, "extensionsRequired", []) or [] if isinstance(e, str)]

    def buffer(self, index: int) -> bytes:
        """The bytes of buffer ``index`` (GLB chunk, data URI or file), read once."""
        if index in self._cache:
            return self._cache[index]
        buffers = self.table("buffers")
        if not 0 <= index < len(buffers):
            raise self.fail(f"buffer {index} does not exist ({len(buffers)} buffers)")
        uri = field(buffers[index], "uri")
        need = field(buffers[index], "byteLength", 0)
        if not isinstance(need, int) or isinstance(need, bool) or need < 0:
            raise self.fail(f"buffer {index}: byteLength {short_text(need)} is not a count")
        if uri is None:
            blob = self.raw.binary_blob() if index == 0 else None
            if blob is None:
                raise self.fail(f"buffer {index} has no uri and no GLB binary chunk")
            data = bytes(blob)
        elif not isinstance(uri, str):
            raise self.fail(f"buffer {index}: uri {short_text(uri)} is not a string")
        elif uri.startswith("data:"):
            data = data_uri_bytes(uri, need, self.path, f"buffer {index}")
        else:
            what = f"buffer {index}"
            file = external_path(self.base, uri, self.path, what, self.allow_outside)
            data = read_external(file, need, self.path, what)
        if len(data) < need:
            says = f"byteLength says {short_text(need)}"
            raise self.fail(f"buffer {index} holds {len(data)} bytes, {says}")
        self._cache[index] = data
        return data

    def view(self, index: int) -> tuple[bytes, int, int, int | None]:
        """``(buffer bytes, byteOffset, byteLength, byteStride)`` of a bufferView, checked."""
        views = self.table("bufferViews")
        if not 0 <= index < len(views):
            raise self.fail(f"bufferView {index} does not exist")
        bv = views[index]
        data = self.buffer(int(field(bv, "buffer", 0)))
        off, length = int(field(bv, "byteOffset", 0)), int(field(bv, "byteLength", 0))
        if off < 0 or length < 0 or off + length > len(data):
            raise self.fail(f"bufferView {index} runs past the end of its buffer")
        stride = field(bv, "byteStride")
        return data, off, length, None if stride is None else int(stride)

    def _strided(self, view: int, offset: int, count: int, dtype: np.dtype, width: int):
        data, v_off, v_len, stride = self.view(view)
        item = dtype.itemsize * width
        stride = stride or item
        if count and (offset < 0 or offset + stride * (count - 1) + item > v_len):
            raise self.fail(f"accessor data runs past the end of bufferView {view}")
        raw = np.ndarray(
            (count, width), dtype=dtype, buffer=data, offset=v_off + offset,
            strides=(stride, dtype.itemsize),
        )  # fmt: skip
        return np.array(raw)

    def accessor_at(self, index: int) -> Accessor:
        """The layout of accessor ``index``.

        Raises:
            FileFormatError: no such accessor.
        """
        accessors = self.accessors
        if not 0 <= index < len(accessors):
            raise self.fail(f"accessor {index} does not exist ({len(accessors)} accessors)")
        return accessors[index]

    def accessor(self, index: int, *, integer: bool = False) -> np.ndarray:
        """Decode accessor ``index`` to ``(count, width)``: float64, normalised integers
        scaled by the glTF rules; ``integer=True`` keeps integer components as int64.

        Raises:
            InputError: an accessor type or component type this reader does not decode.
            FileFormatError: the accessor or its data do not fit the file.
        """
        acc = self.accessor_at(index)
        ctype, atype = acc.component_type, acc.type
        if ctype not in COMPONENTS or atype not in WIDTHS:
            raise InputError(
                f"{self.path}: accessor {index} has an unsupported layout"
                f" ({atype}, componentType {ctype})"
            )
        dtype, width, count = COMPONENTS[ctype], WIDTHS[atype], int(acc.count)
        if count < 0:
            raise self.fail(f"accessor {index} has a negative count")
        if acc.buffer_view is None:
            problem = zero_fill_problem(self.raw, count, dtype.itemsize * width)
            if problem:
                raise self.fail(f"accessor {index}: {problem}")
            out = np.zeros((count, width), dtype=dtype)
        else:
            out = self._strided(int(acc.buffer_view), int(acc.byte_offset), count, dtype, width)
        if acc.sparse is not None:
            out = self._sparse(index, acc.sparse, out, dtype, width)
        if integer:
            if ctype == 5126:
                raise InputError(f"{self.path}: accessor {index} must hold integers")
            return out.astype(np.int64)
        if acc.normalized and ctype in _NORMALISE:
            return np.maximum(out.astype(np.float64) / _NORMALISE[ctype], -1.0)
        return out.astype(np.float64)

    def _sparse(self, index: int, sparse: Sparse, out: np.ndarray, dtype: np.dtype, width: int):
        n = sparse.count
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= len(out):
            raise self.fail(
                f"accessor {index}: sparse count {short_text(n)} is not in 0..{len(out)}"
            )
        ictype = sparse.index_type
        if ictype not in (5121, 5123, 5125) or not sparse.complete:
            raise InputError(f"{self.path}: accessor {index} has unsupported sparse indices")
        where = self._strided(
            int(sparse.index_view), int(sparse.index_offset), n, COMPONENTS[ictype], 1
        )[:, 0].astype(np.int64)
        values = self._strided(int(sparse.value_view), int(sparse.value_offset), n, dtype, width)
        if n and (where.min() < 0 or where.max() >= len(out)):
            raise self.fail(f"accessor {index}: sparse index out of range")
        out = out.copy()
        out[where] = values
        return out
