"""Blender's own data <-> ikrig: an armature object's bones and action into a
:class:`~ikrig.skeleton.Skeleton` and :class:`~ikrig.pose.Motion`, and a new action back.

Everything is read from and written to Blender's data blocks (bones, pose bones, the
action's F-curves, the scene's frame rate and unit scale), never through files. The
functions take Blender's objects but do not import ``bpy`` unless they create data (a new
action); the arithmetic is :mod:`ikrig.blender.rig`'s.

What is read: each bone's rest matrix, parent, length and connection (its roll is in the
rest matrix); per frame the F-curves of ``location``, the bone's rotation mode's property
(quaternion, any Euler order, axis-angle) and ``scale``, evaluated at whole frames (a
channel without F-curves keeps the pose bone's current value, as Blender does); the
object's world matrix and the scene's unit scale (:func:`~ikrig.blender.rig.world_frame`).
Constraints, drivers, NLA strips and object-level animation are not read.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError
from ..pose import Motion
from .rig import Channels, RestRig, WorldFrame, motion_from_channels, world_frame
from .rotation import mode_path, mode_size, quat_from_mode

__all__ = ["SampledAction", "action_fcurves", "bone_path", "read_motion", "frame_range", "read_rig",
           "sample_action", "scene_frame", "scene_frame_time"]  # fmt: skip


def bone_path(bone: str, prop: str) -> str:
    """The F-curve data path of a pose bone's property, the name quoted as Blender does.

    Example:
        >>> bone_path('a"b', "location")
        'pose.bones["a\\\\"b"].location'
    """
    name = bone.replace("\\", "\\\\").replace('"', '\\"')
    return f'pose.bones["{name}"].{prop}'


def _matrix(m: Any) -> np.ndarray:
    return np.array([list(row) for row in m], dtype=np.float64)


def _parent_first(bones: list[Any]) -> list[Any]:
    """Bones ordered so that every parent comes before its children (stable)."""
    placed: set[str] = set()
    out: list[Any] = []
    rest = list(bones)
    while rest:
        ready = [b for b in rest if b.parent is None or b.parent.name in placed]
        out += ready
        placed.update(b.name for b in ready)
        rest = [b for b in rest if b.name not in placed]
    return out


def read_rig(obj: Any) -> RestRig:
    """An armature object's bones at rest (:class:`~ikrig.blender.rig.RestRig`).

    Raises:
        InputError: not an armature, no bones, or a bone that does not inherit its parent's
            rotation and full scale or moves in its parent's space (unsupported: the message
            names the bone).
    """
    if obj is None or getattr(obj, "type", None) != "ARMATURE":
        raise InputError("select an armature object (the active object is not one)")
    bones = _parent_first(list(obj.data.bones))
    if not bones:
        raise InputError(f"armature {obj.name!r} has no bones")
    for b in bones:
        if not b.use_inherit_rotation or b.inherit_scale != "FULL" or not b.use_local_location:
            raise InputError(
                f"bone {b.name!r}: only bones that inherit rotation and full scale and move"
                " in their own axes are supported (Bone properties > Relations)"
            )
    index = {b.name: j for j, b in enumerate(bones)}
    return RestRig(
        tuple(b.name for b in bones),
        np.array([index[b.parent.name] if b.parent else -1 for b in bones], dtype=np.int64),
        np.stack([_matrix(b.matrix_local) for b in bones]),
        np.array([b.length for b in bones], dtype=np.float64),
        np.array([bool(b.use_connect) for b in bones]),
    )


def scene_frame_time(scene: Any) -> float:
    """Seconds per frame of ``scene`` (``fps_base / fps``)."""
    return float(scene.render.fps_base) / float(scene.render.fps)


def scene_frame(obj: Any, scene: Any) -> WorldFrame:
    """The armature object's world frame in ``scene``'s units (metres, Y up)."""
    return world_frame(_matrix(obj.matrix_world), float(scene.unit_settings.scale_length))


def action_fcurves(action: Any, slot: Any = None) -> Any:
    """The F-curves of ``action`` for ``slot`` (Blender 4.4+ layered actions; the action's
    own list in older ones); empty when the slot has none."""
    legacy = getattr(action, "fcurves", None)
    if legacy is not None and not getattr(action, "is_action_layered", False):
        return legacy
    from bpy_extras import anim_utils  # type: ignore[import-not-found,unused-ignore]

    if slot is None:
        slot = action.slots[0] if len(action.slots) else None
    bag = anim_utils.action_get_channelbag_for_slot(action, slot) if slot else None
    return bag.fcurves if bag is not None else []


class SampledAction(NamedTuple):
    """An armature's channels sampled at whole frames, as the F-curves spell them.

    Attributes:
        frames: ``(F,)`` int, the frames sampled.
        modes: ``J`` rotation modes, one per bone (rig order).
        locations: ``(F, J, 3)``; scales: ``(F, J, 3)``.
        rotations: ``J`` arrays ``(F, k)`` of each bone's rotation values in its mode.
        animated: ``(J,)`` bool, bones with any F-curve.
    """

    frames: np.ndarray
    modes: tuple[str, ...]
    locations: np.ndarray
    rotations: list[np.ndarray]
    scales: np.ndarray
    animated: np.ndarray

    def channels(self) -> Channels:
        """The :class:`~ikrig.blender.rig.Channels` (rotations as xyzw quaternions)."""
        q = np.stack([quat_from_mode(v, m) for v, m in zip(self.rotations, self.modes)], 1)
        return Channels(self.locations, q, self.scales)


def _curve(curves: dict, frames: np.ndarray, path: str, size: int, static: Any) -> np.ndarray:
    out = np.empty((len(frames), size))
    for i in range(size):
        fc = curves.get((path, i))
        out[:, i] = [fc.evaluate(f) for f in frames] if fc is not None else static[i]
    return out


def sample_action(obj: Any, rig: RestRig, action: Any, frames: np.ndarray) -> SampledAction:
    """Evaluate the F-curves of ``action`` (for the object's slot) for every bone of ``rig``
    at ``frames``."""
    slot = getattr(obj.animation_data, "action_slot", None) if obj.animation_data else None
    curves = {(fc.data_path, fc.array_index): fc for fc in action_fcurves(action, slot)}
    paths = {p for p, _ in curves}
    F, J = len(frames), len(rig.names)
    loc, scale = np.empty((F, J, 3)), np.empty((F, J, 3))
    rotations, modes, animated = [], [], np.zeros(J, dtype=bool)
    for j, name in enumerate(rig.names):
        pb = obj.pose.bones[name]
        mode = str(pb.rotation_mode)
        prop = mode_path(mode)
        loc[:, j] = _curve(curves, frames, bone_path(name, "location"), 3, pb.location)
        scale[:, j] = _curve(curves, frames, bone_path(name, "scale"), 3, pb.scale)
        static = getattr(pb, prop)
        rotations.append(_curve(curves, frames, bone_path(name, prop), mode_size(mode), static))
        modes.append(mode)
        animated[j] = any(bone_path(name, p) in paths for p in ("location", prop, "scale"))
    return SampledAction(np.asarray(frames), tuple(modes), loc, rotations, scale, animated)


def frame_range(obj: Any, scene: Any, use: str = "action") -> np.ndarray:
    """The whole frames to sample: the action's range (its manual range when set, else its
    keys') or the scene's (``use="scene"``).

    Raises:
        InputError: no action (for ``"action"``), an unknown ``use``, or an empty range.
    """
    if use == "scene":
        start, end = scene.frame_start, scene.frame_end
    elif use == "action":
        action = _action(obj)
        start, end = action.frame_range
    else:
        raise InputError(f"frame range: expected 'action' or 'scene', got {use!r}")
    first, last = int(np.ceil(start - 1e-6)), int(np.floor(end + 1e-6))
    if last < first:
        raise InputError(f"frame range {start}..{end} holds no whole frame")
    return np.arange(first, last + 1)


def _action(obj: Any) -> Any:
    action = obj.animation_data.action if obj.animation_data else None
    if action is None:
        raise InputError(f"armature {obj.name!r} has no action to read (animate it first)")
    return action


def read_motion(
    obj: Any, scene: Any, frames: np.ndarray | None = None, end_sites: bool = True
) -> tuple[RestRig, SampledAction, Motion]:
    """The armature object's action as a clip: its rig, the sampled channels and the
    :class:`~ikrig.pose.Motion` ``(F, J)`` in metres, Y up, in the scene's world, with the
    scene's frame time.

    Args:
        obj: an armature object with an action.
        scene: the scene (frame rate, unit scale).
        frames: whole frames to sample (default: :func:`frame_range` of the action).
        end_sites: leaf bones' tails as end sites
            (:func:`~ikrig.blender.rig.rest_skeleton`).

    Raises:
        InputError: no armature, no action, unsupported bones (:func:`read_rig`), a
            non-uniform object scale.
    """
    rig = read_rig(obj)
    action = _action(obj)
    frames = frame_range(obj, scene) if frames is None else np.asarray(frames, dtype=np.int64)
    sampled = sample_action(obj, rig, action, frames)
    frame, frame_time = scene_frame(obj, scene), scene_frame_time(scene)
    motion = motion_from_channels(rig, sampled.channels(), frame, frame_time, end_sites)
    return rig, sampled, motion
