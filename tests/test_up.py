"""Up axes: detection from the poses, the turn into Y-up and back, mesh files, the CLI."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import SHARED_BVH

from ikrig.character import detect_up, from_y_up, to_y_up
from ikrig.cli import main
from ikrig.data.walk import walk_clip
from ikrig.errors import InputError
from ikrig.ground import load_ground
from ikrig.io import read_bvh
from ikrig.math.axes import to_y_up_quat
from ikrig.math.quat import quat_conj, quat_rotate

SHARED = [
    p
    for folder in (SHARED_BVH, SHARED_BVH.parent / "bvh_more")
    for p in (sorted(folder.glob("*.bvh")) if folder.is_dir() else [])
]


@pytest.fixture(scope="module")
def walk():
    return walk_clip(seconds=1.0, fps=30.0)


@pytest.mark.parametrize("up", ["y", "z", "x"])
def test_a_clip_turned_to_any_up_axis_is_detected_and_turned_back(walk, up):
    turned = from_y_up(walk, up)
    axis = "xyz".index(up)
    head = walk.skeleton.index("Head")
    assert np.all(turned.positions_world()[:, head, axis] > 0.5)  # the head is up there
    assert detect_up(turned) == up
    back = to_y_up(turned, up)
    np.testing.assert_allclose(back.positions_world(), walk.positions_world(), atol=1e-12)
    np.testing.assert_allclose(back.skeleton.offsets, walk.skeleton.offsets, atol=1e-15)
    # only the root's data changes
    np.testing.assert_array_equal(turned.rotations_local[:, 1:], walk.rotations_local[:, 1:])


def test_bad_up_axis_raises(walk):
    with pytest.raises(InputError, match="up: expected one of y, z, x"):
        to_y_up(walk, "w")


@pytest.mark.skipif(not SHARED, reason="../shared/data is not present")
def test_shared_clips_are_detected():
    for path in SHARED:
        expected = "z" if "zup" in path.name else "y"
        assert detect_up(read_bvh(path).motion) == expected, path.name


def test_a_mesh_file_in_z_up_is_turned_like_its_clip(tmp_path):
    trimesh = pytest.importorskip("trimesh", reason="mesh files need the [mesh] extra")
    v_y = np.array([[-1, 0.2, -1], [1, 0.2, -1], [1, 0.2, 1], [-1, 0.2, 1.0]])
    v_z = quat_rotate(quat_conj(to_y_up_quat("z")), v_y)  # the same quad, Z-up
    np.testing.assert_allclose(v_z[:, 2], 0.2)
    path = tmp_path / "quad.ply"
    trimesh.Trimesh(v_z, [[0, 2, 1], [0, 3, 2]], process=False).export(path)
    ground = load_ground(str(path), None, 1.0, up="z")
    h, _, hit = ground.height_at(np.array([[0.3, -0.4]]))
    assert hit[0] and h[0] == pytest.approx(0.2)


@pytest.mark.skipif(not SHARED, reason="../shared/data is not present")
def test_the_cli_places_a_z_up_clip_and_writes_it_back_z_up(tmp_path):
    path = next(p for p in SHARED if "zup" in p.name)
    out = tmp_path / "out.bvh"
    r = CliRunner().invoke(
        main, ["foot", str(path), "--ground", "slope", "-o", str(out)], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    assert "up axis: z (detected)" in r.output
    source, result = read_bvh(path), read_bvh(out)
    assert result.num_frames == source.num_frames and result.channels == source.channels
    assert detect_up(result.motion) == "z"
    root_s, root_r = source.motion.positions_world()[:, 0], result.motion.positions_world()[:, 0]
    leg = 1.0  # the horizontal (X, Y) path of a Z-up clip is kept to the file's decimals
    np.testing.assert_allclose(root_r[:, :2], root_s[:, :2], atol=1e-5 * leg)
    info = CliRunner().invoke(main, ["info", str(out), "--json"], catch_exceptions=False)
    assert '"up": "z"' in info.output
