"""Walk cycles made to walk (``FootPlacement(walk=True)``, ``ikrig foot --walk``) and
repeated (``cycles``, ``--cycles``): :mod:`ikrig.foot.travel.belt` on the built-in walk with its
root travel taken off, where the answer is known (the walk it was made from)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from ikrig.app.placement import FootPlacement, place_clip, result_metrics
from ikrig.character import find_legs, pelvis_joint
from ikrig.cli import main
from ikrig.errors import InputError
from ikrig.foot.travel import facing
from ikrig.foot.travel.belt import repeat_cycle, treadmill_contacts, walk_the_belt
from ikrig.io import read_bvh, to_bvh_clip, write_bvh


@pytest.fixture(scope="module")
def walk():
    from ikrig.data.walk import walk_clip

    return walk_clip(seconds=2.0, fps=30.0)


def pelvis_xz(motion, legs) -> np.ndarray:
    return motion.positions_world()[:, pelvis_joint(motion.skeleton, legs)][:, [0, 2]]


def in_place(motion, legs):
    """The clip with its pelvis's horizontal travel taken off its roots (a game cycle)."""
    track = pelvis_xz(motion, legs)
    roots = np.flatnonzero(motion.skeleton.parents < 0)
    pl = motion.positions_local.copy()
    pl[:, roots, 0] -= (track[:, 0] - track[0, 0])[:, None]
    pl[:, roots, 2] -= (track[:, 1] - track[0, 1])[:, None]
    return motion.replace(positions_local=pl)


def test_walking_a_cycle_gives_back_the_walk(walk):
    """The in-place walk, walked: it goes as far as the recorded walk (to 5 %), its pelvis
    stays within a tenth of a leg of the recorded path, and it no longer walks in place."""
    legs = find_legs(walk.skeleton)
    cycle = in_place(walk, legs)
    assert treadmill_contacts(cycle, legs) is not None
    walked = walk_the_belt(cycle, legs)
    assert treadmill_contacts(walked, legs) is None
    got, want = pelvis_xz(walked, legs), pelvis_xz(walk, legs)
    np.testing.assert_allclose(got[0], want[0], atol=1e-9)
    assert np.linalg.norm(got[-1] - got[0]) == pytest.approx(
        np.linalg.norm(want[-1] - want[0]), rel=0.05
    )
    assert np.max(np.linalg.norm(got - want, axis=-1)) <= 0.1 * legs.leg_length


def test_walking_a_walk_changes_little(walk):
    """A clip with root motion has a belt of about zero: walked, it stays on its path."""
    legs = find_legs(walk.skeleton)
    moved = pelvis_xz(walk_the_belt(walk, legs), legs) - pelvis_xz(walk, legs)
    assert np.max(np.linalg.norm(moved, axis=-1)) <= 0.05 * legs.leg_length


def test_a_walked_cycle_is_placed_as_a_walk(walk):
    """At ``at``, walking toward ``heading``, and measured the standard way: contacts found,
    feet planted and locked."""
    legs = find_legs(walk.skeleton)
    here = FootPlacement(at=(1.0, -2.0), heading=np.radians(120.0), walk=True)
    placed = place_clip(in_place(walk, legs), "stairs", ["full"], legs, placement=here)
    assert not placed.walks_in_place
    p = pelvis_xz(placed.source, legs)
    np.testing.assert_allclose(p[0], here.at, atol=1e-9)
    way = p[-1] - p[0]
    assert np.degrees(np.arctan2(way[0], way[1])) == pytest.approx(120.0, abs=0.5)
    assert np.degrees(facing(placed.source, legs)) == pytest.approx(120.0, abs=10.0)
    m = result_metrics(placed.results["full"], placed.source, placed.world())
    assert m["skate_source"] is not None and m["float_mean"] is not None
    assert m["pen_p95"] <= 0.5 and m["float_mean"] <= 1.0 and m["pops"] == 0, m
    assert m["skate"] <= m["skate_source"], m


def closed(motion):
    """``motion`` with its first frame repeated at the end (a closed cycle)."""
    idx = np.append(np.arange(motion.num_frames), 0)
    return motion.replace(
        rotations_local=motion.rotations_local[idx], positions_local=motion.positions_local[idx]
    )


def test_repeat_cycle_seam_and_travel(walk):
    legs = find_legs(walk.skeleton)
    cycle = in_place(walk, legs)[:20]
    F = cycle.num_frames
    assert repeat_cycle(cycle, legs, 1) is cycle
    open3 = repeat_cycle(cycle, legs, 3)  # open: every frame three times
    assert open3.num_frames == 3 * F
    np.testing.assert_array_equal(open3.rotations_local[F : 2 * F], cycle.rotations_local)
    ring = closed(cycle)
    closed3 = repeat_cycle(ring, legs, 3)  # closed: the seam frame once between repeats
    assert closed3.num_frames == 3 * F + 1
    np.testing.assert_array_equal(closed3.rotations_local[F], ring.rotations_local[0])
    np.testing.assert_array_equal(closed3.rotations_local[-1], ring.rotations_local[-1])
    # a clip with root motion goes on: the second repeat starts where the first would go
    moving = walk[:20]
    twice = repeat_cycle(moving, legs, 2)
    p, q = pelvis_xz(moving, legs), pelvis_xz(twice, legs)
    np.testing.assert_allclose(q[F], p[-1] + (p[-1] - p[-2]), atol=1e-6)
    np.testing.assert_allclose(q[:F], p, atol=1e-12)
    bones = twice.positions_world()
    assert bones.shape[0] == 2 * F


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_repeat_cycle_rejects_what_is_not_a_count(walk, bad):
    legs = find_legs(walk.skeleton)
    with pytest.raises(InputError, match="cycles"):
        repeat_cycle(walk, legs, bad)


def run(*args):
    return CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False)


def test_foot_walk_and_cycles(walk, tmp_path):
    legs = find_legs(walk.skeleton)
    cycle = in_place(walk, legs)[:30]
    src, out = tmp_path / "cycle.bvh", tmp_path / "out.bvh"
    write_bvh(src, to_bvh_clip(cycle))
    r = run("foot", src, "-g", "slope", "--walk", "--cycles", "2", "--at", "0,0",
            "--heading", "90", "-o", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "walks in place" not in r.output
    motion = read_bvh(out).motion
    assert motion.num_frames == 60
    p = pelvis_xz(motion, legs)
    assert p[-1, 0] - p[0, 0] >= 1.0 * legs.leg_length  # walked toward +X
    assert abs(p[-1, 1] - p[0, 1]) <= 0.1 * (p[-1, 0] - p[0, 0])


def test_foot_walk_errors(walk, tmp_path):
    src, out = tmp_path / "cycle.bvh", tmp_path / "out.bvh"
    write_bvh(src, to_bvh_clip(walk))
    path = tmp_path / "path.csv"
    path.write_text("time,x,z\n0,0,0\n1,0,1\n")
    r = CliRunner().invoke(main, ["foot", str(src), "-g", "flat", "-o", str(out), "--walk",
                                  "--path", str(path)])  # fmt: skip
    assert r.exit_code == 2 and "--walk and --path" in r.output, r.output
    r = CliRunner().invoke(main, ["foot", str(src), "-g", "flat", "-o", str(out), "--cycles",
                                  "0"])  # fmt: skip
    assert r.exit_code == 2 and "--cycles" in r.output, r.output
    assert not out.exists()
