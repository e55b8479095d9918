"""The whole-body solver (issue 38): goals on random trees reached, unreachable goals
approached, no goals = the input bit for bit, constraints, locks and root modes kept, dtypes
and batch shapes, warm start and smoothness, every goal kind, and the one-line errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_quat_close, random_quats
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from ikrig.constraints import Cone, Hinge, TwistLimit
from ikrig.errors import InputError
from ikrig.math.quat import quat_mul, quat_rotate
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.body import (
    AimGoal,
    BodyOptions,
    KeepGoal,
    LookAtGoal,
    OrientationGoal,
    PositionGoal,
    goals_from_targets,
    solve_body,
)

seeds = st.integers(0, 2**32 - 1)


def random_tree(rng, J):
    """A random skeleton of ``J`` joints: random parents, bones 0.3 to 1.5 long."""
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, J)]
    off = rng.normal(size=(J, 3))
    off *= rng.uniform(0.3, 1.5, (J, 1)) / np.linalg.norm(off, axis=1, keepdims=True)
    off[0] = rng.normal(size=3)
    return Skeleton(tuple(f"j{i}" for i in range(J)), parents, off)


def turned(rng, rotations_local, angle):
    """``rotations_local`` each turned by a random rotation of up to ``angle`` radians."""
    v = rng.normal(size=rotations_local.shape[:-1] + (3,))
    v *= angle * rng.uniform(0, 1, v.shape[:-1] + (1,)) / np.linalg.norm(v, axis=-1, keepdims=True)
    return quat_mul(Rotation.from_rotvec(v.reshape(-1, 3)).as_quat().reshape(v.shape[:-1] + (4,)),
                    rotations_local)  # fmt: skip


def problem(seed, J=None, angle=1.0, goals=6):
    """A random tree in a random pose and goals made by FK of another pose of it (every
    joint turned by up to ``angle``, the root moved)."""
    rng = np.random.default_rng(seed)
    J = J or int(rng.integers(2, 81))
    sk = random_tree(rng, J)
    m0 = Motion(sk, random_quats(rng, (J,)), sk.offsets.copy())
    pl = sk.offsets.copy()
    pl[0] += rng.normal(size=3) * 0.3
    m1 = Motion(sk, turned(rng, m0.rotations_local, angle), pl)
    rw, pw = m1.fk()
    sel = [int(j) for j in rng.choice(J, size=min(J, goals), replace=False)]
    gs = [PositionGoal(j, pw[j]) for j in sel] + [OrientationGoal(j, rw[j]) for j in sel[:2]]
    return m0, m1, gs


@settings(derandomize=True)
@given(seeds)
def test_goals_from_another_pose_of_the_skeleton_are_reached(seed):
    """Every joint of the other pose turned by up to 0.5 rad (and the root moved), goals met
    within 0.1 % of the reach. A local solver can stall short of goals whose pose is far
    from its start or near a singular configuration: in 1000 random problems of this kind
    one ended short, by 0.11 % of the reach; among this test's fixed examples one ends
    1.8e-4 of the reach short (a local minimum, also without the prior). Hence fixed
    examples, not new random ones every run, which would fail one run in twenty."""
    m0, _, goals = problem(seed, angle=0.5)
    res = solve_body(m0, goals, BodyOptions(tolerance=1e-3))
    assert res.reached.all(), (res.position_error / res.reach, res.rotation_error)
    assert (res.position_error <= 1e-3 * res.reach).all()
    assert (res.rotation_error <= 1e-3).all()
    # what the result says is what its pose does
    rw, pw = res.motion.fk()
    for g, e in zip(goals, res.position_error):
        if isinstance(g, PositionGoal):
            assert np.linalg.norm(pw[g.joint] - g.target_world) == pytest.approx(e, abs=1e-9)


@given(seeds)
def test_every_joint_positioned_gives_the_pose_back(seed):
    m0, m1, _ = problem(seed, angle=3.0)
    rw, pw = m1.fk()
    res = solve_body(m0, goals_from_targets(m0.skeleton, pw, None))
    assert res.reached.all()
    np.testing.assert_allclose(res.motion.fk()[1], pw, atol=1e-4 * res.reach)


@given(seeds)
def test_unreachable_goals_end_at_the_nearest_reach(seed):
    rng = np.random.default_rng(seed)
    J = int(rng.integers(2, 30))
    sk = random_tree(rng, J)
    m0 = Motion(sk, random_quats(rng, (J,)), sk.offsets.copy())
    j = int(rng.integers(1, J)) if J > 1 else 0
    path = (j,) + sk.ancestors(j)
    root = path[-1]
    reach = sum(np.linalg.norm(sk.offsets[k]) for k in path[:-1])
    direction = rng.normal(size=3)
    direction /= np.linalg.norm(direction)
    target = sk.offsets[root] + direction * (reach + 1.0 + 5 * rng.uniform())
    opts = BodyOptions(root="pinned", max_iterations=300)
    res = solve_body(m0, [PositionGoal(j, target)], opts)
    pw = res.motion.fk()[1]
    assert np.isfinite(res.motion.rotations_local).all() and np.isfinite(pw).all()
    assert not res.reached[0]
    # stretched toward the target: nearly as near as the chain reaches (a chain nearly
    # straight converges slowly, a Gauss-Newton step ignores the large residual's curvature:
    # in 1000 random problems 5 were more than 1 % of the reach short after 100 iterations,
    # none after 300)
    nearest = np.linalg.norm(target - sk.offsets[root]) - reach
    assert nearest - 1e-9 <= res.position_error[0] <= nearest + 0.01 * reach


@given(seeds, st.sampled_from([(), (3,), (2, 4)]), st.sampled_from([np.float32, np.float64]))
def test_no_goal_leaves_the_input_bit_for_bit(seed, batch, dtype):
    rng = np.random.default_rng(seed)
    J = int(rng.integers(2, 40))
    sk = random_tree(rng, J)
    m = Motion(sk, random_quats(rng, batch + (J,), dtype),
               (sk.offsets + rng.normal(size=batch + (J, 3))).astype(dtype))  # fmt: skip
    absent = np.full(batch + (3,), np.nan)
    for goals in ([], [PositionGoal(0, absent)], [KeepGoal(J - 1, weight=0.0)]):
        res = solve_body(m, goals)
        assert res.motion.rotations_local.dtype == dtype
        assert res.motion.rotations_local.tobytes() == m.rotations_local.tobytes()
        assert res.motion.positions_local.tobytes() == m.positions_local.tobytes()
        assert (res.iterations == 0).all() and res.reached.all()
    # goals the input meets already: the input too
    keep = [KeepGoal(j) for j in range(J)] + [OrientationGoal(0, m.fk()[0][..., 0, :])]
    res = solve_body(m, keep)
    assert res.motion.rotations_local.tobytes() == m.rotations_local.tobytes()
    assert (res.iterations == 0).all() and res.reached.all()


@given(seeds)
def test_constraints_hold_after_the_solve(seed):
    rng = np.random.default_rng(seed)
    J = int(rng.integers(3, 30))
    sk = random_tree(rng, J)
    m0 = Motion.rest(sk)
    kinds = [Cone(0.4), Hinge((0, 0, 1), -0.5, 1.0), TwistLimit(-0.2, 0.3)]
    cons = {f"j{j}": kinds[j % 3] for j in range(1, J)}
    _, m1, goals = problem(seed, J=J, angle=2.0)
    m0 = Motion(sk, m0.rotations_local, m1.positions_local)
    res = solve_body(m0, goals[:3], BodyOptions(constraints=cons))
    rl = res.motion.rotations_local
    for j in range(1, J):
        kids = [c for c in range(J) if sk.parents[c] == j]
        bone = max((sk.offsets[c] for c in kids), key=np.linalg.norm) if kids else np.zeros(3)
        v = cons[f"j{j}"].violation(rl[j], bone, sk.offsets[j])
        assert v <= 1e-6, (j, cons[f"j{j}"], v)


def test_locked_joints_and_root_modes():
    rng = np.random.default_rng(3)
    m0, _, goals = problem(3, J=20)
    rl0, pl0 = m0.rotations_local, m0.positions_local
    res = solve_body(m0, goals, BodyOptions(locked=("j1", 2)))
    assert res.motion.rotations_local[[1, 2]].tobytes() == rl0[[1, 2]].tobytes()
    res = solve_body(m0, goals, BodyOptions(root="pinned"))
    assert res.motion.positions_local[0].tobytes() == pl0[0].tobytes()
    assert not np.allclose(res.motion.rotations_local[0], rl0[0])
    res = solve_body(m0, goals, BodyOptions(root="translate"))
    assert res.motion.rotations_local[0].tobytes() == rl0[0].tobytes()
    assert not np.allclose(res.motion.positions_local[0], pl0[0])
    # every other joint's translation is its input's
    assert res.motion.positions_local[1:].tobytes() == pl0[1:].tobytes()
    del rng


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(), (1,), (5,), (2, 3)], ids=str)
def test_any_batch_shape_and_dtype(batch, dtype):
    m0, m1, goals = problem(1, J=12)
    n = int(np.prod(batch))
    rot = np.broadcast_to(m0.rotations_local, batch + (12, 4)).astype(dtype)
    m = Motion(m0.skeleton, rot, np.broadcast_to(m0.positions_local, batch + (12, 3)).astype(dtype))
    targets = [type(g)(g.joint, np.broadcast_to(g.target_world, batch + g.target_world.shape))
               for g in goals]  # fmt: skip
    res = solve_body(m, targets)
    assert res.motion.batch_shape == batch and res.motion.dtype == dtype
    assert res.reached.shape == res.position_error.shape == batch + (len(goals),)
    assert res.iterations.shape == batch and res.position_error.dtype == dtype
    assert np.isfinite(res.motion.rotations_local).all()
    assert res.reached.all(), res.position_error.max() / res.reach
    if n > 1:  # one element alone gives that element (no warm start across characters)
        idx = (0,) * len(batch)
        one = solve_body(m[idx], [type(g)(g.joint, g.target_world[idx]) for g in targets])
        np.testing.assert_allclose(res.motion.fk()[1][idx], one.motion.fk()[1], atol=1e-3)


def test_warm_start_and_a_ramped_goal_give_a_smooth_clip():
    """A goal blended in by a weight ramp over 30 frames: the pose changes a little each
    frame, never pops; with the warm start the solve takes fewer iterations."""
    m0, _, goals = problem(7, J=25, angle=1.0)
    F = 60
    clip = Motion(m0.skeleton, np.broadcast_to(m0.rotations_local, (F, 25, 4)).copy(),
                  np.broadcast_to(m0.positions_local, (F, 25, 3)).copy(), 1 / 30)  # fmt: skip
    ramp = np.clip((np.arange(F) - 10) / 30.0, 0.0, 1.0)
    g = goals[0]
    res = solve_body(clip, [PositionGoal(g.joint, g.target_world, weight=ramp)])
    pw = res.motion.fk()[1]
    step = np.linalg.norm(np.diff(pw, axis=0), axis=-1).max(axis=-1)
    total = np.linalg.norm(pw[-1] - pw[0], axis=-1).max()
    assert res.reached[-20:].all()
    assert step.max() <= 4 * total / 30, (step.max(), total)  # spread over the ramp
    assert (res.iterations[:10] == 0).all()  # weight 0: absent, the input
    assert res.motion.rotations_local[:10].tobytes() == clip.rotations_local[:10].tobytes()


def test_the_warm_start_follows_moving_goals_in_fewer_iterations():
    m0, m1, goals = problem(8, J=25, angle=1.0)
    F = 40
    rng = np.random.default_rng(8)
    wobble = turned(rng, np.broadcast_to(m1.rotations_local, (F, 25, 4)), 0.02)
    pw = Motion(m1.skeleton, wobble, np.broadcast_to(m1.positions_local, (F, 25, 3))).fk()[1]
    clip = Motion(m0.skeleton, np.broadcast_to(m0.rotations_local, (F, 25, 4)),
                  np.broadcast_to(m0.positions_local, (F, 25, 3)))  # fmt: skip
    goals = [PositionGoal(g.joint, pw[:, g.joint]) for g in goals[:4]]
    warm = solve_body(clip, goals)
    cold = solve_body(clip, goals, BodyOptions(warm_start=False))
    assert warm.reached.all() and cold.reached.all()
    assert warm.iterations[1:].sum() < 0.7 * cold.iterations[1:].sum()


def _chain(n=6):
    off = [[0, 0, 0]] + [[0, 1.0, 0]] * (n - 1)
    return Skeleton(tuple(f"b{i}" for i in range(n)), list(range(-1, n - 1)), off)


def test_aim_goal_points_the_axis_and_the_up_toward_the_pole():
    sk = _chain()
    target, pole = np.array([3.0, 4.0, 1.0]), np.array([0.0, 10.0, -5.0])
    goal = AimGoal("b5", target, forward_local=[1, 0, 0], up_local=[0, 1, 0], pole_world=pole)
    res = solve_body(Motion.rest(sk), [goal], BodyOptions(root="pinned"))
    assert res.reached[0], res.rotation_error
    rw, pw = res.motion.fk()
    fwd = quat_rotate(rw[5], [1.0, 0, 0])
    to = (target - pw[5]) / np.linalg.norm(target - pw[5])
    assert fwd @ to > np.cos(1e-3)
    up = quat_rotate(rw[5], [0, 1.0, 0])
    side = np.cross(fwd, pole - pw[5])
    assert abs(up @ side) / np.linalg.norm(side) < 2e-3 and up @ (pole - pw[5]) > 0


@pytest.mark.parametrize("weights", [(1, 1, 1, 1), (1, 2, 3, 4)])
def test_look_at_spreads_the_turn_over_its_chain(weights):
    sk = _chain()
    goal = LookAtGoal("b5", [5.0, 5.0, 0.0], [0, 1, 0], chain=("b2", "b3", "b4"),
                      chain_weights=weights)  # fmt: skip
    res = solve_body(Motion.rest(sk), [goal], BodyOptions(root="pinned"))
    assert res.reached[0]
    angles = 2 * np.arccos(np.clip(np.abs(res.motion.rotations_local[:, 3]), 0, 1))
    assert np.all(angles[:2] < 1e-6), angles  # not in the chain: unchanged
    share = angles[2:] / angles[2:].sum()
    np.testing.assert_allclose(share, np.array(weights) / sum(weights), atol=0.1)


@pytest.mark.parametrize("seed", range(16))
def test_look_at_holds_while_other_goals_turn_the_joints_above_its_chain(seed):
    """A hand's goal turns the hips and spine, which carry the head; the look's chain (the
    head alone) must bring the head back on its target. With the look's Jacobian on its
    chain only, the linear model missed the hips' effect on the look, and 17 of 40 such
    problems stopped with the hand and the look both missed (by up to 0.9 of the hand's
    reach; a Bandai walk in the body playground by a leg)."""
    names = ("root", "hips", "spine", "chest", "neck", "head", "shoulder", "elbow", "hand",
             "thigh", "knee", "foot")  # fmt: skip
    off = [
        [0, 0, 0],
        [0, 1, 0],
        [0, 0.2, 0],
        [0, 0.2, 0],
        [0, 0.15, 0],
        [0, 0.1, 0],
        [0.15, 0.1, 0],
        [0.3, 0, 0],
        [0.25, 0, 0],
        [0.1, -0.05, 0],
        [0, -0.45, 0],
        [0, -0.45, 0],
    ]
    sk = Skeleton(names, [-1, 0, 1, 2, 3, 4, 3, 6, 7, 1, 9, 10], off)  # fmt: skip
    rng = np.random.default_rng(seed)
    pose = Motion(sk, Rotation.from_rotvec(rng.normal(size=(12, 3)) * 0.3).as_quat(),
                  sk.offsets.copy())  # fmt: skip
    turns = rng.normal(size=(12, 3)) * 0.6
    turns[1] = [0, rng.uniform(-3, 3), 0]  # the hips turned about the vertical
    other = Motion(sk, Rotation.from_rotvec(turns).as_quat(), sk.offsets.copy())
    rw, pw = other.fk()
    forward = [0, 1.0, 0] if seed % 2 else [0, 0, 1.0]
    look_at = pw[5] + quat_rotate(rw[5], forward)
    goals = [PositionGoal("hand", pw[8]), LookAtGoal("head", look_at, forward)]
    res = solve_body(pose, goals, BodyOptions(max_iterations=300))
    assert res.reached.all(), (res.position_error, res.rotation_error)
    turned = np.abs(res.motion.rotations_local - pose.rotations_local).max(-1) > 1e-12
    assert not turned[[9, 10, 11]].any()  # the legs carry no goal: they keep their pose


def test_keep_goal_holds_a_joint_while_another_moves():
    m0, m1, _ = problem(11, J=30)
    sk = m0.skeleton
    pw0 = m0.fk()[1]
    leaves = [j for j in range(30) if j not in sk.parents]
    a, b = leaves[0], leaves[-1]
    res = solve_body(m0, [KeepGoal(a), PositionGoal(b, pw0[b] + [0.2, 0.1, 0])])
    pw = res.motion.fk()[1]
    assert np.linalg.norm(pw[a] - pw0[a]) <= 1e-4 * res.reach
    assert res.reached.all()


def test_a_position_goal_on_an_end_site():
    sk = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [0, 1, 0]], [1], [[0, 0.5, 0]])
    goal = PositionGoal("b", [0.6, 1.3, 0.0], offset_local=sk.end_site_offsets[0])
    res = solve_body(Motion.rest(sk), [goal], BodyOptions(root="pinned"))
    rw, pw = res.motion.fk()
    tip = pw[1] + quat_rotate(rw[1], sk.end_site_offsets[0])
    np.testing.assert_allclose(tip, [0.6, 1.3, 0.0], atol=1e-4 * res.reach)


def test_orientation_goals_are_world_rotations_of_joint_frames():
    m0, m1, _ = problem(5, J=15)
    rw1 = m1.fk()[0]
    res = solve_body(m0, [OrientationGoal(j, rw1[j]) for j in range(15)])
    assert_quat_close(res.motion.fk()[0], rw1, 1e-3)


def test_absent_frames_and_per_frame_weights():
    m0, m1, goals = problem(2, J=10)
    F = 6
    clip = Motion(m0.skeleton, np.broadcast_to(m0.rotations_local, (F, 10, 4)),
                  np.broadcast_to(m0.positions_local, (F, 10, 3)))  # fmt: skip
    t = np.tile(goals[0].target_world, (F, 1))
    t[2] = np.nan
    res = solve_body(clip, [PositionGoal(goals[0].joint, t)])
    assert res.active[:, 0].tolist() == [True, True, False, True, True, True]
    assert res.iterations[2] == 0 and res.position_error[2, 0] == 0
    assert res.motion.rotations_local[2].tobytes() == clip.rotations_local[2].tobytes()
    assert res.reached.all()


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda: [PositionGoal("nope", [0, 0, 0])], "goals[0].joint: no joint named 'nope'"),
        (lambda: [PositionGoal(0, [0, 0])], "target_world"),
        (lambda: [PositionGoal(0, [0, np.nan, 0])], "target_world"),
        (lambda: [PositionGoal(0, [0, np.inf, 0])], "target_world"),
        (lambda: [OrientationGoal(0, [0, 0, 0, 2])], "target_world: not a unit quaternion"),
        (lambda: [OrientationGoal(0, [0, 0, 1])], "target_world"),
        (lambda: [PositionGoal(0, [0, 0, 0], weight=-1)], "weight"),
        (lambda: [PositionGoal(0, np.zeros((4, 3)))], "broadcast"),
        (lambda: [AimGoal(1, [0, 0, 1], [0, 0, 0])], "forward_local"),
        (lambda: [AimGoal(1, [0, 0, 1], [0, 0, 1], up_local=[0, 1, 0])], "pole_world"),
        (lambda: [LookAtGoal(1, [0, 0, 1], [0, 0, 1], chain=("c",))], "not an ancestor"),
        (lambda: PositionGoal(0, [0, 0, 0]), "goals: expected a sequence"),
        (lambda: [KeepGoal(5)], "goals[0].joint: joint index 5 out of range"),
    ],
)
def test_bad_input_raises_one_line_naming_the_argument(make, needle):
    sk = Skeleton(("a", "b", "c"), [-1, 0, 0], [[0, 0, 0], [0, 1, 0], [1, 0, 0]])
    motion = Motion.rest(sk, batch_shape=(3,))
    with pytest.raises(InputError) as info:
        solve_body(motion, make())
    msg = str(info.value)
    assert "\n" not in msg and needle in msg, msg


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"root": "floating"}, "root"),
        ({"locked": "a"}, "locked"),
        ({"stiffness": {"a": -1}}, "stiffness"),
        ({"constraints": {"a": 3}}, "constraints['a']"),
        ({"max_iterations": -1}, "max_iterations"),
        ({"prior_weight": np.nan}, "prior_weight"),
        ({"temporal_weight": -1e-3}, "temporal_weight"),
    ],
)
def test_bad_options_raise_one_line(kwargs, needle):
    with pytest.raises(InputError) as info:
        BodyOptions(**kwargs)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_option_joint_names_are_checked_against_the_skeleton():
    sk = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [0, 1, 0]])
    cases = [(BodyOptions(locked=("x",)), "locked: no joint named 'x'"),
             (BodyOptions(stiffness={"y": 2}), "stiffness: no joint named 'y'"),
             (BodyOptions(stiffness=[1, 2, 3]), "stiffness: expected 2 values")]  # fmt: skip
    for opts, needle in cases:
        with pytest.raises(InputError, match=needle):
            solve_body(Motion.rest(sk), [KeepGoal("b")], opts)


def test_goals_from_targets_checks_shapes_and_rows():
    sk = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [0, 1, 0]])
    with pytest.raises(InputError, match=r"positions_world: expected shape \(\.\.\., 2, 3\)"):
        goals_from_targets(sk, np.zeros((4, 3, 3)), None)
    rot = np.full((4, 2, 4), np.nan)
    rot[1, 1] = [0, 0, 0, 3]
    with pytest.raises(InputError, match="rotations_world: not a unit quaternion"):
        goals_from_targets(sk, None, rot)
    rot[1, 1] = [0, 0, 0, 1]
    goals = goals_from_targets(sk, np.zeros((4, 2, 3)), rot)
    assert [type(g).__name__ for g in goals] == ["PositionGoal"] * 2 + ["OrientationGoal"]


def test_stiffer_joints_turn_less():
    sk = _chain(4)
    goal = PositionGoal("b3", [1.5, 1.5, 0.0])
    soft = solve_body(Motion.rest(sk), [goal], BodyOptions(root="pinned"))
    stiff = solve_body(Motion.rest(sk), [goal],
                       BodyOptions(root="pinned", stiffness={"b0": 1e4}))  # fmt: skip
    assert soft.reached[0] and stiff.reached[0]

    def angle(res, j):
        return 2 * np.arccos(min(1.0, abs(res.motion.rotations_local[j, 3])))

    assert angle(stiff, 0) < 0.5 * angle(soft, 0)


def test_goals_are_immutable_and_pickle():
    import pickle

    goals = [PositionGoal("a", [1, 2, 3], weight=[0.5, 1.0], offset_local=[0, 1, 0]),
             OrientationGoal(1, [0, 0, 0, 1]), KeepGoal("b"),
             AimGoal("b", [0, 0, 1], [1, 0, 0], up_local=[0, 1, 0], pole_world=[0, 5, 0]),
             LookAtGoal("c", [0, 0, 1], [0, 0, 1], chain=("a",))]  # fmt: skip
    for g in goals:
        with pytest.raises(AttributeError):
            g.joint = "x"
        back = pickle.loads(pickle.dumps(g))
        assert type(back) is type(g) and back.joint == g.joint
        np.testing.assert_array_equal(back.weight, g.weight)
    assert pickle.loads(pickle.dumps(goals[0])).offset_local == (0.0, 1.0, 0.0)


def test_a_weak_goal_gives_way_and_a_zero_strength_does_nothing():
    """``strength`` scales a goal's residual against the others without blending its
    target: two goals on one point, 0.5 apart, meet at ``0.5 s^2 / (1 + s^2)`` from the
    full one (least squares of the scaled residuals)."""
    sk = Skeleton(("root", "a", "b"), [-1, 0, 1], [[0, 0, 0], [0, -1, 0], [0, -1, 0]])
    rest = Motion.rest(sk)
    full = PositionGoal("b", [1.0, -1.0, 0.0])
    pinned = BodyOptions(root="pinned")
    for strength in (1.0, 0.3, 0.05, 0.0):
        rival = PositionGoal("b", [1.0, -1.0, 0.5], strength=strength)
        got = solve_body(rest, [full, rival], pinned).motion.positions_world()[2]
        want = 0.5 * strength**2 / (1 + strength**2)
        assert abs(got[2] - want) < 2e-3, (strength, got, want)


def test_a_hint_that_gives_way_does_not_hold_the_frame():
    """A weak goal the others keep from being met is not waited for: the frame ends when
    the full goals are met (with hints held to, knee hints made the six-tracker fits run
    29 iterations a frame against 2.5)."""
    sk = Skeleton(("root", "a", "b"), [-1, 0, 1], [[0, 0, 0], [0, -1, 0], [0, -1, 0]])
    full = PositionGoal("b", [1.0, -1.0, 0.0])  # "a" on a circle about the root-b line
    hint = PositionGoal("a", [0.5, -0.5, 0.75], strength=0.05)  # just off it: settles "a"
    res = solve_body(Motion.rest(sk), [full, hint], BodyOptions(root="pinned"))
    assert res.reached[0] and not res.reached[1]
    assert res.motion.positions_world()[1, 2] > 0.5  # "a" turned toward the hint
    assert res.iterations <= 10, res.iterations
