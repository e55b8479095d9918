"""Joint constraints: validation, packing, and the projections against brute force.

Every constraint's projection must be idempotent, leave allowed rotations unchanged and move
a disallowed rotation to the nearest allowed one (checked against a dense grid of allowed
rotations). The kernel functions are checked through the same objects, and directly for the
direction projection used by FABRIK.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_quats
from hypothesis import given, settings
from hypothesis import strategies as st

from ikrig.constraints import (
    KIND_ANGLE_2D,
    KIND_CONE,
    KIND_FREE,
    KIND_HINGE,
    KIND_TWIST,
    N_PARAMS,
    AngleLimit2D,
    Cone,
    Constraint,
    Hinge,
    TwistLimit,
    pack_constraints,
)
from ikrig.errors import InputError
from ikrig.kernels import constraints as K
from ikrig.math import quat_between, quat_from_axis_angle, quat_mul, quat_rotate

BATCHES = st.sampled_from([(), (1,), (4,), (2, 3)])
DTYPES = st.sampled_from([np.float32, np.float64])
SEEDS = st.integers(0, 2**32 - 1)

BONE = np.array([1.0, 0.2, -0.3]) / np.linalg.norm([1.0, 0.2, -0.3])
PARENT_BONE = np.array([0.9, -0.3, 0.1]) / np.linalg.norm([0.9, -0.3, 0.1])

CONSTRAINTS = [
    AngleLimit2D(-0.3, 0.7),
    AngleLimit2D.degrees(-170, -120),
    AngleLimit2D(-1.0, 1.0, normal=(0, 1, 1)),
    Cone(0.6),
    Cone.degrees(150, axis=(0, 1, 0)),
    Cone(0.0),
    Hinge((0, 0, 1), -0.5, 1.0),
    Hinge((0.3, 1.0, 0.0)),
    Hinge((1, 0, 0), 2.5, 4.0),
    Hinge.degrees((1, 1, 0), -10, 120),
    TwistLimit(-0.4, 0.6),
    TwistLimit.degrees(10, 30),
]
IDS = [repr(c) for c in CONSTRAINTS]


def rot_dist(a, b):
    """Rotation angle between unit quaternions (up to sign), accurate near 0."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    chord = np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1))
    return 4 * np.arcsin(np.clip(0.5 * chord, 0, 1))


def hinge_grid(c, bone, parent_bone, k=40001):
    """Dense samples of a hinge-like constraint's allowed set (rotations about its axis)."""
    row = c.params(bone, parent_bone)
    lo, hi = row[K.P_LO], row[K.P_HI]
    if hi - lo >= 2 * np.pi:
        lo, hi = -np.pi, np.pi
    th = np.linspace(lo, hi, k)
    return quat_from_axis_angle(row[K.P_AXIS : K.P_AXIS + 3], th)


def allowed_grid(c, bone, parent_bone, rng):
    """Allowed rotations, densely sampled: exact 1D grids for hinges, filtered randoms else."""
    if isinstance(c, (AngleLimit2D, Hinge)):
        return hinge_grid(c, bone, parent_bone), 1e-4
    if isinstance(c, Cone) and c.limit == 0:  # the rotations taking the bone onto the axis
        axis = c.params(bone, parent_bone)[K.P_AXIS : K.P_AXIS + 3]
        spin = quat_from_axis_angle(axis, np.linspace(-np.pi, np.pi, 40001))
        return quat_mul(spin, quat_between(bone, axis)), 1e-4
    q = random_quats(rng, (400_000,))
    ok = c.violation(q, bone, parent_bone) <= 1e-12
    return q[ok], 0.12  # spacing of 400k random rotations over the allowed part


# --------------------------------------------------------------------------------------
# Construction and packing
# --------------------------------------------------------------------------------------


def test_degrees_constructors():
    assert AngleLimit2D.degrees(-90, 45) == AngleLimit2D(-np.pi / 2, np.pi / 4)
    assert Cone.degrees(30).limit == pytest.approx(np.pi / 6)
    assert Hinge.degrees((0, 0, 2), 0, 90) == Hinge((0, 0, 1), 0, np.pi / 2)
    assert TwistLimit.degrees(-45, 45) == TwistLimit(-np.pi / 4, np.pi / 4)
    assert Hinge((0, 0, 5)).axis == (0.0, 0.0, 1.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: AngleLimit2D(1.0, -1.0),
        lambda: AngleLimit2D(float("nan"), 1.0),
        lambda: AngleLimit2D(-1, 1, normal=(0, 0, 0)),
        lambda: AngleLimit2D(-10.0, 1.0),
        lambda: Cone(-0.1),
        lambda: Cone(4.0),
        lambda: Cone(0.5, axis=(0, 0, 0)),
        lambda: Hinge((0, 0, 0)),
        lambda: Hinge((0, 0, 1), 0.0, None),
        lambda: Hinge((0, 0, 1), 1.0, 0.0),
        lambda: TwistLimit(0.5, 0.4),
        lambda: TwistLimit(0.0, float("inf")),
    ],
)
def test_invalid_parameters_raise(make):
    with pytest.raises(InputError):
        make()


def test_constraints_are_frozen_and_hashable():
    c = Cone(0.5)
    with pytest.raises(AttributeError):
        c.limit = 1.0
    assert len({Cone(0.5), Cone(0.5), Hinge((0, 0, 1))}) == 2


def test_pack_constraints_layout():
    bones = np.array([[2.0, 0, 0], [0, 3.0, 0], [0, 0, 0], [1.0, 1.0, 0]])
    cons = [Cone(0.5), None, TwistLimit(-1, 1), AngleLimit2D.degrees(-90, 90)]
    kinds, params = pack_constraints(cons, bones)
    assert kinds.tolist() == [KIND_CONE, KIND_FREE, KIND_TWIST, KIND_ANGLE_2D]
    assert params.shape == (4, N_PARAMS) and params.dtype == np.float64
    assert not kinds.flags.writeable and not params.flags.writeable
    # Unit bone direction in every row; (1, 0, 0) for the zero-length bone.
    np.testing.assert_allclose(params[:, K.P_BONE : K.P_BONE + 3], [[1, 0, 0], [0, 1, 0], [1, 0, 0],
                               np.array([1, 1, 0]) / np.sqrt(2)])  # fmt: skip
    # The root cone's default axis is its rest direction.
    np.testing.assert_allclose(params[0, K.P_AXIS : K.P_AXIS + 3], [1, 0, 0])
    np.testing.assert_allclose(params[0, :2], [np.cos(0.5), np.sin(0.5)])
    # A 2D limit measures from the parent bone: parent (1,0,0), bone (1,1,0) -> 45 degrees.
    np.testing.assert_allclose(params[3, :2], [-np.pi / 2 - np.pi / 4, np.pi / 2 - np.pi / 4])


def test_cone_default_axis_is_parent_bone():
    bones = np.array([[1.0, 0, 0], [0, 2.0, 0]])
    _, params = pack_constraints([None, Cone(0.3)], bones)
    np.testing.assert_allclose(params[1, K.P_AXIS : K.P_AXIS + 3], [1, 0, 0])


@pytest.mark.parametrize(
    "cons, bones",
    [
        ([Cone(0.5), "cone"], np.ones((2, 3))),
        ([Cone(0.5)], np.ones((2, 3))),
        ([Cone(0.5)], np.ones((1, 4))),
        ([Cone(0.5)], [[np.nan, 0, 0]]),
    ],
)
def test_pack_constraints_errors(cons, bones):
    with pytest.raises(InputError):
        pack_constraints(cons, bones)


def test_free_constraint_is_identity():
    q = random_quats(np.random.default_rng(1), (5,))
    np.testing.assert_array_equal(Constraint().project(q, BONE), q)


# --------------------------------------------------------------------------------------
# Projection properties
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("c", CONSTRAINTS, ids=IDS)
@pytest.mark.parametrize("parent_bone", [None, PARENT_BONE], ids=["root", "child"])
def test_projection_is_nearest_allowed(c, parent_bone):
    """Projected rotations are allowed, projection is idempotent, and no allowed rotation of
    a dense grid is nearer than the projection (up to the grid's spacing)."""
    rng = np.random.default_rng(7)
    grid, spacing = allowed_grid(c, BONE, parent_bone, rng)
    assert len(grid) > 100
    q = random_quats(rng, (60,))
    p = c.project(q, BONE, parent_bone)
    assert np.all(c.violation(p, BONE, parent_bone) <= 1e-9)
    np.testing.assert_allclose(rot_dist(c.project(p, BONE, parent_bone), p), 0, atol=1e-9)
    d = rot_dist(q, p)
    for k in range(len(q)):
        best = rot_dist(grid, q[k]).min()
        assert d[k] <= best + 1e-9, (k, d[k], best)
        assert d[k] >= best - spacing, (k, d[k], best)


@pytest.mark.parametrize("c", CONSTRAINTS, ids=IDS)
def test_allowed_rotations_unchanged(c):
    rng = np.random.default_rng(3)
    grid, _ = allowed_grid(c, BONE, PARENT_BONE, rng)
    sample = grid[rng.choice(len(grid), size=min(200, len(grid)), replace=False)]
    np.testing.assert_allclose(rot_dist(c.project(sample, BONE, PARENT_BONE), sample), 0,
                               atol=1e-9)  # fmt: skip


@settings(max_examples=20)
@given(batch=BATCHES, dtype=DTYPES, seed=SEEDS, which=st.integers(0, len(CONSTRAINTS) - 1))
def test_project_keeps_shape_and_dtype(batch, dtype, seed, which):
    c = CONSTRAINTS[which]
    q = random_quats(np.random.default_rng(seed), batch, dtype)
    p = c.project(q, BONE)
    assert p.shape == q.shape and p.dtype == np.dtype(dtype)
    np.testing.assert_allclose(np.linalg.norm(p, axis=-1), 1, atol=1e-6)
    tol = 1e-3 if dtype == np.float32 else 1e-9
    assert np.all(c.violation(p, BONE) <= tol)


def test_project_rejects_nan():
    with pytest.raises(InputError):
        Cone(0.5).project([np.nan, 0, 0, 1], BONE)


def test_angle_limit_2d_measures_from_parent_bone():
    """In the plane: the angle between the parent bone and the bone is clamped."""
    lim = AngleLimit2D.degrees(-30, 60)
    parent = np.array([1.0, 0, 0])
    bone = np.array([np.cos(0.2), np.sin(0.2), 0])  # rest: 0.2 rad from the parent bone
    for ang, want in [(0.5, 0.5), (1.5, np.radians(60)), (-1.0, np.radians(-30))]:
        q = quat_from_axis_angle([0, 0, 1], ang - 0.2)  # bone ends at 'ang' from parent
        d = quat_rotate(lim.project(q, bone, parent), bone)
        assert np.arctan2(d[1], d[0]) == pytest.approx(want, abs=1e-12)


def test_cone_keeps_twist_and_clamps_swing():
    cone = Cone(0.4)
    x = np.array([1.0, 0, 0])
    twist = quat_from_axis_angle(x, 1.2)
    swing = quat_from_axis_angle([0, 0, 1], 1.0)
    p = cone.project(quat_mul(swing, twist), x)
    d = quat_rotate(p, x)
    assert np.arccos(d[0]) == pytest.approx(0.4, abs=1e-12)
    # The correction is a swing about the same axis: the twist is kept.
    np.testing.assert_allclose(
        rot_dist(p, quat_mul(quat_from_axis_angle([0, 0, 1], 0.4), twist)), 0, atol=1e-12
    )


def test_twist_limit_without_swing_is_clamped_twist():
    lim = TwistLimit(-0.2, 0.3)
    for ang, want in [(0.1, 0.1), (1.0, 0.3), (-2.0, -0.2), (3.0, 0.3), (-3.0, -0.2)]:
        p = lim.project(quat_from_axis_angle(BONE, ang), BONE)
        np.testing.assert_allclose(rot_dist(p, quat_from_axis_angle(BONE, want)), 0, atol=1e-12)


def test_unlimited_hinge_keeps_angle():
    h = Hinge((0, 1, 0))
    for ang in [-3.0, -1.0, 0.0, 2.0, 3.1]:
        q = quat_from_axis_angle([0, 1, 0], ang)
        np.testing.assert_allclose(rot_dist(h.project(q, BONE), q), 0, atol=1e-12)


# --------------------------------------------------------------------------------------
# Kernel API: project_direction (FABRIK) and the njit entry points
# --------------------------------------------------------------------------------------


def _directions_allowed(c, parent_q, bone, parent_bone, rng):
    """World directions allowed by a constraint, densely sampled."""
    if isinstance(c, (AngleLimit2D, Hinge)):
        g = hinge_grid(c, bone, parent_bone)
        return quat_rotate(parent_q, quat_rotate(g, bone)), 1e-4
    v = rng.normal(size=(400_000, 3))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    row = c.params(bone, parent_bone)
    axis = quat_rotate(parent_q, row[K.P_AXIS : K.P_AXIS + 3])
    if row[K.P_LO] == 1.0:
        return axis[None], 1e-12
    return v[v @ axis >= row[K.P_LO]], 0.02


@pytest.mark.parametrize("c", [c for c in CONSTRAINTS if not isinstance(c, TwistLimit)])
def test_project_direction_is_nearest_allowed_direction(c):
    rng = np.random.default_rng(11)
    row = c.params(BONE, PARENT_BONE)
    for _ in range(15):
        parent = random_quats(rng, ())
        allowed, spacing = _directions_allowed(c, parent, BONE, PARENT_BONE, rng)
        d = rng.normal(size=3) * 3
        out = K.project_direction(c.kind, row, parent, d)
        assert np.linalg.norm(out) == pytest.approx(1, abs=1e-12)
        dn = d / np.linalg.norm(d)
        got = np.arccos(np.clip(out @ dn, -1, 1))
        best = np.arccos(np.clip(allowed @ dn, -1, 1)).min()
        assert got <= best + 1e-9 and got >= best - spacing
        again = K.project_direction(c.kind, row, parent, out)
        np.testing.assert_allclose(again, out, atol=1e-9)


def test_project_direction_twist_and_free_pass_through():
    d = np.array([0.0, 3.0, 4.0])
    for kind, row in [(KIND_TWIST, TwistLimit(-1, 1).params(BONE)), (KIND_FREE, np.zeros(8))]:
        np.testing.assert_allclose(
            K.project_direction(kind, row, np.array([0, 0, 0, 1.0]), d), d / 5, atol=1e-15
        )


def test_project_local_kernel_matches_method():
    rng = np.random.default_rng(5)
    for c in CONSTRAINTS:
        row = c.params(BONE, PARENT_BONE)
        for q in random_quats(rng, (10,)):
            want = c.project(q, BONE, PARENT_BONE)
            got = K.project_local(c.kind, row, q.astype(np.float32))
            assert got.dtype == np.float64
            assert rot_dist(got, want) <= 1e-5  # float32 input


def test_kernels_callable_from_other_kernels():
    from ikrig._jit.setup import njit

    @njit
    def use(kind, row, q, parent, d):
        a = K.project_local(kind, row, q)
        b = K.project_local_t(kind, row, (q[0], q[1], q[2], q[3]))
        c = K.project_direction_t(kind, row, (0.0, 0.0, 0.0, 1.0), (d[0], d[1], d[2]))
        return a, b, c, K.project_direction(kind, row, parent, d)

    c = Cone(0.5)
    row = c.params(BONE)
    q = quat_from_axis_angle([0, 0, 1], 1.5)
    a, b, cdir, ddir = use(KIND_CONE, row, q, np.array([0, 0, 0, 1.0]), np.array([0, 1.0, 0]))
    np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(cdir, ddir)
    assert np.arccos(cdir @ BONE) == pytest.approx(0.5)


def test_degenerate_inputs_finite():
    """A zero quaternion, directions along the hinge axis or opposite the cone axis."""
    zero_q = np.zeros(4)
    ident = np.array([0, 0, 0, 1.0])
    for c in CONSTRAINTS:
        row = c.params(BONE, PARENT_BONE)
        assert np.isfinite(K.project_local(c.kind, row, zero_q)).all()
        for d in [row[K.P_AXIS : K.P_AXIS + 3], -row[K.P_AXIS : K.P_AXIS + 3], np.zeros(3)]:
            out = K.project_direction(c.kind, row, ident, d)
            assert np.isfinite(out).all() and np.linalg.norm(out) == pytest.approx(1)
    # Bone along a hinge axis: the only allowed direction is the bone itself.
    h = Hinge((1, 0, 0), -1, 1)
    row = h.params([2.0, 0, 0])
    np.testing.assert_allclose(K.project_direction(h.kind, row, ident, np.array([0, 1.0, 0])),
                               [1, 0, 0])  # fmt: skip
    assert KIND_HINGE == h.kind


def test_pack_constraints_batch_of_rest_poses():
    """A batch of rest poses ``(B, n, 3)`` packs each (the position-level solvers' input
    poses), the same rows as packing them one at a time."""
    rng = np.random.default_rng(7)
    cons = [Cone(0.5), AngleLimit2D(-0.3, 0.7), None, Hinge((0, 0, 1), -1, 1), TwistLimit(-1, 1)]
    bones = rng.normal(size=(3, 2, len(cons), 3))
    kinds, params = pack_constraints(cons, bones)
    assert params.shape == (3, 2, len(cons), N_PARAMS)
    for idx in np.ndindex(3, 2):
        k1, p1 = pack_constraints(cons, bones[idx])
        np.testing.assert_array_equal(kinds, k1)
        np.testing.assert_allclose(params[idx], p1, atol=1e-15)


@pytest.mark.parametrize("c", CONSTRAINTS, ids=IDS)
def test_project_with_one_bone_per_rotation(c):
    """``project`` broadcasts per-rotation bones (``(..., 3)``) with the rotations."""
    rng = np.random.default_rng(8)
    q = random_quats(rng, (4,))
    bones = rng.normal(size=(4, 3))
    parents = rng.normal(size=(4, 3))
    got = c.project(q, bones, parents)
    for k in range(4):
        np.testing.assert_allclose(got[k], c.project(q[k], bones[k], parents[k]), atol=1e-12)
