"""glTF containers as data: load a document, read its buffers, decode accessors.

pygltflib reads the GLB container and holds the document (its JSON decoded by
:mod:`ikrig.io.gltf._json`); everything else here is NumPy. Every structural problem
raises :class:`~ikrig.errors.FileFormatError` naming the file, and an accessor this reader
does not decode raises :class:`~ikrig.errors.InputError` naming the accessor index.
"""

from __future__ import annotations

import importlib
import os
import warnings
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


def get(obj: Any, key: str, default: Any = None) -> Any:
    """A field of a pygltflib object or of a plain dict (nested objects may stay dicts)."""
    if obj is None:
        return default
    value = obj.get(key, default) if isinstance(obj, dict) else getattr(obj, key, default)
    return default if value is None else value


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


class Buffers:
    """The bytes of a document's buffers, read once each (GLB chunk, data URI or file).

    A buffer file must lie inside the glTF's folder tree unless ``allow_outside`` (see
    :mod:`ikrig.io.gltf.uri`); at most ``byteLength`` bytes of it are read.
    """

    def __init__(self, doc: Any, path: str | os.PathLike | None, allow_outside: bool = False):
        self.doc = doc
        self.path = "<document>" if path is None else os.fspath(path)
        self.base = Path(self.path).parent if path is not None else Path(".")
        self.allow_outside = allow_outside
        self._cache: dict[int, bytes] = {}

    def fail(self, reason: str) -> FileFormatError:
        return FileFormatError(self.path, None, reason)

    def buffer(self, index: int) -> bytes:
        if index in self._cache:
            return self._cache[index]
        buffers = self.doc.buffers or []
        if not 0 <= index < len(buffers):
            raise self.fail(f"buffer {index} does not exist ({len(buffers)} buffers)")
        uri = get(buffers[index], "uri")
        need = get(buffers[index], "byteLength", 0)
        if not isinstance(need, int) or isinstance(need, bool) or need < 0:
            raise self.fail(f"buffer {index}: byteLength {short_text(need)} is not a count")
        if uri is None:
            blob = self.doc.binary_blob() if index == 0 else None
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
        views = self.doc.bufferViews or []
        if not 0 <= index < len(views):
            raise self.fail(f"bufferView {index} does not exist")
        bv = views[index]
        data = self.buffer(int(get(bv, "buffer", 0)))
        off, length = int(get(bv, "byteOffset", 0)), int(get(bv, "byteLength", 0))
        if off < 0 or length < 0 or off + length > len(data):
            raise self.fail(f"bufferView {index} runs past the end of its buffer")
        stride = get(bv, "byteStride")
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

    def accessor(self, index: int, *, integer: bool = False) -> np.ndarray:
        """Decode accessor ``index`` to ``(count, width)``: float64, normalised integers
        scaled by the glTF rules; ``integer=True`` keeps integer components as int64.

        Raises:
            InputError: an accessor type or component type this reader does not decode.
            FileFormatError: the accessor or its data do not fit the file.
        """
        accessors = self.doc.accessors or []
        if not 0 <= index < len(accessors):
            raise self.fail(f"accessor {index} does not exist ({len(accessors)} accessors)")
        acc = accessors[index]
        ctype, atype = get(acc, "componentType"), get(acc, "type")
        if ctype not in COMPONENTS or atype not in WIDTHS:
            raise InputError(
                f"{self.path}: accessor {index} has an unsupported layout"
                f" ({atype}, componentType {ctype})"
            )
        dtype, width, count = COMPONENTS[ctype], WIDTHS[atype], int(get(acc, "count", 0))
        if count < 0:
            raise self.fail(f"accessor {index} has a negative count")
        view = get(acc, "bufferView")
        if view is None:
            problem = zero_fill_problem(self.doc, count, dtype.itemsize * width)
            if problem:
                raise self.fail(f"accessor {index}: {problem}")
            out = np.zeros((count, width), dtype=dtype)
        else:
            out = self._strided(int(view), int(get(acc, "byteOffset", 0)), count, dtype, width)
        sparse = get(acc, "sparse")
        if sparse is not None:
            out = self._sparse(index, sparse, out, dtype, width)
        if integer:
            if ctype == 5126:
                raise InputError(f"{self.path}: accessor {index} must hold integers")
            return out.astype(np.int64)
        if get(acc, "normalized", False) and ctype in _NORMALISE:
            return np.maximum(out.astype(np.float64) / _NORMALISE[ctype], -1.0)
        return out.astype(np.float64)

    def _sparse(self, index: int, sparse: Any, out: np.ndarray, dtype: np.dtype, width: int):
        n = get(sparse, "count", 0)
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= len(out):
            raise self.fail(
                f"accessor {index}: sparse count {short_text(n)} is not in 0..{len(out)}"
            )
        idx, val = get(sparse, "indices"), get(sparse, "values")
        ictype = get(idx, "componentType")
        if ictype not in (5121, 5123, 5125) or idx is None or val is None:
            raise InputError(f"{self.path}: accessor {index} has unsupported sparse indices")
        where = self._strided(
            int(get(idx, "bufferView", -1)), int(get(idx, "byteOffset", 0)), n,
            COMPONENTS[ictype], 1,
        )[:, 0].astype(np.int64)  # fmt: skip
        values = self._strided(
            int(get(val, "bufferView", -1)), int(get(val, "byteOffset", 0)), n, dtype, width
        )
        if n and (where.min() < 0 or where.max() >= len(out)):
            raise self.fail(f"accessor {index}: sparse index out of range")
        out = out.copy()
        out[where] = values
        return out
