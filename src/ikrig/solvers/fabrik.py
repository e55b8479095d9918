"""FABRIK (Forward And Backward Reaching Inverse Kinematics) for chains of any length.

Two entry points, one kernel:

* :func:`fabrik` works on bare joint positions (no skeleton): a chain of ``n + 1`` points;
* :func:`solve_fabrik` solves a :class:`~ikrig.solvers.chain.Chain` of a
  :class:`~ikrig.pose.Motion` and writes the new rotations back.

Algorithm, per batch element: bone lengths are measured from the input and kept exactly.
Tolerances are relative: the effector counts as on the target within ``tolerance * L``, ``L``
the chain's length (the sum of its bone lengths). If the effector is already within
tolerance of the target nothing moves (0 iterations).
A target at or beyond the chain's reach gives, in one pass, the chain stretched straight
towards it (``reached`` is False unless it is within tolerance). Otherwise each iteration
runs a backward pass (effector onto the target, every joint pulled towards its child) and a
forward pass (root back in place, every joint pulled towards its parent), and stops as soon
as the effector is within tolerance. A chain lying on the root-target line (straight
ahead, straight behind, or a target at the root) is first bowed deterministically about
``bend_axis`` so that it can fold. Convergence is fast inside the reachable set and only
linear at its edges: a target at 99 % of the chain's reach straight ahead needs about 60
iterations for a tolerance of 1e-3 of the chain length, one at 99.9 % about 300, and a
target near the inner edge of a 2-bone chain's reach (almost folded) can need a few
hundred. When ``max_iterations`` runs out the best pose so far is returned with
``reached`` False.

Constraints (:mod:`ikrig.constraints`): the start pose is first snapped into the limits,
then bone directions are projected in both passes. In the forward pass the parent's frame
is final, the direction is projected exactly, and the joint's rotation is snapped into its
limits (``project_local``) before the child is placed, so **every joint of the result is
inside its limits** (up to rounding, 1e-9 rad in float64). In the backward pass a joint's
parent frame is the one it stands in (its parent has not moved yet), which is an
approximation; the child's limit, relative to the bone being placed, is kept exactly by
turning that bone. Twist limits and hinges whose bone is not perpendicular to the axis are
only enforced by the snapping (directions carry no twist). Constrained passes can
therefore stall in a pose the limits hold fast (a hinge bent the wrong way, a cone at its
edge): after 8 passes that bring the effector less than 1 % nearer, the chain restarts with
some of its bones turned half round the root-to-target axis (each of the 31 patterns of the
first five bones once, repeating along longer chains) and placed again within their limits;
the best pose so far is always kept, and a chain in a plane with its target stays in that
plane. Constrained FABRIK may still stop short of targets the limits allow; ``reached``
tells (6-link chains from an allowed start pose, 500 targets from allowed poses, default
options: with 0.8 rad cones 99.8 % are reached, with +-1.2 rad 2D limits on every joint
99.8 %; without restarts 99.4 % and 97.6 %).

Frames for position-level chains (the same in every chain solver, see ``docs/solvers.md``):
the input pose is the rest pose. Every joint's local rotation is the identity there and its
frame is the world frame turned by ``parent_rotation_world`` (the chain root's parent frame,
identity by default), so joint ``i``'s bone in its own frame is its input direction.
Constraint angles and axes are relative to that input pose (a :class:`~ikrig.constraints.Cone`
on the root is centred on the root bone's input direction, a
:class:`~ikrig.constraints.Hinge` axis is a world axis turned by ``parent_rotation_world``,
:class:`~ikrig.constraints.AngleLimit2D` measures the angle between consecutive bones, and
the root's from its input direction). ``rotations_local`` are relative to that pose: run
through forward kinematics from it they give ``positions_world``. Without constraints each
joint turns by the shortest arc from its input bone direction to its output one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from .._checks import (
    check_options,
)
from .._jit.setup import notify_compiling
from ..constraints import Constraint
from ..pose import Motion
from . import _fabrik_kernels as K
from ._harness import chain_common as C
from ._harness.problem import init_options
from ._harness.run import run_pose, run_positions, solve_outputs
from ._harness.single import solve_one, written_to
from .chain import Chain
from .result import SolveResult


@dataclass(frozen=True)
class FabrikOptions:
    """Options of :func:`fabrik` and :func:`solve_fabrik` (validated on construction).

    Attributes:
        max_iterations: most backward+forward pass pairs per element; 0 only measures the
            start pose (constrained: after snapping it into the limits).
        tolerance: the effector counts as on the target within ``tolerance * L``, ``L`` the
            chain's length (the sum of its bone lengths); ``>= 0``.
        bend_axis: ``None`` or a world-space ``(3,)`` axis: a chain lying on the
            root-target line is bowed about this axis (made perpendicular to the line);
            default: a fixed perpendicular of the line (+Z for a chain along X).
        keep_effector_world: pose level only: keep the effector joint's world rotation
            (else its local rotation, so it turns with the last bone).

    Raises:
        InputError: a negative or non-integer ``max_iterations``, a negative or non-finite
            ``tolerance``, a zero or non-finite ``bend_axis``.
    """

    max_iterations: int = 100
    tolerance: float = 1e-3
    bend_axis: tuple[float, float, float] | None = None
    keep_effector_world: bool = True
    _bend: np.ndarray = field(init=False, repr=False, compare=False)
    _settings: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        init_options(self)
        settings = C.settings_record(C.FABRIK_SETTINGS, max_iter=self.max_iterations,
                                     tol=self.tolerance, bend=self._bend)  # fmt: skip
        object.__setattr__(self, "_settings", settings)


_DEFAULT = FabrikOptions()


def _solve(pos, target, rot, parent, packed, opts, world=False):
    """Run the free or the constrained kernel on flat float64 inputs.

    Returns ``(out, rot_world, rot_local, err, iters, reached, bad)``; the free kernel fills
    ``rot_world`` only when ``world``. ``pos`` may be ``(1, m, 3)`` for the free kernel.
    """
    out, rl, err, iters, reached = solve_outputs(target.shape[0], pos.shape[1])
    rw = np.empty_like(rl) if world or packed is not None else rl
    args = (pos, target, rot, parent)
    notify_compiling()
    if packed is None:
        bad = K.fabrik_free(*args, opts._settings, out, rw, rl, err, iters, reached)
    else:
        bad = K.fabrik_constrained(*args, *packed, opts._settings, out, rw, rl, err, iters,
                                   reached)  # fmt: skip
    return out, rw, rl, err, iters, reached, bad


# --------------------------------------------------------------------------------------
# Position level
# --------------------------------------------------------------------------------------


def fabrik(
    positions_world: ArrayLike,
    target_world: ArrayLike,
    options: FabrikOptions | None = None,
    *,
    constraints: Sequence[Constraint | None] | None = None,
    parent_rotation_world: ArrayLike | None = None,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> SolveResult:
    """Solve chains of joint positions with FABRIK (no skeleton needed).

    Args:
        positions_world: ``(..., n + 1, 3)`` the chains' joints, root first: the start pose,
            which is also the rest pose the rotations and constraints refer to (see the
            module docstring). Bone lengths are taken from it. Zero-length bones are allowed.
        target_world: ``(..., 3)`` the targets of the end effectors (``positions[..., -1]``).
            Batch shapes broadcast.
        options: :class:`FabrikOptions` (default: 100 iterations, tolerance 1e-3 of the
            chain's length).
        constraints: ``None`` or ``n`` entries (a constraint of :mod:`ikrig.constraints` or
            ``None``), one per joint from the root to the one before the effector, relative
            to each problem's input pose.
        parent_rotation_world: ``(..., 4)`` xyzw world rotation of the chain root's parent
            frame (every joint frame of the input pose); default identity.
        out: ``None`` or the caller's output buffers ``(positions_world, rotations_local)``,
            writeable C-contiguous arrays of the result's shapes ``(..., n + 1, 3)`` and
            ``(..., n, 4)`` and dtype; the solve writes into them and the result views them
            (a single float64 problem is solved in place, without allocating them).

    Returns:
        :class:`~ikrig.solvers.result.SolveResult` with ``positions_world (..., n + 1, 3)``
        (the root does not move; bone lengths kept to rounding), ``reached (...)``, ``error
        (...)`` (effector-target distance, data units), ``iterations (...)``,
        ``motion=None`` and ``rotations_local (..., n, 4)`` (relative to the input pose).
        float32 in, float32 out.

    Raises:
        InputError: wrong shapes, non-broadcasting batches, NaN or infinite values, wrong
            number of constraints. Unreachable targets and zero-length bones do not raise.

    Example:
        >>> chain = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
        >>> res = fabrik(chain, [1.0, 1.0, 0.0])
        >>> bool(res.reached), np.round(res.positions_world[-1], 3)
        (True, array([1., 1., 0.]))
        >>> res = fabrik(chain, [0.0, 5.0, 0.0])  # out of reach: points straight at it
        >>> bool(res.reached), np.round(res.positions_world, 3).tolist()
        (False, [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 2.0, 0.0]])
    """
    opts = check_options(options, FabrikOptions, _DEFAULT)
    if constraints is None and parent_rotation_world is None:  # one problem? (fast path)
        res = solve_one(K.fabrik_free_one, positions_world, target_world, opts._settings, out)
        if res is not None:
            return res
    res = run_positions(
        _solve, opts, positions_world, target_world, constraints, parent_rotation_world
    )
    return res if out is None else written_to(res, out)


# --------------------------------------------------------------------------------------
# Pose level
# --------------------------------------------------------------------------------------


def solve_fabrik(
    motion: Motion, chain: Chain, target_world: ArrayLike, options: FabrikOptions | None = None
) -> SolveResult:
    """Solve a skeleton chain with FABRIK and write the new rotations into the pose.

    Args:
        motion: the start pose(s), any batch shape.
        chain: the :class:`~ikrig.solvers.chain.Chain` (joints and ``constraints``, which
            are expressed in the skeleton's joint frames: see :mod:`ikrig.constraints`).
        target_world: ``(..., 3)`` effector targets; broadcasts with ``motion.batch_shape``.
        options: :class:`FabrikOptions`.

    Returns:
        :class:`~ikrig.solvers.result.SolveResult`: ``positions_world`` of the chain's
        joints, ``reached``, ``error``, ``iterations``, the new ``motion`` (only the chain's
        solved joints' local rotations change, and the effector's when its world rotation
        is kept) and ``rotations_local (..., n, 4)`` of the solved joints. Without
        constraints each joint turns by the shortest arc from its old bone direction to the
        new one (its twist is kept); with constraints the rotations tracked (and snapped
        into the limits) by the kernel are used.

    Raises:
        InputError: not a Motion/Chain, bad target shape or values, batch mismatch.
        HierarchyError: the chain does not match the skeleton.

    Example:
        >>> from ikrig.skeleton import Skeleton
        >>> sk = Skeleton(("a", "b", "c"), [-1, 0, 1], [[0, 0, 0], [1, 0, 0], [1, 0, 0]])
        >>> res = solve_fabrik(Motion.rest(sk), Chain.between(sk, "a", "c"), [1.0, 1.0, 0.0])
        >>> np.round(res.motion.positions_world()[-1], 3)
        array([1., 1., 0.])
    """
    return run_pose(_solve, check_options(options, FabrikOptions, _DEFAULT), motion, chain,
                    target_world)  # fmt: skip


__all__ = ["FabrikOptions", "fabrik", "solve_fabrik"]
