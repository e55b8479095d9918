"""The commands on glTF characters (issue 14): ``ikrig info``, ``foot``, ``convert`` and
``batch`` take ``.glb``/``.gltf`` as they take ``.bvh``, chosen by suffix."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import FOX_LEGS, SHARED_BVH, SHARED_GLTF, invoke, one_error_line

from ikrig.character import find_legs
from ikrig.io import GltfClip, read_bvh, read_clip

pytest.importorskip("pygltflib")

GLTF = SHARED_GLTF
needs_gltf = pytest.mark.skipif(not GLTF.is_dir(), reason="../shared/data/gltf is absent")
needs_bvh = pytest.mark.skipif(not SHARED_BVH.is_dir(), reason="../shared/data/bvh is absent")


@needs_gltf
@pytest.mark.parametrize("name", ["CesiumMan", "Fox", "GodotPlatformerPlayer"])
def test_info_lists_animations_and_quirks(name):
    path = GLTF / f"{name}.glb"
    r = invoke("info", path, "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    clip = read_clip(path)
    assert s["format"] == "gltf" and s["joints"] == clip.motion.num_joints
    assert s["frames"] == clip.motion.num_frames and s["animations"]
    assert s["animation"] == s["animations"][0]["name"]
    assert s["quirks"] == list(clip.quirks) and s["up"] == "y"
    text = invoke("info", path).output
    assert "animations" in text and s["animations"][0]["name"] in text


@needs_gltf
def test_info_and_foot_pick_an_animation_by_name():
    path = GLTF / "Fox.glb"
    s = json.loads(invoke("info", path, "--animation", "Run", "--json").output)
    assert s["animation"] == "Run"
    one_error_line(invoke("info", path, "--animation", "Dance"), "Dance", "Walk")


@needs_bvh
def test_animation_on_a_bvh_is_an_error(tmp_path):
    clip = sorted(SHARED_BVH.glob("*.bvh"))[0]
    one_error_line(invoke("info", clip, "--animation", "walk"), "glTF")
    r = invoke("foot", clip, "-g", "flat", "-o", tmp_path / "o.bvh", "--animation", "walk")
    one_error_line(r, "glTF")


@needs_gltf
@pytest.mark.parametrize("suffix", [".glb", ".gltf", ".bvh"])
def test_foot_on_a_glb_writes_any_format(tmp_path, suffix):
    """The Godot robot's walk placed on the slope: a .glb/.gltf keeps the file's other
    content and validates; a .bvh holds the same world motion."""
    from ikrig.io.gltf.check import check_gltf

    src = GLTF / "GodotPlatformerPlayer.glb"
    out = tmp_path / f"walk{suffix}"
    r = invoke("foot", src, "--animation", "walk", "-g", "slope", "-o", out)
    assert r.exit_code == 0, r.output
    assert "walks in place" in r.output
    before = read_clip(src, animation="walk")
    after = read_clip(out, animation="walk") if suffix != ".bvh" else read_clip(out)
    assert after.motion.skeleton.names == before.motion.skeleton.names
    assert after.motion.num_frames == before.motion.num_frames
    leg = find_legs(before.motion.skeleton).leg_length
    moved = np.abs(after.motion.positions_world() - before.motion.positions_world()).max()
    assert 1e-3 * leg < moved < leg  # placed on the slope, not thrown away
    if suffix != ".bvh":
        assert isinstance(after, GltfClip)
        assert check_gltf(after.document) == []
        assert len(after.document.animations) == len(before.document.animations)
        assert len(after.document.meshes) == len(before.document.meshes)
    assert not list(tmp_path.glob(".*part*"))


@needs_bvh
@pytest.mark.parametrize("suffix", [".glb", ".gltf"])
def test_convert_bvh_to_gltf_and_back(tmp_path, suffix):
    src = sorted(SHARED_BVH.glob("*.bvh"))[0]
    mid, back = tmp_path / f"c{suffix}", tmp_path / "c.bvh"
    assert invoke("convert", src, mid).exit_code == 0
    r = invoke("convert", mid, back)
    assert r.exit_code == 0 and "wrote" in r.output
    m0, m2 = read_bvh(src).motion, read_bvh(back).motion
    leg = find_legs(m0.skeleton).leg_length
    err = np.abs(m2.positions_world() - m0.positions_world()).max()
    assert err < 1e-5 * leg, err


@needs_bvh
def test_convert_refuses_to_overwrite_its_input_or_an_unknown_suffix(tmp_path):
    src = tmp_path / "a.bvh"
    src.write_bytes(sorted(SHARED_BVH.glob("*.bvh"))[0].read_bytes())
    one_error_line(invoke("convert", src, src), "a.bvh")
    one_error_line(invoke("convert", src, tmp_path / "a.fbx"), ".fbx")


@needs_gltf
@needs_bvh
def test_batch_takes_glb_and_bvh_clips(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "robot.glb").write_bytes((GLTF / "GodotPlatformerPlayer.glb").read_bytes())
    bvh = sorted(SHARED_BVH.glob("*.bvh"))[0]
    (lib / bvh.name).write_bytes(bvh.read_bytes())
    r = invoke("batch", lib, "-g", "slope", "-o", tmp_path / "out", "--jobs", "1")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "out" / "robot.glb").is_file()
    assert (tmp_path / "out" / bvh.name).is_file()
    placed = read_clip(tmp_path / "out" / "robot.glb")
    assert isinstance(placed, GltfClip) and placed.motion.num_frames > 1


@needs_gltf
def test_info_finds_cesium_mans_legs_from_its_motion():
    """Every CesiumMan joint is named ``leg_joint_*``: its legs come from the motion's shape
    (the bind pose lives in node rotations, so the zero-rotation rest pose would not do)."""
    s = json.loads(invoke("info", GLTF / "CesiumMan.glb", "--json").output)
    assert s["legs"] and "leg_joint_L_1" in s["legs"] and "leg_joint_R_3" in s["legs"]


@needs_gltf
def test_batch_legs_map_names_the_legs_of_a_mixed_library(tmp_path):
    """A library of a robot and a fox: without a map both are placed on the legs found by
    name (the fox on four since issue 36: its arms reach the floor); a JSON map naming
    legs by pattern wins over the names: the fox's hind legs alone leave its front legs
    named in a warning, all four leave none."""
    lib = tmp_path / "lib"
    (lib / "animals").mkdir(parents=True)
    (lib / "robot.glb").write_bytes((GLTF / "GodotPlatformerPlayer.glb").read_bytes())
    (lib / "animals" / "fox.glb").write_bytes((GLTF / "Fox.glb").read_bytes())
    hind = ";".join(FOX_LEGS.split(";")[:2])
    for k, spec in enumerate((None, hind, FOX_LEGS)):
        out, more = tmp_path / f"out{k}", []
        if spec is not None:
            (tmp_path / "legs.json").write_text(json.dumps({"animals/*.glb": spec}))
            more = ["--legs", tmp_path / "legs.json"]
        r = invoke("batch", lib, "-g", "flat", "-o", out, "--jobs", "1", "-q", *more)
        assert r.exit_code == 0, r.output
        lines = (out / "ikrig_batch.jsonl").read_text().splitlines()
        assert {e["relative"]: e["status"] for e in map(json.loads, lines)} == {
            "robot.glb": "ok",
            "animals/fox.glb": "ok",
        }
        warned = "warning animals/fox.glb: 2 limb(s) reach the floor" in r.output
        assert warned == (spec == hind), r.output
    fox = read_clip(out / "animals" / "fox.glb")
    assert isinstance(fox, GltfClip) and len(find_legs(fox.skeleton, FOX_LEGS).legs) == 4


@needs_gltf
def test_list_animations_of_a_clip_read_equals_of_its_file():
    from ikrig.io import list_animations

    path = GLTF / "Fox.glb"
    assert list_animations(read_clip(path)) == list_animations(path)
