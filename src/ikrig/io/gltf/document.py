"""The glTF document object: one file's tables as records, its buffers, and the one
accessor decoder.

:class:`GltfDocument` wraps the parsed file (a ``pygltflib.GLTF2``, its JSON decoded by
:mod:`ikrig.io.gltf._json`) once. The node, skin, animation and mesh readers take it and
read named fields of small records (:mod:`ikrig.io.gltf._records`: :class:`Node`,
:class:`Skin`, :class:`Animation`, ...) instead of the pygltflib objects, whose nested parts
may stay plain dicts. A record keeps each value as the file has it, with the glTF default
where it is absent; :func:`~ikrig.io.gltf.check.check_document` has checked the types the
readers rely on before they run. Buffers are read once each. Accessors are decoded here
only: for the readers (:meth:`GltfDocument.accessor`), and for the writer and the checker,
which wrap the document's JSON and the buffers they hold (:meth:`GltfDocument.stored`).
Every structural problem raises :class:`~ikrig.errors.FileFormatError` naming the file,
and an accessor this reader does not decode raises :class:`~ikrig.errors.InputError`
naming the accessor index.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import FileFormatError, InputError
from ._json import gltf2_class
from ._records import (
    Accessor,
    Animation,
    Material,
    Mesh,
    Node,
    Skin,
    Sparse,
    accessor_record,
    animation_record,
    field,
    material_record,
    mesh_record,
    node_record,
    skin_record,
)
from ._spec import COMPONENTS, NUM_COMPONENTS
from .uri import data_uri_bytes, external_path, read_external, short_text

WIDTHS = {k: NUM_COMPONENTS[k] for k in ("SCALAR", "VEC2", "VEC3", "VEC4", "MAT4")}
"""Accessor types this reader decodes -> number of components (MAT2/MAT3 are padded per
column for 1- and 2-byte components and are never needed for skeletons: not decoded)."""

_NORMALISE = {5120: 127.0, 5121: 255.0, 5122: 32767.0, 5123: 65535.0}

ZERO_FILL_BYTES = 1 << 24
"""An accessor without bufferView (zeros, maybe sparse) may take this many bytes plus four
times the bytes of the document's buffers; a larger ``count`` is refused before anything is
allocated (a few bytes of JSON cannot ask for gigabytes)."""


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def zero_fill_problem(doc: Any, count: int, item_bytes: int) -> str | None:
    """Why ``count`` zero elements of ``item_bytes`` each are too many for ``doc`` (a
    pygltflib document or its JSON), or ``None`` (see :data:`ZERO_FILL_BYTES`)."""
    sizes = [field(b, "byteLength") for b in field(doc, "buffers", []) or []]
    limit = ZERO_FILL_BYTES + 4 * sum(s for s in sizes if _is_count(s))
    if count * item_bytes > limit:
        return f"count {short_text(count)} without bufferView asks for more than {limit} bytes"
    return None


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
        raw: the ``pygltflib.GLTF2`` (binary blob loaded), or the document's JSON (a
            ``dict``, as the writer edits it), kept as :attr:`raw`.
        path: the file it was read from: names it in messages and locates external
            buffers (``None``: a document in memory, ``<document>`` in messages).
        allow_outside: buffer files may lie outside the file's folder tree (see
            :mod:`ikrig.io.gltf.uri`); at most ``byteLength`` bytes of one are read.
        buffers: the bytes of every buffer, when the caller has them already (then no
            buffer is read again).

    The tables (:attr:`nodes`, :attr:`skins`, :attr:`animations`, :attr:`meshes`,
    :attr:`materials`, :attr:`accessors`) are built on first use, after the document was
    checked.
    """

    def __init__(
        self,
        raw: Any,
        path: str | os.PathLike | None = None,
        allow_outside: bool = False,
        buffers: Sequence[bytes] | None = None,
    ):
        self.raw = raw
        self.path = "<document>" if path is None else os.fspath(path)
        self.base = Path(self.path).parent if path is not None else Path(".")
        self.allow_outside = allow_outside
        self._cache: dict[int, bytes] = dict(enumerate(buffers or ()))

    @classmethod
    def load(cls, path: str | os.PathLike, allow_outside: bool = False) -> GltfDocument:
        """The document of a ``.glb`` or ``.gltf`` file (see :func:`load_document`)."""
        return cls(load_document(path), path, allow_outside)

    def fail(self, reason: str) -> FileFormatError:
        """The FileFormatError for ``reason``, naming the file."""
        return FileFormatError(self.path, None, reason)

    def table(self, name: str) -> Sequence[Any]:
        """The raw objects of a top-level array (``"nodes"``, ``"accessors"``, ...), the
        document's own list (not a copy: ``view`` reads it once per accessor)."""
        return field(self.raw, name, []) or ()

    def _records(self, name: str, build: Callable[[int, Any], Any]) -> tuple[Any, ...]:
        return tuple(build(i, item) for i, item in enumerate(self.table(name)))

    @cached_property
    def nodes(self) -> tuple[Node, ...]:
        return self._records("nodes", node_record)

    @cached_property
    def skins(self) -> tuple[Skin, ...]:
        return self._records("skins", skin_record)

    @cached_property
    def animations(self) -> tuple[Animation, ...]:
        return self._records("animations", animation_record)

    @cached_property
    def meshes(self) -> tuple[Mesh, ...]:
        return self._records("meshes", mesh_record)

    @cached_property
    def materials(self) -> tuple[Material, ...]:
        return self._records("materials", material_record)

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
        return self._records("accessors", accessor_record)

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
        raw: np.ndarray = np.ndarray(
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
        out = self.stored(index)
        ctype = self.accessors[index].component_type
        if integer:
            if ctype == 5126:
                raise InputError(f"{self.path}: accessor {index} must hold integers")
            return out.astype(np.int64)
        if self.accessors[index].normalized and ctype in _NORMALISE:
            return np.maximum(out.astype(np.float64) / _NORMALISE[ctype], -1.0)
        return out.astype(np.float64)

    def stored(self, index: int) -> np.ndarray:
        """Accessor ``index`` as stored: ``(count, width)`` in its own component dtype, no
        normalisation, sparse substitutions applied. Raises as :meth:`accessor`."""
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
        return out

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
