"""Caller-owned output buffers of the chain solvers (``out=``, issue 40).

``fabrik``, ``ccd``, ``follow`` (``out=(positions_world, rotations_local)``) and ``ccd_2d``
(``out=(positions_world, rotations_local, angles)``) write their results into the
caller's arrays and return a result that views them. With or without ``out`` the answer is
the same bit for bit, on the one-problem fast path (a single float64 problem, solved in
place) and on the general path (batches, float32, constraints: computed, then copied in).
Buffers that do not fit raise a one-line :class:`~ikrig.errors.InputError` naming the
buffer; buffers overlapping the inputs give the right answer all the same.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ikrig.constraints import Cone
from ikrig.errors import InputError
from ikrig.solvers import (
    CCD2DOptions,
    CCDOptions,
    FabrikOptions,
    FollowOptions,
    ccd,
    ccd_2d,
    fabrik,
    follow,
)

SOLVERS = {  # name: (solve, options, dimensions of a point)
    "fabrik": (fabrik, FabrikOptions(max_iterations=40), 3),
    "ccd": (ccd, CCDOptions(max_iterations=40), 3),
    "follow": (follow, FollowOptions(), 3),
    "ccd_2d": (ccd_2d, CCD2DOptions(max_iterations=40), 2),
}
FIELDS = ("positions_world", "rotations_local", "reached", "error", "iterations")


def problem(seed: int, m: int, dim: int, batch=(), dtype=np.float64):
    """Chains of ``m`` joints and targets, own C-contiguous arrays of ``dtype``."""
    rng = np.random.default_rng(seed)
    p = np.cumsum(rng.normal(size=batch + (m, dim)), axis=-2)
    t = p[..., 0, :] + rng.normal(size=batch + (dim,)) * m * 0.6
    return p.astype(dtype), t.astype(dtype)


def buffers(name, res):
    """Fresh buffers shaped as ``res``'s output arrays, filled with garbage."""
    names = ("positions_world", "rotations_local") + (("angles",) if name == "ccd_2d" else ())
    return tuple(np.full_like(getattr(res, f), 7.5) for f in names)


def same(a, b, name):
    for f in FIELDS + (("angles",) if name == "ccd_2d" else ()):
        x, y = getattr(a, f), getattr(b, f)
        np.testing.assert_array_equal(x, y, err_msg=f"{name}.{f}")
        assert np.asarray(x).dtype == np.asarray(y).dtype, f
        assert type(x) is type(y), f  # NumPy scalars stay NumPy scalars


def check_views(res, out):
    for i, buf in enumerate(out):
        field = ("positions_world", "rotations_local", "angles")[i]
        assert getattr(res, field) is buf, field


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("m", [2, 5, 11])
def test_one_problem_in_place_equals_without_out(name, m):
    solve, opts, dim = SOLVERS[name]
    for seed in range(4):
        p, t = problem(seed, m, dim)
        ref = solve(p, t, opts)
        out = buffers(name, ref)
        got = solve(p, t, opts, out=out)
        same(got, ref, name)
        check_views(got, out)
        again = solve(p, t, opts, out=out)  # reusing the buffers
        same(again, ref, name)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    m=st.integers(2, 7),
    batch=st.lists(st.integers(1, 3), max_size=2).map(tuple),
    dtype=st.sampled_from([np.float32, np.float64]),
    name=st.sampled_from(sorted(SOLVERS)),
)
def test_any_batch_any_dtype_out_equals_without(seed, m, batch, dtype, name):
    solve, opts, dim = SOLVERS[name]
    p, t = problem(seed, m, dim, batch, dtype)
    ref = solve(p, t, opts)
    out = buffers(name, ref)
    got = solve(p, t, opts, out=out)
    same(got, ref, name)
    check_views(got, out)
    assert got.positions_world.dtype == dtype


def test_the_constrained_path_writes_out_too():
    p, t = problem(5, 5, 3)
    cons = [Cone(0.6)] * 4
    for solve in (fabrik, ccd, follow):
        ref = solve(p, t, constraints=cons)
        out = buffers(solve.__name__, ref)
        got = solve(p, t, constraints=cons, out=out)
        same(got, ref, solve.__name__)
        check_views(got, out)


@pytest.mark.parametrize("name", SOLVERS)
def test_buffers_overlapping_the_inputs_give_the_same_answer(name):
    """The fast path leaves such buffers to the general path, which solves from the
    inputs first and copies into the buffers after."""
    solve, opts, dim = SOLVERS[name]
    p, t = problem(7, 6, dim)
    ref = solve(p, t, opts)
    q = p.copy()
    out = (q,) + buffers(name, ref)[1:]  # the result overwrites the input chain
    got = solve(q, t, opts, out=out)
    same(got, ref, name)
    assert got.positions_world is q


def bad_buffers(name, res):
    """``(what, out, the message's start)`` of buffers that do not fit."""
    good = buffers(name, res)
    pos, rl = good[0], good[1]
    rest = good[2:]
    ro = pos.copy()
    ro.flags.writeable = False
    wide = np.zeros(pos.shape[:-1] + (pos.shape[-1] * 2,))[..., ::2]
    big = np.zeros(max(pos.size, rl.size))  # one array under both buffers
    shared = (big[: pos.size].reshape(pos.shape), big[: rl.size].reshape(rl.shape))
    return [
        ("float32 positions", (pos.astype(np.float32), rl) + rest, r"out\[0\] \(positions_world\)"),
        ("short positions", (pos[..., 1:, :].copy(), rl) + rest, r"out\[0\] \(positions_world\)"),
        ("rotations of 3", (pos, rl[..., :3].copy()) + rest, r"out\[1\] \(rotations_local\)"),
        ("read-only", (ro, rl) + rest, r"out\[0\] \(positions_world\).*writeable"),
        ("strided", (wide, rl) + rest, r"out\[0\] \(positions_world\).*C-contiguous"),
        ("a list in it", (pos.tolist(), rl) + rest, r"out\[0\] \(positions_world\)"),
        ("too few", (pos,), r"^out: expected a tuple of"),
        ("not a tuple", pos, r"^out: expected a tuple of"),
        ("overlapping", shared + rest, r"^out: the buffers must not overlap"),
    ]  # fmt: skip


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("batch", [(), (2,)])
def test_buffers_that_do_not_fit_raise_one_line(name, batch):
    solve, opts, dim = SOLVERS[name]
    p, t = problem(3, 4, dim, batch)
    ref = solve(p, t, opts)
    for what, out, message in bad_buffers(name, ref):
        with pytest.raises(InputError, match=message) as e:
            solve(p, t, opts, out=out)
        assert "\n" not in str(e.value), what


def test_a_bad_input_is_named_before_the_buffers():
    p, t = problem(1, 4, 3)
    bad = p.copy()
    bad[1, 1] = np.nan
    with pytest.raises(InputError, match="positions_world: contains NaN"):
        fabrik(bad, t, out=(np.empty((3, 3)), np.empty((3, 4))))
