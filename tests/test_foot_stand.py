"""Issue 36: a clip that starts with a stand keeps its standing feet planted.

The built-in walk, started at a frame where both feet are down, is preceded by 2.6 s of
that frame held still: the root sways a little and jitters by 0.2 % of a leg a frame, as a
recorded stand does, and the whole stand may sit a little higher than the walk's floor
(5.5 % of a leg: above the detector's 5 % but within the metrics' 6 %; 8 %: above both).
The contact rule alone found hardly any contact in such a stand (7 to 10 % of its frames), so its
feet were neither locked nor fitted to the ground's steps, nor stood on by the body. A foot
that stands still near its floor is a contact (:func:`~ikrig.foot.stages.contacts.standing_feet`).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import FLOAT_SLACK, float_goal

from ikrig.app.placement import place_clip
from ikrig.app.report import foot_report
from ikrig.character import find_legs, pelvis_joint
from ikrig.data.walk import walk_clip, walk_contacts
from ikrig.foot import FootOptions, place_feet
from ikrig.foot.stages.contacts import standing_feet
from ikrig.ground.procedural import ProfileGround, walking_frame
from ikrig.ground.views import RaisedGround
from ikrig.metrics import foot_metrics
from ikrig.pose import Motion

STAND = 2.6  # seconds


def stand_then_walk(lift: float, jitter: float = 0.002, seconds: float = STAND) -> Motion:
    """The built-in walk from its first frame with both feet planted, after ``seconds`` of
    that frame held: the root sways 1 % of a leg side to side at 0.4 Hz and jitters
    horizontally by ``jitter`` of a leg a frame (seeded), the stand raised by ``lift`` of a
    leg and eased down over the last 0.3 s before the walk."""
    walk = walk_clip(seconds=4.0)
    start = int(np.flatnonzero(walk_contacts(seconds=4.0).all(axis=1))[0])
    m = walk[start:]
    unit = find_legs(m.skeleton).leg_length
    n = int(round(seconds / m.frame_time))
    rl = np.concatenate([np.repeat(m.rotations_local[:1], n, 0), m.rotations_local])
    pl = np.concatenate([np.repeat(m.positions_local[:1], n, 0), m.positions_local])
    t = np.arange(n) * m.frame_time
    rng = np.random.default_rng(36)
    pl[:n, 0, 0] += 0.01 * unit * np.sin(2 * np.pi * 0.4 * t)
    pl[:n, 0, [0, 2]] += jitter * unit * rng.standard_normal((n, 2))
    pl[:n, 0, 1] += lift * unit * np.clip((seconds - t) / 0.3, 0.0, 1.0)
    return m.replace(rotations_local=rl, positions_local=pl)


def stairs_under_the_stand(clip: Motion, riser_at: float) -> ProfileGround:
    """A flight rising along the walk (risers 0.15, treads 0.6 of a leg), one riser
    ``riser_at`` leg lengths along the walk from the stand's pelvis: the character stands
    on the flight."""
    legs = find_legs(clip.skeleton)
    unit = legs.leg_length
    path = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs)][:, [0, 2]]
    start, w = walking_frame(path, unit)
    k = np.arange(-4, 30)
    ks = np.repeat((riser_at + 0.6 * k) * unit, 2)
    ky = np.stack([k, k + 1], axis=1).ravel() * 0.15 * unit
    return ProfileGround(start, w, ks, ky)


def test_the_clip_stands_then_walks():
    clip = stand_then_walk(0.0)
    n = int(round(STAND / clip.frame_time))
    legs = find_legs(clip.skeleton)
    pelvis = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs)]
    assert np.ptp(pelvis[:n, 2]) < 0.05 * legs.leg_length  # stands
    assert pelvis[-1, 2] - pelvis[n, 2] > 2 * legs.leg_length  # walks


def test_a_still_foot_stands_and_a_walking_one_does_not():
    """:func:`standing_feet` on the sole points: every frame of the stand, none of the
    walk's (its planted point stays still for 0.7 s, less than the second a stand needs),
    none of a foot held high."""
    clip = stand_then_walk(0.08)
    legs = find_legs(clip.skeleton)
    n = int(round(STAND / clip.frame_time))
    feet = [[g.ankle, g.toe] for g in legs.legs]
    pos = clip.positions_world()[:, feet]  # (F, 2, 2, 3): ankle and toe as sole points
    heights = pos[..., 1] - np.percentile(pos[..., 1], 5.0, axis=0)
    standing = standing_feet(pos, heights, legs.leg_length, clip.frame_time)
    assert standing[: n - int(0.4 / clip.frame_time)].all()  # (then the stand eases down)
    assert not standing[n:].any()
    lifted = heights + 0.2 * legs.leg_length  # a foot held high is no stand
    assert not standing_feet(pos, lifted, legs.leg_length, clip.frame_time).any()


def _measured(clip: Motion, ground):
    """``(result, its metrics, the baseline's metrics)`` of mode full, against the source's
    own floors."""
    r = place_feet(clip, ground, FootOptions())
    world = RaisedGround(ground, r.datum) if r.datum else ground
    floors = RaisedGround(world, -r.sole.floor)
    return (
        r,
        foot_metrics(r.motion, clip, floors, r.legs),
        foot_metrics(r.baseline, clip, floors, r.legs),
    )


def _ground(clip: Motion, riser_at):
    if riser_at == "built-in":
        return place_clip(clip, "stairs", ["full"]).ground
    return stairs_under_the_stand(clip, riser_at)


RISERS = [-0.45, -0.15, "built-in"]


@pytest.mark.parametrize("lift", [0.0, 0.055, 0.08])
@pytest.mark.parametrize("riser_at", RISERS)
def test_standing_feet_stay_planted_on_stairs(lift, riser_at):
    """On the stairs, under the stand or after it (the built-in flight): every standing
    frame is a contact (the contact rule alone found 7 to 10 % of them when the stand is
    raised), the standing feet are locked (jitter and sway gone: under 1 % of a leg per
    second) and stand as high over the ground as they stood over the floor (within 0.5 % of
    a leg; issue 34: flat ground at the floor leaves a stand as recorded); no penetration."""
    clip = stand_then_walk(lift)
    r, m, base = _measured(clip, _ground(clip, riser_at))
    ground = _ground(clip, riser_at)
    n = int(round(STAND / clip.frame_time))
    inner = slice(int(0.3 / clip.frame_time), n - int(0.4 / clip.frame_time))
    assert r.contacts[:n].mean(axis=0).min() >= 0.95, r.contacts[:n].mean(axis=0)
    unit = r.legs.leg_length
    world = RaisedGround(ground, r.datum) if r.datum else ground
    out, src = r.motion.positions_world(), clip.positions_world()
    for leg in r.legs.legs:
        for j in (leg.ankle, leg.toe):
            p = out[inner, j]
            speed = np.linalg.norm(np.diff(p[:, [0, 2]], axis=0), axis=-1) / clip.frame_time
            assert speed.mean() < 0.01 * unit, (leg.side, j, speed.mean() / unit)
            h, _, _ = world.height_at(p[:, [0, 2]])
            over = (p[:, 1] - h) - (src[inner, j, 1] - r.sole.floor)
            assert np.abs(over).max() <= 0.005 * unit, (leg.side, j, np.abs(over).max() / unit)
    assert m["pen_p95"] <= 0.5 and m["pen_max"] <= 2.0, m


@pytest.mark.parametrize("lift", [0.0, 0.055, 0.08])
@pytest.mark.parametrize("riser_at", RISERS)
def test_a_stand_on_stairs_floats_no_more_than_the_recording(lift, riser_at):
    """Full mode's float p95 (over the source's contacts, against its own floors) is the
    recording's own on its floor, within :data:`~helpers.FLOAT_SLACK` (issue 34: float
    relative to the recording). The stands float as recorded (5.5 % raised: 5.5); a stand
    raised 8 % is no contact of the metrics, so the walk up the stairs decides: 4.00-4.02
    against its own 3.99. Before the smoothing faded out at landings onto a step it was
    4.22-4.24, the foot hovering up to 2.9 % of a leg over a tread it had landed on."""
    clip = stand_then_walk(lift)
    _, m, _ = _measured(clip, _ground(clip, riser_at))
    assert m["float_p95"] <= m["float_p95_source"] + FLOAT_SLACK, m


@pytest.mark.parametrize("lift", [0.0, 0.055, 0.08])
@pytest.mark.parametrize("riser_at", RISERS)
def test_a_stand_on_stairs_floats_no_more_than_doing_nothing_or_says_so(lift, riser_at):
    """Issue 36: full mode's float p95 is no worse than the do-nothing baseline's
    (:func:`~ikrig.metrics.worse_than`), or the report and its table mark it. It is worse
    only where the baseline sinks into the steps (penetration p95 17-27 % of a leg, against
    full mode's 0), and so stands on lower ground than the stairs: two stands raised 8 %,
    4.00-4.02 against the baseline's 3.22-3.56."""
    clip = stand_then_walk(lift)
    ground = _ground(clip, riser_at)
    r = place_feet(clip, ground, FootOptions())
    world = RaisedGround(ground, r.datum) if r.datum else ground
    report, table = foot_report({"full": r}, clip, world)
    full, base = report["rows"]["full"], report["rows"]["baseline"]
    assert full["pen_p95"] <= 0.5, full["pen_p95"]
    if "float_p95" in full["worse_than_baseline"]:
        assert base["pen_p95"] >= 10.0, (full["float_p95"], base["float_p95"], base["pen_p95"])
        assert "!" in table.splitlines()[-1], table


@pytest.mark.parametrize("lift", [0.0, 0.055, 0.08])
@pytest.mark.parametrize("riser_at", RISERS)
def test_a_stand_on_stairs_meets_the_float_goal(lift, riser_at):
    """Issue 34's float goal: float mean over the source's contacts, against its own
    floors, at most the larger of 1 % of a leg and the stand-and-walk's own float on its
    floor (the raised stands too, whose float p95 the baseline beats above by sinking into
    the steps; 0.03 to 0.09 % over their own, 0.07 to 0.12 before ``plan.lift_ahead``)."""
    clip = stand_then_walk(lift)
    _, m, _ = _measured(clip, _ground(clip, riser_at))
    assert m["pops"] == 0, m
    assert m["float_mean"] <= float_goal(m["float_mean_source"]), m
