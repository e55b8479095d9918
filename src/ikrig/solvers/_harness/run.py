"""Run drivers and result assembly of the chain solvers (private).

:func:`run_positions` and :func:`run_pose` drive a position-based solver (FABRIK, follow)
from the public arguments to a :class:`~ikrig.solvers.result.SolveResult`: set-up
(:mod:`~ikrig.solvers._harness.problem`, :mod:`~ikrig.solvers._harness.packing`), the
kernel, the NaN report, the out-of-range rescue (:mod:`~ikrig.solvers._harness.rescale`)
and the result. The other solvers use the pieces: :func:`positions_setup`,
:func:`solve_outputs`, :func:`positions_result`, :func:`pose_result`. Kernels compute in
float64; :func:`finish` casts results back to float32 when every float input was float32.
"""

from __future__ import annotations

import numpy as np

from ..._checks import F64, raise_nonfinite
from ...math.quat import quat_conj, quat_rotate
from ...pose import Motion
from ..chain import Chain, write_chain
from ..result import SolveResult
from .packing import pack_pose_constraints, pack_position_constraints
from .problem import (
    PoseProblem,
    PositionsProblem,
    chain_positions,
    parent_rotations,
    pose_problem,
    positions_problem,
    rest_rotations,
)
from .rescale import rescue


def finish(a, batch, dtype, tail=()) -> np.ndarray:
    """A flat float64 kernel result reshaped to ``batch + tail`` in the result dtype."""
    a = a.reshape(batch + tail)
    return a if dtype == F64 else a.astype(dtype)


def per_problem(a, batch, dtype=None):
    """A flat ``(N,)`` per-problem kernel output over ``batch``, cast to ``dtype`` if given:
    a NumPy scalar for a single problem (``batch == ()``, see
    :class:`~ikrig.solvers.result.SolveResult`), else an array of shape ``batch``."""
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
    return a[0] if batch == () else a.reshape(batch)


def positions_setup(positions_world, target_world, constraints, parent_rotation_world):
    """The common start of every position-level solve: ``(problem, parent (M, 4), packed
    constraints or None)``."""
    prob = positions_problem(positions_world, target_world)
    parent = parent_rotations(parent_rotation_world, prob.batch)
    packed = pack_position_constraints(constraints, prob, parent_rotation_world)
    return prob, parent, packed


def positions_result(prob: PositionsProblem, out, reached, err, iters, rot_local) -> SolveResult:
    """The :class:`SolveResult` of a position-level solve from flat kernel outputs."""
    batch, dtype = prob.batch, prob.dtype
    m = out.shape[1]
    if dtype is F64:
        return SolveResult._trusted(
            out.reshape(batch + (m, 3)),
            per_problem(reached, batch),
            per_problem(err, batch),
            per_problem(iters, batch),
            None,
            rot_local.reshape(batch + (m - 1, 4)),
        )
    return SolveResult(
        positions_world=finish(out, batch, dtype, (m, 3)),
        reached=per_problem(reached, batch),
        error=per_problem(err, batch, dtype),
        iterations=per_problem(iters, batch),
        rotations_local=finish(rot_local, batch, dtype, (m - 1, 4)),
    )


def pose_result(
    prob: PoseProblem, chain: Chain, out, reached, err, iters, rot_world, keep_effector_world
) -> SolveResult:
    """Write solved world rotations ``(N, n, 4)`` of the chain's joints back into the
    motion and build the :class:`SolveResult`."""
    batch, dtype = prob.batch, prob.dtype
    n = chain.num_bones
    new_motion, local = write_chain(
        prob.motion,
        chain,
        finish(rot_world, batch, dtype, (n, 4)),
        keep_effector_world=keep_effector_world,
    )
    return SolveResult(
        positions_world=finish(out, batch, dtype, (n + 1, 3)),
        reached=per_problem(reached, batch),
        error=per_problem(err, batch, dtype),
        iterations=per_problem(iters, batch),
        motion=new_motion,
        rotations_local=local,
    )


def solve_outputs(N: int, m: int):
    """Uninitialised kernel outputs of ``N`` chains of ``m`` joints: ``positions (N, m, 3)``,
    ``rotations_local (N, m - 1, 4)``, ``error (N,)``, ``iterations (N,)``, ``reached (N,)``."""
    return (
        np.empty((N, m, 3)),
        np.empty((N, m - 1, 4)),
        np.empty(N),
        np.empty(N, dtype=np.int64),
        np.empty(N, dtype=np.bool_),
    )


def run_positions(solve, opts, positions_world, target_world, constraints, parent_rotation_world):
    """A position-level solve of the position-based solvers (FABRIK, follow).

    ``solve(pos, target, rot, parent, packed, opts)`` runs the kernel on flat inputs and
    returns ``(out, rot_world, rot_local, err, iters, reached, bad)``.
    """
    prob, parent, packed = positions_setup(
        positions_world, target_world, constraints, parent_rotation_world
    )
    n = prob.pos.shape[1] - 1
    rot = rest_rotations(parent, n)
    out, rw, rl, err, iters, reached, bad = solve(prob.pos, prob.target, rot, parent, packed, opts)
    if bad >= 0:
        raise_nonfinite(positions_world=positions_world, target_world=target_world)
    if bad == -2:
        rescue(solve, (prob.pos, prob.target, rot, parent, packed), opts,
               (out, rw, rl, err, iters, reached), False)  # fmt: skip
    return positions_result(prob, out, reached, err, iters, rl)


def run_pose(solve, opts, motion, chain, target_world, move_root: bool = False):
    """A pose-level solve of the position-based solvers (``solve`` as for
    :func:`run_positions`, called with ``world=True``). With ``move_root`` the chain root's
    local translation follows the solved root position."""
    prob = pose_problem(motion, chain, target_world)
    pos, rot = chain_positions(prob, chain)
    packed = pack_pose_constraints(prob.motion, chain)
    out, rw, rl, err, iters, reached, bad = solve(
        pos, prob.target, rot, prob.parent, packed, opts, world=True
    )
    if bad >= 0:
        raise_nonfinite(target_world=target_world)
    if bad == -2:
        rescue(solve, (pos, prob.target, rot, prob.parent, packed), opts,
               (out, rw, rl, err, iters, reached), True)  # fmt: skip
    if move_root:
        prob = prob._replace(motion=_move_root(prob, chain, out[:, 0]))
    return pose_result(prob, chain, out, reached, err, iters, rw, opts.keep_effector_world)


def _move_root(prob: PoseProblem, chain: Chain, root_world) -> Motion:
    """The motion with the chain root's local translation moved to ``root_world (N, 3)``."""
    motion = prob.motion
    root = chain.joints[0]
    parent = int(motion.skeleton.parents[root])
    p0 = root_world.reshape(prob.batch + (3,)).astype(motion.dtype, copy=False)
    if parent >= 0:
        prw, ppw = motion.fk()
        local = quat_rotate(quat_conj(prw[..., parent, :]), p0 - ppw[..., parent, :])
    else:
        local = p0
    pl = motion.positions_local.copy()
    pl[..., root, :] = local
    return motion.replace(positions_local=pl)
