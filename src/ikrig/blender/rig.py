"""An armature's bones and an action's channels as arrays <-> ikrig's Skeleton and Motion.

No Blender here: :mod:`ikrig.blender.armature` reads the arrays out of Blender and writes
them back; this module does the arithmetic, so it is tested without ``bpy`` too.

Blender's model (standard bones: inherited rotation and full inherited scale, local
location): bone ``j`` has a rest matrix ``B_j`` in armature space (head at its translation,
the bone along its Y axis, turned by its roll) and per frame a basis ``T(loc) R(rot)
S(scale)``; its pose matrix is ``P_j = P_parent B_parent^-1 B_j T R S`` (a root's parent
terms are the identity). A connected bone ignores its location.

ikrig's model: joint ``j`` is bone ``j``'s head, its rest frame is world-aligned (a BVH's
convention: at rest every rotation is the identity), so with ``r_j`` the rotation of
``B_j``:

- the skeleton's offset of ``j`` is ``head_j - head_parent`` (armature axes);
- the local rotation is ``r_j rot_j r_j^-1``, the basis rotation seen in the parent's
  world-aligned frame;
- the local position is ``c_parent (offset_j + r_j loc_j)``, with ``c`` the product of
  the (uniform) scales from the root down to the parent.

The world: the armature object's matrix (rotation, translation, uniform scale), the scene's
unit scale (metres per Blender unit) and the turn from Blender's Z-up to ikrig's Y-up
(:func:`~ikrig.math.axes.to_y_up_quat`) make one similarity :class:`WorldFrame`, put on the
root joints only, as :func:`~ikrig.character.to_y_up` does, and on every offset's length.
So a clip read from Blender is in metres, Y up, where the scene shows it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._checks import as_float, positive
from ..errors import InputError
from ..math.axes import to_y_up_quat
from ..math.quat import quat_conj, quat_from_matrix, quat_mul, quat_rotate, quat_to_matrix
from ..pose import Motion
from ..skeleton import Skeleton

__all__ = ["Channels", "RestRig", "WorldFrame", "channels_from_motion", "motion_from_channels",
           "pose_matrices", "rest_skeleton", "world_frame"]  # fmt: skip

SCALE_TOLERANCE = 1e-5
"""How far a matrix's three axis lengths may differ (relatively) and still be read as one
uniform scale."""


class RestRig(NamedTuple):
    """An armature's bones at rest, parents first.

    Attributes:
        names: ``J`` bone names.
        parents: ``(J,)`` int, ``-1`` for a root, ``parents[j] < j``.
        rest_matrices: ``(J, 4, 4)`` each bone's rest matrix in armature space
            (``Bone.matrix_local``): rotation (Y along the bone, turned by its roll) and head.
        lengths: ``(J,)`` bone lengths (head to tail), armature units.
        connected: ``(J,)`` bool; a connected bone's location channels do nothing.
    """

    names: tuple[str, ...]
    parents: np.ndarray
    rest_matrices: np.ndarray
    lengths: np.ndarray
    connected: np.ndarray

    def rotations(self) -> np.ndarray:
        """``(J, 4)`` xyzw: each bone's rest rotation ``r_j`` in armature space."""
        return quat_from_matrix(self.rest_matrices[:, :3, :3])

    def heads(self) -> np.ndarray:
        """``(J, 3)`` each bone's rest head in armature space."""
        return self.rest_matrices[:, :3, 3]

    def offsets(self) -> np.ndarray:
        """``(J, 3)`` ``head_j - head_parent`` (a root's head as it is), armature axes."""
        heads = self.heads()
        out = heads.copy()
        child = self.parents >= 0
        out[child] -= heads[self.parents[child]]
        return out


class Channels(NamedTuple):
    """A pose bone's basis channels over ``F`` frames, as arrays.

    Attributes:
        locations: ``(F, J, 3)`` ``pose_bone.location`` (bone rest axes, armature units).
        rotations: ``(F, J, 4)`` xyzw unit quaternions of the basis rotation (any mode,
            converted by :func:`~ikrig.blender.rotation.quat_from_mode`).
        scales: ``(F, J, 3)`` ``pose_bone.scale``.
    """

    locations: np.ndarray
    rotations: np.ndarray
    scales: np.ndarray


class WorldFrame(NamedTuple):
    """A similarity from armature space to ikrig's world: ``x -> scale * rotate(rotation, x)
    + translation``.

    Attributes:
        rotation: ``(4,)`` xyzw.
        translation: ``(3,)`` metres, Y up.
        scale: metres per armature unit.
    """

    rotation: np.ndarray
    translation: np.ndarray
    scale: float

    def apply(self, points: np.ndarray) -> np.ndarray:
        """``(..., 3)`` armature-space points in ikrig's world."""
        return self.scale * quat_rotate(self.rotation, points) + self.translation

    def invert(self, points: np.ndarray) -> np.ndarray:
        """``(..., 3)`` world points back in armature space."""
        return quat_rotate(quat_conj(self.rotation), points - self.translation) / self.scale


def uniform_scale(matrix: np.ndarray, name: str) -> tuple[np.ndarray, float]:
    """The rotation (``(4,)`` xyzw) and uniform scale of a ``(3, 3)`` matrix.

    Raises:
        InputError: a sheared, mirrored, non-uniform or zero scale (the message names
            ``name``).
    """
    m = np.asarray(matrix, dtype=np.float64)
    lengths = np.linalg.norm(m, axis=0)
    s = float(lengths.mean())
    if s <= 0 or np.ptp(lengths) > SCALE_TOLERANCE * s or np.linalg.det(m) <= 0:
        raise InputError(
            f"{name}: needs a uniform positive scale, got axis lengths {np.round(lengths, 6)}"
            " (apply the scale in Blender: Object > Apply > Scale)"
        )
    rot = m / s
    if np.abs(rot.T @ rot - np.eye(3)).max() > 1e-4:
        raise InputError(f"{name}: a sheared matrix; apply its transform in Blender first")
    return quat_from_matrix(rot), s


def world_frame(object_matrix: np.ndarray, unit_scale: float = 1.0) -> WorldFrame:
    """The :class:`WorldFrame` of an armature object (``matrix_world``, ``(4, 4)``) in a
    scene whose unit scale is ``unit_scale`` metres per Blender unit.

    Raises:
        InputError: a matrix that is not 4x4 or not a uniform similarity; a unit scale that
            is not a finite number > 0.

    Example:
        >>> frame = world_frame(np.eye(4))
        >>> frame.apply(np.array([0.0, 0.0, 1.0])).round(6) + 0.0  # Blender's up is ikrig's Y
        array([0., 1., 0.])
    """
    m = as_float(object_matrix, "matrix_world")
    if m.shape != (4, 4):
        raise InputError(f"matrix_world: expected a 4x4 matrix, got shape {m.shape}")
    u = positive(unit_scale, "unit_scale")
    rot, s = uniform_scale(m[:3, :3], "the armature object's matrix")
    up = to_y_up_quat("z")
    return WorldFrame(quat_mul(up, rot), u * quat_rotate(up, m[:3, 3]), u * s)


def _check_rig(rig: RestRig) -> None:
    J = len(rig.names)
    if np.shape(rig.rest_matrices) != (J, 4, 4) or np.shape(rig.parents) != (J,):
        raise InputError(f"rig: {J} names need (J,) parents and (J, 4, 4) rest matrices")


def rest_skeleton(rig: RestRig, frame: WorldFrame, end_sites: bool = True) -> Skeleton:
    """The :class:`~ikrig.skeleton.Skeleton` of an armature at rest, in ``frame``'s units:
    offsets scaled by ``frame.scale``, a root's offset its head placed in the world, and
    with ``end_sites`` an end site at the tail of every bone without children (Blender's
    BVH importer puts a BVH ``End Site`` there, and gives a zero-length one a length of its
    own; foot placement reads a toeless foot's end site as its toe). Without: none (the
    glTF importer's leaf tails are guesses; ikrig's glTF reader finds no end sites there).

    Raises:
        InputError: arrays of the wrong shapes; HierarchyError: a parent after its child.
    """
    _check_rig(rig)
    offsets = rig.offsets() * frame.scale
    roots = rig.parents < 0
    offsets[roots] = frame.apply(rig.heads()[roots])
    leaves = (
        np.setdiff1d(np.arange(len(rig.names)), rig.parents) if end_sites else np.zeros(0, np.int64)
    )
    along = np.asarray(rig.rest_matrices, dtype=np.float64)[leaves, :3, 1]
    along /= np.maximum(np.linalg.norm(along, axis=-1, keepdims=True), 1e-30)
    tails = along * np.asarray(rig.lengths, dtype=np.float64)[leaves, None] * frame.scale
    return Skeleton(rig.names, rig.parents, offsets, leaves, tails)


def _accumulated(parents: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """``(F, J)`` the product of each joint's parents' uniform scales (1 at a root)."""
    c = np.ones(scales.shape[:2])
    for j, p in enumerate(parents):
        if p >= 0:
            c[:, j] = c[:, p] * scales[:, p]
    return c


def pose_matrices(rig: RestRig, channels: Channels) -> np.ndarray:
    """``(F, J, 4, 4)`` each bone's pose matrix in armature space, as Blender evaluates it:
    ``P_j = P_parent B_parent^-1 B_j T(loc) R(rot) S(scale)`` (a connected bone's location
    ignored), in float64 from the given (float32) data.

    Raises:
        InputError: arrays whose shapes do not match the rig.
    """
    _check_rig(rig)
    J = len(rig.names)
    loc, rot, scale = (np.asarray(a, dtype=np.float64) for a in channels)
    if loc.ndim != 3 or loc.shape[1:] != (J, 3) or rot.shape != loc.shape[:2] + (4,):
        raise InputError(f"channels: expected (F, {J}, 3) locations and (F, {J}, 4) rotations")
    if scale.shape != loc.shape:
        raise InputError(f"channels: expected (F, {J}, 3) scales, got {scale.shape}")
    basis = np.zeros(loc.shape[:2] + (4, 4))
    basis[..., :3, :3] = quat_to_matrix(rot) * scale[..., None, :]
    basis[..., :3, 3] = np.where(rig.connected[:, None], 0.0, loc)
    basis[..., 3, 3] = 1.0
    rest = np.asarray(rig.rest_matrices, dtype=np.float64)
    out = np.empty_like(basis)
    for j, p in enumerate(rig.parents):
        local = rest[j] if p < 0 else np.linalg.inv(rest[p]) @ rest[j]
        out[:, j] = local @ basis[:, j] if p < 0 else out[:, p] @ local @ basis[:, j]
    return out


def _nearest_rotation(m: np.ndarray) -> np.ndarray:
    """``(..., 4)`` xyzw of the rotation nearest ``(..., 3, 3)`` matrices (their polar
    part: scale and float32 noise taken out)."""
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    flip = np.linalg.det(r) < 0  # a mirrored matrix: the nearest proper rotation
    u[flip, :, 2] *= -1
    return quat_from_matrix(np.where(flip[..., None, None], u @ vt, r))


def motion_from_channels(
    rig: RestRig,
    channels: Channels,
    frame: WorldFrame,
    frame_time: float | None,
    end_sites: bool = True,
) -> Motion:
    """A :class:`~ikrig.pose.Motion` ``(F, J)`` of an armature's channels in ``frame``'s
    world: each joint at its bone's head as Blender poses it (:func:`pose_matrices`), turned
    by the bone's pose rotation relative to its rest (module docstring); a bone's scale
    moves its children (ikrig has no scale; a non-uniform scale's rotation part is kept).
    ``end_sites``: as :func:`rest_skeleton`.

    Raises:
        InputError: arrays whose shapes do not match the rig.

    Example:
        >>> eye = np.eye(4)[None]
        >>> rig = RestRig(("root",), np.array([-1]), eye, np.ones(1), np.zeros(1, bool))
        >>> ch = Channels(np.ones((2, 1, 3)), np.array([[[0, 0, 0, 1.0]]] * 2), np.ones((2, 1, 3)))
        >>> m = motion_from_channels(rig, ch, world_frame(np.eye(4)), 1 / 30)
        >>> m.positions_world()[0].round(6)  # Blender (1, 1, 1) is ikrig (1, 1, -1)
        array([[ 1.,  1., -1.]])
    """
    pose = pose_matrices(rig, channels)
    rest_inv = np.linalg.inv(np.asarray(rig.rest_matrices, dtype=np.float64)[:, :3, :3])
    rotations = quat_mul(frame.rotation, _nearest_rotation(pose[..., :3, :3] @ rest_inv))
    positions = frame.apply(pose[..., :3, 3])
    skeleton = rest_skeleton(rig, frame, end_sites)
    return Motion.from_world(skeleton, rotations, positions, frame_time)


def channels_from_motion(
    rig: RestRig, motion: Motion, frame: WorldFrame, scales: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of :func:`motion_from_channels`: the basis locations ``(F, J, 3)`` and
    rotations ``(F, J, 4)`` xyzw that pose the bones as ``motion`` (a clip in ``frame``'s
    world) with the bones' own ``scales`` ``(F, J, 3)`` kept (the action's, unchanged).

    Bone by bone from the roots, with the pose matrices of :func:`pose_matrices`: the
    location puts the head where the joint is; the rotation is the nearest rotation to what
    turns the bone's rest into its world rotation, so that float32 rest matrices that are
    not quite orthonormal read and write back the same values. A connected bone's location
    is 0 (Blender ignores it: its head is its parent's tail).

    Raises:
        InputError: a motion whose joints are not the rig's bones, or scales of the wrong
            shape.
    """
    _check_rig(rig)
    if motion.skeleton.names != rig.names:
        raise InputError("motion: its joints are not the armature's bones (in order)")
    J = len(rig.names)
    rot_w, pos_w = (np.asarray(a, dtype=np.float64) for a in motion.fk())
    rot_w, pos_w = rot_w.reshape(-1, J, 4), pos_w.reshape(-1, J, 3)
    s = np.asarray(scales, dtype=np.float64)
    if s.shape != pos_w.shape:
        raise InputError(f"scales: expected shape {pos_w.shape}, got {s.shape}")
    turn = quat_to_matrix(quat_mul(quat_conj(frame.rotation), rot_w))  # armature space
    heads = frame.invert(pos_w)
    rest = np.asarray(rig.rest_matrices, dtype=np.float64)
    pose = np.empty(pos_w.shape[:2] + (4, 4))
    loc, rot = np.zeros_like(pos_w), np.empty(pos_w.shape[:2] + (4,))
    for j, p in enumerate(rig.parents):
        base = rest[j][None] if p < 0 else pose[:, p] @ (np.linalg.inv(rest[p]) @ rest[j])
        base = np.broadcast_to(base, pose[:, j].shape)
        inv = np.linalg.inv(base)
        if not rig.connected[j]:
            loc[:, j] = (inv[:, :3, :3] @ heads[:, j, :, None])[..., 0] + inv[:, :3, 3]
        want = turn[:, j] @ rest[j, :3, :3] / s[:, j, None, :]
        rot[:, j] = _nearest_rotation(inv[:, :3, :3] @ want)
        basis = np.zeros_like(base)
        basis[:, :3, :3] = quat_to_matrix(rot[:, j]) * s[:, j, None, :]
        basis[:, :3, 3], basis[:, 3, 3] = loc[:, j], 1.0
        pose[:, j] = base @ basis
    return loc, rot
