"""Issue 14: legs found on glTF rigs. A glTF skeleton's bind pose lives in its nodes'
rotations, which ikrig's offsets-only Skeleton does not hold, so the shape search reads a
reference pose in world space (``find_legs(..., pose_world=)``): a pose, or a clip's frames
read as their median pose. Names still win where they name a leg; ambiguous names
(CesiumMan's ``leg_joint_*``, all claiming one role) fall back to the shape; a pose with four
limbs down to the ground (the Fox) is refused by the shape, and its legs are found by name
with its arms as front legs (issue 36)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import FOX_LEGS, SHARED_BVH, SHARED_GLTF

from ikrig.character import find_legs, pelvis_joint
from ikrig.character.legs import _by_topology
from ikrig.character.shape import reference_pose
from ikrig.errors import InputError
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

GLTF = SHARED_GLTF


def _clip(name: str, animation: str | None = None):
    pytest.importorskip("pygltflib")
    from ikrig.io import read_gltf

    path = GLTF / f"{name}.glb"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    return read_gltf(path, animation=animation)


def _names(sk, legs):
    return [
        (g.side, *(sk.names[j] for j in g.joints), sk.names[g.toe] if g.toe >= 0 else None)
        for g in legs.legs
    ]


# ----------------------------------------------------------------------------- real files
def test_cesium_man_by_shape_of_its_walk():
    clip = _clip("CesiumMan")
    sk = clip.skeleton
    with pytest.raises(InputError, match="no legs found"):
        find_legs(sk)  # the rest pose of its offsets is no pose: rotations hold the bind pose
    legs = find_legs(sk, pose_world=clip.motion.positions_world())
    assert _names(sk, legs) == [
        ("left", "leg_joint_L_1", "leg_joint_L_2", "leg_joint_L_3", "leg_joint_L_5"),
        ("right", "leg_joint_R_1", "leg_joint_R_2", "leg_joint_R_3", "leg_joint_R_5"),
    ]
    assert sk.names[pelvis_joint(sk, legs)] == "Skeleton_torso_joint_1"
    assert 0.5 < legs.leg_length < 0.6  # metres: a 1.15 m figure


@pytest.mark.parametrize("animation", ["walk", "run", "idle"])
def test_godot_robot_by_name_whatever_the_pose(animation):
    clip = _clip("GodotPlatformerPlayer", animation)
    sk = clip.skeleton
    want = [
        ("left", "l-thigh", "l-leg", "l-foot", None),
        ("right", "r-thigh", "r-leg", "r-foot", None),
    ]
    assert _names(sk, find_legs(sk)) == want
    assert _names(sk, find_legs(sk, pose_world=clip.motion.positions_world())) == want


@pytest.mark.parametrize("animation", ["Walk", "Run", "Survey"])
def test_fox_finds_its_four_legs_by_name_as_named_by_hand(animation):
    """Issue 36: the hind legs by name (``b_LeftLeg01`` > ``b_LeftLeg02`` > ``b_LeftFoot01``,
    segments of one leg), the arms as front legs because their hands reach the floor in
    the clip: the same four legs, labels and leg length as ``FOX_LEGS`` given by hand. The
    shape search alone still finds no two of the four (nor the hock as a knee)."""
    clip = _clip("Fox", animation)
    sk = clip.skeleton
    pos = clip.motion.positions_world()
    assert _by_topology(sk, pos) == []
    found = find_legs(sk, pose_world=pos)
    given = find_legs(sk, FOX_LEGS, pose_world=pos)
    assert found == given
    assert [g.side for g in found.legs] == ["hind_left", "hind_right", "front_left", "front_right"]
    assert sk.names[pelvis_joint(sk, found)] == "b_Hip_01"


# ----------------------------------------------------------------------------- made by code
def _biped() -> Skeleton:
    """Pelvis at 1.0 with a spine and arms hanging, two legs named j*: no names to read."""
    names = ["p", "spine", "arm_a", "elbow_a", "hand_a", "arm_b", "elbow_b", "hand_b"]
    parents = [-1, 0, 1, 2, 3, 1, 5, 6]
    offsets = [[0, 1, 0], [0, 0.5, 0], [0.2, 0, 0], [0, -0.25, 0], [0, -0.25, 0],
               [-0.2, 0, 0], [0, -0.25, 0], [0, -0.25, 0]]  # fmt: skip
    for k, x in enumerate((0.1, -0.1)):
        n = len(names)
        names += [f"h{k}", f"k{k}", f"a{k}", f"t{k}"]
        parents += [0, n, n + 1, n + 2]
        offsets += [[x, -0.05, 0], [0, -0.45, 0], [0, -0.42, 0], [0, -0.06, 0.1]]
    return Skeleton(tuple(names), parents, offsets)


def test_a_clip_is_read_as_its_median_pose_not_its_first_frame():
    """Frame 0 lifts a foot high (no second foot near the ground in that frame alone); over
    the clip each foot is down half the time, and the clip travels along Z."""
    sk = _biped()
    F = 20
    m = Motion.rest(sk, batch_shape=(F,), frame_time=1 / 30)
    pl = m.positions_local.copy()
    pl[:, 0, 2] = np.linspace(0, 3, F)  # travels
    pl[: F // 2 - 2, sk.index("h0"), 1] += 0.3  # leg 0 lifted in 8 frames of 20
    m = m.replace(positions_local=pl)
    frames = m.positions_world()
    assert _by_topology(sk, frames[0]) == []
    legs = _by_topology(sk, frames)
    assert [(g.side, g.hip, g.knee, g.ankle, g.toe) for g in legs] == [
        (g.side, g.hip, g.knee, g.ankle, g.toe) for g in _by_topology(sk)]  # fmt: skip
    ref = reference_pose(sk, frames)
    first = frames[0][:, [0, 2]] - frames[0][:1, [0, 2]]  # the shape, not the travel
    np.testing.assert_allclose(ref[:, [0, 2]] - ref[:1, [0, 2]], first, atol=1e-12)


def test_four_limbs_down_are_refused_two_hanging_arms_are_not():
    sk = _biped()
    assert len(_by_topology(sk)) == 2  # hands at 1.0, feet at 0: two limbs down
    low = Motion.rest(sk).positions_world()
    for hand in ("hand_a", "hand_b"):  # the arms reach the floor, on all fours
        low[sk.index(hand), 1] = 0.05
    assert _by_topology(sk, low) == []
    low[sk.index("hand_b"), 1] = 1.0  # three limbs down: still more than two legs
    assert _by_topology(sk, low) == []


@pytest.mark.parametrize("shape", [(3,), (5, 3), (2, 4, 5, 3)])
def test_pose_world_of_the_wrong_shape_is_refused(shape):
    sk = _biped()
    anonymous = Skeleton(tuple(f"j{j}" for j in range(sk.num_joints)), sk.parents, sk.offsets)
    with pytest.raises(InputError, match="pose_world: expected shape"):
        find_legs(anonymous, pose_world=np.zeros(shape))
    bad = Motion.rest(sk).positions_world()
    bad[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        find_legs(anonymous, pose_world=bad)


# ----------------------------------------------------------------------------- BVH kept
def test_shared_bvh_legs_are_the_same_with_their_motion():
    from test_legs import SHARED_CLIPS

    from ikrig.io import read_bvh

    if not SHARED_CLIPS:
        pytest.skip(f"{SHARED_BVH} is not present")
    for path in SHARED_CLIPS:
        motion = read_bvh(path).motion
        sk = motion.skeleton
        want = _names(sk, find_legs(sk))
        assert _names(sk, find_legs(sk, pose_world=motion.positions_world())) == want, path.name


def test_every_y_up_shared_clip_is_found_by_the_shape_of_its_motion():
    """Without names, a clip's median pose finds the same legs, sides included, as the
    names do in every shared Y-up clip: the Bandai ones too, whose rest pose lies along X
    (the Z-up pybvh clip needs names). The sides come from where the toes point, or the
    knees bend, whichever way the clip faces."""
    from test_legs import SHARED_CLIPS, _anonymous

    from ikrig.io import read_bvh

    if not SHARED_CLIPS:
        pytest.skip(f"{SHARED_BVH} is not present")
    checked = 0
    for path in SHARED_CLIPS:
        if "zup" in path.name:
            continue
        motion = read_bvh(path).motion
        sk = motion.skeleton
        want = [(g.side, g.hip, g.knee, g.ankle, g.toe) for g in find_legs(sk).legs]
        got = _by_topology(_anonymous(sk), motion.positions_world())
        assert [(g.side, g.hip, g.knee, g.ankle, g.toe) for g in got] == want, path.name
        checked += 1
    assert checked >= min(6, len(SHARED_CLIPS) - 1)


def test_cesium_man_without_names_faces_where_its_toes_point():
    from test_legs import _anonymous

    clip = _clip("CesiumMan")
    frames = clip.motion.positions_world()
    named = find_legs(clip.skeleton, pose_world=frames)
    got = _by_topology(_anonymous(clip.skeleton), frames)
    assert [(g.side, *g.joints, g.toe) for g in got] == [
        (g.side, *g.joints, g.toe) for g in named.legs]  # fmt: skip
