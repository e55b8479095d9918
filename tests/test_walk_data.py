"""The built-in humanoid and procedural walk (ikrig.data)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SHARED_BVH

from ikrig.character import estimate_sole, find_legs
from ikrig.data import humanoid_skeleton, walk_clip, walk_contacts
from ikrig.data.humanoid import ANKLE_HEIGHT, TOE_HEIGHT
from ikrig.errors import InputError
from ikrig.io import to_bvh_clip
from ikrig.metrics import CONTACT_SPEED, foot_metrics, knee_angles
from ikrig.pose import Motion, end_site_positions

CMU_NAMES = (
    "Hips",
    "LHipJoint",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RHipJoint",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
    "LowerBack",
    "Spine",
    "Spine1",
    "Neck",
    "Neck1",
    "Head",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "LeftFingerBase",
    "LeftHandIndex1",
    "LThumb",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "RightFingerBase",
    "RightHandIndex1",
    "RThumb",
)

CASES = [  # (seconds, fps, speed, turn)
    (4.0, 60.0, 1.2, 0.0),
    (3.0, 30.0, 0.6, 0.0),
    (2.0, 120.0, 1.8, 0.0),
    (4.0, 60.0, 1.2, 0.6),
    (3.0, 50.0, 1.0, -1.2),
]


@pytest.fixture(scope="module")
def clips():
    """Each case's clip, FK and ground-truth contacts, computed once."""
    out = {}
    for case in CASES:
        m = walk_clip(*case)
        out[case] = (m, m.fk(), walk_contacts(*case))
    return out


def _idx(name):
    return CMU_NAMES.index(name)


def test_skeleton_names_hierarchy_and_proportions():
    sk = humanoid_skeleton()
    assert sk.num_joints == 31 and sk.names == CMU_NAMES
    rest = Motion.rest(sk).positions_world()
    assert rest[0, 1] == pytest.approx(0.95)
    legs = find_legs(sk)
    assert legs.leg_length == pytest.approx(0.85, abs=0.03)
    assert [sk.names[j] for j in legs.legs[0].joints] == ["LeftUpLeg", "LeftLeg", "LeftFoot"]
    assert sk.names[legs.legs[1].toe] == "RightToeBase"
    # feet flat on y = 0: ankle 0.08 m, toe joint 0.02 m; left is +X, toes point to +Z
    for side in ("Left", "Right"):
        assert rest[_idx(f"{side}Foot"), 1] == pytest.approx(ANKLE_HEIGHT)
        assert rest[_idx(f"{side}ToeBase"), 1] == pytest.approx(TOE_HEIGHT)
        assert rest[_idx(f"{side}ToeBase"), 2] > rest[_idx(f"{side}Foot"), 2]
    assert rest[_idx("LeftUpLeg"), 0] > 0 > rest[_idx("RightUpLeg"), 0]
    assert (
        rest[_idx("LeftHand"), 0] > 0.5
        and 1.6 < end_site_positions(sk, *Motion.rest(sk).fk())[:, 1].max() < 1.9
    )
    # every leaf has an end site
    leaves = {j for j in range(31) if not sk.children(j)}
    assert set(sk.end_site_parents.tolist()) == leaves


def test_skeleton_matches_the_shared_cmu_hierarchy():
    path = SHARED_BVH / "xia_neutral_walk.bvh"
    if not path.exists():
        pytest.skip("shared clips not present")
    from ikrig.io import read_bvh

    ref = read_bvh(path).motion.skeleton
    sk = humanoid_skeleton()
    assert sk.names == ref.names
    assert np.array_equal(sk.parents, ref.parents)
    assert sorted(sk.end_site_parents.tolist()) == sorted(ref.end_site_parents.tolist())


@pytest.mark.parametrize("case", CASES, ids=str)
def test_walk_shape_frame_time_and_finite(clips, case):
    m, (rot_w, pos_w), contacts = clips[case]
    seconds, fps, _, _ = case
    F = int(round(seconds * fps))
    assert m.batch_shape == (F,) and m.frame_time == pytest.approx(1.0 / fps)
    assert contacts.shape == (F, 2) and contacts.dtype == bool
    assert np.isfinite(pos_w).all() and np.isfinite(rot_w).all()
    assert np.allclose(np.linalg.norm(m.rotations_local, axis=-1), 1.0, atol=1e-9)
    # both feet alternate: each is planted part of the time, and never both in the air
    assert 0.45 < contacts.mean() < 0.75
    assert contacts.any(axis=1).all()


def _planted_slide(pos_w, contacts):
    """Per foot, the horizontal step (m) of the lower sole point over contact transitions."""
    out = []
    for k, side in enumerate(("Left", "Right")):
        heel = pos_w[:, _idx(f"{side}Foot")]
        toe = pos_w[:, _idx(f"{side}ToeBase")]
        lower = (heel[:, 1] - ANKLE_HEIGHT) <= (toe[:, 1] - TOE_HEIGHT)
        pts = np.where(lower[:, None], heel, toe)  # chosen at t
        nxt = np.where(lower[:-1, None], heel[1:], toe[1:])
        both = contacts[:-1, k] & contacts[1:, k]
        step = np.linalg.norm((nxt - pts[:-1])[:, [0, 2]], axis=-1)
        out.append(step[both])
    return out


@pytest.mark.parametrize("case", CASES, ids=str)
def test_stance_feet_do_not_slide(clips, case):
    m, (_, pos_w), contacts = clips[case]
    for steps in _planted_slide(pos_w, contacts):
        assert len(steps) > 10
        assert steps.max() < 1e-3  # less than 1 mm per frame
    # ... and the outsider's metrics agree: the foot joints they see in contact (low and
    # slower than 0.5 leg/s, rolling included) move at a fifth of that at most on average
    legs = find_legs(m.skeleton)
    r = foot_metrics(m, m, None, legs)
    assert r["skate"] < 0.2 * 100.0 * CONTACT_SPEED and r["pops"] == 0
    assert r["skate_rel"] == 1.0 and r["pen_p95"] < 1e-9 and r["height_dev_max"] == 0.0


@pytest.mark.parametrize("case", CASES, ids=str)
def test_feet_stay_on_or_above_the_floor(clips, case):
    m, (rot_w, pos_w), contacts = clips[case]
    sites = end_site_positions(m.skeleton, rot_w, pos_w)
    for k, side in enumerate(("Left", "Right")):
        ankle = pos_w[:, _idx(f"{side}Foot"), 1]
        toe = pos_w[:, _idx(f"{side}ToeBase"), 1]
        assert ankle.min() > ANKLE_HEIGHT - 1e-6
        assert toe.min() > TOE_HEIGHT - 1e-6
        tip = sites[:, list(m.skeleton.end_site_parents).index(_idx(f"{side}ToeBase")), 1]
        assert tip.min() > TOE_HEIGHT - 1e-6
        # in stance the foot touches the floor: heel or toe at its planted height
        down = np.minimum(ankle - ANKLE_HEIGHT, toe - TOE_HEIGHT)
        assert np.abs(down[contacts[:, k]]).max() < 1e-6
        # the swing foot clears the floor in mid-swing
        assert down[~contacts[:, k]].max() > 0.05


@pytest.mark.parametrize("case", CASES, ids=str)
def test_knees_bend_forward_and_never_hyperextend(clips, case):
    m, (_, pos_w), _ = clips[case]
    legs = find_legs(m.skeleton)
    angles = knee_angles(pos_w, legs)
    assert angles.max() < np.pi - np.radians(5)  # never straight, never beyond
    assert angles.min() > np.radians(90)
    heading = np.gradient(pos_w[:, 0, [0, 2]], axis=0)
    heading /= np.linalg.norm(heading, axis=-1, keepdims=True)
    root_fwd = np.stack([heading[:, 0], 0 * heading[:, 0], heading[:, 1]], axis=-1)
    left = np.cross(np.array([0.0, 1.0, 0.0]), root_fwd)  # +X when facing +Z
    for leg in legs.legs:
        thigh = pos_w[:, leg.knee] - pos_w[:, leg.hip]
        shin = pos_w[:, leg.ankle] - pos_w[:, leg.knee]
        # forward bend: the shin turns backward from the thigh about the character's left
        assert (np.sum(np.cross(thigh, shin) * left, axis=-1) > 0).all()


def test_toes_bend_at_push_off_and_arms_swing_opposite(clips):
    m, (rot_w, pos_w), contacts = clips[CASES[0]]
    toe_bend = 2 * np.arccos(np.clip(np.abs(m.rotations_local[:, _idx("LeftToeBase"), 3]), 0, 1))
    assert toe_bend.max() > 0.5 and np.median(toe_bend) < 0.05
    # forward offsets (along +Z, the walking direction) relative to the hips
    hips_z = pos_w[:, 0, 2]
    l_hand = pos_w[:, _idx("LeftHand"), 2] - hips_z
    r_hand = pos_w[:, _idx("RightHand"), 2] - hips_z
    l_foot = pos_w[:, _idx("LeftFoot"), 2] - hips_z
    r_foot = pos_w[:, _idx("RightFoot"), 2] - hips_z
    assert np.corrcoef(l_hand, r_foot)[0, 1] > 0.7
    assert np.corrcoef(r_hand, l_foot)[0, 1] > 0.7
    assert np.corrcoef(l_hand, l_foot)[0, 1] < -0.7
    # the chest counter-rotates against the pelvis
    hip_axis = pos_w[:, _idx("LeftUpLeg")] - pos_w[:, _idx("RightUpLeg")]
    chest_axis = pos_w[:, _idx("LeftArm")] - pos_w[:, _idx("RightArm")]
    pelvis_yaw = np.arctan2(-hip_axis[:, 2], hip_axis[:, 0])
    chest_yaw = np.arctan2(-chest_axis[:, 2], chest_axis[:, 0])
    assert np.corrcoef(pelvis_yaw, chest_yaw)[0, 1] < -0.5


def test_walk_moves_at_speed_and_turns(clips):
    m, (_, pos_w), _ = clips[CASES[0]]
    seconds, fps, speed, _ = CASES[0]
    travelled = pos_w[-1, 0, 2] - pos_w[0, 0, 2]
    assert travelled == pytest.approx(speed * (seconds - 1 / fps), rel=0.03)
    assert abs(pos_w[:, 0, 0]).max() < 0.05  # straight along +Z, small sway
    hips = pos_w[:, 0, 1]
    assert 0.85 < hips.min() < hips.max() < 0.95
    m, (_, pos_w), _ = clips[CASES[3]]  # turning left at 0.6 rad/s
    t = np.arange(m.num_frames) * m.frame_time
    a, b = m.num_frames - 61, m.num_frames - 1  # a chord over a second: the arc's tangent
    step = pos_w[b, 0, [0, 2]] - pos_w[a, 0, [0, 2]]
    heading = np.arctan2(step[0], step[1])
    assert heading == pytest.approx(0.6 * 0.5 * (t[a] + t[b]), abs=0.08)


def test_contacts_match_the_pipeline_detection(clips):
    from ikrig.foot.stages.contacts import detect_contacts, horizontal_speed

    m, (rot_w, pos_w), truth = clips[CASES[0]]
    legs = find_legs(m.skeleton)
    sole = estimate_sole(m, legs)
    pts = sole.points_world(rot_w, pos_w)
    heights = pts[..., 1] - sole.floor - sole.heights
    found = detect_contacts(
        heights, horizontal_speed(pts, m.frame_time), legs.leg_length, m.frame_time
    )
    assert (found == truth).mean() > 0.9
    assert sole.floor == pytest.approx(TOE_HEIGHT, abs=1e-6)


def test_deterministic_and_frame_rate_consistent():
    a = walk_clip(1.0, 60.0)
    b = walk_clip(1.0, 60.0)
    assert np.array_equal(a.rotations_local, b.rotations_local)
    fine = walk_clip(1.0, 120.0).positions_world()[::2]
    coarse = a.positions_world()
    assert np.abs(fine - coarse).max() < 0.02


def test_bvh_round_trip(tmp_path):
    from ikrig.io import read_bvh, write_bvh

    m = walk_clip(1.0, 30.0)
    path = tmp_path / "walk.bvh"
    write_bvh(path, to_bvh_clip(m))
    back = read_bvh(path).motion
    assert back.skeleton.names == CMU_NAMES
    assert back.frame_time == pytest.approx(m.frame_time)
    assert np.abs(back.positions_world() - m.positions_world()).max() < 1e-4
    legs = find_legs(back.skeleton)
    assert legs.leg_length == pytest.approx(0.85, abs=1e-5)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"seconds": 0.0},
        {"fps": -1.0},
        {"speed": 0.0},
        {"speed": 3.0},
        {"turn": 2.0},
        {"turn": float("nan")},
    ],
)
def test_bad_arguments_raise(kwargs):
    with pytest.raises(InputError):
        walk_clip(**kwargs)
    with pytest.raises(InputError):
        walk_contacts(**kwargs)
