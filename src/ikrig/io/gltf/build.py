"""A glTF document from a motion alone: the skeleton, its animation, a capsule per bone.

:func:`motion_to_gltf` turns any :class:`~ikrig.pose.Motion` (a BVH clip, say) into a
:class:`~ikrig.io.gltf.clip.GltfClip` that :func:`ikrig.io.gltf.write.write_gltf` writes as
``.glb`` or ``.gltf``, so the motion can be looked at in any glTF viewer:

- one node per joint, named as the joint, in skeleton order (node ``j`` is joint ``j``), at
  rest: ``translation`` = the joint's offset, no rotation; the skeleton's roots and the mesh
  node are the scene's nodes;
- one leaf node per end site (BVH ``End Site``), a child of its joint at the end site's
  offset, named after the joint (``Head_end``), after the joints' nodes: not a joint, so
  viewers ignore it, and :func:`~ikrig.io.gltf.read.read_gltf` reads it back as an end
  site;
- one skin over all joints, inverse bind matrices from the rest pose;
- one animation: a ``rotation`` channel per joint and a ``translation`` channel for each
  root and for every joint whose translation moves (BVH position channels), ``LINEAR`` keys
  at ``frame_time`` spacing from 0 s (30 fps when the motion has no frame time);
- one mesh: a capsule along every bone (parent to child, and joint to end site) of radius
  a tenth of the bone's length (at most 2 % of the skeleton's size), each skinned rigidly to
  the bone's parent joint, with one grey material.

Units stay the motion's own: a BVH in centimetres gives a glTF in centimetres (glTF viewers
assume metres; scale the motion first if that matters). This is noted in ``quirks`` and in
the asset's ``extras``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...math.quat import quat_between, quat_rotate
from ...pose import Motion
from ..bvh import BvhClip, read_bvh, to_bvh_clip, write_bvh
from ._spec import ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, FLOAT
from ._wdata import document_from_json
from ._wpack import pack
from .clip import GltfClip
from .read import read_gltf
from .write import animated_document, as_clip, write_gltf

__all__ = ["bvh_to_gltf", "gltf_to_bvh", "motion_to_gltf"]

_SEGMENTS = 8  # vertices around a capsule
_CAP_RINGS = 3  # rings per half sphere, the equator included


def _unit_capsule() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A capsule of radius 1 around the z axis from z=0 to z=1: ``(spheres (V, 3), ends
    (V,) 0 or 1, triangles (T, 3))``; a vertex is ``end * length * z + radius * sphere``."""
    phis = np.concatenate(
        [
            np.linspace(-np.pi / 2, 0, _CAP_RINGS + 1)[1:],
            np.linspace(0, np.pi / 2, _CAP_RINGS + 1)[:-1],
        ]
    )
    ends = np.repeat([0.0, 1.0], _CAP_RINGS)
    theta = np.linspace(0, 2 * np.pi, _SEGMENTS, endpoint=False)
    ring = np.stack(
        [
            np.cos(phis)[:, None] * np.cos(theta),
            np.cos(phis)[:, None] * np.sin(theta),
            np.broadcast_to(np.sin(phis)[:, None], (len(phis), _SEGMENTS)),
        ],
        axis=-1,
    ).reshape(-1, 3)
    spheres = np.concatenate([[[0, 0, -1.0]], ring, [[0, 0, 1.0]]])
    vert_ends = np.concatenate([[0.0], np.repeat(ends, _SEGMENTS), [1.0]])
    tris = []
    n_rings, top = len(phis), 1 + len(phis) * _SEGMENTS
    for k in range(_SEGMENTS):
        k1 = (k + 1) % _SEGMENTS
        tris.append((0, 1 + k1, 1 + k))
        last = 1 + (n_rings - 1) * _SEGMENTS
        tris.append((top, last + k, last + k1))
        for r in range(n_rings - 1):
            a, b = 1 + r * _SEGMENTS, 1 + (r + 1) * _SEGMENTS
            tris.append((a + k, a + k1, b + k1))
            tris.append((a + k, b + k1, b + k))
    return spheres, vert_ends, np.array(tris, dtype=np.uint32)


def _bones(motion: Motion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(starts (B, 3), ends (B, 3), joint (B,))``: the rest-pose bones worth a capsule and
    the joint each one follows."""
    sk = motion.skeleton
    rest = np.zeros((sk.num_joints, 3))
    for j in range(sk.num_joints):
        p = int(sk.parents[j])
        rest[j] = sk.offsets[j] + (rest[p] if p >= 0 else 0.0)
    child = np.flatnonzero(sk.parents >= 0)
    starts = np.concatenate([rest[sk.parents[child]], rest[sk.end_site_parents]])
    ends = np.concatenate([rest[child], rest[sk.end_site_parents] + sk.end_site_offsets])
    joint = np.concatenate([sk.parents[child], sk.end_site_parents]).astype(np.int64)
    keep = np.linalg.norm(ends - starts, axis=-1) > 0
    return starts[keep], ends[keep], joint[keep]


def _capsules(motion: Motion):
    """The bone mesh: ``(positions, normals, joints, triangles)``, rest pose."""
    starts, ends, joint = _bones(motion)
    spheres, vert_ends, tris = _unit_capsule()
    if not len(starts):
        return None
    rest = np.concatenate([starts, ends])
    size = float(np.ptp(rest, axis=0).max()) or float(np.linalg.norm(ends - starts, axis=-1).max())
    length = np.linalg.norm(ends - starts, axis=-1)
    radius = np.minimum(0.1 * length, 0.02 * size)
    q = quat_between(np.broadcast_to([0.0, 0.0, 1.0], starts.shape), ends - starts)
    local = spheres[None] * radius[:, None, None]
    local = local + (vert_ends[None, :, None] * length[:, None, None]) * np.array([0, 0, 1.0])
    positions = quat_rotate(q[:, None], local) + starts[:, None]
    normals = quat_rotate(q[:, None], np.broadcast_to(spheres, local.shape))
    V = len(spheres)
    triangles = tris[None] + (np.arange(len(starts)) * V)[:, None, None]
    joints = np.repeat(joint, V)
    return positions.reshape(-1, 3), normals.reshape(-1, 3), joints, triangles.reshape(-1)


def _base_document(motion: Motion, name: str):
    """The JSON and bytes of the document without animation, and the rest world positions."""
    sk = motion.skeleton
    J = sk.num_joints
    nodes: list[dict] = [
        {"name": sk.names[j], "translation": sk.offsets[j].tolist()} for j in range(J)
    ]
    nodes += _end_site_nodes(sk)
    for j in range(J):
        kids = [int(c) for c in np.flatnonzero(sk.parents == j)]
        kids += [J + int(e) for e in np.flatnonzero(sk.end_site_parents == j)]
        if kids:
            nodes[j]["children"] = kids
    roots = [int(j) for j in np.flatnonzero(sk.parents < 0)]
    rest = np.zeros((J, 3))
    for j in range(J):
        p = int(sk.parents[j])
        rest[j] = sk.offsets[j] + (rest[p] if p >= 0 else 0.0)
    ibm = np.tile(np.eye(4), (J, 1, 1))
    ibm[:, :3, 3] = -rest
    arrays: list[tuple[np.ndarray, dict, int | None]] = [
        (ibm.transpose(0, 2, 1).reshape(J, 16), {"componentType": FLOAT, "type": "MAT4"}, None)
    ]
    skin = {"name": name, "joints": list(range(J)), "inverseBindMatrices": 0}
    if len(roots) == 1:
        skin["skeleton"] = roots[0]
    data: dict = {
        "asset": {
            "version": "2.0",
            "generator": "ikrig",
            "extras": {"units": "the motion's own (no conversion to metres)"},
        },
        "scene": 0,
        "scenes": [{"name": name, "nodes": roots}],
        "nodes": nodes,
        "skins": [skin],
        "accessors": [],
        "bufferViews": [],
        "buffers": [],
    }
    mesh = _capsules(motion)
    if mesh is not None:
        positions, normals, joints, triangles = mesh
        positions = positions.astype(np.float32)
        vec = {"componentType": FLOAT, "type": "VEC3"}
        pos_acc = dict(vec, min=positions.min(0).tolist(), max=positions.max(0).tolist())
        joints4 = np.zeros((len(joints), 4), dtype=np.uint16)
        joints4[:, 0] = joints
        weights = np.zeros((len(joints), 4), dtype=np.float32)
        weights[:, 0] = 1.0
        arrays += [
            (positions, pos_acc, ARRAY_BUFFER),
            (normals.astype(np.float32), vec, ARRAY_BUFFER),
            (joints4, {"componentType": 5123, "type": "VEC4"}, ARRAY_BUFFER),
            (weights, {"componentType": FLOAT, "type": "VEC4"}, ARRAY_BUFFER),
            (triangles[:, None], {"componentType": 5125, "type": "SCALAR"}, ELEMENT_ARRAY_BUFFER),
        ]
        attributes = {"POSITION": 1, "NORMAL": 2, "JOINTS_0": 3, "WEIGHTS_0": 4}
        data["meshes"] = [
            {
                "name": f"{name} bones",
                "primitives": [{"attributes": attributes, "indices": 5, "material": 0}],
            }
        ]
        data["materials"] = [
            {
                "name": "ikrig bone",
                "pbrMetallicRoughness": {
                    "baseColorFactor": [0.75, 0.75, 0.78, 1.0],
                    "metallicFactor": 0.0,
                    "roughnessFactor": 0.7,
                },
            }
        ]
        nodes.append({"name": f"{name} bones", "mesh": 0, "skin": 0})
        data["scenes"][0]["nodes"].append(len(nodes) - 1)
    data, blob, _ = pack(data, [], arrays, set())
    return data, blob


def _end_site_nodes(sk) -> list[dict]:
    """One leaf node per end site of ``sk``, at its offset from its joint, named after the
    joint (``LeftHand_end``; made unique against every other name): what
    :func:`~ikrig.io.gltf.read.read_gltf` reads back as end sites."""
    taken = set(sk.names)
    nodes = []
    for parent, offset in zip(sk.end_site_parents, sk.end_site_offsets):
        base = name = f"{sk.names[int(parent)]}_end"
        k = 1
        while name in taken:
            name, k = f"{base}.{k}", k + 1
        taken.add(name)
        nodes.append({"name": name, "translation": [float(x) for x in offset]})
    return nodes


def motion_to_gltf(motion: Motion, name: str = "ikrig") -> GltfClip:
    """A glTF document holding ``motion`` (see the module docstring), as a clip to write.

    Args:
        motion: a clip ``(F,)`` or a single pose ``()``.
        name: the name of the scene, skin, mesh and animation.

    Returns:
        A :class:`GltfClip` with ``joint_nodes == range(J)``, ``skin=0``, ``animation=0``,
        ``times`` = ``frame_time`` apart from 0, ``root_world`` the identity.

    Raises:
        InputError: pygltflib is missing, or ``motion`` is not a clip or a pose.
    """
    motion = as_clip(motion)
    step = motion.frame_time if motion.frame_time is not None else 1.0 / 30.0
    times = np.arange(motion.num_frames) * step
    data, blob = _base_document(motion, name)
    J = motion.num_joints
    quirks = ("units are the motion's own; glTF viewers assume metres",)
    rest_clip = GltfClip(
        document_from_json(data, blob), 0, None, tuple(range(J)), motion, times, np.eye(4), quirks
    )
    data, blob, _ = animated_document(rest_clip, motion, times, name)
    return GltfClip(
        document_from_json(data, blob), 0, 0, tuple(range(J)), motion, times, np.eye(4), quirks
    )


def bvh_to_gltf(
    src: str | os.PathLike, dst: str | os.PathLike, name: str | None = None
) -> GltfClip:
    """``ikrig convert in.bvh out.glb``: a BVH clip as a skeleton-only glTF (``.glb`` or
    ``.gltf`` by ``dst``'s suffix, see :func:`motion_to_gltf`); returns the clip written.
    ``name`` defaults to the BVH file's stem."""
    clip = motion_to_gltf(read_bvh(src).motion, name or Path(os.fspath(src)).stem)
    write_gltf(dst, clip)
    return clip


def gltf_to_bvh(
    src: str | os.PathLike,
    dst: str | os.PathLike,
    animation: str | int | None = None,
    fps: float | None = None,
) -> BvhClip:
    """``ikrig convert in.glb out.bvh``: one animation of a glTF character (read by
    :func:`ikrig.io.gltf.read.read_gltf`, in the scene's world space) as a BVH clip with
    the CMU channel layout (:func:`ikrig.io.bvh.to_bvh_clip`); returns the clip written."""
    clip = to_bvh_clip(read_gltf(src, animation=animation, fps=fps).motion)
    write_bvh(dst, clip)
    return clip
