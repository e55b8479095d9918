"""Packing a glTF document's binary data: new accessors in, unused ones out, one buffer.

:func:`pack` takes the document's JSON (already edited: the new animation references new
accessors that do not exist yet), the bytes of its buffers and the arrays of the new
accessors. It appends the new accessors (one bufferView each), drops the accessors that only
the replaced animation used (and the bufferViews only they used), renumbers every reference,
and lays all kept bufferViews out in one buffer, each at a 4-byte aligned offset.

Renumbering needs every place that holds an accessor or bufferView index. The core
specification's places are all known (:func:`accessor_slots`, :func:`view_slots`), and so are
those of the extensions in :data:`HANDLED_EXTENSIONS`. A document using any other extension
may hold indices where this module cannot see them: then nothing is dropped and every index
keeps its value (only appended to), which is always safe.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ...errors import InputError
from ._spec import COMPONENTS
from ._wdata import element_size

HANDLED_EXTENSIONS = frozenset(
    {
        "KHR_draco_mesh_compression",
        "EXT_mesh_gpu_instancing",
        "KHR_animation_pointer",
        "KHR_lights_punctual",
        "KHR_materials_emissive_strength",
        "KHR_materials_ior",
        "KHR_materials_iridescence",
        "KHR_materials_pbrSpecularGlossiness",
        "KHR_materials_sheen",
        "KHR_materials_specular",
        "KHR_materials_transmission",
        "KHR_materials_unlit",
        "KHR_materials_variants",
        "KHR_materials_volume",
        "KHR_materials_clearcoat",
        "KHR_materials_anisotropy",
        "KHR_materials_dispersion",
        "KHR_mesh_quantization",
        "KHR_texture_basisu",
        "KHR_texture_transform",
        "KHR_xmp_json_ld",
        "EXT_texture_webp",
        "EXT_texture_avif",
    }
)
"""Extensions whose accessor and bufferView indices (if any) this module knows."""

REFUSED_EXTENSIONS = frozenset({"EXT_meshopt_compression", "KHR_meshopt_compression"})
"""Extensions whose bufferViews point into other buffers by byte offset: not rewritten."""


def accessor_slots(data: dict) -> Iterator[tuple[dict, str]]:
    """Every ``(container, key)`` where ``container[key]`` is an accessor index."""
    for mesh in data.get("meshes", []):
        for prim in mesh.get("primitives", []):
            attrs = prim.get("attributes", {})
            yield from ((attrs, k) for k in attrs)
            if prim.get("indices") is not None:
                yield prim, "indices"
            for target in prim.get("targets", []) or []:
                yield from ((target, k) for k in target)
    for skin in data.get("skins", []):
        if skin.get("inverseBindMatrices") is not None:
            yield skin, "inverseBindMatrices"
    for anim in data.get("animations", []):
        for sampler in anim.get("samplers", []):
            yield sampler, "input"
            yield sampler, "output"
    for node in data.get("nodes", []):
        inst = (node.get("extensions") or {}).get("EXT_mesh_gpu_instancing") or {}
        attrs = inst.get("attributes") or {}
        yield from ((attrs, k) for k in attrs)


def view_slots(data: dict) -> Iterator[tuple[dict, str]]:
    """Every ``(container, key)`` where ``container[key]`` is a bufferView index."""
    for acc in data.get("accessors", []):
        if acc.get("bufferView") is not None:
            yield acc, "bufferView"
        sparse = acc.get("sparse")
        if sparse:
            yield sparse["indices"], "bufferView"
            yield sparse["values"], "bufferView"
    for image in data.get("images", []):
        if image.get("bufferView") is not None:
            yield image, "bufferView"
    for mesh in data.get("meshes", []):
        for prim in mesh.get("primitives", []):
            draco = (prim.get("extensions") or {}).get("KHR_draco_mesh_compression")
            if draco and draco.get("bufferView") is not None:
                yield draco, "bufferView"


def _views_of(acc: dict) -> set[int]:
    out = {acc["bufferView"]} if acc.get("bufferView") is not None else set()
    sparse = acc.get("sparse")
    if sparse:
        out |= {sparse["indices"]["bufferView"], sparse["values"]["bufferView"]}
    return out


def _trimmed_view(data: dict, view: dict, index: int, buffers: list[bytes]) -> bytes | None:
    """The bytes of a tightly packed bufferView cut down to the ranges its accessors use,
    their ``byteOffset`` updated; ``None`` (view left whole) when the view has a stride or
    is used by anything but plain accessor data (sparse parts, images, extensions)."""
    if view.get("byteStride"):
        return None
    users = []
    for container, key in view_slots(data):
        if container[key] == index:
            if key != "bufferView" or "type" not in container or "count" not in container:
                return None  # an image, a sparse part or an extension reads it
            users.append(container)
    if any(u.get("bufferView") != index for u in users):
        return None
    spans = sorted(
        (u.get("byteOffset", 0), u.get("byteOffset", 0) + element_size(u) * u["count"], id(u))
        for u in users
    )
    start0 = view.get("byteOffset", 0)
    source = buffers[view["buffer"]]
    out = bytearray()
    by_id = {id(u): u for u in users}
    i = 0
    while i < len(spans):
        lo, hi = spans[i][0] // 4 * 4, spans[i][1]
        group = [spans[i]]
        i += 1
        while i < len(spans) and spans[i][0] // 4 * 4 <= hi:
            hi = max(hi, spans[i][1])
            group.append(spans[i])
            i += 1
        out += bytes(-len(out) % 4)
        for off, _, uid in group:
            by_id[uid]["byteOffset"] = len(out) + off - lo
        out += source[start0 + lo : start0 + hi]
    return bytes(out)


def can_drop(data: dict) -> bool:
    """Whether unused accessors may be dropped (every extension used is known).

    Raises:
        InputError: the document uses a meshopt compression extension.
    """
    used = set(data.get("extensionsUsed", []) or [])
    refused = sorted(used & REFUSED_EXTENSIONS)
    if refused:
        raise InputError(f"writing glTF files that use {refused[0]} is not supported")
    return used <= HANDLED_EXTENSIONS


def _renumber(slots: Iterator[tuple[dict, str]], mapping: dict[int, int]) -> None:
    for container, key in list(slots):
        container[key] = mapping[container[key]]


def pack(
    data: dict,
    buffers: list[bytes],
    new_arrays: Sequence[tuple[np.ndarray, dict, int | None]],
    candidates: set[int],
) -> tuple[dict, bytes, list[str]]:
    """Append the new accessors, drop unused old ones, lay out one buffer.

    Args:
        data: the document's JSON, edited in place: references to the new accessors are
            ``len(data["accessors"]) + k`` for the ``k``-th new array.
        buffers: the bytes of each of ``data["buffers"]``.
        new_arrays: per new accessor, its values ``(count, components)`` (converted to the
            accessor's component type), its accessor JSON without ``bufferView``,
            ``byteOffset`` and ``count``, and its bufferView's ``target`` (or ``None``).
        candidates: old accessors that the edit stopped using (the replaced animation's).

    Returns:
        ``(data, blob, notes)``: the JSON with one buffer (``byteLength`` set, no ``uri``),
        its bytes, and one sentence per thing worth telling (what was dropped or kept).
    """
    n_old_acc, n_old_views = len(data.get("accessors", [])), len(data.get("bufferViews", []))
    accessors, views = data.setdefault("accessors", []), data.setdefault("bufferViews", [])
    payload: dict[int, bytes] = {}
    for values, template, target in new_arrays:
        dtype = np.dtype(COMPONENTS[template["componentType"]]).newbyteorder("<")
        raw = np.ascontiguousarray(values, dtype=dtype)
        acc = dict(template, bufferView=len(views), byteOffset=0, count=int(raw.shape[0]))
        view = {"buffer": 0, "byteOffset": 0, "byteLength": raw.nbytes}
        if target is not None:
            view["target"] = target
        payload[len(views)] = raw.tobytes()
        accessors.append(acc)
        views.append(view)
    notes = []
    droppable = can_drop(data)
    used = {c[k] for c, k in accessor_slots(data)}
    drop_acc = {a for a in candidates if a < n_old_acc and a not in used} if droppable else set()
    if candidates and not droppable:
        notes.append(
            "an extension outside those ikrig rewrites is used: the replaced animation's"
            " accessors are kept (unused)"
        )
    acc_map: dict[int, int] = {}
    for i in range(len(accessors)):
        if i not in drop_acc:
            acc_map[i] = len(acc_map)
    freed = set().union(*(_views_of(accessors[a]) for a in drop_acc)) if drop_acc else set()
    data["accessors"] = [a for i, a in enumerate(accessors) if i in acc_map]
    _renumber(accessor_slots(data), acc_map)
    used_views = {c[k] for c, k in view_slots(data)}
    drop_views = {v for v in freed if v not in used_views and v < n_old_views}
    trimmed = 0
    for v in sorted(freed - drop_views):
        chunk = _trimmed_view(data, views[v], v, buffers)
        if chunk is not None:
            trimmed += views[v]["byteLength"] - len(chunk)
            payload[v] = chunk
            views[v]["byteLength"] = len(chunk)
    view_map: dict[int, int] = {}
    for i in range(len(views)):
        if i not in drop_views:
            view_map[i] = len(view_map)
    _renumber(view_slots(data), view_map)
    blob = bytearray()
    kept = []
    for i, view in enumerate(views):
        if i not in view_map:
            continue
        if i in payload:
            chunk = payload[i]
        else:
            start = view.get("byteOffset", 0)
            chunk = buffers[view["buffer"]][start : start + view["byteLength"]]
        blob += bytes(-len(blob) % 4)
        view["buffer"], view["byteOffset"] = 0, len(blob)
        blob += chunk
        kept.append(view)
    blob += bytes(-len(blob) % 4)
    data["bufferViews"] = kept
    first = dict(data["buffers"][0]) if data.get("buffers") else {}
    first.pop("uri", None)
    first["byteLength"] = len(blob)
    data["buffers"] = [first] if blob else []
    if drop_acc:
        notes.append(
            f"dropped {len(drop_acc)} accessors and {len(drop_views)} bufferViews only the"
            f" replaced animation used, and {trimmed} bytes of bufferViews it shared"
        )
    if len(buffers) > 1:
        notes.append(f"{len(buffers)} buffers merged into one")
    return data, bytes(blob), notes
