"""Each chain kernel is compiled once, whatever the call (issue 12: compile time).

Numba compiles a kernel again for every new combination of array types, and a read-only
array is another type. Positions and targets reach the kernels writeable (read-only ones
are copied); every other input that is a cached read-only constant in some calls (the
identity parent, rest rotations, free constraints and limits, default goal weights and
rotations) is read-only when made for a call too. So a call with constraints, a parent
rotation, limits, goal weights, rotation targets, read-only arrays or coordinates that
need rescaling runs the specialisation a plain call made.

Each check counts the specialisations of one Python process, so it runs in a fresh one
(:func:`_in_a_fresh_process`): in a shared test worker, another test may have compiled a
kernel for other types first, and the count would depend on the order the tests ran in
(issue 36: the suite failed once in three fresh setups).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ikrig.constraints import AngleLimit2D, Cone, Hinge
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers import (
    FabrikOptions,
    ccd,
    ccd_2d,
    dls,
    fabrik,
    follow,
    solve_fabrik,
    solve_follow,
)
from ikrig.solvers import _ccd2d_kernels as K2
from ikrig.solvers import _ccd_kernels as KC
from ikrig.solvers import _dls_kernels as KD
from ikrig.solvers import _fabrik_kernels as KF
from ikrig.solvers import _follow_kernels as KW
from ikrig.solvers.chain import Chain
from ikrig.solvers.dls import GoalWeights

CHAIN = np.array([[0.0, 0, 0], [0.4, 0.1, 0], [0.8, 0.0, 0.1], [1.1, 0.2, 0.0]])
TARGETS = np.array([[0.5, 0.6, 0.2], [0.1, -0.3, 0.4]])
PARENT = np.array([0.1, 0.2, 0.0, 1.0]) / np.linalg.norm([0.1, 0.2, 0.0, 1.0])
CONES = [Cone(1.0), None, Hinge((0.0, 0.0, 1.0), -1.0, 1.0)]


def read_only(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


def calls(name):
    """Calls of one position-level solver that must share one kernel specialisation."""
    solve = {"fabrik": fabrik, "ccd": ccd, "follow": follow, "dls": dls}[name]
    p1, t1 = CHAIN, TARGETS[0]
    out = [
        lambda: solve(p1, t1),
        lambda: solve(p1[None].repeat(2, 0), TARGETS),
        lambda: solve(read_only(p1), read_only(TARGETS)),
        lambda: solve(np.broadcast_to(p1, (2,) + p1.shape), TARGETS),
        lambda: solve(p1, TARGETS, parent_rotation_world=PARENT),
        lambda: solve(p1, TARGETS * 1e302),  # rescaled
    ]
    out.append(lambda: solve(p1, TARGETS, constraints=CONES))
    out.append(lambda: solve(p1, TARGETS, constraints=CONES, parent_rotation_world=PARENT))
    if name == "dls":
        out.append(lambda: dls(p1, t1, weights=GoalWeights(position_weights=0.5)))
        out.append(lambda: dls(p1, t1, target_rotation_world=PARENT))
    return out


KERNELS = {
    "fabrik": [KF.fabrik_free, KF.fabrik_constrained],
    "ccd": [KC.ccd_positions_kernel],
    "follow": [KW.follow_kernel],
    "dls": [KD.dls_positions_kernel],
}


def signatures(kernels):
    return [set(k.signatures) for k in kernels]


def _in_a_fresh_process(check: str, *args: str) -> None:
    """Run ``check(*args)`` of this module in a new Python process (one whose kernels only
    it compiles or loads); fails with its error."""
    here = Path(__file__).resolve().parent
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); import test_kernel_types as t; "
        f"t.{check}(*{args!r})"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
        timeout=600,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.mark.compile
@pytest.mark.parametrize("name", KERNELS)
def test_every_kind_of_position_level_call_shares_one_specialisation(name):
    _in_a_fresh_process("check_position_level_calls", name)


@pytest.mark.compile
def test_ccd_2d_limits_and_read_only_inputs_share_one_specialisation():
    _in_a_fresh_process("check_ccd_2d_calls")


@pytest.mark.compile
def test_pose_level_calls_share_the_position_level_specialisations():
    _in_a_fresh_process("check_pose_level_calls")


def check_position_level_calls(name):
    todo = calls(name)
    for call in todo:  # compile (or load) whatever the calls need
        call()
    first = signatures(KERNELS[name])
    assert all(len(s) <= 1 for s in first), (name, first)
    for call in todo:
        call()
    assert signatures(KERNELS[name]) == first


def check_ccd_2d_calls():
    p, t = CHAIN[:, :2].copy(), TARGETS[:, :2].copy()
    todo = [
        lambda: ccd_2d(p, t),
        lambda: ccd_2d(read_only(p), read_only(t)),
        lambda: ccd_2d(p, t, limits_deg=[[-90, 90]] * 3),
        lambda: ccd_2d(p, t, constraints=[AngleLimit2D(-1.0, 1.0), None, None]),
    ]
    for call in todo:
        call()
    assert len(K2.ccd2d_kernel.signatures) == 1


def check_pose_level_calls():
    sk = Skeleton(("a", "b", "c", "d"), [-1, 0, 1, 2], np.diff(CHAIN, axis=0, prepend=0.0))
    motion = Motion.rest(sk)
    chain = Chain.between(sk, "a", "d")
    for solve in (fabrik, follow):
        solve(CHAIN, TARGETS)
    solve_fabrik(motion, chain, TARGETS[0])
    solve_follow(motion, chain, TARGETS[0])
    solve_fabrik(motion, chain, TARGETS[0], FabrikOptions(max_iterations=3))
    assert [len(s) for s in signatures([KF.fabrik_free, KW.follow_kernel])] == [1, 1]
