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
``reached`` is ``error <= tolerance``; ``iterations`` is 1). A straight chain whose first
moved bone would have to turn exactly around (the target on the chain's line, behind the
effector for ``"tail"``, ahead of the root inside the chain for ``"head"``) is first bowed
deterministically about ``bend_axis`` (made perpendicular to the line; default a fixed
perpendicular, +Z for a chain along X), so it turns in an arc instead of folding flat.
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

Position-level chains use the frame convention of :mod:`ikrig.solvers.fabrik` (bones along
+X of their joint frames, frames parallel-transported from ``parent_rotation_world``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._numba import notify_compiling
from ..errors import InputError
from ..math.quat import quat_conj, quat_rotate
from ..pose import Motion
from . import _chain_kernels as K
from .chain import Chain
from .fabrik import (
    _check_bend,
    _check_tolerance,
    _finish,
    _packed_chain,
    _packed_positions,
    _parent_rotations,
    _pose_result,
    _pose_setup,
    _prepare,
    _raise_bad,
)
from .result import SolveResult

_DIRECTIONS = ("tail", "head")


@dataclass(frozen=True)
class FollowOptions:
    """Options of :func:`follow` and :func:`solve_follow`.

    Attributes:
        direction: ``"tail"`` (the effector reaches the target, the root is dragged) or
            ``"head"`` (the root goes to the target, the rest trails behind).
        tolerance: ``reached`` is ``error <= tolerance`` (data units).
        bend_axis: ``None`` or a world ``(3,)`` axis for the half turn of a bone asked to
            turn exactly around.

    Raises:
        InputError: unknown direction, tolerance not > 0, bad bend axis.
    """

    direction: str = "tail"
    tolerance: float = 1e-3
    bend_axis: tuple[float, float, float] | None = None

    def __post_init__(self):
        if self.direction not in _DIRECTIONS:
            raise InputError(f"direction: expected 'tail' or 'head', got {self.direction!r}")
        object.__setattr__(self, "tolerance", _check_tolerance(self.tolerance))
        bend = _check_bend(self.bend_axis)
        if self.bend_axis is not None:
            object.__setattr__(self, "bend_axis", tuple(float(x) for x in bend))
        object.__setattr__(self, "_bend", bend)


_DEFAULT = FollowOptions()


def _options(options) -> FollowOptions:
    opts = _DEFAULT if options is None else options
    if not isinstance(opts, FollowOptions):
        raise InputError(f"options: expected FollowOptions, got {type(opts).__name__}")
    return opts


def _run(pf, tf, rot, parent, packed, opts, batch, dtype):
    n = pf.shape[1] - 1
    head = opts.direction == "head"
    notify_compiling()
    if packed is None:
        kinds = np.zeros(n, dtype=np.int64)
        params = np.zeros((n, 8))
        rot = np.zeros((pf.shape[0], n, 4))
        parent = np.zeros((pf.shape[0], 4))
        constrained = False
    else:
        kinds, params = packed
        constrained = True
    out, rw, rl, err, reached, bad = K.follow_kernel(
        pf, tf, rot, parent, kinds, params, head, constrained, opts.tolerance, opts._bend
    )
    if bad >= 0:
        _raise_bad(pf, tf, bad)
    res = SolveResult(
        positions_world=_finish(out, batch, dtype, (n + 1, 3)),
        reached=reached.reshape(batch),
        error=_finish(err, batch, dtype, ()),
        iterations=np.ones(batch, dtype=np.int64),
        rotations_local=_finish(rl, batch, dtype, (n, 4)) if constrained else None,
    )
    return res, (_finish(rw, batch, dtype, (n, 4)) if constrained else None)


def follow(
    positions_world,
    target_world,
    options: FollowOptions | None = None,
    constraints=None,
    parent_rotation_world=None,
) -> SolveResult:
    """Make chains of joint positions follow targets, in one pass (no skeleton needed).

    Args:
        positions_world: ``(..., n + 1, 3)`` the chains' joints, root first.
        target_world: ``(..., 3)`` targets; batch shapes broadcast.
        options: :class:`FollowOptions` (default: tail-first).
        constraints: ``None`` or ``n`` entries (constraint or ``None``), one per joint from the
            root to the one before the effector (position-level frame convention).
        parent_rotation_world: ``(..., 4)`` xyzw world rotation of the root's parent frame
            (the frame of joint 0's constraint); default identity.

    Returns:
        :class:`~ikrig.solvers.result.SolveResult`: ``positions_world (..., n + 1, 3)`` (the
        root moves in both modes), ``reached``, ``error`` (distance from the moving end, the
        effector for ``"tail"`` or the root for ``"head"``, to the target), ``iterations``
        (always 1), ``rotations_local (..., n, 4)`` when constraints are given.

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
    opts = _options(options)
    pf, tf, batch, dtype = _prepare(positions_world, target_world)
    n = pf.shape[1] - 1
    packed = _packed_positions(constraints, n)
    rot = parent = None
    if packed is not None:
        parent = _parent_rotations(parent_rotation_world, batch, pf.shape[0])
        rot = K.parallel_frames(pf, parent, packed[1])
    return _run(pf, tf, rot, parent, packed, opts, batch, dtype)[0]


def solve_follow(
    motion: Motion, chain: Chain, target_world, options: FollowOptions | None = None
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
    opts = _options(options)
    motion, rot_w, pos_w, parent_rot, t, batch = _pose_setup(motion, chain, target_world)
    packed = _packed_chain(motion, chain)
    pf, tf, _, dtype = _prepare(pos_w, t)
    n = chain.num_bones
    rot = par = None
    if packed is not None:
        rot = np.ascontiguousarray(rot_w[..., :-1, :], dtype=np.float64).reshape(-1, n, 4)
        par = np.ascontiguousarray(parent_rot, dtype=np.float64).reshape(-1, 4)
    res, rw = _run(pf, tf, rot, par, packed, opts, batch, dtype)
    # The chain root moved: set its local translation, then its rotations.
    root = chain.joints[0]
    parent = int(motion.skeleton.parents[root])
    p0 = res.positions_world[..., 0, :].astype(motion.dtype, copy=False)
    if parent >= 0:
        prw, ppw = motion.fk()
        local = quat_rotate(quat_conj(prw[..., parent, :]), p0 - ppw[..., parent, :])
    else:
        local = p0
    pl = motion.positions_local.copy()
    pl[..., root, :] = local
    motion = motion.replace(positions_local=pl)
    return _pose_result(motion, chain, res, rot_w, pos_w, rw)


__all__ = ["FollowOptions", "follow", "solve_follow"]
