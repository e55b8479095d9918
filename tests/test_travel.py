"""A clip placed where the user says (``ikrig foot --at/--heading/--path``) and clips that
walk in place (:mod:`ikrig.foot.travel`)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import SHARED_BVH
from hypothesis import given, settings
from hypothesis import strategies as st

from ikrig.app.placement import FootPlacement, clip_with_time, place_clip, result_metrics
from ikrig.character import find_legs, pelvis_joint
from ikrig.character.sole import estimate_sole
from ikrig.cli import main
from ikrig.errors import FileFormatError, InputError
from ikrig.foot import ContactOptions, detect_foot_contacts
from ikrig.foot.travel import (
    TravelPath,
    facing,
    follow_path,
    move_roots,
    path_headings,
    place_at,
    read_path,
    travel,
    treadmill_contacts,
)
from ikrig.ground.views import RaisedGround
from ikrig.io import read_bvh, to_bvh_clip, write_bvh
from ikrig.metrics import foot_metrics


@pytest.fixture(scope="module")
def walk():
    from ikrig.data.walk import walk_clip

    return walk_clip(seconds=2.0, fps=30.0)


def in_place(motion, legs):
    """``(the clip with its pelvis's horizontal travel taken off its roots, the travel
    (F, 2))``: what a game exporter's in-place walk cycle is."""
    sk = motion.skeleton
    track = motion.positions_world()[:, pelvis_joint(sk, legs)][:, [0, 2]]
    roots = np.flatnonzero(sk.parents < 0)
    pl = motion.positions_local.copy()
    pl[:, roots, 0] -= (track[:, 0] - track[0, 0])[:, None]
    pl[:, roots, 2] -= (track[:, 1] - track[0, 1])[:, None]
    return motion.replace(positions_local=pl), track


def write_path(path, times, xz, headings=None):
    with open(path, "w") as f:
        f.write("time,x,z" + (",heading" if headings is not None else "") + "\n")
        for i, (t, (x, z)) in enumerate(zip(times, xz)):
            extra = f",{float(headings[i])!r}" if headings is not None else ""
            f.write(f"{float(t)!r},{float(x)!r},{float(z)!r}{extra}\n")
    return path


def bone_lengths(motion):
    p = motion.positions_world()
    par = motion.skeleton.parents
    child = np.flatnonzero(par >= 0)
    return np.linalg.norm(p[:, child] - p[:, par[child]], axis=-1)


# ------------------------------------------------------------------ placing and turning
@settings(max_examples=20, deadline=None)
@given(
    x=st.floats(-50, 50),
    z=st.floats(-50, 50),
    heading=st.floats(-4 * math.pi, 4 * math.pi),
)
def test_place_at_keeps_bones_heights_and_lands_where_asked(walk, x, z, heading):
    legs = find_legs(walk.skeleton)
    moved = place_at(walk, legs, (x, z), heading)
    pel = pelvis_joint(walk.skeleton, legs)
    p0, p1 = walk.positions_world(), moved.positions_world()
    assert p1[0, pel, [0, 2]] == pytest.approx([x, z], abs=1e-9)
    np.testing.assert_allclose(bone_lengths(moved), bone_lengths(walk), atol=1e-9)
    np.testing.assert_allclose(p1[..., 1], p0[..., 1], atol=1e-9)  # heights kept
    turn = math.remainder(facing(moved, legs) - heading, 2 * math.pi)
    assert abs(turn) < 1e-9
    # a rigid turn of the whole clip: distances between any two joints of a frame kept
    d0 = np.linalg.norm(p0[:, :, None] - p0[:, None], axis=-1)
    d1 = np.linalg.norm(p1[:, :, None] - p1[:, None], axis=-1)
    np.testing.assert_allclose(d1, d0, atol=1e-8)


def test_headings_are_from_z_toward_x(walk):
    legs = find_legs(walk.skeleton)
    pel = pelvis_joint(walk.skeleton, legs)
    for degrees, direction in ((0, (0, 1)), (90, (1, 0)), (180, (0, -1)), (-90, (-1, 0))):
        moved = place_at(walk, legs, (0.0, 0.0), math.radians(degrees))
        p = moved.positions_world()[:, pel, [0, 2]]
        travel_dir = (p[-1] - p[0]) / np.linalg.norm(p[-1] - p[0])  # the built-in walk goes ahead
        assert travel_dir == pytest.approx(direction, abs=0.05), degrees


def test_move_roots_identity_and_dtype(walk):
    same = move_roots(walk, 0.0, np.zeros(2), np.zeros(2))
    np.testing.assert_array_equal(same.positions_local, walk.positions_local)
    np.testing.assert_array_equal(same.rotations_local, walk.rotations_local)
    small = walk.replace(
        rotations_local=walk.rotations_local.astype(np.float32),
        positions_local=walk.positions_local.astype(np.float32),
    )
    assert move_roots(small, 1.0, [0, 0], [1, 2]).dtype == np.float32
    assert travel(walk, find_legs(walk.skeleton)) is walk  # nothing asked, nothing done


def test_place_at_rejects_what_is_not_a_place(walk):
    legs = find_legs(walk.skeleton)
    with pytest.raises(InputError, match="at"):
        place_at(walk, legs, (np.nan, 0.0))
    with pytest.raises(InputError, match="heading"):
        place_at(walk, legs, (0.0, 0.0), math.inf)
    with pytest.raises(InputError, match="give one"):
        travel(walk, legs, at=(0.0, 0.0), path=TravelPath(np.zeros(1), np.zeros((1, 2))))


# ------------------------------------------------------------------ paths
def test_path_positions_interpolate_in_time_and_hold_at_the_ends(walk):
    legs = find_legs(walk.skeleton)
    cycle, _ = in_place(walk, legs)
    dt = walk.frame_time
    path = TravelPath(np.array([10 * dt, 30 * dt]), np.array([[1.0, 2.0], [3.0, -2.0]]))
    moved = follow_path(cycle, legs, path, heading=0.3)
    pel = pelvis_joint(walk.skeleton, legs)
    # the in-place clip's own sway relative to frame 0, turned as the clip is
    sway = cycle.positions_world()[:, pel, [0, 2]] - cycle.positions_world()[0, pel, [0, 2]]
    p = moved.positions_world()[:, pel, [0, 2]]
    expected = {0: (1.0, 2.0), 10: (1.0, 2.0), 20: (2.0, 0.0), 25: (2.5, -1.0), 59: (3.0, -2.0)}
    turn = 0.3 - facing(cycle, legs)
    c, s = math.cos(turn), math.sin(turn)
    for frame, xz in expected.items():
        dx, dz = sway[frame]
        own = np.array([c * dx + s * dz, c * dz - s * dx])
        assert p[frame] - own == pytest.approx(xz, abs=1e-9), frame


def test_path_headings_interpolate_the_short_way_and_follow_the_tangent(tmp_path):
    src = tmp_path / "h.csv"
    src.write_text("time,x,z,heading\n0,0,0,350\n1,0,0,10\n")
    path = read_path(src)
    h = np.degrees(path_headings(path, np.array([-1.0, 0.0, 0.5, 1.0, 2.0])))
    assert np.mod(h, 360) == pytest.approx([350, 350, 0, 10, 10], abs=1e-9)
    # no heading column: along the path (+X, then +Z), held at the ends, smoothed at the turn
    src.write_text("time,x,z\n0,0,0\n1,1,0\n2,1,1\n")
    times = np.arange(0, 3.0, 0.01)
    h = np.degrees(path_headings(read_path(src), times))
    assert h[times < 0.7] == pytest.approx(90.0, abs=1e-6)
    assert h[(times > 1.3) & (times < 2.0)] == pytest.approx(0.0, abs=1e-6)
    assert h[times > 2.5] == pytest.approx(0.0, abs=1e-6)  # held after the end
    # the corner turned over a few tenths of a second (4.4 degrees per 10 ms at most), no snap
    assert np.all(np.diff(h) <= 1e-9) and np.max(np.abs(np.diff(h))) < 5.0
    src.write_text("time,x,z\n0,1,1\n")
    assert path_headings(read_path(src), times) is None  # still: the clip's own facing


BAD_PATHS = [
    ("", None, "empty"),
    ("t,x,z\n0,0,0\n", 1, "header"),
    ("time,x,z\n", None, "no rows"),
    ("time,x,z\n0,0,0\n1,2\n", 3, "expected 3 values"),
    ("time,x,z,heading\n0,0,0,0\n\n1,2,3,four\n", 4, "heading: 'four' is not a number"),
    ("time,x,z\n0,0,0\n1,nan,0\n", 3, "not finite"),
    ("time,x,z\n0,0,0\n1,0,0\n1,0,0\n", 4, "not after"),
]


@pytest.mark.parametrize(("text", "line", "reason"), BAD_PATHS)
def test_malformed_path_files_name_file_and_line(tmp_path, text, line, reason):
    src = tmp_path / "bad.csv"
    src.write_text(text)
    with pytest.raises(FileFormatError) as info:
        read_path(src)
    where = f"bad.csv:{line}:" if line else "bad.csv:"
    assert where in str(info.value) and reason in str(info.value)
    assert info.value.line == line and "\n" not in str(info.value)


def test_path_file_with_bom_blank_lines_and_spaces(tmp_path):
    src = tmp_path / "p.csv"
    src.write_bytes("\ufeffTime, X, Z\n\n0, 1, 2\n 0.5 ,3,4\n".encode())
    path = read_path(src)
    assert path.times.tolist() == [0.0, 0.5] and path.xz.tolist() == [[1, 2], [3, 4]]
    assert path.headings is None


# ------------------------------------------------------------------ clips that walk in place
@pytest.fixture(scope="module")
def xia():
    src = SHARED_BVH / "xia_neutral_walk.bvh"
    if not src.is_file():
        pytest.skip("../shared/data/bvh is not present")
    clip = clip_with_time(src)
    legs = find_legs(clip.motion.skeleton)
    cycle, track = in_place(clip.motion, legs)
    return clip, legs, cycle, track


def test_a_path_of_the_removed_travel_reproduces_the_original(xia, tmp_path):
    clip, legs, cycle, track = xia
    motion = clip.motion
    times = np.arange(motion.num_frames) * motion.frame_time
    heading = np.degrees(facing(cycle, legs))  # the clip's own facing: no turn
    csv = write_path(tmp_path / "p.csv", times, track, np.full(len(times), heading))
    modes = ["full", "goal-blend", "trace-offset"]
    for ground in ("slope", "stairs"):
        a = place_clip(motion, ground, modes)
        b = place_clip(cycle, ground, modes, placement=FootPlacement(path=str(csv)))
        assert not a.walks_in_place and not b.walks_in_place
        tol = 1e-9 * legs.leg_length  # measured: 1e-14 leg lengths
        np.testing.assert_allclose(b.source.positions_world(), motion.positions_world(), atol=tol)
        for m in modes:
            np.testing.assert_allclose(
                b.results[m].motion.positions_world(),
                a.results[m].motion.positions_world(),
                atol=tol,
                err_msg=f"{ground} {m}",
            )


def test_contacts_of_a_clip_that_walks_in_place(xia):
    clip, legs, cycle, _ = xia
    o = ContactOptions()
    sole = estimate_sole(clip.motion, legs)
    recorded, _ = detect_foot_contacts(clip.motion, legs, sole, o)
    # the velocity rule alone finds nothing: the stance foot slides at the walking speed
    assert not detect_foot_contacts(cycle, legs, sole, o)[0].any()
    flags, pins = treadmill_contacts(cycle, legs, o)
    assert np.mean(flags == recorded, axis=0) == pytest.approx([1, 1], abs=0.05)  # 96, 99.7 %
    turned = place_at(cycle, legs, (5.0, -3.0), 2.0)
    np.testing.assert_array_equal(treadmill_contacts(turned, legs, o)[0], flags)
    assert treadmill_contacts(clip.motion, legs, o) is None  # a walk that travels


@pytest.mark.parametrize("ground", ["slope", "stairs"])
def test_a_cycle_placed_on_the_spot_stands_on_the_ground(xia, ground):
    clip, legs, cycle, _ = xia
    at, heading = (30.0, -20.0), math.radians(90)
    placed = place_clip(cycle, ground, ["full"], placement=FootPlacement(at=at, heading=heading))
    assert placed.walks_in_place
    pel = pelvis_joint(cycle.skeleton, legs)
    assert placed.source.positions_world()[0, pel, [0, 2]] == pytest.approx(at)
    result = placed.results["full"]
    m = result_metrics(result, placed.source, placed.world())
    assert m["pen_p95"] <= 0.1 and m["pen_max"] <= 1.0 and m["pops"] == 0  # % of a leg
    assert m["bone_drift"] < 1e-9 and m["misses"] == 0
    # float over the recorded contacts: the original walk turned the same way has them
    recorded = place_at(clip.motion, legs, at, heading)
    floors = RaisedGround(placed.world(), -result.sole.floor)
    f = foot_metrics(result.motion, recorded, floors, legs)
    assert f["float_mean"] <= 1.0 and f["float_p95"] <= 4.0 and f["pen_p95"] <= 0.1
    # measured: pen p95 0, max 0.34; float mean 0.55-0.56, p95 3.0-3.2; no pops


# ------------------------------------------------------------------ the command line
def run(*args):
    return CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False)


@pytest.fixture
def cycle_bvh(walk, tmp_path):
    legs = find_legs(walk.skeleton)
    cycle, track = in_place(walk, legs)
    path = tmp_path / "cycle.bvh"
    write_bvh(path, to_bvh_clip(cycle))
    times = np.arange(walk.num_frames) * walk.frame_time
    write_path(tmp_path / "path.csv", times, track)
    return path


def test_foot_at_and_heading(cycle_bvh, tmp_path):
    out, report = tmp_path / "out.bvh", tmp_path / "r.json"
    r = run("foot", cycle_bvh, "-g", "stairs", "--at", "2,-1.5", "--heading", "90", "-o", out,
            "--report", report)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "walks in place" in r.output
    data = json.loads(report.read_text())
    assert data["placed"] == {"at": [2.0, -1.5], "heading": 90.0, "path": None,
                              "walk": False, "cycles": 1, "walks_in_place": True,
                              "slides_over_steps": False}  # fmt: skip
    assert "over a step's edge" not in r.output  # facing along the treads
    assert data["rows"]["full"]["pen_p95"] <= 0.5
    motion = read_bvh(out).motion
    legs = find_legs(motion.skeleton)
    assert motion.positions_world()[0, pelvis_joint(motion.skeleton, legs), [0, 2]] == (
        pytest.approx([2.0, -1.5], abs=1e-4)  # BVH text precision
    )
    assert math.degrees(facing(motion, legs)) == pytest.approx(90.0, abs=0.01)


@pytest.mark.parametrize("heading", ["0", "180", "30"])
def test_foot_in_place_up_the_stairs_says_its_feet_slide_over_edges(cycle_bvh, tmp_path, heading):
    """On the spot facing up, down or within 45 degrees of the built-in stairs' rise, each
    stance foot slides over a riser while down: ``ikrig foot`` says so and what to do;
    walking the cycle, or on a slope, it does not."""
    out, report = tmp_path / "out.bvh", tmp_path / "r.json"
    r = run("foot", cycle_bvh, "-g", "stairs", "--heading", heading, "-o", out, "--report", report)
    assert r.exit_code == 0, r.output
    assert "walks in place" in r.output and "over a step's edge" in r.output, r.output
    assert "--walk walks the cycle up them" in r.output
    assert json.loads(report.read_text())["placed"]["slides_over_steps"] is True
    for other in (["-g", "stairs", "--walk"], ["-g", "slope"], ["-g", "stairs", "--heading", "60"]):
        r = run("foot", cycle_bvh, *other, "-o", tmp_path / "other.bvh")
        assert r.exit_code == 0, r.output
        assert "over a step's edge" not in r.output, (other, r.output)


def test_foot_path(cycle_bvh, walk, tmp_path):
    out = tmp_path / "out.bvh"
    r = run("foot", cycle_bvh, "-g", "slope", "--path", tmp_path / "path.csv", "-o", out)
    assert r.exit_code == 0, r.output
    assert "walks in place" not in r.output
    motion = read_bvh(out).motion
    pel = pelvis_joint(motion.skeleton, find_legs(motion.skeleton))
    p = motion.positions_world()[:, pel, [0, 2]]
    np.testing.assert_allclose(p, walk.positions_world()[:, pel, [0, 2]], atol=2e-3)


def one_error(r, *needles):
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("ikrig: error: "), r.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_foot_placement_errors(cycle_bvh, tmp_path):
    out = tmp_path / "out.bvh"
    base = ["foot", cycle_bvh, "-g", "flat", "-o", out]
    one_error(run(*base, "--at", "1"), "--at", "X,Z")
    one_error(run(*base, "--at", "1,nan"), "--at")
    one_error(run(*base, "--heading", "inf"), "--heading")
    one_error(run(*base, "--at", "1,2", "--path", tmp_path / "path.csv"), "--at and --path")
    bad = tmp_path / "bad.csv"
    bad.write_text("time,x,z\n0,0,0\n0.5,1\n")
    one_error(run(*base, "--path", bad), "bad.csv:3:", "expected 3 values")
    one_error(run(*base, "--path", tmp_path / "missing.csv"), "missing.csv")
    odd = tmp_path / "route.bvh"  # a path file is an input: never overwritten
    odd.write_text("time,x,z\n0,0,0\n")
    one_error(run("foot", cycle_bvh, "-g", "flat", "-o", odd, "--path", odd), "is the input")
    assert not out.exists() and odd.read_text() == "time,x,z\n0,0,0\n"


@pytest.mark.parametrize(
    ("name", "animation"), [("GodotPlatformerPlayer", "walk"), ("CesiumMan", None)]
)
def test_facing_is_where_a_walk_cycle_walks(name, animation):
    """A cycle faces against its belt (the way its stance feet slide), whatever its joint
    names say: the Godot robot's ``l-thigh`` is on its right, and the body's own tell (its
    knees) decides."""
    pytest.importorskip("pygltflib")
    from helpers import SHARED_GLTF

    from ikrig.character import estimate_sole
    from ikrig.foot.travel.belt import belt_velocity
    from ikrig.io import read_clip

    path = SHARED_GLTF / f"{name}.glb"
    if not path.is_file():
        pytest.skip("../shared/data/gltf is absent")
    m = read_clip(path, animation=animation).motion
    legs = find_legs(m.skeleton, None, m.positions_world())
    belt = np.nanmean(belt_velocity(m, legs, estimate_sole(m, legs)), axis=0)
    walks = math.atan2(-belt[0], -belt[1])
    turn = (facing(m, legs) - walks + math.pi) % (2 * math.pi) - math.pi
    assert abs(turn) < math.radians(20), math.degrees(turn)
