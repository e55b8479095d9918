"""Pictures and movies (ikrig.viz, the [plot] extra): each writes a file that is not blank
where the drawing should be, movies have the expected frame count, the CLI writes them."""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

mpl = pytest.importorskip("matplotlib", reason="matplotlib not installed (the [plot] extra)")
PIL_Image = pytest.importorskip("PIL.Image", reason="Pillow not installed (the [plot] extra)")

from click.testing import CliRunner  # noqa: E402

from ikrig.app.placement import FootPlacement  # noqa: E402
from ikrig.character import estimate_sole, find_legs  # noqa: E402
from ikrig.cli.viz import plot  # noqa: E402
from ikrig.ground import load_ground  # noqa: E402
from ikrig.viz import chain2d, diagnostics, geometry, movie, scene3d  # noqa: E402
from ikrig.viz.options import MovieLook  # noqa: E402


def _foot_pipeline():
    """``ikrig.foot`` or a skip while the two-bone solver it needs is missing."""
    try:
        from ikrig import foot
    except ImportError as exc:
        pytest.skip(f"foot pipeline not importable yet ({exc}); its pictures are implemented")
    return foot


# ------------------------------------------------------------------------------ test data
def stick_walk(frames: int = 24, fps: float = 30.0) -> Motion:
    """A small biped (metres, Y up) walking along +Z with swinging legs; made by code."""
    names = (
        "Hips",
        "LeftUpLeg",
        "LeftLeg",
        "LeftFoot",
        "LeftToeBase",
        "RightUpLeg",
        "RightLeg",
        "RightFoot",
        "RightToeBase",
        "Spine",
        "Head",
        "LeftArm",
        "RightArm",
    )
    parents = [-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 9, 9]
    offsets = [
        [0, 0.95, 0],
        [0.1, -0.05, 0],
        [0, -0.43, 0],
        [0, -0.42, 0],
        [0, -0.06, 0.12],
        [-0.1, -0.05, 0],
        [0, -0.43, 0],
        [0, -0.42, 0],
        [0, -0.06, 0.12],
        [0, 0.3, 0],
        [0, 0.45, 0],
        [0.2, 0.35, 0],
        [-0.2, 0.35, 0],
    ]
    sk = Skeleton(names, parents, offsets)
    t = np.arange(frames) / fps
    phase = 2 * np.pi * t / 0.8
    rot = np.zeros((frames, len(names), 4))
    rot[..., 3] = 1.0

    def about_x(a):
        return np.stack([np.sin(a / 2), 0 * a, 0 * a, np.cos(a / 2)], axis=-1)

    for hip, knee, sign in ((1, 2, 1.0), (5, 6, -1.0)):
        rot[:, hip] = about_x(-0.45 * sign * np.sin(phase))
        rot[:, knee] = about_x(0.6 * np.maximum(0.0, sign * np.cos(phase)))
    pos = np.broadcast_to(sk.offsets, (frames, len(names), 3)).copy()
    pos[:, 0, 2] = 1.2 * t
    pos[:, 0, 1] = 0.93 + 0.02 * np.cos(2 * phase)
    return Motion(sk, rot, pos, 1.0 / fps)


def fake_result(clip: Motion):
    """A duck-typed FootResult (no IK): enough for the movie, built without the pipeline."""
    legs = find_legs(clip.skeleton)
    sole = estimate_sole(clip, legs)
    pos = clip.positions_world()
    ankles = pos[:, [g.ankle for g in legs.legs]]
    contacts = ankles[..., 1] < np.percentile(ankles[..., 1], 40)
    info = SimpleNamespace(targets_world=ankles)
    return SimpleNamespace(
        motion=clip,
        baseline=clip,
        legs=legs,
        sole=sole,
        contacts=contacts,
        pins=contacts.astype(float),
        info=info,
    )


def ground_for(clip, name="stairs"):
    legs = find_legs(clip.skeleton)
    sole = estimate_sole(clip, legs)
    path = clip.positions_world()[:, 0][:, [0, 2]]
    return load_ground(name, path, legs.leg_length, sole.floor)


# ------------------------------------------------------------------------------ pixel checks
def read_rgb(path) -> np.ndarray:
    with PIL_Image.open(path) as im:
        return np.asarray(im.convert("RGB")).astype(np.int16)


def ink(img: np.ndarray, background=(255, 255, 255), tol: int = 30) -> np.ndarray:
    """Bool mask of pixels that differ from the background colour."""
    return np.abs(img - np.array(background)).max(axis=-1) > tol


def ink_near(img, xy_pixels, radius: int = 6) -> np.ndarray:
    """For each ``(x, y)`` display pixel (origin bottom-left): is there ink within radius?"""
    H, W = img.shape[:2]
    mask = ink(img)
    out = []
    for x, y in np.asarray(xy_pixels).reshape(-1, 2):
        r, c = int(round(H - y)), int(round(x))
        win = mask[max(r - radius, 0) : r + radius + 1, max(c - radius, 0) : c + radius + 1]
        out.append(bool(win.any()))
    return np.array(out)


def projected_3d(ax, points) -> np.ndarray:
    """Display pixels of world points drawn on a 3D axes."""
    from mpl_toolkits.mplot3d import proj3d

    ax.figure.canvas.draw()
    p = np.asarray(points, dtype=float).reshape(-1, 3)
    x, y, _ = proj3d.proj_transform(p[:, 0], p[:, 1], p[:, 2], ax.get_proj())
    return ax.transData.transform(np.column_stack([x, y]))


# ------------------------------------------------------------------------------ geometry
@pytest.mark.parametrize("name", ["flat", "stairs", "slope", "bumps", "blocks"])
def test_ground_mesh_lies_on_the_ground(name):
    clip = stick_walk()
    ground = ground_for(clip, name)
    path = clip.positions_world()[:, 0][:, [0, 2]]
    bounds = geometry.path_bounds(path, 1.0)
    v, f = geometry.ground_mesh(ground, bounds, cells=20)
    assert len(f) > 0 and f.max() < len(v)
    # the centres of upward-facing triangles are on the ground (exact grounds: to rounding)
    tri = v[f]
    n = geometry.face_normals(v, f)
    up = n[:, 1] > 0.5
    c = tri[up].mean(axis=1)
    h, _, mask = ground.height_at(c[:, [0, 2]])
    tol = 1e-9 if name != "bumps" else 0.02
    assert mask.all()
    assert np.abs(h - c[:, 1]).max() <= tol
    polys, index = geometry.clip_faces_xz(v, f, bounds + np.array([[0.3, 0.3], [-0.3, -0.3]]))
    assert len(polys) == len(index) > 0
    allp = np.concatenate(polys)
    assert allp[:, 0].min() >= bounds[0, 0] + 0.3 - 1e-9
    assert allp[:, 2].max() <= bounds[1, 1] - 0.3 + 1e-9


# ------------------------------------------------------------------------------ plots
@pytest.mark.parametrize("solver", ["ccd2d", "fabrik", "ccd", "follow"])
def test_chain_plot_draws_the_chain(tmp_path, solver):
    pos, cons = chain2d.default_chain(4, 60.0)
    out = tmp_path / f"chain_{solver}.png"
    fig = chain2d.plot_chain_2d(pos, [1.0, 1.8], cons, solver=solver, path=out)
    img = read_rgb(out)
    assert ink(img).mean() > 0.01
    ax = fig.axes[0]
    # every joint of the drawn solution, and the target, have ink around them
    polys = [p for p in ax.patches if p.__class__.__name__ == "Polygon"]
    assert len(polys) == 4
    joints = np.array([p.get_xy()[0] for p in polys] + [polys[-1].get_xy()[2]])
    assert ink_near(img, ax.transData.transform(joints)).all()
    assert ink_near(img, ax.transData.transform([[1.0, 1.8]])).all()
    # the background far from the chain stays empty: the top-left corner of the axes
    x0, y0 = ax.transAxes.transform([0.02, 0.98])
    assert not ink_near(img, [[x0 + 6, y0 - 6]], radius=3).any()


def test_chain_iterations_are_the_solver_run_step_by_step():
    from ikrig.viz._solve import solver_iterations

    pos, cons = chain2d.default_chain(4, 60.0)
    final, steps = solver_iterations("fabrik", pos, [1.0, 1.8], cons)
    assert steps[0][0] == 0 and steps[-1][0] == int(final.iterations)
    np.testing.assert_allclose(steps[-1][1], final.positions_world, atol=1e-12)
    np.testing.assert_allclose(steps[0][1][:, :2], pos)


def test_joint_ranges_follow_the_parent_bone():
    from ikrig.constraints import AngleLimit2D

    pos = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    rng = chain2d.joint_ranges(pos, [AngleLimit2D.degrees(-30, 30), AngleLimit2D.degrees(0, 90)])
    np.testing.assert_allclose(np.degrees(rng[0]), [-30, 30])
    np.testing.assert_allclose(np.degrees(rng[1]), [0, 90])
    clockwise = AngleLimit2D.degrees(0, 90, normal=(0, 0, -1))
    np.testing.assert_allclose(
        np.degrees(chain2d.joint_ranges(pos, [None, clockwise])[1]), [-90, 0]
    )


@pytest.mark.parametrize("name", ["stairs", "blocks", "bumps"])
def test_skeleton_plot_draws_skeleton_and_ground(tmp_path, name):
    clip = stick_walk()
    ground = ground_for(clip, name)
    out = tmp_path / f"skeleton_{name}.png"
    fig = scene3d.plot_skeleton_3d(clip, ground, frame=10, path=out)
    img = read_rgb(out)
    ax = fig.axes[0]
    pos = clip[10].positions_world()
    px = projected_3d(ax, pos)
    assert ink_near(img, px, radius=4).all()
    # the ground is drawn under the character
    root = pos[0]
    h, _, _ = ground.height_at(root[[0, 2]])
    under = projected_3d(ax, [[root[0], float(h), root[2] + 0.3]])
    assert ink_near(img, under, radius=3).all()
    # ray casts hit the ground under every sole point
    scene_lines = [c for c in ax.collections if c.__class__.__name__ == "Line3DCollection"]
    assert any(len(c.get_segments()) >= 4 for c in scene_lines)


def test_convergence_plot(tmp_path):
    pos, _ = chain2d.default_chain(5, 60.0)
    curves = diagnostics.convergence_curves(pos, [1.2, 2.4], solvers=("ccd", "fabrik", "follow"))
    for s in ("ccd", "fabrik"):
        its, errs = curves[s]
        assert its[0] == 0 and errs[-1] < 1e-3 * errs[0]
    assert len(curves["follow"][0]) == 1
    out = tmp_path / "conv.png"
    fig = diagnostics.plot_convergence(
        pos, [1.2, 2.4], solvers=("ccd", "fabrik", "follow"), path=out
    )
    img = read_rgb(out)
    ax = fig.axes[0]
    its, errs = curves["fabrik"]
    length = float(np.linalg.norm(np.diff(pos, axis=0), axis=-1).sum())
    px = ax.transData.transform(np.column_stack([its, np.maximum(errs / length, 1e-7)]))
    assert ink_near(img, px, radius=3).all()


def test_movie_gif_has_the_expected_frames(tmp_path):
    clip = stick_walk(frames=24)
    ground = ground_for(clip)
    out = tmp_path / "movie.gif"
    movie.write_before_after_movie(
        fake_result(clip),
        clip,
        ground,
        out,
        max_frames=5,
        look=MovieLook(size=(4.0, 2.0), dpi=40),
        progress=False,
    )
    assert list(movie.frame_indices(24, 5)) == [0, 5, 10, 15, 20]
    with PIL_Image.open(out) as im:
        assert im.n_frames == 5
        assert im.size == (160, 80)
        assert im.info["duration"] == pytest.approx(5000 / 30, abs=10)
        frames = []
        for k in range(im.n_frames):
            im.seek(k)
            frames.append(np.asarray(im.convert("RGB")).astype(np.int16))
    for f in frames:  # both panels show something
        assert ink(f[:, :80]).mean() > 0.02 and ink(f[:, 80:]).mean() > 0.02
    assert np.abs(frames[0] - frames[-1]).max() > 0  # the character moves


def test_movie_mp4(tmp_path):
    pytest.importorskip("imageio_ffmpeg", reason="imageio-ffmpeg not installed (MP4 output)")
    import imageio_ffmpeg

    clip = stick_walk(frames=12)
    out = tmp_path / "movie.mp4"
    movie.write_before_after_movie(
        fake_result(clip),
        clip,
        ground_for(clip),
        out,
        max_frames=6,
        look=MovieLook(size=(4.0, 2.0), dpi=40),
        progress=False,
    )
    n, _ = imageio_ffmpeg.count_frames_and_secs(str(out))
    assert n == 6


def test_movie_rejects_unknown_format(tmp_path):
    from ikrig.errors import InputError

    clip = stick_walk(frames=4)
    with pytest.raises(InputError, match="gif or .mp4"):
        movie.write_before_after_movie(fake_result(clip), clip, None, tmp_path / "x.avi")


def test_cli_plot_chain_and_convergence(tmp_path):
    runner = CliRunner()
    out = tmp_path / "chain.png"
    r = runner.invoke(plot, ["chain", "--solver", "fabrik", "--bones", "3", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert ink(read_rgb(out)).mean() > 0.01
    out = tmp_path / "conv.png"
    r = runner.invoke(
        plot, ["convergence", "--bones", "4", "--max-iterations", "10", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert ink(read_rgb(out)).mean() > 0.01


def test_core_does_not_import_viz():
    import subprocess
    import sys

    code = (
        "import sys, ikrig, ikrig.pose, ikrig.solvers.fabrik, ikrig.ground, ikrig.cli;"
        "bad = [m for m in sys.modules if m.startswith('ikrig.viz') or m in"
        " ('matplotlib', 'viser')]; print(bad); sys.exit(1 if bad else 0)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------------------------ with foot IK
@pytest.fixture(scope="module")
def placed():
    foot = _foot_pipeline()
    clip = stick_walk(frames=30)
    ground = ground_for(clip, "stairs")
    return clip, ground, foot.place_feet(clip, ground)


def test_foot_diagnostics_plot(tmp_path, placed):
    clip, ground, result = placed
    out = tmp_path / "diag.png"
    fig = diagnostics.plot_foot_diagnostics(result, clip, ground, path=out)
    img = read_rgb(out)
    assert len(fig.axes) >= 3
    ax = fig.axes[0]
    t = np.arange(clip.num_frames) * clip.frame_time
    c = diagnostics.foot_clearance(result.motion, result.sole, ground)[:, 0]
    c = c / result.legs.leg_length
    ok = np.isfinite(c)
    assert ink_near(img, ax.transData.transform(np.column_stack([t[ok], c[ok]])), 3).all()


def test_four_legged_diagnostics_fit_and_tell_the_legs_apart(tmp_path):
    """The Fox's four legs: the knee legend stays inside the figure, and each leg's knee
    lines have a style of their own."""
    _foot_pipeline()
    pytest.importorskip("pygltflib")
    from helpers import FOX_LEGS, SHARED_GLTF

    from ikrig.app.placement import place_clip
    from ikrig.io import read_gltf

    path = SHARED_GLTF / "Fox.glb"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    placed = place_clip(read_gltf(path, animation="Walk").motion, "slope", ["full"], FOX_LEGS)
    fig = diagnostics.plot_foot_diagnostics(
        placed.results["full"], placed.source, placed.world(), path=tmp_path / "fox.png"
    )
    (knees,) = [a for a in fig.axes if a.get_ylabel() == "knee flexion (deg)"]
    box = knees.get_legend().get_window_extent()
    assert 0 <= box.x0 and box.x1 <= fig.bbox.x1, (box, fig.bbox)
    styles = {}
    for line in knees.get_lines():
        styles.setdefault(str(line.get_linestyle()), set()).add(line.get_label().split()[0])
    assert sorted(len(legs) for legs in styles.values()) == [1, 1, 1, 1], styles


def test_skeleton_plot_with_result(tmp_path, placed):
    clip, ground, result = placed
    out = tmp_path / "sk.png"
    fig = scene3d.plot_skeleton_3d(clip, ground, frame=15, result=result, path=out)
    img = read_rgb(out)
    px = projected_3d(fig.axes[0], result.info.targets_world[15])
    assert ink_near(img, px, radius=4).all()


def test_write_before_after_gif_on_a_real_result(tmp_path, placed):
    clip, ground, result = placed
    out = tmp_path / "ba.gif"
    movie.write_before_after_gif(
        result,
        clip,
        ground,
        out,
        max_frames=4,
        look=MovieLook(size=(4.0, 2.0), dpi=40),
        progress=False,
    )
    with PIL_Image.open(out) as im:
        assert im.n_frames == len(movie.frame_indices(30, 4)) == 4


def test_cli_plot_movie_skeleton_diagnostics(tmp_path, monkeypatch):
    bvh = stick_bvh(tmp_path)
    runner = CliRunner()
    for args, out in (
        (["movie", str(bvh), "-g", "slope", "--max-frames", "3", "--dpi", "30"], "m.gif"),
        (["skeleton", str(bvh), "-g", "blocks"], "s.png"),
        (["diagnostics", str(bvh), "-g", "stairs"], "d.png"),
    ):
        r = runner.invoke(plot, args + ["-o", str(tmp_path / out)])
        assert r.exit_code == 0, (args, r.output, r.exception)
        assert (tmp_path / out).stat().st_size > 1000
    with PIL_Image.open(tmp_path / "m.gif") as im:
        assert im.n_frames == 3


@pytest.mark.parametrize("command", ["skeleton", "diagnostics", "movie"])
def test_clip_pictures_turn_a_z_up_clip_y_up(tmp_path, monkeypatch, command):
    """A Z-up clip is placed and drawn Y-up, as ``ikrig foot`` places it: its up axis is
    detected and printed; ``--up y`` keeps it as recorded."""
    bvh = stick_bvh(tmp_path, up="z")
    drawn = []
    draw = lambda result, motion, ground, *a, **k: drawn.append(motion)  # noqa: E731
    monkeypatch.setattr(diagnostics, "plot_foot_diagnostics", draw)
    monkeypatch.setattr(movie, "write_before_after_movie", draw)
    monkeypatch.setattr(scene3d, "plot_skeleton_3d", lambda motion, *a, **k: drawn.append(motion))
    out = str(tmp_path / ("m.gif" if command == "movie" else "p.png"))
    want = stick_walk(frames=20).positions_world()
    scale = float(np.ptp(want))
    r = CliRunner().invoke(plot, [command, str(bvh), "-g", "flat", "-o", out])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "up axis: z (detected)" in r.output
    np.testing.assert_allclose(drawn[-1].positions_world(), want, atol=1e-5 * scale)
    r = CliRunner().invoke(plot, [command, str(bvh), "-g", "flat", "--up", "y", "-o", out])
    assert r.exit_code == 0, (r.output, r.exception)
    assert np.abs(drawn[-1].positions_world() - want).max() > 0.1 * scale  # as recorded


STANDING = {
    "as recorded": ([], FootPlacement(seed=3)),
    "moved": (
        ["--at", "1.5,-2", "--heading", "30", "--cycles", "2", "--datum", "absolute"],
        FootPlacement(seed=3, datum="absolute", at=(1.5, -2.0), heading=np.radians(30.0),
                      cycles=2),
    ),
}  # fmt: skip


@pytest.mark.parametrize("standing", STANDING)
@pytest.mark.parametrize("command", ["skeleton", "diagnostics", "movie"])
def test_clip_pictures_show_what_foot_writes(tmp_path, monkeypatch, command, standing):
    """The pictures are of the placement ``ikrig foot`` writes (``place_clip``: the ground
    along the pelvis, in-place clips found so, moved where ``foot``'s options say), and of
    the ground it stood the feet on."""
    from ikrig.app.placement import place_clip
    from ikrig.io import read_bvh

    bvh = stick_bvh(tmp_path)
    drawn = {}

    def draw(result, motion, ground, *a, **k):
        drawn.update(result=result, motion=motion, ground=ground)

    monkeypatch.setattr(diagnostics, "plot_foot_diagnostics", draw)
    monkeypatch.setattr(movie, "write_before_after_movie", draw)
    monkeypatch.setattr(scene3d, "plot_skeleton_3d", lambda m, g, result, **k: draw(result, m, g))
    out = str(tmp_path / ("m.gif" if command == "movie" else "p.png"))
    options, placement = STANDING[standing]
    args = [command, str(bvh), "-g", "bumps", "--seed", "3", *options, "-o", out]
    r = CliRunner().invoke(plot, args)
    assert r.exit_code == 0, (r.output, r.exception)
    want = place_clip(read_bvh(bvh).motion, "bumps", ["full"], placement=placement)
    np.testing.assert_array_equal(drawn["result"].motion.positions_local,
                                  want.results["full"].motion.positions_local)  # fmt: skip
    np.testing.assert_array_equal(drawn["motion"].positions_local, want.source.positions_local)
    xz = want.source.positions_world()[:, 0, [0, 2]]
    np.testing.assert_array_equal(drawn["ground"].height_at(xz)[0],
                                  want.world().height_at(xz)[0])  # fmt: skip


def test_clip_pictures_refuse_at_with_path(tmp_path):
    bvh = stick_bvh(tmp_path)
    path = tmp_path / "path.csv"
    path.write_text("time,x,z\n0,0,0\n1,1,0\n")
    out = str(tmp_path / "d.png")
    r = CliRunner().invoke(plot, ["diagnostics", str(bvh), "--at", "0,0", "--path", str(path),
                                  "-o", out])  # fmt: skip
    assert r.exit_code == 2 and "--at and --path: give one" in r.output, r.output
    assert not (tmp_path / "d.png").exists()


def test_missing_extra_is_a_clear_error(monkeypatch):
    import builtins

    from ikrig.errors import IkrigError
    from ikrig.viz import _mpl

    real = builtins.__import__

    def fake(name, *a, **k):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    monkeypatch.setattr("importlib.import_module", lambda n: fake(n))
    with pytest.raises(IkrigError, match=r"ikrig\[plot\]"):
        _mpl.new_figure(1, 1)


# ------------------------------------------------------------------- files and commands (#9)
def main_cli(*args):
    """``ikrig ...`` as a user runs it (the main group: one-line errors, exit 2)."""
    from ikrig.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_error_line(r, *needles):
    """Exit 2 and one ``ikrig: error:`` line (progress bars, erased with \\r, aside)."""
    lines = [line for line in r.stderr.replace("\r", "\n").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("rendering:")]
    assert r.exit_code == 2 and len(lines) == 1, r.output
    assert lines[0].startswith("ikrig: error: ") and all(n in lines[0] for n in needles), lines
    return lines[0]


def stick_bvh(folder, frames=20, up="y"):
    """The stick walk as a BVH file, recorded with ``up`` as its up axis."""
    _foot_pipeline()
    from ikrig.character.up import from_y_up
    from ikrig.io.bvh import BvhClip, write_bvh

    clip = from_y_up(stick_walk(frames=frames), up)
    channels = tuple(
        ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
        if j == 0
        else ("Zrotation", "Xrotation", "Yrotation")
        for j in range(clip.num_joints)
    )
    path = folder / "walk.bvh"
    write_bvh(path, BvhClip(clip, channels, None, None))
    return path


def disk_full_after(fraction=0.5):
    """A writer stand-in: part of the file reaches the disk, then the disk is full."""
    import errno

    def write(path):
        with open(path, "wb") as f:
            f.write(b"\x89PNG half a file"[: max(1, int(16 * fraction))])
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    return write


def leftovers(folder):
    return [p.name for p in folder.iterdir() if ".part" in p.name or ".probe" in p.name]


def test_plot_rejects_an_unknown_suffix_before_drawing(tmp_path, monkeypatch):
    monkeypatch.setattr(chain2d, "plot_chain_2d", lambda *a, **k: pytest.fail("drew"))
    monkeypatch.setattr(diagnostics, "plot_convergence", lambda *a, **k: pytest.fail("drew"))
    for command in ("chain", "convergence"):
        r = main_cli("plot", command, "-o", tmp_path / "c.xyz")
        one_error_line(r, "c.xyz", "'.xyz'", ".png", ".svg", ".pdf")
    one_error_line(main_cli("plot", "skeleton", "-o", tmp_path / "s"), "'(none)'", ".png")
    assert not list(tmp_path.iterdir())
    from ikrig.errors import InputError
    from ikrig.viz._mpl import new_figure, save_figure

    with pytest.raises(InputError, match="unsupported file type '.xyz'"):
        save_figure(new_figure(1, 1), tmp_path / "c.xyz")


def test_pictures_are_written_atomically(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    out = tmp_path / "c.png"
    out.write_bytes(b"the previous picture")
    real = Figure.savefig
    seen = []

    def failing(self, fname, *args, **kwargs):
        seen.append(fname)
        disk_full_after()(fname)

    monkeypatch.setattr(Figure, "savefig", failing)
    one_error_line(main_cli("plot", "chain", "-o", out), f"No space left on device: {out}")
    assert out.read_bytes() == b"the previous picture" and not leftovers(tmp_path)
    assert seen and all(os.fspath(p) != os.fspath(out) for p in seen)

    def recording(self, fname, *args, **kwargs):
        seen.append(fname)
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", recording)
    seen.clear()
    for name in ("c.png", "c.svg", "c.pdf"):
        r = main_cli("plot", "convergence", "--max-iterations", "5", "-o", tmp_path / name)
        assert r.exit_code == 0, r.output
    assert [os.path.basename(p).startswith(".c.") for p in seen] == [True] * 3
    assert [os.path.splitext(p)[1] for p in seen] == [".png", ".svg", ".pdf"]
    assert read_rgb(out).shape[2] == 3 and not leftovers(tmp_path)
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "c.pdf").read_bytes().startswith(b"%PDF")


def test_gif_is_written_atomically(tmp_path, monkeypatch):
    bvh = stick_bvh(tmp_path)
    out = tmp_path / "m.gif"
    out.write_bytes(b"the previous movie")
    real = PIL_Image.Image.save

    def failing(self, fp, *args, **kwargs):
        disk_full_after()(fp)

    monkeypatch.setattr(PIL_Image.Image, "save", failing)
    args = ("plot", "movie", bvh, "-g", "slope", "--max-frames", "3", "--dpi", "30", "-o", out)
    one_error_line(main_cli(*args), f"No space left on device: {out}")
    assert out.read_bytes() == b"the previous movie" and not leftovers(tmp_path)
    monkeypatch.setattr(PIL_Image.Image, "save", real)
    r = main_cli(*args)
    assert r.exit_code == 0, r.output
    with PIL_Image.open(out) as im:
        assert im.format == "GIF" and im.n_frames == 3
    assert not leftovers(tmp_path)


def test_mp4_is_written_atomically(tmp_path, monkeypatch):
    ffmpeg = pytest.importorskip("imageio_ffmpeg", reason="imageio-ffmpeg not installed (MP4)")
    clip = stick_walk(frames=12)
    out = tmp_path / "movie.mp4"
    out.write_bytes(b"the previous movie")
    real = ffmpeg.write_frames
    targets = []

    def dies_after_one_frame(path, *args, **kwargs):
        targets.append(path)
        gen = real(path, *args, **kwargs)
        count = 0

        def send(frame):
            nonlocal count
            if frame is not None:
                count += 1
                if count > 1:
                    raise OSError(5, "Input/output error", path)
            return gen.send(frame)

        return SimpleNamespace(send=send, close=gen.close)

    kwargs = dict(max_frames=6, look=MovieLook(size=(4.0, 2.0), dpi=40), progress=False)
    monkeypatch.setattr(ffmpeg, "write_frames", dies_after_one_frame)
    with pytest.raises(OSError, match="Input/output"):
        movie.write_before_after_movie(fake_result(clip), clip, ground_for(clip), out, **kwargs)
    assert out.read_bytes() == b"the previous movie" and not leftovers(tmp_path)
    monkeypatch.setattr(
        ffmpeg, "write_frames", lambda path, *a, **k: targets.append(path) or real(path, *a, **k)
    )
    movie.write_before_after_movie(fake_result(clip), clip, ground_for(clip), out, **kwargs)
    assert all(os.path.dirname(t) == str(tmp_path) and t.endswith(".mp4") for t in targets)
    assert str(out) not in targets
    assert ffmpeg.count_frames_and_secs(str(out))[0] == 6 and not leftovers(tmp_path)


def test_mp4_without_its_writer_names_the_plot_extra(tmp_path, monkeypatch):
    bvh = stick_bvh(tmp_path)
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import fails
    monkeypatch.setattr("ikrig.cli.viz.place", lambda *a, **k: pytest.fail("solved first"))
    line = one_error_line(main_cli("plot", "movie", bvh, "-o", tmp_path / "m.mp4"))
    assert "pip install 'ikrig[plot]'" in line and "MP4" in line
    assert "pip install imageio-ffmpeg" not in line
    from ikrig.viz._mpl import MissingDependencyError

    clip = stick_walk(frames=4)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ikrig\[plot\]'"):
        movie.write_before_after_movie(fake_result(clip), clip, None, tmp_path / "m.mp4")
    assert not (tmp_path / "m.mp4").exists()
    from ikrig.viz import movie as module

    assert "pip install imageio-ffmpeg" not in module.__doc__


def test_foot_with_a_movie_on_a_built_in_ground(tmp_path):
    bvh = stick_bvh(tmp_path)
    out, gif = tmp_path / "out.bvh", tmp_path / "sub" / "ba.gif"
    r = main_cli("foot", bvh, "-g", "stairs", "-o", out, "--gif", gif)
    assert r.exit_code == 0, r.output
    with PIL_Image.open(gif) as im:
        assert im.n_frames == 20
    assert not leftovers(tmp_path) and not leftovers(tmp_path / "sub")


# ------------------------------------------------------------------------------ speed (#15)
def gif_delays(path) -> list[int]:
    with PIL_Image.open(path) as im:
        out = []
        for k in range(im.n_frames):
            im.seek(k)
            out.append(int(im.info["duration"]))
    return out


def test_gif_durations_add_up_to_the_clip():
    for F, ft, max_frames in ((109, 1 / 40, 150), (360, 1 / 60, 150), (24, 1 / 30, 5)):
        idx = movie.frame_indices(F, max_frames)
        d = movie.gif_durations(idx, F, ft)
        assert len(d) == len(idx) and min(d) >= 20 and all(x % 10 == 0 for x in d)
        assert abs(sum(d) / 1000 - F * ft) <= (idx[1] - idx[0]) * ft
    # 120 fps: GIF delays under 20 ms play slowly in browsers, so every 3rd frame is shown
    assert list(movie.frame_indices(12, 150, min_step=3)) == [0, 3, 6, 9]


@pytest.mark.parametrize(("frames", "fps", "step"), [(27, 40.0, 1), (36, 120.0, 3), (40, 30.0, 4)])
def test_movie_gif_plays_in_real_time(tmp_path, monkeypatch, frames, fps, step):
    clip = stick_walk(frames=frames, fps=fps)
    made = []

    class Recorded(movie.BeforeAfter):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)

    monkeypatch.setattr(movie, "BeforeAfter", Recorded)
    out = tmp_path / "m.gif"
    max_frames = 10 if step == 4 else 150
    look = MovieLook(size=(3.0, 1.5), dpi=30)
    movie.write_before_after_movie(
        fake_result(clip), clip, None, out, max_frames=max_frames, look=look, progress=False
    )
    delays = gif_delays(out)
    assert len(delays) == len(range(0, frames, step))
    assert abs(sum(delays) / 1000 - frames / fps) <= step / fps
    title = made[0].fig._suptitle
    if step == 1:
        assert title is None
    else:  # a skipping movie says so in its title
        assert f"every {step}" in title.get_text() and "real time" in title.get_text()


# ------------------------------------------------------------------------------ legends (#15)
def drawn_labels(ax) -> set[str]:
    """Labels of the marks drawn on a 3D axes (read from its artists; ground and empty
    artists left out)."""
    out = set()
    for a in [*ax.collections, *ax.lines]:
        label = a.get_label()
        if not label.startswith("_") and scene3d._drawn(a):
            out.add(label)
    return out


def legend_labels(legend) -> list[str]:
    return [t.get_text() for t in legend.get_texts()]


def test_skeleton_legend_explains_every_mark_once(tmp_path):
    clip = stick_walk()
    fig = scene3d.plot_skeleton_3d(clip, ground_for(clip, "flat"), frame=10, ghost=clip)
    ax = fig.axes[0]
    labels = legend_labels(ax.get_legend())
    assert len(labels) == len(set(labels))
    assert set(labels) == drawn_labels(ax)
    for kind in ("ghost", "ray", "left", "right"):  # the ones the legend used to leave out
        assert scene3d.MARKS[kind] in labels


def test_skeleton_legend_with_a_result(placed):
    clip, ground, result = placed
    fig = scene3d.plot_skeleton_3d(clip, ground, frame=15, result=result)
    ax = fig.axes[0]
    labels = legend_labels(ax.get_legend())
    assert len(labels) == len(set(labels)) and set(labels) == drawn_labels(ax)
    assert {scene3d.MARKS[k] for k in ("target", "ghost")} <= set(labels)


def test_movie_legend_explains_every_mark_once():
    clip = stick_walk(frames=12)
    legs = find_legs(clip.skeleton)
    path = clip.positions_world()[:, 0][:, [0, 2]]
    floor = estimate_sole(clip, legs).floor + 0.03  # the soles dip under it now and then
    ground = load_ground("flat", path, legs.leg_length, floor)
    frames = movie.BeforeAfter(fake_result(clip), clip, ground, MovieLook(size=(4.0, 2.0), dpi=40))
    drawn: set[str] = set()
    for f in range(clip.num_frames):
        frames.frame(f)
        for scene in frames.scenes:
            drawn |= drawn_labels(scene.ax)
    (legend,) = frames.fig.legends
    labels = legend_labels(legend)
    assert len(labels) == len(set(labels))
    assert set(labels) == drawn
    for kind in ("below", "target", "contact"):  # triangles, crosses and circles
        assert scene3d.MARKS[kind] in labels


def test_movie_frames_match_drawing_titles_and_legend_with_them():
    """Titles and legend are drawn once and laid over each frame: the frames match drawing
    everything on each frame to rounding, and the titles sit where axes titles go."""
    from ikrig.viz._mpl import figure_rgb

    clip = stick_walk(frames=12)
    legs = find_legs(clip.skeleton)
    path = clip.positions_world()[:, 0][:, [0, 2]]
    ground = load_ground("stairs", path, legs.leg_length)
    look = MovieLook(size=(6.0, 3.0), dpi=60, title="a line over both panels")
    frames = movie.BeforeAfter(fake_result(clip), clip, ground, look)
    assert len(frames.static) == 4  # the line, two panel titles, the legend
    for f in (0, 5, 11):
        fast = frames.frame(f).astype(int)
        for artist in frames.static:
            artist.set_visible(True)
        full = figure_rgb(frames.fig).astype(int)
        for artist in frames.static:
            artist.set_visible(False)
        assert np.abs(fast - full).max() <= 2
        assert (fast != full).mean() < 0.01  # antialiased edges, off by a level or two
        assert (fast != 255).any(axis=-1)[: full.shape[0] // 6].sum() > 100  # titles drawn
    fig = frames.fig
    renderer = fig.canvas.get_renderer()
    for text, scene in zip(frames.static[1:3], frames.scenes, strict=True):
        scene.ax.set_title(text.get_text(), fontsize=11, pad=0)  # as SkeletonScene does
        text.set_visible(True)  # an invisible text has no extent
        fig.canvas.draw()
        np.testing.assert_allclose(
            text.get_window_extent(renderer).get_points(),
            scene.ax.title.get_window_extent(renderer).get_points(), atol=0.01,
        )  # fmt: skip


# ------------------------------------------------------------------------------ progress (#15)
def test_demo_gif_shows_a_progress_bar(tmp_path, capsys):
    from ikrig.cli.commands import _maybe_gif

    clip = stick_walk(frames=6)
    _maybe_gif(fake_result(clip), clip, ground_for(clip), tmp_path / "demo.gif")
    out, err = capsys.readouterr()
    assert "wrote" in out and (tmp_path / "demo.gif").exists()
    assert "rendering" in err and "frame" in err  # the tqdm bar, as the solve steps show


def test_gif_keeps_the_marks_colours(tmp_path):
    clip = stick_walk(frames=6)
    out = tmp_path / "m.gif"
    look = MovieLook(size=(4.0, 2.0), dpi=50)
    movie.write_before_after_movie(
        fake_result(clip), clip, ground_for(clip), out, look=look, progress=False
    )
    red = np.array(PIL_Image.new("RGB", (1, 1), scene3d.TARGET).getpixel((0, 0)))
    with PIL_Image.open(out) as im:
        for k in range(im.n_frames):
            im.seek(k)
            rgb = np.asarray(im.convert("RGB")).astype(np.int16)
            # the IK targets' crosses stay their legend's red, not a median-cut neighbour
            assert (np.abs(rgb[:, 100:] - red).max(axis=-1) == 0).any()
            assert (rgb == 255).all(axis=-1).mean() > 0.5  # and the background white
