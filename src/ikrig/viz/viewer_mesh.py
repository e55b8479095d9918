"""The skinned meshes of a glTF character in the browser viewer (viser, ``[viewer]`` extra).

:class:`SkinLayer` draws every triangle primitive skinned by a
:class:`~ikrig.io.gltf.clip.GltfClip`'s skin as one viser mesh and poses it per frame on the
CPU (linear blend skinning, the glTF way: :mod:`ikrig.io.gltf.skin`), sending the new
vertex positions only.

A shown pose (the source frame, or the foot-placed one) differs from the source frame by a
rigid motion per joint: ``D[j] = W_shown[j] @ W_source[j]^-1``, rotation
``R_shown R_source^T`` and no scale, since a joint's world scale (and the shear a
non-uniform scale above it gives) is the source frame's in both.
So the skinning matrices of the shown pose are ``D[j] @ M_source[f, s]``, with ``M_source``
from :func:`~ikrig.io.gltf.skin.skin_matrices` computed once for the whole clip; the file's
scales (a 0.01 armature, animated scales) are kept without being read again.
"""

from __future__ import annotations

import numpy as np

from ..io.gltf.clip import GltfClip
from ..io.gltf.skin import (
    SkinnedMesh,
    base_color,
    skin_joint_order,
    skin_matrices,
    skinned_meshes,
)
from ..math.quat import quat_conj, quat_mul, quat_to_matrix

__all__ = ["NEUTRAL", "SkinLayer", "pose_vertices"]

NEUTRAL = (196, 190, 180)
"""The colour of a mesh whose material gives none."""


def pose_vertices(mesh: SkinnedMesh, matrices: np.ndarray) -> np.ndarray:
    """``(V, 3)`` float64 positions of ``mesh`` under one frame's skinning ``matrices (S, 4,
    4)`` (or ``(S, 3, 4)``): :func:`~ikrig.io.gltf.skin.skin_vertices` for one frame, on the
    ``3 x 4`` rows only."""
    a = np.asarray(matrices, dtype=np.float64)[:, :3, :]
    blend = np.einsum("vk,vkij->vij", mesh.weights, a[mesh.joints])  # (V, 3, 4)
    return np.einsum("vij,vj->vi", blend[..., :3], mesh.positions) + blend[..., 3]


def rigid_deltas(rot_w, pos_w, src_rot_w, src_pos_w) -> np.ndarray:
    """``(J, 3, 4)`` rigid transforms taking each joint's source world frame to its shown one.

    Args:
        rot_w, pos_w: ``(J, 4)`` xyzw, ``(J, 3)`` the shown pose's world frames.
        src_rot_w, src_pos_w: the same of the source frame.
    """
    r = quat_to_matrix(quat_mul(rot_w, quat_conj(src_rot_w)))
    out = np.empty((len(r), 3, 4))
    out[..., :3] = r
    out[..., 3] = pos_w - np.einsum("jab,jb->ja", r, src_pos_w)
    return out


class SkinLayer:
    """The skinned meshes of a glTF clip as viser meshes, posed per frame.

    Args:
        scene: the viser scene API (``server.scene``).
        clip: the :class:`GltfClip`; its ``motion`` is the source the viewer plays.
        source: ``(rot_w (F, J, 4), pos_w (F, J, 3))``, the source motion's world frames.
        prefix: the scene-tree folder of the meshes.

    Attributes:
        meshes: the :class:`~ikrig.io.gltf.skin.SkinnedMesh` list (empty: nothing drawn).
        handles: one viser mesh handle per mesh; ``vertices`` the last posed ``(V, 3)``
            float64 positions of each.
    """

    def __init__(self, scene, clip: GltfClip, source, prefix: str = "/character"):
        self.clip = clip
        self.meshes = skinned_meshes(clip)
        self.src_rot, self.src_pos = source
        self.matrices = skin_matrices(clip) if self.meshes else np.zeros((0, 0, 4, 4))
        self.order = skin_joint_order(clip)
        colors = mesh_colors(clip, self.meshes)
        self.vertices = [m.positions.copy() for m in self.meshes]
        self.handles = [
            scene.add_mesh_simple(
                f"{prefix}/mesh{i}",
                m.positions.astype(np.float32),
                m.faces.astype(np.uint32),
                color=c,
                side="double",
            )
            for i, (m, c) in enumerate(zip(self.meshes, colors, strict=True))
        ]
        self._visible = True

    @property
    def visible(self) -> bool:
        return self._visible

    @visible.setter
    def visible(self, value: bool) -> None:
        self._visible = bool(value)
        for h in self.handles:
            if h.visible != self._visible:
                h.visible = self._visible

    def frame_matrices(self, frame: int, rot_w=None, pos_w=None) -> np.ndarray:
        """``(S, 3, 4)`` skinning matrices of ``frame``: the source's, or those of the pose
        ``rot_w (J, 4), pos_w (J, 3)`` shown at that frame."""
        src = self.matrices[frame, :, :3, :]
        if rot_w is None or pos_w is None:
            return src
        d = rigid_deltas(rot_w, pos_w, self.src_rot[frame], self.src_pos[frame])[self.order]
        out = d[..., :3] @ src
        out[..., 3] += d[..., 3]
        return out

    def pose(self, frame: int, rot_w=None, pos_w=None) -> None:
        """Pose every mesh for ``frame`` (the source pose, or the given one) and send it;
        nothing is computed while the meshes are hidden."""
        if not self.meshes or not self._visible:
            return
        a = self.frame_matrices(frame, rot_w, pos_w)
        for i, (m, h) in enumerate(zip(self.meshes, self.handles, strict=True)):
            v = pose_vertices(m, a)
            self.vertices[i] = v
            h.vertices = v.astype(np.float32)


def mesh_colors(clip: GltfClip, meshes: list[SkinnedMesh]) -> list[tuple[int, int, int]]:
    """One sRGB colour per skinned primitive: its material's base colour
    (:func:`~ikrig.io.gltf.skin.base_color`), :data:`NEUTRAL` when it has no material."""
    out: list[tuple[int, int, int]] = []
    for mesh in meshes:
        linear = base_color(clip, mesh)
        if linear is None:
            out.append(NEUTRAL)
            continue
        r, g, b = (int(round(c)) for c in np.clip(_to_srgb(linear), 0.0, 1.0) * 255.0)
        out.append((r, g, b))
    return out


def _to_srgb(linear: np.ndarray) -> np.ndarray:
    """glTF's base colour factor is linear; viser takes sRGB bytes."""
    c = np.clip(linear, 0.0, 1.0)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * c ** (1 / 2.4) - 0.055)
