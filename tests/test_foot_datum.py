"""Issue 11's synthetic cases: the datum, clips that start mid-swing, roofs above the head."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import quads_mesh

from ikrig.character import find_legs, pelvis_joint
from ikrig.data.walk import walk_clip
from ikrig.errors import InputError
from ikrig.foot import FootOptions, place_feet
from ikrig.ground import Plane, load_ground
from ikrig.ground.views import RaisedGround, single_valued
from ikrig.pose import Motion


@pytest.fixture(scope="module")
def walk() -> Motion:
    return walk_clip(seconds=3.0, fps=60.0)


def _shifted(clip: Motion, dy: float) -> Motion:
    """The clip moved up by ``dy`` (its root's position channels)."""
    root = int(np.flatnonzero(clip.skeleton.parents < 0)[0])
    pl = clip.positions_local.copy()
    pl[:, root, 1] += dy
    return clip.replace(positions_local=pl)


def _path(clip: Motion) -> np.ndarray:
    legs = find_legs(clip.skeleton)
    return clip.positions_world()[:, pelvis_joint(clip.skeleton, legs), [0, 2]]


def _contact_heights(result, source: Motion) -> np.ndarray:
    """Each planted ankle's height over the source's flat floor: result minus source
    ``(frames in contact,)``."""
    pr, ps = result.motion.positions_world(), source.positions_world()
    out = []
    for k, leg in enumerate(result.legs.legs):
        c = result.contacts[:, k]
        out.append(pr[c, leg.ankle, 1] - ps[c, leg.ankle, 1])
    return np.concatenate(out)


@pytest.mark.parametrize("dy", [-0.5, 0.5])
def test_a_clip_moved_up_or_down_is_placed_the_same(walk, dy):
    legs = find_legs(walk.skeleton)
    L = legs.leg_length
    ground = load_ground("stairs", _path(walk), L)
    a = place_feet(walk, ground)
    b = place_feet(_shifted(walk, dy * L), ground)
    np.testing.assert_allclose(
        b.motion.positions_world() - [0, dy * L, 0], a.motion.positions_world(), atol=1e-9 * L
    )


def test_flat_ground_at_zero_keeps_every_planted_foot_where_it_was(walk):
    L = find_legs(walk.skeleton).leg_length
    for dy in (-0.67, 0.0, 0.3):  # files whose floor is far from y = 0
        clip = _shifted(walk, dy * L)
        r = place_feet(clip, Plane([0, 0, 0], [0, 1, 0]))
        assert np.abs(_contact_heights(r, clip)).max() < 0.005 * L
        assert r.datum == pytest.approx(r.sole.floor)


def test_absolute_datum_plants_the_lowest_sole_point_on_the_mesh(walk):
    L = find_legs(walk.skeleton).leg_length
    clip = _shifted(walk, 0.3 * L)  # the clip's floor is 0.3 leg above the mesh
    mesh = quads_mesh([(-50, 50, -50, 50, 0.0)])
    r = place_feet(clip, mesh, FootOptions(datum="absolute"))
    assert r.datum == 0.0
    rot, pos = r.motion.fk()
    points = r.sole.points_world(rot, pos)
    lowest = (points[..., 1] - r.sole.heights).min(axis=-1)  # (F, feet) the sole's level
    planted = lowest[r.contacts]
    assert np.abs(np.median(planted)) < 0.005 * L
    with pytest.raises(InputError, match="datum"):
        FootOptions(datum="floor")


@pytest.mark.parametrize("roof", [1.3, 2.5])
def test_a_roof_above_the_character_is_not_ground(walk, roof):
    L = find_legs(walk.skeleton).leg_length
    floor = quads_mesh([(-50, 50, -50, 50, 0.0)])
    cave = quads_mesh([(-50, 50, -50, 50, 0.0), (-50, 50, -50, 50, roof * L)])
    a = place_feet(walk, floor)
    b = place_feet(walk, cave)
    np.testing.assert_allclose(b.motion.positions_world(), a.motion.positions_world(), atol=1e-9)


def test_only_a_ground_with_one_surface_skips_the_ceilings():
    """A plane or a built-in ground, raised any number of times, has nothing above its
    surface (no ceiling needed); a mesh may have a roof."""
    plane = Plane([0, 0, 0], [0, 1, 0])
    assert single_valued(plane) and single_valued(RaisedGround(RaisedGround(plane, 1.0), 2.0))
    assert single_valued(load_ground("stairs", np.zeros((2, 2)), 1.0))
    mesh = quads_mesh([(-50, 50, -50, 50, 0.0)])
    assert not single_valued(mesh) and not single_valued(RaisedGround(mesh, 1.0))


def test_a_clip_that_starts_mid_swing_follows_the_ground(walk):
    legs = find_legs(walk.skeleton)
    L = legs.leg_length
    full = place_feet(walk, Plane([0, 0, 0], [0, 1, 0]))
    # start where the left foot is in the air halfway through a swing
    air = np.flatnonzero(~full.contacts[:, 0])
    start = int(air[(len(air) // 4)])
    clip = walk[start:]
    ground = load_ground("slope", _path(clip), L)
    r = place_feet(clip, ground)
    first = int(np.flatnonzero(r.contacts[:, 0])[0])
    assert first > 0  # it does start in the air
    ankle = legs.legs[0].ankle
    pr, ps = r.motion.positions_world(), clip.positions_world()
    under = ground.height_at(pr[:first, ankle][:, [0, 2]])[0] + r.sole.floor
    lift_result = pr[:first, ankle, 1] - under
    lift_source = ps[:first, ankle, 1] - r.sole.floor
    # the foot keeps its own lift over the ground beneath it: it neither floats at a future
    # landing height nor cuts into the slope
    assert np.abs(lift_result - lift_source).max() < 0.03 * L
