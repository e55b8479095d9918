"""Aim IK (:func:`ikrig.solvers.aim.aim`): ozz-animation's ``IKAimJob`` cases, properties,
degenerate inputs and input errors.

The ozz cases (``/work/shared/reference/ozz_aim_and_foot_ik.md``) give the expected local
correction, compared up to sign with ozz's component-wise tolerance 2e-3. ozz runs its
``Correction`` group under six parents: identity, a translation (0, 1, 0), a 60 degree yaw,
and three scales. ikrig joints carry no scale (a :class:`~ikrig.skeleton.Skeleton` has
offsets and rotations only), so the three scaled parents and the ``ZeroScale`` case have no
counterpart here; every other case runs under the identity, translated and yawed parents
(the joint's world frame is the parent's; the target and the pole are carried by it, the
correction being local it stays the same), in float32 and float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_quat_close
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from ikrig.errors import InputError
from ikrig.solvers.aim import AimAxes, aim

X, Y, Z = np.eye(3)
ZERO = np.zeros(3)
I = (0.0, 0.0, 0.0, 1.0)  # noqa: E741
SEEDS = st.integers(0, 2**32 - 1)
BATCH_SHAPES = [(), (1,), (5,), (3, 1, 2)]
DTYPES = [np.float32, np.float64]


def rot(axis, degrees):
    """xyzw of a rotation by ``degrees`` about ``axis`` (SciPy, the reference)."""
    return Rotation.from_rotvec(np.radians(degrees) * np.asarray(axis, float)).as_quat()


# (id, job settings, expected correction, expected reached or None). The defaults: the
# joint at the origin (before the parent), target +X, forward +X, up +Y, pole +Y.
CASES = [
    ("correction +X", {}, I, True),
    ("correction -X", {"target": -X}, rot(Y, 180), True),
    ("correction +Z", {"target": Z}, rot(Y, -90), True),
    ("correction -Z", {"target": -Z}, rot(Y, 90), True),
    ("correction (1,1,0)", {"target": (1, 1, 0)}, rot(Z, 45), True),
    ("correction (2,2,0)", {"target": (2, 2, 0)}, rot(Z, 45), True),
    ("forward +X", {"forward": X}, I, True),
    ("forward -X", {"forward": -X}, rot(Y, -180), True),
    ("forward +Z", {"forward": Z}, rot(Y, 90), True),
    ("up +Y", {"up": Y}, I, True),
    ("up -Y", {"up": -Y}, rot(X, 180), True),
    ("up +Z", {"up": Z}, rot(X, -90), True),
    ("up 2Z", {"up": 2 * Z}, rot(X, -90), True),
    ("up 1e-9 Z", {"up": 1e-9 * Z}, rot(X, -90), True),
    ("up 0", {"up": ZERO}, I, True),
    ("pole +Y", {"pole": Y}, I, True),
    ("pole -Y", {"pole": -Y}, rot(X, 180), True),
    ("pole +Z", {"pole": Z}, rot(X, 90), True),
    ("pole 2Z", {"pole": 2 * Z}, rot(X, 90), True),
    ("pole 1e-9 Z", {"pole": 1e-9 * Z}, rot(X, 90), True),
    ("offset 0", {"offset": ZERO}, I, True),
    ("offset (0,sqrt2/2,0)", {"offset": (0, math.sqrt(0.5), 0)}, rot(Z, -45), True),
    ("offset (0.5,0.5,0)", {"offset": (0.5, 0.5, 0)}, rot(Z, -30), True),
    ("offset (-0.5,0.5,0)", {"offset": (-0.5, 0.5, 0)}, rot(Z, -30), True),
    ("offset (0.5,0,0.5)", {"offset": (0.5, 0, 0.5)}, rot(Y, 30), True),
    ("offset on the sphere", {"offset": Y}, rot(Z, -90), True),
    ("offset outside", {"offset": 2 * Y}, I, False),
    ("offset, joint at (0,1,0)", {"joint": Y, "offset": Y}, rot(Z, -90), True),
    ("twist 0", {"twist": 0.0}, I, True),
    ("twist +pi/2", {"twist": math.pi / 2}, rot(X, 90), True),
    ("twist -pi/2", {"twist": -math.pi / 2}, rot(X, -90), True),
    ("aligned target up: +X", {}, I, True),
    ("aligned target up: +Y", {"target": Y}, rot(Z, 90), True),
    ("aligned target up: 2Y", {"target": 2 * Y}, rot(Z, 90), True),
    ("aligned target up: -2Y", {"target": -2 * Y}, rot(Z, -90), True),
    ("aligned target pole", {"target": Y, "pole": Y}, rot(Z, 90), True),
    ("target too close", {"target": ZERO}, I, False),
    ("weight 1", {"target": Z, "weight": 1.0}, rot(Y, -90), True),
    ("weight 2", {"target": Z, "weight": 2.0}, rot(Y, -90), True),
    ("weight 0.5", {"target": Z, "weight": 0.5}, rot(Y, -45), True),
    ("weight 0", {"target": Z, "weight": 0.0}, I, True),
    ("weight -0.5", {"target": Z, "weight": -0.5}, I, True),
]
PARENTS = {
    "identity": (I, ZERO),
    "translated": (I, Y),
    "yawed": (rot(Y, 60), ZERO),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("parent", list(PARENTS))
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_ozz_case(case, parent, dtype):
    _, s, expected, reached = case
    p_rot, p_pos = PARENTS[parent]
    turn = Rotation.from_quat(p_rot)
    joint_local = np.asarray(s.get("joint", ZERO), float)
    r = aim(
        p_rot.astype(dtype) if isinstance(p_rot, np.ndarray) else np.array(p_rot, dtype),
        (p_pos + turn.apply(joint_local)).astype(dtype),
        (p_pos + turn.apply(np.asarray(s.get("target", X), float))).astype(dtype),
        AimAxes(s.get("forward"), s.get("up"), s.get("offset")),
        pole_world=turn.apply(np.asarray(s.get("pole", Y), float)),
        twist_angle=s.get("twist", 0.0),
        weight=s.get("weight", 1.0),
    )
    assert r.correction_local.dtype == dtype and r.correction_local.shape == (4,)
    assert_quat_close(r.correction_local, expected, 2e-3)
    assert bool(r.reached) is reached


# --------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------


def _unit_vectors(rng, shape):
    v = rng.normal(size=tuple(shape) + (3,))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _problem(seed, shape, dtype, offset_scale=0.3):
    """Random joints, targets 1 to 3 away, axes and small offsets (inside the sphere)."""
    rng = np.random.default_rng(seed)
    q = Rotation.random(max(1, int(np.prod(shape))), random_state=rng).as_quat()
    q = q.reshape(tuple(shape) + (4,)).astype(dtype)
    p = rng.normal(size=tuple(shape) + (3,)).astype(dtype)
    t = (p + _unit_vectors(rng, shape) * rng.uniform(1, 3, size=tuple(shape) + (1,))).astype(dtype)
    axes = AimAxes(
        _unit_vectors(rng, shape) * rng.uniform(0.5, 2, size=tuple(shape) + (1,)),
        _unit_vectors(rng, shape),
        _unit_vectors(rng, shape) * offset_scale,
    )
    return q, p, t, axes, _unit_vectors(rng, shape)


def _world_ray(q, p, corr, axes):
    """SciPy: origin and direction of the corrected forward ray, world space."""
    turned = Rotation.from_quat(np.reshape(q, (-1, 4))) * Rotation.from_quat(
        np.reshape(corr, (-1, 4))
    )
    fwd = np.array(np.broadcast_to(axes.forward_local, np.shape(p))).reshape(-1, 3)
    off = np.array(np.broadcast_to(axes.offset_local, np.shape(p))).reshape(-1, 3)
    origin = np.reshape(p, (-1, 3)) + turned.apply(off)
    return origin, turned.apply(fwd), turned


@given(seed=SEEDS, shape=st.sampled_from(BATCH_SHAPES), dtype=st.sampled_from(DTYPES))
def test_reached_aims_the_axis_at_the_target(seed, shape, dtype):
    q, p, t, axes, pole = _problem(seed, shape, dtype)
    r = aim(q, p, t, axes, pole_world=pole)
    assert r.correction_local.shape == tuple(shape) + (4,) and r.reached.shape == tuple(shape)
    assert r.correction_local.dtype == dtype and r.reached.all()
    origin, direction, _ = _world_ray(q, p, r.correction_local, axes)
    way = np.reshape(t, (-1, 3)).astype(float) - origin
    sin = np.linalg.norm(np.cross(way, direction), axis=-1)
    angle = np.arctan2(sin, np.sum(way * direction, -1))
    tol = 1e-3 if dtype == np.float32 else 1e-9
    assert np.all(angle <= tol)
    assert np.all(r.error_angle <= tol)
    assert np.all(r.correction_local[..., 3] >= 0)
    assert np.allclose(np.linalg.norm(r.correction_local, axis=-1), 1, atol=1e-5)


@given(seed=SEEDS, dtype=st.sampled_from(DTYPES))
def test_up_turns_toward_the_pole_in_the_plane_square_to_the_aim(seed, dtype):
    q, p, t, axes, pole = _problem(seed, (20,), dtype)
    axes = axes._replace(offset_local=None)
    r = aim(q, p, t, axes, pole_world=pole)
    turned = Rotation.from_quat(q.astype(float)) * Rotation.from_quat(r.correction_local)
    d = (t - p).astype(float)
    d /= np.linalg.norm(d, axis=-1, keepdims=True)

    def square(v):  # the part square to the aim direction
        return v - np.sum(v * d, -1, keepdims=True) * d

    up, wanted = square(turned.apply(axes.up_local)), square(pole)
    clear = (np.linalg.norm(up, axis=-1) > 0.1) & (np.linalg.norm(wanted, axis=-1) > 0.1)
    up, wanted = up[clear], wanted[clear]
    up /= np.linalg.norm(up, axis=-1, keepdims=True)
    wanted /= np.linalg.norm(wanted, axis=-1, keepdims=True)
    assert np.all(np.sum(up * wanted, -1) >= 1 - (1e-5 if dtype == np.float32 else 1e-10))


@given(seed=SEEDS, twist=st.floats(-3.0, 3.0))
def test_twist_turns_about_the_target_direction(seed, twist):
    q, p, t, axes, pole = _problem(seed, (8,), np.float64)
    plain = aim(q, p, t, axes, pole_world=pole).correction_local
    twisted = aim(q, p, t, axes, pole_world=pole, twist_angle=twist).correction_local
    d_js = Rotation.from_quat(q).inv().apply(t - p)
    about = Rotation.from_rotvec(twist * d_js / np.linalg.norm(d_js, axis=-1, keepdims=True))
    assert_quat_close(twisted, (about * Rotation.from_quat(plain)).as_quat(), 1e-9)


@given(seed=SEEDS, w=st.floats(-1.0, 2.0))
def test_weight_blends_from_the_identity(seed, w):
    q, p, t, axes, pole = _problem(seed, (8,), np.float64)
    full = aim(q, p, t, axes, pole_world=pole).correction_local
    part = aim(q, p, t, axes, pole_world=pole, weight=w).correction_local
    c = min(max(w, 0.0), 1.0)
    blend = c * full + (1 - c) * np.array(I)
    assert_quat_close(part, blend / np.linalg.norm(blend, axis=-1, keepdims=True), 1e-12)
    if w <= 0:
        assert np.array_equal(part, np.broadcast_to(I, part.shape))


@pytest.mark.parametrize("shape", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_batch_is_its_elements_solved_one_by_one(shape, dtype):
    q, p, t, axes, pole = _problem(7, shape, dtype)
    w = np.linspace(0.2, 1.5, max(1, int(np.prod(shape)))).reshape(shape)
    r = aim(q, p, t, axes, pole_world=pole, twist_angle=0.3, weight=w)
    for i in np.ndindex(*shape):
        one = aim(q[i], p[i], t[i], AimAxes(*(a[i] for a in axes)), pole[i], 0.3, w[i])
        assert_quat_close(one.correction_local, r.correction_local[i], 1e-12)
        assert one.reached == r.reached[i]
        assert one.error_angle == pytest.approx(r.error_angle[i], abs=1e-12)


def test_arguments_broadcast_together():
    targets = np.array([[1.0, 0, 0], [0, 0, 1], [-1, 0, 0]])  # (3, 3)
    r = aim(np.array([I, rot(Y, 90)])[:, None], ZERO, targets, weight=[1.0, 0.5, 0.0])
    assert r.correction_local.shape == (2, 3, 4) and r.reached.shape == (2, 3)
    assert_quat_close(r.correction_local[0, 1], rot(Y, -45), 1e-12)
    assert_quat_close(r.correction_local[:, 2], [I, I], 0)


def test_degenerate_inputs_give_finite_corrections():
    n = 9
    q = np.tile(I, (n, 1))
    target = np.array([X, ZERO, X, 2 * Y, Y, X, X, -X, 1e-300 * X])
    fwd = np.array([X, X, ZERO, X, X, X, 1e-100 * X, X, X])
    up = np.array([Y, Y, Y, ZERO, Y, Y, Y, X, Y])
    pole = np.array([Y, Y, Y, Y, Y, ZERO, Y, -X, Y])
    off = np.array([5 * Y, ZERO, ZERO, ZERO, ZERO, ZERO, ZERO, ZERO, ZERO])
    r = aim(q, ZERO, target, AimAxes(fwd, up, off), pole_world=pole, weight=3.0)
    assert np.isfinite(r.correction_local).all() and np.isfinite(r.error_angle).all()
    assert np.allclose(np.linalg.norm(r.correction_local, axis=-1), 1)
    assert r.reached.tolist() == [False, False, False, True, True, True, True, True, False]
    assert_quat_close(r.correction_local[[0, 1, 2, 8]], np.tile(I, (4, 1)), 0)
    assert r.error_angle[2] == pytest.approx(math.pi)


# --------------------------------------------------------------------------------------
# Input errors: one line, naming the argument
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"joint_rotation_world": [0, 0, 1]}, "joint_rotation_world: expected shape (..., 4)"),
        ({"joint_rotation_world": [0, 0, 0, 2.0]}, "joint_rotation_world: not a unit quaternion"),
        ({"joint_rotation_world": [0, 0, 0, 0.0]}, "joint_rotation_world: not a unit"),
        ({"target_world": [1, np.nan, 0]}, "target_world: contains NaN"),
        (
            {"joint_position_world": [[0, 0, 0]] * 2, "target_world": [[1, 0, 0]] * 3},
            "batch shapes do not broadcast",
        ),
        ({"axes": AimAxes(forward_local=[1, 0])}, "forward_local: expected shape (..., 3)"),
        ({"axes": AimAxes(up_local=[np.inf, 0, 0])}, "up_local: contains NaN or infinite"),
        ({"axes": (X, Y, ZERO)}, "axes: expected AimAxes"),
        ({"pole_world": "up"}, "pole_world"),
        ({"weight": np.nan}, "weight: contains NaN"),
        ({"twist_angle": "a lot"}, "twist_angle: expected numbers"),
    ],
)
def test_bad_input_raises_one_line_naming_it(kwargs, needle):
    args = {"joint_rotation_world": I, "joint_position_world": ZERO, "target_world": X}
    with pytest.raises(InputError) as info:
        aim(**{**args, **kwargs})
    message = str(info.value)
    assert needle in message and "\n" not in message
