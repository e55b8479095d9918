"""Math against SciPy's Rotation on random batches, float32 and float64, and degenerate cases."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import (
    BATCH_SHAPES,
    DTYPES,
    assert_quat_close,
    batch_shapes,
    dtypes,
    random_quats,
    seeds,
)
from hypothesis import given, settings
from scipy.spatial.transform import Rotation

from ikrig.errors import InputError
from ikrig.math import (
    angle_between,
    any_perpendicular,
    cross,
    normalize,
    parse_order,
    project_on_plane,
    quat_angle,
    quat_between,
    quat_canonical,
    quat_conj,
    quat_from_axis_angle,
    quat_from_euler,
    quat_from_matrix,
    quat_from_rotvec,
    quat_identity,
    quat_inv,
    quat_mul,
    quat_nlerp,
    quat_normalize,
    quat_rotate,
    quat_slerp,
    quat_to_axis_angle,
    quat_to_euler,
    quat_to_matrix,
    quat_to_rotvec,
    signed_angle_2d,
    triangle_angle,
)

TAIT_BRYAN = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]
ORDERS = TAIT_BRYAN + [o.lower() for o in TAIT_BRYAN] + ["ZXZ", "XYX", "yzy", "zxz"]


def tol(dtype):
    return 2e-5 if dtype == np.float32 else 1e-12


def flat_rot(q):
    return Rotation.from_quat(np.asarray(q, dtype=np.float64).reshape(-1, 4))


@pytest.mark.parametrize("shape", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_mul_rotate_inverse_match_scipy(shape, dtype):
    rng = np.random.default_rng(1)
    a, b = random_quats(rng, shape, dtype), random_quats(rng, shape, dtype)
    v = rng.normal(size=shape + (3,)).astype(dtype)
    ab = quat_mul(a, b)
    assert ab.dtype == dtype and ab.shape == shape + (4,)
    expect = (flat_rot(a) * flat_rot(b)).as_quat().reshape(shape + (4,))
    assert_quat_close(ab, expect, 10 * tol(dtype))
    rv = quat_rotate(a, v)
    assert rv.dtype == dtype
    np.testing.assert_allclose(
        rv, flat_rot(a).apply(v.reshape(-1, 3)).reshape(v.shape), atol=10 * tol(dtype)
    )
    assert_quat_close(quat_mul(a, quat_conj(a)), quat_identity(shape), 10 * tol(dtype))
    assert_quat_close(quat_mul(quat_inv(2 * a), 2 * a), quat_identity(shape), 10 * tol(dtype))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("shape", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_euler_matches_scipy(order, shape, dtype):
    rng = np.random.default_rng(2)
    q = random_quats(rng, shape, dtype)
    e = quat_to_euler(q, order)
    assert e.dtype == dtype and e.shape == shape + (3,)
    expect = flat_rot(q).as_euler(order).reshape(shape + (3,))
    # compare as rotations (angles agree too except exactly at +-pi)
    np.testing.assert_allclose(np.cos(e), np.cos(expect), atol=100 * tol(dtype))
    np.testing.assert_allclose(np.sin(e), np.sin(expect), atol=100 * tol(dtype))
    back = quat_from_euler(e, order)
    assert back.dtype == dtype
    assert_quat_close(back, q, 100 * tol(dtype))
    expect_q = Rotation.from_euler(order, expect.reshape(-1, 3)).as_quat().reshape(shape + (4,))
    assert_quat_close(quat_from_euler(expect, order), expect_q, 10 * tol(np.float64))


@pytest.mark.parametrize("order", ORDERS)
def test_euler_gimbal_lock_round_trips(order):
    idx, _ = parse_order(order)
    mid = np.pi / 2 if idx[0] != idx[2] else 0.0
    angles = np.array([[0.3, mid, -0.7], [1.1, -mid if mid else np.pi, 0.4]])
    q = quat_from_euler(angles, order)
    e = quat_to_euler(q, order)
    assert np.isfinite(e).all()
    assert_quat_close(quat_from_euler(e, order), q, 1e-9)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("off", [1e-9, 1e-8, 3e-8, 1e-7])
def test_euler_near_gimbal_lock_round_trips_exactly(order, off):
    """A middle angle just short of its limit is not snapped to it: Blender's rig writer
    found a rotation 1e-8 rad from the lock (a curve passing -pi/2) coming back 5.7e-9
    off, from the gimbal branch setting one outer angle to 0."""
    idx, _ = parse_order(order)
    limit = np.pi / 2 if idx[0] != idx[2] else 0.0
    mids = [limit - off, -limit + off] if limit else [off, np.pi - off]
    angles = np.array([[3.0565, m, -2.3944] for m in mids])
    q = quat_from_euler(angles, order)
    assert_quat_close(quat_from_euler(quat_to_euler(q, order), order), q, 1e-12)


def test_euler_order_errors():
    for bad in ["XY", "XXY", "xYz", "abc", 3]:
        with pytest.raises(InputError):
            parse_order(bad)


@given(shape=batch_shapes, dtype=dtypes, seed=seeds)
@settings(max_examples=40, deadline=None)
def test_matrix_axis_angle_rotvec_round_trips(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    q = random_quats(rng, shape, dtype)
    m = quat_to_matrix(q)
    assert m.shape == shape + (3, 3) and m.dtype == dtype
    np.testing.assert_allclose(m, flat_rot(q).as_matrix().reshape(m.shape), atol=10 * tol(dtype))
    assert_quat_close(quat_from_matrix(m), q, 100 * tol(dtype))
    rv = quat_to_rotvec(q)
    np.testing.assert_allclose(rv, flat_rot(q).as_rotvec().reshape(rv.shape), atol=100 * tol(dtype))
    assert_quat_close(quat_from_rotvec(rv), q, 100 * tol(dtype))
    axis, angle = quat_to_axis_angle(q)
    assert np.all((angle >= 0) & (angle <= np.pi + 1e-6))
    assert_quat_close(quat_from_axis_angle(axis, angle), q, 100 * tol(dtype))
    np.testing.assert_allclose(quat_angle(q), angle, atol=100 * tol(dtype))


def test_small_and_zero_rotations():
    for rv in [np.zeros(3), np.array([1e-9, 0, 0]), np.array([0, 1e-5, 2e-5])]:
        q = quat_from_rotvec(rv)
        assert_quat_close(q, Rotation.from_rotvec(rv).as_quat(), 1e-15)
        np.testing.assert_allclose(quat_to_rotvec(q), rv, atol=1e-15)
    assert_quat_close(quat_from_axis_angle(np.zeros(3), 1.0), quat_identity(), 0)
    assert_quat_close(quat_normalize(np.zeros(4)), quat_identity(), 0)
    assert_quat_close(quat_inv(np.zeros(4)), quat_identity(), 0)


@given(shape=batch_shapes, dtype=dtypes, seed=seeds)
@settings(max_examples=40, deadline=None)
def test_quat_between(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    u = rng.normal(size=shape + (3,)).astype(dtype)
    v = rng.normal(size=shape + (3,)).astype(dtype) * 3
    for target in (v, -u * 2, u * 0.5):  # general, antiparallel, parallel
        q = quat_between(u, target)
        assert q.dtype == dtype and np.isfinite(q).all()
        got = quat_rotate(q, normalize(u))
        np.testing.assert_allclose(got, normalize(target), atol=1e3 * tol(dtype))
        # shortest arc: the rotation angle equals the angle between the vectors
        np.testing.assert_allclose(quat_angle(q), angle_between(u, target), atol=1e3 * tol(dtype))
    assert_quat_close(quat_between(np.zeros(3), v), quat_identity(shape), 0)


@given(shape=batch_shapes, dtype=dtypes, seed=seeds)
@settings(max_examples=30, deadline=None)
def test_slerp_nlerp(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a, b = random_quats(rng, shape, dtype), random_quats(rng, shape, dtype)
    t = rng.uniform(size=shape).astype(dtype)
    s = quat_slerp(a, b, t)
    n = quat_nlerp(a, b, t)
    assert s.dtype == dtype and n.dtype == dtype
    assert_quat_close(quat_slerp(a, -b, 0.0), a, 10 * tol(dtype))
    assert_quat_close(quat_slerp(a, -b, 1.0), b, 100 * tol(dtype))
    # slerp has constant speed: angle(a, s) = t * angle(a, b) along the shortest path
    ang_ab = quat_angle(quat_mul(quat_conj(a), b))
    ang_as = quat_angle(quat_mul(quat_conj(a), s))
    np.testing.assert_allclose(ang_as, t * ang_ab, atol=1e3 * tol(dtype))
    # nlerp lies on the same great arc
    ang_sn = quat_angle(quat_mul(quat_conj(n), quat_slerp(a, b, _nlerp_param(a, b, n))))
    assert np.all(ang_sn < 1e3 * tol(dtype) + 1e-3)
    assert_quat_close(quat_nlerp(a, a, 0.3), a, 10 * tol(dtype))


def _nlerp_param(a, b, n):
    ang_ab = quat_angle(quat_mul(quat_conj(a), b))
    ang_an = quat_angle(quat_mul(quat_conj(a), n))
    return np.where(ang_ab > 0, ang_an / np.where(ang_ab > 0, ang_ab, 1), 0)


def test_slerp_matches_scipy():
    from scipy.spatial.transform import Slerp

    rng = np.random.default_rng(3)
    a, b = random_quats(rng, ()), random_quats(rng, ())
    t = np.linspace(0, 1, 7)
    expect = Slerp([0, 1], Rotation.from_quat([a, b]))(t).as_quat()
    assert_quat_close(quat_slerp(a, b, t), expect, 1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vector_helpers(dtype):
    v = np.array([[3, 4, 0], [0, 0, 0]], dtype=dtype)
    n = normalize(v)
    assert n.dtype == dtype
    np.testing.assert_allclose(n, [[0.6, 0.8, 0], [0, 0, 0]], atol=1e-7)
    np.testing.assert_allclose(normalize(v, fallback=[1, 0, 0])[1], [1, 0, 0])
    np.testing.assert_allclose(
        angle_between([1, 0, 0], [[0, 1, 0], [-1, 0, 0], [1, 1e-9, 0], [0, 0, 0]]),
        [np.pi / 2, np.pi, 1e-9, 0],
        rtol=1e-6,
    )
    np.testing.assert_allclose(project_on_plane([1, 2, 3], [0, 0, 5]), [1, 2, 0])
    np.testing.assert_allclose(project_on_plane([1, 2, 3], [0, 0, 0]), [1, 2, 3])
    np.testing.assert_allclose(
        signed_angle_2d([1, 0], [[0, 1], [0, -1], [-1, 0], [0, 0]]),
        [np.pi / 2, -np.pi / 2, np.pi, 0],
    )
    rng = np.random.default_rng(4)
    u = np.concatenate([rng.normal(size=(20, 3)), np.eye(3), np.zeros((1, 3))]).astype(dtype)
    p = any_perpendicular(u)
    np.testing.assert_allclose(np.linalg.norm(p, axis=-1), 1, rtol=1e-6)
    np.testing.assert_allclose(np.sum(p * u, axis=-1), 0, atol=1e-5)


def test_canonical_and_dtype_promotion():
    q = np.array([0.0, 0.0, 0.6, -0.8])
    np.testing.assert_allclose(quat_canonical(q), -q)
    a32 = np.array([0, 0, 0, 1], dtype=np.float32)
    assert quat_mul(a32, a32).dtype == np.float32
    assert quat_mul(a32, np.array([0, 0, 0, 1.0])).dtype == np.float64


Q, V, M = np.zeros((3, 4)), np.zeros((3, 3)), np.zeros((3, 3, 3))
HOSTILE = [
    # (call, what the one-line message says)
    (lambda: quat_mul(V, Q), "a: expected shape (..., 4), got (3, 3)"),
    (lambda: quat_mul(np.zeros((3, 5)), Q), "a: expected shape (..., 4), got (3, 5)"),
    (lambda: quat_mul(Q, np.zeros((2, 4))), "batch shapes do not broadcast: a (3,), b (2,)"),
    (lambda: quat_rotate(Q, np.zeros((3, 4))), "v: expected shape (..., 3), got (3, 4)"),
    (lambda: quat_rotate(Q, np.zeros((2, 3))), "batch shapes do not broadcast: q (3,), v (2,)"),
    (lambda: quat_rotate("abcd", [1, 2, 3]), "q: expected numbers, got dtype <U4"),
    (lambda: quat_mul([[0, 0, 0, 1], [0, 0]], Q), "a: cannot be read as a numeric array"),
    (lambda: quat_normalize(V), "q: expected shape (..., 4)"),
    (lambda: quat_to_matrix(V), "q: expected shape (..., 4)"),
    (lambda: quat_from_matrix(Q), "m: expected shape (..., 3, 3), got (3, 4)"),
    (lambda: quat_from_axis_angle(V, np.zeros(2)), "do not broadcast: axis (3,), angle (2,)"),
    (lambda: quat_from_rotvec(Q), "rotvec: expected shape (..., 3)"),
    (lambda: quat_between(V, np.zeros((2, 3))), "do not broadcast: u (3,), v (2,)"),
    (lambda: quat_slerp(Q, Q, np.zeros(2)), "do not broadcast: a (3,), b (3,), t (2,)"),
    (lambda: quat_nlerp(Q, np.zeros((2, 4)), 0.5), "do not broadcast: a (3,), b (2,), t ()"),
    (lambda: cross(V, np.zeros((2, 3))), "batch shapes do not broadcast: a (3,), b (2,)"),
    (lambda: cross(V, Q), "b: expected shape (..., 3), got (3, 4)"),
    (lambda: angle_between(V, np.zeros((2, 3))), "batch shapes do not broadcast: a (3,), b (2,)"),
    (lambda: normalize(V, fallback=[1.0, 0.0]), "fallback: shape (2,) does not broadcast"),
    (lambda: project_on_plane(V, np.zeros((2, 3))), "do not broadcast: v (3,), normal (2,)"),
    (lambda: signed_angle_2d(V, V), "a: expected shape (..., 2), got (3, 3)"),
    (lambda: any_perpendicular(np.zeros(2)), "v: expected shape (..., 3), got (2,)"),
    (lambda: quat_to_euler(V), "q: expected shape (..., 4), got (3, 3)"),
    (lambda: quat_from_euler(M[..., :2]), "angles: expected shape (..., 3), got (3, 3, 2)"),
]


@pytest.mark.parametrize("call, message", HOSTILE)
def test_wrong_shapes_and_types_raise_one_clear_line(call, message):
    """Bad structure (a wrong last axis, batch shapes that do not broadcast, text, ragged
    lists) raises InputError naming the argument, never NumPy's IndexError or ValueError
    and never a silent answer from the first four of five components."""
    with pytest.raises(InputError) as info:
        call()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_nan_passes_through_the_math():
    """Values are not looked at: NaN gives NaN (the solvers and readers check values)."""
    assert np.isnan(quat_mul([np.nan, 0, 0, 1], [0, 0, 0, 1])).any()
    assert np.isnan(cross([np.nan, 0, 0], [0, 1, 0])).any()


@given(shape=batch_shapes, dtype=dtypes, seed=seeds)
@settings(max_examples=30, deadline=None)
def test_triangle_angle_is_the_angle_between_the_sides(shape, dtype, seed):
    """The angle at the vertex shared by sides ``a`` and ``b`` of a real triangle, read off
    its points with :func:`angle_between`; clamped to straight and folded beyond."""
    rng = np.random.default_rng(seed)
    p, q = (rng.normal(size=shape + (3,)).astype(dtype) for _ in range(2))
    a, b, c = (np.linalg.norm(x, axis=-1) for x in (p, q, p - q))
    got = triangle_angle(a, b, c)
    assert got.shape == shape
    np.testing.assert_allclose(got, angle_between(p, q), atol=3e-3 if dtype == np.float32 else 1e-6)
    np.testing.assert_allclose(triangle_angle(a, b, a + b + 1.0), np.pi)
    np.testing.assert_allclose(triangle_angle(a, a, 0.0), 0.0, atol=1e-7)
