"""Follow-the-target: one pass in which each bone in turn points at the next point and moves so
that its end lies on it (snakes, tails, ropes, tentacles).

* ``direction="tail"`` (default): the effector (``positions[..., -1, :]``) is put on the
  target; then, from the effector up, each bone turns from its current base towards its
  (new) end and slides so that it ends there. **The root moves**: it is dragged along, so
  ``result.positions_world[..., 0, :]`` differs from the input (and :func:`solve_follow`
  moves the chain root joint).
* ``direction="head"``: the root is put on the target and, from the root down, each bone
  turns towards its old end and the next joint is placed along it: the chain trails behind
  its head.

Bone lengths are kept exactly. The pass always ends with the moving end on the target, with
or without constraints (``error`` is its distance to the target, rounding only;
``reached`` is ``error <= tolerance * L``, ``L`` the chain's length; ``iterations`` is 1).
A straight chain whose first moved bone would have to turn exactly around (the target on
the chain's line, behind the effector for ``"tail"``, ahead of the root inside the chain for
``"head"``) is first bowed deterministically about ``bend_axis`` (made perpendicular to the
line; default a fixed perpendicular, +Z for a chain along X), so it turns in an arc instead
of folding flat.
Elsewhere a bone asked to turn exactly around does a half turn about the same axis, and
points on top of each other keep the bone's direction: the output is always finite. A
straight chain following a target straight ahead stays straight.

Constraints (:mod:`ikrig.constraints`, e.g. per-bone :class:`~ikrig.constraints.AngleLimit2D`
between neighbouring bones) are applied through the generic projection and **every joint
ends inside its limits**:

* ``"head"``: each joint's rotation relative to the bone before it (already placed) is
  projected before its child is placed (as the forward pass of FABRIK).
* ``"tail"``: bones are placed from the effector up, so a joint's limit, which is relative to
  its parent bone, is enforced by turning the *parent* bone (the neighbour placed next)
  instead. The chain root's own limit (relative to the fixed parent frame) is enforced last
  by turning the whole chain rigidly about the target, which keeps the effector on it.

Position-level chains use the frame convention of every chain solver (see
:mod:`ikrig.solvers.fabrik` and ``docs/solvers.md``): the input pose is the rest pose, every
joint frame there is ``parent_rotation_world`` (identity by default), constraints are
relative to it, and ``rotations_local`` run through forward kinematics from it (from the new
root position) give ``positions_world``.
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
from ..errors import InputError
from ..pose import Motion
from . import _follow_kernels as K
from ._harness import chain_common as C
from ._harness.packing import packed_or_free
from ._harness.problem import init_options
from ._harness.run import run_pose, run_positions, solve_outputs
from ._harness.single import solve_one, written_to
from .chain import Chain
from .result import SolveResult

_DIRECTIONS = ("tail", "head")


@dataclass(frozen=True)
class FollowOptions:
    """Options of :func:`follow` and :func:`solve_follow` (validated on construction).

    Attributes:
        direction: ``"tail"`` (the effector reaches the target, the root is dragged) or
            ``"head"`` (the root goes to the target, the rest trails behind).
        tolerance: ``reached`` is ``error <= tolerance * L``, ``L`` the chain's length.
        bend_axis: ``None`` or a world ``(3,)`` axis for the half turn of a bone asked to
            turn exactly around.
        keep_effector_world: pose level only: keep the effector joint's world rotation
            (else its local rotation).

    Raises:
        InputError: unknown direction, a negative or non-finite tolerance, bad bend axis.
    """

    direction: str = "tail"
    tolerance: float = 1e-3
    bend_axis: tuple[float, float, float] | None = None
    keep_effector_world: bool = True
    _bend: np.ndarray = field(init=False, repr=False, compare=False)
    _settings: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.direction not in _DIRECTIONS:
            raise InputError(f"direction: expected 'tail' or 'head', got {self.direction!r}")
        init_options(self)
        settings = C.settings_record(C.FOLLOW_SETTINGS, tol=self.tolerance, bend=self._bend,
                                     head=self.direction == "head")  # fmt: skip
        object.__setattr__(self, "_settings", settings)


_DEFAULT = FollowOptions()


def _solve(pos, target, rot, parent, packed, opts, world=True):
    """Run the follow kernel: ``(out, rot_world, rot_local, err, iters, reached, bad)``
    (``world`` is accepted for :func:`~ikrig.solvers._harness.run.run_pose`; the world rotations
    are always filled)."""
    n = pos.shape[1] - 1
    kinds, params = packed_or_free(packed, n)
    out, rl, err, _, reached = solve_outputs(target.shape[0], n + 1)
    rw = np.empty_like(rl)
    notify_compiling()
    bad = K.follow_kernel(
        pos, target, rot, parent, kinds, params, packed is not None, opts._settings,
        out, rw, rl, err, reached,
    )  # fmt: skip
    return out, rw, rl, err, np.ones(target.shape[0], dtype=np.int64), reached, bad


def follow(
    positions_world: ArrayLike,
    target_world: ArrayLike,
    options: FollowOptions | None = None,
    *,
    constraints: Sequence[Constraint | None] | None = None,
    parent_rotation_world: ArrayLike | None = None,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> SolveResult:
    """Make chains of joint positions follow targets, in one pass (no skeleton needed).

    Args:
        positions_world: ``(..., n + 1, 3)`` the chains' joints, root first (also the rest
            pose of the rotations and constraints).
        target_world: ``(..., 3)`` targets; batch shapes broadcast.
        options: :class:`FollowOptions` (default: tail-first).
        constraints: ``None`` or ``n`` entries (constraint or ``None``), one per joint from the
            root to the one before the effector, relative to the input pose.
        parent_rotation_world: ``(..., 4)`` xyzw world rotation of the root's parent frame
            (every joint frame of the input pose); default identity.
        out: ``None`` or the caller's output buffers ``(positions_world, rotations_local)``,
            writeable C-contiguous arrays of the result's shapes ``(..., n + 1, 3)`` and
            ``(..., n, 4)`` and dtype; the solve writes into them and the result views them
            (a single float64 problem is solved in place, without allocating them).

    Returns:
        :class:`~ikrig.solvers.result.SolveResult`: ``positions_world (..., n + 1, 3)`` (the
        root moves in both modes), ``reached``, ``error`` (distance from the moving end, the
        effector for ``"tail"`` or the root for ``"head"``, to the target), ``iterations``
        (always 1), ``rotations_local (..., n, 4)`` (relative to the input pose).

    Raises:
        InputError: wrong shapes, NaN or infinite values, wrong number of constraints.

    Example:
        >>> snake = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]])
        >>> res = follow(snake, [3.0, 0.0, 0.0])  # tail-first: pulled forward by 1
        >>> res.positions_world[:, 0].tolist()
        [1.0, 2.0, 3.0]
        >>> res = follow(snake, [-1.0, 0.0, 0.0], FollowOptions(direction="head"))
        >>> res.positions_world[:, 0].tolist()
        [-1.0, 0.0, 1.0]
    """
    opts = check_options(options, FollowOptions, _DEFAULT)
    if constraints is None and parent_rotation_world is None:  # one problem? (fast path)
        res = solve_one(K.follow_one, positions_world, target_world, opts._settings, out)
        if res is not None:
            return res
    res = run_positions(
        _solve, opts, positions_world, target_world, constraints, parent_rotation_world
    )
    return res if out is None else written_to(res, out)


def solve_follow(
    motion: Motion, chain: Chain, target_world: ArrayLike, options: FollowOptions | None = None
) -> SolveResult:
    """Make a skeleton chain follow a target in one pass, moving the chain root.

    Args:
        motion: the start pose(s), any batch shape.
        chain: the :class:`~ikrig.solvers.chain.Chain` (with optional constraints).
        target_world: ``(..., 3)`` targets; broadcasts with ``motion.batch_shape``.
        options: :class:`FollowOptions`.

    Returns:
        :class:`~ikrig.solvers.result.SolveResult` with the new ``motion``: the chain's
        solved joints' local rotations change and so does the chain root's local
        translation (it is dragged, or put on the target); nothing else changes.

    Raises:
        InputError, HierarchyError: as :func:`~ikrig.solvers.fabrik.solve_fabrik`.

    Example:
        >>> from ikrig.skeleton import Skeleton
        >>> sk = Skeleton(("a", "b", "c"), [-1, 0, 1], [[0, 0, 0], [1, 0, 0], [1, 0, 0]])
        >>> res = solve_follow(Motion.rest(sk), Chain.between(sk, "a", "c"), [2.0, 1.0, 0.0])
        >>> np.round(res.motion.positions_world(), 3).tolist()
        [[0.318, 0.072, 0.0], [1.293, 0.293, 0.0], [2.0, 1.0, 0.0]]
    """
    opts = check_options(options, FollowOptions, _DEFAULT)
    return run_pose(_solve, opts, motion, chain, target_world, move_root=True)


__all__ = ["FollowOptions", "follow", "solve_follow"]
