"""The whole-body solver's prior and starts (issue 38, joint-error parity with mink): a
root turned round by its orientation goal leaves the limbs untwisted (the analytic start
takes orientation goals), and the temporal pull (``BodyOptions.temporal_weight``): goals
still met, less motion in what the goals leave free, no goal still the input bit for bit,
nothing without the warm start."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.body import BodyOptions, OrientationGoal, PositionGoal, solve_body

NAMES = ("pelvis", "spine", "head", "l_hip", "l_knee", "l_ankle", "l_toe",
         "r_hip", "r_knee", "r_ankle", "r_toe")  # fmt: skip
PARENTS = (-1, 0, 1, 0, 3, 4, 5, 0, 7, 8, 9)
OFFSETS = ((0, 1, 0), (0, 0.3, 0), (0, 0.3, 0), (0.1, 0, 0), (0, -0.45, 0.02),
           (0, -0.45, -0.02), (0, -0.05, 0.12), (-0.1, 0, 0), (0, -0.45, 0.02),
           (0, -0.45, -0.02), (0, -0.05, 0.12))  # fmt: skip
TRACKED = ("pelvis", "head", "l_ankle", "r_ankle")


def biped() -> Skeleton:
    return Skeleton(NAMES, PARENTS, np.array(OFFSETS, dtype=np.float64))


def angles(rotations_local: np.ndarray) -> np.ndarray:
    return 2 * np.arccos(np.clip(np.abs(rotations_local[..., 3]), 0.0, 1.0))


def tracker_goals(sk: Skeleton, rw: np.ndarray, pw: np.ndarray) -> list:
    idx = [sk.index(n) for n in TRACKED]
    return [PositionGoal(j, pw[..., j, :]) for j in idx] + [
        OrientationGoal(j, rw[..., j, :]) for j in idx
    ]


@pytest.mark.parametrize("degrees", [120.0, 174.0, 180.0, -174.0])
@pytest.mark.parametrize("stride", [0.0, 0.5])
def test_a_root_turned_round_by_its_goal_leaves_the_limbs_untwisted(degrees, stride):
    """Goals from a pose turned about the up axis and moved: the pose they came from meets
    them, so the solve's prior (the summed squared turns of the other joints from the
    input, the rest pose) can be no larger than that pose's. Started from the rest pose
    without the root's orientation, the solve used to end with a joint turned round by
    ~3 rad (a local minimum that the warm start then carried through a whole clip)."""
    sk = biped()
    rl = np.tile([0.0, 0, 0, 1], (sk.num_joints, 1))
    rl[0] = Rotation.from_euler("y", degrees, degrees=True).as_quat()
    rl[1] = Rotation.from_euler("xyz", [0.1, 0.2, 0.05]).as_quat()
    rl[3] = Rotation.from_euler("x", -stride).as_quat()
    rl[4] = Rotation.from_euler("x", 2 * stride).as_quat()
    rl[7] = Rotation.from_euler("x", stride).as_quat()
    rl[8] = Rotation.from_euler("x", 0.3).as_quat()
    pl = sk.offsets.copy()
    pl[0] += (0.4, 0.0, -0.3)
    rw, pw = Motion(sk, rl, pl).fk()
    res = solve_body(Motion.rest(sk), tracker_goals(sk, rw, pw))
    assert res.reached.all()
    mine = (angles(res.motion.rotations_local[1:]) ** 2).sum()
    assert mine <= (angles(rl[1:]) ** 2).sum() + 1e-6
    assert angles(res.motion.rotations_local[1:]).max() < 1.0


def redundant_clip(F: int = 60):
    """A planar-ish 6-bone chain whose tip follows a circle (a redundant reach: what the
    goal leaves free is decided by the prior), its input the rest pose."""
    off = [[0, 0, 0]] + [[0, 0.5, 0.05]] * 5
    sk = Skeleton(tuple(f"b{i}" for i in range(6)), list(range(-1, 5)), off)
    t = np.linspace(0, 2 * np.pi, F)
    tip = np.stack([0.8 * np.sin(t), 1.6 + 0.4 * np.cos(t), 0.3 * np.sin(2 * t)], axis=-1)
    clip = Motion.rest(sk, batch_shape=(F,), frame_time=1 / 30)
    return sk, clip, tip


def path_length(rotations_local: np.ndarray) -> float:
    """The summed turn of every joint from frame to frame, radians."""
    a, b = rotations_local[1:], rotations_local[:-1]
    dot = np.abs(np.einsum("...i,...i->...", a, b))
    return float((2 * np.arccos(np.clip(dot, 0.0, 1.0))).sum())


def test_the_temporal_pull_meets_the_goals_and_moves_the_free_part_less():
    sk, clip, tip = redundant_clip()
    goals = [PositionGoal("b5", tip)]
    opts = dict(root="pinned")
    plain = solve_body(clip, goals, BodyOptions(**opts))
    lazy = solve_body(clip, goals, BodyOptions(temporal_weight=5e-3, **opts))
    assert plain.reached.all() and lazy.reached.all()
    assert path_length(lazy.motion.rotations_local) < 0.9 * path_length(
        plain.motion.rotations_local
    )
    # the first frame has no previous solution: both pulls are toward the input, the same
    # pose up to the goals' tolerance-level bias
    np.testing.assert_allclose(lazy.motion.fk()[1][0], plain.motion.fk()[1][0], atol=2e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_temporal_pull_keeps_frames_without_goals_bit_for_bit(dtype):
    sk, clip, tip = redundant_clip(30)
    clip = Motion(sk, clip.rotations_local.astype(dtype), clip.positions_local.astype(dtype),
                  clip.frame_time)  # fmt: skip
    weight = np.ones(30)
    weight[10:15] = 0.0
    res = solve_body(clip, [PositionGoal("b5", tip, weight=weight)],
                     BodyOptions(temporal_weight=1e-3))  # fmt: skip
    assert res.motion.dtype == dtype
    assert (res.iterations[10:15] == 0).all()
    assert (res.motion.rotations_local[10:15].tobytes()
            == clip.rotations_local[10:15].tobytes())  # fmt: skip
    assert (res.motion.positions_local[10:15].tobytes()
            == clip.positions_local[10:15].tobytes())  # fmt: skip
    assert res.reached.all()


def test_without_the_warm_start_the_temporal_pull_does_nothing():
    sk, clip, tip = redundant_clip(20)
    goals = [PositionGoal("b5", tip)]
    a = solve_body(clip, goals, BodyOptions(warm_start=False))
    b = solve_body(clip, goals, BodyOptions(warm_start=False, temporal_weight=1e-2))
    assert a.motion.rotations_local.tobytes() == b.motion.rotations_local.tobytes()
