"""The contract every position-level solver keeps (issue 37: one suite, parametrised over
the solvers, instead of a copy per solver):

- bad structural input raises :class:`~ikrig.errors.InputError` in one line that names the
  argument (NaN or infinite values, too few joints, the wrong last axis, batches that do not
  broadcast, a NaN in one element of a batch, text);
- any batch shape (single problems included) and float32 or float64 in, the same batch shape
  and dtype out, every value finite.

Solver-specific errors (their options, constraints, weights, limits) stay in each solver's
own tests.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

from ikrig.errors import InputError
from ikrig.solvers import ccd_2d, two_bone_positions
from ikrig.solvers.ccd import ccd
from ikrig.solvers.dls import dls
from ikrig.solvers.fabrik import fabrik
from ikrig.solvers.follow import follow


class Solver(NamedTuple):
    """A solver called as ``solve(positions (..., n + 1, 3), target (..., 3))``: ``names``
    are the arguments joints are passed in (one for a chain; root, mid and end for two-bone)
    and ``out`` reads the solved positions ``(..., n + 1, 3)`` off the result."""

    solve: Any
    names: tuple[str, ...]
    out: Any
    joints: int = 4


def _chain(fn):
    return Solver(lambda p, t: fn(p, t), ("positions_world",), lambda r: r.positions_world)


def _two_bone(p, t):
    return two_bone_positions(p[..., 0, :], p[..., 1, :], p[..., 2, :], t)


def _two_bone_out(r):
    root = np.zeros_like(r.mid_world)  # (the root does not move: only its shape is read)
    return np.stack([root, r.mid_world, r.end_world], axis=-2)


SOLVERS = {
    "ccd": _chain(ccd),
    "ccd_2d": _chain(ccd_2d),
    "fabrik": _chain(fabrik),
    "follow": _chain(follow),
    "dls": _chain(dls),
    "two_bone": Solver(_two_bone, ("root_world", "mid_world", "end_world"), _two_bone_out, 3),
}


def _problem(solver: Solver, batch=(), dtype=np.float64):
    """A bent chain along +X in the XY plane and a reachable target, over ``batch``."""
    n = solver.joints
    p = np.zeros((n, 3))
    p[:, 0] = np.arange(n)
    p[1:, 1] = 0.3 * np.arange(1, n)
    t = np.array([0.5 * (n - 1), 0.8, 0.0])
    return (np.broadcast_to(p, batch + p.shape).astype(dtype),
            np.broadcast_to(t, batch + (3,)).astype(dtype))  # fmt: skip


def _name_of(solver: Solver, joint: int) -> str:
    return solver.names[min(joint, len(solver.names) - 1)]


def _raises(solver: Solver, positions, target, needle: str) -> None:
    with pytest.raises(InputError) as info:
        solver.solve(positions, target)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    assert needle in message, (needle, message)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_joint_names_its_argument(name, bad):
    solver = SOLVERS[name]
    p, t = _problem(solver)
    for joint in range(solver.joints):
        q = p.copy()
        q[joint, 1] = bad
        _raises(solver, q, t, _name_of(solver, joint))


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_target_names_target_world(name, bad):
    solver = SOLVERS[name]
    p, t = _problem(solver)
    _raises(solver, p, np.array([t[0], bad, t[2]]), "target_world")


@pytest.mark.parametrize("name", SOLVERS)
def test_a_nan_in_one_element_of_a_batch_names_its_argument(name):
    solver = SOLVERS[name]
    p, t = _problem(solver, (4,))
    t = t.copy()
    t[2, 1] = np.nan
    _raises(solver, p, t, "target_world")
    p, t = _problem(solver, (4,))
    p = p.copy()
    p[3, -1, 0] = np.nan
    _raises(solver, p, t, _name_of(solver, solver.joints - 1))


@pytest.mark.parametrize("name", SOLVERS)
def test_a_target_of_the_wrong_width_names_target_world(name):
    solver = SOLVERS[name]
    p, t = _problem(solver)
    _raises(solver, p, t[:2] if name != "ccd_2d" else t[:1], "target_world")


@pytest.mark.parametrize("name", SOLVERS)
def test_joints_of_the_wrong_width_name_their_argument(name):
    solver = SOLVERS[name]
    p, t = _problem(solver)
    wide = np.concatenate([p, np.zeros(p.shape[:-1] + (2,))], axis=-1)  # (..., n + 1, 5)
    _raises(solver, wide, t, solver.names[0])


@pytest.mark.parametrize("name", [n for n, s in SOLVERS.items() if s.joints > 3])
def test_a_chain_of_one_joint_names_positions_world(name):
    solver = SOLVERS[name]
    p, t = _problem(solver)
    _raises(solver, p[:1], t, "positions_world")


@pytest.mark.parametrize("name", SOLVERS)
def test_batches_that_do_not_broadcast_say_so(name):
    solver = SOLVERS[name]
    p, _ = _problem(solver, (3,))
    _, t = _problem(solver, (2,))
    _raises(solver, p, t, "broadcast")


@pytest.mark.parametrize("name", SOLVERS)
def test_text_is_refused(name):
    solver = SOLVERS[name]
    p, t = _problem(solver)
    with pytest.raises(InputError):
        solver.solve(p.astype(str), t)


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("batch", [(), (1,), (5,), (2, 3)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
def test_any_batch_shape_and_dtype_in_the_same_out(name, batch, dtype):
    solver = SOLVERS[name]
    p, t = _problem(solver, batch, dtype)
    out = solver.out(solver.solve(p, t))
    assert out.shape == batch + (solver.joints, 3), out.shape
    assert out.dtype == dtype, out.dtype
    assert np.isfinite(out).all()
    # one problem of the batch alone gives that element of the batch
    if batch:
        single = solver.out(solver.solve(p[(0,) * len(batch)], t[(0,) * len(batch)]))
        np.testing.assert_allclose(out[(0,) * len(batch)], single, rtol=1e-5, atol=1e-6)
