"""FABRIK: reachable targets, bone lengths, fixed root, constraints, batching, degenerate
chains and the pose-level solver.

Reachable targets come from forward kinematics of random poses of the same chain. FABRIK
converges only linearly for targets right at the edge of the reachable set (fully
stretched, or fully folded), so random targets are kept at least 10 % of the chain length
inside both edges and the reachability tests allow 2000 iterations.

Helpers here are shared with ``test_follow.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_quats
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ikrig.constraints import AngleLimit2D, Cone, Hinge, TwistLimit
from ikrig.errors import HierarchyError, InputError
from ikrig.math import quat_conj, quat_from_axis_angle, quat_mul, quat_rotate
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.ccd import CCDOptions, ccd
from ikrig.solvers.ccd2d import ccd_2d
from ikrig.solvers.chain import Chain
from ikrig.solvers.dls import DLSOptions, dls
from ikrig.solvers.fabrik import FabrikOptions, fabrik, solve_fabrik
from ikrig.solvers.follow import FollowOptions, follow

BATCHES = st.sampled_from([(), (1,), (4,), (2, 3)])
DTYPES = st.sampled_from([np.float32, np.float64])
SEEDS = st.integers(0, 2**32 - 1)
X = np.array([1.0, 0.0, 0.0])


# --------------------------------------------------------------------------------------
# Helpers (also used by test_follow.py)
# --------------------------------------------------------------------------------------


def chain_from_directions(root, lengths, dirs):
    """Joint positions ``(..., n + 1, 3)`` from a root, bone lengths and unit directions."""
    steps = dirs * np.asarray(lengths)[:, None]
    return np.concatenate([root[..., None, :], root[..., None, :] + np.cumsum(steps, -2)], -2)


def random_pose(rng, lengths, batch, root=None):
    """A random pose of a chain: uniformly random bone directions."""
    d = rng.normal(size=tuple(batch) + (len(lengths), 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    root = np.zeros(tuple(batch) + (3,)) if root is None else root
    return chain_from_directions(root, lengths, d)


def reachable_targets(rng, lengths, root, margin=0.1):
    """Effector positions of random poses, at least ``margin * L`` inside both reach edges,
    or a quarter of the reachable band's width where the band is narrower (one bone holds
    nearly all the length: the margins would leave no room, and the search never ended)."""
    lengths = np.asarray(lengths)
    total = lengths.sum()
    inner = max(0.0, 2 * lengths.max() - total)
    m = min(margin * total, 0.25 * (total - inner))
    out = np.empty(root.shape)
    todo = np.ones(root.shape[:-1], dtype=bool)
    for _ in range(10_000):
        if not todo.any():
            break
        eff = random_pose(rng, lengths, root.shape[:-1], root)[..., -1, :]
        dist = np.linalg.norm(eff - root, axis=-1)
        ok = todo & (dist > inner + m) & (dist < total - m)
        if len(lengths) == 1 or not m > 0:
            ok = todo.copy()
        out[ok] = eff[ok]
        todo &= ~ok
    assert not todo.any(), "no reachable target found"
    return out


def straight(lengths, batch=(), direction=X, root=None):
    """A straight chain ``(..., n + 1, 3)`` along ``direction``."""
    n = len(lengths)
    dirs = np.broadcast_to(np.asarray(direction, np.float64), tuple(batch) + (n, 3))
    root = np.zeros(tuple(batch) + (3,)) if root is None else root
    return chain_from_directions(root, lengths, dirs)


def rest_bones(start, parent=None):
    """Each joint's bone in its own frame in the input (rest) pose: ``parent^-1 diff``."""
    bones = np.diff(np.asarray(start, np.float64), axis=-2)
    if parent is not None:
        bones = quat_rotate(quat_conj(np.asarray(parent, np.float64))[..., None, :], bones)
    return bones


def fk_from_rest(start, rotations_local, parent=None, root=None):
    """Joint positions of a position-level chain turned by ``rotations_local`` relative to
    its input pose ``start`` (every joint frame there is ``parent``, identity by default)."""
    start = np.asarray(start, np.float64)
    rl = np.asarray(rotations_local, np.float64)
    bones = rest_bones(start, parent)
    w = np.zeros(np.broadcast_shapes(start.shape[:-2], rl.shape[:-2]) + (4,))
    w[..., 3] = 1
    if parent is not None:
        w = quat_mul(w, np.asarray(parent, np.float64))
    p = start[..., 0, :] if root is None else np.asarray(root, np.float64)
    out = [np.broadcast_to(p, w.shape[:-1] + (3,))]
    for i in range(rl.shape[-2]):
        w = quat_mul(w, rl[..., i, :])
        out.append(out[-1] + quat_rotate(w, bones[..., i, :]))
    return np.stack(out, axis=-2)


def constrained_pose(rng, start, constraints, planar=False, parent=None):
    """A random pose reached from ``start`` (the rest pose, every joint frame ``parent``) by
    local rotations that obey the constraints (planar: rotations about +Z)."""
    start = np.asarray(start, np.float64)
    batch = start.shape[:-2]
    bones = rest_bones(start, parent)
    rl = []
    for i, c in enumerate(constraints):
        if planar:
            q = quat_from_axis_angle([0, 0, 1], rng.uniform(-np.pi, np.pi, batch))
        else:
            q = random_quats(rng, batch)
        if c is not None:
            q = c.project(q, bones[..., i, :], bones[..., i - 1, :] if i > 0 else None)
        rl.append(q)
    return fk_from_rest(start, np.stack(rl, axis=-2), parent)


def allowed_start(rng, lengths, constraints, batch, planar=False):
    """A start (rest) pose whose own bends obey the constraints: an allowed pose of a
    straight chain along +X."""
    return constrained_pose(rng, straight(lengths, batch), constraints, planar)


def bone_lengths(p):
    return np.linalg.norm(np.diff(np.asarray(p, np.float64), axis=-2), axis=-1)


def assert_lengths_kept(p_out, p_in, dtype):
    rel = 1e-9 if dtype == np.float64 else 2e-5
    want = bone_lengths(p_in)
    np.testing.assert_allclose(bone_lengths(p_out), want, rtol=rel, atol=rel * want.max())


def max_violation(constraints, rotations_local, bones, parents):
    """Largest angle (rad) by which any joint breaks its constraint."""
    worst = 0.0
    for i, c in enumerate(constraints):
        if c is not None:
            v = c.violation(rotations_local[..., i, :], bones[i], parents[i])
            worst = max(worst, float(np.max(v)))
    return worst


def position_level_violation(constraints, rotations_local, start, parent=None):
    """Largest violation of position-level constraints, relative to the input pose."""
    bones = rest_bones(start, parent)
    worst = 0.0
    for i, c in enumerate(constraints):
        if c is not None:
            pb = bones[..., i - 1, :] if i > 0 else None
            v = c.violation(rotations_local[..., i, :], bones[..., i, :], pb)
            worst = max(worst, float(np.max(v)))
    return worst


def assert_rotations_match_positions(rotations_local, positions, start, parent=None, atol=2e-5):
    """Forward kinematics of ``rotations_local`` from the input pose ``start`` (from the
    result's root, which may have moved) gives ``positions``."""
    p = np.asarray(positions, np.float64)
    again = fk_from_rest(start, rotations_local, parent, root=p[..., 0, :])
    np.testing.assert_allclose(again, p, atol=atol)


# --------------------------------------------------------------------------------------
# Position level, free chains
# --------------------------------------------------------------------------------------


@settings(max_examples=40)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, n=st.integers(1, 8))
def test_reaches_reachable_targets(batch, dtype, seed, n):
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, n)
    root = rng.normal(size=tuple(batch) + (3,))
    start = random_pose(rng, lengths, batch, root).astype(dtype)
    target = reachable_targets(rng, lengths, root).astype(dtype)
    tol = 1e-3 * lengths.sum()  # the tolerance is relative to the chain's length
    res = fabrik(start, target, FabrikOptions(max_iterations=2000, tolerance=1e-3))
    p = res.positions_world
    assert p.shape == start.shape and p.dtype == np.dtype(dtype)
    assert res.reached.shape == batch and res.reached.all()
    assert res.error.shape == batch and res.iterations.shape == batch
    slack = 1e-9 if dtype == np.float64 else 1e-5 * lengths.sum()
    err = np.linalg.norm(p[..., -1, :].astype(np.float64) - target, axis=-1)
    assert np.all(err <= tol + slack)
    np.testing.assert_allclose(res.error, err, atol=slack + 1e-6)
    assert_lengths_kept(p, start, dtype)
    np.testing.assert_array_equal(p[..., 0, :], start[..., 0, :])  # the root stays put
    assert res.motion is None
    assert res.rotations_local.shape == tuple(batch) + (n, 4)
    assert res.rotations_local.dtype == np.dtype(dtype)
    atol = 1e-9 if dtype == np.float64 else 1e-5 * lengths.sum()
    assert_rotations_match_positions(res.rotations_local, p, start, atol=atol)


@settings(max_examples=25)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, constrained=st.booleans())
def test_batched_equals_loop_of_single_solves(batch, dtype, seed, constrained):
    rng = np.random.default_rng(seed)
    n = 5
    lengths = rng.uniform(0.5, 1.5, n)
    start = random_pose(rng, lengths, batch).astype(dtype)
    target = (rng.normal(size=tuple(batch) + (3,)) * 2).astype(dtype)
    cons = [Cone(0.7)] * n if constrained else None
    opts = FabrikOptions(max_iterations=30, tolerance=1e-4)
    res = fabrik(start, target, opts, constraints=cons)
    for idx in np.ndindex(*batch):
        one = fabrik(start[idx], target[idx], opts, constraints=cons)
        np.testing.assert_array_equal(one.positions_world, res.positions_world[idx])
        assert one.iterations == res.iterations[idx] and one.reached == res.reached[idx]
        np.testing.assert_array_equal(one.error, res.error[idx])
        if constrained:
            np.testing.assert_array_equal(one.rotations_local, res.rotations_local[idx])


def test_broadcasts_one_chain_over_many_targets():
    rng = np.random.default_rng(0)
    start = random_pose(rng, [1.0, 1.0, 1.0], ())
    targets = rng.normal(size=(7, 3))
    res = fabrik(start, targets)
    assert res.positions_world.shape == (7, 4, 3)
    np.testing.assert_array_equal(res.positions_world[3], fabrik(start, targets[3]).positions_world)


@settings(max_examples=25)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, n=st.integers(1, 6))
def test_unreachable_points_straight_at_target(batch, dtype, seed, n):
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, n)
    root = rng.normal(size=tuple(batch) + (3,))
    start = random_pose(rng, lengths, batch, root).astype(dtype)
    direction = rng.normal(size=tuple(batch) + (3,))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    target = (root + direction * lengths.sum() * rng.uniform(1.05, 3.0)).astype(dtype)
    res = fabrik(start, target)
    assert not res.reached.any()
    assert np.all(res.iterations == 1)
    dirs = np.repeat(direction[..., None, :], n, axis=-2)
    want = chain_from_directions(start[..., 0, :].astype(np.float64), lengths, dirs)
    atol = 1e-9 if dtype == np.float64 else 1e-5 * lengths.sum()
    np.testing.assert_allclose(res.positions_world, want, atol=atol * 10)
    dist = np.linalg.norm(target.astype(np.float64) - start[..., 0, :], axis=-1)
    np.testing.assert_allclose(res.error, dist - lengths.sum(), rtol=1e-5, atol=atol * 10)


@pytest.mark.parametrize("n", [2, 3, 10])
@pytest.mark.parametrize("where", [0.5, -0.5, 0.0, 0.9, -0.9])
def test_straight_chain_with_target_on_its_line_bends(n, where):
    """Straight ahead, straight behind, at the root: the chain still folds to reach."""
    lengths = np.full(n, 1.0 / n)
    start = chain_from_directions(np.zeros(3), lengths, np.tile(X, (n, 1)))
    target = where * X
    res = fabrik(start, target, FabrikOptions(max_iterations=500, tolerance=1e-4))
    assert np.isfinite(res.positions_world).all()
    if n > 2 or where != 0.0:  # two equal bones fold exactly onto the root, also fine
        assert res.reached, res.error
    assert_lengths_kept(res.positions_world, start, np.float64)


def test_bend_axis_sets_the_bending_plane():
    n = 6
    start = chain_from_directions(np.zeros(3), np.ones(n), np.tile(X, (n, 1)))
    res = fabrik(start, 2.0 * X, FabrikOptions(bend_axis=(0.0, 1.0, 0.0)))
    assert res.reached
    np.testing.assert_allclose(res.positions_world[:, 1], 0, atol=1e-12)  # bent in XZ
    assert np.abs(res.positions_world[:, 2]).max() > 0.1
    res = fabrik(start, 2.0 * X)  # default: about +Z for a chain along X, bent in XY
    np.testing.assert_allclose(res.positions_world[:, 2], 0, atol=1e-12)


def test_target_at_root_and_zero_length_bones_are_finite():
    start = np.array([[0.0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 0]])
    for target in ([0.0, 0, 0], [1.0, 0.5, 0.0], [1.0, 0, 0], [10.0, 0, 0]):
        res = fabrik(start, target)
        assert np.isfinite(res.positions_world).all() and np.isfinite(res.error)
        assert_lengths_kept(res.positions_world, start, np.float64)
    # All bones of zero length: nothing can move; the error is the distance to the root.
    flat = np.zeros((3, 3))
    res = fabrik(flat, [1.0, 2.0, 2.0])
    np.testing.assert_array_equal(res.positions_world, flat)
    assert res.error == pytest.approx(3.0) and not res.reached
    # A single bone aimed at its own root.
    res = fabrik(np.array([[0.0, 0, 0], [1, 0, 0]]), [0.0, 0, 0])
    assert np.isfinite(res.positions_world).all() and res.error == pytest.approx(1.0)


def test_tolerance_is_relative_to_the_chain_length():
    """``tolerance`` is a fraction of the chain's length: the same solve in millimetres and
    in metres stops at the same pose, its ``error`` in the data's units."""
    rng = np.random.default_rng(5)
    start = random_pose(rng, [1.0, 0.7, 1.2], ())
    target = reachable_targets(rng, [1.0, 0.7, 1.2], np.zeros((1, 3)))[0]
    metres = fabrik(start, target, FabrikOptions(tolerance=1e-2))
    mm = fabrik(start * 1000, target * 1000, FabrikOptions(tolerance=1e-2))
    np.testing.assert_allclose(mm.positions_world, metres.positions_world * 1000, atol=1e-9)
    assert mm.iterations == metres.iterations and mm.reached and metres.reached
    np.testing.assert_allclose(mm.error, metres.error * 1000, rtol=1e-9)
    assert metres.error <= 1e-2 * 2.9


def test_zero_iterations_measure_the_start_pose():
    start = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    res = fabrik(start, [0.0, 5.0, 0.0], FabrikOptions(max_iterations=0))
    assert res.iterations == 0 and not res.reached
    np.testing.assert_array_equal(res.positions_world, start)
    np.testing.assert_allclose(res.rotations_local, [[0, 0, 0, 1]] * 2)
    assert res.error == pytest.approx(np.hypot(2.0, 5.0))


def test_already_reached_takes_no_iteration():
    start = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0]])
    res = fabrik(start, [1.0, 1.0005, 0.0])
    assert res.iterations == 0 and res.reached
    np.testing.assert_array_equal(res.positions_world, start)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_iterations": -1},
        {"max_iterations": 2.5},
        {"tolerance": -1e-3},
        {"tolerance": float("nan")},
        {"bend_axis": (0, 0, 0)},
        {"bend_axis": (1, 0)},
    ],
)
def test_bad_options_raise(kwargs):
    with pytest.raises(InputError):
        FabrikOptions(**kwargs)


def test_bad_constraints_raise():
    start = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    with pytest.raises(InputError):
        fabrik(start, [1.0, 1, 0], constraints=[Cone(0.5)])
    with pytest.raises(InputError):
        fabrik(start, [1.0, 1, 0], constraints=[Cone(0.5), "free"])
    with pytest.raises(InputError):
        fabrik(start, [1.0, 1, 0], options={"tolerance": 1})


# --------------------------------------------------------------------------------------
# Position level, constrained chains
# --------------------------------------------------------------------------------------

CONSTRAINED_CASES = {
    "cones": ([Cone(0.8)] * 6, False),
    "cones-free-root": ([None] + [Cone(0.5)] * 5, False),
    "limits-2d": ([AngleLimit2D(-1.2, 1.2)] * 6, True),
    "limits-2d-one-sided": ([None] + [AngleLimit2D.degrees(0, 60)] * 5, True),
}


@settings(max_examples=30)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, case=st.sampled_from(sorted(CONSTRAINED_CASES)))
def test_constrained_joints_end_inside_limits(batch, dtype, seed, case):
    cons, planar = CONSTRAINED_CASES[case]
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.5, 1.5, len(cons))
    start = allowed_start(rng, lengths, cons, batch, planar).astype(dtype)
    target = constrained_pose(rng, start, cons, planar)[..., -1, :].astype(dtype)
    res = fabrik(start, target, FabrikOptions(tolerance=1e-3), constraints=cons)
    tol = 1e-9 if dtype == np.float64 else 1e-5
    assert position_level_violation(cons, res.rotations_local, start) <= tol
    assert res.rotations_local.shape == tuple(batch) + (len(cons), 4)
    assert res.rotations_local.dtype == np.dtype(dtype)
    assert_rotations_match_positions(res.rotations_local, res.positions_world, start)
    assert_lengths_kept(res.positions_world, start, dtype)
    np.testing.assert_array_equal(res.positions_world[..., 0, :], start[..., 0, :])
    if planar:
        np.testing.assert_allclose(res.positions_world[..., 2], 0, atol=1e-6)


@pytest.mark.parametrize("case", sorted(CONSTRAINED_CASES))
def test_constrained_success_rate(case):
    """Constrained FABRIK is approximate (see the module docs): most allowed targets are
    reached, every result is inside the limits."""
    cons, planar = CONSTRAINED_CASES[case]
    rng = np.random.default_rng(42)
    lengths = rng.uniform(0.5, 1.5, len(cons))
    start = allowed_start(rng, lengths, cons, (500,), planar)
    target = constrained_pose(rng, start, cons, planar)[:, -1]
    tol = 1e-3 * lengths.sum()
    res = fabrik(start, target, FabrikOptions(tolerance=1e-3), constraints=cons)
    assert res.reached.mean() >= 0.98, res.reached.mean()  # 0.992-1.0; 0.976 without restarts
    ok = res.reached
    np.testing.assert_array_less(
        np.linalg.norm(res.positions_world[ok, -1] - target[ok], axis=-1), tol * (1 + 1e-9)
    )
    assert position_level_violation(cons, res.rotations_local, start) <= 1e-9


def test_start_pose_outside_limits_is_snapped():
    cons = [AngleLimit2D.degrees(-10, 10)] * 3
    start = np.array([[0.0, 0, 0], [0, 1, 0], [-1, 1, 0], [-1, 0, 0]])  # 90 degree bends
    res = fabrik(start, start[-1], constraints=cons)  # effector already on the target
    assert position_level_violation(cons, res.rotations_local, start) <= 1e-12
    assert np.isfinite(res.positions_world).all()


def test_constrained_unreachable_points_at_target_within_limits():
    cons = [None, AngleLimit2D.degrees(-20, 20), AngleLimit2D.degrees(-20, 20)]
    start = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    res = fabrik(start, [0.0, 10.0, 0.0], constraints=cons)
    assert not res.reached and res.iterations == 1
    d = np.diff(res.positions_world, axis=0)
    np.testing.assert_allclose(d, [[0, 1, 0]] * 3, atol=1e-9)  # each bone aims at the target
    cons = [AngleLimit2D.degrees(-20, 20)] * 3  # the root cannot turn to +Y: as near as allowed
    res = fabrik(start, [0.0, 10.0, 0.0], constraints=cons)
    assert position_level_violation(cons, res.rotations_local, start) <= 1e-12
    d = np.diff(res.positions_world, axis=0)
    ang = np.degrees(np.arctan2(d[:, 1], d[:, 0]))
    np.testing.assert_allclose(ang, [20, 40, 60], atol=1e-9)  # each as far round as allowed


def test_root_cone_is_centred_on_the_input_direction():
    """Position-level frames: the input pose is the rest pose, so a root cone (default axis)
    is centred on the root bone's input direction, whatever that direction is."""
    start = np.array([[0.0, 0, 0], [0, 1, 0], [0, 2, 0]])  # along +Y
    cons = [Cone(0.1), None]
    res = fabrik(start, [0.3, 1.5, 0.0], constraints=cons)
    d0 = res.positions_world[1] - res.positions_world[0]
    assert np.arccos(np.clip(d0[1], -1, 1)) <= 0.1 + 1e-9
    np.testing.assert_allclose(res.rotations_local[0], Cone(0.1).project(
        res.rotations_local[0], [0, 1, 0]), atol=1e-12)  # fmt: skip


def test_parent_rotation_turns_every_joint_frame():
    """A hinge about the parent frame's +Z: turning the parent frame by 90 degrees about +X
    makes it a hinge about world -Y, so the chain bends in the XZ plane."""
    start = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    cons = [Hinge((0.0, 0.0, 1.0)), Hinge((0.0, 0.0, 1.0))]
    qx = quat_from_axis_angle([1, 0, 0], np.pi / 2)
    target = [1.2, 0.0, 0.8]
    res = fabrik(start, target, constraints=cons, parent_rotation_world=qx)
    assert res.reached
    np.testing.assert_allclose(res.positions_world[:, 1], 0, atol=1e-9)
    assert_rotations_match_positions(res.rotations_local, res.positions_world, start, qx, 1e-9)
    assert position_level_violation(cons, res.rotations_local, start, qx) <= 1e-9
    res = fabrik(start, target, constraints=cons)  # identity: hinges about world +Z
    assert not res.reached
    np.testing.assert_allclose(res.positions_world[:, 2], 0, atol=1e-9)


# --------------------------------------------------------------------------------------
# Pose level
# --------------------------------------------------------------------------------------


def make_skeleton(rng, n):
    """hips -> spine -> a0 -> ... -> a{n}, plus a side branch on the spine."""
    names = ["hips", "spine"] + [f"a{i}" for i in range(n + 1)] + ["side"]
    parents = [-1, 0] + [1] + list(range(2, n + 2)) + [1]
    offsets = np.concatenate(
        [[[0, 1, 0], [0, 0.3, 0], [0.2, 0.1, 0]], rng.normal(size=(n, 3)), [[-0.2, 0.1, 0.0]]]
    )
    return Skeleton(tuple(names), parents, offsets)


def make_limb(rng, n):
    """Like :func:`make_skeleton`, but the chain's rest offsets run roughly along +Y, as in
    a limb or a tail (a random bone along a hinge axis makes a near-rigid pair FABRIK
    handles badly)."""
    names = ["hips", "spine"] + [f"a{i}" for i in range(n + 1)] + ["side"]
    parents = [-1, 0] + [1] + list(range(2, n + 2)) + [1]
    off = np.array([0, 1.0, 0]) * rng.uniform(0.5, 1.5, (n, 1)) + rng.normal(size=(n, 3)) * 0.15
    offsets = np.concatenate([[[0, 1, 0], [0, 0.3, 0], [0.2, 0.1, 0]], off, [[-0.2, 0.1, 0.0]]])
    return Skeleton(tuple(names), parents, offsets)


def random_motion(rng, sk, batch, dtype):
    rl = random_quats(rng, tuple(batch) + (sk.num_joints,))
    pl = np.broadcast_to(sk.offsets, tuple(batch) + sk.offsets.shape).copy()
    pl[..., 0, :] = rng.normal(size=tuple(batch) + (3,))
    return Motion(sk, rl.astype(dtype), pl.astype(dtype))


def allowed_chain_pose(rng, motion, chain):
    """The motion with the chain's joints turned to random allowed local rotations."""
    sk = motion.skeleton
    rl = motion.rotations_local.astype(np.float64)
    for i, j in enumerate(chain.joints[:-1]):
        q = random_quats(rng, motion.batch_shape)
        c = chain.constraints[i]
        if c is not None:
            parent_bone = sk.offsets[j] if i > 0 else None
            q = c.project(q, sk.offsets[chain.joints[i + 1]], parent_bone)
        rl[..., j, :] = q
    return motion.replace(rotations_local=rl.astype(motion.dtype))


def chain_violation(motion, chain):
    sk = motion.skeleton
    idx = list(chain.joints[:-1])
    bones = [sk.offsets[j] for j in chain.joints[1:]]
    parents = [None] + [sk.offsets[j] for j in chain.joints[1:-1]]
    return max_violation(chain.constraints, motion.rotations_local[..., idx, :], bones, parents)


def assert_only_chain_changed(old, new, chain, moved_root=False):
    others = [j for j in range(old.num_joints) if j not in chain.joints[:-1]]
    others = [j for j in others if j != chain.joints[-1]]
    np.testing.assert_array_equal(new.rotations_local[..., others, :],
                                  old.rotations_local[..., others, :])  # fmt: skip
    keep = [j for j in range(old.num_joints) if not (moved_root and j == chain.joints[0])]
    np.testing.assert_array_equal(new.positions_local[..., keep, :],
                                  old.positions_local[..., keep, :])  # fmt: skip
    # The effector keeps its world rotation.
    eff = chain.joints[-1]
    rw_old, _ = old.fk()
    rw_new, _ = new.fk()
    err = np.minimum(
        np.abs(rw_old[..., eff, :] - rw_new[..., eff, :]).max(-1),
        np.abs(rw_old[..., eff, :] + rw_new[..., eff, :]).max(-1),
    )
    assert err.max() <= (1e-9 if old.dtype == np.float64 else 1e-5)


@settings(max_examples=25)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, n=st.integers(2, 6))
def test_pose_level_reaches_and_changes_only_the_chain(batch, dtype, seed, n):
    rng = np.random.default_rng(seed)
    sk = make_skeleton(rng, n)
    chain = Chain.between(sk, "a0", f"a{n}")
    motion = random_motion(rng, sk, batch, dtype)
    _, pw = motion.fk()
    lengths = np.linalg.norm(sk.offsets[list(chain.joints[1:])], axis=-1)
    target = reachable_targets(rng, lengths, pw[..., chain.joints[0], :].astype(np.float64))
    tol = 1e-3 * lengths.sum()
    res = solve_fabrik(motion, chain, target.astype(dtype), FabrikOptions(2000, 1e-3))
    assert res.reached.all()
    new = res.motion
    assert new.dtype == np.dtype(dtype) and new.batch_shape == tuple(batch)
    _, pw_new = new.fk()
    slack = 1e-9 if dtype == np.float64 else 1e-4 * lengths.sum()
    err = np.linalg.norm(pw_new[..., chain.joints[-1], :] - target, axis=-1)
    assert np.all(err <= tol + slack)
    np.testing.assert_allclose(pw_new[..., list(chain.joints), :], res.positions_world,
                               atol=slack + 1e-6)  # fmt: skip
    assert_only_chain_changed(motion, new, chain)
    assert res.rotations_local.shape == tuple(batch) + (n, 4)
    np.testing.assert_array_equal(
        res.rotations_local, new.rotations_local[..., chain.joints[:-1], :]
    )


POSE_CONSTRAINTS = [
    Cone(0.9),
    Hinge((0.0, 0.0, 1.0), -2.0, 2.0),
    TwistLimit(-0.3, 0.3),
    AngleLimit2D(-1.5, 1.5, normal=(1.0, 0.0, 0.0)),
]


@settings(max_examples=25)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS)
def test_pose_level_constraints_hold(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    sk = make_limb(rng, 4)
    chain = Chain.between(sk, "a0", "a4", constraints=POSE_CONSTRAINTS)
    motion = allowed_chain_pose(rng, random_motion(rng, sk, batch, dtype), chain)
    goal = allowed_chain_pose(rng, motion, chain)
    target = goal.positions_world()[..., chain.joints[-1], :]
    res = solve_fabrik(motion, chain, target, FabrikOptions(tolerance=1e-3))
    assert chain_violation(res.motion, chain) <= (1e-7 if dtype == np.float64 else 1e-4)
    assert_only_chain_changed(motion, res.motion, chain)
    _, pw_new = res.motion.fk()
    np.testing.assert_allclose(pw_new[..., list(chain.joints), :], res.positions_world,
                               atol=1e-4 if dtype == np.float32 else 1e-9)  # fmt: skip
    ok = res.reached
    err = np.linalg.norm(pw_new[..., chain.joints[-1], :] - target, axis=-1)
    L = np.linalg.norm(sk.offsets[list(chain.joints[1:])], axis=-1).sum()
    assert np.all(err[ok] <= 1e-3 * L + (1e-4 if dtype == np.float32 else 1e-9))


def test_pose_level_constrained_success_rate():
    rng = np.random.default_rng(3)
    sk = make_limb(rng, 4)
    chain = Chain.between(sk, "a0", "a4", constraints=POSE_CONSTRAINTS)
    motion = allowed_chain_pose(rng, random_motion(rng, sk, (400,), np.float64), chain)
    goal = allowed_chain_pose(rng, motion, chain)
    target = goal.positions_world()[..., chain.joints[-1], :]
    res = solve_fabrik(motion, chain, target, FabrikOptions(tolerance=1e-3))
    assert res.reached.mean() >= 0.8, res.reached.mean()
    assert chain_violation(res.motion, chain) <= 1e-9


def test_pose_level_one_pose_many_targets():
    rng = np.random.default_rng(1)
    sk = make_skeleton(rng, 3)
    chain = Chain.between(sk, "a0", "a3")
    motion = random_motion(rng, sk, (), np.float64)
    targets = motion.positions_world()[chain.joints[0]] + rng.normal(size=(5, 3)) * 0.3
    res = solve_fabrik(motion, chain, targets)
    assert res.motion.batch_shape == (5,)
    for k in range(5):
        one = solve_fabrik(motion, chain, targets[k])
        np.testing.assert_allclose(one.motion.rotations_local, res.motion.rotations_local[k])


def test_pose_level_errors():
    rng = np.random.default_rng(0)
    sk = make_skeleton(rng, 2)
    motion = random_motion(rng, sk, (3,), np.float64)
    with pytest.raises(HierarchyError):
        solve_fabrik(motion, Chain((0, 3)), [0.0, 0, 0])
    chain = Chain.between(sk, "a0", "a2")
    with pytest.raises(InputError):
        solve_fabrik(motion, chain, np.zeros((4, 3)))
    with pytest.raises(InputError):
        solve_fabrik(motion, chain, [np.nan, 0, 0])
    with pytest.raises(InputError):
        solve_fabrik(motion.rotations_local, chain, [0.0, 0, 0])


@pytest.mark.parametrize("keep", [True, False])
def test_pose_level_keep_effector_world(keep):
    rng = np.random.default_rng(6)
    sk = make_skeleton(rng, 3)
    chain = Chain.between(sk, "a0", "a3")
    motion = random_motion(rng, sk, (), np.float64)
    target = motion.positions_world()[chain.joints[0]] + [0.3, 0.2, -0.1]
    res = solve_fabrik(motion, chain, target, FabrikOptions(keep_effector_world=keep))
    eff = chain.joints[-1]
    if keep:
        a, b = res.motion.fk()[0][eff], motion.fk()[0][eff]
        assert min(np.abs(a - b).max(), np.abs(a + b).max()) <= 1e-9
    else:
        np.testing.assert_array_equal(res.motion.rotations_local[eff], motion.rotations_local[eff])


def test_pose_level_rotations_keep_twist_without_constraints():
    """Without constraints each joint turns by the shortest arc (its twist is kept)."""
    rng = np.random.default_rng(2)
    sk = make_skeleton(rng, 3)
    chain = Chain.between(sk, "a0", "a3")
    motion = random_motion(rng, sk, (), np.float64)
    rw, pw = motion.fk()
    target = pw[chain.joints[0]] + 0.5 * (pw[chain.joints[-1]] - pw[chain.joints[0]])
    res = solve_fabrik(motion, chain, target)
    rw_new, pw_new = res.motion.fk()
    for a, b in zip(chain.joints[:-1], chain.joints[1:]):
        old = pw[b] - pw[a]
        new = pw_new[b] - pw_new[a]
        delta = quat_mul(rw_new[a], quat_conj(rw[a]))  # world turn of the joint
        np.testing.assert_allclose(np.cross(delta[:3], np.cross(old, new)), 0, atol=1e-9)
        np.testing.assert_allclose(quat_rotate(delta, old), new, atol=1e-9)


# --------------------------------------------------------------------------------------
# One library: the conventions every position-level chain solver shares
# --------------------------------------------------------------------------------------

ITERATIVE = {
    "fabrik": (fabrik, FabrikOptions(max_iterations=2000)),
    "ccd": (ccd, CCDOptions(max_iterations=2000)),
    "dls": (dls, DLSOptions(max_iterations=500)),
}


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, n=st.integers(1, 7), turned=st.booleans())
def test_solvers_share_conventions(seed, n, turned):
    """The same chain and the same random reachable targets: FABRIK, CCD and DLS each reach
    within ``tolerance * L``, keep bone lengths and the root, and their ``rotations_local``,
    run through forward kinematics from the input pose (every joint frame
    ``parent_rotation_world``), reproduce their ``positions_world``. Follow too (from its
    moved root)."""
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(0.3, 1.5, n)
    root = rng.normal(size=3)
    start = random_pose(rng, lengths, (), root)
    targets = reachable_targets(rng, lengths, np.tile(root, (12, 1)))
    parent = random_quats(rng, ()) if turned else None
    L = lengths.sum()
    for name, (solve, opts) in ITERATIVE.items():
        res = solve(start, targets, opts, parent_rotation_world=parent)
        assert res.reached.all(), name
        err = np.linalg.norm(res.positions_world[:, -1] - targets, axis=-1)
        assert np.all(err <= 1e-3 * L * (1 + 1e-9)), name
        np.testing.assert_allclose(res.error, err, atol=1e-12 * L)
        assert_lengths_kept(res.positions_world, np.broadcast_to(start, (12, n + 1, 3)), np.float64)
        np.testing.assert_array_equal(res.positions_world[:, 0], np.tile(root, (12, 1)))
        assert res.rotations_local.shape == (12, n, 4), name
        assert_rotations_match_positions(res.rotations_local, res.positions_world, start, parent,
                                         atol=1e-9 * L)  # fmt: skip
    for direction in ("tail", "head"):
        res = follow(start, targets, FollowOptions(direction=direction),
                     parent_rotation_world=parent)  # fmt: skip
        assert_rotations_match_positions(res.rotations_local, res.positions_world, start, parent,
                                         atol=1e-9 * L)  # fmt: skip


SHARED_CONSTRAINTS = [
    Cone(0.6),
    Hinge((0.0, 0.0, 1.0), -1.0, 1.5),
    Cone(0.9),
    TwistLimit(-0.3, 0.3),
]


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, turned=st.booleans())
@example(seed=201167, turned=True)  # FABRIK reached 9 of 20 before it restarted stalled solves
def test_solvers_read_constraints_alike(seed, turned):
    """Constraints are relative to the input pose in every solver: the same constraint
    objects give rotations inside the same limits (checked against the input pose's bones)
    and every result's rotations reproduce its positions. Over 1,002 such chains (seeds
    0-499 and 201167, both ``turned``) FABRIK reaches 75-100 % of the targets, 97.9 % on
    average (45-100 %, 89.0 % without restarts)."""
    rng = np.random.default_rng(seed)
    cons = SHARED_CONSTRAINTS
    lengths = rng.uniform(0.5, 1.5, len(cons))
    parent = random_quats(rng, ()) if turned else None
    direction = rng.normal(size=3)
    start = straight(lengths, (), direction / np.linalg.norm(direction), rng.normal(size=3))
    targets = constrained_pose(rng, np.broadcast_to(start, (20,) + start.shape), cons,
                               parent=parent)[:, -1]  # fmt: skip
    solvers = dict(ITERATIVE, follow=(follow, None))
    reached = {}
    for name, (solve, opts) in solvers.items():
        res = solve(start, targets, opts, constraints=cons, parent_rotation_world=parent)
        assert position_level_violation(cons, res.rotations_local, start, parent) <= 1e-9, name
        assert_rotations_match_positions(res.rotations_local, res.positions_world, start, parent,
                                         atol=1e-9)  # fmt: skip
        reached[name] = res.reached.mean()
    assert reached["dls"] >= 0.5 and reached["fabrik"] >= 0.6, reached


def test_planar_root_angle_is_measured_from_the_input_direction():
    """``ccd_2d`` and ``AngleLimit2D`` agree: the root's angle is measured from the root
    bone's input direction (here 120 degrees from +X), so a root limit of +-0.2 rad keeps the
    root bone within 0.2 rad of where it started, in ccd_2d and in FABRIK alike."""
    n = 5
    d = np.array([np.cos(2.1), np.sin(2.1), 0.0])
    start = straight(np.full(n, 0.4), (), d)
    cons = [AngleLimit2D(-0.2, 0.2)] + [AngleLimit2D(-1.0, 1.0)] * (n - 1)
    target = np.array([1.3, 0.75, 0.0])  # 90 degrees clockwise of the chain
    free = ccd_2d(start, target)
    assert abs(free.angles[0]) > 0.3  # without limits the root turns well beyond 0.2 rad
    res2d = ccd_2d(start, target, constraints=cons)
    assert -0.2 - 1e-12 <= res2d.angles[0] <= 0.2 + 1e-12
    res3d = fabrik(start, target, constraints=cons)
    for res in (res2d, res3d):
        p = res.positions_world
        root_dir = (p[1] - p[0]) / np.linalg.norm(p[1] - p[0])
        assert np.arccos(np.clip(root_dir @ d, -1, 1)) <= 0.2 + 1e-9
        assert position_level_violation(cons, res.rotations_local, start) <= 1e-9
        assert_rotations_match_positions(res.rotations_local, p, start, atol=1e-9)
    # The unconstrained start angle of the root is 0, the others the bends of the input.
    res = ccd_2d(start, start[-1], limits_deg=[[-10, 10]] * n)
    np.testing.assert_allclose(res.angles, 0, atol=1e-12)


@pytest.mark.parametrize(
    "start, target, constraint",
    [
        ([[0, 0, 0], [0.687, 0.529, -0.498], [0.686, 1.218, 0.227], [1.64, 1.497, 0.123]],
         [-1.19, -0.39, -1.97], Hinge((0, 0, 1), -0.8, 0.8)),
        ([[0, 0, 0], [0.531, 0.797, 0.287], [-0.147, 1.403, -0.129], [0.382, 0.758, 0.422]],
         [1.88, -0.14, -1.13], Cone(0.6)),
    ],
)  # fmt: skip
def test_constrained_returns_the_best_pose_so_far(start, target, constraint):
    # Regression (issue 9): a constrained pass can move the effector away from a target the
    # limits do not let it reach; the last pose was returned, not the best one so far.
    errs = [
        float(fabrik(np.array(start, float), target, FabrikOptions(k, 0.0),
                     constraints=[constraint] * 3).error)
        for k in range(8)
    ]  # fmt: skip
    assert all(b <= a + 1e-12 for a, b in zip(errs, errs[1:])), errs


def test_nan_positions_with_constraints_name_the_argument():
    # Regression (issue 9): packing the constraints read the positions first and reported
    # NaN in an internal array ("bone_local") instead of positions_world.
    start = np.array([[0.0, 0, 0], [1, 0, 0], [np.nan, 0, 0]])
    with pytest.raises(InputError, match=r"^positions_world: .*index \(2, 0\)\)$"):
        fabrik(start, [1.0, 1.0, 0.0], constraints=[Cone(1.0), None])


def test_free_returns_the_best_pose_so_far():
    # Regression (issue 9): a chain folded back onto its root (effector at the root) with
    # the target 1e-9 of its length from it and tolerance 0 was bowed off the line: the
    # error went from 1e-9 L to 5e-3 L and the worse pose was returned.
    start = np.array([[0.0, 0, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]])
    target = np.array([0.0, 4e-9, 0.0])
    for it in range(4):
        res = fabrik(start, target, FabrikOptions(it, 0.0))
        assert res.error <= 4e-9
        np.testing.assert_array_equal(res.positions_world, start)


def test_a_solve_ending_on_a_restart_reports_the_pose_it_returns():
    """A constrained solve that stalls restarts from another pose; one whose last pass was
    a restart returned the restarted pose with the error of the pose before it (hypothesis
    found it: an error 14 % under the returned pose's). The error is the returned pose's,
    and the best pose so far is kept."""
    off = np.array([[-0.0956, -0.8695, -0.3562], [0.0, 0.0, 0.0], [-0.0278, 0.1340, 0.0374]])
    sk = Skeleton(("j0", "j1", "j2"), [-1, 0, 1], off)
    rot = np.array([[0, 0, 0, 1.0], [-0.31978065, 0.26849282, 0.8430994, 0.33887357],
                    [0.1855095, -0.7209624, -0.45452103, -0.48909104]])  # fmt: skip
    motion = Motion(sk, rot, off, None)
    chain = Chain((1, 2), (Hinge(axis=(1.0, 0.0, 0.0), min_angle=-2.1128, max_angle=0.0),))
    target = np.array([-0.1567, -0.9219, -0.2715])
    for iterations in (5, 10, 11, 40):
        res = solve_fabrik(motion, chain, target, FabrikOptions(max_iterations=iterations))
        dist = np.linalg.norm(res.positions_world[-1] - target)
        assert abs(dist - res.error) <= 1e-12, (iterations, dist, res.error)


def test_a_restart_that_beats_the_best_pose_is_kept_by_longer_solves():
    """More passes never end worse: a restart's pose is a candidate for the best pose as
    any pass's is. A restarted pose better than every pass before it was returned by a
    solve that ended on the restart (8 passes: 0.440) but forgotten by one that went on
    and did worse (12 and 100 passes returned the start, 0.463); hypothesis found it at
    1e-10 of this scale in float32."""
    pos = np.array([[-0.04878315, -0.79140861, -0.09002432],
                    [-0.06648726, -0.74309836, -0.09970172],
                    [-0.06857452, -1.24697752, -0.42051456],
                    [-0.0656528, -1.21359756, -0.38352189],
                    [-0.05554614, -1.20932236, -0.37973669]])  # fmt: skip
    cons = [AngleLimit2D(-0.156277256, 0.353111346, (-0.415561936, -0.818151116, -0.397412921)),
            AngleLimit2D(-3.055529276, 0.0, (0.0, 0.0, 1.0)),
            AngleLimit2D(0.0, 0.413549577, (0.0, 0.0, 1.0)),
            AngleLimit2D(0.0, 0.0, (0.0, 0.0, 1.0))]  # fmt: skip
    parent = [-0.7858286, 0.04093779, 0.57658314, 0.21988492]
    kw = {"constraints": cons, "parent_rotation_world": parent}
    passes = (0, 8, 12, 100)
    errors = [float(fabrik(pos, pos[-1], FabrikOptions(it, 0.0), **kw).error) for it in passes]
    assert all(b <= a for a, b in zip(errors, errors[1:])), errors
