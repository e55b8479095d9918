"""The compiled scalar helpers of ``ikrig.kernels.qmath`` against the public ``ikrig.math``
array functions, on random inputs (quaternions compared up to sign).

The kernels of every chain solver and constraint are built from these helpers, so a helper
that drifted from the public math would make the solvers disagree with ``ikrig.math``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import assert_quat_close
from hypothesis import assume, example, given
from hypothesis import strategies as st

from ikrig.kernels import qmath as qm
from ikrig.math import (
    any_perpendicular,
    cross,
    dot,
    norm,
    normalize,
    quat_between,
    quat_conj,
    quat_from_rotvec,
    quat_mul,
    quat_normalize,
    quat_rotate,
    quat_to_rotvec,
)

coord = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)
vec3 = st.tuples(coord, coord, coord)
quat4 = st.tuples(coord, coord, coord, coord)
angle = st.floats(-20.0, 20.0, allow_nan=False, allow_infinity=False)


def unit(q):
    """``q`` as a unit quaternion tuple (hypothesis inputs far from zero only)."""
    n = float(np.linalg.norm(q))
    assume(n > 1e-3)
    return tuple(float(x) / n for x in q)


def f32(t):
    return tuple(np.float32(x) for x in t)


def close(a, b, tol=1e-12, scale=1.0):
    np.testing.assert_allclose(
        np.asarray(a, np.float64), np.asarray(b, np.float64), atol=tol * scale
    )


# ------------------------------------------------------------------ quaternions
@given(quat4, quat4)
def test_q_mul_is_quat_mul(a, b):
    close(qm.q_mul(a, b), quat_mul(np.array(a), np.array(b)), scale=100.0)
    got32 = qm.q_mul(f32(a), f32(b))
    want32 = quat_mul(np.array(a, np.float32), np.array(b, np.float32))
    close(got32, want32, tol=1e-5, scale=100.0)


@given(quat4)
def test_q_conj_is_quat_conj(q):
    assert qm.q_conj(q) == tuple(quat_conj(np.array(q)))
    assert qm.q_conj(f32(q)) == tuple(quat_conj(np.array(q, np.float32)))


@given(quat4, vec3)
def test_q_rotate_is_quat_rotate(q, v):
    q = unit(q)
    close(qm.q_rotate(q, v), quat_rotate(np.array(q), np.array(v)), scale=10.0)
    got32 = qm.q_rotate(f32(q), f32(v))
    close(got32, quat_rotate(np.array(q, np.float32), np.array(v, np.float32)), 1e-5, 10.0)


@given(quat4)
def test_q_normalize_is_quat_normalize(q):
    assume(np.linalg.norm(q) == 0.0 or np.linalg.norm(q) > 1e-100)
    close(qm.q_normalize(q), quat_normalize(np.array(q)))


def test_q_normalize_of_zero_is_identity():
    assert qm.q_normalize((0.0, 0.0, 0.0, 0.0)) == (0.0, 0.0, 0.0, 1.0)
    assert tuple(quat_normalize(np.zeros(4))) == (0.0, 0.0, 0.0, 1.0)


@given(vec3, vec3)
@example((0.0, 0.0, 3.908277797167085e-96), (0.0, 3.908277797167085e-96, 0.0))  # a quarter turn
def test_q_between_is_quat_between(u, v):
    got = np.array(qm.q_between(u, v))
    want = quat_between(np.array(u), np.array(v))
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    assume(nu == 0.0 or nu > 1e-100)
    assume(nv == 0.0 or nv > 1e-100)
    if nu == 0.0 or nv == 0.0:
        assert tuple(got) == tuple(want) == (0.0, 0.0, 0.0, 1.0)
        return
    # nearly opposite vectors: the two switch to a half turn at different thresholds, so
    # there both need only take u's direction to v's
    cos = float(np.dot(u, v) / (nu * nv))
    if cos < -1.0 + 1e-6:
        for q in (got, want):
            close(quat_rotate(q, np.array(u)) / nu, np.array(v) / nv, tol=1e-6)
            assert abs(np.linalg.norm(q) - 1.0) < 1e-12
    else:
        assert_quat_close(got, want, atol=1e-9)


def test_q_between_of_opposite_vectors_is_the_same_half_turn():
    for u in ([1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.3, -0.2, 5.0], [1.0, 1.0, 1.0]):
        u = np.array(u)
        assert_quat_close(qm.q_between(tuple(u), tuple(-u)), quat_between(u, -u), atol=1e-15)


@given(vec3)
def test_q_exp_is_quat_from_rotvec(v):
    assume(np.linalg.norm(v) == 0.0 or np.linalg.norm(v) > 1e-100)
    close(qm.q_exp(v), quat_from_rotvec(np.array(v)))


@given(quat4)
def test_q_log_is_quat_to_rotvec(q):
    q = unit(q)
    rotvec, ang = qm.q_log(q)
    want = quat_to_rotvec(np.array(q))
    close(rotvec, want, tol=1e-9)
    assert ang == pytest.approx(np.linalg.norm(want), abs=1e-9)
    assert 0.0 <= ang <= math.pi


# ------------------------------------------------------------------ vectors
@given(vec3, vec3)
def test_vector_helpers_are_the_vector_functions(a, b):
    A, B = np.array(a), np.array(b)
    close(qm.v_dot(a, b), dot(A, B), scale=100.0)
    close(qm.v_cross(a, b), cross(A, B), scale=100.0)
    close(qm.v_norm(a), norm(A), scale=10.0)
    assert qm.v_sub(a, b) == tuple(A - B)
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    close(qm.v_dot(f32(a), f32(b)), dot(A32, B32), 1e-5, 100.0)
    close(qm.v_cross(f32(a), f32(b)), cross(A32, B32), 1e-5, 100.0)


@given(vec3, vec3)
def test_v_normalize_is_normalize(v, fallback):
    assume(np.linalg.norm(v) == 0.0 or np.linalg.norm(v) > 1e-100)
    close(qm.v_normalize(v, fallback), normalize(np.array(v), fallback=np.array(fallback)))


@given(vec3, vec3, st.booleans())
def test_v_unit_or_is_normalize_falling_back_to_a_perpendicular(v, z, zero):
    """The lazy fallback gives what the eager one gives: ``v``'s direction, else a
    perpendicular of ``z``."""
    v = (0.0, 0.0, 0.0) if zero else v
    assume(np.linalg.norm(v) == 0.0 or np.linalg.norm(v) > 1e-100)
    assert qm.v_unit_or(v, z) == qm.v_normalize(v, qm.v_any_perpendicular(z))


@given(vec3)
def test_v_any_perpendicular_is_any_perpendicular(v):
    assume(np.linalg.norm(v) == 0.0 or np.linalg.norm(v) > 1e-100)
    close(qm.v_any_perpendicular(v), any_perpendicular(np.array(v)))


# ------------------------------------------------------------------ arrays <-> tuples
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_read_and_write_as_tuples(dtype):
    rng = np.random.default_rng(0)
    q, v = rng.normal(size=(3, 4)).astype(dtype), rng.normal(size=(3, 3)).astype(dtype)
    assert qm.q_from_array(q[1]) == tuple(float(x) for x in q[1])
    assert qm.v_from_array(v[2]) == tuple(float(x) for x in v[2])
    assert qm.q_get(q, 2) == tuple(q[2]) and qm.v_get(v, 0) == tuple(v[0])
    q2, v2 = np.zeros_like(q), np.zeros_like(v)
    qm.q_set(q2, 1, qm.q_get(q, 1))
    qm.v_set(v2, 2, qm.v_get(v, 2))
    assert np.array_equal(q2[1], q[1]) and np.array_equal(v2[2], v[2])
    assert not q2[[0, 2]].any() and not v2[:2].any()


# ------------------------------------------------------------------ angles
@given(angle)
def test_wrap_angle(t):
    w = qm.wrap_angle(t)
    assert -math.pi < w <= math.pi
    assert math.remainder(w - t, 2.0 * math.pi) == pytest.approx(0.0, abs=1e-12)


@given(angle, angle)
def test_circ_dist(a, b):
    d = qm.circ_dist(a, b)
    assert 0.0 <= d <= math.pi
    assert d == pytest.approx(abs(math.remainder(a - b, 2.0 * math.pi)), abs=1e-12)


@given(st.floats(-math.pi, math.pi), st.floats(0.0, 2.0 * math.pi), st.floats(-math.pi, math.pi))
def test_angle_interval(lo, span, t):
    assume(t > -math.pi)
    hi = min(lo + span, 2.0 * math.pi)
    inside = qm.angle_in_interval(lo, hi, t)
    near = qm.nearest_angle_in_interval(lo, hi, t)
    assert lo <= near <= hi
    if inside:
        assert qm.circ_dist(near, t) == pytest.approx(0.0, abs=1e-12)
    else:
        ends = min(qm.circ_dist(lo, t), qm.circ_dist(hi, t))
        assert qm.circ_dist(near, t) == ends


# ------------------------------------------------------------------ chains
@pytest.mark.parametrize("n", [1, 4])
def test_chain_fk_is_public_quat_math(n):
    rng = np.random.default_rng(n)
    bone = rng.normal(size=(n, 3))
    rl = quat_normalize(rng.normal(size=(n, 4)))
    pq = tuple(quat_normalize(rng.normal(size=4)))
    root = tuple(rng.normal(size=3))
    pos, rw = np.zeros((n + 1, 3)), np.zeros((n, 4))
    qm.chain_fk(bone, rl, pq, root, pos, rw)
    w, p = np.array(pq), np.array(root)
    close(pos[0], p)
    for i in range(n):
        w = quat_mul(w, rl[i])
        p = p + quat_rotate(w, bone[i])
        close(rw[i], w)
        close(pos[i + 1], p, scale=10.0)


def test_rest_frame_expresses_the_bones_in_the_parent_frame():
    rng = np.random.default_rng(1)
    pk = rng.normal(size=(4, 3))
    parent = rng.normal(size=4)
    bone = np.zeros((3, 3))
    pq = qm.rest_frame(pk, parent, bone)
    close(pq, quat_normalize(parent))
    close(quat_rotate(np.array(pq), bone), np.diff(pk, axis=0))
    assert np.array_equal(qm.identity_rotations(3), np.tile([0.0, 0.0, 0.0, 1.0], (3, 1)))


def test_finite_checks_and_pick():
    a = np.ones((2, 3))
    assert qm.all_finite(a)
    a[1, 2] = np.nan
    assert not qm.all_finite(a)
    big = np.full((3, 3), 1e308)
    target = np.full((1, 3), 1e308)
    assert qm.row_finite(big, target, 0)
    big[2, 1] = np.inf
    assert not qm.row_finite(big, target, 0)
    shared, per = np.arange(3.0)[None], np.arange(6.0).reshape(2, 3)
    assert np.array_equal(qm.pick(shared, 1), shared[0])
    assert np.array_equal(qm.pick(per, 1), per[1])
