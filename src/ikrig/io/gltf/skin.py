"""Skinned meshes of a :class:`~ikrig.io.gltf.clip.GltfClip`, posed by any motion on its
skeleton (for viewers: linear blend skinning, the glTF way).

A vertex ``v`` of a primitive skinned by the clip's skin goes to
``sum_k w_k * M[j_k] @ v`` with ``M[i] = world(skin.joints[i]) @ inverseBindMatrices[i]``;
the mesh node's own transform is ignored, as the glTF specification says. The joints'
world matrices come from the motion (world space, see :mod:`ikrig.io.gltf.clip`) times each
joint's world scale, which the motion folds into translations (non-uniform ones with the
shear they give the frames below them): the rest scales of the nodes, or the clip
animation's scale channels when the motion has the clip's frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...math.quat import quat_to_matrix
from ...pose import Motion
from ._anim import channels
from ._nodes import path_frames, rest_trs
from ._sample import sample
from .clip import GltfClip
from .document import GltfDocument


@dataclass(frozen=True, eq=False)
class SkinnedMesh:
    """One triangle primitive skinned by the clip's skin.

    Attributes:
        name: ``mesh name/primitive index``.
        positions: ``(V, 3)`` float64 bind-pose vertex positions.
        faces: ``(T, 3)`` int64 vertex indices.
        joints: ``(V, 4)`` int64 indices into the skin's ``joints`` list.
        weights: ``(V, 4)`` float64 weights (normalised to sum 1).
        material: the primitive's material index, or None.
    """

    name: str
    positions: np.ndarray
    faces: np.ndarray
    joints: np.ndarray
    weights: np.ndarray
    material: int | None = None


_SKINNED = ("POSITION", "JOINTS_0", "WEIGHTS_0")


def clip_document(clip: GltfClip) -> GltfDocument:
    """The :class:`~ikrig.io.gltf.document.GltfDocument` of a clip's file (its buffers
    read under the clip's ``allow_outside``)."""
    return GltfDocument(clip.document, clip.path, clip.allow_outside)


def skinned_meshes(clip: GltfClip) -> list[SkinnedMesh]:
    """The triangle primitives of every mesh node that uses the clip's skin (``JOINTS_0`` /
    ``WEIGHTS_0``; other influence sets, morph targets and non-triangle modes are left out).

    Raises:
        FileFormatError: broken accessors; InputError: unsupported accessor layouts.
    """
    doc = clip_document(clip)
    out = []
    used = sorted({n.mesh for n in doc.nodes if n.skin == clip.skin} - {None})
    for m in used:
        mesh = doc.meshes[m]
        for p, prim in enumerate(mesh.primitives):
            pos_i, j_i, w_i = (prim.attributes.get(k) for k in _SKINNED)
            if prim.mode != 4 or None in (pos_i, j_i, w_i):
                continue
            positions = doc.accessor(pos_i)
            index = prim.indices
            flat = (
                np.arange(len(positions)) if index is None else doc.accessor(index, integer=True)
            ).reshape(-1)
            faces = flat[: len(flat) // 3 * 3].reshape(-1, 3)
            if len(faces) and (faces.min() < 0 or faces.max() >= len(positions)):
                raise doc.fail(f"mesh {m} primitive {p}: vertex index out of range")
            joints = doc.accessor(j_i, integer=True)
            weights = doc.accessor(w_i)
            total = weights.sum(axis=1, keepdims=True)
            weights = weights / np.where(total > 0, total, 1.0)
            name = f"{mesh.name or f'mesh{m}'}/{p}"
            out.append(SkinnedMesh(name, positions, faces, joints, weights, prim.material))
    return out


def skin_joint_order(clip: GltfClip) -> np.ndarray:
    """``(S,)`` int64: the skeleton joint of each entry of the skin's ``joints`` (the rows
    of :func:`skin_matrices`)."""
    where = {k: j for j, k in enumerate(clip.joint_nodes)}
    joints = clip_document(clip).skins[clip.skin].joints
    return np.array([where[k] for k in joints], dtype=np.int64)


def base_color(clip: GltfClip, mesh: SkinnedMesh) -> np.ndarray | None:
    """``(3,)`` the linear RGB base colour of ``mesh``'s material: its base colour factor,
    times its base colour texture's mean colour when Pillow can read it (an image in a
    bufferView); None when it has no material."""
    doc = clip_document(clip)
    index = mesh.material
    if index is None or not 0 <= index < len(doc.materials):
        return None
    material = doc.materials[index]
    if not material.pbr:
        return None
    factor = np.asarray(material.base_color_factor or [1.0] * 4, dtype=np.float64)[:3]
    if material.base_color_texture is not None:
        mean = _texture_mean(doc, material.base_color_texture)
        if mean is not None:
            factor = factor * mean
    return factor


def _texture_mean(doc: GltfDocument, texture: int) -> np.ndarray | None:
    """The mean linear RGB of a texture's image, or None when it cannot be read here."""
    try:
        import io

        from PIL import Image

        view = doc.image_views[doc.texture_sources[texture]]
        if view is None:
            return None  # external or data-URI images: the factor alone
        data, off, length, _ = doc.view(view)
        with Image.open(io.BytesIO(data[off : off + length])) as im:
            rgb = np.asarray(im.convert("RGB").resize((64, 64)), dtype=np.float64) / 255.0
    except Exception:  # noqa: BLE001 - a colour is a nicety; never fail on it
        return None
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return np.asarray(linear.reshape(-1, 3).mean(axis=0))


def skin_matrices(clip: GltfClip, motion: Motion | None = None) -> np.ndarray:
    """``(F, S, 4, 4)`` skinning matrices, one per entry of the skin's ``joints``, for
    ``motion`` (default ``clip.motion``; batch ``(F,)`` on the clip's skeleton)."""
    motion = clip.motion if motion is None else motion
    if motion.skeleton.num_joints != len(clip.joint_nodes) or len(motion.batch_shape) != 1:
        raise InputError("motion: expected a clip (F,) on the GltfClip's skeleton")
    doc = clip_document(clip)
    skin = doc.skins[clip.skin]
    rot_w, pos_w = motion.fk()
    F = len(pos_w)
    world = np.zeros((F, len(clip.joint_nodes), 4, 4))
    world[..., :3, :3] = quat_to_matrix(rot_w) @ _residuals(clip, motion, doc)
    world[..., :3, 3] = pos_w
    world[..., 3, 3] = 1.0
    order = skin_joint_order(clip)
    ibm_index = skin.inverse_bind_matrices
    if ibm_index is None:
        ibm = np.broadcast_to(np.eye(4), (len(order), 4, 4))
    else:
        ibm = doc.accessor(ibm_index).reshape(-1, 4, 4).transpose(0, 2, 1)  # column-major
        if len(ibm) != len(order):
            raise doc.fail(f"skin {clip.skin}: {len(ibm)} inverse bind matrices")
    return world[:, order] @ ibm


def skin_vertices(mesh: SkinnedMesh, matrices: np.ndarray) -> np.ndarray:
    """``(F, V, 3)`` world vertex positions of ``mesh`` under ``matrices (F, S, 4, 4)``."""
    m = np.einsum("vk,fvkij->fvij", mesh.weights, matrices[:, mesh.joints])
    return np.einsum("fvij,vj->fvi", m[..., :3, :3], mesh.positions) + m[..., :3, 3]


def _residuals(clip: GltfClip, motion: Motion, doc: GltfDocument) -> np.ndarray:
    """``(F, J, 3, 3)``: each skeleton joint's world linear map in its own (rotation) frame,
    ``R_world^T W_linear``: the scales above and at the joint, and the shear a non-uniform
    scale gives the frames below it (a uniform world scale ``s`` gives ``s I``).

    When the motion has the clip's frames, the clip's own: its local rotations (the node
    rotations), the animation's scale channels and the sampled transforms of the nodes
    above the skeleton; so a pose differs from the clip's frame by a rigid motion per joint
    (as :mod:`ikrig.viz.viewer_mesh` takes it). Else ``motion``'s rotations, the rest
    scales and the rest transforms above.
    """
    nodes = clip.joint_nodes
    F = motion.num_frames
    parent_of = {c: n.index for n in doc.nodes for c in n.children}
    above = [parent_of[nodes[0]]] if nodes[0] in parent_of else []
    while above[-1:] and above[-1] in parent_of:
        above.append(parent_of[above[-1]])
    rest = {k: rest_trs(doc, k)[:3] for k in list(nodes) + above}
    tracks = {}
    animation = clip.animation if F == len(clip.times) else None
    own_frames = animation is not None
    if animation is not None:
        wanted = set(nodes) | set(above)
        for ch in channels(doc, animation)[0]:
            if ch.node in wanted and (ch.path == "scale" or ch.node not in nodes):
                value = sample(
                    ch.keys, ch.values, ch.interpolation, clip.times, ch.path == "rotation"
                )
                tracks[ch.node, ch.path] = value
    own = np.array([tracks.get((k, "scale"), np.broadcast_to(rest[k][2], (F, 3))) for k in nodes])
    own = np.swapaxes(own, 0, 1)
    above_world, q_above = path_frames(rest, above[::-1], tracks, F)
    turn = quat_to_matrix(q_above)
    local = (clip.motion if own_frames else motion).rotations_local
    rotation = quat_to_matrix(np.asarray(local, dtype=np.float64))
    rotation[:, 0] = np.swapaxes(turn, -1, -2) @ rotation[:, 0]  # the root node's own
    parents = clip.skeleton.parents
    out = np.empty((F, len(nodes), 3, 3))
    top = np.swapaxes(turn, -1, -2) @ above_world[:, :3, :3]
    for j in range(len(nodes)):
        r = rotation[:, j]
        k_parent = top if parents[j] < 0 else out[:, parents[j]]
        out[:, j] = np.swapaxes(r, -1, -2) @ k_parent @ r * own[:, j, None, :]
    return out
