"""Analytic two-bone IK: the ozz-animation test cases, properties, SoA path and pose level.

The ozz cases (``/work/shared/reference/ozz_two_bone_cases.md``) give expected *local*
corrections ``qs`` (start/root joint) and ``qm`` (mid joint), post-multiplied onto each
joint's local rotation. :func:`ozz_expected_positions` turns them into expected world
positions by applying them to the base pose; position-level solves are compared with those
positions, and pose-level solves (a 3-joint skeleton holding the base pose) are compared
with the quaternions themselves, up to sign, with ozz's tolerance 2e-3.

ozz's ``pole_vector`` is a direction from the start joint; ours is a world point. The base
pose's start joint is at the origin, so the same numbers serve (under a parent transform
``P`` the pole point is ``P`` applied to the point, which is the start plus ``P``'s
direction).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_quat_close
from hypothesis import given
from hypothesis import strategies as st

from ikrig.errors import HierarchyError, InputError
from ikrig.math import quat_conj, quat_from_axis_angle, quat_mul, quat_rotate
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.two_bone import (
    PARALLEL_MIN,
    TwoBoneOptions,
    solve_two_bone,
    two_bone_positions,
    two_bone_positions_soa,
)

SQ = math.sqrt(0.5)
I = (0.0, 0.0, 0.0, 1.0)  # noqa: E741
X, Y, Z = np.eye(3)
BATCH_SHAPES = [(), (1,), (5,), (3, 1, 2)]
DTYPES = [np.float32, np.float64]
SEEDS = st.integers(0, 2**32 - 1)


def rot(axis, degrees):
    """Unit quaternion xyzw of a rotation by ``degrees`` about ``axis``."""
    return quat_from_axis_angle(np.asarray(axis, float), np.radians(degrees))


# --------------------------------------------------------------------------------------
# The ozz base pose and helpers
# --------------------------------------------------------------------------------------

# start at the origin (identity), mid at (0,1,0) rotated +90 deg about Z, end at (1,1,0)
BASE_ROT_W = np.array([I, rot(Z, 90), I])
BASE_POS_W = np.array([[0.0, 0, 0], [0, 1, 0], [1, 1, 0]])


def base_motion(rot_w=BASE_ROT_W, pos_w=BASE_POS_W, parent=None):
    """A Motion of a 3-joint chain (or 4 with a parent joint) holding a world pose.

    ``parent``: optional ``(rotation xyzw, translation)`` of a parent joint above the chain;
    the chain's world pose is then ``parent * (rot_w, pos_w)``.
    """
    rot_w, pos_w = np.asarray(rot_w, float), np.asarray(pos_w, float)
    if parent is not None:
        pq, pt = np.asarray(parent[0], float), np.asarray(parent[1], float)
        rot_w = quat_mul(pq, rot_w)
        pos_w = pt + quat_rotate(pq, pos_w)
        names, parents = ("parent", "start", "mid", "end"), [-1, 0, 1, 2]
        rot_w = np.concatenate([pq[None], rot_w])
        pos_w = np.concatenate([pt[None], pos_w])
    else:
        names, parents = ("start", "mid", "end"), [-1, 0, 1]
    sk = Skeleton(names, parents, np.zeros((len(names), 3)))
    return Motion.from_world(sk, rot_w, pos_w)


def ozz_expected_positions(qs, qm, rot_w=BASE_ROT_W, pos_w=BASE_POS_W):
    """World (mid, end) after post-multiplying ozz's local corrections onto the pose.

    ``Start' = Start R(qs)``, ``Mid' = Start' (Start^-1 Mid) R(qm)``, ``End' = Mid' (Mid^-1 End)``.
    """
    r0, r1 = rot_w[0], rot_w[1]
    new_r0 = quat_mul(r0, qs)
    mid_local_t = quat_rotate(quat_conj(r0), pos_w[1] - pos_w[0])
    mid_local_r = quat_mul(quat_conj(r0), r1)
    end_local_t = quat_rotate(quat_conj(r1), pos_w[2] - pos_w[1])
    new_mid = pos_w[0] + quat_rotate(new_r0, mid_local_t)
    new_r1 = quat_mul(quat_mul(new_r0, mid_local_r), qm)
    new_end = new_mid + quat_rotate(new_r1, end_local_t)
    return new_mid, new_end


def local_corrections(motion, result, chain=(0, 1, 2)):
    """Our local corrections ``(qs, qm)``: ``old_local^-1 * new_local`` of start and mid."""
    old, new = motion.rotations_local, result.motion.rotations_local
    qs = quat_mul(quat_conj(old[..., chain[0], :]), new[..., chain[0], :])
    qm = quat_mul(quat_conj(old[..., chain[1], :]), new[..., chain[1], :])
    return qs, qm


def solve_base(target, pole=(0, 1, 0), rot_w=BASE_ROT_W, pos_w=BASE_POS_W, **kw):
    """Solve the base pose at position and pose level; return both results."""
    pos = two_bone_positions(pos_w[0], pos_w[1], pos_w[2], target, pole_world=pole, **kw)
    motion = base_motion(rot_w, pos_w)
    res = solve_two_bone(motion, ("start", "mid", "end"), target, pole_world=pole, **kw)
    return pos, motion, res


def check_ozz_case(target, qs, qm, reached, pole=(0, 1, 0), atol=2e-3, **kw):
    """Compare a solve of the base pose with ozz's expected corrections and status."""
    pos, motion, res = solve_base(target, pole, **kw)
    mid, end = ozz_expected_positions(np.asarray(qs, float), np.asarray(qm, float))
    np.testing.assert_allclose(pos.mid_world, mid, atol=atol)
    np.testing.assert_allclose(pos.end_world, end, atol=atol)
    assert bool(pos.reached) == reached
    assert bool(res.reached) == reached
    our_qs, our_qm = local_corrections(motion, res)
    assert_quat_close(our_qs, qs, atol)
    assert_quat_close(our_qm, qm, atol)
    # forward kinematics of the new pose agrees with the position-level result
    fk = res.motion.positions_world()
    np.testing.assert_allclose(fk[2], pos.end_world, atol=1e-9)
    np.testing.assert_allclose(fk[1], pos.mid_world, atol=1e-9)
    return pos, res


# --------------------------------------------------------------------------------------
# 1. Validation (ozz's JobValidity has no counterpart: here, our own input checks)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"soften": -0.1},
        {"soften": 1.5},
        {"soften": float("nan")},
        {"max_stretch": 0.5},
        {"max_stretch": float("inf")},
        {"tolerance": 0.0},
        {"tolerance": -1.0},
        {"tolerance": "1e-3"},
        {"keep_end_rotation": 1},
    ],
)
def test_options_are_validated(kwargs):
    with pytest.raises(InputError, match=next(iter(kwargs))):
        TwoBoneOptions(**kwargs)


def test_bad_shapes_raise():
    # (the errors every solver shares: tests/test_solver_contract.py)
    with pytest.raises(InputError, match="mid_world"):
        two_bone_positions([0, 0, 0], "abc", [1, 1, 0], [1, 1, 0])
    with pytest.raises(InputError, match="weight"):
        two_bone_positions([0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 0], weight=float("nan"))
    with pytest.raises(InputError, match="twist_angle"):
        two_bone_positions([0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, 0], twist_angle=[np.inf])


@pytest.mark.parametrize("n", [1, PARALLEL_MIN + 3])
@pytest.mark.parametrize(
    "arg", ["root_world", "mid_world", "end_world", "target_world", "pole_world"]
)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_inputs_name_the_argument(n, arg, bad):
    rng = np.random.default_rng(1)
    args = {k: rng.normal(size=(n, 3)) for k in ("root_world", "mid_world", "end_world")}
    args["target_world"] = rng.normal(size=(n, 3))
    args["pole_world"] = rng.normal(size=(n, 3))
    args[arg][n // 2, 1] = bad
    with pytest.raises(InputError, match=arg):
        two_bone_positions(**args)


def test_nonfinite_weight_array_is_named():
    w = np.ones(PARALLEL_MIN + 1)
    w[5] = np.nan
    n = len(w)
    with pytest.raises(InputError, match="weight"):
        two_bone_positions(np.zeros((n, 3)), [0, 1, 0], [1, 1, 0], [1, 0.5, 0], weight=w)


# --------------------------------------------------------------------------------------
# 2. Start-joint correction under six parent transforms (ozz StartJointCorrection)
# --------------------------------------------------------------------------------------

PARENTS = {
    "identity": np.eye(4),
    "translation": np.array([[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1.0]]),
    "rotation_y_60": np.block(
        [
            [
                np.array(
                    [[0.5, 0, SQ * math.sqrt(1.5)], [0, 1, 0], [-SQ * math.sqrt(1.5), 0, 0.5]]
                ),
                np.zeros((3, 1)),
            ],
            [np.zeros((1, 3)), np.ones((1, 1))],
        ]
    ),  # fmt: skip
    "scale_2": np.diag([2.0, 2, 2, 1]),
    "scale_1_2_1": np.diag([1.0, 2, 1, 1]),
    "mirror_-3": np.diag([-3.0, -3, -3, 1]),
}
START_CASES = [  # target before P, expected qs, expected qm
    ((1, 1, 0), I, I),
    ((0, 1, 1), (0, -SQ, 0, SQ), I),  # "90": Rot(Y, -90)
    ((0, 1, -1), (0, SQ, 0, SQ), I),  # "270": Rot(Y, +90)
]


def apply(P, p):
    p = np.asarray(p, float)
    return p @ P[:3, :3].T + P[:3, 3]


@pytest.mark.parametrize("parent", list(PARENTS))
@pytest.mark.parametrize("target, qs, qm", START_CASES)
def test_start_correction_under_parent_transforms(parent, target, qs, qm):
    P = PARENTS[parent]
    mid, end = ozz_expected_positions(np.asarray(qs, float), np.asarray(qm, float))
    pts = apply(P, BASE_POS_W)
    r = two_bone_positions(pts[0], pts[1], pts[2], apply(P, target), apply(P, (0, 1, 0)))
    np.testing.assert_allclose(r.mid_world, apply(P, mid), atol=1e-9)
    np.testing.assert_allclose(r.end_world, apply(P, target), atol=1e-9)
    np.testing.assert_allclose(r.end_world, apply(P, end), atol=1e-9)
    assert bool(r.reached)


@pytest.mark.parametrize("parent", ["identity", "translation", "rotation_y_60"])
@pytest.mark.parametrize("target, qs, qm", START_CASES)
def test_start_correction_local_quaternions_under_rigid_parents(parent, target, qs, qm):
    # rigid parents can be a joint of the skeleton: the local corrections must not change
    P = PARENTS[parent]
    pq = quat_from_axis_angle(Y, math.radians(60)) if parent == "rotation_y_60" else I
    motion = base_motion(parent=(pq, P[:3, 3]))
    np.testing.assert_allclose(motion.positions_world()[1:], apply(P, BASE_POS_W), atol=1e-12)
    res = solve_two_bone(
        motion, ("start", "mid", "end"), apply(P, target), pole_world=apply(P, (0, 1, 0))
    )
    our_qs, our_qm = local_corrections(motion, res, chain=(1, 2, 3))
    assert_quat_close(our_qs, qs, 2e-3)
    assert_quat_close(our_qm, qm, 2e-3)
    assert bool(res.reached)


# --------------------------------------------------------------------------------------
# 3. Pole vector (ozz Pole)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pole, target, qs",
    [
        ((0, 1, 0), (1, 1, 0), I),
        ((0, 0, 1), (1, 0, 1), (SQ, 0, 0, SQ)),  # Rot(X, +90)
        ((0, 0, -1), (1, 0, -1), (-SQ, 0, 0, SQ)),  # Rot(X, -90)
        ((1, 0, 0), (1, -1, 0), (0, 0, -SQ, SQ)),  # Rot(Z, -90)
        ((-1, 0, 0), (-1, 1, 0), (0, 0, SQ, SQ)),  # Rot(Z, +90)
    ],
)
def test_pole(pole, target, qs):
    check_ozz_case(target, qs, I, True, pole=pole)


# --------------------------------------------------------------------------------------
# 4. Zero scale and 12. zero-length bones
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [(0, 0, 0), (1, 0, 0)])
def test_zero_length_chain_is_left_unchanged(target):
    # ozz ZeroScale (all joints scaled to 0: every bone has zero length, target (0,0,0))
    # and ZeroLengthBoneChain (all joints at the origin, target (1,0,0))
    z = np.zeros(3)
    r = two_bone_positions(z, z, z, target, pole_world=(0, 1, 0))
    assert_quat_close(r.root_rotation_world, I, 1e-12)
    assert_quat_close(r.mid_rotation_world, I, 1e-12)
    assert not bool(r.reached)
    np.testing.assert_array_equal(r.mid_world, z)
    np.testing.assert_array_equal(r.end_world, z)


def test_one_zero_length_bone_is_left_unchanged():
    r = two_bone_positions([0, 0, 0], [0, 1, 0], [0, 1, 0], [0.5, 0.5, 0])
    assert not bool(r.reached)
    np.testing.assert_array_equal(r.end_world, [0, 1, 0])
    assert_quat_close(r.root_rotation_world, I, 1e-12)


# --------------------------------------------------------------------------------------
# 5. Soften (ozz Soften)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "soften, target, reached",
    [
        (1.0, (2, 0, 0), True),
        (0.5, (1.0, 0, 0), True),  # d = 0.5 L: where softening starts
        (0.5, (0.8, 0, 0), True),
        (0.5, (1.2, 0, 0), False),
        (0.0, (1.2, 0, 0), False),
        (0.5, (2, 0, 0), False),
        (1.0, (3, 0, 0), False),
    ],
)
def test_soften(soften, target, reached):
    opts = TwoBoneOptions(soften=soften)
    pos, motion, res = solve_base(target, options=opts)
    assert bool(pos.reached) == reached
    assert bool(res.reached) == reached
    # the end always lies on the root->target line, at the softened distance
    d = np.linalg.norm(target)
    L, da = 2.0, 2.0 * soften
    if d > da and soften < 1:
        alpha = (d - da) / (L - da)
        expected = da + (L - da) * (1 - 3**4 / (alpha + 3) ** 4)
    else:
        expected = min(d, L)
    np.testing.assert_allclose(pos.end_world, np.asarray(target) / d * expected, atol=1e-12)
    np.testing.assert_allclose(res.motion.positions_world()[2], pos.end_world, atol=1e-9)


def test_soften_full_stretch_quaternions():
    # soften 1 and target (2,0,0): the knee opens 90 deg and the hip swings -90 deg about Z
    check_ozz_case((2, 0, 0), (0, 0, -SQ, SQ), (0, 0, SQ, SQ), True)


def test_softened_reach_never_gets_to_full_extension():
    opts = TwoBoneOptions(soften=0.9)
    d = np.linspace(1.9, 50, 200)
    targets = d[:, None] * X
    r = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], targets, options=opts)
    reach = np.linalg.norm(r.end_world, axis=-1)
    assert np.all(reach < 2.0) and np.all(np.diff(reach) > 0)
    assert not r.reached.any()


# --------------------------------------------------------------------------------------
# 6. Twist (ozz Twist)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "twist, qs",
    [
        (0.0, I),
        (math.pi / 2, (0.5, 0.5, 0, SQ)),  # Rot((1,1,0)/sqrt2, +90)
        (math.pi, (-SQ, -SQ, 0, 0)),  # Rot((1,1,0)/sqrt2, -180)
        (2 * math.pi, I),
    ],
)
def test_twist(twist, qs):
    pos, res = check_ozz_case((1, 1, 0), qs, I, True, twist_angle=twist)
    np.testing.assert_allclose(pos.end_world, [1, 1, 0], atol=1e-12)


def test_twist_array_per_element():
    twists = np.array([0.0, math.pi / 2, math.pi, 2 * math.pi])
    r = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], [1, 1, 0], (0, 1, 0), 1.0, twists)
    for k, t in enumerate(twists):
        one = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], [1, 1, 0], (0, 1, 0), 1.0, t)
        np.testing.assert_allclose(r.mid_world[k], one.mid_world, atol=1e-12)
        assert_quat_close(r.root_rotation_world[k], one.root_rotation_world, 1e-12)


# --------------------------------------------------------------------------------------
# 7. Weight (ozz Weight)
# --------------------------------------------------------------------------------------

QS_FULL, QM_FULL = (0, 0, -SQ, SQ), (0, 0, SQ, SQ)  # Rot(Z, -90), Rot(Z, +90)


@pytest.mark.parametrize(
    "weight, qs, qm, reached, atol",
    [
        (1.0, QS_FULL, QM_FULL, True, 2e-3),
        (1.1, QS_FULL, QM_FULL, True, 2e-3),  # clamped to 1
        (0.0, I, I, False, 1e-2),
        (-0.1, I, I, False, 1e-2),  # clamped to 0
        (0.5, (0, 0, -0.38268343, 0.92387953), (0, 0, 0.38268343, 0.92387953), False, 2e-3),
    ],
)
def test_weight(weight, qs, qm, reached, atol):
    pos, res = check_ozz_case((2, 0, 0), qs, qm, reached, weight=weight, atol=atol)
    if weight == 0.5:  # half-angle: the end stops at (1.7071, 0.7071, 0) (check script)
        np.testing.assert_allclose(pos.end_world, [1 + SQ, SQ, 0], atol=1e-9)


def test_weight_array_matches_scalar_weights():
    w = np.array([-0.1, 0.0, 0.25, 0.5, 1.0, 1.1])
    r = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], [2, 0, 0], weight=w)
    for k, wk in enumerate(w):
        one = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], [2, 0, 0], weight=wk)
        np.testing.assert_allclose(r.end_world[k], one.end_world, atol=1e-12)
        assert_quat_close(r.mid_rotation_world[k], one.mid_rotation_world, 1e-12)


# --------------------------------------------------------------------------------------
# 8. Pole aligned with the target (ozz PoleTargetAlignment)
# --------------------------------------------------------------------------------------


def test_pole_aligned_with_target_keeps_the_bend_plane():
    # pole and current mid both on the root->target line: ozz leaves qs unchecked; we keep
    # the current bend plane and direction (normal of root, mid, end = -Z), so the knee
    # goes to -X and the result equals the slightly offset case below
    pos, motion, res = solve_base((0, math.sqrt(2), 0))
    assert bool(pos.reached) and bool(res.reached)
    np.testing.assert_allclose(pos.mid_world, [-SQ, SQ, 0], atol=1e-12)
    _, qm = local_corrections(motion, res)
    assert_quat_close(qm, I, 2e-3)


def test_pole_slightly_off_the_target_line():
    check_ozz_case((0.001, math.sqrt(2), 0), (0, 0, 0.38268343, 0.92387953), I, True)


def test_unreachable_target_along_the_pole():
    pos, motion, res = solve_base((0, 3, 0))
    assert not bool(pos.reached) and not bool(res.reached)
    np.testing.assert_allclose(pos.mid_world, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(pos.end_world, [0, 2, 0], atol=1e-12)
    _, qm = local_corrections(motion, res)
    assert_quat_close(qm, (0, 0, SQ, SQ), 2e-3)


# --------------------------------------------------------------------------------------
# 9. Mid axis (ozz MidAxis). ozz's mid_axis (the knee's hinge axis in mid-joint space) has
# no counterpart in our API: the bend direction comes from the pole and the current bend
# plane. The cases are re-expressed positionally.
# --------------------------------------------------------------------------------------


def test_mid_axis_cases_positionally():
    # mid_axis (0,0,1) and (0,0,-1), end already on the target: ozz flips hip and knee by
    # 180 deg for the negated axis, which leaves every joint where it was. Our solve leaves
    # the pose alone (identity corrections): the same positions.
    check_ozz_case((1, 1, 0), I, I, True)
    mid, end = ozz_expected_positions(np.array([0, 1.0, 0, 0]), np.array([0, 0, 1.0, 0]))
    np.testing.assert_allclose(mid, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(end, [1, 1, 0], atol=1e-12)


def test_straight_chain_bends_toward_the_pole():
    # ozz: chain straight along +Y (end at (0,2,0)), target (1,1,0): qs = I and
    # qm = Rot(Z, -90) for mid_axis +Z. Here the pole +Y gives the same bend.
    pos_w = np.array([[0.0, 0, 0], [0, 1, 0], [0, 2, 0]])
    pos, motion, res = solve_base((1, 1, 0), pos_w=pos_w)
    np.testing.assert_allclose(pos.mid_world, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(pos.end_world, [1, 1, 0], atol=1e-12)
    qs, qm = local_corrections(motion, res)
    assert_quat_close(qs, I, 2e-3)
    assert_quat_close(qm, (0, 0, -SQ, SQ), 2e-3)
    np.testing.assert_allclose(res.motion.positions_world()[2], [1, 1, 0], atol=1e-9)


# --------------------------------------------------------------------------------------
# 10. Aligned joints and target (ozz AlignedJointsAndTarget)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("target, reached", [((2, 0, 0), True), ((3, 0, 0), False)])
def test_aligned_joints_and_target(target, reached):
    pos_w = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
    rot_w = np.array([I, I, I])
    pos, motion, res = solve_base(target, pos_w=pos_w, rot_w=rot_w)
    assert bool(pos.reached) == reached and bool(res.reached) == reached
    qs, qm = local_corrections(motion, res)
    assert_quat_close(qs, I, 2e-3)
    assert_quat_close(qm, I, 2e-3)
    np.testing.assert_allclose(pos.end_world, [2, 0, 0], atol=1e-12)


# --------------------------------------------------------------------------------------
# 11. Zero start-to-target distance (ozz ZeroLengthStartTarget)
# --------------------------------------------------------------------------------------


def test_target_at_the_root_folds_the_chain():
    pos, motion, res = solve_base((0, 0, 0))
    qs, qm = local_corrections(motion, res)
    assert_quat_close(qs, I, 2e-3)
    assert_quat_close(qm, (0, 0, -SQ, SQ), 2e-3)
    np.testing.assert_allclose(pos.mid_world, [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(pos.end_world, [0, 0, 0], atol=1e-12)
    # ozz does not assert reached here; ours is geometric and the end is on the target
    assert bool(pos.reached)


def test_target_at_the_root_with_unequal_bones():
    # l1 = 1, l2 = 0.5: the closest the end can come is 0.5, along the root->end direction
    r = two_bone_positions(np.zeros(3), [0, 1, 0], [0.5, 1, 0], np.zeros(3))
    assert not bool(r.reached)
    d = np.array([0.5, 1, 0]) / np.linalg.norm([0.5, 1, 0])
    np.testing.assert_allclose(r.mid_world, d, atol=1e-12)
    np.testing.assert_allclose(r.end_world, 0.5 * d, atol=1e-12)


# --------------------------------------------------------------------------------------
# Stretch
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_stretch, reached", [(2.0, True), (1.2, False)])
def test_stretch(max_stretch, reached):
    opts = TwoBoneOptions(max_stretch=max_stretch)
    pos, motion, res = solve_base((3, 0, 0), options=opts)
    s = min(1.5, max_stretch)
    assert bool(pos.reached) == reached and bool(res.reached) == reached
    np.testing.assert_allclose(pos.stretch, s, atol=1e-12)
    np.testing.assert_allclose(pos.end_world, [2 * s, 0, 0], atol=1e-12)
    fk = res.motion.positions_world()
    np.testing.assert_allclose(fk[2], pos.end_world, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(fk[1] - fk[0]), s, atol=1e-12)


def test_stretch_makes_up_for_softening():
    # soften 0.8: da = 1.6, ds = 0.4. The ozz rule starts with slope 4/3, so up to
    # alpha ~ 0.38 (d < 1.75) the softened distance exceeds d and the end lands slightly
    # beyond the target (nothing to stretch); past that, the bones stretch to reach it.
    opts = TwoBoneOptions(soften=0.8, max_stretch=1.5)
    d = np.array([1.7, 1.9, 2.5])
    r = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], d[:, None] * X, options=opts)
    assert r.reached.tolist() == [False, True, True]
    assert r.stretch[0] == 1.0 and 1.0 < r.stretch[1] < r.stretch[2] < 1.5
    assert 1.7 < r.end_world[0, 0] < 1.71


# --------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------


def random_units(rng, shape):
    v = rng.normal(size=tuple(shape) + (3,))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_problem(rng, batch, margin=0.05):
    """Random bent chains with reachable targets and poles off the aim line."""
    root = rng.uniform(-2, 2, size=batch + (3,))
    l1 = rng.uniform(0.2, 1.5, size=batch)
    l2 = rng.uniform(0.2, 1.5, size=batch)
    L = l1 + l2
    mid = root + l1[..., None] * random_units(rng, batch)
    end = mid + l2[..., None] * random_units(rng, batch)
    lo, hi = np.abs(l1 - l2) + margin * L, L - margin * L
    d = lo + (hi - lo) * rng.uniform(size=batch)
    axis = random_units(rng, batch)
    target = root + d[..., None] * axis
    side = random_units(rng, batch)
    side -= axis * np.sum(side * axis, -1, keepdims=True)
    side /= np.linalg.norm(side, axis=-1, keepdims=True)
    pole = (
        root
        + rng.uniform(-1, 2, size=batch + (1,)) * axis
        + rng.uniform(0.3, 2, batch + (1,)) * side
    )
    return root, mid, end, target, pole, l1, l2


@given(st.sampled_from(BATCH_SHAPES), st.sampled_from(DTYPES), SEEDS)
def test_reachable_targets_are_reached(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    root, mid, end, target, pole, l1, l2 = random_problem(rng, batch)
    args = [a.astype(dtype) for a in (root, mid, end, target, pole)]
    r = two_bone_positions(*args)
    assert r.mid_world.dtype == dtype and r.root_rotation_world.dtype == dtype
    assert r.mid_world.shape == batch + (3,) and r.reached.shape == batch
    L = l1 + l2
    tol = 1e-5 if dtype == np.float64 else 2e-4
    m, e = r.mid_world.astype(float), r.end_world.astype(float)
    assert np.all(np.linalg.norm(e - target, axis=-1) <= tol * L)
    assert np.all(np.abs(np.linalg.norm(m - root, axis=-1) - l1) <= tol * L)
    assert np.all(np.abs(np.linalg.norm(e - m, axis=-1) - l2) <= tol * L)
    if dtype == np.float64:
        assert r.reached.all()
    # the mid joint lies in the plane of root, target and pole, on the pole's side
    a = target - root
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    normal = np.cross(a, pole - root)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    assert np.all(np.abs(np.sum((m - root) * normal, -1)) <= 10 * tol * L)
    perp = lambda v: v - a * np.sum(v * a, -1, keepdims=True)  # noqa: E731
    assert np.all(np.sum(perp(m - root) * perp(pole - root), -1) > 0)
    # the deltas turn the old bones into the new ones
    qr, qm = r.root_rotation_world.astype(float), r.mid_rotation_world.astype(float)
    np.testing.assert_allclose(quat_rotate(qr, mid - root), m - root, atol=10 * tol)
    np.testing.assert_allclose(quat_rotate(qm, end - mid), e - m, atol=10 * tol)


@given(st.sampled_from(BATCH_SHAPES), st.sampled_from(DTYPES), SEEDS)
def test_batched_equals_single_solves(batch, dtype, seed):
    rng = np.random.default_rng(seed)
    root, mid, end, target, pole, _, _ = random_problem(rng, batch)
    target = target + rng.normal(size=target.shape)  # some out of reach
    weight = rng.uniform(-0.2, 1.2, size=batch)
    twist = rng.uniform(-4, 4, size=batch)
    args = [a.astype(dtype) for a in (root, mid, end, target, pole)]
    r = two_bone_positions(*args, weight=weight.astype(dtype), twist_angle=twist)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for idx in np.ndindex(*batch):
        one = two_bone_positions(*[a[idx] for a in args], weight=float(weight[idx]),
                                 twist_angle=float(twist[idx]))  # fmt: skip
        np.testing.assert_allclose(r.mid_world[idx], one.mid_world, atol=tol)
        np.testing.assert_allclose(r.end_world[idx], one.end_world, atol=tol)
        np.testing.assert_allclose(r.root_rotation_world[idx], one.root_rotation_world, atol=tol)
        np.testing.assert_allclose(r.mid_rotation_world[idx], one.mid_rotation_world, atol=tol)
        assert r.reached[idx] == one.reached


def test_large_batch_kernel_matches_small_batch_kernel():
    # batches from PARALLEL_MIN up go to the parallel kernel: same numbers
    rng = np.random.default_rng(7)
    n = 3 * PARALLEL_MIN
    root, mid, end, target, pole, _, _ = random_problem(rng, (n,))
    target = target + rng.normal(size=target.shape)
    w = rng.uniform(0, 1, n)
    big = two_bone_positions(root, mid, end, target, pole, weight=w, twist_angle=0.3)
    for s in (slice(0, 10), slice(n - 10, n)):
        small = two_bone_positions(root[s], mid[s], end[s], target[s], pole[s], w[s], 0.3)
        np.testing.assert_allclose(big.mid_world[s], small.mid_world, atol=1e-12)
        np.testing.assert_allclose(big.mid_rotation_world[s], small.mid_rotation_world, atol=1e-12)
        np.testing.assert_array_equal(big.reached[s], small.reached)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(PARALLEL_MIN + 5,), (3, PARALLEL_MIN // 2 + 1)])
def test_large_batch_outputs_are_separate_arrays(dtype, batch):
    """The parallel path writes its five outputs into one buffer (one allocation): each is
    a C-contiguous, writable array of its own shape and dtype, no two overlap, and writing
    into one leaves the others as they were."""
    rng = np.random.default_rng(3)
    root, mid, end, target, pole, _, _ = random_problem(rng, batch)
    r = two_bone_positions(*(a.astype(dtype) for a in (root, mid, end, target, pole)))
    fields = {"mid_world": 3, "end_world": 3, "root_rotation_world": 4,
              "mid_rotation_world": 4, "stretch": 0}  # fmt: skip
    arrays = {k: getattr(r, k) for k in fields}
    for k, width in fields.items():
        a = arrays[k]
        assert a.shape == batch + ((width,) if width else ()) and a.dtype == dtype, k
        assert a.flags.c_contiguous and a.flags.writeable, k
    names = list(arrays)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not np.shares_memory(arrays[a], arrays[b]), (a, b)
    before = {k: v.copy() for k, v in arrays.items()}
    arrays["mid_world"][...] = np.nan
    for k in names[1:]:
        np.testing.assert_array_equal(arrays[k], before[k])


def degenerate_problem(rng, n):
    """Problems built from a few shared points: coincident joints, zero bones, poles and
    mids on the aim line, targets at the root, straight and folded chains."""
    base = rng.normal(size=(4, 3))
    points = np.concatenate([base, base[:1] + 1e-9, 2 * base[1:2] - base[0:1], np.zeros((1, 3))])
    idx = rng.integers(0, len(points), size=(n, 5))
    root, mid, end, target, pole = (points[idx[:, k]] for k in range(5))
    # some poles and mids exactly on the root->target line, some straight chains
    t = rng.uniform(-2, 2, size=(n, 1))
    on_line = rng.uniform(size=n) < 0.3
    pole = np.where(on_line[:, None], root + t * (target - root), pole)
    on_line = rng.uniform(size=n) < 0.3
    mid = np.where(on_line[:, None], root + 0.5 * (target - root), mid)
    straight = rng.uniform(size=n) < 0.3
    end = np.where(straight[:, None], mid + (mid - root), end)
    return root, mid, end, target, pole


@given(st.sampled_from(DTYPES), SEEDS, st.sampled_from([None, "pole"]))
def test_degenerate_inputs_give_finite_outputs(dtype, seed, use_pole):
    rng = np.random.default_rng(seed)
    root, mid, end, target, pole = degenerate_problem(rng, 40)
    args = [a.astype(dtype) for a in (root, mid, end, target)]
    p = pole.astype(dtype) if use_pole else None
    for w, tw in ((1.0, 0.0), (0.5, 1.0)):
        r = two_bone_positions(*args, p, weight=w, twist_angle=tw)
        for a in (r.mid_world, r.end_world, r.root_rotation_world, r.mid_rotation_world):
            assert np.isfinite(a).all()
        np.testing.assert_allclose(np.linalg.norm(r.root_rotation_world, axis=-1), 1, atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(r.mid_rotation_world, axis=-1), 1, atol=1e-5)
        assert (r.root_rotation_world[..., 3] >= 0).all()
    soa = two_bone_positions_soa(*[np.ascontiguousarray(a.T) for a in args],
                                 None if p is None else np.ascontiguousarray(p.T))  # fmt: skip
    assert np.isfinite(soa.mid_world).all() and np.isfinite(soa.end_world).all()


@given(
    st.sampled_from(DTYPES),
    st.integers(1, 6),
    st.data(),
)
def test_any_finite_input_gives_finite_output(dtype, n, data):
    # hypothesis favours zeros, repeats and extremes: coincident points, zero bones, ...
    coords = st.floats(-1e3, 1e3, allow_nan=False, width=32).map(lambda v: round(v, 1))
    pts = [
        np.array(data.draw(st.lists(coords, min_size=3 * n, max_size=3 * n)), dtype).reshape(n, 3)
        for _ in range(5)
    ]
    weight = data.draw(st.floats(-1, 2, width=32))
    r = two_bone_positions(*pts, weight=weight, twist_angle=0.5)
    for a in (r.mid_world, r.end_world, r.root_rotation_world, r.mid_rotation_world):
        assert np.isfinite(a).all()
    soa = two_bone_positions_soa(*to_soa(*pts))
    assert np.isfinite(soa.mid_world).all() and np.isfinite(soa.end_world).all()


def test_float32_in_float32_out_and_mixed_gives_float64():
    def f32(*p):
        return np.array(p, np.float32)

    r = two_bone_positions(f32(0, 0, 0), f32(0, 1, 0), f32(1, 1, 0), f32(1, 0, 0),
                           weight=np.float64(0.5), twist_angle=np.array(0.1))  # fmt: skip
    for a in (r.mid_world, r.end_world, r.root_rotation_world, r.stretch):
        assert a.dtype == np.float32
    r = two_bone_positions(f32(0, 0, 0), f32(0, 1, 0), f32(1, 1, 0), np.array([1.0, 0, 0]))
    assert r.end_world.dtype == np.float64
    r = two_bone_positions([0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0])  # ints
    assert r.end_world.dtype == np.float64


def test_array_flavours_give_the_same_result():
    # the single-problem fast path takes C-contiguous writeable (3,) arrays as they are;
    # strided, read-only and list inputs go through the general path (copies)
    pts = np.array([[0, 0, 0], [0, 1, 0.2], [1, 1, 0], [0.5, 0.3, 0.1], [0, 1, 1]], float)
    ref = two_bone_positions(*pts)
    strided = np.repeat(pts, 2, axis=1)[:, ::2]
    readonly = pts.copy()
    readonly.flags.writeable = False
    for args in (list(strided), list(readonly), pts.tolist()):
        r = two_bone_positions(*args)
        np.testing.assert_array_equal(r.mid_world, ref.mid_world)
        np.testing.assert_array_equal(r.root_rotation_world, ref.root_rotation_world)
    # no pole means the current mid
    r = two_bone_positions(*pts[:4])
    np.testing.assert_array_equal(r.mid_world, two_bone_positions(*pts[:4], pts[1]).mid_world)


def test_broadcasting():
    rng = np.random.default_rng(3)
    targets = rng.normal(size=(4, 1, 3))
    poles = rng.normal(size=(2, 3))
    r = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], targets, poles, weight=0.7)
    assert r.end_world.shape == (4, 2, 3) and r.reached.shape == (4, 2)
    one = two_bone_positions(np.zeros(3), [0, 1, 0], [1, 1, 0], targets[2, 0], poles[1], 0.7)
    np.testing.assert_allclose(r.end_world[2, 1], one.end_world, atol=1e-12)


# --------------------------------------------------------------------------------------
# The structure-of-arrays path
# --------------------------------------------------------------------------------------


def knee_tolerance(base, root, mid, end, dtype):
    """Per-element ``(n, 1)`` tolerance on a solved knee that two kernels may round
    differently: ``base`` times ``1 + L``, plus the knee height's own sensitivity, which
    grows to ``sqrt(eps) L`` at full extension (the height is the square root of a
    difference of squares; FMA contraction differs between kernels)."""
    root, mid, end = (np.asarray(a, np.float64) for a in (root, mid, end))
    length = np.linalg.norm(mid - root, axis=-1) + np.linalg.norm(end - mid, axis=-1)
    aim = end - root
    aim = aim / np.maximum(np.linalg.norm(aim, axis=-1, keepdims=True), 1e-300)
    off = (mid - root) - aim * np.sum((mid - root) * aim, -1, keepdims=True)
    height = np.linalg.norm(off, axis=-1)
    eps = float(np.finfo(dtype).eps)
    extra = 4 * eps * length**2 / np.maximum(np.maximum(height, np.sqrt(eps) * length), 1e-300)
    return (base * (1 + length) + extra)[:, None]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("options", [None, TwoBoneOptions(tolerance=1e-2)])
def test_default_options_fast_kernel_matches_general_kernel(dtype, options):
    # a big batch with the default options (any tolerance) runs the common-case kernel,
    # whose fallbacks (degenerate, straight, tiny or huge chains) go to a float64 pass; an
    # array of weights 1 runs the general kernel: the same solve
    rng = np.random.default_rng(12)
    root, mid, end, target, pole, _, _ = random_problem(rng, (PARALLEL_MIN,))
    target = target + rng.normal(size=target.shape)
    parts = [(root, mid, end, target, pole), degenerate_problem(rng, 80)]
    for scale in (1e-7, 1e7):  # out of float32's safe range
        r, m, e, t, p, _, _ = random_problem(rng, (20,))
        parts.append(tuple(a * scale for a in (r, m, e, t, p)))
    root, mid, end, target, pole = (np.concatenate(a).astype(dtype) for a in zip(*parts))
    n = len(root)
    fast = two_bone_positions(root, mid, end, target, pole, options=options)
    general = two_bone_positions(root, mid, end, target, pole, np.ones(n), options=options)
    base = 1e-9 if dtype == np.float64 else 2e-4
    tol = knee_tolerance(base, root, general.mid_world, general.end_world, dtype)
    assert fast.mid_world.dtype == dtype
    assert np.all(np.abs(fast.mid_world - general.mid_world) <= tol)
    np.testing.assert_allclose(fast.end_world, general.end_world, atol=base)
    for name in ("root_rotation_world", "mid_rotation_world"):
        a, b = getattr(fast, name), getattr(general, name)
        assert np.all(np.isfinite(a)), name
        err = np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1))
        assert err.max() <= (1e-7 if dtype == np.float64 else 2e-3), name
    np.testing.assert_allclose(fast.stretch, general.stretch, rtol=1e-4)
    assert (fast.reached == general.reached).mean() > 0.99  # may differ at the tolerance


def to_soa(*arrays):
    return [np.ascontiguousarray(a.T) for a in arrays]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "options",
    [TwoBoneOptions(), TwoBoneOptions(soften=0.9), TwoBoneOptions(max_stretch=1.3)],
)
def test_soa_matches_aos(dtype, options):
    rng = np.random.default_rng(11)
    n = PARALLEL_MIN  # both paths vectorised, in the data's dtype
    root, mid, end, target, pole, _, _ = random_problem(rng, (n,))
    target = target + rng.normal(size=target.shape)
    # a few degenerate elements go through the fallback pass
    dr, dm, de, dt_, dp = degenerate_problem(rng, 50)
    root, mid, end, target, pole = (
        np.concatenate([a, b]).astype(dtype)
        for a, b in ((root, dr), (mid, dm), (end, de), (target, dt_), (pole, dp))
    )
    aos = two_bone_positions(root, mid, end, target, pole, options=options)
    soa = two_bone_positions_soa(*to_soa(root, mid, end, target, pole), options=options)
    tol = 1e-9 if dtype == np.float64 else 2e-4
    knee_tol = knee_tolerance(tol, root, aos.mid_world, aos.end_world, dtype)
    assert np.all(np.abs(soa.mid_world.T - aos.mid_world) <= knee_tol)
    np.testing.assert_allclose(soa.end_world.T, aos.end_world, atol=tol)
    assert (soa.reached == aos.reached).mean() > 0.99  # may differ right at the tolerance
    assert soa.mid_world.dtype == dtype
    # no pole: the current mid is the pole
    aos = two_bone_positions(root, mid, end, target, options=options)
    soa = two_bone_positions_soa(*to_soa(root, mid, end, target), options=options)
    np.testing.assert_allclose(soa.end_world.T, aos.end_world, atol=tol)


def test_soa_weight_out_and_errors():
    rng = np.random.default_rng(5)
    root, mid, end, target, pole, _, _ = random_problem(rng, (300,))
    soa_in = to_soa(root, mid, end, target, pole)
    out = (np.empty((3, 300)), np.empty((3, 300)), np.empty(300, bool))
    r = two_bone_positions_soa(*soa_in, weight=0.5, out=out)
    assert r.mid_world is out[0] and r.reached is out[2]
    ref = two_bone_positions(root, mid, end, target, pole, weight=0.5)
    np.testing.assert_allclose(r.end_world.T, ref.end_world, atol=1e-12)
    assert not r.reached.any()
    bad = [a.copy() for a in soa_in]
    bad[3][1, 17] = np.nan
    with pytest.raises(InputError, match="target"):
        two_bone_positions_soa(*bad)
    with pytest.raises(InputError, match="mid"):
        two_bone_positions_soa(soa_in[0], soa_in[1].astype(np.float32), *soa_in[2:])
    with pytest.raises(InputError, match="C-contiguous"):
        two_bone_positions_soa(soa_in[0], np.asfortranarray(soa_in[1]), *soa_in[2:])
    with pytest.raises(InputError, match="out"):
        two_bone_positions_soa(*soa_in, out=(out[0], out[1], np.empty(300)))


# --------------------------------------------------------------------------------------
# Pose level
# --------------------------------------------------------------------------------------


def leg_skeleton():
    names = ("pelvis", "hip", "knee", "ankle", "toe", "spine")
    parents = [-1, 0, 1, 2, 3, 0]
    offsets = [[0, 1, 0], [0.1, -0.05, 0], [0, -0.45, 0.02], [0, -0.42, -0.02],
               [0, -0.05, 0.12], [0, 0.2, 0]]  # fmt: skip
    return Skeleton(names, parents, offsets)


def random_leg_motion(rng, frames, dtype=np.float64):
    sk = leg_skeleton()
    rot = quat_from_axis_angle(random_units(rng, (frames, 6)), rng.uniform(0, 0.6, (frames, 6)))
    pos = np.broadcast_to(sk.offsets, (frames, 6, 3)).copy()
    pos[:, 0] += rng.normal(size=(frames, 3))
    return Motion(sk, rot.astype(dtype), pos.astype(dtype), 1 / 30)


@pytest.mark.parametrize("keep_end_rotation", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pose_level(keep_end_rotation, dtype):
    rng = np.random.default_rng(2)
    frames = 40
    motion = random_leg_motion(rng, frames, dtype)
    rot_w, pos_w = motion.fk()
    hip = pos_w[:, 1].astype(float)
    target = hip + random_units(rng, (frames,)) * rng.uniform(0.1, 0.8, (frames, 1))
    pole = hip + [0, -0.3, 0.8]
    opts = TwoBoneOptions(keep_end_rotation=keep_end_rotation)
    res = solve_two_bone(motion, ("hip", "knee", "ankle"), target, pole, options=opts)
    new_rot_w, new_pos_w = res.motion.fk()
    assert res.motion.dtype == dtype and res.motion.frame_time == motion.frame_time
    reach = np.linalg.norm(target - hip, axis=-1) < 0.87 - 1e-3
    tol = 1e-9 if dtype == np.float64 else 1e-5
    err = np.linalg.norm(new_pos_w[:, 3] - target, axis=-1)
    assert np.all(err[reach] < tol) and np.all(res.reached[reach])
    np.testing.assert_allclose(new_pos_w[:, 3], res.end_world, atol=tol)
    np.testing.assert_allclose(new_pos_w[:, 2], res.mid_world, atol=tol)
    # only the expected joints' rotations changed; translations unchanged (no stretch)
    changed = [1, 2, 3] if keep_end_rotation else [1, 2]
    same = [j for j in range(6) if j not in changed]
    np.testing.assert_array_equal(
        res.motion.rotations_local[:, same], motion.rotations_local[:, same]
    )
    np.testing.assert_array_equal(res.motion.positions_local, motion.positions_local)
    np.testing.assert_allclose(new_pos_w[:, [0, 1, 5]], pos_w[:, [0, 1, 5]], atol=tol)
    if keep_end_rotation:
        assert_quat_close(new_rot_w[:, 3], rot_w[:, 3], 10 * tol)
    else:
        np.testing.assert_array_equal(
            res.motion.rotations_local[:, 3], motion.rotations_local[:, 3]
        )


def test_pose_level_broadcasts_targets_over_a_single_pose():
    rng = np.random.default_rng(4)
    motion = random_leg_motion(rng, 1)[0]
    hip = motion.positions_world()[1]
    targets = hip + random_units(rng, (7,)) * 0.5
    res = solve_two_bone(motion, (1, 2, 3), targets, weight=np.linspace(0, 1, 7))
    assert res.motion.batch_shape == (7,)
    np.testing.assert_allclose(res.motion.positions_world()[-1, 3], targets[-1], atol=1e-9)
    np.testing.assert_allclose(res.motion.positions_world()[0], motion.positions_world(), atol=1e-9)


def test_pose_level_stretch_scales_translations():
    rng = np.random.default_rng(6)
    motion = random_leg_motion(rng, 5)
    hip = motion.positions_world()[:, 1]
    target = hip + [0, -1.0, 0]  # 1.0 > 0.87: needs a stretch of about 1.15
    opts = TwoBoneOptions(max_stretch=1.3)
    res = solve_two_bone(motion, ("hip", "knee", "ankle"), target, options=opts)
    assert res.reached.all()
    np.testing.assert_allclose(res.motion.positions_world()[:, 3], target, atol=1e-9)
    ratio = np.linalg.norm(res.motion.positions_local[:, 2], axis=-1) / np.linalg.norm(
        motion.positions_local[:, 2], axis=-1
    )
    assert np.all((ratio > 1.1) & (ratio < 1.3))


def test_pose_level_hierarchy_checks():
    motion = Motion.rest(leg_skeleton())
    with pytest.raises(HierarchyError):
        solve_two_bone(motion, ("hip", "ankle", "toe"), [0, 0, 0])
    with pytest.raises(HierarchyError):
        solve_two_bone(motion, ("pelvis", "hip", "toe"), [0, 0, 0])
    with pytest.raises(InputError):
        solve_two_bone(motion, ("hip", "knee"), [0, 0, 0])
    with pytest.raises(InputError, match="no joint named"):
        solve_two_bone(motion, ("hip", "knee", "foot"), [0, 0, 0])
    with pytest.raises(InputError, match="target_world"):
        solve_two_bone(motion, ("hip", "knee", "ankle"), [0, np.nan, 0])
