"""Helpers of the Blender tests (``tests/test_blender*.py``): a fresh scene, Blender's own
importers, and the pose read back through Blender's evaluation (never ikrig's FK)."""

from __future__ import annotations

import numpy as np
from helpers import SHARED

SHARED_BVH_ALL = [
    p
    for folder in ("bvh", "bvh_more")
    for p in (
        sorted((SHARED / "data" / folder).glob("*.bvh")) if (SHARED / "data").is_dir() else []
    )
]
SHARED_GLTF_ALL = sorted((SHARED / "data" / "gltf").glob("*.glb")) if SHARED.is_dir() else []


def fresh_scene(bpy):
    """An empty scene (factory settings), returned."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def armature_objects(bpy):
    return [o for o in bpy.data.objects if o.type == "ARMATURE"]


def import_bvh(bpy, path) -> object:
    """Import a BVH file with Blender's own importer (scene frame rate and range from the
    file); the armature object, made active."""
    bpy.ops.import_anim.bvh(filepath=str(path), update_scene_fps=True, update_scene_duration=True)
    obj = armature_objects(bpy)[-1]
    bpy.context.view_layer.objects.active = obj
    return obj


def import_gltf(bpy, path, frame_time: float) -> object:
    """Import a glTF file with Blender's own importer, the scene at the clip's frame rate (so
    its keys fall on whole frames); the armature object with the most bones, made active."""
    bpy.context.scene.render.fps = round(1.0 / frame_time)
    bpy.ops.import_scene.gltf(filepath=str(path))
    obj = max(armature_objects(bpy), key=lambda o: len(o.data.bones))
    bpy.context.view_layer.objects.active = obj
    return obj


def evaluated_heads(bpy, obj, names, frames) -> np.ndarray:
    """``(F, len(names), 3)`` world positions of the bones' heads as Blender evaluates the
    pose at ``frames`` (``pose.bones[...].head`` and the object's world matrix), turned from
    Blender's Z-up into ikrig's Y-up and scaled by the scene's unit scale."""
    scene = bpy.context.scene
    unit = scene.unit_settings.scale_length
    out = np.empty((len(frames), len(names), 3))
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        m = np.array(obj.matrix_world)
        heads = np.array([list(obj.pose.bones[n].head) for n in names])
        w = heads @ m[:3, :3].T + m[:3, 3]
        out[k] = unit * np.stack([w[:, 0], w[:, 2], -w[:, 1]], axis=-1)
    return out


def some_frames(frames, count: int = 24) -> np.ndarray:
    """Up to ``count`` frames spread evenly over ``frames`` (first and last included)."""
    frames = np.asarray(frames)
    return frames[np.unique(np.linspace(0, len(frames) - 1, count).round().astype(int))]


def leg_length(motion) -> float:
    from ikrig.character.legs import find_legs

    return float(find_legs(motion.skeleton, None, motion.positions_world()).leg_length)
