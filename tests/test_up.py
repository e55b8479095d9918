"""Up axes (issue 11): detection from the poses, the turn into Y-up and back, mesh files in
a clip's convention, and the CLI placing a Z-up clip and writing it back Z-up."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import SHARED_BVH, assert_foot_bar

from ikrig.character import detect_up, find_legs, from_y_up, to_y_up
from ikrig.cli import main
from ikrig.data.walk import walk_clip
from ikrig.errors import InputError
from ikrig.ground import MeshGround, load_ground
from ikrig.io import read_bvh
from ikrig.math import UP_AXES, points_from_y_up, points_to_y_up, to_y_up_quat
from ikrig.metrics import foot_metrics
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

SHARED = [
    p
    for folder in (SHARED_BVH, SHARED_BVH.parent / "bvh_more")
    for p in (sorted(folder.glob("*.bvh")) if folder.is_dir() else [])
]
ZUP = [p for p in SHARED if "zup" in p.name]
needs_shared = pytest.mark.skipif(not SHARED, reason="../shared/data is not present")
needs_zup = pytest.mark.skipif(not ZUP, reason="the shared Z-up clip is not present")


@pytest.fixture(scope="module")
def walk():
    return walk_clip(seconds=1.0, fps=30.0)


def bone_lengths(motion: Motion) -> np.ndarray:
    pos = motion.positions_world()
    parents = motion.skeleton.parents
    kids = np.flatnonzero(parents >= 0)
    return np.linalg.norm(pos[..., kids, :] - pos[..., parents[kids], :], axis=-1)


# ------------------------------------------------------------------------- the fixed turns
def test_the_turns_take_each_up_axis_to_y_and_back():
    for up, axis in (("y", 1), ("z", 2), ("x", 0)):
        unit = np.eye(3)[axis]
        np.testing.assert_allclose(points_to_y_up(unit, up), [0, 1, 0], atol=1e-15)
        np.testing.assert_allclose(points_from_y_up([0, 1, 0], up), unit, atol=1e-15)
    # Z-up right-handed -> Y-up: -90 degrees about X (X stays, +Y goes to -Z)
    np.testing.assert_allclose(points_to_y_up([[1, 0, 0], [0, 1, 0]], "z"),
                               [[1, 0, 0], [0, 0, -1]], atol=1e-15)  # fmt: skip
    # X-up -> Y-up: +90 degrees about Z (Z stays, +Y goes to -X)
    np.testing.assert_allclose(points_to_y_up([[0, 0, 1], [0, 1, 0]], "x"),
                               [[0, 0, 1], [-1, 0, 0]], atol=1e-15)  # fmt: skip
    for up in UP_AXES:  # proper rotations: right-handed stays right-handed
        m = points_to_y_up(np.eye(3), up)
        assert np.linalg.det(m) == pytest.approx(1.0)
    with pytest.raises(InputError, match="up: expected one of y, z, x, got 'w'"):
        to_y_up_quat("w")


# ------------------------------------------------------------------------- detection
@needs_shared
def test_every_shared_clip_is_detected():
    for path in SHARED:
        expected = "z" if "zup" in path.name else "y"
        motion = read_bvh(path).motion
        assert detect_up(motion) == expected, path.name
        # from the rest pose alone too (rigs whose legs stick out sideways at rest, as the
        # Bandai ones, give no evidence and are taken as Y-up)
        assert detect_up(motion.skeleton) == expected, path.name


@pytest.mark.parametrize("up", ["y", "z", "x"])
def test_a_clip_turned_to_any_up_axis_is_detected_and_turned_back(walk, up):
    turned = from_y_up(walk, up)
    axis = "xyz".index(up)
    head = walk.skeleton.index("Head")
    assert np.all(turned.positions_world()[:, head, axis] > 0.5)  # the head is up there
    assert detect_up(turned) == up
    # a rig authored in that world (every rest offset turned) reads so at rest too (turned
    # at the root only, the rest pose stays Y-up: the turn is in the root's rotation)
    sk = walk.skeleton
    authored = dataclasses.replace(sk, offsets=points_from_y_up(sk.offsets, up))
    assert detect_up(authored) == up
    assert detect_up(turned[0]) == up  # a single pose
    back = to_y_up(turned, up)
    np.testing.assert_allclose(back.positions_world(), walk.positions_world(), atol=1e-12)
    np.testing.assert_allclose(back.skeleton.offsets, walk.skeleton.offsets, atol=1e-15)
    # only the root's data changes; bone lengths are kept
    np.testing.assert_array_equal(turned.rotations_local[:, 1:], walk.rotations_local[:, 1:])
    np.testing.assert_array_equal(turned.positions_local[:, 1:], walk.positions_local[:, 1:])
    np.testing.assert_array_equal(turned.skeleton.offsets[1:], walk.skeleton.offsets[1:])
    np.testing.assert_allclose(bone_lengths(turned), bone_lengths(walk), atol=1e-12)
    assert turned.frame_time == walk.frame_time


@pytest.mark.parametrize("up", ["z", "x"])
def test_detection_does_not_depend_on_names_or_arms(walk, up):
    """Blender-style leg names, and the arms raised into a T pose, read the same."""
    sk = walk.skeleton
    rename = {"LeftUpLeg": "thigh.L", "LeftLeg": "shin.L", "LeftFoot": "foot.L",
              "RightUpLeg": "thigh.R", "RightLeg": "shin.R", "RightFoot": "foot.R"}  # fmt: skip
    names = tuple(rename.get(n, n) for n in sk.names)
    renamed = walk.replace(skeleton=dataclasses.replace(sk, names=names))
    assert detect_up(from_y_up(renamed, up)) == up
    rl = np.array(renamed.rotations_local)
    for name in ("LeftArm", "RightArm", "LeftForeArm", "RightForeArm"):
        rl[:, sk.index(name)] = [0, 0, 0, 1]
    assert detect_up(from_y_up(renamed.replace(rotations_local=rl), up)) == up


def test_no_named_legs_or_legs_that_do_not_hang_are_y_up():
    torso = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [0, 0, 1.0]])
    assert detect_up(torso) == "y"
    sideways = Skeleton(  # both legs stretched along X at rest: no evidence
        ("Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot"),
        [-1, 0, 1, 2, 0, 4, 5],
        [[0, 0, 1], [0.1, 0, 0], [0.4, 0, 0], [0.4, 0, 0], [-0.1, 0, 0], [-0.4, 0, 0],
         [-0.4, 0, 0]],
    )  # fmt: skip
    assert detect_up(sideways) == "y"
    with pytest.raises(InputError, match="detect_up"):
        detect_up(np.zeros((3, 3)))


# ------------------------------------------------------------------------- turning clips
def test_y_is_the_same_object_and_bad_axes_raise(walk):
    assert to_y_up(walk, "y") is walk and from_y_up(walk, "y") is walk
    for turn in (to_y_up, from_y_up):
        with pytest.raises(InputError, match="up: expected one of y, z, x"):
            turn(walk, "w")


@pytest.mark.parametrize("up", ["z", "x"])
def test_round_trip_is_exact_and_dtypes_are_kept(walk, up):
    for motion in (walk, walk[::7], Motion.rest(walk.skeleton, (2, 3))):
        back = from_y_up(to_y_up(motion, up), up)
        np.testing.assert_allclose(back.positions_world(), motion.positions_world(), atol=1e-9)
        back = to_y_up(from_y_up(motion, up), up)
        np.testing.assert_allclose(back.positions_world(), motion.positions_world(), atol=1e-9)
    single = walk.replace(rotations_local=walk.rotations_local.astype(np.float32),
                          positions_local=walk.positions_local.astype(np.float32))  # fmt: skip
    turned = to_y_up(single, up)
    assert turned.rotations_local.dtype == np.float32
    assert turned.positions_local.dtype == np.float32
    assert turned.skeleton.offsets.dtype == np.float64


@needs_zup
def test_the_shared_z_up_clip_round_trips_and_stands_up():
    motion = read_bvh(ZUP[0]).motion
    y_up = to_y_up(motion, "z")
    assert detect_up(y_up) == "y"
    back = from_y_up(y_up, "z")
    np.testing.assert_allclose(back.positions_world(), motion.positions_world(), atol=1e-9)
    # world positions turn as points: (x, y, z) -> (x, z, -y)
    pos = motion.positions_world()
    np.testing.assert_allclose(y_up.positions_world(),
                               np.stack([pos[..., 0], pos[..., 2], -pos[..., 1]], -1),
                               atol=1e-9)  # fmt: skip
    np.testing.assert_allclose(bone_lengths(y_up), bone_lengths(motion), atol=1e-9)


# ------------------------------------------------------------------------- mesh files
def _quad_file(tmp_path, name, vertices):
    trimesh = pytest.importorskip("trimesh", reason="mesh files need the [mesh] extra")
    path = tmp_path / name
    trimesh.Trimesh(vertices, [[0, 2, 1], [0, 3, 2], [1, 2, 4]], process=False).export(path)
    return path


@pytest.mark.parametrize("up", ["z", "x"])
def test_a_mesh_file_in_another_up_axis_equals_the_y_up_mesh(tmp_path, up):
    v_y = np.array([[-1, 0.2, -1], [1, 0.2, -1], [1, 0.2, 1], [-1, 0.2, 1.0], [2, 0.5, 0]])
    v_up = points_from_y_up(v_y, up)  # the same ground, authored for an `up` clip
    np.testing.assert_allclose(v_up[:, "xyz".index(up)], v_y[:, 1])
    path_y = _quad_file(tmp_path, "y.ply", v_y)
    path_up = _quad_file(tmp_path, f"{up}.ply", v_up)
    plain, turned = MeshGround.load(path_y), MeshGround.load(path_up, up=up)
    np.testing.assert_allclose(turned.vertices, plain.vertices, atol=1e-12)
    np.testing.assert_array_equal(turned.faces, plain.faces)
    via = load_ground(str(path_up), None, 1.0, up=up)
    xz = np.array([[0.3, -0.4], [1.5, 0.1], [-0.9, 0.9]])
    for ground in (turned, via):
        h, _, hit = ground.height_at(xz)
        h0, _, hit0 = plain.height_at(xz)
        np.testing.assert_array_equal(hit, hit0)
        np.testing.assert_allclose(h, h0, atol=1e-12)
    # unturned, the Z-up file is a wall, not this ground
    assert not np.allclose(MeshGround.load(path_up).vertices, plain.vertices)


def test_mesh_up_axis_is_checked_first(tmp_path):
    with pytest.raises(InputError, match="up: expected one of"):
        MeshGround.load(tmp_path / "missing.ply", up="-z")
    with pytest.raises(InputError, match="up: expected one of"):
        load_ground("flat", np.zeros((2, 2)), 1.0, up="w")


# ------------------------------------------------------------------------- the CLI
def _run(*args):
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r


@needs_zup
def test_the_cli_places_a_z_up_clip_and_writes_it_back_z_up(tmp_path):
    path, out, report = ZUP[0], tmp_path / "out.bvh", tmp_path / "report.json"
    r = _run("foot", path, "--ground", "flat", "-o", out, "--report", report)
    assert "up axis: z (detected)" in r.output
    assert json.loads(report.read_text())["up"] == "z"
    source, result = read_bvh(path), read_bvh(out)
    assert result.num_frames == source.num_frames and result.channels == source.channels
    assert detect_up(result.motion) == "z"
    leg = find_legs(source.motion.skeleton).leg_length
    root_s, root_r = source.motion.positions_world()[:, 0], result.motion.positions_world()[:, 0]
    np.testing.assert_allclose(root_r[:, :2], root_s[:, :2], atol=1e-6 * leg)  # X, Y: level
    # seen in Y-up, the feet rest on the floor in contact frames (issue 11's bar on flat
    # ground; placed as if Y were up, they floated about half a leg)
    src_y, res_y = to_y_up(source.motion, "z"), to_y_up(result.motion, "z")
    legs = find_legs(src_y.skeleton)
    m = foot_metrics(res_y, src_y, None, legs)
    assert_foot_bar(m, (path.name, "flat"), exact=False)
    text = _run("info", out).output
    assert "up axis     z" in text
    assert json.loads(_run("info", out, "--json").output)["up"] == "z"


@needs_zup
def test_the_cli_takes_a_given_up_axis_and_the_datum(tmp_path):
    path, out, report = ZUP[0], tmp_path / "out.bvh", tmp_path / "report.json"
    r = _run("foot", path, "-g", "flat", "-o", out, "--up", "z", "--datum", "absolute",
             "--report", report)  # fmt: skip
    assert "up axis: z (given)" in r.output
    assert json.loads(report.read_text())["datum"]["kind"] == "absolute"
    assert detect_up(read_bvh(out).motion) == "z"
    demo = tmp_path / "demo.bvh"
    r = _run("demo", "--clip", path, "-g", "flat", "-o", demo, "--no-gif", "--up", "z")
    assert "up axis: z (given)" in r.output
    back = read_bvh(demo)
    assert detect_up(back.motion) == "z" and back.num_frames == read_bvh(path).num_frames
