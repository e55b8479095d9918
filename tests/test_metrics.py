"""Foot-placement metrics: known answers on small synthetic clips, and the shared clips."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import shared_bvh_files

from ikrig.character import find_legs
from ikrig.errors import InputError
from ikrig.math import quat_from_axis_angle
from ikrig.metrics import (
    ACC_FLOOR,
    POP_THRESHOLD,
    foot_metrics,
    joint_contacts,
    knee_angles,
    knee_pops,
    metrics_table,
)
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

NAMES = (
    "Hips",
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
)
PARENTS = [-1, 0, 1, 2, 3, 0, 5, 6, 7]
OFFSETS = [
    [0.0, 0.95, 0.0],
    [0.1, -0.05, 0.0],
    [0.0, -0.42, 0.0],
    [0.0, -0.40, 0.0],
    [0.0, -0.08, 0.13],
    [-0.1, -0.05, 0.0],
    [0.0, -0.42, 0.0],
    [0.0, -0.40, 0.0],
    [0.0, -0.08, 0.13],
]
LEG = 0.82  # thigh + shin


class FlatGround:
    """Test double: a horizontal ground at ``height``; queries with x > ``miss_x`` miss."""

    def __init__(self, height=0.0, miss_x=np.inf):
        self.height = height
        self.miss_x = miss_x

    def height_at(self, xz):
        xz = np.asarray(xz, dtype=np.float64)
        mask = xz[..., 0] <= self.miss_x
        normals = np.zeros(xz.shape[:-1] + (3,))
        normals[..., 1] = 1.0
        return np.where(mask, self.height, 0.0), normals, mask


def skeleton():
    return Skeleton(NAMES, PARENTS, OFFSETS)


def standing(frames=60, fps=60.0):
    """Both feet flat on y = 0 (toe joints at 0, ankles at 0.08), standing still."""
    return Motion.rest(skeleton(), batch_shape=(frames,), frame_time=1.0 / fps)


def with_root(motion, offset):
    """``motion`` with the root translated by ``offset`` ((3,) or (F, 3))."""
    pos = motion.positions_local.copy()
    pos[:, 0] += offset
    return motion.replace(positions_local=pos)


def bent_knees(motion, flex):
    """Set both knees' flexion (radians, (F,) or scalar) about the X axis."""
    rot = motion.rotations_local.copy()
    q = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.asarray(flex, dtype=np.float64))
    rot[:, 2] = q
    rot[:, 6] = q
    return motion.replace(rotations_local=rot)


def test_identity_result_gives_zeros():
    src = standing()
    legs = find_legs(src.skeleton)
    m = foot_metrics(src, src, FlatGround(0.0), legs)
    for key in ("pen_mean", "pen_p95", "pen_max", "float_mean", "float_p95", "skate"):
        assert m[key] == 0.0, key
    assert m["skate_rel"] == 1.0 and m["pops"] == 0 and m["misses"] == 0
    assert m["bone_drift"] == 0.0 and m["pelvis_dev"] == 0.0 and m["planted_shift"] == 0.0
    assert m["feet"] == ["left", "right"] and set(m["per_foot"]) == {"left", "right"}


def test_sunk_clip_penetrates_by_its_depth_against_each_joints_floor():
    src = standing()
    legs = find_legs(src.skeleton)
    m = foot_metrics(with_root(src, [0.0, -0.02 * LEG, 0.0]), src, None, legs)
    # ankles (floor 0.08) and toes (floor 0) alike: 2 % below their own floors
    assert m["pen_mean"] == pytest.approx(2.0) and m["pen_max"] == pytest.approx(2.0)
    assert m["planted_shift"] == pytest.approx(2.0) and m["float_mean"] == 0.0
    # the same clip over a ground 2 % lower stands on it
    m = foot_metrics(with_root(src, [0.0, -0.02 * LEG, 0.0]), src, FlatGround(-0.02 * LEG), legs)
    assert m["pen_max"] == pytest.approx(0.0, abs=1e-9)


def test_penetration_mean_counts_frames_above_ground_as_zero():
    src = standing()
    legs = find_legs(src.skeleton)
    dy = np.zeros((60, 3))
    dy[:30, 1] = -0.02 * LEG
    m = foot_metrics(with_root(src, dy), src, None, legs)
    assert m["pen_mean"] == pytest.approx(1.0) and m["pen_p95"] == pytest.approx(2.0)


def test_float_counts_contact_frames_only():
    src = standing()
    legs = find_legs(src.skeleton)
    m = foot_metrics(with_root(src, [0.0, 0.01 * LEG, 0.0]), src, None, legs)
    assert m["float_mean"] == pytest.approx(1.0) and m["float_p95"] == pytest.approx(1.0)
    assert m["pelvis_rise"] == pytest.approx(1.0)  # the body rose 1 % over a flat ground
    # a ground raised by 1 % meets it again
    m = foot_metrics(with_root(src, [0.0, 0.01 * LEG, 0.0]), src, FlatGround(0.01 * LEG), legs)
    assert m["float_mean"] == pytest.approx(0.0, abs=1e-9)
    assert m["pelvis_rise"] == pytest.approx(0.0, abs=1e-9)  # as much as the ground rose
    # a source whose feet are in the air has no contact frames: no float value
    lifted = with_root(src, np.linspace([0, 0, 0], [0, 0.5 * LEG, 0], 60))
    assert foot_metrics(lifted, lifted, None, legs)["float_mean"] is not None  # low at first
    t = np.arange(60) / 60.0
    running = with_root(src, np.stack([2.0 * LEG * t, 0 * t, 0 * t], axis=-1))  # 2 leg/s
    assert foot_metrics(running, running, None, legs)["float_mean"] is None


@pytest.mark.parametrize("fps", [30.0, 120.0])
def test_contact_rule_heights_speeds_and_the_50_ms_rules(fps):
    dt, F = 1.0 / fps, int(fps)  # one second
    L = 1.0
    p = np.zeros((F, 1, 3))
    lift = np.zeros(F, dtype=bool)
    lift[int(0.20 * fps) : int(0.20 * fps) + max(1, int(0.03 * fps))] = True  # a 30 ms lift
    lift[int(0.50 * fps) : int(0.80 * fps)] = True  # a 300 ms swing
    lift[int(0.83 * fps) :] = True  # 30 ms down, then up: a contact too short to count
    p[lift, 0, 1] = 0.2 * L
    c, floors = joint_contacts(p, L, dt)
    assert floors.tolist() == [0.0]
    assert c[: int(0.50 * fps), 0].all()  # the 30 ms lift is a gap, filled
    assert not c[int(0.50 * fps) : int(0.80 * fps), 0].any()
    assert not c[int(0.80 * fps) :, 0].any()  # the 30 ms contact is dropped
    # moving faster than 0.5 leg/s is no contact
    fast = np.zeros((F, 1, 3))
    fast[:, 0, 0] = 0.6 * L * np.arange(F) * dt
    assert not joint_contacts(fast, L, dt)[0].any()


def test_sliding_planted_foot_gives_known_skate():
    src = standing()
    legs = find_legs(src.skeleton)
    speed = 0.1 * LEG  # per second, along X
    t = np.arange(60) / 60.0
    res = with_root(src, np.stack([speed * t, 0 * t, 0 * t], axis=-1))
    m = foot_metrics(res, src, None, legs)
    assert m["skate"] == pytest.approx(10.0, rel=1e-9)  # % of a leg per second
    assert m["skate_source"] == 0.0 and m["skate_rel"] is None
    assert m["pelvis_dev"] == pytest.approx(100 * speed * t[-1] / LEG, rel=1e-9)


def test_misses_are_excluded_and_counted():
    src = standing()
    legs = find_legs(src.skeleton)
    res = with_root(src, [0.0, -0.02 * LEG, 0.0])
    m = foot_metrics(res, src, FlatGround(0.0, miss_x=0.0), legs)  # the left foot is at x > 0
    assert m["misses"] == 60 * 2 and m["per_foot"]["left"]["pen_mean"] is None
    assert m["per_foot"]["right"]["pen_mean"] == pytest.approx(2.0)
    m = foot_metrics(res, src, FlatGround(0.0, miss_x=-1.0), legs)
    assert m["misses"] == 60 * 4 and m["pen_mean"] is None and m["planted_shift"] is None


def test_bone_drift_on_known_edits():
    src = standing()
    legs = find_legs(src.skeleton)
    pos = src.positions_local.copy()
    pos[:, 2, 1] -= 0.01 * LEG  # left thigh 1% of the leg length longer
    m = foot_metrics(src.replace(positions_local=pos), src, None, legs)
    assert m["bone_drift"] == pytest.approx(0.01, rel=1e-9)
    rng = np.random.default_rng(0)
    q = rng.normal(size=src.rotations_local.shape)
    rot = q / np.linalg.norm(q, axis=-1, keepdims=True)
    m = foot_metrics(src.replace(rotations_local=rot), src, None, legs)
    assert m["bone_drift"] < 1e-6


def test_the_pelvis_is_not_joint_0():
    """A static ground-level root with the hips under it carrying the travel (Bandai)."""
    names = ("Root",) + NAMES
    parents = [-1, 0] + [p + 1 for p in PARENTS[1:]]
    offsets = [[0.0, 0.0, 0.0]] + OFFSETS
    sk = Skeleton(names, parents, offsets)
    src = Motion.rest(sk, batch_shape=(60,), frame_time=1 / 60)
    pos = src.positions_local.copy()
    pos[:, 1, 2] += np.linspace(0.0, 1.0, 60)  # the hips walk 1 along Z
    src = src.replace(positions_local=pos)
    legs = find_legs(sk)
    res_pos = pos.copy()
    res_pos[:, 1, 0] += 0.05 * LEG  # the result's hips are 5 % to the side
    m = foot_metrics(src.replace(positions_local=res_pos), src, None, legs)
    assert m["pelvis_dev"] == pytest.approx(5.0, rel=1e-9)
    assert m["bone_drift"] == 0.0  # root -> hips is a translation, not a bone


def test_pelvis_vertical_acceleration_against_the_source():
    src = standing(frames=240, fps=120.0)
    legs = find_legs(src.skeleton)
    t = np.arange(240) / 120.0
    bob = np.zeros((240, 3))
    bob[:, 1] = 0.01 * LEG * np.sin(2 * np.pi * 2.0 * t)  # 1 % at 2 Hz
    m = foot_metrics(with_root(src, bob), src, None, legs)
    # p99 of |a| over a 1/30 s step: close to the peak 1 % * (4 pi)^2 (a little under it)
    assert 130.0 < m["pelvis_acc"] < 100.0 * 0.01 * (4 * np.pi) ** 2 + 1e-9
    assert m["pelvis_acc_source"] == 0.0
    assert m["pelvis_acc_ratio"] == pytest.approx(m["pelvis_acc"] / ACC_FLOOR)
    same = foot_metrics(with_root(src, bob), with_root(src, bob), None, legs)
    assert same["pelvis_acc_ratio"] == pytest.approx(1.0)


def _knee_clip(fps, flex_of_t, seconds=2.0):
    frames = int(round(seconds * fps))
    t = np.arange(frames) / fps
    return bent_knees(standing(frames, fps), flex_of_t(t))


@pytest.mark.parametrize("fps", [30.0, 60.0, 120.0])
def test_knee_snap_is_a_pop_at_any_frame_rate(fps):
    def smooth(t):
        return 0.4 + 0.3 * np.sin(2 * np.pi * 0.8 * t)

    def snapped(t):  # the knee snaps 0.25 rad more bent at t = 1 s
        return smooth(t) + 0.25 * (t >= 1.0)

    def kinked(t):  # the knee suddenly starts bending at 4 rad/s at t = 1 s
        return smooth(t) + 4.0 * np.clip(t - 1.0, 0.0, 0.1)

    src = _knee_clip(fps, smooth)
    legs = find_legs(src.skeleton)
    assert foot_metrics(src, src, None, legs)["pops"] == 0
    m = foot_metrics(_knee_clip(fps, snapped), src, None, legs)
    assert m["pops"] == 2 and m["per_foot"]["left"]["pops"] == 1
    m = foot_metrics(_knee_clip(fps, kinked), src, None, legs)
    assert m["per_foot"]["right"]["pops"] == 2  # starts and stops bending: two kinks


@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0, 120.0, 240.0])
def test_smooth_knee_corrections_are_not_pops(fps):
    def src_flex(t):
        return 0.4 + 0.3 * np.sin(2 * np.pi * 0.8 * t)

    def res_flex(t):  # a 0.3 rad correction blended in over 0.3 s (peak 20 rad/s^2)
        u = np.clip((t - 0.8) / 0.3, 0.0, 1.0)
        return src_flex(t) + 0.3 * u * u * (3 - 2 * u)

    src = _knee_clip(fps, src_flex)
    legs = find_legs(src.skeleton)
    m = foot_metrics(_knee_clip(fps, res_flex), src, None, legs)
    assert m["pops"] == 0


def test_a_result_smoother_than_its_source_has_no_pops():
    """Mocap knees turn sharply when the leg straightens; rounding that off is no pop."""
    t = np.arange(240)[:, None] / 120.0
    sharp = np.pi - 0.05 - 3.0 * np.abs(t - 1.0)  # straightens, then bends: a V at t = 1 s
    rounded = np.pi - 0.05 - 3.0 * np.sqrt((t - 1.0) ** 2 + 0.05**2)
    pops, _ = knee_pops(rounded, sharp, 1 / 120)
    assert pops.tolist() == [0]
    pops, excess = knee_pops(sharp, rounded, 1 / 120)  # ... but adding the V is one
    assert pops.tolist() == [1] and excess.max() > 4.0


def _resolve_legs(source, legs, root_offset):
    """``source`` with its root moved by ``root_offset (F, 3)`` and the legs re-solved so
    that the ankles keep their world positions and rotations."""
    from ikrig.math import quat_conj, quat_mul
    from ikrig.solvers.two_bone import solve_two_bone

    rot_w, pos_w = source.fk()
    pos = source.positions_local.copy()
    pos[:, 0] += root_offset
    m = source.replace(positions_local=pos)
    for leg in legs.legs:
        m = solve_two_bone(m, leg.joints, pos_w[:, leg.ankle], pole_world=pos_w[:, leg.knee]).motion
    rot = m.rotations_local.copy()
    knee_w = m.fk()[0]
    for leg in legs.legs:
        rot[:, leg.ankle] = quat_mul(quat_conj(knee_w[:, leg.knee]), rot_w[:, leg.ankle])
    return m.replace(rotations_local=rot)


@pytest.mark.parametrize("path", shared_bvh_files()[:1] + ["walk"], ids=str)
def test_re_solved_legs_under_a_smooth_pelvis_offset(path):
    """Lowering the pelvis smoothly with the feet pinned: no pops, no skating, no drift.
    Raising it makes the knees lock straight: pops."""
    pytest.importorskip("ikrig.solvers.two_bone")
    if path == "walk":
        from ikrig.data import walk_clip

        src = walk_clip(4.0, 60.0)
    else:
        from ikrig.io import read_bvh

        src = read_bvh(path).motion
    legs = find_legs(src.skeleton)
    t = np.arange(src.num_frames) * src.frame_time
    wave = 0.5 - 0.5 * np.cos(2 * np.pi * 0.5 * t)
    offset = np.zeros((src.num_frames, 3))
    offset[:, 1] = -0.03 * legs.leg_length * wave
    res = _resolve_legs(src, legs, offset)
    m = foot_metrics(res, src, None, legs)
    assert m["pops"] == 0
    assert m["skate_rel"] == pytest.approx(1.0, abs=0.02)
    assert m["bone_drift"] < 1e-6 and m["pelvis_dev"] < 1e-9
    offset[:, 1] = 0.03 * legs.leg_length * wave
    m = foot_metrics(_resolve_legs(src, legs, offset), src, None, legs)
    assert m["pops"] > 0


def test_knee_pops_function():
    angles = np.zeros((200, 1))
    src = angles.copy()
    angles[100:, 0] = 0.2
    pops, jump = knee_pops(angles, src, 1 / 60)
    assert pops.tolist() == [1]
    assert np.abs(jump).max() == pytest.approx(0.2 * 30, rel=1e-9)
    assert np.abs(jump).max() > POP_THRESHOLD
    pops, _ = knee_pops(angles[:3], src[:3], 1 / 60)  # too short to judge
    assert pops.tolist() == [0]


def test_knee_angles_straight_and_bent():
    src = standing(frames=2)
    legs = find_legs(src.skeleton)
    pos = bent_knees(src, 0.5).fk()[1]
    assert knee_angles(src.fk()[1], legs) == pytest.approx(np.pi)
    assert knee_angles(pos, legs) == pytest.approx(np.pi - 0.5)


def _plain(x):
    if isinstance(x, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in x.items())
    if isinstance(x, list):
        return all(_plain(v) for v in x)
    return x is None or type(x) in (float, int, str, bool)


def test_result_is_json_ready_and_table_is_readable():
    src = standing()
    legs = find_legs(src.skeleton)
    a = foot_metrics(src, src, FlatGround(0.0), legs)
    b = foot_metrics(with_root(src, [0, -0.02 * LEG, 0]), src, FlatGround(), legs)
    assert _plain(a) and _plain(b)
    json.dumps(a)
    table = metrics_table([("baseline", a), ("trace-offset", b), ("full", {})])
    lines = table.splitlines()
    assert lines[0].split()[0] == "label" and "shift" in lines[0] and "misses" in lines[0]
    assert len(lines) == 6 and len({len(line) for line in lines[3:]}) == 1
    assert lines[4].startswith("trace-offset") and "2.000" in lines[4]
    assert lines[5].split()[1:] == ["-"] * 12


def test_bad_inputs_raise():
    src = standing()
    legs = find_legs(src.skeleton)
    with pytest.raises(InputError, match="frame counts"):
        foot_metrics(src[:10], src, None, legs)
    with pytest.raises(InputError, match="frame_time"):
        foot_metrics(src, src.replace(frame_time=None), None, legs)
    with pytest.raises(InputError, match="height_at"):
        foot_metrics(src, src, object(), legs)


def test_real_grounds_match_the_flat_floor():
    ground = pytest.importorskip("ikrig.ground")
    src = standing()
    legs = find_legs(src.skeleton)
    res = with_root(src, [0.0, -0.02 * LEG, 0.0])
    a = foot_metrics(res, src, None, legs)
    b = foot_metrics(res, src, ground.Plane((0.0, 0.0, 0.0)), legs)
    assert b["pen_mean"] == pytest.approx(a["pen_mean"]) == pytest.approx(2.0)
    files = [p for p in shared_bvh_files() if p.name == "xia_neutral_walk.bvh"]
    if not files:
        return
    from ikrig.character import pelvis_joint
    from ikrig.io import read_bvh

    src = read_bvh(files[0]).motion
    legs = find_legs(src.skeleton)
    path_xz = src.positions_world()[:, pelvis_joint(src.skeleton, legs), [0, 2]]
    flat = ground.load_ground("flat", path_xz, legs.leg_length)
    assert foot_metrics(src, src, flat, legs)["pen_max"] == pytest.approx(
        foot_metrics(src, src, None, legs)["pen_max"], abs=1e-9
    )
    # the unedited clip walks straight through the stairs
    stairs = ground.load_ground("stairs", path_xz, legs.leg_length)
    assert foot_metrics(src, src, stairs, legs)["pen_max"] > 5.0


@pytest.mark.parametrize("path", shared_bvh_files(), ids=lambda p: p.name)
def test_shared_clip_against_itself(path):
    from ikrig.io import read_bvh

    src = read_bvh(path).motion
    legs = find_legs(src.skeleton)
    m = foot_metrics(src, src, None, legs)
    json.dumps(m)
    assert m["pops"] == 0 and m["misses"] == 0
    assert m["bone_drift"] == 0.0 and m["pelvis_dev"] == 0.0 and m["planted_shift"] < 1e-9
    assert m["skate_rel"] == pytest.approx(1.0) and m["pelvis_acc_ratio"] == pytest.approx(1.0)
    # a smooth vertical offset of the whole body changes neither knees nor skating
    t = np.arange(src.num_frames) * src.frame_time
    lift = np.zeros((src.num_frames, 3))
    lift[:, 1] = 0.05 * legs.leg_length * np.sin(2 * np.pi * 0.5 * t)
    m = foot_metrics(with_root(src, lift), src, None, legs)
    assert m["pops"] == 0 and m["bone_drift"] < 1e-6
    assert m["skate_rel"] == pytest.approx(1.0)
