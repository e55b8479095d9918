"""Foot-placement metrics: known answers on small synthetic clips, and the shared clips."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import shared_bvh_files

from ikrig.character import estimate_sole, find_legs
from ikrig.errors import InputError
from ikrig.math import quat_from_axis_angle
from ikrig.metrics import (
    POP_THRESHOLD,
    foot_metrics,
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


def setup(source, contacts=None):
    legs = find_legs(source.skeleton)
    sole = estimate_sole(source, legs)
    if contacts is None:
        contacts = np.ones((source.num_frames, 2), dtype=bool)
    return legs, sole, contacts


def bent_knees(motion, flex):
    """Set both knees' flexion (radians, (F,) or scalar) about the X axis."""
    rot = motion.rotations_local.copy()
    q = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), np.asarray(flex, dtype=np.float64))
    rot[:, 2] = q
    rot[:, 6] = q
    return motion.replace(rotations_local=rot)


def test_identity_result_gives_zeros():
    src = standing()
    legs, sole, contacts = setup(src)
    assert legs.leg_length == pytest.approx(LEG)
    m = foot_metrics(src, src, FlatGround(0.0), legs, sole, contacts)
    for key in ("pen_mean", "pen_p95", "pen_max", "float_mean", "float_p95", "skate"):
        assert m[key] == pytest.approx(0.0, abs=1e-9), key
    assert m["pops"] == 0 and m["misses"] == 0
    assert m["bone_drift"] == 0.0 and m["root_dev"] == 0.0
    assert m["skate_rel"] == 1.0  # 0 / 0: the result skates exactly like its source
    assert m["feet"] == ["left", "right"] and set(m["per_foot"]) == {"left", "right"}


def test_sunk_foot_gives_penetration_two_percent():
    src = standing()
    legs, sole, contacts = setup(src)
    res = with_root(src, [0.0, -0.02 * LEG, 0.0])
    m = foot_metrics(res, src, FlatGround(0.0), legs, sole, contacts)
    for key in ("pen_mean", "pen_p95", "pen_max"):
        assert m[key] == pytest.approx(2.0, abs=1e-9)
        assert m["per_foot"]["left"][key] == pytest.approx(2.0, abs=1e-9)
    assert m["float_mean"] == pytest.approx(0.0, abs=1e-12)
    # the ground's height counts: the same result on a ground 2% lower touches it exactly
    m = foot_metrics(res, src, FlatGround(-0.02 * LEG), legs, sole, contacts)
    assert m["pen_max"] == pytest.approx(0.0, abs=1e-9)


def test_penetration_mean_counts_frames_above_ground_as_zero():
    src = standing(frames=40)
    legs, sole, contacts = setup(src)
    dy = np.zeros((40, 3))
    dy[:10, 1] = -0.04 * LEG  # a quarter of the frames 4% deep
    m = foot_metrics(with_root(src, dy), src, FlatGround(0.0), legs, sole, contacts)
    assert m["pen_mean"] == pytest.approx(1.0, abs=1e-9)
    assert m["pen_max"] == pytest.approx(4.0, abs=1e-9)


def test_floating_foot_during_contact_gives_float_one_percent():
    src = standing()
    legs, sole, contacts = setup(src)
    contacts = contacts.copy()
    contacts[30:, 1] = False  # the right foot is not in contact for half the clip
    dy = np.zeros((60, 3))
    dy[:, 1] = 0.01 * LEG
    dy[30:, 1] = 0.05 * LEG  # high, but only the left foot is in contact there
    res = with_root(src, dy)
    m = foot_metrics(res, src, FlatGround(0.0), legs, sole, contacts)
    assert m["per_foot"]["right"]["float_mean"] == pytest.approx(1.0, abs=1e-9)
    assert m["per_foot"]["left"]["float_p95"] == pytest.approx(5.0, abs=1e-9)
    assert m["pen_max"] == pytest.approx(0.0, abs=1e-12)
    # no contact at all: float is undefined, not NaN
    none = foot_metrics(res, src, FlatGround(0.0), legs, sole, np.zeros((60, 2), bool))
    assert none["float_mean"] is None and none["skate"] is None


def test_sliding_planted_foot_gives_known_skate():
    src = standing(fps=50.0)
    legs, sole, contacts = setup(src)
    speed = 0.1 * LEG  # 10 % of the leg length per second, diagonally in XZ
    t = np.arange(60) * src.frame_time
    path = np.stack([0.6 * speed * t, 0 * t, 0.8 * speed * t], axis=-1)
    res = with_root(src, path)
    m = foot_metrics(res, src, FlatGround(0.0), legs, sole, contacts)
    assert m["skate"] == pytest.approx(10.0, rel=1e-9)
    assert m["per_foot"]["right"]["skate"] == pytest.approx(10.0, rel=1e-9)
    assert m["skate_source"] == pytest.approx(0.0, abs=1e-12)
    assert m["skate_rel"] is None  # the source does not skate: a ratio is undefined
    assert m["root_dev"] == pytest.approx(100 * speed * t[-1] / LEG, rel=1e-9)
    # vertical motion of the root is not skating
    bob = np.zeros((60, 3))
    bob[:, 1] = 0.01 * np.sin(t * 7)
    m = foot_metrics(with_root(src, bob), src, FlatGround(-0.02), legs, sole, contacts)
    assert m["skate"] == pytest.approx(0.0, abs=1e-9)


def test_skate_rel_is_one_for_identity_of_a_skating_source():
    base = standing()
    t = np.arange(60) * base.frame_time
    src = with_root(base, np.stack([0.05 * t, 0 * t, 0.2 * t], axis=-1))
    legs, sole, contacts = setup(src)
    m = foot_metrics(src, src, FlatGround(0.0), legs, sole, contacts)
    assert m["skate"] > 0
    assert m["skate_source"] == pytest.approx(m["skate"], rel=1e-12)
    assert m["skate_rel"] == pytest.approx(1.0, rel=1e-12)
    # a result that stays put skates 0 times as much
    still = with_root(src, -src.positions_local[:, 0] + src.positions_local[0, 0])
    m = foot_metrics(still, src, FlatGround(0.0), legs, sole, contacts)
    assert m["skate_rel"] == pytest.approx(0.0, abs=1e-9)


def test_skate_follows_the_lower_sole_point():
    """A heel rising about a fixed toe (heel-off) is not skating; the toe is planted."""
    src = standing(frames=30, fps=30.0)
    legs, sole, contacts = setup(src)
    # rotate the ankle (heel up) and move the root so that the left toe joint stays put
    rot = src.rotations_local.copy()
    pitch = np.linspace(0.05, 0.6, 30)
    rot[:, 3] = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), pitch)
    res = src.replace(rotations_local=rot)
    toe = res.fk()[1][:, 4]
    res = with_root(res, toe[0] - toe)
    heel = res.fk()[1][:, 3]
    assert np.ptp(heel[:, 2]) > 0.05  # the heel moves a lot
    only_left = contacts.copy()
    only_left[:, 1] = False
    m = foot_metrics(res, src, FlatGround(0.0), legs, sole, only_left)
    assert m["per_foot"]["left"]["skate"] == pytest.approx(0.0, abs=1e-9)


def test_misses_are_excluded_and_counted():
    src = standing(frames=20)
    legs, sole, contacts = setup(src)
    shift = np.zeros((20, 3))
    shift[5:, 1] = -0.03 * LEG  # sunk, but only where the ground is
    shift[5:, 0] = 5.0  # ... which is never there: every query misses
    res = with_root(src, shift)
    m = foot_metrics(res, src, FlatGround(0.0, miss_x=1.0), legs, sole, contacts)
    assert m["misses"] == 2 * 15
    assert m["per_foot"]["left"]["misses"] == 15
    assert m["pen_max"] == pytest.approx(0.0, abs=1e-12)
    everything = foot_metrics(res, src, FlatGround(0.0, miss_x=-1.0), legs, sole, contacts)
    assert everything["misses"] == 40 and everything["pen_mean"] is None


def test_bone_drift_and_root_deviation_on_known_edits():
    src = standing()
    legs, sole, contacts = setup(src)
    pos = src.positions_local.copy()
    pos[:, 2, 1] -= 0.01 * LEG  # left thigh 1% of the leg length longer
    pos[:, 0] += [0.03 * LEG, 0.0, 0.04 * LEG]  # root moved by 5% of the leg length in XZ
    res = src.replace(positions_local=pos)
    m = foot_metrics(res, src, FlatGround(0.0), legs, sole, contacts)
    assert m["bone_drift"] == pytest.approx(0.01, rel=1e-9)
    assert m["root_dev"] == pytest.approx(5.0, rel=1e-9)
    # rotations alone keep bone lengths
    rot = src.rotations_local.copy()
    rng = np.random.default_rng(0)
    q = rng.normal(size=rot.shape)
    rot = q / np.linalg.norm(q, axis=-1, keepdims=True)
    m = foot_metrics(src.replace(rotations_local=rot), src, None, legs, sole, contacts)
    assert m["bone_drift"] < 1e-6 and m["root_dev"] == 0.0


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
    legs, sole, contacts = setup(src)
    assert foot_metrics(src, src, None, legs, sole, contacts)["pops"] == 0
    m = foot_metrics(_knee_clip(fps, snapped), src, None, legs, sole, contacts)
    assert m["pops"] == 2 and m["per_foot"]["left"]["pops"] == 1
    m = foot_metrics(_knee_clip(fps, kinked), src, None, legs, sole, contacts)
    assert m["per_foot"]["right"]["pops"] == 2  # starts and stops bending: two kinks


@pytest.mark.parametrize("fps", [24.0, 30.0, 60.0, 120.0, 240.0])
def test_smooth_knee_corrections_are_not_pops(fps):
    def src_flex(t):
        return 0.4 + 0.3 * np.sin(2 * np.pi * 0.8 * t)

    def res_flex(t):  # a 0.3 rad correction blended in over 0.3 s (peak 20 rad/s^2)
        u = np.clip((t - 0.8) / 0.3, 0.0, 1.0)
        return src_flex(t) + 0.3 * u * u * (3 - 2 * u)

    src = _knee_clip(fps, src_flex)
    legs, sole, contacts = setup(src)
    m = foot_metrics(_knee_clip(fps, res_flex), src, None, legs, sole, contacts)
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
    legs, sole, _ = setup(src)
    pts = sole.points_world(*src.fk())
    contacts = pts[..., 1].min(axis=-1) - sole.floor < 0.05 * legs.leg_length
    t = np.arange(src.num_frames) * src.frame_time
    wave = 0.5 - 0.5 * np.cos(2 * np.pi * 0.5 * t)
    offset = np.zeros((src.num_frames, 3))
    offset[:, 1] = -0.03 * legs.leg_length * wave
    res = _resolve_legs(src, legs, offset)
    m = foot_metrics(res, src, None, legs, sole, contacts)
    assert m["pops"] == 0
    assert m["skate_rel"] == pytest.approx(1.0, abs=0.02)
    assert m["bone_drift"] < 1e-6 and m["root_dev"] < 1e-9
    offset[:, 1] = 0.03 * legs.leg_length * wave
    m = foot_metrics(_resolve_legs(src, legs, offset), src, None, legs, sole, contacts)
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
    legs, sole, contacts = setup(src)
    a = foot_metrics(src, src, FlatGround(0.0), legs, sole, contacts)
    b = foot_metrics(with_root(src, [0, -0.02 * LEG, 0]), src, FlatGround(), legs, sole, contacts)
    assert _plain(a) and _plain(b)
    json.dumps(a)
    table = metrics_table([("baseline", a), ("trace-offset", b), ("full", {})])
    lines = table.splitlines()
    assert lines[0].split()[0] == "label" and "skate" in lines[0] and "misses" in lines[0]
    assert len(lines) == 6 and len({len(line) for line in lines[3:]}) == 1
    assert lines[4].startswith("trace-offset") and "2.000" in lines[4]
    assert lines[5].split()[1:] == ["-"] * 11


def test_bad_inputs_raise():
    src = standing()
    legs, sole, contacts = setup(src)
    with pytest.raises(InputError, match="contacts"):
        foot_metrics(src, src, None, legs, sole, contacts[:, :1])
    with pytest.raises(InputError, match="frame counts"):
        foot_metrics(src[:10], src, None, legs, sole, contacts)
    with pytest.raises(InputError, match="frame_time"):
        foot_metrics(src, src.replace(frame_time=None), None, legs, sole, contacts)
    with pytest.raises(InputError, match="height_at"):
        foot_metrics(src, src, object(), legs, sole, contacts)


def test_real_ground_plane_matches_the_flat_floor():
    ground = pytest.importorskip("ikrig.ground")
    src = standing()
    legs, sole, contacts = setup(src)
    res = with_root(src, [0.0, -0.02 * LEG, 0.0])
    a = foot_metrics(res, src, None, legs, sole, contacts)
    b = foot_metrics(res, src, ground.Plane((0.0, sole.floor, 0.0)), legs, sole, contacts)
    assert b["pen_mean"] == pytest.approx(a["pen_mean"]) == pytest.approx(2.0)


def test_builtin_grounds():
    ground = pytest.importorskip("ikrig.ground")
    if not hasattr(ground, "load_ground"):
        pytest.skip("ikrig.ground.load_ground not there yet")
    files = [p for p in shared_bvh_files() if p.name == "xia_neutral_walk.bvh"]
    if not files:
        pytest.skip("shared clips not present")
    from ikrig.io import read_bvh

    src = read_bvh(files[0]).motion
    legs, sole, contacts = setup(src)
    path_xz = src.positions_world()[:, 0, [0, 2]]
    args = (path_xz, legs.leg_length)
    flat = ground.load_ground("flat", *args, floor_height=sole.floor)
    a = foot_metrics(src, src, flat, legs, sole, contacts)
    b = foot_metrics(src, src, None, legs, sole, contacts)
    assert a["pen_mean"] == pytest.approx(b["pen_mean"], abs=1e-9)
    assert a["skate"] == pytest.approx(b["skate"], abs=1e-9)
    # the unedited clip walks straight through the stairs
    stairs = ground.load_ground("stairs", *args, floor_height=sole.floor)
    m = foot_metrics(src, src, stairs, legs, sole, contacts)
    assert m["pen_max"] > 5.0 and m["pen_mean"] > a["pen_mean"]


@pytest.mark.parametrize("path", shared_bvh_files(), ids=lambda p: p.name)
def test_shared_clip_against_itself(path):
    from ikrig.foot.stages.contacts import detect_contacts, horizontal_speed
    from ikrig.io import read_bvh

    src = read_bvh(path).motion
    legs = find_legs(src.skeleton)
    sole = estimate_sole(src, legs)
    pts = sole.points_world(*src.fk())
    heights = pts[..., 1] - sole.floor - sole.heights
    contacts = detect_contacts(
        heights, horizontal_speed(pts, src.frame_time), legs.leg_length, src.frame_time
    )
    m = foot_metrics(src, src, None, legs, sole, contacts)
    json.dumps(m)
    assert m["pops"] == 0 and m["misses"] == 0
    assert m["bone_drift"] == 0.0 and m["root_dev"] == 0.0
    assert m["skate_rel"] == pytest.approx(1.0)
    # a smooth vertical offset of the whole body changes neither knees nor skating
    t = np.arange(src.num_frames) * src.frame_time
    lift = np.zeros((src.num_frames, 3))
    lift[:, 1] = 0.05 * legs.leg_length * np.sin(2 * np.pi * 0.5 * t)
    m = foot_metrics(with_root(src, lift), src, None, legs, sole, contacts)
    assert m["pops"] == 0 and m["bone_drift"] < 1e-6
    assert m["skate_rel"] == pytest.approx(1.0)
