"""Low-level glTF data for the writer side: the document as JSON, buffer bytes, accessors.

Shared by :mod:`ikrig.io.gltf.write`, :mod:`ikrig.io.gltf.check` and
:mod:`ikrig.io.gltf.build`. Works on the document's JSON form (plain dicts and lists, as in
the file) so that every property pygltflib keeps, extras and extensions included, goes
through unchanged. pygltflib is imported lazily: ``import ikrig`` never needs it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...math.quat import quat_from_matrix, quat_to_matrix
from ._json import gltf2_class
from ._spec import COMPONENTS, GLB_BIN, GLB_JSON, GLB_MAGIC, NUM_COMPONENTS
from .uri import data_uri_bytes, external_path, read_external, short_text


def pygltflib_module(what: str) -> Any:
    """Import pygltflib, or raise InputError with the install hint."""
    try:
        import pygltflib
    except ImportError:
        raise InputError(f"{what} needs pygltflib (pip install 'ikrig[gltf]')") from None
    return pygltflib


def document_json(document: Any) -> dict:
    """A fresh deep copy of the document's JSON (a ``dict``) from a pygltflib ``GLTF2`` or a
    ``dict``.

    As pygltflib's ``to_json``: properties that are ``None`` or empty are left out, at any
    depth; except that ``extras`` and ``extensions`` are kept as they are (a ``null`` inside
    extras survives a round trip). Linear in the document, a few times faster than
    ``to_json`` (no per-object deep copies).
    """
    if isinstance(document, dict):
        return json.loads(json.dumps(document))
    if not (dataclasses.is_dataclass(document) and hasattr(document, "to_json")):
        raise InputError(
            f"document: expected a pygltflib GLTF2 or a dict, got {type(document).__name__}"
        )
    return _plain(document)


_SCALARS = (int, float, bool)
_KEEP_AS_IS = ("extras", "extensions")


def _plain(obj: Any) -> Any:
    """``obj`` (pygltflib objects, lists, dicts, scalars) as fresh JSON values, pruned."""
    kind = type(obj)
    if kind is list or kind is tuple:
        return [_plain(v) for v in obj]
    names = _FIELDS.get(kind)
    if names is None and dataclasses.is_dataclass(obj):
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(obj))
    if kind is dict:
        items: Any = obj.items()
    elif names is not None:
        fields = obj.__dict__
        items = ((name, fields[name]) for name in names)
    elif kind in _SCALARS or kind is str or obj is None:
        return obj
    else:  # pygltflib.Attributes: custom attribute names allowed
        items = vars(obj).items()
    out = {}
    for key, value in items:
        vk = type(value)
        if vk in _SCALARS:
            out[key] = value
        elif value is None or not value and (vk is str or vk is list or vk is dict):
            continue
        elif vk is str:
            out[key] = value
        elif key in _KEEP_AS_IS and vk is dict:
            out[key] = json.loads(json.dumps(value))
        else:
            out[key] = _plain(value)
    return out


_FIELDS: dict[type, tuple[str, ...]] = {}
"""The field names of each pygltflib dataclass met."""


def document_folder(document: Any, path: str | os.PathLike | None = None) -> Path:
    """The folder relative URIs of ``document`` are resolved against."""
    if path is not None:
        return Path(os.fspath(path)).parent
    return Path(getattr(document, "_path", None) or ".")


def buffer_bytes(
    document: Any,
    data: dict,
    folder: Path,
    allow_outside: bool = False,
    where: str | os.PathLike | None = None,
) -> list[bytes]:
    """The bytes of every buffer of ``data`` (the document's JSON): the GLB binary blob for a
    buffer without ``uri``, a decoded data URI, or the file it names inside ``folder`` (see
    :mod:`ikrig.io.gltf.uri`: anywhere when ``allow_outside``), ``byteLength`` bytes of it.
    ``where`` (the document's path) names the file in messages.

    Raises:
        InputError: a buffer's bytes cannot be found or are shorter than its ``byteLength``.
        FileFormatError: a buffer file outside ``folder``, not a regular file or too short.
    """
    blob = document.binary_blob() if hasattr(document, "binary_blob") else None
    where = str(folder / "<document>") if where is None else os.fspath(where)
    out = []
    for i, buf in enumerate(data.get("buffers", [])):
        uri, need = buf.get("uri"), buf.get("byteLength", 0)
        if not isinstance(need, int) or isinstance(need, bool) or need < 0:
            raise InputError(f"buffer {i}: byteLength {short_text(need)} is not a count")
        if uri is None:
            if blob is None:
                raise InputError(f"buffer {i} has no uri and the document has no binary blob")
            raw = bytes(blob)
        elif not isinstance(uri, str):
            raise InputError(f"buffer {i}: uri {short_text(uri)} is not a string")
        elif uri.startswith("data:"):
            raw = data_uri_bytes(uri, need, where, f"buffer {i}")
        else:
            file = external_path(folder, uri, where, f"buffer {i}", allow_outside)
            raw = read_external(file, need, where, f"buffer {i}")
        if len(raw) < need:
            says = f"fewer than its byteLength {short_text(need)}"
            raise InputError(f"buffer {i} holds {len(raw)} bytes, {says}")
        out.append(raw)
    return out


def element_size(acc: dict) -> int:
    """Bytes of one element of an accessor (matrix columns of 1- and 2-byte components are
    padded to 4 bytes, as the glTF specification says)."""
    comp = np.dtype(COMPONENTS[acc["componentType"]]).itemsize
    kind = acc["type"]
    if kind in ("MAT2", "MAT3") and comp < 4:
        rows = 2 if kind == "MAT2" else 3
        return rows * (-(-rows * comp // 4) * 4)
    return NUM_COMPONENTS[kind] * comp


def node_matrix(node: dict) -> np.ndarray:
    """``(4, 4)`` local matrix of a node (its ``matrix``, column-major in the file, or TRS)."""
    if "matrix" in node:
        return np.asarray(node["matrix"], dtype=np.float64).reshape(4, 4).T
    t, q, s = node_trs(node)
    return compose(t, q, s)


def node_trs(node: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A node's rest translation ``(3,)``, rotation ``(4,)`` xyzw and scale ``(3,)`` (from
    its matrix when it has one). The rotation is normalised, as the reader reads it (a
    file may store a quaternion of another length)."""
    if "matrix" in node:
        return decompose(node_matrix(node))
    t = np.asarray(node.get("translation", (0.0, 0.0, 0.0)), dtype=np.float64)
    q = np.asarray(node.get("rotation", (0.0, 0.0, 0.0, 1.0)), dtype=np.float64)
    s = np.asarray(node.get("scale", (1.0, 1.0, 1.0)), dtype=np.float64)
    n = float(np.linalg.norm(q))
    return t, (q / n if n > 0 else np.array([0.0, 0.0, 0.0, 1.0])), s


def compose(t: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``(4, 4)`` matrix ``T @ R @ S``."""
    m = np.eye(4)
    m[:3, :3] = quat_to_matrix(np.asarray(q, dtype=np.float64)) * np.asarray(s)[None, :]
    m[:3, 3] = t
    return m


def decompose(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Translation, rotation (xyzw) and scale of an affine ``(4, 4)`` matrix without shear; a
    negative determinant flips the scale's x."""
    m = np.asarray(m, dtype=np.float64)
    lin = m[:3, :3]
    s = np.linalg.norm(lin, axis=0)
    if np.linalg.det(lin) < 0:
        s[0] = -s[0]
    r = lin / np.where(s == 0, 1.0, s)[None, :]
    return m[:3, 3].copy(), quat_from_matrix(r), s


def glb_bytes(data: dict, blob: bytes) -> bytes:
    """A GLB file: the JSON chunk (padded with spaces) and, if any, the BIN chunk."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False).encode("utf-8")
    text += b" " * (-len(text) % 4)
    chunks = [len(text).to_bytes(4, "little"), GLB_JSON.to_bytes(4, "little"), text]
    if blob:
        body = bytes(blob) + bytes(-len(blob) % 4)
        chunks += [len(body).to_bytes(4, "little"), GLB_BIN.to_bytes(4, "little"), body]
    payload = b"".join(chunks)
    header = GLB_MAGIC + (2).to_bytes(4, "little") + (12 + len(payload)).to_bytes(4, "little")
    return header + payload


def document_from_json(data: dict, blob: bytes) -> Any:
    """A pygltflib ``GLTF2`` from JSON and the binary blob of its buffer 0."""
    pygltflib = pygltflib_module("glTF documents")
    doc = gltf2_class(pygltflib).gltf_from_json(json.dumps(data, allow_nan=False))
    doc.set_binary_blob(bytes(blob))
    return doc
