"""glTF node trees: parents, rest transforms (TRS or matrix), the skeleton's nodes, names.

A node's local transform is ``T * R * S`` (translation, rotation, scale); a node ``matrix``
is decomposed into that form (column-major in the file). Matrices with shear, projection or
a mirror cannot be a joint's TRS and raise :class:`~ikrig.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...errors import FileFormatError, InputError
from ...math.quat import quat_from_matrix, quat_mul, quat_normalize, quat_to_matrix
from ._records import Node
from .check import is_index
from .document import GltfDocument
from .uri import short_text

Fail = Callable[[str], FileFormatError]

MAX_VALUE = 1e30
"""The largest magnitude of a node's translation, rotation, scale or matrix entry read (as
BVH offsets: beyond it, world matrices overflow)."""


def node_tree(doc: GltfDocument) -> tuple[np.ndarray, list[list[int]]]:
    """``(parents (N,), children)`` of the document's nodes; ``-1`` for a tree's top node.

    Raises:
        FileFormatError: a child index out of range, a node with two parents, a cycle.
    """
    nodes, fail = doc.nodes, doc.fail
    n = len(nodes)
    parents = np.full(n, -1, dtype=np.int64)
    children: list[list[int]] = []
    for k, node in enumerate(nodes):
        kids = list(node.children)
        for c in kids:
            if not is_index(c, n):
                raise fail(f"node {k} has a child {short_text(c)} that is not a node index")
            if parents[c] != -1 or c == k:
                raise fail(f"node {c} has two parents (or is its own child)")
            parents[c] = k
        children.append(kids)
    depth = np.full(n, -1, dtype=np.int64)
    for k in range(n):
        path: list[int] = []
        p = k
        while p != -1 and depth[p] < 0:
            if len(path) > n:
                raise fail(f"the node hierarchy has a cycle through node {k}")
            path.append(p)
            p = int(parents[p])
        base = -1 if p == -1 else int(depth[p])
        for i, node_k in enumerate(reversed(path)):
            depth[node_k] = base + 1 + i
    return parents, children


def _vector(node: Node, key: str, default: list[float], fail: Fail) -> np.ndarray:
    k = node.index
    value = getattr(node, key)
    value = default if value is None else value
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise fail(f"node {k}: {key} is not a list of numbers") from None
    if a.shape != (len(default),) or not (np.abs(a) <= MAX_VALUE).all():
        raise fail(f"node {k}: {key} must be {len(default)} numbers within +-{MAX_VALUE:g}")
    return a


def rest_trs(doc: GltfDocument, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """``(t (3,), q (4,) xyzw, s (3,), from_matrix)`` of node ``k`` at rest.

    ``from_matrix`` tells whether the node holds a ``matrix`` that is not the identity.
    """
    node, fail, where = doc.nodes[k], doc.fail, doc.path
    if node.matrix is None:
        t = _vector(node, "translation", [0.0, 0.0, 0.0], fail)
        q = _vector(node, "rotation", [0.0, 0.0, 0.0, 1.0], fail)
        s = _vector(node, "scale", [1.0, 1.0, 1.0], fail)
        n = float(np.linalg.norm(q))
        if n < 1e-6:
            raise fail(f"node {k}: rotation is not a unit quaternion")
        return t, q / n, s, False
    a = _vector(node, "matrix", [0.0] * 16, fail).reshape(4, 4).T  # column-major
    name = node.label
    if np.abs(a[3] - [0, 0, 0, 1]).max() > 1e-6:
        raise InputError(f"{where}: node {name} has a projective matrix (last row not 0 0 0 1)")
    lin = a[:3, :3]
    s = np.linalg.norm(lin, axis=0)
    if (s <= 1e-12).any() or np.linalg.det(lin) <= 0:
        raise InputError(f"{where}: node {name} has a mirrored or collapsed matrix")
    rot = lin / s
    if np.abs(rot.T @ rot - np.eye(3)).max() > 1e-4:
        raise InputError(f"{where}: node {name} has a matrix with shear (not a TRS)")
    q = quat_from_matrix(rot)
    is_identity = bool(np.abs(a - np.eye(4)).max() <= 1e-12)
    return a[:3, 3].copy(), q, s, not is_identity


def skeleton_nodes(
    parents: np.ndarray, children: list[list[int]], joints: list[int]
) -> tuple[list[int], int | None]:
    """The skeleton's nodes: ``joints`` plus every node on the paths between them.

    Returns:
        ``(nodes, root)``: nodes depth first (parents before children, the file's child
        order) from their lowest common ancestor ``nodes[0]``; ``root`` is ``None`` when the
        joints lie in separate node trees (then ``nodes`` is empty).
    """
    up = parents.tolist()
    marked: set[int] = set()  # the joints and every node above one: linear in their number
    for j in joints:
        k = j
        while k != -1 and k not in marked:
            marked.add(k)
            k = up[k]
    tops = [k for k in marked if up[k] == -1]
    if len(tops) != 1:
        return [], None
    root, joint_set = tops[0], set(joints)
    while root not in joint_set:  # down to the first node where the paths part
        below = [c for c in children[root] if c in marked]
        if len(below) != 1:
            break
        root = below[0]
    order, stack = [], [root]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(c for c in reversed(children[k]) if c in marked)
    return order, root


def unique_names(doc: GltfDocument, nodes: list[int]) -> tuple[list[str], bool]:
    """Names for ``nodes``: the node names made unique (``name``, ``name.1``, ...), unnamed
    nodes ``node<k>``. The flag tells whether any name was changed."""
    taken: set[str] = set()
    out, changed = [], False
    for k in nodes:
        raw = doc.nodes[k].name
        base = raw.strip() if isinstance(raw, str) and raw.strip() else f"node{k}"
        name, i = base, 0
        while name in taken:
            i += 1
            name = f"{base}.{i}"
        changed |= name != raw
        taken.add(name)
        out.append(name)
    return out, changed


def trs_matrix(t: np.ndarray, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``T R S`` as 4x4 matrices. ``t, s: (..., 3)``, ``q: (..., 4)`` -> ``(..., 4, 4)``."""
    t, q, s = np.asarray(t), np.asarray(q), np.asarray(s)
    batch = np.broadcast_shapes(t.shape[:-1], q.shape[:-1], s.shape[:-1])
    m = np.zeros(batch + (4, 4))
    m[..., :3, :3] = quat_to_matrix(q) * s[..., None, :]
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def path_frames(
    rest: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]],
    path: list[int],
    tracks: dict[tuple[int, str], np.ndarray],
    frames: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(world (F, 4, 4), rotation (F, 4))`` of a path of nodes, top node first: the
    product of their ``T R S`` matrices and of their rotations (xyzw; a non-uniform scale's
    shear left out, as the reader leaves it out of joint 0), each node's rest ``rest[k] =
    (t, q, s)`` replaced by ``tracks[(k, "translation" | "rotation" | "scale")]`` (``(F, 3)``
    or ``(F, 4)`` sampled values) where given. Without tracks on the path, one product,
    broadcast."""
    if not any((k, p) in tracks for k in path for p in ("translation", "rotation", "scale")):
        world1 = np.eye(4)
        for k in path:
            world1 = world1 @ trs_matrix(*rest[k])
        rotation1 = rest_turn([rest[k][1] for k in path])
        return np.broadcast_to(world1, (frames, 4, 4)), np.broadcast_to(rotation1, (frames, 4))
    world = np.broadcast_to(np.eye(4), (frames, 4, 4))
    rotation = np.broadcast_to(np.array([0.0, 0.0, 0.0, 1.0]), (frames, 4))
    for k in path:
        t, q, s = rest[k]
        t = tracks.get((k, "translation"), np.broadcast_to(t, (frames, 3)))
        q = tracks.get((k, "rotation"), np.broadcast_to(q, (frames, 4)))
        s = tracks.get((k, "scale"), np.broadcast_to(s, (frames, 3)))
        world = world @ trs_matrix(t, quat_normalize(q), s)
        rotation = quat_mul(rotation, quat_normalize(q))
    return world, rotation


def rest_turn(quats: list[np.ndarray]) -> np.ndarray:
    """``(4,)`` xyzw product ``q0 q1 ...`` of unit quaternions (normalised first), in plain
    floats: a path thousands of nodes deep takes milliseconds."""
    x, y, z, w = 0.0, 0.0, 0.0, 1.0
    for q in quats:
        n = float(np.linalg.norm(q))
        bx, by, bz, bw = (float(v) / n for v in q)
        x, y, z, w = (
            w * bx + x * bw + y * bz - z * by,
            w * by - x * bz + y * bw + z * bx,
            w * bz + x * by - y * bx + z * bw,
            w * bw - x * bx - y * by - z * bz,
        )
    return np.array([x, y, z, w])


def scale_spread(s: np.ndarray) -> np.ndarray:
    """How far ``s (..., 3)`` is from a uniform scale: ``(max - min) / max`` per element."""
    hi = np.max(np.abs(s), axis=-1)
    return (hi - np.min(s, axis=-1)) / np.where(hi > 0, hi, 1.0)
