"""The command line: info, errors, demo and foot, through click's test runner."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ikrig import __version__
from ikrig.cli import main
from ikrig.io import read_bvh


def run(*args):
    return CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False)


def test_version():
    r = run("--version")
    assert r.exit_code == 0 and __version__ in r.output


def test_info_on_every_shared_clip(bvh_files):
    for path in bvh_files:
        r = run("info", path)
        assert r.exit_code == 0, r.output
        clip = read_bvh(path)
        assert f"joints      {clip.motion.num_joints} " in r.output
        assert f"frames      {clip.num_frames} at" in r.output
        assert "legs        left:" in r.output
        data = json.loads(run("info", path, "--json").output)
        assert data["joints"] == clip.motion.num_joints
        assert data["frames"] == clip.num_frames
        assert data["frame_time"] == pytest.approx(clip.frame_time)
        assert data["duration"] == pytest.approx(clip.num_frames * clip.frame_time)
        assert sum(data["channel_layout"].values()) == clip.motion.num_joints
        assert data["channels"] == sum(len(c) for c in clip.channels)


def test_malformed_file_is_one_line_naming_the_line(tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text(
        "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n"
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n"
        "  End Site\n  {\n    OFFSET 0 1 0\n  }\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n"
        "0 0 0 0 0 0\n0 0 0 0 0\n"
    )
    r = CliRunner().invoke(main, ["info", str(bad)])
    assert r.exit_code == 2
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "bad.bvh:15:" in lines[0] and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["info", str(tmp_path / "missing.bvh")])
    assert r.exit_code == 2 and "missing.bvh" in r.output


def test_demo_writes_a_clip_and_the_metrics(tmp_path):
    out = tmp_path / "demo.bvh"
    report = tmp_path / "demo.json"
    r = run("demo", "-o", out, "--report", report, "--no-gif")
    assert r.exit_code == 0, r.output
    assert "baseline" in r.output and "full" in r.output and "trace-offset" in r.output
    clip = read_bvh(out)
    assert clip.motion.num_joints == 31 and clip.num_frames == 360
    rows = json.loads(report.read_text())["rows"]
    assert rows["full"]["pen_p95"] <= 0.5 < rows["baseline"]["pen_p95"]


def test_foot_keeps_the_file_layout(bvh_files, tmp_path):
    src = next(p for p in bvh_files if "xia_old_run" in p.name)
    out, report = tmp_path / "out.bvh", tmp_path / "report.json"
    r = run("foot", src, "--ground", "slope", "-o", out, "--report", report)
    assert r.exit_code == 0, r.output
    before, after = read_bvh(src), read_bvh(out)
    assert after.channels == before.channels and after.num_frames == before.num_frames
    assert after.frame_time == pytest.approx(before.frame_time)
    assert after.motion.skeleton.names == before.motion.skeleton.names
    data = json.loads(report.read_text())
    assert set(data["rows"]) == {"baseline", "full"}
    r = CliRunner().invoke(main, ["foot", str(src), "-o", str(out), "--legs", "Hips,Spine"])
    assert r.exit_code == 2 and "--legs" in r.output
