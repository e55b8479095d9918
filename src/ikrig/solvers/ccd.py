"""Cyclic coordinate descent (CCD) for chains in 3D.

Each iteration sweeps from the joint before the effector back to the chain root; each joint
turns by the shortest arc that points its joint-to-effector direction at the target, clamped
to ``max_step``, and is then projected onto its constraint (the start pose is projected
first). The solve stops when the effector is within ``tolerance * chain length`` of the
target, after ``max_iterations`` sweeps, or after a sweep that moved nothing (a fixed point:
the chain already points at an unreachable target, or the constraints block every turn).

Plain CCD cannot leave a chain that lies straight on the target line (every turn is zero).
Only there, and only if bending would bring the effector nearer (a saddle of the error, not
a minimum such as one bone or a chain folded as near as it gets), a joint turns by a fixed
0.25 rad (or pi - 0.25 rad for a target behind it) about ``bend_axis``. The result is the
best pose the solve saw: a turn that leads nowhere costs sweeps, never accuracy, so CCD
never ends farther from the target than its (projected) start pose.

Convergence is linear and can be slow when the chain has to unfold (10 links straight along
+X, targets uniform in a ball of 0.9 chain lengths: 86% within 1e-3 in 100 sweeps, 37 sweeps
on average; ``benchmarks/bench_chains.py``, W2). A ``max_step`` of 1 radian helped there
(99.4 %, 10 sweeps) but 0.7 gave 98 % in 17 sweeps and 1.5 only 81 %: the best value
depends on the chain, so the default is the classic unclamped CCD. FABRIK
(:func:`ikrig.solvers.fabrik.fabrik`) and DLS (:func:`ikrig.solvers.dls.dls`) converge in
fewer iterations.

Two entry points share one Numba kernel per level:

- :func:`ccd` works on bare joint positions (no skeleton): the input pose is the rest pose,
  every joint's local rotation is the identity there and its frame is
  ``parent_rotation_world`` (identity by default), as in every chain solver (see
  ``docs/solvers.md``);
- :func:`solve_ccd` works on a :class:`~ikrig.pose.Motion` and a
  :class:`~ikrig.solvers.chain.Chain` and returns the new motion.

Both are batched over any leading shape, keep float32 as float32, and never raise or return
NaN for per-element trouble (unreachable targets, targets at a joint, zero-length bones).
The solver is a small unit in the style of ozz-animation's IK jobs: options are a frozen,
validated :class:`CCDOptions`; each call validates its inputs (the shared helpers of
:mod:`ikrig.solvers._harness.problem`) and then runs one kernel over the flattened batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from .._checks import (
    check_options,
    raise_nonfinite,
)
from .._jit.setup import notify_compiling
from ..constraints import Constraint
from ..pose import Motion
from . import _ccd_kernels as K
from ._harness.packing import pack_pose_constraints, packed_or_free
from ._harness.problem import init_options, pose_problem
from ._harness.run import pose_result, positions_result, positions_setup, solve_outputs
from ._harness.single import solve_one, written_to
from .chain import Chain
from .result import SolveResult

__all__ = ["CCDOptions", "ccd", "solve_ccd"]


@dataclass(frozen=True)
class CCDOptions:
    """Options of the 3D CCD solver (validated on construction).

    Attributes:
        max_iterations: sweeps (root to effector and back counts as one) before giving up;
            0 only measures the start pose.
        tolerance: the target counts as reached when the effector is within
            ``tolerance * L`` of it, ``L`` the chain's length (sum of its bone lengths).
        max_step: largest turn of one joint in one sweep, radians, or ``None`` for no limit.
            Smaller steps damp the solve (smoother, more even bending; more iterations).
        bend_axis: world axis about which a joint turns when the whole chain lies on the
            target line at a saddle of the error (a straight chain and a target straight
            ahead but nearer, or behind), where every shortest arc is zero. ``None``: an
            axis perpendicular to that line chosen deterministically (its cross product with
            the coordinate axis it is least aligned with).
        keep_effector_world: pose level only: keep the effector joint's world rotation
            (else its local rotation, so it turns with the last bone).

    Raises:
        InputError: a negative or non-integer ``max_iterations``, a negative or non-finite
            ``tolerance``, a ``max_step`` that is not > 0, a zero or non-finite ``bend_axis``.

    Example:
        >>> CCDOptions(max_iterations=50, max_step=0.5).max_step
        0.5
    """

    max_iterations: int = 100
    tolerance: float = 1e-3
    max_step: float | None = None
    bend_axis: tuple[float, float, float] | None = None
    keep_effector_world: bool = True
    _bend: np.ndarray = field(init=False, repr=False, compare=False)
    _settings: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        init_options(self)
        settings = K.ccd_settings(self.max_iterations, self.tolerance, self._bend, self.max_step)
        object.__setattr__(self, "_settings", settings)


_DEFAULT = CCDOptions()


def ccd(
    positions_world: ArrayLike,
    target_world: ArrayLike,
    options: CCDOptions | None = None,
    *,
    constraints: Sequence[Constraint | None] | None = None,
    parent_rotation_world: ArrayLike | None = None,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> SolveResult:
    """Solve chains given by joint positions with 3D CCD.

    The input pose is the rest pose: each joint's local rotation is the identity there and
    its frame is ``parent_rotation_world`` (identity by default); bone ``i`` is
    ``positions_world[..., i + 1, :] - positions_world[..., i, :]``. The root stays in place
    and every bone keeps its length.

    Args:
        positions_world: ``(..., n + 1, 3)`` world positions of the chain's joints, root
            first, end effector last (``n >= 1`` bones, zero-length bones allowed).
        target_world: ``(..., 3)`` world target of the effector. Batch shapes broadcast.
        options: :class:`CCDOptions` (default ``CCDOptions()``).
        constraints: ``None`` or ``n`` entries (a constraint object from
            :mod:`ikrig.constraints` or ``None``), one per solved joint, relative to each
            problem's input pose (they limit each joint's rotation away from it).
        parent_rotation_world: ``(..., 4)`` xyzw world rotation of the chain root's parent
            frame (every joint frame of the input pose); default identity.
        out: ``None`` or the caller's output buffers ``(positions_world, rotations_local)``,
            writeable C-contiguous arrays of the result's shapes ``(..., n + 1, 3)`` and
            ``(..., n, 4)`` and dtype; the solve writes into them and the result views them
            (a single float64 problem is solved in place, without allocating them).

    Returns:
        :class:`~ikrig.solvers.result.SolveResult` with ``positions_world (..., n + 1, 3)``,
        ``reached (...)``, ``error (...)`` (effector-to-target distance of the returned pose,
        data units), ``iterations (...)`` (sweeps run) and ``rotations_local (..., n, 4)``
        xyzw (each solved joint's rotation relative to its parent, from the input pose).
        ``motion`` is ``None``. float32 when both inputs are float32, else float64. The
        pose is the best one seen; bone lengths are kept to rounding.

    Failure behaviour: an unreachable target leaves the chain pointing straight at it
    (``reached`` False); a target at the root, zero-length bones or collinear set-ups give
    finite output, never a pose worse than the start. Raises
    :class:`~ikrig.errors.InputError` for wrong shapes, non-broadcasting batch shapes, or
    NaN/infinite input (naming the argument).

    Example:
        >>> import numpy as np
        >>> chain = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], dtype=float)
        >>> res = ccd(chain, [1.5, 1.5, 0.0], CCDOptions(max_iterations=200))
        >>> bool(res.reached), bool(np.linalg.norm(res.positions_world[-1] - [1.5, 1.5, 0]) < 3e-3)
        (True, True)
    """
    opts = check_options(options, CCDOptions, _DEFAULT)
    if constraints is None and parent_rotation_world is None:  # one problem? (fast path)
        res = solve_one(K.ccd_positions_one, positions_world, target_world, opts._settings, out)
        if res is not None:
            return res
    prob, parent, packed = positions_setup(
        positions_world, target_world, constraints, parent_rotation_world
    )
    N, m = prob.target.shape[0], prob.pos.shape[1]
    kinds, params = packed_or_free(packed, m - 1)
    pos_out, rl, err, iters, reached = solve_outputs(N, m)
    notify_compiling()
    bad = K.ccd_positions_kernel(
        prob.pos, prob.target, parent, kinds, params, opts._settings, pos_out, rl, err, iters,
        reached,
    )  # fmt: skip
    if bad >= 0:
        raise_nonfinite(positions_world=positions_world, target_world=target_world)
    res = positions_result(prob, pos_out, reached, err, iters, rl)
    return res if out is None else written_to(res, out)


def solve_ccd(
    motion: Motion, chain: Chain, target_world: ArrayLike, options: CCDOptions | None = None
) -> SolveResult:
    """Solve a chain of a pose (or of every pose of a clip) with 3D CCD.

    The chain's joints ``chain.joints[:-1]`` turn (with the constraints of
    ``chain.constraints``) so that the effector ``chain.joints[-1]`` reaches the target; no
    other joint's local rotation changes, except the effector's when
    ``options.keep_effector_world`` keeps its world rotation. Bone lengths are the motion's
    local translations of the chain's joints.

    Args:
        motion: a :class:`~ikrig.pose.Motion` with batch shape ``(...)``.
        chain: the :class:`~ikrig.solvers.chain.Chain` to solve.
        target_world: ``(..., 3)`` world target of the effector; its batch shape broadcasts
            with the motion's (the result has the broadcast shape).
        options: :class:`CCDOptions`.

    Returns:
        :class:`~ikrig.solvers.result.SolveResult` with ``motion`` (the new Motion, in the
        input motion's dtype), ``rotations_local (..., n, 4)`` (new local rotations of the
        solved joints), ``positions_world (..., n + 1, 3)`` of the chain's joints,
        ``reached``, ``error`` and ``iterations`` ``(...)``.

    Failure behaviour: as for :func:`ccd`. Raises :class:`~ikrig.errors.InputError` for a
    NaN target or shapes that do not fit, :class:`~ikrig.errors.HierarchyError` for a chain
    that does not match the skeleton.

    Example:
        >>> from ikrig.skeleton import Skeleton
        >>> sk = Skeleton(("a", "b", "c", "d"), [-1, 0, 1, 2], [[0, 0, 0], [1, 0, 0]] * 2)
        >>> res = solve_ccd(Motion.rest(sk), Chain.between(sk, "a", "d"), [1.0, 1.5, 0.5])
        >>> bool(res.reached)
        True
    """
    opts = check_options(options, CCDOptions, _DEFAULT)
    prob = pose_problem(motion, chain, target_world)
    n = chain.num_bones
    kinds, params = packed_or_free(pack_pose_constraints(prob.motion, chain), n)
    out, rl, err, iters, reached = solve_outputs(prob.target.shape[0], n + 1)
    rw = np.empty_like(rl)
    notify_compiling()
    bad = K.ccd_pose_kernel(
        prob.bone, prob.rot_local, prob.parent, prob.root, prob.target, kinds, params,
        opts._settings, out, rl, rw, err, iters, reached,
    )  # fmt: skip
    if bad >= 0:
        raise_nonfinite(target_world=target_world)
    return pose_result(prob, chain, out, reached, err, iters, rw, opts.keep_effector_world)
