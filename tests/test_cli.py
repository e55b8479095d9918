"""The command line: info, errors, demo and foot, through click's test runner."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import invoke, one_error_line

from ikrig import __version__
from ikrig.cli import main
from ikrig.errors import InputError
from ikrig.io import read_bvh

run = invoke  # the older name of this module's tests


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


def test_demo_leaves_the_walk_the_readme_places_next(tmp_path, monkeypatch):
    """Issue 36: the README's first foot command, ``ikrig foot walk.bvh ...``, runs as
    written after the quick start: the demo writes the built-in walk as walk.bvh beside its
    output, and never over a file of that name."""
    monkeypatch.chdir(tmp_path)
    r = run("demo", "--no-gif")
    assert r.exit_code == 0, r.output
    assert "wrote walk.bvh" in r.output
    walk = read_bvh(tmp_path / "walk.bvh")
    assert walk.motion.num_joints == 31 and walk.num_frames == 360
    r = run("foot", "walk.bvh", "--ground", "stairs", "-o", "walk_stairs.bvh")
    assert r.exit_code == 0, r.output
    (tmp_path / "walk.bvh").write_text("mine")
    r = run("demo", "--no-gif", "-o", "again.bvh")
    assert r.exit_code == 0 and "kept walk.bvh" in r.output, r.output
    assert (tmp_path / "walk.bvh").read_text() == "mine"


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
    r = CliRunner().invoke(
        main, ["foot", str(src), "-g", "flat", "-o", str(out), "--legs", "Hips,Spine"]
    )
    assert r.exit_code == 2 and "--legs" in r.output


# ------------------------------------------------------------------- files and commands (#9)


@pytest.fixture(scope="module")
def walk_bvh(tmp_path_factory):
    """A short built-in walk (2 s at 30 fps, 60 frames) as a BVH file."""
    from ikrig.data.walk import walk_clip
    from ikrig.io.bvh import to_bvh_clip, write_bvh

    path = tmp_path_factory.mktemp("walk") / "walk.bvh"
    write_bvh(path, to_bvh_clip(walk_clip(seconds=2.0, fps=30.0)))
    return path


@pytest.fixture
def clip(walk_bvh, tmp_path):
    """A copy of the walk in this test's own folder."""
    path = tmp_path / "a.bvh"
    path.write_bytes(walk_bvh.read_bytes())
    return path


@pytest.fixture
def no_solve(monkeypatch):
    """Fail the test if foot placement starts (the checks must come first)."""

    def solve(*args, **kwargs):
        raise AssertionError("the solve started before the outputs were checked")

    monkeypatch.setattr("ikrig.cli.commands.run_foot", solve)
    monkeypatch.setattr("ikrig.cli.viz.place", solve)


def test_foot_never_overwrites_its_input(clip, tmp_path, monkeypatch, no_solve):
    before = clip.read_bytes()
    monkeypatch.chdir(tmp_path)
    for args in (
        ["foot", clip, "-g", "flat", "-o", clip],
        ["foot", "a.bvh", "-g", "flat", "-o", "./sub/../a.bvh"],
        ["foot", clip, "-g", "flat", "-o", "b.bvh", "--gif", clip],
        ["demo", "--clip", clip, "-o", clip],
    ):
        one_error_line(invoke(*args), "is the input file", "never overwrites")
    link = tmp_path / "link.bvh"
    link.symlink_to(clip)
    one_error_line(invoke("foot", clip, "-g", "flat", "-o", link), "is the input file")
    one_error_line(invoke("foot", clip, "-g", "flat", "-o", "b.bvh", "--report", clip), ".json")
    one_error_line(invoke("plot", "movie", clip, "-o", clip), ".gif or .mp4")
    one_error_line(invoke("foot", clip, "-g", "flat", "-o", "b.bvh", "--report", "b.bvh"))
    assert clip.read_bytes() == before
    assert not (tmp_path / "b.bvh").exists()


def test_report_is_written_atomically(clip, tmp_path, monkeypatch):
    import errno
    from pathlib import Path

    report = tmp_path / "r.json"
    report.write_text("the previous report")
    real = Path.write_bytes

    def disk_full(self, data):  # half the report reaches the disk, then it is full
        if "r.json" not in self.name:
            return real(self, data)
        real(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", disk_full)
    r = invoke("foot", clip, "-g", "flat", "-o", tmp_path / "b.bvh", "--report", report)
    one_error_line(r, f"No space left on device: {report}")
    assert report.read_text() == "the previous report"
    assert not [p.name for p in tmp_path.iterdir() if ".part" in p.name]
    monkeypatch.undo()
    r = invoke("foot", clip, "-g", "flat", "-o", tmp_path / "b.bvh", "--report", report)
    assert r.exit_code == 0, r.output
    assert json.loads(report.read_text())["frames"] == 60


def test_every_output_is_checked_before_any_work(clip, tmp_path, no_solve):
    afile = tmp_path / "afile"  # a regular file: nothing can be written under it (even root)
    afile.write_text("not a folder")
    out = tmp_path / "b.bvh"
    for args in (
        ["foot", clip, "-g", "flat", "-o", afile / "b.bvh"],
        ["foot", clip, "-g", "flat", "-o", out, "--report", afile / "r.json"],
        ["foot", clip, "-g", "flat", "-o", out, "--gif", afile / "m.gif"],
        ["foot", clip, "-g", "flat", "-o", tmp_path / "b.txt"],
        ["foot", clip, "-g", "flat", "-o", out, "--gif", tmp_path / "m.avi"],
        ["demo", "-o", afile / "out.bvh"],
        ["demo", "-o", out, "--report", afile / "r.json"],
        ["plot", "movie", clip, "-o", afile / "m.gif"],
        ["plot", "skeleton", clip, "-o", afile / "s.png"],
        ["plot", "diagnostics", clip, "-o", tmp_path / "d.xyz"],
    ):
        one_error_line(invoke(*args), "afile" if "afile" in str(args) else "")
    assert not out.exists()


def test_output_folders_are_created(clip, tmp_path):
    out, report = tmp_path / "new" / "b.bvh", tmp_path / "other" / "deep" / "r.json"
    r = invoke("foot", clip, "-g", "flat", "-o", out, "--report", report)
    assert r.exit_code == 0, r.output
    assert read_bvh(out).num_frames == 60 and json.loads(report.read_text())["frames"] == 60


def test_demo_in_an_unwritable_folder_fails_at_once(tmp_path, monkeypatch):
    import time

    (tmp_path / "afile").write_text("")
    monkeypatch.setattr("ikrig.data.walk.walk_clip", lambda **kw: pytest.fail("demo worked"))
    t0 = time.perf_counter()
    one_error_line(invoke("demo", "-o", tmp_path / "afile" / "out.bvh"), "afile")
    assert time.perf_counter() - t0 < 5.0


def test_foot_needs_a_ground_and_demo_says_its_default(clip, tmp_path, no_solve):
    one_error_line(invoke("foot", clip, "-o", tmp_path / "b.bvh"), "--ground")
    r = invoke("demo", "--help")
    text = " ".join(r.output.split())
    assert r.exit_code == 0 and "built-in stairs unless told otherwise" in text
    assert "[default: stairs]" in text
    text = " ".join(invoke("foot", "--help").output.split())
    assert "--ground TEXT" in text and "[required]" in text.split("--ground TEXT")[1][:120]
    one_error_line(
        invoke("foot", clip, "-g", tmp_path / "none.obj", "-o", tmp_path / "b.bvh"),
        "no such file",
        "none.obj",
    )


def test_ground_names_take_any_case_and_suggest_the_nearest(clip, tmp_path):
    """Issue 36's small traps: ``-g Stairs`` is the built-in stairs; a misspelt name gets a
    did-you-mean; the datum line says where the ground's zero went, not a 'raise'."""
    r = invoke("foot", clip, "-g", "Stairs", "-o", tmp_path / "b.bvh")
    assert r.exit_code == 0, r.output
    assert "datum: clip (the ground's y = 0 is put at the clip's floor" in r.output
    assert "raised by" not in r.output
    one_error_line(
        invoke("foot", clip, "-g", "stiars", "-o", tmp_path / "c.bvh"),
        "'stiars' is no built-in ground",
        "did you mean 'stairs'?",
    )


def test_single_pose_file_without_frame_time(clip, tmp_path):
    text = clip.read_text()
    head, motion = text.split("MOTION", 1)
    first = motion.strip().splitlines()[2]
    pose = tmp_path / "pose.bvh"
    pose.write_text(f"{head}MOTION\nFrames: 1\nFrame Time: 0\n{first}\n")
    r = invoke("info", pose)
    assert r.exit_code == 0, r.output
    assert "frames      1, no frame time" in r.output
    assert json.loads(invoke("info", pose, "--json").output)["frame_time"] is None
    one_error_line(invoke("foot", pose, "-g", "flat", "-o", tmp_path / "b.bvh"), "no frame time")
    one_error_line(invoke("demo", "--clip", pose, "-o", tmp_path / "b.bvh"), "no frame time")
    assert not (tmp_path / "b.bvh").exists()


def test_file_without_frames(clip, tmp_path):
    """A BVH with ``Frames: 0`` reads (info says 0 frames); placing its feet or converting
    it is refused with one line naming the file, from the CLI and from the library."""
    head, motion = clip.read_text().split("MOTION", 1)
    empty = tmp_path / "empty.bvh"
    empty.write_text(f"{head}MOTION\nFrames: 0\nFrame Time: 0.0333333\n")
    r = invoke("info", empty)
    assert r.exit_code == 0 and "frames      0 at 30 fps" in r.output, r.output
    for args in (("foot", empty, "-g", "stairs"), ("demo", "--clip", empty)):
        out = one_error_line(invoke(*args, "-o", tmp_path / "b.bvh"), "has no frames")
        assert "empty.bvh" in out
    assert not (tmp_path / "b.bvh").exists()
    out = one_error_line(invoke("convert", empty, tmp_path / "b.glb"), "has no frames")
    assert "empty.bvh" in out and not (tmp_path / "b.glb").exists()
    from ikrig.app.placement import place_clip
    from ikrig.foot import FootPlacer, place_feet
    from ikrig.ground import load_ground
    from ikrig.io import read_bvh

    motion = read_bvh(empty).motion
    ground = load_ground("flat", [[0.0, 0.0]], 1.0)
    for call in (
        lambda: place_feet(motion, ground),
        lambda: place_clip(motion, "stairs", ["full"]),
        lambda: FootPlacer.from_clip(motion, ground),
    ):
        with pytest.raises(InputError, match="clip: has no frames"):
            call()


def _quad_mesh(path, x0, x1, z0, z1, y=0.0):
    trimesh = pytest.importorskip("trimesh", reason="mesh files need the [mesh] extra")
    import numpy as np

    v = np.array([[x0, y, z0], [x1, y, z0], [x1, y, z1], [x0, y, z1]], dtype=np.float64)
    trimesh.Trimesh(v, [[0, 2, 1], [0, 3, 2]], process=False).export(path)
    return path


def test_ground_that_misses_the_clip_is_an_error(clip, tmp_path):
    far = _quad_mesh(tmp_path / "far.obj", 1e6 - 10, 1e6 + 10, -10, 10)
    out, report = tmp_path / "b.bvh", tmp_path / "r.json"
    r = invoke("foot", clip, "-g", far, "-o", out, "--report", report)
    one_error_line(r, "ground", "under no foot in any of the 60 frames")
    assert not out.exists() and not report.exists()
    one_error_line(invoke("demo", "--clip", clip, "-g", far, "-o", out), "under no foot")
    one_error_line(invoke("plot", "diagnostics", clip, "-g", far, "-o", tmp_path / "d.png"))


def test_ground_under_half_the_clip_warns_with_the_frame_count(clip, tmp_path):
    import re

    z = read_bvh(clip).motion.positions_world()[:, 0, 2]
    half = _quad_mesh(tmp_path / "half.obj", -10, 10, -10, float(z.min() + z.max()) / 2)
    out = tmp_path / "b.bvh"
    r = invoke("foot", clip, "-g", half, "-o", out, "--compare")
    assert r.exit_code == 0, r.output
    warned = [line for line in r.stderr.splitlines() if line.startswith("ikrig: warning:")]
    assert len(warned) == 1, r.stderr  # once, though three modes ran
    covered = int(re.search(r"ground covers (\d+) of 60 frames", warned[0]).group(1))
    assert 10 < covered < 50
    assert read_bvh(out).num_frames == 60


BAD_COMMANDS = [
    ["info"],
    ["info", "missing.bvh"],
    ["info", "."],
    ["info", "afile"],
    ["nosuchcommand"],
    ["--nosuchoption"],
    ["foot", "missing.bvh", "-g", "flat", "-o", "b.bvh"],
    ["foot", "a.bvh", "-g", "flat"],
    ["foot", "a.bvh", "-g", "flat", "-o", "."],
    ["foot", "a.bvh", "-g", "flat", "-o", "b.bvh", "--mode", "fast"],
    ["foot", "a.bvh", "-g", "afile", "-o", "b.bvh"],
    ["demo", "--clip", "missing.bvh", "-o", "b.bvh"],
    ["demo", "--clip", "afile", "-o", "b.bvh"],
    ["demo", "-o", "b.png"],
    ["plot", "chain", "-o", "c.xyz"],
    ["plot", "chain", "-o", "noext"],
    ["plot", "convergence", "-o", "afile/c.png"],
    ["plot", "skeleton", "missing.bvh"],
    ["plot", "skeleton", "a.bvh", "-g", "nothing", "-o", "s.png"],
    ["plot", "movie", "a.bvh", "-o", "m.avi"],
    ["plot", "diagnostics", "a.bvh", "-o", "d.gif"],
    ["view", "missing.bvh"],
    ["view", "a.bvh", "-g", "nothing"],
]


@pytest.mark.parametrize("args", BAD_COMMANDS, ids=lambda a: " ".join(a))
def test_bad_paths_and_suffixes_give_one_line(args, clip, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder, not a clip")
    r = CliRunner().invoke(main, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    one_error_line(r)


def test_plot_to_an_unknown_suffix_is_one_line_in_a_real_shell(tmp_path):
    import subprocess
    import sys

    code = "import sys; from ikrig.cli import main; sys.exit(main())"
    r = subprocess.run(
        [sys.executable, "-c", code, "plot", "chain", "-o", "c.xyz"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "ikrig: error: picture c.xyz: unsupported file type '.xyz';"
        " use one of .jpeg, .jpg, .pdf, .png, .svg"
    ]
    assert not list(tmp_path.iterdir())


def test_no_command_still_shows_the_help():
    for args in ([], ["plot"]):
        r = CliRunner().invoke(main, args)
        assert "Usage: " in r.output and "Commands:" in r.output and "ikrig: error" not in r.output


def test_warnings_other_than_ours_are_shown_once_after_the_run(capsys):
    # showing a warning inside the recording block used to record it again, forever
    import warnings

    from ikrig.cli.common import echo_warnings
    from ikrig.foot import DatumWarning

    with pytest.warns(UserWarning, match="something else") as rec:
        with echo_warnings():
            warnings.warn(DatumWarning("the clip's floor is far"), stacklevel=1)
            warnings.warn(UserWarning("something else"), stacklevel=1)
    assert [str(w.message) for w in rec] == ["something else"]
    err = capsys.readouterr().err
    assert err.count("ikrig: warning: the clip's floor is far") == 1


def _zero_leg_bvh(path):
    """A BVH whose named legs have no length at rest (every offset 0)."""

    def leg(side):
        chain = ""
        for name in reversed((f"{side}UpLeg", f"{side}Leg", f"{side}Foot")):
            inner = chain or "End Site\n{\nOFFSET 0 0 0\n}\n"
            channels = "CHANNELS 3 Zrotation Xrotation Yrotation"
            chain = f"JOINT {name}\n{{\nOFFSET 0 0 0\n{channels}\n{inner}}}\n"
        return chain

    frames = "\n".join(" ".join(["0"] * 24) for _ in range(3))
    path.write_text(
        "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\n"
        "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        f"{leg('Left')}{leg('Right')}}}\nMOTION\nFrames: 3\nFrame Time: 0.0333333\n{frames}\n"
    )
    return path


def test_foot_names_the_clip_when_its_legs_cannot_be_placed(tmp_path):
    """Issue 35: an error about the clip found while placing it (a zero leg length) names
    the file, in one line, and nothing is written."""
    clip = _zero_leg_bvh(tmp_path / "zero.bvh")
    out = tmp_path / "out.bvh"
    r = invoke("foot", clip, "-g", "flat", "-o", out)
    one_error_line(r, "zero.bvh", "zero leg length")
    assert not out.exists()
