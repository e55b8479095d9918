"""The whole-body solve: :func:`solve_body` and its :class:`BodyResult`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..._checks import check_options
from ..._jit.setup import notify_compiling
from ...errors import InputError
from ...pose import Motion
from . import _kernels as K
from ._pack import hold_reference_roots, pack_goals, pack_tree
from ._records import N_TARGET, Frames, Outs, Settings
from .goals import Goal
from .options import BodyOptions

__all__ = ["BodyResult", "solve_body"]

_DEFAULT = BodyOptions()
LAM_MIN = 1e-6  # the smallest damping, a fraction of the reach L


@dataclass(frozen=True, eq=False)
class BodyResult:
    """The outcome of :func:`solve_body` over the batch shape ``(...)`` (the motion's and
    the goals' broadcast) and the ``G`` goals, in the order given.

    Attributes:
        motion: the new :class:`~ikrig.pose.Motion` (the motion's dtype, frame time kept):
            local rotations of every joint and the roots' translations changed.
        reached: ``(..., G)`` bool, each goal within the tolerance (True where absent).
        position_error: ``(..., G)`` distance of a position or keep goal's point from its
            target, data units (0 for other kinds and absent goals).
        rotation_error: ``(..., G)`` radians: an orientation goal's angle to its target, an
            aim or look-at goal's angle between its axis and the target direction (or its up
            axis and the pole's, the larger); 0 for position goals and absent goals.
        iterations: ``(...)`` int, iterations of each frame (0 for a frame returned as
            its input: no active goal, or every goal met by the input).
        active: ``(..., G)`` bool, the goal was present (finite target, weight > 0).
        reach: the skeleton's reach ``L`` the tolerances are fractions of.
    """

    motion: Motion
    reached: np.ndarray
    position_error: np.ndarray
    rotation_error: np.ndarray
    iterations: np.ndarray
    active: np.ndarray
    reach: float


def _flat_motion(motion: Motion, batch: tuple, rows: int, frames: int):
    J = motion.num_joints
    out = []
    for a, k in ((motion.rotations_local, 4), (motion.positions_local, 3)):
        a = np.ascontiguousarray(np.broadcast_to(a, batch + (J, k)).reshape(rows, frames, J, k),
                                 dtype=np.float64)  # fmt: skip
        # always writeable: a read-only array is another type to Numba (another compile)
        out.append(a if a.flags.writeable else a.copy())
    return out


def _blend(opts: BodyOptions) -> float:
    """How far the prior's target lies from the input toward the warm start: the temporal
    pull's share ``tau**2 / (mu**2 + tau**2)`` of the two pulls' sum (0 without it)."""
    mu, tau = opts.prior_weight, opts.temporal_weight if opts.warm_start else 0.0
    return tau * tau / (mu * mu + tau * tau) if tau > 0.0 else 0.0


def solve_body(
    motion: Motion, goals: Sequence[Goal], options: BodyOptions | None = None
) -> BodyResult:
    """Solve a whole skeleton, pose by pose, to goals on any of its joints.

    The input pose is the preferred pose: each frame is the least-squares compromise between
    the goals (weighted residuals, see :mod:`ikrig.solvers.body.goals`) and a pull of every
    joint toward its input rotation (:attr:`BodyOptions.stiffness`, ``prior_weight``; with
    ``temporal_weight`` also toward the previous frame's correction), under
    the joints' constraints, locks and the root mode. Goals that can be met are met (to the
    tolerance) and the prior settles what they leave free; goals that cannot are approached as
    far as the skeleton reaches. A goal weaker than the others (``PositionGoal.strength``
    below 1, a hint) gives way to them and is not waited for: a frame ends when the full
    goals are met. A frame without an active goal, or whose input meets every
    goal already (within the tolerances), is returned as it is, bit for bit. Frames along the
    last batch axis are solved in order, each starting from the
    previous one's correction (``warm_start``); the other batch axes run in parallel.

    Args:
        motion: :class:`~ikrig.pose.Motion`, batch shape ``(...)``: ``()`` one pose, ``(F,)``
            a clip, ``(C, F)`` a crowd.
        goals: a sequence of :class:`PositionGoal`, :class:`OrientationGoal`,
            :class:`AimGoal`, :class:`LookAtGoal`, :class:`KeepGoal`; their targets and
            weights broadcast with the motion's batch shape.
        options: :class:`BodyOptions`.

    Returns:
        :class:`BodyResult`.

    Raises:
        InputError: unknown joints (naming the goal or option), batch shapes that do not
            broadcast, a look-at chain joint that is not an ancestor, bad options.

    Example:
        >>> from ikrig.skeleton import Skeleton
        >>> from ikrig.solvers.body import PositionGoal
        >>> sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1],
        ...               [[0, 1, 0], [0, -0.5, 0], [0, -0.5, 0]])
        >>> res = solve_body(Motion.rest(sk), [PositionGoal("ankle", [0.3, 0.2, 0.2])],
        ...                  BodyOptions(root="pinned"))
        >>> bool(res.reached[0]), res.motion.batch_shape
        (True, ())
    """
    opts = check_options(options, BodyOptions, _DEFAULT)
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected a Motion, got {type(motion).__name__}")
    tree, L = pack_tree(motion.skeleton, opts)
    gs, tgt, wt, batch = pack_goals(motion, goals, tree)
    tree = hold_reference_roots(tree, gs)
    N, G, J = tgt.shape[0], tgt.shape[1], motion.num_joints
    F = batch[-1] if batch and opts.warm_start else 1
    R = N // F if F else 0
    rl0, pl0 = _flat_motion(motion, batch, R, F)
    frames = Frames(rl0, pl0, tgt.reshape(R, F, G, N_TARGET), wt.reshape(R, F, G, 2))
    outs = Outs(np.empty((R, F, J, 4)), np.empty((R, F, J, 3)), np.empty((R, F, G)),
                np.empty((R, F, G)), np.empty((R, F, G), dtype=np.bool_),
                np.empty((R, F), dtype=np.int64))  # fmt: skip
    s = Settings(opts.max_iterations, opts.tolerance * L, opts.rotation_tolerance, L,
                 LAM_MIN * L, opts.max_step, opts.warm_start,
                 opts.init_from_positions, bool(gs.look.any()),
                 _blend(opts))  # fmt: skip
    if N:
        notify_compiling()
        (K.body_kernel if R > 1 else K.body_kernel_one)(tree, gs, frames, s, outs)
    dt = motion.dtype
    new = Motion._trusted(
        motion.skeleton,
        outs.rl.reshape(batch + (J, 4)).astype(dt, copy=False),
        outs.pl.reshape(batch + (J, 3)).astype(dt, copy=False),
        motion.frame_time if batch else None,
    )
    return BodyResult(
        new,
        outs.ok.reshape(batch + (G,)),
        outs.perr.reshape(batch + (G,)).astype(dt, copy=False),
        outs.rerr.reshape(batch + (G,)).astype(dt, copy=False),
        outs.iters.reshape(batch),
        (wt.reshape(batch + (G, 2)) > 0).any(-1),
        L,
    )
