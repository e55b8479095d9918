"""The add-on's operators in headless Blender (issue 39): ``bpy.ops.ikrig.foot_placement``
on every shared clip, imported by Blender's own BVH and glTF importers, over stairs and a
slope built in the scene, read back through Blender's evaluated pose and measured as
``ikrig foot`` measures its result on the same clip and the same ground (an OBJ file of the
same surface): the same joint positions and the same measures within 0.5 % of a leg. Then
``pin`` and ``look_at`` against Blender's evaluated pose, and clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest
from blender_scene import (
    SHARED_BVH_ALL,
    SHARED_GLTF_ALL,
    add_mesh_object,
    evaluated_pose,
    fresh_scene,
    import_bvh,
    import_gltf,
    slope_mesh,
    stairs_mesh,
    write_obj,
)

import ikrig.blender
from ikrig.app.placement import FootPlacement, clip_with_time, place_clip, result_metrics
from ikrig.blender.armature import frame_range, read_motion
from ikrig.blender.keys import original_fcurves
from ikrig.character import detect_up, find_legs, pelvis_joint, to_y_up
from ikrig.ground.views import RaisedGround
from ikrig.math.axes import points_to_y_up, to_y_up_quat
from ikrig.math.quat import quat_conj, quat_mul, quat_rotate
from ikrig.metrics import foot_metrics
from ikrig.pose import Motion

bpy = pytest.importorskip("bpy")

LEG_SHARE = 0.005
"""Agreement with ``ikrig foot``: 0.5 % of a leg, in every measure (% of a leg) and in the
joints' positions, beyond twice what ``ikrig foot`` itself moves them when its input is
rounded to float32 as Blender keeps it. The pipeline is that sensitive on some clips:
``ikrig foot`` on bandai2_walk_normal over these stairs moves joints by 0.8 % of a leg in
some frames when its input moves by 2e-5 units, its measures by less than 0.1."""
MESHES = {"stairs": stairs_mesh, "slope": slope_mesh}


@pytest.fixture(scope="module", autouse=True)
def registered():
    ikrig.blender.register()
    yield
    ikrig.blender.unregister()


def _import(path, frame_time):
    if path.suffix == ".bvh":
        return import_bvh(bpy, path)
    return import_gltf(bpy, path, frame_time)


def _ground_for(source_y_up, up, kind, leg):
    """The ground's triangles in the clip's own axes (as a mesh file beside it would be),
    laid along the clip's path in its Y-up world."""
    j = pelvis_joint(source_y_up.skeleton, leg)
    path_xz = source_y_up.positions_world()[:, j][:, [0, 2]]
    v, f = MESHES[kind](path_xz, leg.leg_length)
    back = quat_conj(to_y_up_quat(up))
    return quat_rotate(back, v), f


def _with_blender_tips(source_y_up, obj, up):
    """The clip with its end sites at the tails of the armature's leaf bones, as Blender's
    BVH importer made them: the file's own, except where the file has a zero-length end
    site (the importer gives that bone a length of its own)."""
    import dataclasses

    sk = source_y_up.skeleton
    leaves = [j for j in range(sk.num_joints) if j not in set(sk.parents.tolist())]
    turn = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]) @ np.array(obj.matrix_world)[:3, :3]
    tips = []
    for j in leaves:
        bone = obj.data.bones[sk.names[j]]
        tip = turn @ (np.array(bone.tail_local) - np.array(bone.head_local))
        tips.append(quat_rotate(quat_conj(to_y_up_quat(up)), tip))  # the file's axes
    skeleton = dataclasses.replace(sk, end_site_parents=np.array(leaves, dtype=np.int64),
                                   end_site_offsets=np.array(tips).reshape(-1, 3))  # fmt: skip
    return source_y_up.replace(skeleton=skeleton)


def _float32_spread(source, ground, legs, up, truth):
    """Per frame, the largest joint move (in legs) of ``ikrig foot``'s result when its
    input is rounded to float32, as Blender keeps F-curve values."""
    rounded = source.replace(
        rotations_local=source.rotations_local.astype(np.float32).astype(np.float64),
        positions_local=source.positions_local.astype(np.float32).astype(np.float64),
    )
    again = place_clip(rounded, str(ground), ["full"], legs, FootPlacement(up=up))
    moved = again.results["full"].motion.positions_world() - truth
    return np.abs(moved).max(axis=(1, 2)) / legs.leg_length


ACCELERATIONS = ("pelvis_acc", "pelvis_acc_source")
"""Measures in % of a leg per second squared: no length, so compared within
:data:`ACCELERATION_SHARE` of their value."""

ACCELERATION_SHARE = 0.01
"""Blender's evaluated pelvis differs from ikrig's by up to 0.1 % of a leg (the clip as
Blender imports it, on float32 keys), which a second difference over one frame turns into
up to 2 % of a frame's acceleration (bandai2_walk_normal on the stairs: 1067 against 1057
at one frame, 20 units apart at another before issue 34's root plan); the p99 moved by
0.3 % (3.2 units), over the 0.5 units a length's tolerance would allow."""


def _same_measures(mine, theirs):
    """Every overall measure of the two metric dicts (in % of a leg) within 0.5 % of a
    leg, an acceleration within :data:`ACCELERATION_SHARE` of its value; the same
    misses."""
    assert mine["misses"] == theirs["misses"]
    for key, value in theirs.items():
        if isinstance(value, float) and mine[key] is not None:
            tol = ACCELERATION_SHARE * abs(value) if key in ACCELERATIONS else 100 * LEG_SHARE
            assert abs(mine[key] - value) <= tol, (key, mine[key], value)


@pytest.mark.parametrize("kind", sorted(MESHES))
@pytest.mark.parametrize("path", SHARED_BVH_ALL + SHARED_GLTF_ALL, ids=lambda p: p.stem)
def test_foot_placement_in_blender_meets_ikrig_foot(path, kind, tmp_path):
    scene = fresh_scene(bpy)
    clip = clip_with_time(str(path))
    up = detect_up(clip.motion)
    source = to_y_up(clip.motion, up)
    obj = _import(path, clip.motion.frame_time)
    bvh = path.suffix == ".bvh"
    if bvh:  # ikrig foot on the same rig: its end sites where Blender has them
        source = _with_blender_tips(source, obj, up)
    legs = find_legs(source.skeleton, None, source.positions_world())
    vertices, faces = _ground_for(source, up, kind, legs)
    add_mesh_object(bpy, "Ground", vertices, faces, subdivide=kind == "slope")
    write_obj(tmp_path / "ground.obj", vertices, faces)
    placed = place_clip(source, str(tmp_path / "ground.obj"), ["full"], legs,
                        FootPlacement(up=up))  # fmt: skip
    result = placed.results["full"]

    frames = frame_range(obj, scene)
    names = source.skeleton.names
    q = to_y_up_quat(up)
    first, _ = evaluated_pose(bpy, obj, names, frames[:1])
    rest = quat_mul(quat_conj(quat_mul(q, first[0])), source.fk()[0][0])  # rest rotations
    if bvh:  # a BVH joint's rest is the identity
        np.testing.assert_allclose(np.abs(rest[:, 3]), 1.0, atol=1e-5)
    original = obj.animation_data.action
    before = original_fcurves(obj, original)
    bpy.context.view_layer.objects.active = obj
    done = bpy.ops.ikrig.foot_placement(ground="Ground", mode="full", end_sites=bvh)
    assert done == {"FINISHED"}
    assert obj.animation_data.action.name == f"{original.name}_ikrig"
    after = original_fcurves(obj, original)
    assert all(np.array_equal(after[k], before[k]) for k in before)  # untouched
    assert "full:" in scene.ikrig.report

    rot, pos = evaluated_pose(bpy, obj, names, frames)
    pos, rot = points_to_y_up(pos, up), quat_mul(quat_mul(q, rot), rest)
    truth = result.motion.positions_world()
    worst = np.abs(pos - truth).max(axis=(1, 2)) / legs.leg_length  # per frame, in legs
    if worst.max() > LEG_SHARE:  # as far as ikrig foot itself moves on float32 keys?
        spread = _float32_spread(source, tmp_path / "ground.obj", legs, up, truth)
        assert worst.max() <= LEG_SHARE + 2 * spread.max(), (worst.max(), spread.max())
    seen = Motion.from_world(result.motion.skeleton, rot, pos, source.frame_time)
    floors = RaisedGround(placed.world(), -result.sole.floor)
    mine = foot_metrics(seen, placed.source, floors, result.legs)
    _same_measures(mine, result_metrics(result, placed.source, placed.world()))


def _walk(bpy):
    scene = fresh_scene(bpy)
    path = next(p for p in SHARED_BVH_ALL if "xia_neutral_walk" in p.name)
    obj = import_bvh(bpy, path)
    return scene, obj, read_motion(obj, scene)


def _empty(name, location_y_up, scene):
    e = bpy.data.objects.new(name, None)
    scene.collection.objects.link(e)
    x, y, z = location_y_up
    e.location = (x, -z, y)
    return e


def test_pin_a_hand_to_an_empty_moving_or_not():
    if not SHARED_BVH_ALL:
        pytest.skip("no shared clips")
    scene, obj, (rig, sampled, motion) = _walk(bpy)
    hand = next(n for n in motion.skeleton.names if "hand" in n.lower())
    j = motion.skeleton.index(hand)
    k0, k1, blend = 40, 70, 6
    at = motion.positions_world()[55, j] + [0.0, 5.0, 0.0]
    empty = _empty("Target", at, scene)
    original = obj.animation_data.action
    bpy.context.view_layer.objects.active = obj
    f0 = int(sampled.frames[0])
    args = dict(bone=hand, target="Target", frame_start=f0 + k0, frame_end=f0 + k1, blend=blend)
    assert bpy.ops.ikrig.pin(**args) == {"FINISHED"}
    _, pos = evaluated_pose(bpy, obj, motion.skeleton.names, sampled.frames)
    assert np.abs(pos[k0 : k1 + 1, j] - at).max() < 1e-2  # cm: the solver's tolerance
    outside = np.r_[0 : k0 - blend, k1 + blend + 1 : motion.num_frames]
    truth = motion.positions_world()
    assert np.abs(pos[outside] - truth[outside]).max() < 1e-3
    # a moving empty, keyed along a line: the hand follows it frame by frame
    obj.animation_data.action = original
    for k, dx in ((k0, 0.0), (k1, 10.0)):
        empty.location = (at[0] + dx, -at[2], at[1])
        empty.keyframe_insert("location", frame=f0 + k)
    want = []
    for k in range(k0, k1 + 1):
        scene.frame_set(f0 + k)
        x, y, z = empty.matrix_world.translation
        want.append((x, z, -y))
    assert np.ptp(np.array(want)[:, 0]) > 9.0
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.ikrig.pin(**args) == {"FINISHED"}
    _, pos = evaluated_pose(bpy, obj, motion.skeleton.names, sampled.frames)
    assert np.abs(pos[k0 : k1 + 1, j] - want).max() < 1e-2


def test_look_at_turns_the_head_to_the_empty():
    if not SHARED_BVH_ALL:
        pytest.skip("no shared clips")
    from ikrig.app.head import head_forward

    scene, obj, (rig, sampled, motion) = _walk(bpy)
    head = next(n for n in motion.skeleton.names if n.lower() == "head")
    j = motion.skeleton.index(head)
    forward, _ = head_forward(motion, j)
    k0, k1 = 30, 60
    at = motion.positions_world()[45, j] + [100.0, 20.0, 50.0]
    _empty("Look", at, scene)
    bpy.context.view_layer.objects.active = obj
    f0 = int(sampled.frames[0])
    ok = bpy.ops.ikrig.look_at(bone=head, target="Look", frame_start=f0 + k0,
                               frame_end=f0 + k1, blend=5)  # fmt: skip
    assert ok == {"FINISHED"}
    rot, pos = evaluated_pose(bpy, obj, motion.skeleton.names, sampled.frames[k0 : k1 + 1])
    # the reader's joint frames keep the armature's axes (Z up); Blender's evaluated turns
    # are in world axes: the head's forward at rest, in the world, is the axis turned
    forward = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]) @ forward
    facing = quat_rotate(rot[:, j], forward / np.linalg.norm(forward))
    to = at - pos[:, j]
    cos = np.einsum("fi,fi->f", facing, to) / np.linalg.norm(to, axis=-1)
    assert np.degrees(np.arccos(np.clip(cos, -1, 1))).max() < 1.0


def _error(op, **kw):
    with pytest.raises(RuntimeError) as e:
        op(**kw)
    return str(e.value)


def test_bad_input_is_reported_clearly():
    if not SHARED_BVH_ALL:
        pytest.skip("no shared clips")
    scene, obj, (rig, sampled, motion) = _walk(bpy)
    add_mesh_object(bpy, "Far", [[1e5, 0, 1e5], [1e5 + 1, 0, 1e5], [1e5, 0, 1e5 + 1]],
                    [[0, 1, 2]])  # fmt: skip
    bpy.context.view_layer.objects.active = bpy.data.objects["Far"]
    assert "select an armature" in _error(bpy.ops.ikrig.foot_placement, ground="Far")
    bpy.context.view_layer.objects.active = obj
    assert "no object named 'Nope'" in _error(bpy.ops.ikrig.foot_placement, ground="Nope")
    assert "ground" in _error(bpy.ops.ikrig.foot_placement, ground="Far")
    assert "no joint" in _error(bpy.ops.ikrig.foot_placement, ground="Far", legs="a,b,c")
    assert "no joint named 'nope'" in _error(bpy.ops.ikrig.pin, bone="nope", target="Far")
    obj.animation_data.action = None
    assert "no action" in _error(bpy.ops.ikrig.foot_placement, ground="Far")


def test_the_panel_sits_in_the_sidebar_tab():
    panel = bpy.types.IKRIG_PT_panel
    assert (panel.bl_space_type, panel.bl_region_type, panel.bl_category) == (
        "VIEW_3D", "UI", "ikrig")  # fmt: skip
    assert hasattr(bpy.types.Scene, "ikrig")
