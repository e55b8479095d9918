"""Tracking from one pose (issue 38): ``ikrig fit`` with a few trackers adds knee hints
(:mod:`ikrig.app.tracking`), weak goals (``PositionGoal.strength``) that bend each knee
toward where the pelvis and the foot face. On the built-in walk (no shared data; the
shared clips are in ``test_body_clips.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from ikrig.app.body import fit_goals, fit_motion
from ikrig.app.tracking import STRENGTH, knee_hints
from ikrig.character import find_legs
from ikrig.data.walk import walk_clip
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.body import solve_body

TRACKED = ("Hips", "Head", "LeftHand", "RightHand", "LeftFoot", "RightFoot")
KNEES = ("LeftLeg", "RightLeg")


@pytest.fixture(scope="module")
def clip():
    return walk_clip(seconds=2.0, fps=30.0)


def targets(clip: Motion, names=TRACKED) -> tuple[np.ndarray, np.ndarray]:
    rw, pw = clip.fk()
    pos, rot = np.full(pw.shape, np.nan), np.full(rw.shape, np.nan)
    for name in names:
        j = clip.skeleton.index(name)
        pos[:, j], rot[:, j] = pw[:, j], rw[:, j]
    return pos, rot


def knee_error(out: Motion, clip: Motion) -> float:
    idx = [clip.skeleton.index(k) for k in KNEES]
    return float(np.linalg.norm(out.positions_world()[:, idx] - clip.positions_world()[:, idx],
                                axis=-1).mean())  # fmt: skip


def test_fit_from_one_pose_hints_the_knees_and_keeps_the_trackers(clip):
    pos, rot = targets(clip)
    rest = Motion.rest(clip.skeleton)
    _, goals, hints = fit_goals(rest, pos, rot, clip.frame_time)
    assert hints == 2
    assert [clip.skeleton.names[g.joint] for g in goals[-2:]] == list(KNEES)
    assert all(float(np.max(g.strength)) <= STRENGTH for g in goals[-2:])
    out = fit_motion(rest, pos, rot, clip.frame_time)
    assert out.hints == 2
    got = out.motion.positions_world()
    tracked = [clip.skeleton.index(n) for n in TRACKED]
    leg = find_legs(clip.skeleton).leg_length
    err = np.linalg.norm(got[:, tracked] - clip.positions_world()[:, tracked], axis=-1)
    assert np.percentile(err, 95) <= 5e-3 * leg


def test_the_hints_bring_the_knees_nearer_the_recorded_ones(clip):
    """Measured: the knees' mean distance from the walk's falls from 0.105 to 0.009 (legs
    0.85 long)."""
    pos, rot = targets(clip)
    rest = Motion.rest(clip.skeleton)
    with_hints = fit_motion(rest, pos, rot, clip.frame_time).motion
    clip_f, goals, hints = fit_goals(rest, pos, rot, clip.frame_time)
    without = solve_body(clip_f, goals[: len(goals) - hints]).motion
    assert knee_error(with_hints, clip) <= 0.25 * knee_error(without, clip)


def test_no_hint_where_the_knee_has_a_target_or_the_legs_are_not_tracked(clip):
    rest = Motion.rest(clip.skeleton)
    pos, rot = targets(clip, TRACKED + KNEES)
    assert knee_hints(rest, pos, rot, clip.frame_time) == []
    pos, rot = targets(clip, ("Hips", "Head"))
    assert knee_hints(rest, pos, rot, clip.frame_time) == []


def test_a_clip_as_the_preferred_pose_gets_no_hints(clip):
    pos, rot = targets(clip)
    _, _, hints = fit_goals(clip, pos, rot, clip.frame_time)
    assert hints == 0


def test_a_straight_legged_stand_gets_no_hint_strength():
    """Below 15 degrees of bend nobody knows which way a knee bends (idles lock their
    knees a little past straight): no strength at all on a stand."""
    clip = walk_clip(seconds=1.0, fps=30.0)
    rest = Motion.rest(clip.skeleton)
    still = Motion(clip.skeleton, np.broadcast_to(rest.rotations_local, clip.rotations_local.shape),
                   np.broadcast_to(rest.positions_local, clip.positions_local.shape),
                   clip.frame_time)  # fmt: skip
    pos, rot = targets(still)
    assert knee_hints(rest, pos, rot, clip.frame_time) == []


def test_legs_named_from_the_viewers_side_still_bend_forward(clip):
    """A rig may name its legs from the viewer's side (the Godot platformer player's
    "l-thigh" is on its right): forward's sign comes from where the toes point, so the
    hints still bend the knees the way they bend."""
    swap = {"Left": "Right", "Right": "Left"}
    names = tuple(
        next((n.replace(a, b, 1) for a, b in swap.items() if n.startswith(a)), n)
        for n in clip.skeleton.names
    )
    sk = Skeleton(names, clip.skeleton.parents, clip.skeleton.offsets)
    mirrored = Motion(sk, clip.rotations_local, clip.positions_local, clip.frame_time)
    pos, rot = targets(mirrored)  # the same names, each on the other leg
    rest = Motion.rest(sk)
    with_hints = fit_motion(rest, pos, rot, clip.frame_time).motion
    clip_f, goals, hints = fit_goals(rest, pos, rot, clip.frame_time)
    assert hints == 2
    without = solve_body(clip_f, goals[: len(goals) - hints]).motion
    assert knee_error(with_hints, mirrored) <= 0.25 * knee_error(without, mirrored)
