"""The Blender add-on's core in headless Blender (issue 39, ``pip install ikrig[blender]``):
armature + action -> Skeleton + Motion -> a new action, checked against Blender's own
importers and Blender's own evaluated pose, never against ikrig's reader alone.

Oracles: a clip ikrig writes (BVH, glTF), imported by Blender's importer, evaluated by
Blender (``pose.bones[...].head`` and the object's world matrix) sits where ikrig's FK of the
same file puts it, within 1e-5 of a leg, and so does the clip read from Blender. An action
read and written back unchanged keeps its F-curve values within 1e-6 in every rotation mode.
"""

from __future__ import annotations

import numpy as np
import pytest
from blender_scene import (
    SHARED_BVH_ALL,
    SHARED_GLTF_ALL,
    evaluated_heads,
    fresh_scene,
    import_bvh,
    import_gltf,
    leg_length,
    some_frames,
)

from ikrig.blender.armature import read_motion
from ikrig.blender.keys import original_fcurves, write_action
from ikrig.blender.rotation import MODES, mode_path
from ikrig.errors import InputError
from ikrig.io import read_clip, write_clip
from ikrig.math.quat import quat_from_axis_angle, quat_mul

bpy = pytest.importorskip("bpy")

TOL = 1e-5
"""Position agreement, as a fraction of the clip's leg length."""


def _names_index(motion, names):
    return [motion.skeleton.names.index(n) for n in names]


def _check_against_file(obj, written, tol_leg):
    """The clip read from Blender and Blender's evaluated pose against ikrig's FK of the
    file (``written``, read back by ikrig)."""
    scene = bpy.context.scene
    rig, sampled, motion = read_motion(obj, scene)
    ref = written.motion
    names = ref.skeleton.names
    assert motion.num_frames == ref.num_frames
    assert motion.frame_time == pytest.approx(ref.frame_time, rel=1e-4)
    tol = tol_leg * leg_length(ref)
    mine = motion.positions_world()[:, _names_index(motion, names)]
    truth = ref.positions_world()
    assert np.abs(mine - truth).max() < tol, np.abs(mine - truth).max() / tol
    picked = some_frames(sampled.frames)
    blender = evaluated_heads(bpy, obj, names, picked)
    k = picked - sampled.frames[0]
    assert np.abs(blender - truth[k]).max() < tol, np.abs(blender - truth[k]).max() / tol
    assert np.abs(blender - mine[k]).max() < tol
    return rig, sampled, motion


@pytest.mark.parametrize("path", SHARED_BVH_ALL, ids=lambda p: p.stem)
def test_bvh_written_by_ikrig_reads_the_same_through_blenders_importer(path, tmp_path):
    fresh_scene(bpy)
    out = tmp_path / path.name
    write_clip(out, read_clip(path))
    obj = import_bvh(bpy, out)
    _check_against_file(obj, read_clip(out), TOL)


@pytest.mark.parametrize("path", SHARED_GLTF_ALL, ids=lambda p: p.stem)
def test_gltf_written_by_ikrig_reads_the_same_through_blenders_importer(path, tmp_path):
    fresh_scene(bpy)
    out = tmp_path / path.name
    write_clip(out, read_clip(path))
    written = read_clip(out)
    obj = import_gltf(bpy, out, written.motion.frame_time)
    _check_against_file(obj, written, TOL)


def _make_rig(scene, mode):
    """A five-bone armature with rolled bones, one connected, every bone in ``mode``, keyed
    at frames 1..8 (location, rotation, uniform scale) with random values; the object turned,
    scaled and moved, the scene in centimetres."""
    arm = bpy.data.armatures.new("rig")
    obj = bpy.data.objects.new("rig", arm)
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    spec = [("root", None, (0, 0, 1), (0, 0.2, 1.3), 0.3, False),
            ("spine", "root", (0, 0.2, 1.3), (0, 0.1, 1.8), -0.7, True),
            ("arm", "spine", (0.3, 0.1, 1.7), (0.8, 0.2, 1.6), 1.1, False),
            ("leg", "root", (0.1, 0, 0.9), (0.15, -0.1, 0.1), 2.0, False),
            ("foot", "leg", (0.15, -0.1, 0.1), (0.15, -0.3, 0.0), 0.0, True)]  # fmt: skip
    for name, parent, head, tail, roll, connect in spec:
        eb = arm.edit_bones.new(name)
        eb.head, eb.tail, eb.roll = head, tail, roll
        if parent:
            eb.parent = arm.edit_bones[parent]
            eb.use_connect = connect
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.rotation_euler = (0.3, -0.2, 1.0)
    obj.location = (1.0, 2.0, 0.5)
    obj.scale = (1.5, 1.5, 1.5)
    scene.unit_settings.scale_length = 0.01
    rng = np.random.default_rng(MODES.index(mode))
    for pb in obj.pose.bones:
        pb.rotation_mode = mode
        for f in range(1, 9):
            if mode == "QUATERNION":
                q = rng.normal(size=4)
                pb.rotation_quaternion = q / np.linalg.norm(q)
            elif mode == "AXIS_ANGLE":
                axis = rng.normal(size=3)
                pb.rotation_axis_angle = [rng.uniform(-3, 3), *(axis / np.linalg.norm(axis))]
            else:
                pb.rotation_euler = rng.uniform(-3, 3, 3)
            pb.location = rng.uniform(-0.5, 0.5, 3)
            pb.scale = [rng.uniform(0.7, 1.4)] * 3
            for prop in ("location", mode_path(mode), "scale"):
                pb.keyframe_insert(prop, frame=f)
    scene.frame_start, scene.frame_end = 1, 8
    bpy.context.view_layer.update()  # the object's matrix_world
    return obj


@pytest.mark.parametrize("mode", MODES)
def test_an_action_written_back_unchanged_keeps_its_fcurve_values(mode):
    scene = fresh_scene(bpy)
    obj = _make_rig(scene, mode)
    original = obj.animation_data.action
    before = original_fcurves(obj, original)
    rig, sampled, motion = read_motion(obj, scene)
    assert motion.num_frames == 8
    heads = evaluated_heads(bpy, obj, rig.names, sampled.frames)
    np.testing.assert_allclose(motion.positions_world(), heads, atol=1e-6)
    action, changed = write_action(obj, rig, sampled, motion, scene, all_bones=True)
    assert changed.all() and action.name == f"{original.name}_ikrig"
    assert obj.animation_data.action == action
    untouched = original_fcurves(obj, original)
    assert untouched.keys() == before.keys()
    assert all(np.array_equal(untouched[k], before[k]) for k in before)  # the original
    after = original_fcurves(obj, action)
    assert after.keys() == before.keys()
    for key, co in before.items():
        np.testing.assert_allclose(after[key], co, atol=1e-6, err_msg=str(key))
    np.testing.assert_allclose(
        evaluated_heads(bpy, obj, rig.names, sampled.frames), heads, atol=1e-6
    )


def test_a_changed_bone_is_keyed_and_blender_poses_it_as_ikrig_does():
    """Turn one joint of a clip in ikrig, write it: only that bone gets new keys, and
    Blender's evaluated pose is ikrig's FK of the changed clip."""
    path = SHARED_BVH_ALL[0] if SHARED_BVH_ALL else pytest.skip("no shared clips")
    scene = fresh_scene(bpy)
    obj = import_bvh(bpy, path)
    rig, sampled, motion = read_motion(obj, scene)
    j = motion.skeleton.index(
        next(
            n
            for n in motion.skeleton.names
            if "knee" in n.lower() or "leg" in n.lower() and "up" not in n.lower()
        )
    )
    t = np.linspace(0, 1, motion.num_frames)
    turn = quat_from_axis_angle(np.array([1.0, 0, 0]), 0.5 * np.sin(6 * t))
    rl = np.array(motion.rotations_local)
    rl[:, j] = quat_mul(rl[:, j], turn)
    edited = motion.replace(rotations_local=rl)
    action, changed = write_action(obj, rig, sampled, edited, scene)
    assert np.flatnonzero(changed).tolist() == [j]
    picked = some_frames(sampled.frames, 12)
    blender = evaluated_heads(bpy, obj, motion.skeleton.names, picked)
    truth = edited.positions_world()[picked - sampled.frames[0]]
    assert np.abs(blender - truth).max() < TOL * leg_length(motion)


def test_no_armature_or_no_action_is_an_input_error():
    scene = fresh_scene(bpy)
    with pytest.raises(InputError, match="armature"):
        read_motion(None, scene)
    arm = bpy.data.armatures.new("bare")
    obj = bpy.data.objects.new("bare", arm)
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    arm.edit_bones.new("b").tail = (0, 0, 1)
    bpy.ops.object.mode_set(mode="OBJECT")
    with pytest.raises(InputError, match="no action"):
        read_motion(obj, scene)
