"""Pictures and the viewer follow the body (the pelvis), not joint 0 (issue 36, item 3).

The Bandai rigs in ``../shared/data/bvh_more`` keep their root joint ``joint_Root`` on the
ground at the origin while the ``Hips`` under it walk several metres: a view that follows
joint 0 loses the character for most of the clip. The GIF test renders such a clip as
``ikrig foot --gif`` does and measures the skeleton's pixels in every frame.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import SHARED

from ikrig.character import detect_up, find_legs, pelvis_joint, to_y_up
from ikrig.io import read_clip
from ikrig.viz.geometry import body_joint

BANDAI = SHARED / "data" / "bvh_more" / "bandai2_walk_normal.bvh"
#: The GIF's fixed colours of the two legs' bones (exact in every frame: see gif_palette).
LEG_COLOURS = ((0x2A, 0x6F, 0xDB), (0xE7, 0x6F, 0x51))


def bandai(frames: slice = slice(None)):
    """The Bandai walk turned Y-up as the CLI does, or a skip when ../shared is absent."""
    if not BANDAI.exists():
        pytest.skip(f"{BANDAI} is not present")
    motion = read_clip(BANDAI).motion
    return to_y_up(motion, detect_up(motion))[frames]


def test_the_bandai_rig_keeps_joint_0_still_while_its_pelvis_walks():
    """The premise: the fixture is a rig with a static ground-level root."""
    clip = bandai()
    legs = find_legs(clip.skeleton, None, clip.positions_world())
    pelvis = body_joint(clip.skeleton, legs)
    pos = clip.positions_world()
    assert clip.skeleton.names[pelvis] == "Hips" and pelvis != 0
    assert pelvis == pelvis_joint(clip.skeleton, legs)
    assert np.ptp(pos[:, 0], axis=0).max() < 1e-6  # joint 0 never moves
    assert np.ptp(pos[:, pelvis, 2]) > 5 * legs.leg_length  # the body walks away


def test_the_body_joint_is_joint_0_when_joint_0_is_the_pelvis_or_there_are_no_legs():
    from test_viz import stick_walk

    clip = stick_walk(frames=4)
    legs = find_legs(clip.skeleton, None, clip.positions_world())
    assert pelvis_joint(clip.skeleton, legs) == 0
    assert body_joint(clip.skeleton, legs) == 0
    assert body_joint(clip.skeleton, None) == 0


def test_a_scene_centres_its_window_on_the_pelvis():
    pytest.importorskip("matplotlib", reason="matplotlib not installed (the [plot] extra)")
    from ikrig.viz._mpl import new_figure
    from ikrig.viz.scene3d import SkeletonScene, scene_setup

    clip = bandai(slice(0, 2))
    setup = scene_setup(clip)
    ax = new_figure(4, 4, dpi=40).add_subplot(1, 1, 1, projection="3d")
    scene = SkeletonScene(ax, clip.skeleton, None, setup)
    rot, pos = clip[0].fk()
    scene.update(rot, pos)
    hips = pos[clip.skeleton.index("Hips")]
    assert np.mean(ax.get_xlim()) == pytest.approx(hips[0])
    assert np.mean(ax.get_zlim()) == pytest.approx(hips[2])
    y0, y1 = ax.get_ylim()
    assert y0 < pos[:, 1].min() + 0.1 * setup.leg_length and y1 > pos[:, 1].max()


def leg_pixels(path: Path) -> np.ndarray:
    """``(frames, 2)`` the pixels of leg-bone colour in each frame of a before/after GIF,
    in its left and right panels (above the legend, which shows the same colours)."""
    from PIL import Image

    out = []
    with Image.open(path) as im:
        for k in range(im.n_frames):
            im.seek(k)
            rgb = np.asarray(im.convert("RGB")).astype(np.int64)
            h, w = rgb.shape[:2]
            panels = rgb[: int(0.88 * h)]
            near = np.abs(panels[:, :, None] - np.array(LEG_COLOURS)[None, None]).max(-1) <= 8
            leg = near.any(-1)
            out.append([leg[:, : w // 2].sum(), leg[:, w // 2 :].sum()])
    return np.array(out)


def test_every_frame_of_a_bandai_gif_shows_the_character(tmp_path):
    """The before/after GIF of ``ikrig foot --gif`` (write_before_after_gif), on a rig whose
    root stays at the origin: both legs' bones are drawn in both panels of every frame.
    The clip's first 1.3 s are 5-9 m from the origin: a view of joint 0 shows no leg."""
    pytest.importorskip("matplotlib", reason="matplotlib not installed (the [plot] extra)")
    pytest.importorskip("PIL.Image", reason="Pillow not installed (the [plot] extra)")
    from ikrig.app.placement import place_clip
    from ikrig.viz.movie import write_before_after_gif
    from ikrig.viz.options import MovieLook

    clip = bandai(slice(0, 40))
    placed = place_clip(clip, "stairs", ["full"])
    path = tmp_path / "bandai.gif"
    look = MovieLook(size=(6.0, 3.0), dpi=50)
    write_before_after_gif(
        placed.results["full"], placed.source, placed.world(), path,
        max_frames=10, progress=False, look=look,
    )  # fmt: skip
    counts = leg_pixels(path)
    assert len(counts) == 10
    # a leg bone is ~0.4 leg lengths, 3 px wide: over 40 px per panel with both legs drawn
    assert counts.min() > 40, counts.tolist()


def test_the_viewer_lays_its_ground_and_camera_by_the_pelvis():
    """``ikrig view`` on a rig with a static root: the camera looks at the pelvis (not from
    inside a stair at the origin), the ground is laid under the body's path, and the
    camera follows the pelvis's motion."""
    pytest.importorskip("viser", reason="viser not installed (the [viewer] extra)")
    from ikrig.viz.viewer import ClipViewer

    clip = bandai(slice(0, 60, 3))
    hips = clip.skeleton.index("Hips")
    app = ClipViewer(clip, None, port=0)
    try:
        assert app.body == hips and app.root == 0
        pos = app.source_pos
        np.testing.assert_allclose(app.camera_target(pos[5]), pos[5, hips])
        look = np.asarray(app.server.initial_camera.look_at)
        eye = np.asarray(app.server.initial_camera.position)
        assert np.linalg.norm(look - pos[0, hips]) < app.L  # looking at the body
        assert np.linalg.norm(look - pos[0, 0]) > 3 * app.L  # not at joint 0
        assert np.linalg.norm(eye - pos[0, hips]) < 5 * app.L
        v = np.asarray(app.ground_handle.vertices)
        lo, hi = v[:, [0, 2]].min(axis=0), v[:, [0, 2]].max(axis=0)
        path = pos[:, hips][:, [0, 2]]
        assert (path >= lo).all() and (path <= hi).all()  # the ground is under the body
        moved = []
        app._follow = moved.append  # the camera's move on the next frame
        app.update(1)
        np.testing.assert_allclose(moved[0], pos[1, hips] - pos[0, hips])
    finally:
        app.close()
