"""Structural checks of a glTF 2.0 document: the schema rules for what ikrig writes.

:func:`check_gltf` returns one sentence per problem found (an empty list means none):

- buffers: their bytes exist and hold ``byteLength`` bytes;
- bufferViews: a valid buffer, inside it, ``byteOffset`` a multiple of 4, ``byteStride`` a
  multiple of 4 from 4 to 252;
- accessors: a valid bufferView, a known type and component type, ``count >= 1``,
  ``byteOffset`` a multiple of the component size, every element inside the bufferView,
  ``min``/``max`` with one value per component when given; sparse indices and values inside
  their bufferViews;
- ``min`` and ``max`` present and equal to the data on every ``POSITION`` accessor and every
  animation input accessor;
- animations: input times scalar floats, strictly increasing and >= 0; as many outputs as
  inputs (three times as many for ``CUBICSPLINE``, times the morph targets for ``weights``),
  output types fitting the path, valid sampler and node indices, no animated node holding a
  ``matrix``;
- nodes form a forest (valid children, one parent each, no cycle), valid mesh/skin/camera
  indices, valid scene nodes; skins with valid joints and enough ``MAT4`` inverse bind
  matrices; meshes and images with valid accessor and bufferView indices.

These are a subset of the Khronos glTF validator's rules: those a writer of skins and
animations can break.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import FileFormatError, IkrigError, InputError
from ._json import gltf2_class
from ._spec import COMPONENTS, NUM_COMPONENTS
from ._wdata import (
    buffer_bytes,
    document_folder,
    document_json,
    element_size,
    pygltflib_module,
)
from ._wpack import REFUSED_EXTENSIONS
from .document import GltfDocument, zero_fill_problem
from .uri import data_uri_bytes, external_path, file_uri, short_text, stat_external

__all__ = ["check_document", "check_gltf", "is_index"]

_PATH_TYPES = {"rotation": "VEC4", "translation": "VEC3", "scale": "VEC3", "weights": "SCALAR"}


def _index_ok(i: Any, n: int) -> bool:
    return isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n


is_index = _index_ok


def _field(obj: Any, key: str) -> Any:
    """A field of a pygltflib object or a dict (``None`` when absent)."""
    if obj is None:
        return None
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _count(value: Any, low: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


class _Refusal:
    """Raise the first problem of a document read from ``where``."""

    def __init__(self, where: str):
        self.where = where

    def __call__(self, reason: str) -> FileFormatError:
        return FileFormatError(self.where, None, reason)

    def index(self, value: Any, n: int, what: str, table: str) -> None:
        if not _index_ok(value, n):
            raise self(f"{what}: {table} {short_text(value)} does not exist ({n} {table}s)")


def _accessor_refs(doc: Any) -> list[tuple[Any, str]]:
    """Every ``(value, what)`` the writer renumbers as an accessor index."""
    refs: list[tuple[Any, str]] = []
    for m, mesh in enumerate(_field(doc, "meshes") or []):
        for p, prim in enumerate(_field(mesh, "primitives") or []):
            what = f"mesh {m} primitive {p}"
            attrs = _field(prim, "attributes")
            attrs = attrs if isinstance(attrs, dict) else vars(attrs) if attrs is not None else {}
            refs += [(v, what) for v in attrs.values() if v is not None]
            if _field(prim, "indices") is not None:
                refs.append((_field(prim, "indices"), what))
            for target in _field(prim, "targets") or []:
                refs += [(v, what) for v in (target.values() if isinstance(target, dict) else [])]
    for k, skin in enumerate(_field(doc, "skins") or []):
        if _field(skin, "inverseBindMatrices") is not None:
            refs.append((_field(skin, "inverseBindMatrices"), f"skin {k} inverseBindMatrices"))
    for a, anim in enumerate(_field(doc, "animations") or []):
        for s, sampler in enumerate(_field(anim, "samplers") or []):
            what = f"animation {a} sampler {s}"
            refs += [(_field(sampler, "input"), what), (_field(sampler, "output"), what)]
    for i, node in enumerate(_field(doc, "nodes") or []):
        inst = (_field(node, "extensions") or {}).get("EXT_mesh_gpu_instancing") or {}
        attrs = inst.get("attributes") if isinstance(inst, dict) else None
        refs += [(v, f"node {i} instancing") for v in (attrs or {}).values()]
    return refs


def _check_buffers(doc: Any, refuse: _Refusal, folder: Path | None, allow_outside: bool) -> None:
    for i, buf in enumerate(_field(doc, "buffers") or []):
        length, uri = _field(buf, "byteLength"), _field(buf, "uri")
        if not _count(length):
            raise refuse(f"buffer {i}: byteLength {short_text(length)} is not a count")
        if uri is not None and not isinstance(uri, str):
            raise refuse(f"buffer {i}: uri {short_text(uri)} is not a string")
        if isinstance(uri, str) and not file_uri(uri):
            data_uri_bytes(uri, length, refuse.where, f"buffer {i}")
        elif folder is not None and isinstance(uri, str):
            file = external_path(folder, uri, refuse.where, f"buffer {i}", allow_outside)
            stat_external(file, length, refuse.where, f"buffer {i}")
    for i, image in enumerate(_field(doc, "images") or []):
        uri = _field(image, "uri")
        if uri is not None and not isinstance(uri, str):
            raise refuse(f"image {i}: uri {short_text(uri)} is not a string")
        if folder is not None and isinstance(uri, str) and file_uri(uri):
            external_path(folder, uri, refuse.where, f"image {i}", allow_outside)


def _check_layouts(doc: Any, refuse: _Refusal) -> None:
    """bufferViews inside their buffers; accessors of known layouts with valid views."""
    buffers, views = _field(doc, "buffers") or [], _field(doc, "bufferViews") or []
    for i, view in enumerate(views):
        refuse.index(_field(view, "buffer"), len(buffers), f"bufferView {i}", "buffer")
        off, length = _field(view, "byteOffset") or 0, _field(view, "byteLength")
        stride = _field(view, "byteStride")
        if not (_count(off) and _count(length)):
            raise refuse(f"bufferView {i}: byteOffset or byteLength is not a count")
        if off + length > _field(buffers[_field(view, "buffer")], "byteLength"):
            raise refuse(f"bufferView {i} runs past the end of its buffer")
        if stride is not None and not (_count(stride, 1) and stride <= 252):
            raise refuse(f"bufferView {i}: byteStride {short_text(stride)} is not in 1..252")
    for i, acc in enumerate(_field(doc, "accessors") or []):
        what = f"accessor {i}"
        ctype, kind, count = (_field(acc, k) for k in ("componentType", "type", "count"))
        if ctype not in COMPONENTS or kind not in NUM_COMPONENTS:
            raise refuse(f"{what}: unknown type {short_text(kind)} or componentType")
        if not _count(count) or not _count(_field(acc, "byteOffset") or 0):
            raise refuse(f"{what}: count or byteOffset is not a count")
        if _field(acc, "bufferView") is not None:
            refuse.index(_field(acc, "bufferView"), len(views), what, "bufferView")
            stride = _field(views[_field(acc, "bufferView")], "byteStride")
            size = element_size({"componentType": ctype, "type": kind})
            if stride is not None and stride < size:
                raise refuse(f"{what}: byteStride {stride} is less than its {size}-byte elements")
        sparse = _field(acc, "sparse")
        if sparse is not None:
            ind, val = _field(sparse, "indices"), _field(sparse, "values")
            if not _count(_field(sparse, "count"), 1) or _field(sparse, "count") > count:
                raise refuse(f"{what}: sparse count is not in 1..{short_text(count)}")
            if ind is None or val is None or _field(ind, "componentType") not in (5121, 5123, 5125):
                raise refuse(f"{what}: sparse indices or values missing or of a bad type")
            for part in (ind, val):
                refuse.index(_field(part, "bufferView"), len(views), f"{what} sparse", "bufferView")
                if not _count(_field(part, "byteOffset") or 0):
                    raise refuse(f"{what}: sparse byteOffset is not a count")
    for i, image in enumerate(_field(doc, "images") or []):
        if _field(image, "bufferView") is not None:
            refuse.index(_field(image, "bufferView"), len(views), f"image {i}", "bufferView")


def check_document(
    doc: Any,
    where: str,
    folder: Path | None = None,
    allow_outside: bool = False,
) -> None:
    """Refuse, on reading, a document the glTF writer could not write back: every index the
    writer follows (accessors, bufferViews, buffers, samplers) valid and of the right type,
    every count a non-negative integer, bufferViews inside their buffers, every accessor of
    a known layout, buffer files (and image files) inside ``folder`` unless
    ``allow_outside``, present, regular and long enough (see :mod:`ikrig.io.gltf.uri`),
    no extension the writer refuses. Linear in the document's size; reads no buffer data.

    Raises:
        FileFormatError: the first problem found, naming ``where`` (the file).
        InputError: a meshopt extension (:data:`~ikrig.io.gltf._wpack.REFUSED_EXTENSIONS`).
    """
    refuse = _Refusal(where)
    used = _field(doc, "extensionsUsed") or []
    refused = sorted(set(e for e in used if isinstance(e, str)) & REFUSED_EXTENSIONS)
    if refused:
        raise InputError(f"{where}: uses {refused[0]}, which ikrig cannot write back; not read")
    _check_buffers(doc, refuse, folder, allow_outside)
    _check_layouts(doc, refuse)
    n_acc = len(_field(doc, "accessors") or [])
    for value, what in _accessor_refs(doc):
        refuse.index(value, n_acc, what, "accessor")
    nodes = len(_field(doc, "nodes") or [])
    for a, anim in enumerate(_field(doc, "animations") or []):
        samplers = _field(anim, "samplers") or []
        for c, ch in enumerate(_field(anim, "channels") or []):
            what = f"animation {a} channel {c}"
            refuse.index(_field(ch, "sampler"), len(samplers), what, "sampler")
            target = _field(ch, "target")
            if target is None:
                raise refuse(f"{what} has no target")
            if _field(target, "node") is not None:
                refuse.index(_field(target, "node"), nodes, what, "node")


def _check_views(data: dict, sizes: list[int], out: list[str]) -> None:
    for i, view in enumerate(data.get("bufferViews", [])):
        b = view.get("buffer")
        off, length = view.get("byteOffset", 0), view.get("byteLength", 0)
        if not _index_ok(b, len(sizes)):
            out.append(f"bufferView {i}: buffer {b} does not exist")
            continue
        if off % 4:
            out.append(f"bufferView {i}: byteOffset {off} is not a multiple of 4")
        if off < 0 or length < 1 or off + length > sizes[b]:
            out.append(
                f"bufferView {i}: bytes {off}..{off + length} do not fit buffer {b}"
                f" ({sizes[b]} bytes)"
            )
        stride = view.get("byteStride")
        if stride is not None and (stride % 4 or not 4 <= stride <= 252):
            out.append(f"bufferView {i}: byteStride {stride} is not a multiple of 4 in 4..252")


def _fits(data: dict, view_index: Any, offset: int, count: int, acc: dict, what: str) -> str:
    """A problem with ``count`` elements at ``offset`` in a bufferView, or ``""``."""
    views = data.get("bufferViews", [])
    if not _index_ok(view_index, len(views)):
        return f"{what}: bufferView {view_index} does not exist"
    view = views[view_index]
    comp = np.dtype(COMPONENTS[acc["componentType"]]).itemsize
    size = element_size(acc)
    stride = view.get("byteStride") or size
    if offset % comp or (view.get("byteOffset", 0) + offset) % comp:
        return f"{what}: byteOffset {offset} is not a multiple of its component size {comp}"
    end = offset + stride * (count - 1) + size
    if offset < 0 or end > view.get("byteLength", 0):
        return (
            f"{what}: {count} elements end at byte {end}, past bufferView {view_index}"
            f" ({view.get('byteLength', 0)} bytes)"
        )
    return ""


def _check_accessor(data: dict, i: int, acc: dict, out: list[str]) -> bool:
    """Structural checks of one accessor; whether its data can be read."""
    kind, ctype, count = acc.get("type"), acc.get("componentType"), acc.get("count")
    if kind not in NUM_COMPONENTS or ctype not in COMPONENTS:
        out.append(f"accessor {i}: unknown type {kind!r} or componentType {ctype!r}")
        return False
    if not isinstance(count, int) or count < 1:
        out.append(f"accessor {i}: count {count!r} is not >= 1")
        return False
    n = NUM_COMPONENTS[kind]
    for key in ("min", "max"):
        if key in acc and len(acc[key]) != n:
            out.append(f"accessor {i}: {key} has {len(acc[key])} values for {n} components")
    ok = True
    if acc.get("bufferView") is None:
        problem = zero_fill_problem(data, count, element_size(acc))
        if problem:
            out.append(f"accessor {i}: {problem}")
            return False
    else:
        problem = _fits(
            data, acc["bufferView"], acc.get("byteOffset", 0), count, acc, f"accessor {i}"
        )
        if problem:
            out.append(problem)
            ok = False
    sparse = acc.get("sparse")
    if sparse:
        k = sparse.get("count", 0)
        ind, val = sparse.get("indices", {}), sparse.get("values", {})
        index_acc = {"componentType": ind.get("componentType", 5125), "type": "SCALAR"}
        for part, view, layout in (("indices", ind, index_acc), ("values", val, acc)):
            problem = _fits(
                data,
                view.get("bufferView"),
                view.get("byteOffset", 0),
                k,
                layout,
                f"accessor {i} sparse {part}",
            )
            if problem:
                out.append(problem)
                ok = False
    return ok


def _check_bounds(
    data: dict, doc: GltfDocument, i: int, what: str, out: list[str]
) -> np.ndarray | None:
    """min/max of accessor ``i`` present and equal to its data (``doc``: the document over
    ``data`` and its buffers); returns the data."""
    acc = data["accessors"][i]
    try:
        values = doc.stored(i)
    except (IkrigError, IndexError, KeyError, ValueError) as exc:
        out.append(f"accessor {i} ({what}): cannot read its data ({exc})")
        return None
    for key, actual in (("min", values.min(axis=0)), ("max", values.max(axis=0))):
        if key not in acc:
            out.append(f"accessor {i} ({what}): {key} is missing")
            continue
        declared = np.asarray(acc[key], dtype=np.float64)
        if declared.shape != actual.shape:
            continue
        if values.dtype.kind == "f":
            declared = declared.astype(np.float32)
            tol = 1e-6 * np.maximum(1.0, np.abs(actual.astype(np.float64)))
        else:
            tol = np.zeros(actual.shape)
        if np.any(np.abs(declared.astype(np.float64) - actual.astype(np.float64)) > tol):
            out.append(
                f"accessor {i} ({what}): {key} {acc[key]} differs from the data's {actual.tolist()}"
            )
    return values


def _check_animations(data: dict, doc: GltfDocument, readable: set[int], out: list[str]) -> None:
    nodes, accessors = data.get("nodes", []), data.get("accessors", [])
    for a, anim in enumerate(data.get("animations", [])):
        samplers = anim.get("samplers", [])
        for c, ch in enumerate(anim.get("channels", [])):
            where = f"animation {a} channel {c}"
            s, target = ch.get("sampler"), ch.get("target", {})
            node, path = target.get("node"), target.get("path")
            if not _index_ok(s, len(samplers)):
                out.append(f"{where}: sampler {s} does not exist")
                continue
            if node is not None and not _index_ok(node, len(nodes)):
                out.append(f"{where}: node {node} does not exist")
                continue
            if path not in _PATH_TYPES:
                continue  # an extension's path (KHR_animation_pointer)
            if node is not None and "matrix" in nodes[node]:
                out.append(f"{where}: node {node} is animated but has a matrix")
            sampler = samplers[s]
            inp, outp = sampler.get("input"), sampler.get("output")
            if not (_index_ok(inp, len(accessors)) and _index_ok(outp, len(accessors))):
                out.append(f"{where}: sampler {s} input or output accessor does not exist")
                continue
            per_key = 3 if sampler.get("interpolation", "LINEAR") == "CUBICSPLINE" else 1
            if path == "weights" and node is not None:
                meshes = data.get("meshes", [])
                m = nodes[node].get("mesh")
                if not _index_ok(m, len(meshes)):
                    out.append(f"{where}: node {node} has morph weights but no mesh")
                    continue
                per_key *= len(meshes[m].get("primitives", [{}])[0].get("targets", []) or [])
            expect = accessors[inp].get("count", 0) * per_key
            if accessors[outp].get("count") != expect:
                out.append(
                    f"{where}: output accessor {outp} has {accessors[outp].get('count')}"
                    f" values, {expect} expected from input accessor {inp}"
                )
            if accessors[outp].get("type") != _PATH_TYPES[path]:
                out.append(f"{where}: output accessor {outp} is not {_PATH_TYPES[path]} for {path}")
        for s, sampler in enumerate(samplers):
            inp = sampler.get("input")
            if sampler.get("interpolation", "LINEAR") not in ("LINEAR", "STEP", "CUBICSPLINE"):
                out.append(f"animation {a} sampler {s}: unknown interpolation")
            if not _index_ok(inp, len(accessors)):
                continue
            acc = accessors[inp]
            if acc.get("type") != "SCALAR" or acc.get("componentType") != 5126:
                out.append(f"animation {a} sampler {s}: input accessor {inp} is not float SCALAR")
                continue
            if inp not in readable:
                continue
            keys = _check_bounds(data, doc, inp, f"animation {a} input", out)
            if keys is not None and (np.any(np.diff(keys[:, 0]) <= 0) or keys.min() < 0):
                out.append(
                    f"accessor {inp} (animation {a} input): times not strictly increasing from >= 0"
                )


def _check_nodes(data: dict, out: list[str]) -> None:
    nodes = data.get("nodes", [])
    parent: dict[int, int] = {}
    for i, node in enumerate(nodes):
        for c in node.get("children", []):
            if not _index_ok(c, len(nodes)):
                out.append(f"node {i}: child {c} does not exist")
            elif c in parent:
                out.append(f"node {c} has two parents ({parent[c]} and {i})")
            else:
                parent[c] = i
        for key, table in (("mesh", "meshes"), ("skin", "skins"), ("camera", "cameras")):
            if key in node and not _index_ok(node[key], len(data.get(table, []))):
                out.append(f"node {i}: {key} {node[key]} does not exist")
    for i in range(len(nodes)):
        seen, p = {i}, parent.get(i)
        while p is not None:
            if p in seen:
                out.append(f"node {i} lies on a cycle of children")
                break
            seen.add(p)
            p = parent.get(p)
    for s, scene in enumerate(data.get("scenes", [])):
        bad = [n for n in scene.get("nodes", []) if not _index_ok(n, len(nodes))]
        if bad:
            out.append(f"scene {s}: nodes {bad} do not exist")
    if "scene" in data and not _index_ok(data["scene"], len(data.get("scenes", []))):
        out.append(f"scene {data['scene']} does not exist")


def _check_skins_meshes(data: dict, out: list[str]) -> None:
    nodes, accessors = data.get("nodes", []), data.get("accessors", [])
    for k, skin in enumerate(data.get("skins", [])):
        joints = skin.get("joints", [])
        bad = [j for j in joints if not _index_ok(j, len(nodes))]
        if bad or not joints:
            out.append(f"skin {k}: joints {bad or '[]'} do not exist")
        if "skeleton" in skin and not _index_ok(skin["skeleton"], len(nodes)):
            out.append(f"skin {k}: skeleton node {skin['skeleton']} does not exist")
        ibm = skin.get("inverseBindMatrices")
        if ibm is not None:
            if not _index_ok(ibm, len(accessors)):
                out.append(f"skin {k}: inverseBindMatrices accessor {ibm} does not exist")
            elif accessors[ibm].get("type") != "MAT4" or accessors[ibm].get("count", 0) < len(
                joints
            ):
                out.append(f"skin {k}: accessor {ibm} does not hold {len(joints)} MAT4 matrices")
    for m, mesh in enumerate(data.get("meshes", [])):
        for p, prim in enumerate(mesh.get("primitives", [])):
            refs = list(prim.get("attributes", {}).values()) + [prim.get("indices", 0)]
            for target in prim.get("targets", []) or []:
                refs += list(target.values())
            if any(not _index_ok(r, len(accessors)) for r in refs):
                out.append(f"mesh {m} primitive {p}: an accessor index does not exist")
    for i, image in enumerate(data.get("images", [])):
        v = image.get("bufferView")
        if v is not None and not _index_ok(v, len(data.get("bufferViews", []))):
            out.append(f"image {i}: bufferView {v} does not exist")


def check_gltf(document: Any) -> list[str]:
    """Structural problems of a glTF document (see the module docstring); ``[]`` if none.

    Args:
        document: a ``pygltflib.GLTF2`` (with its binary blob for GLB files) or the path
            of a ``.glb``/``.gltf`` file.

    Raises:
        InputError: pygltflib is missing, or ``document`` is neither.
    """
    path = None
    if isinstance(document, (str, os.PathLike)):
        path = Path(os.fspath(document))
        document = gltf2_class(pygltflib_module("checking glTF files")).load(path)
    data = document_json(document)
    out: list[str] = []
    try:
        buffers = buffer_bytes(document, data, document_folder(document, path))
    except IkrigError as exc:
        out.append(str(exc))
        buffers = []
    sizes = [b.get("byteLength", 0) for b in data.get("buffers", [])]
    _check_views(data, sizes, out)
    readable = set()
    for i, acc in enumerate(data.get("accessors", [])):
        if _check_accessor(data, i, acc, out) and buffers:
            readable.add(i)
    positions = {
        prim["attributes"]["POSITION"]
        for mesh in data.get("meshes", [])
        for prim in mesh.get("primitives", [])
        if "POSITION" in prim.get("attributes", {})
    }
    doc = GltfDocument(data, buffers=buffers)  # one accessor table for every check
    for i in sorted(positions & readable):
        _check_bounds(data, doc, i, "POSITION", out)
    _check_animations(data, doc, readable, out)
    _check_nodes(data, out)
    _check_skins_meshes(data, out)
    return out
