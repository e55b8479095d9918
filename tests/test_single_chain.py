"""The one-problem fast path of the chain solvers (``ikrig.solvers._harness.single``, issue 12).

A single free problem given as float64 ndarrays runs a ``*_one`` kernel instead of the
general set-up. It must give exactly what the same problem gives as a batch of one (the
general path), take the general path for anything it does not take (float32, lists,
read-only or strided arrays, NaN, out-of-range coordinates, constraints), never compile a
batch kernel for other array types, and return NumPy scalars for the per-problem fields on
every path.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ikrig.errors import InputError
from ikrig.solvers import (
    CCD2DOptions,
    CCDOptions,
    DLSOptions,
    FabrikOptions,
    FollowOptions,
    ccd,
    ccd_2d,
    dls,
    fabrik,
    follow,
)
from ikrig.solvers import _ccd2d_kernels as K2
from ikrig.solvers import _ccd_kernels as KC
from ikrig.solvers import _dls_kernels as KD
from ikrig.solvers import _fabrik_kernels as KF
from ikrig.solvers import _follow_kernels as KW

SOLVERS = {  # name: (solve, options other than the defaults, its batch kernel)
    "fabrik": (fabrik, FabrikOptions(max_iterations=30), KF.fabrik_free),
    "ccd": (ccd, CCDOptions(max_iterations=30, max_step=0.5), KC.ccd_positions_kernel),
    "follow": (follow, FollowOptions(direction="head"), KW.follow_kernel),
    "dls": (dls, DLSOptions(max_iterations=30), KD.dls_positions_kernel),
    "ccd_2d": (ccd_2d, CCD2DOptions(max_iterations=30), K2.ccd2d_kernel),
}
FIELDS = ("positions_world", "rotations_local", "reached", "error", "iterations")


def problem(seed: int, m: int, dim: int = 3, shape: str = "random"):
    """A chain of ``m`` joints and a target, float64, own (writeable, contiguous) arrays."""
    rng = np.random.default_rng(seed)
    p = np.cumsum(rng.normal(size=(m, dim)), axis=0)
    if shape == "zero_bone":
        p[1] = p[0]
    elif shape == "straight":
        p = np.outer(np.arange(m, dtype=np.float64), np.eye(dim)[0])
    t = p[0] + rng.normal(size=dim) * rng.uniform(0.1, 1.5) * m
    if shape == "at_root":
        t = p[0].copy()
    return p, t


def same(a, b, name):
    """``a`` (one problem) equals problem 0 of ``b`` (a batch of one) exactly."""
    for f in FIELDS + (("angles",) if name == "ccd_2d" else ()):
        x, y = getattr(a, f), getattr(b, f)[0]
        np.testing.assert_array_equal(x, y, err_msg=f"{name}.{f}")


def dims(name):
    return (2, 3) if name == "ccd_2d" else (3,)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("shape", ["random", "zero_bone", "straight", "at_root"])
@pytest.mark.parametrize("m", [2, 3, 7])
def test_the_fast_path_equals_a_batch_of_one(name, shape, m):
    solve, opts, _ = SOLVERS[name]
    for dim in dims(name):
        for seed in range(3):
            p, t = problem(seed, m, dim, shape)
            for o in (None, opts):
                one, batch = solve(p, t, o), solve(p[None], t[None], o)
                same(one, batch, name)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), m=st.integers(2, 12), scale=st.sampled_from([1e-6, 1.0, 1e6]))
def test_any_chain_any_scale_fast_equals_general(seed, m, scale):
    for name, (solve, opts, _) in SOLVERS.items():
        p, t = problem(seed, m, dims(name)[-1])
        p, t = p * scale, t * scale
        same(solve(p, t, opts), solve(p[None], t[None], opts), name)


@pytest.mark.parametrize("name", SOLVERS)
def test_the_fast_path_compiles_no_other_batch_kernel(name):
    """The ``*_one`` kernel hands its batch kernel the very array types the general path
    does, so the batch kernel keeps the one specialisation the general path made."""
    solve, _, kernel = SOLVERS[name]
    p, t = problem(1, 5, dims(name)[-1])
    solve(p[None], t[None])  # the general path: its specialisation
    before = set(kernel.signatures)
    solve(p, t)
    assert set(kernel.signatures) == before


def variants(p, t):
    """The same single problem as arguments the fast path does not take."""
    ro_p, ro_t = p.copy(), t.copy()
    ro_p.flags.writeable = ro_t.flags.writeable = False
    strided = np.repeat(p, 2, axis=0)[::2]
    return {
        "lists": (p.tolist(), t.tolist()),
        "read-only": (ro_p, ro_t),
        "strided": (strided, t),
        "broadcast view": (np.broadcast_to(p, p.shape), np.broadcast_to(t, t.shape)),
        "int target": (p, np.round(t).astype(np.int64)),
    }


@pytest.mark.parametrize("name", SOLVERS)
def test_other_single_arguments_take_the_general_path_with_the_same_answer(name):
    """... and compile nothing more: read-only arrays are copied for the kernels."""
    solve, opts, kernel = SOLVERS[name]
    for dim in dims(name):
        p, t = problem(4, 6, dim)
        solve(p[None], t[None], opts)
        before = set(kernel.signatures)
        for what, (q, u) in variants(p, t).items():
            if what == "int target":
                t = u.astype(np.float64)
            ref = solve(p, t, opts)
            got = solve(q, u, opts)
            for f in FIELDS:
                np.testing.assert_array_equal(getattr(got, f), getattr(ref, f), err_msg=what)
        assert set(kernel.signatures) == before


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(), (1,), (2, 3)])
def test_per_problem_fields_are_scalars_for_one_problem(name, dtype, batch):
    solve, opts, _ = SOLVERS[name]
    p, t = problem(2, 4, dims(name)[-1])
    p, t = np.broadcast_to(p.astype(dtype), batch + p.shape), np.broadcast_to(t, batch + t.shape)
    res = solve(np.ascontiguousarray(p), np.ascontiguousarray(t.astype(dtype)), opts)
    kinds = {"reached": np.bool_, "error": dtype, "iterations": np.int64}
    for f, kind in kinds.items():
        v = getattr(res, f)
        assert np.shape(v) == batch and np.asarray(v).dtype == kind, (f, type(v))
        assert isinstance(v, np.generic if batch == () else np.ndarray), (f, type(v))
    assert res.positions_world.dtype == dtype


@pytest.mark.parametrize("name", SOLVERS)
def test_flagged_problems_take_the_general_path(name):
    """NaN raises the general path's one-line error; coordinates whose squares would
    overflow are solved rescaled, as a batch of one is."""
    solve, opts, _ = SOLVERS[name]
    p, t = problem(3, 5, dims(name)[-1])
    bad = p.copy()
    bad[2, 0] = np.nan
    with pytest.raises(InputError, match="positions_world"):
        solve(bad, t, opts)
    with pytest.raises(InputError, match="target_world"):
        solve(p, np.full_like(t, np.inf), opts)
    if name == "ccd_2d":
        return  # its kernel squares nothing it cannot: no rescaled path
    huge, far = p * 1e300, t * 1e300
    same(solve(huge, far, opts), solve(huge[None], far[None], opts), name)
