"""Issue 11: every shared clip over every built-in ground written to disk as a mesh file at
the file's y = 0, run through the CLI as a user would, judged by :mod:`ikrig.metrics` (each
foot joint against its own floor in the source)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import SHARED_BVH, assert_foot_bar

from ikrig.character import detect_up, find_legs, pelvis_joint, to_y_up
from ikrig.cli import main
from ikrig.ground import GROUND_NAMES, load_ground
from ikrig.io import read_bvh
from ikrig.math.axes import to_y_up_quat
from ikrig.math.quat import quat_conj, quat_rotate
from ikrig.metrics import foot_metrics
from ikrig.viz.geometry import ground_mesh

pytestmark = pytest.mark.slow  # every clip x every ground: minutes on a cold cache

CLIPS = [  # every clip in ../shared/data/bvh and bvh_more
    p
    for folder in (SHARED_BVH, SHARED_BVH.parent / "bvh_more")
    for p in (sorted(folder.glob("*.bvh")) if folder.is_dir() else [])
]


def _mesh_file(folder, clip, legs, name, up):
    """The built-in ground ``name`` laid along the (Y-up) clip at y = 0, written as a PLY
    file in the clip file's own convention ``up``, as its user would have it."""
    trimesh = pytest.importorskip("trimesh", reason="mesh files need the [mesh] extra")
    L = legs.leg_length
    path_xz = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs)][:, [0, 2]]
    ground = load_ground(name, path_xz, L)
    bounds = np.stack([path_xz.min(axis=0) - 2 * L, path_xz.max(axis=0) + 2 * L])
    v, f = ground_mesh(ground, bounds, cells=400)
    v = quat_rotate(quat_conj(to_y_up_quat(up)), v)
    out = folder / f"{name}.ply"
    trimesh.Trimesh(v, f, process=False).export(out)
    return out


@pytest.fixture(scope="module")
def mesh_runs(tmp_path_factory):
    if not CLIPS:
        pytest.skip("../shared/data/bvh is not present")
    runs = {}
    for path in CLIPS:
        folder = tmp_path_factory.mktemp(path.stem)
        source = read_bvh(path).motion
        up = detect_up(source)
        source = to_y_up(source, up)
        legs = find_legs(source.skeleton)
        for name in GROUND_NAMES:
            mesh = _mesh_file(folder, source, legs, name, up)
            out = folder / f"{name}.bvh"
            r = CliRunner().invoke(
                main, ["foot", str(path), "--ground", str(mesh), "-o", str(out)],
                catch_exceptions=False,
            )  # fmt: skip
            assert r.exit_code == 0, r.output
            assert "datum: clip" in r.output
            result = read_bvh(out).motion
            assert detect_up(result) == up  # written back in its own convention
            ground = load_ground(str(mesh), None, legs.leg_length, up=up)
            runs[path.name, name] = (source, to_y_up(result, up), ground, legs)
    return runs


def test_every_clip_over_every_mesh_file_meets_the_bar(mesh_runs):
    for key, (source, result, ground, legs) in mesh_runs.items():
        # the pelvis path is kept to the file's decimals
        assert_foot_bar(foot_metrics(result, source, ground, legs), key, exact=False)


def test_a_flat_mesh_at_the_floor_leaves_every_clip_as_recorded(mesh_runs):
    """Issue 34 through the CLI: a flat mesh file at each clip's floor asks for nothing, so
    the pelvis keeps its height and nothing outside a planted leg moves (in the file's
    decimals)."""
    for (clip, name), (source, result, ground, legs) in mesh_runs.items():
        if name != "flat":
            continue
        m = foot_metrics(result, source, ground, legs)
        assert abs(m["pelvis_change_mean"]) <= 0.2 and m["pelvis_change_p95"] <= 0.5, (clip, m)
        assert m["joint_disp_p95"] <= 1.0 and m["upper_body_change"] <= 1e-3, (clip, m)
