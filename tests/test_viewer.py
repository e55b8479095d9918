"""The browser tools (ikrig.viz.viewer and .playground, the [viewer] extra).

Server-side tests drive the apps through their Python API. Browser tests start a server on a
free localhost port, open it in headless Chromium (Playwright's Python API, Debian's
``/usr/bin/chromium``), wait for the scene, check the canvas shows it, move things through
the server API and check the picture and the solved chain follow. They skip when viser,
Playwright or Chromium is missing.
"""

from __future__ import annotations

import os
import shutil
import time
import urllib.request

import numpy as np
import pytest

pytest.importorskip("viser", reason="viser not installed (the [viewer] extra)")

from helpers import serve_then_stop  # noqa: E402
from test_viz import ground_for, stick_walk  # noqa: E402

from ikrig.viz import playground as pg_mod  # noqa: E402
from ikrig.viz._viser import rgb  # noqa: E402
from ikrig.viz.viewer import ClipViewer, time_updates  # noqa: E402

CHROMIUM = os.environ.get("IKRIG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NAVY = np.array([0x1D, 0x35, 0x57])


def _foot_available() -> bool:
    try:
        import ikrig.foot  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture
def playground():
    app = pg_mod.Playground(port=0)
    yield app
    app.close()


@pytest.fixture
def viewer():
    clip = stick_walk(frames=30)
    app = ClipViewer(clip, ground_for(clip, "stairs"), port=0)
    yield app
    app.close()


# ------------------------------------------------------------------------------ server side
@pytest.mark.parametrize("solver", ["CCD", "FABRIK", "DLS"])
def test_playground_chain_follows_the_target(playground, solver):
    playground.gui_solver.value = solver
    for target in ([1.0, 1.5, 0.2], [-0.5, 1.0, 1.0], [1.8, -0.6, 0.0]):
        r = playground.set_target(target)
        assert bool(r.reached), (solver, target, r.error)
        np.testing.assert_allclose(playground.positions_world[-1], target, atol=5e-3)
        np.testing.assert_allclose(playground.positions_world[0], 0.0, atol=1e-12)
    assert "reached" in playground.gui_info.content


def test_playground_settings(playground):
    playground.gui_bones.value = 6
    assert len(playground.positions_world) == 7
    playground.gui_solver.value = "follow"
    r = playground.set_target([3.0, 3.0, 0.0])
    np.testing.assert_allclose(r.positions_world[-1], [3.0, 3.0, 0.0], atol=1e-6)
    playground.gui_solver.value = "FABRIK"
    playground.gui_weight.value = 0.0  # weight 0: the chain stays in its rest pose
    np.testing.assert_allclose(playground.positions_world, pg_mod.rest_chain(6), atol=1e-9)
    playground.gui_weight.value = 1.0
    playground.gui_iters.value = 1
    assert int(playground.result.iterations) <= 1


@pytest.mark.parametrize("kind", ["cone", "hinge (z)", "2D limits"])
def test_playground_constraints_are_drawn_and_kept(playground, kind):
    playground.gui_constraint.value = kind
    playground.gui_limit.value = 30.0
    r = playground.set_target([0.2, 1.6, 0.3])
    curves = pg_mod.constraint_curves(
        pg_mod.make_constraints(kind, 4, 30.0),
        pg_mod.rest_chain(4),
        r.positions_world,
        r.rotations_local,
    )
    assert len(curves) >= 4
    p = np.asarray(r.positions_world)
    d = np.diff(p, axis=0)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    bend = np.degrees(np.arccos(np.clip(np.sum(d[1:] * d[:-1], axis=1), -1, 1)))
    assert bend.max() <= 30.0 + 0.5  # every joint within its limit of its parent bone
    assert playground.limits.handle.visible


def test_playground_two_bone(playground):
    if "two-bone" not in playground.gui_solver.options:
        pytest.skip("ikrig.solvers.two_bone is not there yet")
    playground.gui_solver.value = "two-bone"
    r = playground.set_target([1.2, 0.8, 0.0], pole=[1.0, 0.0, 1.5])
    np.testing.assert_allclose(r.positions_world[-1], [1.2, 0.8, 0.0], atol=1e-6)
    knee = np.asarray(r.positions_world[1])
    assert knee[2] > 0.05  # the knee points toward the pole (+Z)


def test_viewer_frames_and_switches(viewer):
    clip = viewer.clip
    viewer.gui_frame.value = 7
    assert viewer.frame == 7
    if viewer.gui_ik.value:
        np.testing.assert_allclose(
            viewer.positions_world[0, [0, 2]], clip[7].positions_world()[0, [0, 2]], atol=1e-9
        )
    viewer.gui_ik.value = False
    np.testing.assert_allclose(viewer.positions_world, clip[7].positions_world(), atol=1e-9)
    viewer.gui_ghost.value = True
    assert viewer.ghost.handle.visible
    viewer.gui_rays.value = False
    assert not viewer.rays.handle.visible
    assert "frame **7**" in viewer.gui_info.content


def test_viewer_shows_a_mesh_ground_and_where_its_rays_miss(tmp_path):
    pytest.importorskip("trimesh", reason="trimesh not installed (the [mesh] extra)")
    from test_viz_ground import mesh_ground, write_obj

    from ikrig.ground import load_ground

    clip = stick_walk(frames=30)  # walks along +Z from z = 0 to 1 m
    # the user's mesh: one big quad ending at z = 0.5, with no vertex near the walk
    quad = np.array([[-50.0, 0.0, -50.0], [50.0, 0.0, -50.0], [50.0, 0.0, 0.5], [-50.0, 0.0, 0.5]])
    ground = load_ground(
        str(write_obj(tmp_path / "ends.obj", quad, [(0, 1, 2), (0, 2, 3)])), None, 1.0
    )
    app = ClipViewer(clip, ground, port=0)
    try:
        app.gui_ik.value = False
        v, f = ground_mesh_of(app)
        assert len(f) == 2 and np.ptp(v[:, 0]) == 100.0  # the mesh is drawn, all of it
        app.gui_frame.value = 2  # on the quad: every ray hits
        assert app.missed == 0 and not app.misses.handle.visible
        assert "miss" not in app.gui_info.content
        app.gui_frame.value = 29  # past its end: the rays miss, drawn and counted
        assert app.missed > 0 and app.misses.handle.visible and app.miss_ends.handle.visible
        assert f"{app.missed} rays miss the ground" in app.gui_info.content
        assert "miss the ground" in app.gui_legend.content
    finally:
        app.close()
    stairs = ClipViewer(clip, mesh_ground(tmp_path, "stairs"), port=0)
    try:
        v, f = ground_mesh_of(stairs)
        treads = np.unique(np.round(v[f][:, :, 1].max(axis=1), 6))
        assert len(f) > 40 and len(treads) >= 10  # the boxes' treads and risers, step by step
    finally:
        stairs.close()


def ground_mesh_of(app):
    """The vertices and faces the viewer sent for its ground."""
    from ikrig.viz.geometry import ground_mesh, path_bounds

    path = app.source_pos[:, app.root][:, [0, 2]]
    return ground_mesh(app.ground, path_bounds(path, 2.0 * app.L), cells=160, max_faces=200_000)


def test_viewer_plays(viewer):
    viewer.gui_speed.value = 2.0
    viewer.gui_play.value = True
    t0 = time.perf_counter()
    while viewer.frame < 5 and time.perf_counter() - t0 < 10:
        time.sleep(0.05)
    viewer.gui_play.value = False
    assert viewer.frame >= 5


def test_viewer_live_ik_matches_offline():
    if not _foot_available():
        pytest.skip("foot pipeline not importable yet (ikrig.solvers.two_bone missing)")
    from ikrig.foot import place_feet

    clip = stick_walk(frames=30)
    ground = ground_for(clip, "stairs")
    app = ClipViewer(clip, ground, port=0)
    try:
        assert app.gui_ik.value
        offline = place_feet(clip, ground).motion.positions_world()
        for f in range(clip.num_frames):
            app.update(f)
            np.testing.assert_allclose(app.positions_world, offline[f], atol=1e-6)
        assert time_updates(app, 20) > 1.0
    finally:
        app.close()


# ------------------------------------------------------------------------------ origins
def _handshake(port, origin):
    """Open the viewer's WebSocket with ``origin``; the HTTP status of the answer (101 when
    accepted, after the first message from the server)."""
    import viser
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    try:
        with connect(
            f"ws://127.0.0.1:{port}",
            origin=origin,
            subprotocols=[f"viser-v{viser.__version__}"],
            open_timeout=10,
        ) as ws:
            assert ws.recv(timeout=10)  # viser speaks to an accepted client
            return 101
    except InvalidStatus as e:
        return e.response.status_code


def test_websocket_refuses_other_origins():
    from ikrig.viz import _viser as V

    server = V.start_server("127.0.0.1", 0)
    try:
        port = server.get_port()
        assert _handshake(port, "https://evil.example") == 403
        assert _handshake(port, f"http://evil.example:{port}") == 403
        assert _handshake(port, f"http://127.0.0.1:{port + 1}") == 403  # another local server
        assert _handshake(port, "null") == 403  # sandboxed frames, file:// pages
        assert _handshake(port, f"http://127.0.0.1:{port}") == 101  # its own page
        assert _handshake(port, f"http://localhost:{port}") == 101  # an alias of it
        assert _handshake(port, None) == 101  # not a browser: no Origin at all
        with urllib.request.urlopen(V.url(server), timeout=10) as page:  # the page still loads
            assert b"<html" in page.read(2000).lower()
    finally:
        server.stop()


def test_viewer_and_playground_use_the_checked_server(viewer, playground):
    for app in (viewer, playground):
        assert _handshake(app.server.get_port(), "http://attacker.example") == 403
        assert _handshake(app.server.get_port(), app.url) == 101


@pytest.mark.parametrize(
    "origin, local, ok",
    [
        ("http://127.0.0.1:8080", "127.0.0.1", True),
        ("https://localhost:8080", "127.0.0.1", True),
        ("http://[::1]:8080", "::1", True),
        ("http://LOCALHOST:8080", "::ffff:127.0.0.1", True),
        ("http://192.168.1.5:8080", "192.168.1.5", True),
        ("http://localhost:8080", "192.168.1.5", False),  # not a loopback connection
        ("http://127.0.0.1:8081", "127.0.0.1", False),
        ("http://127.0.0.1", "127.0.0.1", False),  # port 80
        ("http://evil.example:8080", "127.0.0.1", False),
        ("http://localhost.evil.example:8080", "127.0.0.1", False),
        ("ws://127.0.0.1:8080", "127.0.0.1", False),
        ("file://", "127.0.0.1", False),
        ("null", "127.0.0.1", False),
        ("http://127.0.0.1:99999", "127.0.0.1", False),
    ],
)
def test_origin_allowed(origin, local, ok):
    from ikrig.viz._viser import origin_allowed

    assert origin_allowed(origin, local, 8080) is ok


def test_warns_when_the_host_is_not_loopback(capsys):
    from ikrig.viz import _viser as V

    server = V.start_server("127.0.0.1", 0)
    server.stop()
    assert "warning" not in capsys.readouterr().err
    server = V.start_server("0.0.0.0", 0)
    try:
        err = capsys.readouterr().err
        warnings = [line for line in err.splitlines() if line.startswith("ikrig: warning")]
        assert len(warnings) == 1 and "0.0.0.0" in warnings[0] and "loopback" in warnings[0]
        assert _handshake(server.get_port(), f"http://127.0.0.1:{server.get_port()}") == 101
        assert _handshake(server.get_port(), "http://evil.example") == 403
    finally:
        server.stop()
    assert V.is_loopback_host("localhost") and V.is_loopback_host("::1")
    assert not V.is_loopback_host("0.0.0.0") and not V.is_loopback_host("192.168.1.5")


def test_says_when_the_port_is_taken(capsys):
    import socket

    from ikrig.viz import _viser as V

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        capsys.readouterr()
        server = V.start_server("127.0.0.1", port)
        try:
            actual = server.get_port()
            assert actual != port
            err = capsys.readouterr().err
            assert f"port {port} is taken" in err and f"http://127.0.0.1:{actual}" in err
            assert V.url(server) == f"http://127.0.0.1:{actual}"
        finally:
            server.stop()


def test_playground_help_names_the_colours_drawn(playground):
    text = playground.gui_help.content
    assert "red" not in text  # the orange tip covers the red target marker it reaches
    assert "orange" in text and "purple" in text
    tip = np.array(rgb(pg_mod.TIP))
    assert tip[0] > 200 and 80 < tip[1] < 180 and tip[2] < 60  # orange
    pole = np.array(rgb(pg_mod.POLE))
    assert pole[2] > pole[1] and pole[0] > pole[1]  # purple


# ------------------------------------------------------------------------------ browser
@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _canvas_rgb(page) -> np.ndarray:
    from io import BytesIO

    from PIL import Image

    canvases = page.locator("canvas")
    boxes = [
        (canvases.nth(i).bounding_box() or {"width": 0, "height": 0}, i)
        for i in range(canvases.count())
    ]
    _, i = max(boxes, key=lambda b: b[0]["width"] * b[0]["height"])
    png = canvases.nth(i).screenshot()
    return np.asarray(Image.open(BytesIO(png)).convert("RGB")).astype(np.int16)


def _navy(img) -> np.ndarray:
    """Mask of the dark blue the chains and skeletons are drawn in, in the part of the canvas
    that no panel or notification covers (left of the GUI panel, below the top bar)."""
    mask = np.abs(img - NAVY).max(axis=-1) < 40
    mask[:160] = False
    mask[:, -360:] = False
    return mask


def _wait_for(page, predicate, timeout=60.0):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        img = _canvas_rgb(page)
        if predicate(img):
            return img
        time.sleep(0.5)
    raise AssertionError("the scene did not appear in the browser in time")


@pytest.mark.slow
def test_playground_in_the_browser(browser, playground, tmp_path):
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    try:
        page.goto(playground.url)
        page.wait_for_selector("canvas", timeout=30000)
        before = _wait_for(page, lambda im: _navy(im).sum() > 200)
        page.screenshot(path=str(tmp_path / "playground.png"))
        assert (np.abs(before - 255).max(axis=-1) > 30).mean() > 0.01  # not blank
        target = [-0.3, 1.7, 0.2]
        r = playground.set_target(target)
        np.testing.assert_allclose(r.positions_world[-1], target, atol=5e-3)

        def moved(im):
            return (_navy(im) != _navy(before)).sum() > 200

        after = _wait_for(page, moved, timeout=30.0)
        # the chain's pixels moved left and up with the target (the camera looks down -Z)
        ys0, xs0 = np.nonzero(_navy(before))
        ys1, xs1 = np.nonzero(_navy(after))
        assert xs1.mean() < xs0.mean()
        assert ys1.min() < ys0.min()
    finally:
        page.close()


@pytest.mark.slow
def test_viewer_in_the_browser(browser, viewer, tmp_path):
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    try:
        page.goto(viewer.url)
        page.wait_for_selector("canvas", timeout=30000)
        first = _wait_for(page, lambda im: _navy(im).sum() > 100)
        page.screenshot(path=str(tmp_path / "viewer.png"))
        viewer.gui_frame.value = 20
        _wait_for(page, lambda im: (_navy(im) != _navy(first)).sum() > 50, timeout=30.0)
    finally:
        page.close()


# ------------------------------------------------------------------------------ command line
@pytest.mark.parametrize(
    "command",
    [
        "from ikrig.cli.playground import playground; playground.main(['--port', '0'])",
        "from ikrig.cli.viz import view; view.main(['-g', 'slope', '--port', '0', '--play'])",
    ],
    ids=["playground", "view"],
)
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_cli_serves_on_localhost_and_stops_on_ctrl_c(command, signame):
    import signal
    import sys

    _, returncode, out = serve_then_stop(
        [sys.executable, "-c", command], getattr(signal, signame), stop=30
    )
    assert returncode == 0, out
    assert "ikrig: stopping" in out


def test_solver_names_are_the_same_in_plot_and_playground():
    """Issue 36's small traps: ``plot chain --solver fabrik`` and ``playground --solver
    FABRIK`` took different spellings; both commands take the names in any case, and the
    playground starts on the solver asked for."""
    from click.testing import CliRunner

    from ikrig.cli.playground import playground
    from ikrig.cli.viz import plot

    for command, args in ((plot, ["chain", "--help"]), (playground, ["--help"])):
        text = CliRunner().invoke(command, args).output
        assert "fabrik" in text and "FABRIK" not in text.split("--solver")[1][:80], text
    pytest.importorskip("viser")
    from ikrig.viz.playground import Playground

    for spelling in ("fabrik", "FABRIK", "Fabrik", "dls"):
        app = Playground(port=0, solver=spelling)
        try:
            assert app.gui_solver.value == ("DLS" if spelling == "dls" else "FABRIK")
        finally:
            app.server.stop()


def test_view_stands_the_clip_as_foot_does():
    """Issue 36: ``ikrig view`` takes ``foot``'s placement options, so a user can preview
    what ``foot --walk --at ... --heading ...`` wrote: the viewer is given the clip stood
    where they say (``ikrig.cli.viz.stand``, the same travel as foot's); without them, the clip
    itself."""
    from click.testing import CliRunner

    from ikrig.app.placement import FootPlacement
    from ikrig.character import find_legs, pelvis_joint
    from ikrig.cli.viz import stand, view
    from ikrig.data.walk import walk_clip

    text = " ".join(CliRunner().invoke(view, ["--help"]).output.split())
    for option in ("--at X,Z", "--heading DEG", "--path", "--walk", "--cycles"):
        assert option in text, option
    clip = walk_clip(seconds=1.0)
    assert stand(clip, None, FootPlacement()) is clip
    moved = stand(clip, None, FootPlacement(at=(2.0, -1.0), heading=np.pi / 2, cycles=2))
    pelvis = pelvis_joint(clip.skeleton, find_legs(clip.skeleton))
    np.testing.assert_allclose(moved.positions_world()[0, pelvis, [0, 2]], [2.0, -1.0], atol=1e-9)
    assert moved.num_frames > clip.num_frames


def test_view_and_the_pictures_take_fps_as_foot_does(tmp_path):
    """Issue 36: ``--fps`` samples a glTF clip in ``view`` and the pictures as in ``foot``,
    ``batch`` and ``convert``; the built-in walk has no animation to sample."""
    from click.testing import CliRunner

    from ikrig.cli.common import ClipChoice, read_source
    from ikrig.cli.viz import view
    from ikrig.data.walk import walk_clip
    from ikrig.errors import InputError
    from ikrig.io import to_bvh_clip, write_clip

    pytest.importorskip("pygltflib")
    assert "--fps" in CliRunner().invoke(view, ["--help"]).output
    path = tmp_path / "walk.glb"
    write_clip(path, to_bvh_clip(walk_clip(seconds=1.0, fps=30.0)))
    clip = read_source(str(path), ClipChoice(None, 10.0))
    assert clip.motion.frame_time == pytest.approx(0.1) and clip.motion.num_frames == 10
    with pytest.raises(InputError, match="--fps needs a glTF"):
        read_source(None, ClipChoice(None, 10.0))
