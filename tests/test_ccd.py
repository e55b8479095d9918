"""CCD solvers: 3D (:func:`ccd`, :func:`solve_ccd`) and planar (:func:`ccd_2d`).

Reachable targets come from forward kinematics of random poses of the chain. CCD converges
linearly, and slowly for targets near the edge of the reachable set (a chain that has to
unfold a zig-zag), so the convergence tests give it 2000 sweeps on chains of 3 to 6 bones;
with that budget it reaches every target the seeds below produce.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import chain_fk, dtypes, random_chain, random_quats, seeds
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ikrig.constraints import AngleLimit2D, Cone, Hinge, TwistLimit
from ikrig.errors import HierarchyError, InputError
from ikrig.pose import Motion, fk
from ikrig.skeleton import Skeleton
from ikrig.solvers.ccd import CCDOptions, ccd, solve_ccd
from ikrig.solvers.ccd2d import CCD2DOptions, CCD2DResult, ccd_2d
from ikrig.solvers.chain import Chain

BATCHES = st.sampled_from([(), (1,), (4,), (2, 3)])
FAST = settings(max_examples=20, deadline=None)


def chain_positions(root, bones, rotations_local):
    """World positions ``(..., n + 1, 3)`` of the chain (see ``helpers.chain_fk``)."""
    return chain_fk(root, bones, rotations_local)[1]


def rest_positions(root, bones):
    return np.concatenate([root[None], root + np.cumsum(bones, axis=0)])


def bone_lengths(p):
    return np.linalg.norm(np.diff(np.asarray(p, np.float64), axis=-2), axis=-1)


def reachable_problem(rng, batch, n=None):
    n = int(rng.integers(3, 7)) if n is None else n
    root, bones = random_chain(rng, n)
    target = chain_positions(root, bones, random_quats(rng, batch + (n,)))[..., -1, :]
    return rest_positions(root, bones), target, bones


# ---------------------------------------------------------------------------------------
# 3D CCD, position level


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
def test_ccd_reaches_reachable_targets(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    pos, target, bones = reachable_problem(rng, batch)
    pos_b = np.broadcast_to(pos, batch + pos.shape).astype(dtype)
    opts = CCDOptions(max_iterations=2000, tolerance=1e-3)
    res = ccd(pos_b, target.astype(dtype), opts)
    L = np.linalg.norm(bones, axis=-1).sum()
    assert res.positions_world.dtype == dtype and res.rotations_local.dtype == dtype
    assert res.positions_world.shape == batch + pos.shape
    assert res.reached.shape == res.error.shape == res.iterations.shape == batch
    assert res.reached.all()
    end = res.positions_world[..., -1, :].astype(np.float64)
    dist = np.linalg.norm(end - target, axis=-1)
    assert (dist <= 1e-3 * L * (1 + 1e-3)).all()
    np.testing.assert_allclose(res.error, dist, rtol=1e-4, atol=1e-6 * L)
    rtol = 1e-9 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(bone_lengths(res.positions_world), bone_lengths(pos_b), rtol=rtol)
    np.testing.assert_array_equal(res.positions_world[..., 0, :], pos_b[..., 0, :])
    # rotations_local reproduce the positions through FK of the identity-framed chain
    again = chain_positions(
        pos.astype(np.float64)[0], bones, res.rotations_local.astype(np.float64)
    )
    np.testing.assert_allclose(
        again, res.positions_world, atol=1e-9 if dtype == np.float64 else 1e-4
    )


@FAST
@given(batch=BATCHES.filter(lambda b: b != ()), dtype=dtypes, seed=seeds)
def test_ccd_batch_equals_loop(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 6))
    pos = np.stack(
        [rest_positions(*random_chain(rng, n)) for _ in range(int(np.prod(batch)))]
    ).reshape(batch + (n + 1, 3))
    target = rng.normal(size=batch + (3,)) * 1.5
    opts = CCDOptions(max_iterations=50, max_step=0.7)
    res = ccd(pos.astype(dtype), target.astype(dtype), opts)
    for idx in np.ndindex(*batch):
        one = ccd(pos[idx].astype(dtype), target[idx].astype(dtype), opts)
        np.testing.assert_array_equal(one.positions_world, res.positions_world[idx])
        np.testing.assert_array_equal(one.rotations_local, res.rotations_local[idx])
        assert one.error == res.error[idx] and one.iterations == res.iterations[idx]
        assert one.reached == res.reached[idx]


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
def test_ccd_constraints_respected(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = 4
    root, bones = random_chain(rng, n)
    pos = rest_positions(root, bones)
    cons = [
        Cone(0.6),
        Hinge(rng.normal(size=3), -0.8, 1.2),
        TwistLimit(-0.3, 0.3),
        AngleLimit2D(-1.0, 0.5, normal=tuple(rng.normal(size=3))),
    ]
    target = root + rng.normal(size=batch + (3,)) * 2
    res = ccd(pos.astype(dtype), target.astype(dtype), CCDOptions(max_iterations=60),
              constraints=cons)  # fmt: skip
    assert np.isfinite(res.positions_world).all()
    rl = res.rotations_local.astype(np.float64)
    for i, c in enumerate(cons):
        parent = bones[i - 1] if i > 0 else None
        v = c.violation(rl[..., i, :], bones[i], parent)
        assert (v <= (1e-9 if dtype == np.float64 else 2e-3)).all(), (i, v.max())
    rtol = 1e-9 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(
        bone_lengths(res.positions_world), np.broadcast_to(bone_lengths(pos), batch + (n,)),
        rtol=rtol,
    )  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ccd_unreachable_points_straight(dtype):
    rng = np.random.default_rng(3)
    root, bones = random_chain(rng, 5)
    pos = rest_positions(root, bones)
    L = np.linalg.norm(bones, axis=-1).sum()
    dirs = rng.normal(size=(8, 3))
    dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
    target = root + dirs * 1.5 * L
    res = ccd(pos.astype(dtype), target.astype(dtype), CCDOptions(max_iterations=500))
    assert not res.reached.any()
    p = res.positions_world.astype(np.float64) - root
    along = np.einsum("bjk,bk->bj", p, dirs)
    np.testing.assert_allclose(along[:, -1], L, rtol=2e-3)
    off = np.linalg.norm(p - along[..., None] * dirs[:, None], axis=-1)
    assert (off <= 2e-3 * L).all()
    np.testing.assert_allclose(res.error, 0.5 * L, rtol=5e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", [0.55, -0.5, 0.999])
def test_ccd_straight_chain_target_on_its_line(dtype, where):
    pos = np.zeros((7, 3))
    pos[:, 0] = np.arange(7)
    target = np.array([6.0 * where, 0.0, 0.0])
    res = ccd(pos.astype(dtype), target.astype(dtype), CCDOptions(max_iterations=500))
    assert np.isfinite(res.positions_world).all()
    assert res.reached
    bent = CCDOptions(max_iterations=500, bend_axis=(0, 1, 0))
    res = ccd(pos.astype(dtype), target.astype(dtype), bent)
    assert res.reached
    assert np.abs(res.positions_world[:, 1]).max() < 1e-5  # bent about +Y: stays in XZ


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ccd_degenerate_inputs_finite(dtype):
    pos = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 0]], dtype=dtype)
    for target in ([0, 0, 0], [1, 0, 0], [0.5, 0.5, 0.5], [5, 5, 5]):
        res = ccd(pos, np.array(target, dtype=dtype))
        assert np.isfinite(res.positions_world).all() and np.isfinite(res.error)
        assert np.isfinite(res.rotations_local).all()
        np.testing.assert_allclose(bone_lengths(res.positions_world), [1, 0, 1, 0], atol=1e-5)
    zero = np.zeros((4, 3), dtype=dtype)
    res = ccd(zero, np.ones(3, dtype=dtype))
    assert np.isfinite(res.positions_world).all() and not res.reached


def test_ccd_max_step_limits_each_turn():
    pos = np.zeros((4, 3))
    pos[:, 0] = np.arange(4)
    res = ccd(pos, [0.0, 2.5, 0.0], CCDOptions(max_iterations=1, max_step=0.1))
    angles = 2 * np.arctan2(np.linalg.norm(res.rotations_local[:, :3], axis=-1),
                            np.abs(res.rotations_local[:, 3]))  # fmt: skip
    assert angles.max() <= 0.1 + 1e-12


def test_ccd_input_errors():
    pos = np.zeros((4, 3))
    pos[:, 0] = np.arange(4)
    # (the errors every solver shares: tests/test_solver_contract.py)
    with pytest.raises(InputError, match="constraints"):
        ccd(pos, [1, 1, 1], constraints=[None])
    for kwargs in ({"max_iterations": -1}, {"max_iterations": 1.5}, {"tolerance": -1},
                   {"tolerance": np.nan}, {"max_step": 0}, {"bend_axis": (0, 0, 0)}):  # fmt: skip
        with pytest.raises(InputError):
            CCDOptions(**kwargs)
    with pytest.raises(InputError, match="options"):
        ccd(pos, [1, 1, 1], options={"max_iterations": 3})


def test_ccd_zero_iterations_measures_start():
    pos = np.zeros((3, 3))
    pos[:, 0] = [0, 1, 2]
    res = ccd(pos, [2.0, 0, 0], CCDOptions(max_iterations=0))
    assert res.reached and res.iterations == 0
    res = ccd(pos, [0.0, 2.0, 0], CCDOptions(max_iterations=0))
    assert not res.reached and res.iterations == 0 and res.error == pytest.approx(2 * 2**0.5)
    np.testing.assert_array_equal(res.positions_world, pos)


# ---------------------------------------------------------------------------------------
# 3D CCD, pose level


def branchy_skeleton(rng):
    """root - spine - a - b - c - d - tip, with a side branch off spine and a child of d."""
    names = ("root", "spine", "a", "b", "c", "d", "side", "side2", "tip")
    parents = [-1, 0, 1, 2, 3, 4, 1, 6, 5]
    offsets = rng.normal(size=(9, 3))
    offsets[0] = 0
    return Skeleton(names, parents, offsets)


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
@example(batch=(4,), dtype=np.float32, seed=20194)  # CCD's slowest here: 2176 sweeps
def test_solve_ccd_pose_level(batch, dtype, seed):
    """Pose-level CCD: the effector reaches targets the chain can reach, the result's
    motion reproduces its positions, and nothing off the chain moves. CCD converges slowly
    on some chains (a short middle bone): over seeds 0-2999 (12,000 problems) the median
    takes 7 sweeps, the 99th percentile 146, the slowest 1,335, so the cap is 5,000."""
    rng = np.random.default_rng(seed)
    sk = branchy_skeleton(rng)
    chain = Chain.between(sk, "a", "d")
    J = sk.num_joints
    rot = random_quats(rng, batch + (J,))
    pos = np.broadcast_to(sk.offsets, batch + (J, 3)).copy()
    motion = Motion(sk, rot.astype(dtype), pos.astype(dtype))
    # targets: the effector after random chain rotations
    rot2 = rot.copy()
    rot2[..., list(chain.joints[:-1]), :] = random_quats(rng, batch + (3,))
    target = fk(sk.parents, rot2, pos)[1][..., chain.joints[-1], :]
    res = solve_ccd(motion, chain, target.astype(dtype), CCDOptions(max_iterations=5000))
    L = np.linalg.norm(sk.offsets[list(chain.joints[1:])], axis=-1).sum()
    assert res.motion.dtype == dtype and res.motion.batch_shape == batch
    assert res.reached.all()
    rw_old, pw_old = motion.fk()
    rw_new, pw_new = res.motion.fk()
    end = pw_new[..., chain.joints[-1], :].astype(np.float64)
    assert (np.linalg.norm(end - target, axis=-1) <= 1e-3 * L * 1.001 + 1e-6).all()
    np.testing.assert_allclose(
        res.positions_world,
        pw_new[..., list(chain.joints), :],
        atol=1e-4 if dtype == np.float32 else 1e-9,
    )
    others = [j for j in range(J) if j not in chain.joints]
    np.testing.assert_array_equal(
        res.motion.rotations_local[..., others, :], motion.rotations_local[..., others, :]
    )
    np.testing.assert_array_equal(res.motion.positions_local, motion.positions_local)
    # the effector keeps its world rotation (default keep_effector_world)
    a = rw_new[..., chain.joints[-1], :].astype(np.float64)
    b = rw_old[..., chain.joints[-1], :].astype(np.float64)
    assert np.minimum(np.abs(a - b), np.abs(a + b)).max() <= (1e-9 if dtype == np.float64 else 1e-4)
    np.testing.assert_array_equal(
        res.rotations_local, res.motion.rotations_local[..., list(chain.joints[:-1]), :]
    )


def test_solve_ccd_broadcasts_pose_over_targets_and_uses_constraints():
    rng = np.random.default_rng(0)
    sk = branchy_skeleton(rng)
    cons = (Cone(0.5), Hinge((0, 0, 1), -1, 1), None)
    chain = Chain.between(sk, "a", "d", constraints=cons)
    motion = Motion.rest(sk)
    targets = rng.normal(size=(5, 3))
    res = solve_ccd(motion, chain, targets)
    assert res.motion.batch_shape == (5,) and res.positions_world.shape == (5, 4, 3)
    bones = sk.offsets[list(chain.joints[1:])]
    for i, c in enumerate(cons):
        if c is not None:
            parent = bones[i - 1] if i > 0 else None
            assert (c.violation(res.rotations_local[:, i], bones[i], parent) <= 1e-9).all()
    with pytest.raises(InputError, match="target_world"):
        solve_ccd(motion, chain, [np.nan, 0, 0])
    with pytest.raises(HierarchyError):
        solve_ccd(motion, Chain((2, 4, 5)), [0, 0, 0])
    with pytest.raises(InputError, match="chain"):
        solve_ccd(motion, (2, 3, 4), [0, 0, 0])


def test_solve_ccd_root_chain_and_keep_local():
    sk = Skeleton(("a", "b", "c", "d"), [-1, 0, 1, 2], [[1, 2, 3], [1, 0, 0], [1, 0, 0], [1, 0, 0]])
    motion = Motion.rest(sk)
    res = solve_ccd(motion, Chain.between(sk, "a", "d"), [1.0, 3.5, 3.5],
                    CCDOptions(keep_effector_world=False))  # fmt: skip
    assert res.reached
    np.testing.assert_array_equal(res.motion.rotations_local[3], [0, 0, 0, 1])
    np.testing.assert_array_equal(res.positions_world[0], [1, 2, 3])


# ---------------------------------------------------------------------------------------
# planar CCD


def disc_targets(rng, shape, radius):
    a = rng.uniform(0, 2 * np.pi, size=shape)
    r = radius * np.sqrt(rng.uniform(0, 1, size=shape))
    return np.stack([r * np.cos(a), r * np.sin(a)], axis=-1)


def planar_chain(rng, n):
    ang = np.cumsum(rng.uniform(-1, 1, size=n))
    lens = rng.uniform(0.3, 1.5, size=n)
    b = np.stack([lens * np.cos(ang), lens * np.sin(ang)], -1)
    return np.concatenate([np.zeros((1, 2)), np.cumsum(b, 0)]), lens


def planar_fk(lens, angles, phi_ref=0.0):
    """Planar FK; the root angle is measured from ``phi_ref`` (its input direction)."""
    phi = phi_ref + np.cumsum(angles, axis=-1)
    b = np.stack([lens * np.cos(phi), lens * np.sin(phi)], axis=-1)
    zero = np.zeros(angles.shape[:-1] + (1, 2))
    return np.concatenate([zero, np.cumsum(b, axis=-2)], axis=-2)


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds, dim=st.sampled_from([2, 3]))
def test_ccd_2d_reaches_reachable_targets(batch, dtype, seed, dim):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 7))
    pos, lens = planar_chain(rng, n)
    target = planar_fk(lens, rng.uniform(-np.pi, np.pi, size=batch + (n,)))[..., -1, :]
    if dim == 3:
        pos = np.concatenate([pos, np.zeros((n + 1, 1))], -1)
        target = np.concatenate([target, np.ones(batch + (1,))], -1)  # z ignored
    res = ccd_2d(pos.astype(dtype), target.astype(dtype), CCD2DOptions(max_iterations=2000))
    assert isinstance(res, CCD2DResult)
    assert res.positions_world.shape == batch + (n + 1, dim) and res.angles.shape == batch + (n,)
    assert res.positions_world.dtype == dtype and res.angles.dtype == dtype
    assert res.reached.all()
    end = res.positions_world[..., -1, :2].astype(np.float64)
    assert (np.linalg.norm(end - target[..., :2], axis=-1) <= 1e-3 * lens.sum() * 1.001).all()
    rtol = 1e-9 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(
        bone_lengths(res.positions_world), np.broadcast_to(lens, batch + (n,)), rtol=rtol
    )
    np.testing.assert_array_equal(res.positions_world[..., 0, :], np.zeros(batch + (dim,)))
    if dim == 3:
        assert (res.positions_world[..., 2] == 0).all()
    # the angles reproduce the positions; the root's is measured from its input direction
    atol = 1e-9 if dtype == np.float64 else 1e-4
    phi = np.arctan2(*np.diff(pos[:, :2], axis=0)[:, ::-1].T)
    np.testing.assert_allclose(planar_fk(lens, res.angles.astype(np.float64), phi[0]),
                               res.positions_world[..., :2], atol=atol)  # fmt: skip
    # rotations_local: a turn about +Z by the change of angle
    assert np.abs(res.rotations_local[..., :2]).max() == 0
    start = np.diff(np.concatenate([[phi[0]], phi]))
    turn = 2 * np.arctan2(res.rotations_local[..., 2], res.rotations_local[..., 3])
    diff = np.angle(np.exp(1j * (res.angles - start - turn)))
    assert np.abs(diff).max() < (1e-9 if dtype == np.float64 else 1e-4)


@FAST
@given(batch=BATCHES, dtype=dtypes, seed=seeds)
def test_ccd_2d_limits_respected_and_batch_equals_loop(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    n = 5
    pos, lens = planar_chain(rng, n)
    lo = rng.uniform(-170, 0, size=n)
    hi = lo + rng.uniform(0, 180, size=n)
    limits = np.stack([lo, hi], -1)
    target = disc_targets(rng, batch, lens.sum() * 1.2)
    opts = CCD2DOptions(max_iterations=80, max_step=math.radians(40))
    res = ccd_2d(pos.astype(dtype), target.astype(dtype), opts, limits_deg=limits)
    deg = res.angles_deg.astype(np.float64)
    slack = 1e-9 if dtype == np.float64 else 1e-3
    assert (deg >= lo - slack).all() and (deg <= hi + slack).all()
    # the same limits as AngleLimit2D objects give the same result
    cons = [AngleLimit2D.degrees(a, b) for a, b in limits]
    res2 = ccd_2d(pos.astype(dtype), target.astype(dtype), opts, constraints=cons)
    np.testing.assert_allclose(res2.angles, res.angles, atol=1e-12 if dtype == np.float64 else 1e-5)
    for idx in np.ndindex(*batch):
        one = ccd_2d(pos.astype(dtype), target[idx].astype(dtype), opts, limits_deg=limits)
        np.testing.assert_array_equal(one.positions_world, res.positions_world[idx])
        np.testing.assert_array_equal(one.angles, res.angles[idx])
        assert one.iterations == res.iterations[idx] and one.reached == res.reached[idx]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ccd_2d_edge_cases(dtype):
    line = np.array([[0, 0], [1, 0], [2, 0], [3, 0]], dtype=dtype)
    for x in (1.5, -1.5, 2.9):  # straight ahead (nearer) and behind: must bend
        res = ccd_2d(line, np.array([x, 0], dtype=dtype), CCD2DOptions(max_iterations=300))
        assert res.reached, x
    res = ccd_2d(line, np.array([10.0, 0.0], dtype=dtype))  # already pointing at it
    assert not res.reached and res.iterations == 1
    np.testing.assert_allclose(res.positions_world, line)
    res = ccd_2d(line, np.array([0.0, 10.0], dtype=dtype))  # unreachable: points at it
    np.testing.assert_allclose(res.positions_world[:, 0], 0, atol=2e-3)
    np.testing.assert_allclose(res.angles[0], np.pi / 2, atol=2e-3)
    for target in ([0, 0], [1, 0]):
        res = ccd_2d(line, np.array(target, dtype=dtype))
        assert np.isfinite(res.positions_world).all() and np.isfinite(res.angles).all()
    dup = np.array([[0, 0], [1, 0], [1, 0], [1, 1]], dtype=dtype)
    res = ccd_2d(dup, np.array([0.5, 1.2], dtype=dtype))
    assert res.reached and np.isfinite(res.angles).all()
    # bend direction and a limit that blocks it
    cw = ccd_2d(line, np.array([1.5, 0], dtype=dtype), CCD2DOptions(bend_axis=(0, 0, -1)))
    assert cw.reached
    blocked = ccd_2d(line, np.array([1.5, 0], dtype=dtype),
                     limits_deg=[[0, 90], [-150, 0], [-150, 0]])  # fmt: skip
    assert blocked.reached and (blocked.angles[1:] <= 1e-6).all()
    # a start angle outside its limit goes to the nearer limit first
    res = ccd_2d(line, np.array([3.0, 0], dtype=dtype), CCD2DOptions(max_iterations=0),
                 limits_deg=[[10, 20], [-180, 180], [-180, 180]])  # fmt: skip
    np.testing.assert_allclose(res.angles_deg[0], 10, rtol=1e-5)


def test_ccd_2d_input_errors():
    line = np.array([[0, 0], [1, 0], [2, 0]], dtype=float)
    # (the errors every solver shares: tests/test_solver_contract.py)
    with pytest.raises(InputError, match="limits_deg"):
        ccd_2d(line, [1, 1], limits_deg=[[0, 10]])
    with pytest.raises(InputError, match="limits_deg"):
        ccd_2d(line, [1, 1], limits_deg=[[10, 0], [0, 10]])
    with pytest.raises(InputError, match="not both"):
        ccd_2d(line, [1, 1], limits_deg=[[0, 10]] * 2, constraints=[None, None])
    with pytest.raises(InputError, match="AngleLimit2D"):
        ccd_2d(line, [1, 1], constraints=[Cone(0.3), None])
    with pytest.raises(InputError, match="normal"):
        ccd_2d(line, [1, 1], constraints=[AngleLimit2D(0, 1, normal=(1, 0, 0)), None])
    with pytest.raises(InputError, match="bend_axis"):
        CCD2DOptions(bend_axis=(1, 0, 0))
    with pytest.raises(InputError, match="bend_axis"):
        CCD2DOptions(bend_axis=(0, 0, 0))


def test_ccd_2d_clockwise_limit_normal():
    line = np.array([[0, 0], [1, 0], [2, 0]], dtype=float)
    cons = [AngleLimit2D(-0.2, 0.5, normal=(0, 0, -1)), None]
    res = ccd_2d(line, [0.0, -2.0], CCD2DOptions(max_iterations=200), constraints=cons)
    # measured clockwise, [-0.2, 0.5] is [-0.5, 0.2] counter-clockwise
    assert -0.5 - 1e-12 <= res.angles[0] <= 0.2 + 1e-12
