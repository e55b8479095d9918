"""Damped least squares: :func:`dls` (positions) and :func:`solve_dls` (poses).

Reachable targets (positions, and orientations for the orientation tests) come from forward
kinematics of random poses of the chain, so an exact solution exists.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import chain_fk, dtypes, random_chain, random_quats, seeds
from hypothesis import given, settings
from hypothesis import strategies as st

from ikrig.constraints import Cone, Hinge, TwistLimit
from ikrig.errors import InputError
from ikrig.pose import Motion, fk
from ikrig.skeleton import Skeleton
from ikrig.solvers.chain import Chain
from ikrig.solvers.dls import DLSOptions, GoalWeights, dls, solve_dls

BATCHES = st.sampled_from([(), (1,), (4,), (2, 3)])
FAST = settings(max_examples=20, deadline=None)


def rest_positions(root, bones):
    return np.concatenate([root[None], root + np.cumsum(bones, axis=0)])


def bone_lengths(p):
    return np.linalg.norm(np.diff(np.asarray(p, np.float64), axis=-2), axis=-1)


def quat_err(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1))


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
def test_dls_reaches_reachable_targets(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    root, bones = random_chain(rng, n)
    pos = rest_positions(root, bones)
    target = chain_fk(root, bones, random_quats(rng, batch + (n,)))[1][..., -1, :]
    res = dls(pos.astype(dtype), target.astype(dtype), DLSOptions(max_iterations=300))
    L = np.linalg.norm(bones, axis=-1).sum()
    assert res.positions_world.dtype == dtype and res.rotations_local.dtype == dtype
    assert res.positions_world.shape == batch + (n + 1, 3) and res.reached.shape == batch
    assert res.reached.all()
    dist = np.linalg.norm(res.positions_world[..., -1, :].astype(np.float64) - target, axis=-1)
    assert (dist <= 1e-3 * L * 1.001).all()
    np.testing.assert_allclose(res.error, dist, rtol=1e-4, atol=1e-6 * L)
    rtol = 1e-9 if dtype == np.float64 else 2e-5
    pos_b = np.broadcast_to(pos.astype(dtype), batch + pos.shape)
    np.testing.assert_allclose(bone_lengths(res.positions_world), bone_lengths(pos_b), rtol=rtol)
    np.testing.assert_array_equal(res.positions_world[..., 0, :], pos_b[..., 0, :])
    again = chain_fk(root, bones, res.rotations_local.astype(np.float64))[1]
    np.testing.assert_allclose(
        again, res.positions_world, atol=1e-9 if dtype == np.float64 else 1e-4
    )


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
def test_dls_orientation_goal(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    root, bones = random_chain(rng, n)
    rw, pw = chain_fk(root, bones, random_quats(rng, batch + (n,)))
    target, target_rot = pw[..., -1, :], rw[..., -1, :]
    opts = DLSOptions(max_iterations=500, rotation_tolerance=1e-3)
    res = dls(rest_positions(root, bones).astype(dtype), target.astype(dtype), opts,
              target_rotation_world=target_rot.astype(dtype))  # fmt: skip
    assert res.reached.all()
    rw2, pw2 = chain_fk(root, bones, res.rotations_local.astype(np.float64))
    L = np.linalg.norm(bones, axis=-1).sum()
    assert (np.linalg.norm(pw2[..., -1, :] - target, axis=-1) <= 1e-3 * L * 1.01).all()
    assert (quat_err(rw2[..., -1, :], target_rot) <= 1e-3).all()


@pytest.mark.slow
@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
def test_dls_multiple_effectors(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = 6
    root, bones = random_chain(rng, n)
    rw, pw = chain_fk(root, bones, random_quats(rng, batch + (n,)))
    effectors = [3, -1]
    target = pw[..., [3, n], :]
    # orientation of the middle effector only (its rotation weight 1, the tip's 0)
    trot = rw[..., [3, n], :]
    opts = DLSOptions(max_iterations=500)
    res = dls(rest_positions(root, bones).astype(dtype), target.astype(dtype), opts,
              effectors=effectors, target_rotation_world=trot.astype(dtype),
              weights=GoalWeights(rotation_weights=[1.0, 0.0],
                                  position_weights=[1.0, 2.0]))  # fmt: skip
    assert res.reached.all()
    rw2, pw2 = chain_fk(root, bones, res.rotations_local.astype(np.float64))
    L = np.linalg.norm(bones, axis=-1).sum()
    assert (np.linalg.norm(pw2[..., [3, n], :] - target, axis=-1) <= 1e-3 * L * 1.01).all()
    assert (quat_err(rw2[..., 3, :], trot[..., 0, :]) <= 1e-3).all()


@pytest.mark.slow
def test_dls_weights_trade_off_conflicting_goals():
    pos = np.zeros((5, 3))
    pos[:, 0] = np.arange(5)
    # two goals for the tip: the weighted least-squares optimum is the weighted mean
    a, b = np.array([1.0, 2.0, 0.5]), np.array([2.0, -1.0, 1.0])
    for w in ([1.0, 1.0], [1.0, 2.0], [3.0, 1.0]):
        res = dls(pos, np.stack([a, b]), DLSOptions(max_iterations=300), effectors=[4, 4],
                  weights=GoalWeights(position_weights=w))  # fmt: skip
        assert not res.reached
        w2 = np.square(w)
        want = (w2[0] * a + w2[1] * b) / w2.sum()
        np.testing.assert_allclose(res.positions_world[-1], want, atol=1e-3)
        resid = np.sqrt(w2[0] * np.sum((want - a) ** 2) + w2[1] * np.sum((want - b) ** 2))
        np.testing.assert_allclose(res.error, resid, rtol=1e-3)


@pytest.mark.slow
@FAST
@given(batch=BATCHES.filter(lambda b: b != ()), dtype=dtypes, seed=seeds)
def test_dls_batch_equals_loop(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    pos = np.stack(
        [rest_positions(*random_chain(rng, n)) for _ in range(int(np.prod(batch)))]
    ).reshape(batch + (n + 1, 3))
    target = rng.normal(size=batch + (3,)) * 1.5
    trot = random_quats(rng, batch)
    opts = DLSOptions(max_iterations=40, max_step=0.5)
    res = dls(pos.astype(dtype), target.astype(dtype), opts,
              target_rotation_world=trot.astype(dtype),
              weights=GoalWeights(rotation_weights=0.3))  # fmt: skip
    for idx in np.ndindex(*batch):
        one = dls(pos[idx].astype(dtype), target[idx].astype(dtype), opts,
                  target_rotation_world=trot[idx].astype(dtype),
                  weights=GoalWeights(rotation_weights=0.3))  # fmt: skip
        np.testing.assert_array_equal(one.positions_world, res.positions_world[idx])
        np.testing.assert_array_equal(one.rotations_local, res.rotations_local[idx])
        assert one.error == res.error[idx] and one.iterations == res.iterations[idx]


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
def test_dls_constraints_respected(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = 3
    root, bones = random_chain(rng, n)
    cons = [Cone(0.7), Hinge(rng.normal(size=3), -1.0, 0.4), TwistLimit(-0.2, 0.2)]
    target = root + rng.normal(size=batch + (3,)) * 1.5
    res = dls(rest_positions(root, bones).astype(dtype), target.astype(dtype),
              DLSOptions(max_iterations=60), constraints=cons)  # fmt: skip
    assert np.isfinite(res.positions_world).all() and np.isfinite(res.error).all()
    rl = res.rotations_local.astype(np.float64)
    for i, c in enumerate(cons):
        v = c.violation(rl[..., i, :], bones[i], bones[i - 1] if i > 0 else None)
        assert (v <= (1e-9 if dtype == np.float64 else 2e-3)).all(), (i, v.max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dls_unreachable_points_straight(dtype):
    rng = np.random.default_rng(4)
    root, bones = random_chain(rng, 5)
    pos = rest_positions(root, bones)
    L = np.linalg.norm(bones, axis=-1).sum()
    dirs = rng.normal(size=(8, 3))
    dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
    res = dls(pos.astype(dtype), (root + dirs * 1.5 * L).astype(dtype),
              DLSOptions(max_iterations=300))  # fmt: skip
    assert not res.reached.any()
    p = res.positions_world.astype(np.float64) - root
    along = np.einsum("bjk,bk->bj", p, dirs)
    np.testing.assert_allclose(along[:, -1], L, rtol=2e-3)
    off = np.linalg.norm(p - along[..., None] * dirs[:, None], axis=-1)
    assert (off <= 5e-3 * L).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", [0.55, -0.5, 0.999])
def test_dls_straight_chain_target_on_its_line(dtype, where):
    pos = np.zeros((7, 3))
    pos[:, 0] = np.arange(7)
    res = dls(pos.astype(dtype), np.array([6.0 * where, 0, 0], dtype=dtype),
              DLSOptions(max_iterations=300))  # fmt: skip
    assert np.isfinite(res.positions_world).all() and res.reached
    res = dls(pos.astype(dtype), np.array([6.0 * where, 0, 0], dtype=dtype),
              DLSOptions(max_iterations=300, bend_axis=(0, 0, 1)))  # fmt: skip
    assert res.reached and np.abs(res.positions_world[:, 2]).max() < 1e-5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dls_degenerate_inputs_finite(dtype):
    pos = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 0]], dtype=dtype)
    for target in ([0, 0, 0], [1, 0, 0], [0.5, 0.5, 0.5], [5, 5, 5]):
        res = dls(pos, np.array(target, dtype=dtype))
        assert np.isfinite(res.positions_world).all() and np.isfinite(res.error)
        assert np.isfinite(res.rotations_local).all()
        np.testing.assert_allclose(bone_lengths(res.positions_world), [1, 0, 1, 0], atol=1e-5)
    res = dls(np.zeros((4, 3), dtype=dtype), np.ones(3, dtype=dtype))
    assert np.isfinite(res.positions_world).all() and not res.reached
    # a straight chain pointing at an unreachable target stops at once
    line = np.zeros((4, 3), dtype=dtype)
    line[:, 0] = [0, 1, 2, 3]
    res = dls(line, np.array([9, 0, 0], dtype=dtype))
    assert res.iterations == 1 and not res.reached
    np.testing.assert_array_equal(res.positions_world, line)


def test_dls_input_errors():
    pos = np.zeros((4, 3))
    pos[:, 0] = np.arange(4)
    # (the errors every solver shares: tests/test_solver_contract.py)
    with pytest.raises(InputError, match="target_rotation_world"):
        dls(pos, [1, 1, 1], target_rotation_world=[0, 0, np.nan, 1])
    with pytest.raises(InputError, match="target_rotation_world"):
        dls(pos, [1, 1, 1], target_rotation_world=[0, 0, 0, 0])
    with pytest.raises(InputError, match="effectors"):
        dls(pos, [1, 1, 1], effectors=7)
    with pytest.raises(InputError, match="target_world"):
        dls(pos, [1, 1, 1], effectors=[1, 3])
    with pytest.raises(InputError, match="position_weights"):
        dls(pos, [[1, 1, 1]] * 2, effectors=[1, 3], weights=GoalWeights(position_weights=[1, -1]))
    with pytest.raises(InputError, match="rotation_weights"):
        dls(pos, [1, 1, 1], weights=GoalWeights(rotation_weights=1.0))
    with pytest.raises(InputError, match="target_world"):
        dls(pos, None)
    with pytest.raises(InputError, match="constraints"):
        dls(pos, [1, 1, 1], constraints=[None] * 2)
    for kwargs in ({"damping": 0}, {"clamp": -1}, {"max_iterations": -2},
                   {"rotation_tolerance": np.inf}, {"max_step": -0.1}):  # fmt: skip
        with pytest.raises(InputError):
            DLSOptions(**kwargs)


def test_dls_orientation_only_goal():
    pos = np.zeros((4, 3))
    pos[:, 0] = np.arange(4)
    q = np.array([0.0, 0.0, np.sin(0.6), np.cos(0.6)])
    res = dls(pos, None, target_rotation_world=q)
    assert res.reached
    w = np.array([0, 0, 0, 1.0])
    from ikrig.math.quat import quat_mul

    for i in range(3):
        w = quat_mul(w, res.rotations_local[i])
    assert quat_err(w, q) <= 1e-3


# ---------------------------------------------------------------------------------------
# pose level


def branchy_skeleton(rng):
    names = ("root", "spine", "a", "b", "c", "d", "side", "side2", "tip")
    parents = [-1, 0, 1, 2, 3, 4, 1, 6, 5]
    offsets = rng.normal(size=(9, 3))
    offsets[0] = 0
    return Skeleton(names, parents, offsets)


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds, orient=st.booleans())
def test_solve_dls_pose_level(batch, dtype, seed, orient):
    rng = np.random.default_rng(seed)
    sk = branchy_skeleton(rng)
    chain = Chain.between(sk, "spine", "d")  # 4 solved joints
    J = sk.num_joints
    rot = random_quats(rng, batch + (J,))
    pos = np.broadcast_to(sk.offsets, batch + (J, 3)).copy()
    motion = Motion(sk, rot.astype(dtype), pos.astype(dtype))
    rot2 = rot.copy()
    rot2[..., list(chain.joints[:-1]), :] = random_quats(rng, batch + (4,))
    rw_t, pw_t = fk(sk.parents, rot2, pos)
    eff = chain.joints[-1]
    target, target_rot = pw_t[..., eff, :], rw_t[..., eff, :]
    kwargs = {"target_rotation_world": target_rot.astype(dtype)} if orient else {}
    res = solve_dls(motion, chain, target.astype(dtype), DLSOptions(max_iterations=500), **kwargs)
    assert res.reached.all()
    assert res.motion.dtype == dtype and res.motion.batch_shape == batch
    rw_new, pw_new = res.motion.fk()
    L = np.linalg.norm(sk.offsets[list(chain.joints[1:])], axis=-1).sum()
    dist = np.linalg.norm(pw_new[..., eff, :].astype(np.float64) - target, axis=-1)
    assert (dist <= 1e-3 * L * 1.01 + 1e-5).all()
    others = [j for j in range(J) if j not in chain.joints]
    np.testing.assert_array_equal(
        res.motion.rotations_local[..., others, :], motion.rotations_local[..., others, :]
    )
    np.testing.assert_array_equal(res.motion.positions_local, motion.positions_local)
    if orient:
        assert (quat_err(rw_new[..., eff, :], target_rot) <= 2e-3).all()
        # the effector's local rotation is kept (its world rotation is what was solved)
        np.testing.assert_array_equal(
            res.motion.rotations_local[..., eff, :], motion.rotations_local[..., eff, :]
        )
    else:
        rw_old = motion.fk()[0]
        tol = 1e-9 if dtype == np.float64 else 1e-4
        assert (quat_err(rw_new[..., eff, :], rw_old[..., eff, :]) <= tol).all()


def test_solve_dls_mid_chain_goal_and_broadcast():
    rng = np.random.default_rng(1)
    sk = branchy_skeleton(rng)
    chain = Chain.between(sk, "spine", "d", constraints=[None, Cone(1.0), None, None])
    motion = Motion.rest(sk)
    rot2 = np.tile([0, 0, 0, 1.0], (3, sk.num_joints, 1))
    rot2[:, list(chain.joints[:-1])] = random_quats(rng, (3, 4))
    pw = fk(sk.parents, rot2, np.broadcast_to(sk.offsets, (3, sk.num_joints, 3)))[1]
    targets = pw[:, [chain.joints[2], chain.joints[4]]]
    res = solve_dls(motion, chain, targets, effectors=[2, 4])
    assert res.motion.batch_shape == (3,)
    pw_new = res.motion.positions_world()
    assert np.isfinite(pw_new).all()
    with pytest.raises(InputError, match="motion"):
        solve_dls("pose", chain, [0, 0, 0])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_dls_kick_never_ends_worse_than_the_start(n):
    # Regression (issue 9): a straight chain with its target on its line, nearer than its
    # effector, is kicked off the line; the kick's result was returned even when it was
    # worse than the start (2 bones, 1 iteration: error 0.805 from 0.5; a single bone can
    # never do better than its start there).
    chain = np.array([[i, 0.0, 0.0] for i in range(n + 1)])
    start = n - 0.5
    for it in range(6):
        res = dls(chain, [0.5, 0.0, 0.0], DLSOptions(max_iterations=it, tolerance=0.0))
        assert res.error <= start + 1e-12


def test_dls_chain_on_its_target_is_not_kicked():
    # Regression (issue 9): a target at the effector up to rounding (a turned parent frame)
    # with tolerance 0 made a stalled straight chain kick itself away from it.
    q = np.array([0.3, -0.2, 0.5, 0.7]) / np.linalg.norm([0.3, -0.2, 0.5, 0.7])
    chain = np.array([[0.0, 0, 0], [1e-10, 2e-10, 0]])
    res = dls(chain, chain[-1], DLSOptions(max_iterations=1, tolerance=0.0),
              parent_rotation_world=q)  # fmt: skip
    assert res.error <= 1e-25
