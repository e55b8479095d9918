"""A user's own ground in the pictures (issue 15): mesh files with faces far bigger than the
view (a two-triangle plane, stairs of big boxes) are drawn under the feet, in ``plot
skeleton`` and in a movie frame."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="matplotlib not installed (the [plot] extra)")
pytest.importorskip("PIL.Image", reason="Pillow not installed (the [plot] extra)")
pytest.importorskip("trimesh", reason="trimesh not installed (the [mesh] extra)")

from test_viz import fake_result, projected_3d, read_rgb, stick_walk  # noqa: E402

from ikrig.ground import MeshGround, load_ground  # noqa: E402
from ikrig.viz import geometry, movie, scene3d  # noqa: E402
from ikrig.viz.options import MovieLook  # noqa: E402


# ------------------------------------------------------------------------------ mesh files
def write_obj(path, vertices, faces):
    lines = [f"v {x:.6f} {y:.6f} {z:.6f}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")
    return path


def box(lo, hi):
    """8 corners and 12 outward triangles of an axis-aligned box."""
    v = np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    )
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return v, np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])


def stairs_obj(path, steps=40, tread=0.3, rise=0.04, width=20.0):
    """Stairs along +Z of ``steps`` boxes 20 m wide reaching 2 m down; the step at z = 0 is
    at height 0, so a walk starting at the origin is in the middle of the flight."""
    verts, faces = [], []
    for k in range(steps):
        z0 = (k - steps // 2) * tread
        v, f = box((-width / 2, -2.0, z0), (width / 2, (k - steps // 2) * rise, z0 + tread))
        faces.append(f + 8 * k)
        verts.append(v)
    return write_obj(path, np.concatenate(verts), np.concatenate(faces))


def plane_obj(path, half=100.0):
    v = np.array([[-half, 0, -half], [half, 0, -half], [half, 0, half], [-half, 0, half]])
    return write_obj(path, v, [(0, 1, 2), (0, 2, 3)])


MESHES = {"plane": plane_obj, "stairs": stairs_obj}


def mesh_ground(tmp_path, name):
    path = MESHES[name](tmp_path / f"{name}.obj")
    ground = load_ground(str(path), None, 1.0)
    assert isinstance(ground, MeshGround)
    return ground


# ------------------------------------------------------------------------------ pixel checks
def ground_colours(ax) -> np.ndarray:
    """``(n, 3)`` the RGB (0-255) the ground's faces are painted with on a 3D axes."""
    polys = [c for c in ax.collections if c.__class__.__name__ == "Poly3DCollection"]
    rgb = np.concatenate([np.asarray(c.get_facecolor())[:, :3] for c in polys])
    return np.unique(np.round(rgb * 255).astype(np.int16), axis=0)


def ground_near(img, xy_pixels, colours, radius=6, tol=6) -> np.ndarray:
    """For each ``(x, y)`` display pixel: is a ground-coloured pixel within ``radius``?"""
    H = img.shape[0]
    out = []
    for x, y in np.asarray(xy_pixels).reshape(-1, 2):
        r, c = int(round(H - y)), int(round(x))
        win = img[max(r - radius, 0) : r + radius + 1, max(c - radius, 0) : c + radius + 1]
        d = np.abs(win[:, :, None, :] - colours[None, None]).max(axis=-1)
        out.append(bool((d <= tol).any()))
    return np.array(out)


def under_feet(clip, ground, frame):
    """World points on the ground's top surface under both ankles (and a little ahead)."""
    pos = clip[frame].positions_world()
    xz = pos[[3, 7, 3, 7]][:, [0, 2]] + np.array([[0, 0], [0, 0], [0, 0.15], [0, 0.15]])
    h, _, hit = ground.height_at(xz)
    assert np.asarray(hit).all()
    return np.column_stack([xz[:, 0], h, xz[:, 1]])


def polygon_area(xy) -> float:
    x, y = xy[:, 0], xy[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("name", sorted(MESHES))
def test_big_faces_are_kept(tmp_path, name):
    ground = mesh_ground(tmp_path, name)
    bounds = np.array([[-0.5, -0.5], [0.5, 0.5]])
    v, f = geometry.ground_mesh(ground, bounds)
    assert len(f) > 0  # no vertex of these faces is in the view
    polys, _ = geometry.clip_faces_xz(v, f, bounds)
    top = [p for p in polys if np.ptp(p[:, 1]) < 1e-9 and abs(p[0, 1]) < 1e-9]
    area = sum(polygon_area(p[:, [0, 2]]) for p in top)
    assert area > 0.2  # the tread (or the plane) at height 0 covers its part of the view
    if name == "stairs":  # box bottoms, hidden under the treads, are left out
        n = geometry.face_normals(v, f)
        assert (v[f][:, :, 1].max(axis=1)[n[:, 1] > 0.5] > -1.0).all()


@pytest.mark.parametrize("name", sorted(MESHES))
def test_mesh_ground_is_under_the_feet_in_plot_skeleton(tmp_path, name):
    clip = stick_walk()
    ground = mesh_ground(tmp_path, name)
    out = tmp_path / f"sk_{name}.png"
    fig = scene3d.plot_skeleton_3d(clip, ground, frame=10, path=out)
    ax = fig.axes[0]
    img = read_rgb(out)
    colours = ground_colours(ax)
    assert len(colours) > 0
    assert ground_near(img, projected_3d(ax, under_feet(clip, ground, 10)), colours).all()
    # and not everywhere: the sky above the head is not ground
    head = clip[10].positions_world()[10] + [0, 0.3, 0]
    assert not ground_near(img, projected_3d(ax, head), colours, radius=2).any()


@pytest.mark.parametrize("name", sorted(MESHES))
def test_mesh_ground_is_under_the_feet_in_a_movie_frame(tmp_path, name):
    clip = stick_walk(frames=12)
    ground = mesh_ground(tmp_path, name)
    frames = movie.BeforeAfter(fake_result(clip), clip, ground, MovieLook(size=(8, 4), dpi=60))
    img = frames.frame(6).astype(np.int16)
    for scene in frames.scenes:
        ax = scene.ax
        px = projected_3d(ax, under_feet(clip, ground, 6))
        assert ground_near(img, px, ground_colours(ax)).all()


def test_cli_plot_skeleton_on_a_stairs_mesh(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from test_viz import stick_bvh

    from ikrig.cli.viz import plot

    drawn = []
    real = scene3d.plot_skeleton_3d

    def keep(*args, **kwargs):
        drawn.append((args, kwargs, real(*args, **kwargs)))
        return drawn[-1][2]

    monkeypatch.setattr(scene3d, "plot_skeleton_3d", keep)
    bvh, obj, out = stick_bvh(tmp_path), stairs_obj(tmp_path / "stairs.obj"), tmp_path / "s.png"
    r = CliRunner().invoke(plot, ["skeleton", str(bvh), "-g", str(obj), "-o", str(out)])
    assert r.exit_code == 0, (r.output, r.exception)
    (args, kwargs, fig) = drawn[0]
    clip, ground, frame = args[0], args[1], kwargs["frame"]
    ax = fig.axes[0]
    assert ax.get_title().startswith("stairs.obj, frame")  # the file's name, not its path
    img = read_rgb(out)
    assert ground_near(
        img, projected_3d(ax, under_feet(clip, ground, frame)), ground_colours(ax)
    ).all()
