"""Read a skinned glTF 2.0 character and one of its animations as a :class:`GltfClip`.

``.glb`` and ``.gltf`` (with its ``.bin`` beside it, or data URIs) are parsed by pygltflib
(the ``[gltf]`` extra); the data is decoded with NumPy.

What becomes what:

- **Skeleton.** The chosen skin's joints, plus every node on the node-tree paths between
  them (from their lowest common ancestor), depth first. Names are the node names made
  unique (``name``, ``name.1``, ...; unnamed nodes ``node<k>``). Control bones that are skin
  joints are joints like any other. ``Skeleton.offsets`` are the rest local translations.
- **End sites.** A child of a joint that only marks a point (outside the skeleton, a joint
  of no skin, without mesh, camera, children or extensions, moved by no animation) is an
  end site of that joint: a BVH ``End Site`` as :func:`~ikrig.io.gltf.build.motion_to_gltf`
  writes it, or a leaf-bone tip of another exporter. So a BVH converted to glTF and back
  keeps its end sites. One that a non-uniform or animated scale above it moves in its
  joint's frame becomes a leaf joint instead, exact in every frame (see
  :mod:`ikrig.io.gltf._sites`).
- **World space.** The nodes above the skeleton's root (armature nodes, often a 90° X
  rotation and a 0.01 scale from FBX conversions) are baked into joint 0, which holds the
  root's world rotation and position; scales are folded into the local translations of
  the joints below them, so ``motion.positions_world()`` are the scene's world joint
  positions exactly (computed from the full node matrices). ``GltfClip.root_world`` keeps
  the rest world matrix of the root's parent. A node's ``matrix`` is decomposed into TRS.
- **Scale.** Every scale, uniform or not, still or animated, is folded into the local
  translations of the joints below it, frame by frame: positions are the scene graph's.
  Rotations are the node rotations as authored (a non-uniform scale's shear of the frames
  below it is left out of them, never out of the positions). Each is noted in ``quirks``
  (see :mod:`ikrig.io.gltf._scale`). Zero, negative (mirrored) and absurd scales raise
  :class:`~ikrig.errors.InputError`.
- **Motion.** The chosen animation (name or index; default the first) sampled at ``fps``
  from its first key (on its own clock: ``times`` need not start at 0) up to its last. By
  default the keys' own times when every channel shares the same uniformly spaced keys,
  else about 30 fps, adjusted so that the last key falls on a frame too. ``LINEAR`` (slerp
  along the shortest path for rotations), ``STEP`` and ``CUBICSPLINE`` are evaluated as the
  glTF specification says. Joints without channels keep their rest transform. Quaternion
  signs are made continuous over frames. A file without animations gives a one-frame rest
  pose (``animation=None``, ``frame_time=None``).

Everything found and handled is listed, one sentence each, in ``GltfClip.quirks``.

For viewers, :func:`skinned_meshes`, :func:`skin_matrices` and :func:`skin_vertices` pose
the clip's skinned meshes with any motion on its skeleton (see :mod:`ikrig.io.gltf.skin`).
"""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np

from ...errors import InputError
from ...math.quat import quat_conj, quat_from_matrix, quat_mul, quat_rotate
from ...pose import Motion, fk
from ...skeleton import Skeleton
from ._anim import animation_ranges, channels, list_skins, pick_animation, pick_skin
from ._ext import unknown_required
from ._nodes import (
    node_tree,
    rest_trs,
    skeleton_nodes,
    trs_matrix,
    unique_names,
)
from ._sample import grid_problem, sample, time_grid
from ._scale import check_scales, scale_quirks
from ._sites import end_sites
from .check import check_document, is_index
from .clip import GltfClip
from .document import GltfDocument, load_document
from .skin import SkinnedMesh, skin_matrices, skin_vertices, skinned_meshes
from .uri import outside_allowed, short_text

__all__ = [
    "SkinnedMesh",
    "clip_from_document",
    "list_animations",
    "list_skins",
    "read_gltf",
    "skin_matrices",
    "skin_vertices",
    "skinned_meshes",
]


def list_animations(
    source: str | os.PathLike | GltfClip, allow_outside: bool | None = None
) -> list[tuple[int, str, float, float]]:
    """The animations of a glTF file (a path, or a :class:`GltfClip` already read, whose
    document is not parsed again): ``(index, name, first key s, last key s)`` each.

    Unnamed animations are listed as ``animation<index>`` (a name :func:`read_gltf` accepts).
    ``allow_outside`` as for :func:`read_gltf`.

    Raises:
        FileFormatError: missing or unreadable file, broken accessors.
        InputError: pygltflib is not installed.
    """
    if isinstance(source, GltfClip):
        return animation_ranges(GltfDocument(source.document, source.path, source.allow_outside))
    doc = GltfDocument.load(source, outside_allowed(allow_outside))
    check_document(doc.raw, doc.path, doc.base, doc.allow_outside)
    return animation_ranges(doc)


def read_gltf(
    path: str | os.PathLike,
    animation: str | int | None = None,
    fps: float | None = None,
    skin: str | int | None = None,
    allow_outside: bool | None = None,
) -> GltfClip:
    """Read one skin and one animation of a ``.glb``/``.gltf`` file.

    Args:
        path: the file.
        animation: name or index (see :func:`list_animations`); ``None``: the first, or the
            rest pose when the file has no animations.
        fps: frames per second to sample at (the last frame at or before the last key);
            ``None``: the keys' own times when all channels share uniformly spaced keys,
            else about 30 fps, adjusted so that the last key falls on a frame.
        skin: index or name; ``None``: the skin with the most joints (noted in ``quirks``
            when there are several).
        allow_outside: read buffer files a ``.gltf`` names outside its own folder tree
            (``..``, absolute paths, symbolic links leading out). Off by default, so that a
            downloaded file cannot read (and a writer copy) the user's other files; ``None``:
            the default, which ``ikrig --allow-outside`` (or
            :func:`ikrig.io.files_outside_allowed`) turns on.

    Returns:
        A :class:`GltfClip` whose ``motion`` has batch ``(F,)``, ``times (F,)`` seconds.

    Raises:
        FileFormatError: missing or malformed file (the message names it).
        InputError: no skins, no such animation or skin (the message lists them), an
            unsupported accessor (named by index), a zero, negative or absurd scale, a
            sheared or mirrored node matrix, a bad ``fps``, pygltflib not installed.
    """
    doc = load_document(path)
    return clip_from_document(
        doc, animation=animation, fps=fps, skin=skin, path=path, allow_outside=allow_outside
    )


def clip_from_document(
    doc: Any,
    animation: str | int | None = None,
    fps: float | None = None,
    skin: str | int | None = None,
    path: str | os.PathLike | None = None,
    allow_outside: bool | None = None,
) -> GltfClip:
    """:func:`read_gltf` on a ``pygltflib.GLTF2`` already in memory (``path`` locates
    external buffers and names the file in messages)."""
    where = "<document>" if path is None else os.fspath(path)
    with np.errstate(all="ignore"):  # overflows in hostile files end in a checked error
        try:
            return _clip_from_document(doc, animation, fps, skin, path, allow_outside)
        except InputError as exc:
            if str(exc).startswith(f"{where}: "):
                raise
            raise InputError(f"{where}: {_cut(str(exc))}") from None


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clip_from_document(
    doc: Any,
    animation: str | int | None = None,
    fps: float | None = None,
    skin: str | int | None = None,
    path: str | os.PathLike | None = None,
    allow_outside: bool | None = None,
) -> GltfClip:
    where = "<document>" if path is None else os.fspath(path)
    if fps is not None and (
        isinstance(fps, bool) or not isinstance(fps, numbers.Real) or not 0 < fps < np.inf
    ):
        raise InputError(f"fps: expected a finite number > 0, got {short_text(fps)}")
    fps = None if fps is None else float(fps)
    allow_outside = outside_allowed(allow_outside)
    raw, doc = doc, GltfDocument(doc, path, allow_outside)
    check_document(raw, doc.path, doc.base if path is not None else None, allow_outside)
    quirks: list[str] = unknown_required(doc)
    parents, children = node_tree(doc)
    skin_index, note = pick_skin(doc, skin, where)
    quirks += [note] if note else []
    joints = _skin_joints(doc, skin_index)
    nodes, root = skeleton_nodes(parents, children, joints)
    if root is None:
        raise InputError(f"{where}: skin {skin_index}'s joints lie in separate node trees")
    joint_set = set(joints)
    extra = [k for k in nodes if k not in joint_set]
    if extra:
        quirks.append(
            f"{len(extra)} non-joint node(s) between skin joints added to the skeleton:"
            f" {_labels(doc, extra)}"
        )
    above: list[int] = []
    while parents[above[-1] if above else root] != -1:
        above.append(int(parents[above[-1] if above else root]))
    chain = above[::-1] + nodes  # top node first, then the skeleton
    anim_index = pick_animation(doc, animation, where)
    rest = [rest_trs(doc, k) for k in chain]
    matrices = [k for k, r in zip(chain, rest) if r[3]]
    if matrices:
        quirks.append(f"node matrices instead of TRS on {_labels(doc, matrices)}; decomposed")
    t_rest = np.array([r[0] for r in rest])[None]
    q_rest = np.array([r[1] for r in rest])[None]
    s_rest = np.array([r[2] for r in rest])[None]
    if anim_index is None:
        times = np.zeros(1)
        frame_time = None
        t, q, s = t_rest, q_rest, s_rest
    else:
        times, frame_time, t, q, s = _animate(doc, anim_index, fps, (chain, len(above)), quirks)
        t = np.where(np.isnan(t), t_rest, t)
        q = np.where(np.isnan(q), q_rest, q)
        s = np.where(np.isnan(s), s_rest, s)
    s_all = np.concatenate([s_rest, s])
    check_scales(doc, (chain, len(above)), s_all, where)
    quirks += scale_quirks((chain, len(above)), s_all, lambda ks: _labels(doc, ks))
    index = {k: i for i, k in enumerate(chain)}
    chain_parents = np.array([index.get(int(parents[k]), -1) for k in chain])
    sk_parents = chain_parents[len(above) :] - len(above)
    sk_parents[0] = -1
    rl, pl, world = _local_pose(t, q, s, chain_parents, len(above), sk_parents)
    rl_rest, pl_rest, world_rest = _local_pose(
        t_rest, q_rest, s_rest, chain_parents, len(above), sk_parents
    )
    root_world = world_rest[0, len(above) - 1] if above else np.eye(4)
    note = _describe_above(doc, above, root_world)
    quirks += [note] if note else []
    sites = end_sites(
        doc,
        (nodes, children),
        (world_rest[0, len(above) :], fk(sk_parents, rl_rest[0], pl_rest[0])[0]),
        (world[:, len(above) :], fk(sk_parents, rl, pl)[0]),
    )
    if len(sites.parents):
        quirks.append(f"{len(sites.parents)} leaf node(s) under joints read as end sites")
    if sites.moving:
        quirks.append(
            f"{len(sites.moving)} leaf node(s) under joints moved by scales ("
            f"{_labels(doc, sites.moving)}) read as leaf joints, exact in every frame"
        )
        nodes = nodes + sites.moving
        sk_parents = np.concatenate([sk_parents, sites.moving_parents])
        moving_q = np.broadcast_to(sites.moving_rotations, (len(rl), len(sites.moving), 4))
        rl = np.concatenate([rl, moving_q], axis=1)
        pl = np.concatenate([pl, sites.moving_offsets], axis=1)
        pl_rest = np.concatenate([pl_rest, sites.moving_rest[None]], axis=1)
    names, renamed = unique_names(doc, nodes)
    if renamed:
        quirks.append("node names made unique for the skeleton (empty or repeated names)")
    skeleton = Skeleton(tuple(names), sk_parents, pl_rest[0], sites.parents, sites.offsets)
    motion = Motion(skeleton, _continuous(rl), pl, frame_time)
    return GltfClip(
        document=raw,
        skin=skin_index,
        animation=anim_index,
        joint_nodes=tuple(int(k) for k in nodes),
        motion=motion,
        times=times,
        root_world=root_world,
        quirks=tuple(quirks),
        path=None if path is None else os.fspath(path),
        allow_outside=allow_outside,
    )


def _skin_joints(doc: GltfDocument, skin_index: int) -> list[int]:
    joints, fail = list(doc.skins[skin_index].joints), doc.fail
    n = len(doc.nodes)
    if not joints:
        raise fail(f"skin {skin_index} has no joints")
    for j in joints:
        if not is_index(j, n):
            raise fail(f"skin {skin_index} has joint {short_text(j)}, not a node index")
    if len(set(joints)) != len(joints):
        raise fail(f"skin {skin_index} lists a joint twice")
    return joints


def _labels(doc: GltfDocument, nodes: list[int], limit: int = 6) -> str:
    shown = ", ".join(doc.nodes[k].label for k in nodes[:limit])
    return shown + (f" and {len(nodes) - limit} more" if len(nodes) > limit else "")


def _animate(doc: GltfDocument, anim_index, fps, chain_above, quirks):
    """Sample the animation's channels on the chain nodes (``chain_above``: the chain and
    how many of its nodes lie above the skeleton): ``(times, frame_time, t, q, s)`` with
    NaN where a node has no channel for that path."""
    chain, n_above = chain_above
    found, key_sets = channels(doc, anim_index)
    problem = grid_problem(key_sets, fps, len(chain))
    if problem:
        raise doc.fail(problem)
    times, frame_time, own = time_grid(key_sets, fps)
    if len(times) > 1 and not (np.diff(times.astype(np.float32)) > 0).all():
        raise doc.fail(
            f"key times up to {times[-1]:.6g} s cannot hold frames {frame_time:.3g} s apart"
            " in float32"
        )
    name = doc.animations[anim_index].name or f"animation{anim_index}"
    if times[0] != 0:
        quirks.append(
            f"animation {short_text(name)} starts at {times[0]:.6g} s; times kept on its clock"
        )
    if fps is None:
        rate = "the keys' own rate" if own else "about 30 fps (keys not uniformly spaced)"
        quirks.append(f"sampled at {rate}: {len(times)} frames of {frame_time:.6g} s")
    index = {k: i for i, k in enumerate(chain)}
    F, K = len(times), len(chain)
    arrays = {p: np.full((F, K, 4 if p == "rotation" else 3), np.nan) for p in _PATHS}
    outside, kinds, moved = set(), set(), set()
    for ch in found:
        if ch.node not in index:
            outside.add(ch.node)
            continue
        kinds.add(ch.interpolation)
        moved.add(index[ch.node])
        value = sample(ch.keys, ch.values, ch.interpolation, times, ch.path == "rotation")
        arrays[ch.path][:, index[ch.node]] = value
    on_skeleton = [i for i in moved if i >= n_above]
    if len(on_skeleton) < K - n_above:
        quirks.append(
            f"channels on {len(on_skeleton)} of {K - n_above} skeleton joints; the others"
            " keep their rest pose"
        )
    if any(i < n_above for i in moved):
        labels = _labels(doc, [chain[i] for i in sorted(moved) if i < n_above])
        quirks.append(f"animation moves nodes above the skeleton ({labels}); baked into joint 0")
    if outside:
        quirks.append(f"channels on {len(outside)} node(s) outside the skeleton ignored")
    if kinds - {"LINEAR"}:
        quirks.append(f"interpolation {', '.join(sorted(kinds))} evaluated")
    return times, frame_time, arrays["translation"], arrays["rotation"], arrays["scale"]


_PATHS = ("translation", "rotation", "scale")


def _local_pose(t, q, s, chain_parents, n_above, sk_parents):
    """Skeleton-local rotations and positions from the chain's TRS ``(F, K, ...)``.

    Joint 0 gets the root's world transform; every other joint keeps its node rotation,
    and its translation is recomputed from the exact world positions (full node matrices,
    scales included), so forward kinematics gives back the scene's world positions.
    Returns ``(rotations_local (F, J, 4), positions_local (F, J, 3), world (F, K, 4, 4))``.
    """
    m = trs_matrix(t, q, s)
    world = np.empty_like(m)
    for i, p in enumerate(chain_parents):
        world[:, i] = m[:, i] if p < 0 else world[:, p] @ m[:, i]
    q_root = q[:, 0]
    for i in range(1, n_above + 1):
        q_root = quat_mul(q_root, q[:, i])
    rl = np.array(q[:, n_above:], order="C")  # a copy: q stays as given
    rl[:, 0] = q_root
    rot_w, _ = fk(sk_parents, rl, np.zeros(rl.shape[:-1] + (3,)))
    pw = world[:, n_above:, :3, 3]
    pl = np.array(pw, order="C")
    child = np.flatnonzero(sk_parents >= 0)
    par = sk_parents[child]
    pl[:, child] = quat_rotate(quat_conj(rot_w[:, par]), pw[:, child] - pw[:, par])
    return rl, pl, world


def _describe_above(doc: GltfDocument, above: list[int], root_world: np.ndarray) -> str | None:
    """One sentence on what the nodes above the skeleton do, or ``None`` for the identity."""
    if not above:
        return None
    lin = root_world[:3, :3]
    scale = float(np.cbrt(np.linalg.det(lin)))
    q = quat_from_matrix(lin / scale)
    angle = float(np.degrees(2 * np.arctan2(np.linalg.norm(q[:3]), abs(q[3]))))
    parts = []
    if angle > 1e-6:
        parts.append(f"rotate it by {angle:.4g} deg")
    if abs(scale - 1) > 1e-9:
        parts.append(f"scale it by {scale:.6g}")
    if np.abs(root_world[:3, 3]).max() > 0:
        parts.append("move it by ({:.4g}, {:.4g}, {:.4g})".format(*root_world[:3, 3]))
    if not parts:
        return None
    return (
        f"node(s) above the skeleton ({_labels(doc, above[::-1])}) {' and '.join(parts)};"
        " baked into joint 0"
    )


def _continuous(q: np.ndarray) -> np.ndarray:
    """``q (F, J, 4)`` with signs flipped so that consecutive frames lie in one hemisphere."""
    if len(q) < 2:
        return q
    flip = np.sum(q[1:] * q[:-1], axis=-1) < 0
    sign = np.cumprod(np.where(flip, -1.0, 1.0), axis=0)
    out = q.copy()
    out[1:] *= sign[..., None]
    return out
