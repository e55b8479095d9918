"""The whole-body jobs of :mod:`ikrig.app.body` on the built-in walk (no shared data)."""

from __future__ import annotations

import numpy as np
import pytest

from ikrig.app.body import Pin, fit_motion, foot_keep_goals, pin_motion
from ikrig.data.walk import walk_clip
from ikrig.errors import InputError


@pytest.fixture(scope="module")
def clip():
    return walk_clip(seconds=1.0, fps=40.0)


def test_a_pinned_foot_is_not_held_back_by_the_feet_kept(clip):
    j = clip.skeleton.index("LeftFoot")
    at = clip.positions_world()[20, j] + [0.0, 0.1, 0.05]
    out = pin_motion(clip, [Pin("LeftFoot", at, 15, 26)])
    got = out.motion.positions_world()
    assert np.linalg.norm(got[15:26, j] - at, axis=-1).max() < 1e-3
    right = clip.skeleton.index("RightFoot")  # the other foot is still kept
    assert np.abs(got[:, right] - clip.positions_world()[:, right]).max() < 1e-3
    assert [g.joint for g in foot_keep_goals(clip)] == [
        "LeftFoot", "LeftToeBase", "RightFoot", "RightToeBase"
    ]  # fmt: skip


def test_pins_outside_their_frames_leave_the_clip_alone(clip):
    j = clip.skeleton.index("RightHand")
    at = clip.positions_world()[10, j] + [0.05, 0.05, 0.0]
    out = pin_motion(clip, [Pin("RightHand", at, 8, 12)], blend_seconds=0.05)
    solved = set(out.frames.tolist())
    assert solved >= set(range(8, 12)) and len(solved) < clip.num_frames
    rest = np.array(sorted(set(range(clip.num_frames)) - solved))
    assert np.array_equal(out.motion.rotations_local[rest], clip.rotations_local[rest])
    assert np.array_equal(out.motion.positions_local[rest], clip.positions_local[rest])


@pytest.mark.parametrize(
    "pin, needle",
    [
        (Pin("Nope", [0, 1, 0], 0, 4), "no joint of that name"),
        (Pin("LeftHand", [0, np.nan, 0], 0, 4), "at_world"),
        (Pin("LeftHand", [0, 1], 0, 4), "at_world"),
        (Pin("LeftHand", [0, 1, 0], 5, 5), "frames 5:5"),
        (Pin("LeftHand", [0, 1, 0], 0, 999), "frames 0:999"),
    ],
)
def test_bad_pins_are_named(clip, pin, needle):
    with pytest.raises(InputError, match=needle):
        pin_motion(clip, [pin])


def test_fit_from_one_pose_reaches_every_joint(clip):
    rot_w, pos_w = clip.fk()
    none = np.full(rot_w.shape, np.nan)
    out = fit_motion(clip[0], pos_w, none, clip.frame_time)
    assert out.motion.batch_shape == (clip.num_frames,)
    assert out.motion.frame_time == clip.frame_time
    assert np.abs(out.motion.positions_world() - pos_w).max() < 1e-6
