"""Properties of the two-bone solver over random and degenerate problems (issue 9).

Every public entry point (:func:`two_bone_positions`, :func:`two_bone_positions_soa`,
:func:`solve_two_bone`) in float32 and float64, batch shapes ``()``, ``(n,)`` and
``(a, b)``, problems scaled by 1e-10 to 1e10, mixed with degenerate ones (zero-length
bones, target at the hip, target at the hip with the pole on the thigh line, pole on the
aim line, pole at the hip or at the target, straight and folded chains, a target at 1e30):

* outputs are finite;
* bone lengths are kept (times the reported stretch) to 1e-6 of the bone (1e-4 in
  float32), plus a few rounding units of the coordinates' magnitude: a coordinate cannot
  be more exact than its dtype;
* rotation deltas are unit quaternions with ``w >= 0`` that turn the old bones onto the new
  ones (scaled by the stretch);
* ``reached`` means the end lies within ``tolerance * L`` of the target, and is False for a
  degenerate chain; the stretch lies in ``[1, max_stretch]``; weight 0 changes nothing.

Also the regression tests of issue 9's two-bone items: float32 problems at 1e-10 and with a
target at 1e30, stretch under a weight, and the shortest-arc rotation option.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ikrig._jit.setup import njit
from ikrig.errors import InputError
from ikrig.kernels.two_bone import (
    TwoBoneConstants,
    TwoBonePoints,
    make_constants,
    solve_two_bone_positions_serial,
    unpack_constants,
)
from ikrig.math import quat_conj, quat_mul, quat_rotate
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers import (
    TwoBoneOptions,
    solve_two_bone,
    two_bone_positions,
    two_bone_positions_only,
    two_bone_positions_soa,
)
from ikrig.solvers.two_bone._loops import AOS_SERIAL, OUT_END, OUT_MID, OUT_STRETCH

DTYPES = [np.float32, np.float64]
SHAPES = [(), (6,), (2, 5)]
SCALES = [1e-10, 1e-5, 1.0, 1e5, 1e10]
RTOL = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-6}
# the kernels' "zero length" threshold: shorter bone below EPS times the longer one
EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}
N_KINDS = 16

options_st = st.builds(
    TwoBoneOptions,
    soften=st.sampled_from([1.0, 1.0, 0.9]),
    max_stretch=st.sampled_from([1.0, 1.0, 1.3]),
    root_rotation=st.sampled_from(["bend_plane", "shortest_arc"]),
)
weights_st = st.sampled_from(["one", "zero", "half", "array"])


def units(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def make_problems(rng, n, scale):
    """``(root, mid, end, target, pole)``, each ``(n, 3)`` float64, and each row's kind.

    Kinds 0-3 are ordinary bent chains (targets up to 1.3 times the reach); the others are
    degenerate cases. The problem is scaled by ``scale`` except a target at 1e30 (kind 13).
    """
    root = rng.normal(size=(n, 3))
    l1 = rng.uniform(0.3, 1.5, (n, 1))
    l2 = rng.uniform(0.3, 1.5, (n, 1))
    mid = root + l1 * units(rng, n)
    end = mid + l2 * units(rng, n)
    target = root + rng.uniform(0, 1.3, (n, 1)) * (l1 + l2) * units(rng, n)
    pole = root + rng.normal(size=(n, 3))
    kind = rng.integers(0, N_KINDS, n)
    t = rng.uniform(-2, 2, (n, 1))

    def where(k, new, old):
        return np.where((kind == k)[:, None], new, old)

    mid = where(4, root, mid)  # zero-length thigh
    end = where(5, mid, end)  # zero-length shin
    mid, end = where(6, root, mid), where(6, root, end)  # every joint at the hip
    target = where(7, root, target)  # target at the hip
    target = where(8, root, target)  # ... with the pole on the thigh line
    pole = where(8, root + t * (mid - root), pole)
    pole = where(9, root + t * (target - root), pole)  # pole on the aim line
    pole = where(10, root, pole)  # pole at the hip
    straight = mid + (mid - root) * (l2 / l1)  # straight chain, target along it
    end = where(11, straight, end)
    target = where(11, root + (mid - root) * t, target)
    pole = where(11, root + (mid - root) * 0.5, pole)
    end = where(12, root, end)  # folded: equal bones, the end back on the hip
    pole = where(14, target, pole)  # pole at the target
    mid = where(15, root + 0.5 * (target - root), mid)  # mid on the aim line, no pole help
    pole = where(15, mid, pole)
    out = [a * scale for a in (root, mid, end, target, pole)]
    out[3] = where(13, 1e30 * units(rng, n), out[3])  # a target at 1e30, whatever the scale
    return out, kind


def weight_value(name, rng, batch):
    fixed = {"one": 1.0, "zero": 0.0, "half": 0.5}
    return fixed[name] if name in fixed else rng.uniform(0, 1, batch)


def chain_lengths(root, mid, end):
    return np.linalg.norm(mid - root, axis=-1), np.linalg.norm(end - mid, axis=-1)


def tolerances(dtype, l1, l2, *points):
    """Per element: the allowed error on a bone (relative part on ``l``, plus rounding of the
    coordinates' magnitude)."""
    mag = np.max([np.abs(p).max(axis=-1) for p in points], axis=0) + l1 + l2
    atol = 32 * np.finfo(dtype).eps * mag
    return RTOL[np.dtype(dtype)], atol


def degenerate(dtype, l1, l2):
    return np.minimum(l1, l2) <= EPS[np.dtype(dtype)] * np.maximum(l1, l2)


def check_chain(dtype, old, new_mid, new_end, stretch, reached, tolerance, max_stretch):
    """Finite outputs, kept bone lengths, stretch range and ``reached`` semantics (float64)."""
    root, mid, end, target = (np.asarray(a, np.float64) for a in old)
    new_mid, new_end = np.asarray(new_mid, np.float64), np.asarray(new_end, np.float64)
    assert np.isfinite(new_mid).all() and np.isfinite(new_end).all()
    l1, l2 = chain_lengths(root, mid, end)
    n1, n2 = chain_lengths(root, new_mid, new_end)
    rtol, atol = tolerances(dtype, l1, l2, root, new_mid, new_end)
    if stretch is None:  # SoA and pose level: no stretch output; both bones share one factor
        stretch = np.ones_like(l1)
        if max_stretch > 1.0:
            longer = np.maximum(l1, l2)
            seen = np.where(l1 >= l2, n1, n2) / np.where(longer > 0, longer, 1.0)
            stretch = np.where(degenerate(dtype, l1, l2), 1.0, seen)
    stretch = np.asarray(stretch, np.float64)
    assert np.isfinite(stretch).all()
    assert np.all(stretch >= 1 - rtol) and np.all(stretch <= max_stretch * (1 + rtol))
    if max_stretch == 1.0:
        np.testing.assert_array_equal(stretch, np.ones_like(stretch))
    err1 = np.abs(n1 - l1 * stretch)
    err2 = np.abs(n2 - l2 * stretch)
    assert np.all(err1 <= rtol * l1 * stretch + atol), f"thigh off by {err1.max()}"
    assert np.all(err2 <= rtol * l2 * stretch + atol), f"shin off by {err2.max()}"
    # reached: the end within tolerance * L of the target (up to rounding at the limit)
    L = l1 + l2
    dist = np.linalg.norm(new_end - target, axis=-1)
    lim = tolerance * L
    band = 1e-3 * lim + 4 * atol
    assert not np.any(reached & degenerate(dtype, l1, l2))
    assert np.all(~reached | (dist <= lim + band))
    assert np.all(reached | (dist >= lim - band) | degenerate(dtype, l1, l2))
    return l1, l2, rtol, atol


def check_quats(dtype, *quats, positive_w=True):
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    for q in quats:
        q = np.asarray(q, np.float64)
        assert np.isfinite(q).all()
        assert np.all(np.abs(np.linalg.norm(q, axis=-1) - 1) <= tol)
        assert not positive_w or np.all(q[..., 3] >= 0)


# ----------------------------------------------------------------------- property tests


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@given(
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 2**32 - 1),
    options=options_st,
    weight=weights_st,
    twist=st.sampled_from([0.0, 0.7]),
    use_pole=st.booleans(),
)
def test_positions_properties(dtype, shape, scale, seed, options, weight, twist, use_pole):
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    (root, mid, end, target, pole), _ = make_problems(rng, n, scale)
    args = [a.reshape(shape + (3,)).astype(dtype) for a in (root, mid, end, target, pole)]
    p = args[4] if use_pole else None
    w = weight_value(weight, rng, shape)
    r = two_bone_positions(*args[:4], p, w, twist, options)
    assert r.mid_world.dtype == dtype and r.reached.shape == shape
    l1, l2, rtol, atol = check_chain(
        dtype, args[:4], r.mid_world, r.end_world, r.stretch, r.reached,
        options.tolerance, options.max_stretch,
    )  # fmt: skip
    check_quats(dtype, r.root_rotation_world, r.mid_rotation_world)
    # the deltas turn the old bones (times the stretch) onto the new ones
    root64, mid64, end64 = (np.asarray(a, np.float64) for a in args[:3])
    s = np.asarray(r.stretch, np.float64)[..., None]
    qr = np.asarray(r.root_rotation_world, np.float64)
    qm = np.asarray(r.mid_rotation_world, np.float64)
    nm, ne = np.asarray(r.mid_world, np.float64), np.asarray(r.end_world, np.float64)
    e1 = np.linalg.norm(quat_rotate(qr, mid64 - root64) * s - (nm - root64), axis=-1)
    e2 = np.linalg.norm(quat_rotate(qm, end64 - mid64) * s - (ne - nm), axis=-1)
    assert np.all(e1 <= 2 * rtol * l1 + atol), f"root delta off by {e1.max()}"
    assert np.all(e2 <= 2 * rtol * (l1 + l2) + 2 * atol), f"mid delta off by {e2.max()}"
    if weight == "zero":  # weight 0: nothing moves
        ident = np.broadcast_to([0, 0, 0, 1.0], shape + (4,))
        np.testing.assert_allclose(qr, ident, atol=1e-7)
        np.testing.assert_allclose(qm, ident, atol=1e-7)
        assert np.all(np.abs(nm - mid64).max(axis=-1) <= atol)
        np.testing.assert_array_equal(r.stretch, np.ones(shape))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@given(
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 2**32 - 1),
    options=options_st,
    weight=weights_st,
    n=st.sampled_from([1, 300]),
)
def test_soa_properties(dtype, shape, scale, seed, options, weight, n):
    # shape only sets how many problems (prod(shape) * n) the (3, N) arrays hold
    rng = np.random.default_rng(seed)
    m = math.prod(shape) * n
    arrays, _ = make_problems(rng, m, scale)
    soa = [np.ascontiguousarray(a.T.astype(dtype)) for a in arrays]
    w = weight_value(weight, rng, (m,))
    r = two_bone_positions_soa(*soa, weight=w, options=options)
    assert r.mid_world.dtype == dtype and r.mid_world.shape == (3, m)
    old = [a.T for a in soa[:4]]
    check_chain(
        dtype, old, r.mid_world.T, r.end_world.T, None, r.reached,
        options.tolerance, options.max_stretch,
    )  # fmt: skip


@pytest.mark.parametrize("shape", SHAPES + [(1000,)])  # (1000,): the parallel kernel
@pytest.mark.parametrize("dtype", DTYPES)
@given(
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 2**32 - 1),
    options=options_st,
    use_pole=st.booleans(),
)
def test_positions_only_properties(dtype, shape, scale, seed, options, use_pole):
    """Issue 40's positions-only call: the chain properties, and the positions and
    ``reached`` of the full call at weight 1 (up to the square root of a rounding, the
    most a straight chain's knee can move by it)."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    (root, mid, end, target, pole), _ = make_problems(rng, n, scale)
    args = [a.reshape(shape + (3,)).astype(dtype) for a in (root, mid, end, target, pole)]
    p = args[4] if use_pole else None
    r = two_bone_positions_only(*args[:4], p, options)
    assert r.mid_world.dtype == dtype and r.mid_world.shape == shape + (3,)
    assert r.reached.shape == shape and r.reached.dtype == np.bool_
    l1, l2, rtol, atol = check_chain(
        dtype, args[:4], r.mid_world, r.end_world, None, r.reached,
        options.tolerance, options.max_stretch,
    )  # fmt: skip
    full = two_bone_positions(*args[:4], p, options=options)
    L = (l1 + l2) * (options.max_stretch if options.max_stretch > 1 else 1.0)
    lim = (4 * np.sqrt(np.finfo(dtype).eps) * L + atol)[..., None]
    for got, want in ((r.mid_world, full.mid_world), (r.end_world, full.end_world)):
        assert np.all(np.abs(np.asarray(got, np.float64) - want) <= lim)
    # reached agrees but for ends within a rounding of the tolerance's edge
    dist = np.linalg.norm(np.asarray(full.end_world, np.float64) - args[3], axis=-1)
    edge = np.abs(dist - options.tolerance * (l1 + l2)) <= 1e-3 * options.tolerance * L + 4 * atol
    assert np.all((r.reached == full.reached) | edge)


def test_positions_only_single_calls_errors_and_broadcasting():
    r = two_bone_positions_only([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], [0.3, 0.2, 0.2])
    assert r.mid_world.shape == (3,) and r.reached.shape == () and bool(r.reached)
    f32 = [np.array(v, np.float32) for v in ([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], [0.3, 0.2, 0.2])]
    assert two_bone_positions_only(*f32).end_world.dtype == np.float32
    targets = np.random.default_rng(1).normal(scale=0.3, size=(4, 5, 3))
    many = two_bone_positions_only([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], targets)
    one = [two_bone_positions_only([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], t) for t in
           targets.reshape(-1, 3)]  # fmt: skip
    np.testing.assert_allclose(many.mid_world.reshape(-1, 3), [o.mid_world for o in one],
                               atol=1e-12)  # fmt: skip
    with pytest.raises(InputError, match="target_world"):
        two_bone_positions_only([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], [np.nan, 0, 0])
    with pytest.raises(InputError, match="pole_world"):
        two_bone_positions_only(np.zeros((1000, 3)), np.zeros((1000, 3)) + [0, -1, 0],
                                np.zeros((1000, 3)) + [0, -2, 0], np.ones((1000, 3)),
                                np.full((1000, 3), np.inf))  # fmt: skip
    with pytest.raises(InputError, match="do not broadcast"):
        two_bone_positions_only(np.zeros((2, 3)), np.zeros((3, 3)), np.zeros(3), np.zeros(3))


def motion_of(root, mid, end, dtype):
    """A batch of three-joint poses (identity rotations) with the given world positions."""
    sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1], [[0, 0, 0], [0, -1, 0], [0, -1, 0]])
    pl = np.stack([root, mid - root, end - mid], axis=-2).astype(dtype)
    rl = np.zeros(pl.shape[:-1] + (4,), dtype)
    rl[..., 3] = 1
    return Motion(sk, rl, pl)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
@given(
    scale=st.sampled_from(SCALES),
    seed=st.integers(0, 2**32 - 1),
    options=options_st,
    weight=weights_st,
)
def test_pose_level_properties(dtype, shape, scale, seed, options, weight):
    rng = np.random.default_rng(seed)
    (root, mid, end, target, pole), _ = make_problems(rng, math.prod(shape), scale)
    root, mid, end, target, pole = (a.reshape(shape + (3,)) for a in (root, mid, end, target, pole))
    motion = motion_of(root, mid, end, dtype)
    res = solve_two_bone(
        motion, ("hip", "knee", "ankle"), target.astype(dtype), pole.astype(dtype),
        weight_value(weight, rng, shape), options=options,
    )  # fmt: skip
    check_quats(dtype, res.motion.rotations_local, positive_w=False)
    _, pos_w = res.motion.fk()
    pos_w = pos_w.astype(np.float64)
    _, old = motion.fk()
    old = old.astype(np.float64)
    l1, l2, rtol, atol = check_chain(
        dtype, (old[..., 0, :], old[..., 1, :], old[..., 2, :], target.astype(dtype)),
        pos_w[..., 1, :], pos_w[..., 2, :], None, res.reached,
        options.tolerance, options.max_stretch,
    )  # fmt: skip
    # forward kinematics of the new pose puts the joints where the solver says
    err = np.abs(pos_w[..., 2, :] - res.end_world).max(axis=-1)
    assert np.all(err <= 4 * rtol * (l1 + l2) + 4 * atol)


# ------------------------------------------------------------ regression tests (issue 9)


def w1_problems(n, seed=3):
    """The benchmark's leg (thigh 0.45, shin 0.42) with targets in a ball of radius 1."""
    rng = np.random.default_rng(seed)
    root = rng.uniform(-1, 1, (n, 3))
    mid = root + 0.45 * units(rng, n)
    end = mid + 0.42 * units(rng, n)
    target = root + units(rng, n) * rng.uniform(0, 1, (n, 1)) ** (1 / 3)
    pole = root + 0.5 * units(rng, n)
    return root, mid, end, target, pole


@pytest.mark.parametrize("n", [10, 1000])  # serial and parallel kernels
@pytest.mark.parametrize("case", ["scale 1e-10", "scale 1e10", "target at 1e30"])
def test_float32_extreme_scales_stay_finite(n, case):
    # issue 9: float32 gave NaN (positions at a 1e30 target, rotations at 1e-10 and 1e10)
    arrays = list(w1_problems(n))
    if case == "target at 1e30":
        arrays[3] = arrays[3] * 1e30
    else:
        arrays = [a * float(case.split()[1]) for a in arrays]
    args = [a.astype(np.float32) for a in arrays]
    opts = TwoBoneOptions(soften=0.95, max_stretch=1.2)
    for options in (TwoBoneOptions(), opts):
        r = two_bone_positions(*args, options=options)
        check_chain(np.float32, args[:4], r.mid_world, r.end_world, r.stretch, r.reached,
                    options.tolerance, options.max_stretch)  # fmt: skip
        check_quats(np.float32, r.root_rotation_world, r.mid_rotation_world)
        s = two_bone_positions_soa(*[np.ascontiguousarray(a.T) for a in args], options=options)
        check_chain(np.float32, args[:4], s.mid_world.T, s.end_world.T, None, s.reached,
                    options.tolerance, options.max_stretch)  # fmt: skip
        # the float64 answer, to float32 precision
        ref = two_bone_positions(*arrays, options=options)
        scale = np.abs(arrays[0]).max() + 1
        for got in (r.end_world, s.end_world.T):
            np.testing.assert_allclose(got, ref.end_world, atol=1e-5 * scale, rtol=1e-5)


def test_float32_fast_path_is_unchanged_by_the_safety_net():
    # ordinary float32 problems keep being solved in float32 (the bench's workload)
    args = [a.astype(np.float32) for a in w1_problems(1000)]
    r = two_bone_positions(*args)
    ref = two_bone_positions(*[a.astype(np.float64) for a in args])
    np.testing.assert_allclose(r.end_world, ref.end_world, atol=2e-6)
    np.testing.assert_allclose(r.mid_world, ref.mid_world, atol=2e-4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 300])
def test_weight_blends_the_stretch(dtype, n):
    # issue 9: with weight < 1 the stretch was reported but the bones kept their length
    opts = TwoBoneOptions(max_stretch=1.5)
    one = np.ones((n, 1))
    args = [(np.asarray(p) * one).astype(dtype) for p in ([0, 0, 0], [0, -1, 0.2], [0, -2, 0])]
    target = (np.asarray([0.3, -2.5, 0.1]) * one).astype(dtype)
    full = two_bone_positions(*args, target, options=opts)
    s_full = float(full.stretch[0])
    assert 1.2 < s_full < 1.5 and full.reached.all()
    for w in (0.0, 0.25, 0.5, 0.9, 1.0):
        r = two_bone_positions(*args, target, weight=w, options=opts)
        expect = 1 + w * (s_full - 1)
        np.testing.assert_allclose(r.stretch, expect, rtol=1e-6)
        l1, l2 = chain_lengths(*(a.astype(float) for a in args))
        n1, n2 = chain_lengths(args[0].astype(float), r.mid_world, r.end_world)
        np.testing.assert_allclose(n1, l1 * r.stretch, rtol=1e-5)
        np.testing.assert_allclose(n2, l2 * r.stretch, rtol=1e-5)
        # SoA with a weight goes through the same solve
        s = two_bone_positions_soa(*[np.ascontiguousarray(a.T) for a in (*args, target)],
                                   weight=w, options=opts)  # fmt: skip
        np.testing.assert_allclose(s.end_world.T, r.end_world, atol=1e-6)


def test_pose_level_applies_the_weighted_stretch():
    sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1], [[0, 1, 0], [0, -0.5, 0.1], [0, -0.5, 0]])
    motion = Motion.rest(sk)
    opts = TwoBoneOptions(max_stretch=1.5)
    target = [0.1, -0.2, 0.2]
    res = solve_two_bone(motion, ("hip", "knee", "ankle"), target, weight=0.5, options=opts)
    r = two_bone_positions(*motion.positions_world(), target, weight=0.5, options=opts)
    assert float(r.stretch) > 1.05
    np.testing.assert_allclose(res.motion.positions_world()[2], r.end_world, atol=1e-9)
    np.testing.assert_allclose(
        res.motion.positions_local[1:], motion.positions_local[1:] * float(r.stretch)
    )


def shortest_arc(u, v):
    """Reference: the minimal rotation taking direction ``u`` onto ``v`` (xyzw)."""
    u = u / np.linalg.norm(u, axis=-1, keepdims=True)
    v = v / np.linalg.norm(v, axis=-1, keepdims=True)
    q = np.concatenate([np.cross(u, v), 1 + np.sum(u * v, -1, keepdims=True)], -1)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def angle(q):
    return 2 * np.arccos(np.clip(np.abs(q[..., 3]), 0, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [50, 400])  # serial and parallel kernels
def test_shortest_arc_rotations_match_the_reference(dtype, n):
    root, mid, end, target, pole = (a.astype(dtype) for a in w1_problems(n, seed=5))
    arc = TwoBoneOptions(root_rotation="shortest_arc")
    r = two_bone_positions(root, mid, end, target, pole, twist_angle=0.2, options=arc)
    bend = two_bone_positions(root, mid, end, target, pole, twist_angle=0.2)
    tol = 1e-10 if dtype == np.float64 else 2e-4
    # same positions at weight 1: the knee lands where the bend-plane solve puts it
    np.testing.assert_allclose(r.mid_world, bend.mid_world, atol=tol)
    np.testing.assert_allclose(r.end_world, bend.end_world, atol=tol)
    np.testing.assert_array_equal(r.reached, bend.reached)
    root64, mid64, end64 = (a.astype(np.float64) for a in (root, mid, end))
    nm, ne = r.mid_world.astype(np.float64), r.end_world.astype(np.float64)
    # root: the minimal rotation from the old hip->knee direction to the new one
    qr = r.root_rotation_world.astype(np.float64)
    ref = shortest_arc(mid64 - root64, nm - root64)
    err = np.minimum(np.abs(qr - ref).max(-1), np.abs(qr + ref).max(-1))
    assert err.max() <= 10 * tol
    # mid: after the root's turn, the minimal rotation of the shin onto the new shin
    turned = quat_rotate(qr, end64 - mid64)
    ref_m = quat_mul(shortest_arc(turned, ne - nm), qr)
    qm = r.mid_rotation_world.astype(np.float64)
    err = np.minimum(np.abs(qm - ref_m).max(-1), np.abs(qm + ref_m).max(-1))
    assert err.max() <= 10 * tol
    # the bend-plane root delta carries the plane: never smaller, usually larger
    a_arc, a_bend = angle(qr), angle(bend.root_rotation_world.astype(np.float64))
    assert np.all(a_bend >= a_arc - 10 * tol) and np.mean(a_bend > a_arc + 1e-3) > 0.5


def test_shortest_arc_weighted_positions_follow_the_rotations():
    root, mid, end, target, pole = w1_problems(300, seed=8)
    arc = TwoBoneOptions(root_rotation="shortest_arc", max_stretch=1.2)
    r = two_bone_positions(root, mid, end, target, pole, weight=0.4, options=arc)
    s = r.stretch[:, None]
    np.testing.assert_allclose(
        r.mid_world, root + quat_rotate(r.root_rotation_world, mid - root) * s, atol=1e-12
    )
    np.testing.assert_allclose(
        r.end_world, r.mid_world + quat_rotate(r.mid_rotation_world, end - mid) * s, atol=1e-12
    )
    full = two_bone_positions(root, mid, end, target, pole, options=arc)
    # weight 0.4 of the shortest arc: 0.4 of its angle (nlerp, close to slerp here)
    a_w, a_full = angle(r.root_rotation_world), angle(full.root_rotation_world)
    np.testing.assert_allclose(a_w, 0.4 * a_full, atol=0.05 * a_full.max())


def test_shortest_arc_at_the_pose_level():
    sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1], [[0, 1, 0], [0, -0.5, 0.1], [0, -0.5, 0]])
    motion = Motion.rest(sk)
    target = [0.3, 0.4, 0.2]
    opts = TwoBoneOptions(root_rotation="shortest_arc")
    res = solve_two_bone(motion, (0, 1, 2), target, pole_world=[1, 0.5, 0.5], options=opts)
    p_old, p_new = motion.positions_world(), res.motion.positions_world()
    np.testing.assert_allclose(p_new[2], target, atol=1e-9)
    # the hip's new world rotation is the shortest arc times the old one (identity here)
    ref = shortest_arc(p_old[1] - p_old[0], p_new[1] - p_new[0])
    got = res.motion.rotations_local[0]
    assert min(np.abs(got - ref).max(), np.abs(got + ref).max()) < 1e-9
    # the knee's local change is the shortest arc of the shin in the hip's frame
    shin_old = p_old[2] - p_old[1]
    shin_new = quat_rotate(quat_conj(got), p_new[2] - p_new[1])
    ref_knee = shortest_arc(shin_old, shin_new)
    got_knee = res.motion.rotations_local[1]
    assert min(np.abs(got_knee - ref_knee).max(), np.abs(got_knee + ref_knee).max()) < 1e-9


def test_root_rotation_option_is_validated():
    with pytest.raises(InputError, match="root_rotation"):
        TwoBoneOptions(root_rotation="shortest")
    assert TwoBoneOptions().root_rotation == "bend_plane"


@pytest.mark.parametrize("n", [1, 1000])  # serial and parallel kernels
@pytest.mark.parametrize("layout", ["aos", "soa"])
def test_float32_target_at_the_hip_of_a_folded_chain_keeps_the_bones(layout, n):
    # found by test_soa_properties (seed 193523589): equal bones folded back onto the hip,
    # coordinates near 1e-5 and the target 1.8e-9 from the hip. The law of cosines added
    # the reach to a bone before subtracting the other, which rounded most of the reach
    # away: both bones came out 1.2e-4 short in float32 (the property allows 1e-4)
    root = np.array([-1.1248754e-06, -5.7176017e-06, -1.3593000e-05], np.float32)
    mid = np.array([1.7337005e-06, -5.7203374e-06, -1.7482635e-05], np.float32)
    target = np.array([-1.1261675e-06, -5.7164821e-06, -1.3592582e-05], np.float32)
    pole = root + np.array([5.0e-6, 3.0e-6, -4.0e-6], np.float32)
    args = [np.tile(a, (n, 1)) for a in (root, mid, root, target, pole)]  # end on the hip
    if layout == "soa":
        r = two_bone_positions_soa(*(np.ascontiguousarray(a.T) for a in args))
        new_mid, new_end = r.mid_world.T, r.end_world.T
    else:
        r = two_bone_positions(*args)
        new_mid, new_end = r.mid_world, r.end_world
    f64 = np.float64
    length = np.linalg.norm(mid.astype(f64) - root.astype(f64))
    thigh = np.linalg.norm(new_mid.astype(f64) - root.astype(f64), axis=-1)
    shin = np.linalg.norm(new_end.astype(f64) - new_mid.astype(f64), axis=-1)
    np.testing.assert_allclose(thigh, length, rtol=1e-6)
    np.testing.assert_allclose(shin, length, rtol=1e-6)


@given(st.integers(0, 2**32 - 1), st.sampled_from([1e-10, 1.0, 1e10]), st.floats(0.0, 1.0))
def test_positions_only_serial_solve_is_the_full_solve_at_weight_one(seed, scale, soften):
    """``solve_two_bone_positions_serial`` (the foot pipeline's leg IK) gives the very bits
    of the full solve's positions and stretch, degenerate problems included."""
    rng = np.random.default_rng(seed)
    (root, mid, end, target, pole), _ = make_problems(rng, 64, scale)
    c64 = make_constants(np.float64, soften, 1.2, 1e-5)
    wct = np.array([[1.0], [1.0], [0.0]])
    out, reached = np.empty(64 * 15), np.empty(64, dtype=np.bool_)
    flat = [np.ascontiguousarray(a).reshape(-1) for a in (root, mid, end, target, pole)]
    AOS_SERIAL[False](*flat, wct, c64, out, reached)
    full = out.reshape(64, 15)
    placed = _positions_only(root, mid, end, target, pole, c64)
    np.testing.assert_array_equal(placed[:, :3], full[:, OUT_MID : OUT_MID + 3])
    np.testing.assert_array_equal(placed[:, 3:6], full[:, OUT_END : OUT_END + 3])
    np.testing.assert_array_equal(placed[:, 6], full[:, OUT_STRETCH])


@njit
def _positions_only_run(root, mid, end, target, pole, c64, out):
    """``solve_two_bone_positions_serial`` on each row: ``out (n, 7)`` mid, end, stretch."""
    k = TwoBoneConstants(*unpack_constants(c64))
    for i in range(out.shape[0]):
        p = TwoBonePoints(
            (root[i, 0], root[i, 1], root[i, 2]), (mid[i, 0], mid[i, 1], mid[i, 2]),
            (end[i, 0], end[i, 1], end[i, 2]), (target[i, 0], target[i, 1], target[i, 2]),
            (pole[i, 0], pole[i, 1], pole[i, 2]),
        )  # fmt: skip
        s = solve_two_bone_positions_serial(p, k)
        out[i, 0], out[i, 1], out[i, 2] = s.mid
        out[i, 3], out[i, 4], out[i, 5] = s.end
        out[i, 6] = s.stretch


def _positions_only(root, mid, end, target, pole, c64):
    out = np.empty((len(root), 7))
    _positions_only_run(root, mid, end, target, pole, c64, out)
    return out
