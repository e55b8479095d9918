"""Issue 34, do no harm: where the ground asks for nothing, the clip stays as recorded.

Measured the way an outsider would (:mod:`ikrig.metrics.fidelity`, against the source
alone): on flat ground at each clip's own floor the pelvis keeps its height, nothing
outside the stance legs moves, legs stay as straight as the source had them, and the upper
body keeps its pose on every ground.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import SHARED, float_goal

from ikrig.app.placement import FootPlacement, place_clip, result_summary
from ikrig.character import detect_up, find_legs, to_y_up
from ikrig.data.walk import walk_clip
from ikrig.foot import FootPlacer
from ikrig.foot.stages.swing import KEEP_DIP
from ikrig.io import read_bvh, read_clip
from ikrig.metrics import foot_summary
from ikrig.metrics.fidelity import fidelity_values, leg_extensions, upper_body_joints
from ikrig.solvers.two_bone import solve_two_bone

SINKING = {"cmu_01_01_jumps", "cmu_131_02_walk"}
"""Clips whose feet sink below their floor (4.2 and 7.0 % of a leg, against each foot
joint's floor): the sink is lifted out to :data:`~ikrig.foot.stages.swing.KEEP_DIP` (1.8 %),
the leg bending for it."""

CLIPS = [
    p
    for folder in ("bvh", "bvh_more")
    for p in (
        sorted((SHARED / "data" / folder).glob("*.bvh")) if (SHARED / "data").is_dir() else []
    )
]


def _placed(path, ground):
    motion = read_bvh(path).motion
    motion = to_y_up(motion, detect_up(motion))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        placed = place_clip(motion, ground, ["full"])
    r = placed.results["full"]
    return placed, r, result_summary(r, placed.source, placed.world(), placed.source_fk)


@pytest.mark.slow
@pytest.mark.parametrize("path", CLIPS, ids=[p.stem for p in CLIPS])
def test_flat_ground_at_the_floor_leaves_the_clip_as_recorded(path):
    """Before issue 34 the pelvis sank by 0.6-3.1 % of a leg on average (p95 1.5-4.8 %) on
    these clips, and joints moved by 1.5-4.8 % (p95); now the pelvis keeps its height
    within 0.01 % on average (p95 <= 0.05 %), and every joint outside a planted leg stays
    (each joint's p95 at most 0.13 %)."""
    placed, r, m = _placed(path, "flat")
    key = path.name
    assert abs(m["pelvis_change_mean"]) <= 0.2, (key, m["pelvis_change_mean"])
    assert m["pelvis_change_p95"] <= 0.5, (key, m["pelvis_change_p95"])
    assert m["joint_disp_p95"] <= 1.0, (key, m["joint_disp_p95"], m["joint_disp_worst_joint"])
    assert m["joint_disp_worst"] <= 1.0, (key, m["joint_disp_worst"], m["joint_disp_worst_joint"])
    assert m["upper_body_change"] <= 1e-6, (key, m["upper_body_change"])
    assert abs(m["leg_fold"]) <= 0.5, (key, m["leg_fold"], m["leg_fold_leg"])
    assert m["skate"] <= m["skate_source"] + 1e-9, (key, m["skate"], m["skate_source"])
    assert (m["float_mean"] or 0.0) <= float_goal(m["float_mean_source"]), (key, m)
    assert m["pops"] == 0, key
    # a leg the source holds straight may stay straight: no cap below full extension (but
    # a foot the recording sinks below its floor is lifted out, its leg bending for it)
    if path.stem in SINKING:
        own = foot_summary(placed.source, placed.source, None, r.legs)
        assert own["pen_max"] > 2.0 and m["pen_max"] <= 100 * KEEP_DIP + 1e-9, (key, own, m)
    else:
        assert m["leg_extension_max"] >= m["leg_extension_max_source"] - 1e-3, (key, m)


@pytest.mark.slow
@pytest.mark.parametrize("path", CLIPS, ids=[p.stem for p in CLIPS])
def test_flat_ground_sinks_no_foot_deeper_than_the_recording(path):
    """Issue 34: on flat ground at the floor, penetration (p95 and max) no worse than the
    source's own on its floor. The knee smoothing (step 7) lowered an ankle target below
    the ground where a lock holds a foot the recording slides (xia_neutral_walk p95 0.005
    against its own 0.002, bandai1_sidestep_left max 0.287 against 0.137); it now takes
    the ground as its bound."""
    placed, r, m = _placed(path, "flat")
    own = foot_summary(placed.source, placed.source, None, r.legs)
    assert m["pen_p95"] <= own["pen_p95"] + 1e-9, (path.stem, m["pen_p95"], own["pen_p95"])
    assert m["pen_max"] <= own["pen_max"] + 1e-9, (path.stem, m["pen_max"], own["pen_max"])


@pytest.mark.slow
@pytest.mark.parametrize("ground", ["stairs", "slope", "bumps", "blocks"])
def test_uneven_ground_keeps_the_upper_body_and_the_bob(ground):
    """On uneven ground the body moves as the ground asks, never its pose: everything
    outside the legs keeps its place relative to the pelvis, and the pelvis's vertical
    acceleration stays within 3x the source's."""
    if not CLIPS:
        pytest.skip("../shared/data is not present")
    for path in CLIPS:
        _, _, m = _placed(path, ground)
        assert m["upper_body_change"] <= 1e-6, (path.name, ground, m["upper_body_change"])
        assert m["pelvis_acc_ratio"] <= 3.0, (path.name, ground, m["pelvis_acc_ratio"])
        assert (m["float_mean"] or 0.0) <= float_goal(m["float_mean_source"]), (path.name, m)


def test_a_walk_with_straight_legs_keeps_them_straight_on_flat_ground():
    """A synthetic walk whose legs lock fully straight (the built-in walk, each knee set
    straight wherever it was nearly so): on flat ground the legs stay as straight as they
    were and the pelvis does not come down (before issue 34 every leg was kept below about
    0.99 of full extension, lowering the pelvis to do so)."""
    clip = walk_clip(seconds=2.0)
    legs = find_legs(clip.skeleton)
    ext = leg_extensions(clip.positions_world(), legs)
    rl = clip.rotations_local.copy()
    for k, leg in enumerate(legs.legs):
        rl[ext[:, k] > 0.97, leg.knee] = [0.0, 0.0, 0.0, 1.0]  # straight (its rest)
    straight = clip.replace(rotations_local=rl)
    assert leg_extensions(straight.positions_world(), legs).max() > 0.9999
    placed = place_clip(straight, "flat", ["full"])
    m = result_summary(placed.results["full"], placed.source, placed.world(), placed.source_fk)
    assert m["leg_extension_max"] >= m["leg_extension_max_source"] - 1e-4, m
    assert abs(m["pelvis_change_mean"]) <= 0.2 and m["pelvis_change_p95"] <= 0.5, m
    assert m["pops"] == 0, m


def test_fidelity_values_read_what_changed():
    """The measures are the source's own changes, not the pipeline's: zero for the source
    itself, the lift for a lifted body, and the arm's move for a moved arm."""
    clip = walk_clip(seconds=1.0)
    legs = find_legs(clip.skeleton)
    fk = clip.fk()
    stance = np.zeros((clip.num_frames, len(legs.legs)), dtype=bool)
    same = fidelity_values(fk, fk, clip.skeleton, legs, stance, clip.frame_time)
    assert same["pelvis_change_p95"] == 0 and same["joint_disp_p95"] == 0
    assert same["upper_body_change"] == 0
    pl = clip.positions_local.copy()
    pl[:, 0, 1] += 0.02 * legs.leg_length  # the whole body up by 2 % of a leg
    up = clip.replace(positions_local=pl).fk()
    lifted = fidelity_values(up, fk, clip.skeleton, legs, stance, clip.frame_time)
    assert lifted["pelvis_change_mean"] == pytest.approx(2.0)
    assert lifted["joint_disp_p95"] == pytest.approx(2.0)
    assert lifted["upper_body_change"] == pytest.approx(0.0, abs=1e-9)
    upper = upper_body_joints(clip.skeleton, legs)
    moved = clip.fk()
    moved[1][:, upper[-1]] += [0.05 * legs.leg_length, 0.0, 0.0]
    arm = fidelity_values(moved, fk, clip.skeleton, legs, stance, clip.frame_time)
    assert arm["upper_body_change"] == pytest.approx(5.0)
    assert same["leg_fold"] == 0 and lifted["leg_fold"] == pytest.approx(0.0, abs=1e-9)
    # one leg bent by two-bone IK (bones kept): its ankle 3 % of its thigh plus shin nearer
    # its hip, every frame
    leg = legs.legs[1]
    hip, knee, ankle = (fk[1][:, j] for j in leg.joints)
    bones = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
    toward = (hip - ankle) / np.linalg.norm(hip - ankle, axis=-1, keepdims=True)
    target = ankle + 0.03 * bones[:, None] * toward
    bent = solve_two_bone(clip, leg.joints, target).motion.fk()
    folded = fidelity_values(bent, fk, clip.skeleton, legs, stance, clip.frame_time)
    assert folded["leg_fold"] == pytest.approx(3.0) and folded["leg_fold_leg"] == leg.side
    straighter = fidelity_values(fk, bent, clip.skeleton, legs, stance, clip.frame_time)
    assert straighter["leg_fold"] == pytest.approx(0.0, abs=1e-9)  # the other leg's 0


WALK = FootPlacement(at=(0.0, 0.0), heading=0.5, walk=True)
GLTF = [  # the shared glTF walk cycles, walked on their belts (the Fox: three cycles)
    ("CesiumMan", None, None, WALK),
    ("GodotPlatformerPlayer", "walk", None, WALK),
    ("GodotPlatformerPlayer", "run", None, WALK),
    ("Fox", "Walk", None, WALK._replace(cycles=3)),  # its four legs found (issue 36)
    ("Fox", "Run", None, WALK._replace(cycles=3)),  # 20.7 fps, front paws never slow
]


@pytest.mark.slow
@pytest.mark.parametrize("name, animation, legs, placement", GLTF, ids=lambda v: str(v)[:12])
def test_gltf_walks_on_flat_ground_stay_as_recorded(name, animation, legs, placement):
    """The glTF characters, four legs included: flat ground at the floor changes nothing but
    skate (before issue 34 CesiumMan's pelvis sank by 3.7 % of a leg on average); no foot
    sinks deeper than the recording's own (CesiumMan: 1.02 % of a leg against its 1.31)."""
    path = SHARED / "data" / "gltf" / f"{name}.glb"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    clip = read_clip(path, animation=animation)
    placed = place_clip(clip.motion, "flat", ["full"], legs, placement)
    m = result_summary(placed.results["full"], placed.source, placed.world(), placed.source_fk)
    assert abs(m["pelvis_change_mean"]) <= 0.2 and m["pelvis_change_p95"] <= 0.5, m
    assert m["joint_disp_p95"] <= 1.0 and m["upper_body_change"] <= 1e-6, m
    assert m["joint_disp_worst"] <= 1.0, (m["joint_disp_worst"], m["joint_disp_worst_joint"])
    assert abs(m["leg_fold"]) <= 0.5, (m["leg_fold"], m["leg_fold_leg"])
    assert m["skate"] <= m["skate_source"] + 1e-9 and m["pops"] == 0, m
    assert (m["float_mean"] or 0.0) <= float_goal(m["float_mean_source"]), m
    own = foot_summary(placed.source, placed.source, None, placed.results["full"].legs)
    assert m["pen_p95"] <= own["pen_p95"] + 1e-9 and m["pen_max"] <= own["pen_max"] + 1e-9, m


@pytest.mark.slow
def test_a_recording_that_sinks_a_little_keeps_its_heights_on_flat_ground():
    """Issue 34, never worse than the source: the Fox's run sinks its hind paws 1.2-1.7 % of
    a leg below their floor at each landing, less than the dip foot placement keeps
    (:data:`~ikrig.foot.stages.swing.KEEP_DIP`), so on flat ground at its floor every paw
    stays at its recorded height: its float and penetration are the recording's own. Kept
    to 1 %, the lifted paws raised the toes in contact: float 1.096 against its own 0.956."""
    name, animation, legs, placement = CHARACTERS["Fox-run"]
    path = SHARED / "data" / "gltf" / f"{name}.glb"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    clip = read_clip(path, animation=animation)
    placed = place_clip(clip.motion, "flat", ["full"], legs, placement)
    r = placed.results["full"]
    m = result_summary(r, placed.source, placed.world(), placed.source_fk)
    own = foot_summary(placed.source, placed.source, None, r.legs)
    assert 1.2 < own["pen_max"] < 100 * KEEP_DIP, own["pen_max"]
    assert abs(m["pen_max"] - own["pen_max"]) <= 1e-6, (m["pen_max"], own["pen_max"])
    assert abs(m["float_mean"] - m["float_mean_source"]) <= 1e-6, m
    # a planted paw within a third of a percent of its recorded height, every joint within
    # a fifth (lifted to 1 %: 0.71 and 0.54)
    assert m["height_dev_max"] <= 0.35 and m["joint_disp_worst"] <= 0.2, m


@pytest.mark.slow
@pytest.mark.parametrize("ground", ["flat", "stairs", "blocks"])
def test_live_with_the_plan_replays_full_mode(ground):
    """Live placement given the offline plan replays the offline frames, so every goal
    full mode meets it meets too: on flat ground it keeps the clip as recorded (pelvis
    height and every joint of a shared walk), on stairs and blocks it is full mode's
    result, frame for frame."""
    path = SHARED / "data" / "bvh" / "xia_neutral_walk.bvh"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    placed, r, _ = _placed(path, ground)
    clip = placed.source
    placer = FootPlacer.from_clip(clip, placed.world(), legs=r.legs)
    frames = [
        placer.update(clip[f], clip.frame_time, plan=r.plan(f)) for f in range(clip.num_frames)
    ]
    live = clip.replace(
        rotations_local=np.stack([p.rotations_local for p in frames]),
        positions_local=np.stack([p.positions_local for p in frames]),
    )
    np.testing.assert_allclose(live.positions_world(), r.motion.positions_world(), atol=1e-9)
    if ground == "flat":
        m = result_summary(r, clip, placed.world(), placed.source_fk)
        assert abs(m["pelvis_change_mean"]) <= 0.2 and m["pelvis_change_p95"] <= 0.5, m


SYNTHETIC = {  # the held-out kinds of issue 34, made by code
    "circle": dict(seconds=8.0, turn=0.8),  # a walk in a circle
    "tight circle": dict(seconds=6.0, speed=1.6, turn=1.2),
    "dash": dict(seconds=1.5, speed=2.0),  # a short dash
    "slow": dict(seconds=4.0, speed=0.6),
}


@pytest.mark.slow
@pytest.mark.parametrize("ground", ["slope", "stairs", "blocks"])
@pytest.mark.parametrize("kind", sorted(SYNTHETIC))
def test_held_out_kinds_meet_the_bar(kind, ground):
    """Walks in a circle, a dash and a slow walk over the slope, up the stairs and over the
    blocks: the pelvis bob stays within 3x the source's (the held-out circle walk had 4.4-4.6x;
    measured here 1.0-1.3x), no toe cuts a step edge by more than 2 % of a leg (held-out
    walks had 2.5-3.0; here at most 0.7), the float stays within the goal (the held-out dash
    floated 2.1 % up the stairs; this one 0.56 against its own 0.24), no knee pops."""
    clip = walk_clip(**SYNTHETIC[kind])
    placed = place_clip(clip, ground, ["full"])
    m = result_summary(placed.results["full"], placed.source, placed.world(), placed.source_fk)
    key = (kind, ground)
    assert m["pelvis_acc_ratio"] <= 3.0, (key, m["pelvis_acc_ratio"])
    assert m["pen_max"] <= 2.0 and m["pen_p95"] <= 0.5, (key, m["pen_max"])
    assert (m["float_mean"] or 0.0) <= float_goal(m["float_mean_source"]), (key, m)
    assert m["pops"] == 0 and m["upper_body_change"] <= 1e-6, (key, m)


CHARACTERS = dict(
    zip(
        ("CesiumMan", "GodotPlatformerPlayer-walk", "GodotPlatformerPlayer-run", "Fox", "Fox-run"),
        GLTF,
    )
)


GROUNDS_UNEVEN = ("stairs", "slope", "bumps", "blocks")
"""Every character over every uneven ground. The Fox over the blocks floated 3.27 % of a leg
against its own 2.05, with a knee pop: a hind paw came down just past a block's edge, its
sole still over the block two frames before landing, and the plan's lift over the block
ran on into the contact. Its footprint now slides off the edge (issue 34): 2.14, no pop.

The Fox's run (20.7 fps) slides its front paws at 2-2.7 legs/s while down, so neither the
pipeline nor the metrics find a contact for them; their shoulders are 1.4-2.1 legs ahead of
the pelvis. Up the stairs and the slope its front knees popped 13 and 6 times with the body
level, 4 and 3 times once it pitched with the ground (:mod:`~ikrig.foot.stages.pitch`):
at the top of a swing the paw, following the ground a leg ahead of its shoulder, pulled
the leg straight. Carried by its hip instead (step 5d, :mod:`~ikrig.foot.stages.carry`),
with its end of the body coming up part of the way its landings need: no pop, the front
legs 1-3 % of a leg more bent than recorded (6-8 before). Its float met the goal once
recorded dips were kept to :data:`~ikrig.foot.stages.swing.KEEP_DIP` (its hind paws sink
1.2-1.7 % at each landing; lifted to 1 %, the float mean was 1.108-1.1105 against the goal
of 1.10 on the stairs, the slope and the bumps; now 0.97, 1.02 and 0.99)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "character, ground",
    [(c, g) for c in CHARACTERS for g in GROUNDS_UNEVEN],
)
def test_gltf_walks_on_uneven_ground_meet_the_bar(character, ground):
    """The glTF walk cycles walked over every uneven ground: issue 11's bar with issue 34's
    float goal, and the upper body kept."""
    name, animation, legs, placement = CHARACTERS[character]
    path = SHARED / "data" / "gltf" / f"{name}.glb"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    clip = read_clip(path, animation=animation)
    placed = place_clip(clip.motion, ground, ["full"], legs, placement)
    m = result_summary(placed.results["full"], placed.source, placed.world(), placed.source_fk)
    key = (character, ground)
    assert m["pen_p95"] <= 0.5 and m["pen_max"] <= 2.0, (key, m)
    assert (m["float_mean"] or 0.0) <= float_goal(m["float_mean_source"]), (key, m)
    assert m["skate"] <= m["skate_source"] + 1e-9 and m["pops"] == 0, (key, m)
    assert m["pelvis_acc_ratio"] <= 3.0 and m["upper_body_change"] <= 1e-6, (key, m)


def strut_clip(bob: float = 3.0):
    """A strutting walk made from the built-in one: the pelvis bobs ``bob`` times as deep
    (it comes down ``bob - 1`` times further from the top of each bob), the legs bending to
    keep every foot where it was (two-bone IK, the knee toward where it pointed), the upper
    body riding along unchanged."""
    from ikrig.math.quat import quat_mul
    from ikrig.pose import Motion
    from ikrig.solvers import two_bone_positions

    clip = walk_clip(seconds=4.0)
    legs = find_legs(clip.skeleton)
    sk = clip.skeleton
    rw, pw = (a.copy() for a in clip.fk())
    pelvis_y = pw[:, 0, 1]
    dy = (bob - 1.0) * (pelvis_y - pelvis_y.max())  # <= 0: down from the top of each bob
    below = [j for leg in legs.legs for j in range(sk.num_joints) if leg.hip in sk.ancestors(j)]
    body = [j for j in range(sk.num_joints) if j not in below]
    pw[:, body, 1] += dy[:, None]
    for leg in legs.legs:
        hip, knee, ankle = (clip.positions_world()[:, j] for j in leg.joints)
        r = two_bone_positions(
            hip + dy[:, None] * [0, 1, 0],
            knee + dy[:, None] * [0, 1, 0],
            ankle + dy[:, None] * [0, 1, 0],
            ankle,
            pole_world=knee + (knee - 0.5 * (hip + ankle)),
        )
        rw[:, leg.hip] = quat_mul(r.root_rotation_world, rw[:, leg.hip])
        rw[:, leg.knee] = quat_mul(r.mid_rotation_world, rw[:, leg.knee])
        pw[:, leg.knee] = r.mid_world
    return Motion.from_world(sk, rw, pw, clip.frame_time)


def test_the_strut_fixture_keeps_its_feet_and_bobs_deeper():
    """The fixture below is what it says: the feet exactly where the walk had them, the
    pelvis bob ``3x`` as deep."""
    clip, strut = walk_clip(seconds=4.0), strut_clip(3.0)
    legs = find_legs(clip.skeleton)
    feet = [j for leg in legs.legs for j in (leg.ankle, leg.toe) if j >= 0]
    np.testing.assert_allclose(
        strut.positions_world()[:, feet], clip.positions_world()[:, feet], atol=1e-6
    )
    bob = np.ptp(strut.positions_world()[:, 0, 1]) / np.ptp(clip.positions_world()[:, 0, 1])
    assert bob == pytest.approx(3.0, rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("ground", ["slope", "stairs", "blocks"])
def test_a_strutting_walk_keeps_its_bob(ground):
    """An exaggerated strut (a bob three times as deep, knees bending deep) over the slope,
    the stairs and the blocks: the pelvis's vertical acceleration stays within 3x the
    source's (the held-out strut had 3.5-5.6x; this one 0.98-1.0x), and the rest of the bar
    holds."""
    placed = place_clip(strut_clip(3.0), ground, ["full"])
    m = result_summary(placed.results["full"], placed.source, placed.world(), placed.source_fk)
    assert m["pelvis_acc_ratio"] <= 3.0, (ground, m["pelvis_acc_ratio"])
    assert m["pen_max"] <= 2.0 and m["pops"] == 0, (ground, m)
    assert (m["float_mean"] or 0.0) <= float_goal(m["float_mean_source"]), (ground, m)
