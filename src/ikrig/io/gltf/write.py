"""Write a glTF 2.0 file back with one animation replaced by an ikrig motion.

:func:`write_gltf` takes a :class:`~ikrig.io.gltf.clip.GltfClip` (from
:func:`ikrig.io.gltf.read.read_gltf` or :func:`ikrig.io.gltf.build.motion_to_gltf`) and a
motion on its skeleton, and writes the clip's document with the clip's animation replaced
(or, for a rest-pose clip, a new animation appended). The motion is written as ``LINEAR``
keys at the given times (by default the clip's own sample times):

- one ``rotation`` channel per skin joint; one ``translation`` channel for every root joint,
  for every skin joint that had one, and for any other skin joint whose translation moves
  away from its node's rest translation. A non-joint node of the skeleton (one lying between
  two joints) keeps its channels while the motion leaves it as it was, and is written like a
  joint when the motion changed it;
- the motion is in the scene's world space (see :mod:`ikrig.io.gltf.clip`): the rotation of
  the nodes above the root (the product of their rotations, as the reader baked it in) is
  taken back out of the root joint's rotation, and every translation is solved from the
  motion's world positions through the full world matrix of the joint's parent node
  (scales included, non-uniform and animated ones too), so the scene graph gives back the
  motion's world positions exactly;
- a leaf joint the reader made of a tip that its joint's scales move (see
  :mod:`ikrig.io.gltf._sites`) is left as it was: the scene graph carries it;
- every other channel of the replaced animation is kept as it was (scale channels, their
  keys and accessors untouched, morph
  weights, channels of nodes outside the skeleton), as is everything else in the document:
  meshes, materials, textures, images, other animations, extras and extensions (as far as
  pygltflib keeps them: it fills in default values and drops properties the glTF schema does
  not define). A joint node given by a ``matrix`` gets the equal ``translation``/
  ``rotation``/``scale`` instead, because glTF forbids animating a node with a matrix.

Binary data: the new keys are appended; the accessors and bufferViews only the replaced
animation used are dropped and every index renumbered (kept when the document uses an
extension whose indices ikrig does not know, see :mod:`ikrig.io.gltf._wpack`). All buffers
become one, every bufferView 4-byte aligned. ``.glb`` writes one GLB file; ``.gltf`` writes
the JSON and a ``.bin`` beside it (the buffer as a data URI instead when the input's first
buffer was one); that ``.bin`` never replaces a buffer or image file of the input, except
when the input itself is rewritten. Relative image URIs are rewritten to point at the same
files from the output's folder. Files are written atomically.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np

from ..._files import write_bytes
from ...errors import InputError
from ...math.quat import quat_conj, quat_mul, quat_normalize, quat_to_matrix
from ...pose import Motion
from ._nodes import path_frames, rest_turn
from ._sample import sample
from ._spec import FLOAT
from ._wdata import (
    buffer_bytes,
    document_folder,
    document_json,
    glb_bytes,
    node_trs,
)
from ._wpack import pack
from .clip import GltfClip
from .document import GltfDocument

__all__ = ["animated_document", "write_gltf"]

_REPLACED = ("rotation", "translation")


def as_clip(motion: Any) -> Motion:
    """``motion`` as a clip ``(F >= 1,)``: a single pose becomes one frame.

    Raises:
        InputError: not an ikrig Motion, or neither a clip nor a pose.
    """
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected an ikrig Motion, got {type(motion).__name__}")
    if motion.batch_shape == ():
        motion = motion.replace(
            rotations_local=motion.rotations_local[None],
            positions_local=motion.positions_local[None],
        )
    if len(motion.batch_shape) != 1 or motion.num_frames < 1:
        raise InputError(f"motion: expected a clip (F,) or a pose, got {motion.batch_shape}")
    return motion


def _motion_and_times(clip: GltfClip, motion: Motion | None, times) -> tuple[Motion, np.ndarray]:
    motion = as_clip(clip.motion if motion is None else motion)
    if not np.array_equal(motion.skeleton.parents, clip.skeleton.parents):
        raise InputError("motion: its skeleton's hierarchy differs from the glTF clip's")
    F = motion.num_frames
    if times is None:
        if len(clip.times) == F:
            times = clip.times
        elif motion.frame_time is not None:
            start = float(clip.times[0]) if len(clip.times) else 0.0
            times = start + np.arange(F) * motion.frame_time
        else:
            raise InputError(
                f"times: the motion has {F} frames, the clip {len(clip.times)} times, and"
                " no frame_time; pass times"
            )
    times = np.asarray(times, dtype=np.float64)
    if times.shape != (F,) or not np.isfinite(times).all():
        raise InputError(f"times: expected {F} finite seconds, got shape {times.shape}")
    if np.any(np.diff(times.astype(np.float32)) <= 0) or times[0] < 0:
        raise InputError("times: must be >= 0 and increase strictly (as float32 seconds)")
    return motion, times


def _tracks(data: dict, buffers: list[bytes], anim: dict, nodes: set[int], times) -> dict:
    """``{(node, path): (F, D) values}`` of the animation's channels on ``nodes``, sampled
    at ``times``."""
    out = {}
    doc = GltfDocument(data, buffers=buffers)
    for ch in anim["channels"]:
        node, path = ch["target"].get("node"), ch["target"].get("path")
        if node not in nodes or path not in ("rotation", "translation", "scale"):
            continue
        sampler = anim["samplers"][ch["sampler"]]
        keys = doc.accessor(sampler["input"])[:, 0]
        values = doc.accessor(sampler["output"])
        interp = sampler.get("interpolation", "LINEAR")
        out[node, path] = sample(keys, values, interp, times, rotation=path == "rotation")
    return out


def _ancestors(data: dict, node: int) -> list[int]:
    """The nodes above ``node``, its parent first."""
    parent_of = {c: i for i, n in enumerate(data.get("nodes", [])) for c in n.get("children", [])}
    out: list[int] = []
    p = parent_of.get(node)
    while p is not None and len(out) <= len(parent_of):
        out.append(p)
        p = parent_of.get(p)
    return out


def _root_parent_world(clip: GltfClip, data: dict, node: int, tracks: dict, F: int):
    """``(world (F, 4, 4), rotation (F, 4))`` of a root joint's parent at each frame: its
    nodes' rest transforms, or, when the animation moves nodes above the skeleton (an
    armature carrying root motion), their sampled transforms. The reader baked that motion
    into joint 0; the writer keeps their channels and solves joint 0 against them, so the
    motion is applied once. ``rotation`` is the product of the nodes' rotations, as the
    reader takes it out of joint 0 (any non-uniform scale's shear left out)."""
    path = _ancestors(data, node)[::-1]
    rest = {k: node_trs(data["nodes"][k]) for k in path}
    if any((k, p) in tracks for k in path for p in ("translation", "rotation", "scale")):
        return path_frames(rest, path, tracks, F)
    turn = rest_turn([rest[k][1] for k in path])  # the world: the reader's, at rest
    return np.broadcast_to(clip.root_world, (F, 4, 4)), np.broadcast_to(turn, (F, 4))


def _matrices(t: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``(F, 4, 4)`` matrices ``T R S`` from ``t (F, 3)``, ``q (F, 4)``, ``s (F, 3)``."""
    m = np.zeros(t.shape[:-1] + (4, 4))
    m[..., :3, :3] = quat_to_matrix(q) * s[..., None, :]
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def _local_trs(clip: GltfClip, motion: Motion, data: dict, tracks: dict, skin_joints: set):
    """Node-local rotations ``(F, J, 4)``, translations ``(F, J, 3)`` of every skeleton node
    and the set of nodes whose transform is to be written.

    Rotations are the motion's local rotations (the root's with its parents' world rotation
    taken out). Translations are solved down the tree from the motion's world positions
    through the full world matrices of the parent nodes (scales included, animated ones
    too), so the scene graph gives back the motion's world positions. Skin joints are
    always written; a non-joint node keeps its own (rest or animated) transform unless the
    motion changed it."""
    parents = motion.skeleton.parents
    F = motion.num_frames
    _, world_pos = motion.fk()
    rot = quat_normalize(np.array(motion.rotations_local, dtype=np.float64))
    pos = np.zeros((F, len(clip.joint_nodes), 3))
    world = np.zeros((F, len(clip.joint_nodes), 4, 4))
    extent = max(float(np.linalg.norm(node_trs(data["nodes"][n])[0])) for n in clip.joint_nodes)
    written = set()
    for j, node in enumerate(clip.joint_nodes):
        p = int(parents[j])
        rest_t, rest_q, rest_s = node_trs(data["nodes"][node])
        if p >= 0:
            above = world[:, p]
        else:
            above, turn = _root_parent_world(clip, data, node, tracks, F)
            rot[:, j] = quat_mul(quat_conj(turn), rot[:, j])
        scale = tracks.get((node, "scale"), np.broadcast_to(rest_s, (F, 3)))
        lin_inv = np.linalg.inv(above[:, :3, :3])
        pos[:, j] = np.einsum("fij,fj->fi", lin_inv, world_pos[:, j] - above[:, :3, 3])
        if node in skin_joints:
            written.add(node)
        elif not (parents == j).any():  # a leaf read from a tip its joint's scales move: as it was
            pos[:, j], rot[:, j] = rest_t, rest_q
        else:
            t_own = tracks.get((node, "translation"), np.broadcast_to(rest_t, (F, 3)))
            q_own = tracks.get((node, "rotation"), np.broadcast_to(rest_q, (F, 4)))
            q_err = np.minimum(np.abs(q_own - rot[:, j]).max(), np.abs(q_own + rot[:, j]).max())
            if np.abs(t_own - pos[:, j]).max() <= 1e-6 * extent and q_err <= 1e-6:
                pos[:, j], rot[:, j] = t_own, q_own
            else:
                written.add(node)
        world[:, j] = above @ _matrices(pos[:, j], rot[:, j], scale)
    # one hemisphere along time, so that each key's shortest path is the motion's path
    flips = np.sum(rot[1:] * rot[:-1], axis=-1) < 0
    sign = np.concatenate([np.ones((1, rot.shape[1])), np.cumprod(np.where(flips, -1, 1), 0)])
    return rot * sign[..., None], pos, written


def _f32(name: str, values: np.ndarray, kind: str, bounds: bool = False):
    acc: dict[str, Any] = {"componentType": FLOAT, "type": kind, "name": name}
    v = np.asarray(values, dtype=np.float32).reshape(len(values), -1)
    if bounds:
        acc["min"] = [float(x) for x in v.min(axis=0)]
        acc["max"] = [float(x) for x in v.max(axis=0)]
    return (v, acc, None)


def _to_trs(node: dict) -> None:
    if "matrix" in node:
        t, q, s = node_trs(node)
        del node["matrix"]
        node.update(translation=t.tolist(), rotation=q.tolist(), scale=s.tolist())


def animated_document(
    clip: GltfClip,
    motion: Motion | None = None,
    times: np.ndarray | None = None,
    name: str = "ikrig",
) -> tuple[dict, bytes, list[str]]:
    """The JSON and binary data :func:`write_gltf` writes: ``(json dict, buffer bytes,
    notes)``; ``name`` names an appended animation (rest-pose clips)."""
    if not isinstance(clip, GltfClip):
        raise InputError(f"clip: expected a GltfClip, got {type(clip).__name__}")
    motion, times = _motion_and_times(clip, motion, times)
    data = document_json(clip.document)
    folder = document_folder(clip.document, clip.path)
    buffers = buffer_bytes(clip.document, data, folder, clip.allow_outside, clip.path)
    skins = data.get("skins", [])
    if not 0 <= clip.skin < len(skins):
        raise InputError(f"clip.skin {clip.skin}: the document has {len(skins)} skins")
    skin_joints = set(skins[clip.skin]["joints"])
    anims = data.setdefault("animations", [])
    if clip.animation is None:
        anims.append({"name": name, "channels": [], "samplers": []})
        old: dict = {"channels": [], "samplers": []}
        anim = anims[-1]
    else:
        anim = anims[clip.animation]
        old = json.loads(json.dumps(anim))
    above = set(_ancestors(data, clip.joint_nodes[0]))
    tracks = _tracks(data, buffers, old, set(clip.joint_nodes) | above, times)
    rot, pos, written = _local_trs(clip, motion, data, tracks, skin_joints)
    keep, had_translation = [], set()
    for ch in old["channels"]:
        node, path = ch["target"].get("node"), ch["target"].get("path")
        if node in written and path in _REPLACED:
            had_translation |= {node} if path == "translation" else set()
        else:
            keep.append(ch)
    kept_samplers = sorted({ch["sampler"] for ch in keep})
    sampler_map = {s: i for i, s in enumerate(kept_samplers)}
    anim["channels"] = [dict(ch, sampler=sampler_map[ch["sampler"]]) for ch in keep]
    anim["samplers"] = [old["samplers"][s] for s in kept_samplers]
    candidates = {
        old["samplers"][s][k]
        for s in range(len(old["samplers"]))
        if s not in sampler_map
        for k in ("input", "output")
    }
    base = len(data.get("accessors", []))
    arrays = [_f32("ikrig time", times, "SCALAR", bounds=True)]
    extent = max(float(np.linalg.norm(node_trs(data["nodes"][n])[0])) for n in clip.joint_nodes)
    parents = motion.skeleton.parents
    for j, node in enumerate(clip.joint_nodes):
        if node not in written:
            continue
        rest_t = node_trs(data["nodes"][node])[0]
        moved = np.abs(pos[:, j] - rest_t).max() > 1e-7 * max(extent, 1e-30)
        paths = [("rotation", rot[:, j], "VEC4")]
        if parents[j] < 0 or node in had_translation or moved:
            paths.append(("translation", pos[:, j], "VEC3"))
        _to_trs(data["nodes"][node])
        for path, values, kind in paths:
            anim["samplers"].append(
                {"input": base, "interpolation": "LINEAR", "output": base + len(arrays)}
            )
            anim["channels"].append(
                {"sampler": len(anim["samplers"]) - 1, "target": {"node": node, "path": path}}
            )
            arrays.append(_f32(f"ikrig {path} {node}", values, kind))
    data, blob, notes = pack(data, buffers, arrays, candidates)
    return data, blob, notes


def _uses_data_uri(document: Any) -> bool:
    buffers = getattr(document, "buffers", None) or []
    uri = getattr(buffers[0], "uri", None) if buffers else None
    return isinstance(uri, str) and uri.startswith("data:")


def save_document(
    path: str | os.PathLike,
    data: dict,
    blob: bytes,
    data_uri: bool,
    protect: Iterable[Path] = (),
) -> None:
    """Write JSON + binary data to ``path``: a GLB for ``.glb``; for ``.gltf`` the JSON and
    a ``.bin`` beside it (or the data inline as a data URI when ``data_uri``).

    Raises:
        InputError: the suffix is neither ``.glb`` nor ``.gltf``, or the ``.bin`` would
            replace one of the files in ``protect`` (the input's buffers and images).
    """
    out = Path(os.fspath(path))
    suffix = out.suffix.lower()
    if suffix == ".glb":
        write_bytes(out, glb_bytes(data, blob))
        return
    if suffix != ".gltf":
        raise InputError(f"{out}: unsupported glTF file type {out.suffix!r}; use .glb or .gltf")
    if blob:
        if data_uri:
            uri = "data:application/octet-stream;base64," + base64.b64encode(blob).decode()
        else:
            bin_path = out.with_suffix(".bin")
            if any(bin_path.resolve() == p.resolve() for p in protect):
                raise InputError(
                    f"{out}: its buffer {bin_path.name} would replace a file the input uses;"
                    " choose another name"
                )
            write_bytes(bin_path, blob)
            uri = quote(bin_path.name)
        data["buffers"][0]["uri"] = uri
    text = json.dumps(data, indent=2, allow_nan=False)
    write_bytes(out, text.encode("utf-8"))


def _file_uri(uri: Any) -> bool:
    return isinstance(uri, str) and not uri.startswith("data:") and "://" not in uri


def _input_files(clip: GltfClip, folder: Path) -> tuple[list[Path], list[Path]]:
    """The input's external ``(buffer files, image files)``."""
    found = []
    for key in ("buffers", "images"):
        items = getattr(clip.document, key, None) or []
        uris = [item.get("uri") if isinstance(item, dict) else item.uri for item in items]
        found.append([folder / unquote(u) for u in uris if isinstance(u, str) and _file_uri(u)])
    return found[0], found[1]


def _relocate_images(data: dict, src: Path, dst: Path) -> None:
    """Rewrite relative image URIs for a document moved from folder ``src`` to ``dst``."""
    if src.resolve() == dst.resolve():
        return
    for image in data.get("images", []):
        uri = image.get("uri")
        if _file_uri(uri) and not os.path.isabs(unquote(uri)):
            moved = os.path.relpath((src / unquote(uri)).resolve(), dst.resolve())
            image["uri"] = quote(Path(moved).as_posix())


def write_gltf(
    path: str | os.PathLike,
    clip: GltfClip,
    motion: Motion | None = None,
    times: np.ndarray | None = None,
) -> None:
    """Write ``clip``'s document with its animation replaced by ``motion``.

    Args:
        path: ``.glb`` (one binary file) or ``.gltf`` (JSON plus a ``.bin`` beside it).
        clip: the clip read (or built); its document is not modified.
        motion: a motion on the clip's skeleton (same joints and parents), batch ``(F,)``,
            in the clip's world space; default ``clip.motion``.
        times: ``(F,)`` strictly increasing seconds of each frame on the animation's clock;
            default ``clip.times`` when the frame counts agree, else frames ``frame_time``
            apart from the clip's first time.

    Raises:
        InputError: a motion on another skeleton, bad times, a document using a meshopt
            extension, an unknown suffix, a ``.bin`` that would replace one of the input's
            files.
        OSError: the file cannot be written.
    """
    data, blob, _ = animated_document(clip, motion, times)
    folder = document_folder(clip.document, clip.path)
    out = Path(os.fspath(path))
    _relocate_images(data, folder, out.parent)
    buffer_files, image_files = _input_files(clip, folder)
    same = clip.path is not None and out.resolve() == Path(clip.path).resolve()
    protect = image_files + ([] if same else buffer_files)
    save_document(out, data, blob, _uses_data_uri(clip.document), protect)
