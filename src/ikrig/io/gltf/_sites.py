"""End sites of a glTF skeleton: leaf nodes under joints that only mark a point.

A child of a skeleton node that is outside the skeleton, a joint of no skin, without mesh,
camera, skin, children or extensions, and moved by no animation, marks a point of its joint:
a BVH ``End Site`` as :func:`~ikrig.io.gltf.build.motion_to_gltf` writes it, or a leaf-bone
tip of another exporter. Its offset in the joint's frame is fixed when every scale above it
is uniform and still: then it is an end site of the skeleton. A non-uniform or animated
scale above it (a stretching thigh above a toe tip) moves it in its joint's frame from frame
to frame; then it becomes a leaf joint of the skeleton with a translation per frame, so that
its position is the scene graph's in every frame too (the writer never writes it: the
scene graph carries it with its joint, see :mod:`ikrig.io.gltf.write`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ...math.quat import quat_conj, quat_rotate
from ._nodes import rest_trs
from .document import GltfDocument

SITE_TOLERANCE = 1e-9
"""How far (relative to the skeleton's size) a leaf's offset from its joint may move over
the frames and still be a fixed end site."""


class Sites(NamedTuple):
    """The leaf nodes of a skeleton: fixed end sites, and leaves that move in their joint's
    frame (``moving``: read as leaf joints).

    Attributes:
        parents: ``(E,)`` skeleton joint of each end site.
        offsets: ``(E, 3)`` offset of each in its joint's frame, scales included.
        moving: node index of each moving leaf.
        moving_parents: ``(M,)`` skeleton joint of each.
        moving_rotations: ``(M, 4)`` xyzw rest rotation of each node.
        moving_offsets: ``(F, M, 3)`` offset of each in its joint's frame, per frame.
        moving_rest: ``(M, 3)`` the same at rest.
    """

    parents: np.ndarray
    offsets: np.ndarray
    moving: list[int]
    moving_parents: np.ndarray
    moving_rotations: np.ndarray
    moving_offsets: np.ndarray
    moving_rest: np.ndarray


def _markers(doc: GltfDocument, nodes: Sequence[int], children: list[list[int]]):
    """``[(skeleton index of the joint, node)]`` of the leaves that only mark a point."""
    skeleton = set(nodes)
    joints = {j for skin in doc.skins for j in skin.joints}
    moved = {ch.node for anim in doc.animations for ch in anim.channels}
    out = []
    for i, k in enumerate(nodes):
        for c in children[k]:
            node = doc.nodes[c]
            if c in skeleton or c in joints or c in moved or node.children:
                continue
            if any(v is not None for v in (node.mesh, node.camera, node.skin)):
                continue
            if not node.extensions:
                out.append((i, c))
    return out


def _offsets(world: np.ndarray, rotations: np.ndarray, index: np.ndarray, t: np.ndarray):
    """Offsets ``(..., M, 3)`` of points ``t (M, 3)`` given in the frames of nodes ``index``
    whose world matrices are ``world (..., J, 4, 4)``, expressed in the joints' rotation
    frames ``rotations (..., J, 4)``."""
    lin = world[..., index, :3, :3]
    return quat_rotate(quat_conj(rotations[..., index, :]), np.einsum("...mij,mj->...mi", lin, t))


def end_sites(
    doc: GltfDocument,
    tree: tuple[Sequence[int], list[list[int]]],
    rest: tuple[np.ndarray, np.ndarray],
    frames: tuple[np.ndarray, np.ndarray],
) -> Sites:
    """The leaves of the skeleton whose nodes are ``tree[0]`` (every node's children in
    ``tree[1]``).

    Args:
        doc: the document.
        tree: ``(skeleton nodes (J,), children of every node)``.
        rest: ``(node world matrices (J, 4, 4), the skeleton's world rotations (J, 4))``
            at rest.
        frames: the same per frame, ``(F, J, 4, 4)`` and ``(F, J, 4)``.
    """
    nodes, children = tree
    found = _markers(doc, nodes, children)
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        F = len(frames[0])
        return Sites(empty, np.zeros((0, 3)), [], empty, np.zeros((0, 4)),
                     np.zeros((F, 0, 3)), np.zeros((0, 3)))  # fmt: skip
    index = np.array([i for i, _ in found], dtype=np.int64)
    trs = [rest_trs(doc, c) for _, c in found]
    t = np.array([r[0] for r in trs])
    at_rest = _offsets(*rest, index, t)
    per_frame = _offsets(*frames, index, t)
    size = float(np.ptp(rest[0][:, :3, 3], axis=0).max()) if len(nodes) > 1 else 0.0
    size = max(size, float(np.abs(at_rest).max()), 1e-30)
    drift = np.abs(per_frame - at_rest).max(axis=(0, 2)) if len(per_frame) else 0 * index
    moves = drift > SITE_TOLERANCE * size
    return Sites(
        index[~moves],
        at_rest[~moves],
        [c for (_, c), m in zip(found, moves) if m],
        index[moves],
        np.array([r[1] for r in trs])[moves].reshape(-1, 4),
        per_frame[:, moves],
        at_rest[moves],
    )
