"""A result written into Blender as a NEW action, keyed per frame on the bones that changed.

:func:`write_action` copies the armature's action (so every curve ikrig does not change is
kept: other bones, scale keys, custom properties), replaces the location and rotation
F-curves of the bones whose channels changed by one key per sampled frame (linear, so the
pose between frames is the straight blend, no Bezier overshoot), assigns the copy to the
object and leaves the original untouched. Rotations are written in each bone's own mode,
each frame's spelling nearest the original's (:func:`~ikrig.blender.rotation.mode_from_quat`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..math.quat import quat_dot
from ..pose import Motion
from .armature import SampledAction, action_fcurves, bone_path, scene_frame
from .rig import RestRig, channels_from_motion
from .rotation import mode_from_quat, mode_path

__all__ = ["changed_bones", "write_action"]

ROTATION_EPS = 1e-7
"""``1 - |q_new . q_old|`` above which a bone's rotation changed (about 0.05 degrees)."""
LOCATION_EPS = 1e-6
"""A location change above which a bone moved, as a fraction of the rig's size (its largest
rest head coordinate plus its longest bone): the float32 rest matrices alone move a
location read and written back by a few millionths of a unit."""
LINEAR = 1
"""``Keyframe.interpolation`` as ``foreach_set`` takes it: ``LINEAR``."""


def changed_bones(
    rig: RestRig,
    sampled: SampledAction,
    locations: np.ndarray,
    rotations: np.ndarray,
    all_bones: bool = False,
) -> np.ndarray:
    """``(J,)`` bool: the bones whose basis location or rotation (``(F, J, 3)``, ``(F, J,
    4)`` xyzw) differs from the sampled action's in any frame (every bone with
    ``all_bones``)."""
    old = sampled.channels()
    size = float(np.abs(rig.heads()).max() + rig.lengths.max())
    turned = (1.0 - np.abs(quat_dot(old.rotations, rotations))) > ROTATION_EPS
    moved = np.abs(old.locations - locations).max(axis=-1) > LOCATION_EPS * max(size, 1e-9)
    changed = (turned | moved).any(axis=0)
    return np.ones_like(changed) if all_bones else changed


def _key(fcurves: Any, path: str, index: int, group: str, frames: np.ndarray, values) -> None:
    fc = fcurves.new(path, index=index, group_name=group) if group else None
    if fc is None:
        fc = fcurves.new(path, index=index)
    points = fc.keyframe_points
    points.add(len(frames))
    co = np.empty((len(frames), 2), dtype=np.float32)
    co[:, 0], co[:, 1] = frames, values
    points.foreach_set("co", co.ravel())
    points.foreach_set("interpolation", np.full(len(frames), LINEAR, dtype=np.int32))
    fc.update()


def _channelbag(action: Any, obj: Any) -> Any:
    if getattr(action, "fcurves", None) is not None and not action.is_action_layered:
        return action.fcurves
    from bpy_extras import anim_utils  # type: ignore[import-not-found,unused-ignore]

    slot = obj.animation_data.action_slot
    return anim_utils.action_ensure_channelbag_for_slot(action, slot).fcurves


def write_action(
    obj: Any,
    rig: RestRig,
    sampled: SampledAction,
    motion: Motion,
    scene: Any,
    name: str | None = None,
    all_bones: bool = False,
) -> tuple[Any, np.ndarray]:
    """Write ``motion`` (read by :func:`~ikrig.blender.armature.read_motion` and changed)
    into a new action on ``obj`` and assign it.

    Args:
        obj: the armature object, its original action assigned.
        rig, sampled: what :func:`~ikrig.blender.armature.read_motion` returned with the
            motion (the frames written are ``sampled.frames``; bone scales are kept).
        motion: the new clip ``(F, J)`` in the same world.
        scene: the scene (unit scale, for the world frame).
        name: the new action's name (default: the original's plus ``_ikrig``; Blender adds
            ``.001`` if taken).
        all_bones: key every bone, changed or not (a round trip).

    Returns:
        ``(action, changed)``: the new action (assigned to ``obj``) and ``(J,)`` bool, the
        bones keyed.
    """
    original = obj.animation_data.action
    slot_index = _slot_index(obj)
    loc, rot = channels_from_motion(rig, motion, scene_frame(obj, scene), sampled.scales)
    changed = changed_bones(rig, sampled, loc, rot, all_bones)
    action = original.copy()
    action.name = name or f"{original.name}_ikrig"
    obj.animation_data.action = action
    if slot_index is not None:
        obj.animation_data.action_slot = action.slots[slot_index]
    fcurves = _channelbag(action, obj)
    frames = sampled.frames
    for j in np.flatnonzero(changed):
        bone, mode = rig.names[j], sampled.modes[j]
        prop = mode_path(mode)
        values = [(prop, mode_from_quat(rot[:, j], mode, sampled.rotations[j]))]
        if not rig.connected[j]:  # a connected bone's location does nothing: kept as it was
            values.append(("location", loc[:, j]))
        for name, v in values:
            path = bone_path(bone, name)
            for fc in [fc for fc in fcurves if fc.data_path == path]:
                fcurves.remove(fc)
            for i in range(v.shape[1]):
                _key(fcurves, path, i, bone, frames, v[:, i])
    return action, changed


def _slot_index(obj: Any) -> int | None:
    slot = getattr(obj.animation_data, "action_slot", None)
    if slot is None:
        return None
    slots = list(obj.animation_data.action.slots)
    return next(i for i, s in enumerate(slots) if s.identifier == slot.identifier)


def original_fcurves(obj: Any, action: Any) -> dict[tuple[str, int], np.ndarray]:
    """``(data path, index) -> (K, 2)`` keyframe coordinates of an action's F-curves for
    ``obj``'s slot (a snapshot, to check an action was left untouched)."""
    slot = getattr(obj.animation_data, "action_slot", None)
    out = {}
    for fc in action_fcurves(action, slot):
        co = np.empty(2 * len(fc.keyframe_points), dtype=np.float32)
        fc.keyframe_points.foreach_get("co", co)
        out[(fc.data_path, fc.array_index)] = co.reshape(-1, 2)
    return out
