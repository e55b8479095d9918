"""Issue 34: a long body pitches with the ground (step 5c, :mod:`ikrig.foot.stages.pitch`),
and the pelvis drop comes down at each end of it (step 6b, :func:`plan_pelvis`).

The Fox walked up the stairs or the 12 degree slope with its body level: its front legs
folded 26-31 % of a leg under the higher ground. Turning the body with the ground along it,
and letting each end come down as far as its own legs need, keeps the crouch to 8-11 %. A
biped's hips lie across its body: it never pitches, and its results do not change.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from test_quadruped import LEGS, _trot

from ikrig.character import estimate_sole, find_legs, pelvis_joint
from ikrig.data.walk import walk_clip
from ikrig.foot import FootOptions, FootPlacer, place_feet
from ikrig.foot.context import FootContext
from ikrig.foot.stages.pelvis import plan_pelvis
from ikrig.foot.stages.pitch import MAX_PITCH, BodyAxes, body_axes, turned_pose
from ikrig.ground import load_ground


@pytest.fixture(scope="module")
def trot():
    return _trot(seconds=2.0)[0]


def _ground(clip, legs, name):
    path = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs), [0, 2]]
    return load_ground(name, path, legs.leg_length, estimate_sole(clip, legs).floor)


def _context(clip, legs, name="flat") -> FootContext:
    fk = clip.fk()
    sole = estimate_sole(clip, legs)
    return FootContext.create(
        clip.skeleton, legs, sole, _ground(clip, legs, name), FootOptions(), fk
    )


def test_a_body_is_long_when_its_hips_lie_along_it(trot):
    """:func:`body_axes`: the trot's hips lie one body length (1.1 legs) apart along +Z,
    its axis points from the pelvis to the front hips and takes all of a turn; a biped's
    hips lie across its body and take none."""
    legs = find_legs(trot.skeleton, LEGS)
    axes = body_axes(_context(trot, legs), trot.positions_world())
    assert np.allclose(axes.forward, [0.0, 0.0, 1.0], atol=1e-9)
    assert np.allclose(axes.along[:, :2], 0.0, atol=1e-9)  # the hind hips, under the pelvis
    assert np.allclose(axes.along[:, 2:], 1.0, atol=1e-9)  # the front ones, 1.0 ahead
    assert np.all(axes.share == 1.0)
    walk = walk_clip(seconds=1.0)
    biped = find_legs(walk.skeleton)
    assert np.all(body_axes(_context(walk, biped), walk.positions_world()).share == 0.0)


@settings(max_examples=25, deadline=None)
@given(
    pitch=st.floats(-0.6, 0.6),
    dtype=st.sampled_from([np.float32, np.float64]),
    frames=st.integers(1, 4),
)
def test_the_turn_is_rigid_about_the_pelvis(trot, pitch, dtype, frames):
    """:func:`turned_pose`: the pose below the pelvis turns as one (every joint's distance
    from every other kept, the pelvis where it was), a positive pitch lifts the front hips
    by their place along the body times its sine, and the source arrays are not written."""
    legs = find_legs(trot.skeleton, LEGS)
    ctx = _context(trot, legs)
    rot, pos = (a[:frames].astype(dtype) for a in trot.fk())
    before = rot.copy(), pos.copy()
    axes = body_axes(ctx, pos.astype(np.float64))
    p = np.full(frames, pitch)
    rot2, pos2, _ = turned_pose(ctx, (rot, pos), axes, p)
    assert np.array_equal(rot, before[0]) and np.array_equal(pos, before[1])
    tol = 1e-4 if dtype == np.float32 else 1e-9
    gaps = np.linalg.norm(pos[:, :, None] - pos[:, None], axis=-1)
    gaps2 = np.linalg.norm(pos2[:, :, None] - pos2[:, None], axis=-1)
    assert np.abs(gaps2 - gaps).max() <= tol
    assert np.abs(pos2[:, ctx.pelvis] - pos[:, ctx.pelvis]).max() <= tol
    hips = ctx.leg_joints[:, 0]
    rise = pos2[:, hips, 1] - pos[:, hips, 1]
    assert np.abs(rise - axes.along * np.sin(pitch)).max() <= 0.05 * abs(pitch) + tol
    assert np.allclose(np.linalg.norm(rot2, axis=-1), 1.0, atol=tol)


def test_each_end_of_the_body_comes_down_as_far_as_its_legs_need(trot):
    """:func:`plan_pelvis`: the hind legs need a drop of 0.2, the front ones none. A long
    body comes down at the hind end only (the drop at the pelvis and the pitch put each hip
    where its legs need it); a biped's (share 0) comes down by the most any leg needs, and
    does not pitch."""
    legs = find_legs(trot.skeleton, LEGS)
    ctx = _context(trot, legs)
    F = 200
    need = np.zeros((F, 4))
    need[:, :2] = 0.2
    along = np.tile([0.0, 0.0, 1.0, 1.0], (F, 1))
    axes = BodyAxes(np.tile([0.0, 0.0, 1.0], (F, 1)), along, np.ones(F))
    drop, pitch = plan_pelvis(ctx, need, axes, 1 / 60)
    hip_moves = -drop[:, None] + along * np.sin(pitch)[:, None]
    assert np.allclose(hip_moves[:, :2], -0.2) and np.allclose(hip_moves[:, 2:], 0.0)
    drop, pitch = plan_pelvis(ctx, need, axes._replace(share=np.zeros(F)), 1 / 60)
    assert np.allclose(drop, 0.2) and np.all(pitch == 0.0)


@pytest.mark.parametrize("ground_name", ["slope", "stairs"])
def test_the_trot_pitches_up_the_ground_and_keeps_its_legs(trot, ground_name):
    """Up the 12 degree slope the trot's body pitches front up by the slope's angle (11.6
    degrees median, 12.0 at most), up the stairs by about their mean slope (13.1 median), at
    most :data:`MAX_PITCH` anywhere; its front leg reaches on average within 5 % of a leg of
    its recorded reach (1.5 and 2.6 % measured). On flat ground at the floor it does not
    pitch at all."""
    legs = find_legs(trot.skeleton, LEGS)
    r = place_feet(trot, _ground(trot, legs, ground_name), legs=LEGS)
    pitch = r.info.pitch
    assert np.isfinite(pitch).all() and np.abs(pitch).max() <= MAX_PITCH
    assert np.median(pitch) > np.radians(10.0)
    if ground_name == "slope":
        assert pitch.max() <= np.radians(12.5)
    flat = place_feet(trot, _ground(trot, legs, "flat"), legs=LEGS)
    assert np.abs(flat.info.pitch).max() <= 1e-9
    front = legs.legs[2]
    reach = [
        np.linalg.norm(p[:, front.ankle] - p[:, front.hip], axis=-1)
        for p in (r.motion.positions_world(), trot.positions_world())
    ]
    assert np.mean(reach[1] - reach[0]) <= 0.05 * legs.leg_length


def test_a_biped_never_pitches():
    """The built-in walk over the slope: no frame pitches, offline and live."""
    walk = walk_clip(seconds=1.0)
    legs = find_legs(walk.skeleton)
    ground = _ground(walk, legs, "slope")
    r = place_feet(walk, ground)
    assert np.all(r.info.pitch == 0.0)
    placer = FootPlacer.from_clip(walk, ground)
    placer.update(walk[5], walk.frame_time)
    assert np.all(placer.last_info.pitch == 0.0)


@pytest.mark.parametrize("ground_name", ["slope", "stairs"])
def test_live_replays_the_pitch_and_stays_level_without_a_plan(trot, ground_name):
    """Live with the offline plan, each frame equals the offline one, the body's turn
    included. Live without it the body stays level: pitched on a spring towards the same
    goal, without the pelvis drop's two ends, the Fox's walk up the slope popped its knees
    8 times against 3, at 5.3 times the source's pelvis acceleration against 1.2."""
    legs = find_legs(trot.skeleton, LEGS)
    ground = _ground(trot, legs, ground_name)
    r = place_feet(trot, ground, legs=LEGS)
    assert np.median(r.info.pitch) > np.radians(10.0)
    replay = FootPlacer.from_clip(trot, ground, legs=LEGS)
    causal = FootPlacer.from_clip(trot, ground, legs=LEGS)
    for f in range(trot.num_frames):
        pose = replay.update(trot[f], trot.frame_time, plan=r.plan(f))
        assert np.abs(pose.positions_world() - r.motion[f].positions_world()).max() < 1e-9
        assert replay.last_info.pitch[0] == r.info.pitch[f]
        causal.update(trot[f], trot.frame_time)
        assert causal.last_info.pitch[0] == 0.0


def fox_placed(animation: str, ground_name: str):
    """``Fox.glb``'s ``animation`` walked (three cycles) over the built-in ``ground_name``
    in full mode (:func:`~ikrig.app.placement.place_clip`); skips when the file is absent."""
    from ikrig.app.placement import FootPlacement, place_clip
    from ikrig.io import read_clip

    path = SHARED / "data" / "gltf" / "Fox.glb"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    clip = read_clip(path, animation=animation)
    walk = FootPlacement(at=(0.0, 0.0), heading=0.5, walk=True)._replace(cycles=3)
    return place_clip(clip.motion, ground_name, ["full"], None, walk)


@pytest.mark.parametrize("ground_name", ["stairs", "slope"])
def test_the_fox_walks_up_without_a_crouch(ground_name):
    """The Fox's walk up the stairs and the slope: its front legs folded 31 and 26 % of a
    leg with the body level; pitched, at most 12 % (10.7 and 8.0 measured), with no knee
    pop and the float within its goal."""
    from ikrig.app.placement import result_summary

    placed = fox_placed("Walk", ground_name)
    m = result_summary(placed.results["full"], placed.source, placed.world(), placed.source_fk)
    assert m["leg_fold"] <= 12.0 and m["pops"] == 0, m


@pytest.mark.parametrize("ground_name", ["stairs", "slope"])
def test_the_fox_pitches_no_front_leg_straighter_than_recorded(ground_name):
    """The turn lifts the front end about the hind one, at most as far as the ground rises
    under each planted foot (:data:`~ikrig.foot.stages.pitch.CAP_WINDOW`): no front leg of
    the Fox's walk reaches more than 1 % of a leg further than recorded. Capped frame by
    frame, the smoothed turn lifted the front left shoulder past it by 1.5 and 2.0 %; now
    0.6 and 0.3."""
    from ikrig.metrics.fidelity import leg_extensions

    placed = fox_placed("Walk", ground_name)
    r = placed.results["full"]
    more = leg_extensions(r.motion.positions_world(), r.legs) - leg_extensions(
        placed.source_fk[1], r.legs
    )
    front = [k for k, leg in enumerate(r.legs.legs) if leg.side.startswith("front")]
    assert len(front) == 2 and more[:, front].max() <= 0.01, more[:, front].max(axis=0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), feet=st.integers(2, 6))
def test_the_body_axis_is_the_hips_principal_axis(trot, seed, feet):
    """:func:`body_axes` finds the principal axis of the hips' horizontal scatter in closed
    form: it agrees with NumPy's eigen decomposition (up to sign, which points it at the
    hip farthest from the pelvis)."""
    from types import SimpleNamespace

    rng = np.random.default_rng(seed)
    N, J = 3, feet + 1
    pos = rng.normal(size=(N, J, 3)) * [1.0, 0.3, rng.uniform(0.2, 3.0)]
    ctx = SimpleNamespace(pelvis=0, leg_joints=np.arange(1, J)[:, None], unit=1.0)
    axes = body_axes(ctx, pos)
    xz = pos[:, 1:, ::2] - pos[:, :1, ::2]
    c = xz - xz.mean(axis=1, keepdims=True)
    values, vectors = np.linalg.eigh(np.einsum("nki,nkj->nij", c, c))
    for n in range(N):
        if values[n, 1] - values[n, 0] < 1e-6 * max(values[n, 1], 1e-12):
            continue  # no principal axis
        assert abs(abs(axes.forward[n, ::2] @ vectors[n, :, 1]) - 1.0) < 1e-9
        far = np.argmax(np.sum(xz[n] ** 2, axis=-1))
        assert axes.forward[n, ::2] @ xz[n, far] >= -1e-12
    assert np.all(axes.forward[:, 1] == 0.0)
