"""glTF characters in the browser viewer and the picture commands (issue 14).

The viewer draws a :class:`~ikrig.io.gltf.clip.GltfClip`'s skinned meshes, posed per frame
(:mod:`ikrig.viz.viewer_mesh`); the vertices it sends must be those of
:func:`~ikrig.io.gltf.skin.skin_vertices` for the motion shown: the source with foot IK
off, the foot-placed result with it on. Skips without viser, pygltflib or the shared files.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import FOX_LEGS, SHARED_GLTF

pytest.importorskip("viser", reason="viser not installed (the [viewer] extra)")
pytest.importorskip("pygltflib", reason="pygltflib not installed (the [gltf] extra)")

from ikrig.io import read_clip  # noqa: E402
from ikrig.io.gltf.skin import skin_matrices, skin_vertices, skinned_meshes  # noqa: E402
from ikrig.viz.viewer import ClipViewer  # noqa: E402
from ikrig.viz.viewer_mesh import NEUTRAL, pose_vertices, rigid_deltas  # noqa: E402

GLTF_DIR = SHARED_GLTF

CESIUM_LEGS = (
    "leg_joint_L_1,leg_joint_L_2,leg_joint_L_3,leg_joint_L_5;"
    "leg_joint_R_1,leg_joint_R_2,leg_joint_R_3,leg_joint_R_5"
)
# (file, animation, legs): metres, a 0.3-scaled armature, centimetres
CHARACTERS = {
    "CesiumMan": ("CesiumMan.glb", None, CESIUM_LEGS),
    "Godot": ("GodotPlatformerPlayer.glb", "walk", None),
    "Fox": ("Fox.glb", "Walk", FOX_LEGS),
}


def gltf_file(name: str) -> Path:
    path = GLTF_DIR / name
    if not path.is_file():
        pytest.skip(f"../shared/data/gltf/{name} is not present")
    return path


def open_viewer(key: str, ground_name: str = "stairs"):
    """``(clip, viewer)`` of a shared character on a built-in ground, with its legs."""
    from ikrig.cli.viz import clip_ground

    name, animation, legs = CHARACTERS[key]
    clip = read_clip(gltf_file(name), animation=animation)
    ground, _, _ = clip_ground(clip.motion, ground_name, legs)
    return clip, ClipViewer(clip, ground, port=0, legs=legs)


def _foot_available() -> bool:
    try:
        import ikrig.foot  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("key", list(CHARACTERS))
def test_a_glb_opens_with_its_skinned_meshes(key):
    clip, app = open_viewer(key)
    try:
        meshes = skinned_meshes(clip)
        assert meshes and app.skin is not None
        assert len(app.skin.handles) == len(meshes)
        for m, h in zip(meshes, app.skin.handles, strict=True):
            assert h.name.startswith("/character/")
            assert h.visible
            assert np.asarray(h.vertices).shape == m.positions.shape
            np.testing.assert_array_equal(np.asarray(h.faces), m.faces)
        assert app.gui_mesh.value and not app.gui_bones.value  # mesh on, bones off
        assert not app.bones.handle.visible
        assert "skinned mesh" in app.gui_legend.content
        # the mesh and the bones are switched independently
        app.gui_bones.value = True
        assert app.bones.handle.visible and app.skin.handles[0].visible
        app.gui_mesh.value = False
        assert not any(h.visible for h in app.skin.handles)
        app.gui_mesh.value = True
        assert all(h.visible for h in app.skin.handles)
    finally:
        app.close()


@pytest.mark.parametrize("key", list(CHARACTERS))
def test_the_mesh_shown_is_the_motion_shown(key):
    """Foot IK off: the source's skinned vertices; on: the placed result's, frame by frame
    (the live placer gives the offline frames; see test_viewer)."""
    if not _foot_available():
        pytest.skip("foot pipeline not importable")
    from ikrig.foot import place_feet

    clip, app = open_viewer(key)
    try:
        assert app.legs is not None and app.gui_ik.value
        src = skin_matrices(clip)
        placed = place_feet(clip.motion, app.ground, legs=app.legs).motion
        after = skin_matrices(clip, placed)
        tol = 1e-9 * app.L
        app.gui_ik.value = False
        for f in (0, 3):
            app.update(f)
            for m, v, h in zip(app.skin.meshes, app.skin.vertices, app.skin.handles, strict=True):
                want = skin_vertices(m, src[f : f + 1])[0]
                np.testing.assert_allclose(v, want, atol=tol, rtol=0)
                np.testing.assert_allclose(h.vertices, want, atol=1e-5 * app.L, rtol=0)
        app.gui_ik.value = True
        moved = 0.0
        for f in (0, 1, 2, 3):  # consecutive: the live placer runs on from frame 0
            app.update(f, force=f == 0)
            for m, v, h in zip(app.skin.meshes, app.skin.vertices, app.skin.handles, strict=True):
                want = skin_vertices(m, after[f : f + 1])[0]
                np.testing.assert_allclose(v, want, atol=1e-6 * app.L, rtol=0)
                np.testing.assert_allclose(h.vertices, want, atol=1e-5 * app.L, rtol=0)
                moved = max(moved, float(np.abs(want - skin_vertices(m, src[f : f + 1])[0]).max()))
        assert moved > 1e-3 * app.L  # on stairs foot IK changes the mesh shown
    finally:
        app.close()


@pytest.mark.parametrize("key", list(CHARACTERS))
def test_characters_stand_on_the_ground_in_their_units(key):
    """On flat ground with foot IK, the mesh's lowest point is at the floor, to 10 % of a leg
    (the soles are found from the joints, not the mesh), whatever the file's units
    (CesiumMan metres, Godot a 0.3 armature, Fox cm)."""
    if not _foot_available():
        pytest.skip("foot pipeline not importable")
    clip, app = open_viewer(key, "flat")
    try:
        floor = float(app.ground.point[1])
        for f in range(0, clip.motion.num_frames, 4):
            app.update(f)
            v = np.concatenate(app.skin.vertices)
            assert abs(v[:, 1].min() - floor) < 0.1 * app.L, (f, v[:, 1].min(), floor)
            height = float(np.ptp(v[:, 1]))
            assert 1.5 * app.L < height < 4.0 * app.L  # a whole body, in the legs' units
        # the view is sized by the character: Fox is in centimetres
        if key == "Fox":
            assert app.L > 10.0 and app.server.initial_camera.far > 10_000.0
    finally:
        app.close()


def test_rigid_deltas_move_the_source_frames_onto_the_shown_pose():
    from ikrig.math.quat import quat_to_matrix

    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, 5, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    p = rng.normal(size=(2, 5, 3))
    d = rigid_deltas(q[1], p[1], q[0], p[0])
    r0, r1 = quat_to_matrix(q[0]), quat_to_matrix(q[1])
    np.testing.assert_allclose(d[..., :3] @ r0, r1, atol=1e-12)
    np.testing.assert_allclose(np.einsum("jab,jb->ja", d[..., :3], p[0]) + d[..., 3], p[1])


def test_pose_vertices_is_skin_vertices_for_one_frame():
    clip = read_clip(gltf_file("Fox.glb"), animation="Run")
    m = skinned_meshes(clip)[0]
    mats = skin_matrices(clip)
    for f in (0, 7):
        np.testing.assert_allclose(
            pose_vertices(m, mats[f]), skin_vertices(m, mats[f : f + 1])[0], atol=1e-9
        )


def test_mesh_colours_come_from_the_materials():
    from ikrig.viz.viewer_mesh import mesh_colors

    godot = read_clip(gltf_file("GodotPlatformerPlayer.glb"))
    colors = mesh_colors(godot, skinned_meshes(godot))
    assert len(colors) == 2 and colors[0] != colors[1]  # grey body, dark blue parts
    assert colors[0][0] == colors[0][1] == colors[0][2] and colors[1][2] > colors[1][0]
    fox = read_clip(gltf_file("Fox.glb"))
    (fox_color,) = mesh_colors(fox, skinned_meshes(fox))
    assert fox_color != NEUTRAL and fox_color[0] > fox_color[2]  # its texture is orange
    (bare,) = mesh_colors(fox, [dataclasses.replace(skinned_meshes(fox)[0], material=None)])
    assert bare == NEUTRAL  # no material


# ------------------------------------------------------------------------------ command line
def test_view_takes_a_glb_and_an_animation(monkeypatch):
    import ikrig.viz._viser as V
    from ikrig.cli import main

    served = []

    def serve(app, echo=print):  # instead of serving until Ctrl-C
        served.append(app)
        app.close()

    monkeypatch.setattr(V, "serve_forever", serve)
    fox = gltf_file("Fox.glb")
    r = CliRunner().invoke(
        main, ["view", str(fox), "--animation", "Walk", "-g", "flat", "--port", "0"]
    )
    assert r.exit_code == 0, r.output
    (app,) = served
    walk = read_clip(fox, animation="Walk").motion
    assert app.clip.num_frames == walk.num_frames
    np.testing.assert_allclose(app.source_pos, walk.positions_world(), atol=1e-12)
    assert app.skin is not None and len(app.skin.meshes) == 1
    r = CliRunner().invoke(main, ["view", str(fox), "--animation", "Nope", "--port", "0"])
    assert r.exit_code != 0 and "no animation 'Nope'" in r.output
    assert len(served) == 1


def test_animation_is_an_error_without_a_gltf(monkeypatch, tmp_path):
    import ikrig.viz._viser as V
    from ikrig.cli import main
    from ikrig.io import write_bvh
    from ikrig.io.bvh import to_bvh_clip

    monkeypatch.setattr(V, "serve_forever", lambda app, echo=print: app.close())
    r = CliRunner().invoke(main, ["view", "--animation", "Walk", "--port", "0"])
    assert r.exit_code != 0 and "--animation needs a glTF CLIP" in r.output
    from ikrig.data.walk import walk_clip

    bvh = tmp_path / "walk.bvh"
    write_bvh(bvh, to_bvh_clip(walk_clip(seconds=1.0)))
    r = CliRunner().invoke(main, ["view", str(bvh), "--animation", "0", "--port", "0"])
    assert r.exit_code != 0 and "applies to glTF files, not BVH" in r.output


def test_plot_skeleton_takes_a_glb(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib not installed (the [plot] extra)")
    from ikrig.cli import main

    out = tmp_path / "fox.png"
    args = ["plot", "skeleton", str(gltf_file("Fox.glb")), "--animation", "1"]
    r = CliRunner().invoke(main, args + ["-g", "flat", "--legs", FOX_LEGS, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.stat().st_size > 1000


# ------------------------------------------------------------------------------ browser
@pytest.mark.slow
def test_the_fox_is_drawn_in_the_browser(tmp_path):
    """The Fox's mesh (orange-brown, from its texture) fills part of the picture, and moves
    when the frame changes."""
    from test_viewer import CHROMIUM, CHROMIUM_ARGS, _wait_for

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")

    def fox(img):
        r, g, b = img[..., 0], img[..., 1], img[..., 2]
        mask = (r - b > 40) & (r > g) & (g > b)
        mask[:160] = False  # the notification and the GUI panel
        mask[:, -360:] = False
        return mask

    _, app = open_viewer("Fox")
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            page.goto(app.url)
            page.wait_for_selector("canvas", timeout=30000)
            first = _wait_for(page, lambda im: fox(im).sum() > 2000)
            page.screenshot(path=str(tmp_path / "fox.png"))
            app.gui_frame.value = 9
            _wait_for(page, lambda im: (fox(im) != fox(first)).sum() > 500, timeout=30.0)
            app.gui_mesh.value = False
            _wait_for(page, lambda im: fox(im).sum() < 100, timeout=30.0)
            browser.close()
    finally:
        app.close()
