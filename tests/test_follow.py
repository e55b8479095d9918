"""Follow-the-target (tail-first and head-first): the moving end lands on the target, bone
lengths are kept, each bone points where the pass says, constraints hold, batching, and
the pose-level solver."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fabrik import (
    CONSTRAINED_CASES,
    POSE_CONSTRAINTS,
    X,
    allowed_chain_pose,
    allowed_start,
    assert_lengths_kept,
    assert_only_chain_changed,
    assert_rotations_match_positions,
    chain_from_directions,
    chain_violation,
    make_limb,
    make_skeleton,
    position_level_violation,
    random_motion,
    random_pose,
)

from ikrig.constraints import AngleLimit2D, Cone, Hinge
from ikrig.errors import InputError
from ikrig.math import quat_from_axis_angle
from ikrig.solvers.chain import Chain
from ikrig.solvers.follow import FollowOptions, follow, solve_follow

BATCHES = st.sampled_from([(), (1,), (4,), (2, 3)])
DTYPES = st.sampled_from([np.float32, np.float64])
SEEDS = st.integers(0, 2**32 - 1)
MODES = st.sampled_from(["tail", "head"])


def unit(v):
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@settings(max_examples=40)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, n=st.integers(1, 8), mode=MODES)
def test_moving_end_lands_on_target(batch, dtype, seed, n, mode):
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, n)
    start = random_pose(rng, lengths, batch, rng.normal(size=tuple(batch) + (3,))).astype(dtype)
    target = (rng.normal(size=tuple(batch) + (3,)) * 3).astype(dtype)
    res = follow(start, target, FollowOptions(direction=mode))
    p = res.positions_world.astype(np.float64)
    s = start.astype(np.float64)
    assert res.positions_world.dtype == np.dtype(dtype) and p.shape == start.shape
    assert res.reached.all() and np.all(res.iterations == 1)
    atol = 1e-9 if dtype == np.float64 else 1e-5 * lengths.sum()
    assert_rotations_match_positions(res.rotations_local, p, s, atol=atol)
    end = -1 if mode == "tail" else 0
    np.testing.assert_allclose(p[..., end, :], target, atol=atol)
    np.testing.assert_allclose(res.error, 0, atol=atol)
    assert_lengths_kept(p, s, dtype)
    # Each bone points at the point the pass aimed it at.
    new_dir = unit(np.diff(p, axis=-2))
    if mode == "tail":
        aim = p[..., 1:, :] - s[..., :-1, :]  # from its old base to its new end
    else:
        aim = s[..., 1:, :] - p[..., :-1, :]  # from its new base to its old end
    ok = np.linalg.norm(aim, axis=-1) > 1e-3
    np.testing.assert_allclose((new_dir * unit(aim)).sum(-1)[ok], 1, atol=1e-5)


@settings(max_examples=25)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, mode=MODES, constrained=st.booleans())
def test_batched_equals_loop_of_single_solves(batch, dtype, seed, mode, constrained):
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, 4)
    start = random_pose(rng, lengths, batch).astype(dtype)
    target = rng.normal(size=tuple(batch) + (3,)).astype(dtype)
    cons = [Cone(0.6)] * 4 if constrained else None
    opts = FollowOptions(direction=mode)
    res = follow(start, target, opts, constraints=cons)
    for idx in np.ndindex(*batch):
        one = follow(start[idx], target[idx], opts, constraints=cons)
        np.testing.assert_array_equal(one.positions_world, res.positions_world[idx])
        np.testing.assert_array_equal(one.error, res.error[idx])
        if constrained:
            np.testing.assert_array_equal(one.rotations_local, res.rotations_local[idx])


def test_tail_drags_the_root():
    snake = chain_from_directions(np.zeros(3), np.ones(3), np.tile(X, (3, 1)))
    res = follow(snake, [3.0, 2.0, 0.0])
    assert np.linalg.norm(res.positions_world[0]) > 0.1  # the root moved
    np.testing.assert_allclose(res.positions_world[-1], [3, 2, 0])
    # Straight ahead: the chain slides along its line and stays straight.
    res = follow(snake, [5.0, 0.0, 0.0])
    np.testing.assert_allclose(res.positions_world[:, 0], [2, 3, 4, 5])
    np.testing.assert_allclose(res.positions_world[:, 1:], 0)


@pytest.mark.parametrize("mode", ["tail", "head"])
@pytest.mark.parametrize("where", [-1.0, 0.0, 0.5, 1.0, 1.5, 4.0])
def test_straight_chain_target_on_its_line(mode, where):
    """Targets straight ahead, behind, at the root or on a joint: finite; a chain that must
    turn around is bowed (about +Z by default for a chain along X), not folded flat."""
    n = 4
    start = chain_from_directions(np.zeros(3), np.full(n, 0.5), np.tile(X, (n, 1)))
    res = follow(start, where * X, FollowOptions(direction=mode))
    p = res.positions_world
    assert np.isfinite(p).all() and res.reached
    assert_lengths_kept(p, start, np.float64)
    np.testing.assert_allclose(p[:, 2], 0, atol=1e-12)
    turns = (mode == "tail" and where < 1.5) or (mode == "head" and where > 0.5)
    if turns:
        assert np.abs(p[:, 1]).max() > 1e-3  # bent
    res = follow(start, where * X, FollowOptions(direction=mode, bend_axis=(0, 1, 0)))
    np.testing.assert_allclose(res.positions_world[:, 1], 0, atol=1e-12)


def test_zero_length_bones_and_degenerate_chains_are_finite():
    start = np.array([[0.0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0]])
    for mode in ("tail", "head"):
        for target in ([0.0, 0, 0], [1.0, 0, 0], [1.0, 1.0, 0.0], [5.0, 5.0, 5.0]):
            res = follow(start, target, FollowOptions(direction=mode))
            assert np.isfinite(res.positions_world).all()
            assert_lengths_kept(res.positions_world, start, np.float64)
        res = follow(np.zeros((3, 3)), [1.0, 2.0, 3.0], FollowOptions(direction=mode))
        np.testing.assert_allclose(res.positions_world, np.tile([1.0, 2.0, 3.0], (3, 1)))


@pytest.mark.parametrize("mode", ["tail", "head"])
@settings(max_examples=25)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, case=st.sampled_from(sorted(CONSTRAINED_CASES)))
def test_constraints_hold(mode, batch, dtype, seed, case):
    cons, planar = CONSTRAINED_CASES[case]
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, len(cons))
    start = allowed_start(rng, lengths, cons, batch, planar).astype(dtype)
    target = rng.normal(size=tuple(batch) + (3,)) * 3
    if planar:
        target[..., 2] = 0
    target = target.astype(dtype)
    res = follow(start, target, FollowOptions(direction=mode), constraints=cons)
    tol = 1e-9 if dtype == np.float64 else 1e-5
    assert position_level_violation(cons, res.rotations_local, start) <= tol
    assert_rotations_match_positions(res.rotations_local, res.positions_world, start)
    assert_lengths_kept(res.positions_world, start, dtype)
    end = -1 if mode == "tail" else 0
    atol = 1e-9 if dtype == np.float64 else 1e-5 * lengths.sum()
    if mode == "tail" or cons[0] is None:
        # Tail-first keeps the effector on the target even when the root limit binds.
        np.testing.assert_allclose(res.positions_world[..., end, :], target, atol=atol)
    if planar:
        np.testing.assert_allclose(res.positions_world[..., 2], 0, atol=1e-5)


def test_angle_limits_between_neighbours_tail():
    """A snake with +-30 degree limits between neighbouring bones turns as a smooth arc."""
    n = 8
    cons = [None] + [AngleLimit2D.degrees(-30, 30)] * (n - 1)
    snake = chain_from_directions(np.zeros(3), np.full(n, 0.5), np.tile(X, (n, 1)))
    res = follow(snake, [4.0, -3.0, 0.0], constraints=cons)
    d = np.diff(res.positions_world, axis=0)
    turn = np.degrees(np.arctan2(np.cross(d[:-1], d[1:])[:, 2], (d[:-1] * d[1:]).sum(-1)))
    assert np.abs(turn).max() <= 30 + 1e-9
    np.testing.assert_allclose(res.positions_world[-1], [4, -3, 0], atol=1e-12)


def test_root_limit_in_tail_mode_turns_the_whole_chain():
    cons = [Cone(0.2), None, None]
    snake = chain_from_directions(np.zeros(3), np.ones(3), np.tile(X, (3, 1)))
    res = follow(snake, [0.0, 5.0, 0.0], constraints=cons)
    d0 = unit(res.positions_world[1] - res.positions_world[0])
    assert np.arccos(np.clip(d0[0], -1, 1)) <= 0.2 + 1e-9
    np.testing.assert_allclose(res.positions_world[-1], [0, 5, 0], atol=1e-12)


def test_parent_rotation_and_bad_input():
    snake = chain_from_directions(np.zeros(3), np.ones(2), np.tile(X, (2, 1)))
    # A root hinge about the parent frame's +Z; the parent frame turned 90 degrees about +X
    # makes it a hinge about world -Y: the root bone stays in the XZ plane.
    q = quat_from_axis_angle([1, 0, 0], np.pi / 2)
    cons = [Hinge((0.0, 0.0, 1.0)), None]
    res = follow(snake, [0.5, 2.0, 1.0], constraints=cons, parent_rotation_world=q)
    d0 = unit(res.positions_world[1] - res.positions_world[0])
    assert abs(d0[1]) <= 1e-9
    np.testing.assert_allclose(res.positions_world[-1], [0.5, 2.0, 1.0], atol=1e-9)
    assert_rotations_match_positions(res.rotations_local, res.positions_world, snake, q, 1e-9)
    # The root cone is centred on the root bone's input direction (+X here).
    res = follow(snake, [0.0, 3.0, 0.0], constraints=[Cone(0.1), None])
    d0 = unit(res.positions_world[1] - res.positions_world[0])
    assert np.arccos(np.clip(d0[0], -1, 1)) <= 0.1 + 1e-9
    with pytest.raises(InputError):
        follow(snake, [0, 0, 0], constraints=[None])
    with pytest.raises(InputError):
        FollowOptions(direction="sideways")
    with pytest.raises(InputError):
        FollowOptions(tolerance=-1)
    with pytest.raises(InputError):
        follow(snake, [0, 0, 0], options=FollowOptions, constraints=None)
    with pytest.raises(InputError):
        follow(snake, [0, 0, 0], parent_rotation_world=[0, 0, 0, 0], constraints=[Cone(1), None])


# --------------------------------------------------------------------------------------
# Pose level
# --------------------------------------------------------------------------------------


@settings(max_examples=25)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, mode=MODES, n=st.integers(1, 5))
def test_pose_level_follow(batch, dtype, seed, mode, n):
    rng = np.random.default_rng(seed)
    sk = make_skeleton(rng, n)
    chain = Chain.between(sk, "a0", f"a{n}")
    motion = random_motion(rng, sk, batch, dtype)
    target = (rng.normal(size=tuple(batch) + (3,)) * 2).astype(dtype)
    res = solve_follow(motion, chain, target, FollowOptions(direction=mode))
    new = res.motion
    _, pw = new.fk()
    idx = list(chain.joints)
    atol = 1e-9 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(pw[..., idx, :], res.positions_world, atol=atol)
    end = chain.joints[-1] if mode == "tail" else chain.joints[0]
    np.testing.assert_allclose(pw[..., end, :], target, atol=atol)
    assert_only_chain_changed(motion, new, chain, moved_root=True)


@pytest.mark.parametrize("mode", ["tail", "head"])
def test_pose_level_follow_constraints(mode):
    rng = np.random.default_rng(4)
    sk = make_limb(rng, 4)
    chain = Chain.between(sk, "a0", "a4", constraints=POSE_CONSTRAINTS)
    motion = allowed_chain_pose(rng, random_motion(rng, sk, (50,), np.float64), chain)
    target = rng.normal(size=(50, 3)) * 3
    res = solve_follow(motion, chain, target, FollowOptions(direction=mode))
    assert chain_violation(res.motion, chain) <= 1e-9
    _, pw = res.motion.fk()
    np.testing.assert_allclose(pw[..., list(chain.joints), :], res.positions_world, atol=1e-9)
    if mode == "tail":
        np.testing.assert_allclose(pw[:, chain.joints[-1]], target, atol=1e-9)
    assert_only_chain_changed(motion, res.motion, chain, moved_root=True)


def test_pose_level_follow_root_joint_of_skeleton():
    """Following with a chain that starts at the skeleton root moves the root's translation."""
    rng = np.random.default_rng(0)
    sk = make_skeleton(rng, 2)
    chain = Chain.between(sk, "hips", "a0")
    motion = random_motion(rng, sk, (), np.float64)
    res = solve_follow(motion, chain, [5.0, 5.0, 5.0])
    _, pw = res.motion.fk()
    np.testing.assert_allclose(pw[chain.joints[-1]], [5, 5, 5], atol=1e-9)
    np.testing.assert_allclose(res.motion.positions_local[0], res.positions_world[0])
