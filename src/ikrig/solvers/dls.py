"""Damped least squares (DLS, Levenberg-Marquardt style) for chains with several goals.

Every solved joint has 3 rotational degrees of freedom: each iteration computes world-axis
angular increments ``dtheta = J^T (J J^T + lambda^2 I)^-1 e`` from the weighted Jacobian ``J``
of all goals and their residuals ``e``, applies them to the local rotations (exponential
map) and projects each joint onto its constraint. Steps that would increase the error are
undone and retried with more damping, so the error never grows; a straight chain stuck on
its target line is bent by a fixed kick, and if that does not pay off before the iterations
run out the solve ends in the pose before the kick: the result is never worse than the
start. A goal is a joint of the chain (its *effector*, an index into the chain's joints)
with a world position target, an optional world orientation target, and weights.

Two entry points share one Numba kernel: :func:`dls` on bare joint positions (the input
pose is the rest pose, with identity local rotations and every joint frame
``parent_rotation_world``, as in every chain solver) and :func:`solve_dls` on a
:class:`~ikrig.pose.Motion` and a :class:`~ikrig.solvers.chain.Chain`. Both are batched over
any leading shape, keep float32 as float32 and never raise or return NaN for per-element
trouble. Units: the position tolerance, the damping and the residual clamp are fractions of
the chain's length ``L`` (sum of its bone lengths); angles are radians; in the residual an
orientation error of one radian weighs like a position error of ``L``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._checks import (
    F32,
    F64,
    as_points,
    batch_shape,
    check_options,
    check_tolerance,
    positive,
    raise_nonfinite,
)
from .._jit.setup import notify_compiling
from ..constraints import Constraint
from ..errors import InputError
from ..pose import Motion
from . import _dls_kernels as K
from ._dls_goals import goal_arrays, goals, target_batch
from ._harness.packing import pack_pose_constraints, pack_position_constraints, packed_or_free
from ._harness.problem import (
    PositionsProblem,
    flat,
    frozen,
    init_options,
    parent_rotations,
    pose_problem,
)
from ._harness.rescale import rescaled, safe_norm, scaled_back
from ._harness.run import pose_result, positions_result, solve_outputs
from ._harness.single import rest_frames, solve_one_fixed
from .chain import Chain
from .result import SolveResult

__all__ = ["DLSOptions", "GoalWeights", "dls", "solve_dls"]


@dataclass(frozen=True)
class DLSOptions:
    """Options of the damped-least-squares solver (validated on construction).

    Attributes:
        max_iterations: iterations before giving up (0 only measures the start pose).
        tolerance: a position goal is met within ``tolerance * L`` (``L``: chain length).
        rotation_tolerance: an orientation goal is met within this angle, radians.
        damping: the smallest ``lambda / L``, > 0. The damping adapts per problem
            (Levenberg-Marquardt): a step that would increase the error is undone and the
            damping raised, an accepted step lowers it back toward this floor. Smaller
            floors take longer steps when the goals are well inside reach.
        max_step: largest turn of any joint per iteration, radians (the whole step is scaled
            down to respect it), or ``None``.
        clamp: per iteration the goals' residuals are scaled down together so that none
            exceeds ``clamp * L`` (position) or ``clamp`` radians (orientation): far targets
            are approached in steps.
        bend_axis: world axis about which the chain bends when the chain and its targets lie
            on one line (where the Jacobian cannot move the effector toward the target);
            ``None`` picks a perpendicular of the chain deterministically.
        keep_effector_world: pose level only: keep the last chain joint's world rotation
            (else its local one). Ignored (treated as False) when that joint has an
            orientation goal, which is only reachable through its local rotation.

    Raises:
        InputError: any value out of its range (``damping`` and ``clamp`` must be > 0).

    Example:
        >>> DLSOptions(damping=0.05, max_step=0.3).damping
        0.05
    """

    max_iterations: int = 100
    tolerance: float = 1e-3
    rotation_tolerance: float = 1e-3
    damping: float = 0.05
    max_step: float | None = None
    clamp: float = 0.2
    bend_axis: tuple[float, float, float] | None = None
    keep_effector_world: bool = True
    _bend: np.ndarray = field(init=False, repr=False, compare=False)
    _settings: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        init_options(self)
        s = object.__setattr__
        s(
            self,
            "rotation_tolerance",
            check_tolerance(self.rotation_tolerance, "rotation_tolerance"),
        )
        s(self, "damping", positive(self.damping, "damping"))
        s(self, "clamp", positive(self.clamp, "clamp"))
        s(self, "_settings", K.dls_settings(self))


_DEFAULT = DLSOptions()


class GoalWeights(NamedTuple):
    """Weights of the goals of :func:`dls` and :func:`solve_dls`: each ``None`` (default: 1
    for each given kind of target, else 0), a number or ``(G,)`` numbers ``>= 0``, one per
    goal; 0 disables that part of a goal.

    Example:
        >>> GoalWeights(position_weights=[1.0, 2.0]).rotation_weights is None
        True
    """

    position_weights: object = None
    rotation_weights: object = None


_NO_WEIGHTS = GoalWeights()


_POSITION_GOAL: dict[int, tuple] = {}


def _position_goal(n: int) -> tuple:
    """The shared arrays of :func:`~ikrig.solvers._dls_kernels.dls_positions_one` for a
    chain of ``n`` bones whose one goal is the effector's position, as the general path
    makes them (cached): ``(parent, effectors, trot, wpos, wrot, kinds, params)``."""
    got = _POSITION_GOAL.get(n)
    if got is None:
        eff, _, _, _, wpos, wrot = goals(n, None, np.zeros(3), None, _NO_WEIGHTS)
        _, trot = goal_arrays(None, None, False, (1,), 1)
        _, parent, kinds, params = rest_frames(n)
        got = _POSITION_GOAL[n] = (parent, eff, trot, wpos, wrot, kinds, params)
    return got


def _check_weights(weights) -> GoalWeights:
    """``weights`` as a :class:`GoalWeights` (``None``: the defaults)."""
    if weights is None:
        return _NO_WEIGHTS
    if not isinstance(weights, GoalWeights):
        raise InputError(f"weights: expected GoalWeights or None, got {type(weights).__name__}")
    return weights


def dls(
    positions_world: ArrayLike,
    target_world: ArrayLike | None,
    options: DLSOptions | None = None,
    *,
    effectors: int | np.integer | Sequence[int] | np.ndarray | None = None,
    target_rotation_world: ArrayLike | None = None,
    weights: GoalWeights | None = None,
    constraints: Sequence[Constraint | None] | None = None,
    parent_rotation_world: ArrayLike | None = None,
) -> SolveResult:
    """Solve chains given by joint positions with damped least squares.

    The input pose is the rest pose: every joint's local rotation is the identity there and
    its frame is ``parent_rotation_world`` (identity by default); bone ``i`` is
    ``positions_world[..., i + 1, :] - positions_world[..., i, :]``. The root stays in place;
    bones keep their lengths.

    Args:
        positions_world: ``(..., n + 1, 3)`` world positions of the chain's joints, root
            first (``n >= 1``).
        target_world: world position targets: ``(..., 3)`` for a single goal (``effectors``
            ``None`` or an int), ``(..., G, 3)`` for ``effectors`` a sequence of ``G``
            indices. ``None`` for orientation-only goals.
        options: :class:`DLSOptions`.
        effectors: chain-joint index (``0 .. n``, negative counts from the end) of each goal;
            default the last joint ``n``.
        target_rotation_world: ``None`` or world orientation targets ``(..., 4)`` /
            ``(..., G, 4)`` xyzw of the effectors' frames (which start as
            ``parent_rotation_world``).
        weights: :class:`GoalWeights`: ``position_weights`` and ``rotation_weights``, each
            ``(G,)`` (or a number) weights >= 0; 0 disables that part of a goal. Defaults: 1
            for each given kind of target, else 0.
        constraints: ``None`` or ``n`` constraint objects / ``None``, one per solved joint,
            relative to each problem's input pose.
        parent_rotation_world: ``(..., 4)`` xyzw world rotation of the chain root's parent
            frame (every joint frame of the input pose); default identity.

    Returns:
        :class:`~ikrig.solvers.result.SolveResult`: ``positions_world (..., n + 1, 3)``,
        ``rotations_local (..., n, 4)``, ``reached (...)`` (every active goal within
        tolerance), ``error (...)`` (norm of the weighted residual: position errors in data
        units times their weights, orientation errors in radians times ``L`` and their
        weights; the plain distance for a single position goal), ``iterations (...)``.

    Failure behaviour: unreachable targets leave the chain stretched toward them
    (``reached`` False); targets at the root, zero-length bones and straight chains with a
    target on their line give finite output. Raises :class:`~ikrig.errors.InputError` for
    wrong shapes, bad weights or indices, and NaN/infinite inputs (naming the argument).

    Example:
        >>> import numpy as np
        >>> chain = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], dtype=float)
        >>> res = dls(chain, [1.0, 2.0, 0.5])
        >>> bool(res.reached), res.rotations_local.shape
        (True, (3, 4))
    """
    opts = check_options(options, DLSOptions, _DEFAULT)
    if (
        effectors is None
        and target_rotation_world is None
        and weights is None
        and constraints is None
        and parent_rotation_world is None
    ):  # one problem? (fast path)
        res = solve_one_fixed(K.dls_positions_one, _position_goal, positions_world,
                              target_world, opts._settings)  # fmt: skip
        if res is not None:
            return res
    pos = as_points(positions_world, "positions_world", 3, 2)
    if pos.shape[-2] < 2:
        raise InputError(f"positions_world: a chain needs at least 2 joints, got {pos.shape}")
    m = pos.shape[-2]
    n = m - 1
    eff, multi, tpos, trot, wpos, wrot = goals(
        n, effectors, target_world, target_rotation_world, _check_weights(weights)
    )
    batch = batch_shape(("positions_world", pos.shape[:-2]),
                        ("targets", target_batch(tpos, trot, multi)))  # fmt: skip
    dtype = F32 if all(a is None or a.dtype == F32 for a in (pos, tpos, trot)) else F64
    p = flat(pos, (), (m, 3)) if pos.ndim == 2 else flat(pos, batch, (m, 3))
    prob = PositionsProblem(p, None, batch, dtype, pos)
    tp, tr = goal_arrays(tpos, trot, multi, batch, len(eff))
    parent = parent_rotations(parent_rotation_world, batch)
    kinds, params = packed_or_free(
        pack_position_constraints(constraints, prob, parent_rotation_world), n
    )
    out, rl, err, iters, reached = solve_outputs(tp.shape[0], m)
    notify_compiling()
    bad = K.dls_positions_kernel(
        p, parent, eff, tp, tr, wpos, wrot, kinds, params, opts._settings, out, rl, err, iters,
        reached,
    )  # fmt: skip
    if bad >= 0:
        raise_nonfinite(positions_world=positions_world, target_world=target_world,
                        target_rotation_world=target_rotation_world)  # fmt: skip
    if bad == -2:
        idx = np.flatnonzero(err < 0)
        rows = _rows(idx, p, parent, tr, params)
        rs = _rescaled_goals(rows[0], tp[idx], wpos)

        def again(o, r, e, i, ok):
            K.dls_positions_kernel(
                rs.pos, rows[1], eff, rs.target, rows[2], wpos, wrot, kinds, rows[3],
                opts._settings, o, r, e, i, ok,
            )  # fmt: skip

        _rescue(again, idx, rows[0][:, 0], rs, tp, wpos, eff, (out, rl, err, iters, reached))
    return positions_result(prob, out, reached, err, iters, rl)


def solve_dls(
    motion: Motion,
    chain: Chain,
    target_world: ArrayLike | None,
    options: DLSOptions | None = None,
    *,
    effectors: int | np.integer | Sequence[int] | np.ndarray | None = None,
    target_rotation_world: ArrayLike | None = None,
    weights: GoalWeights | None = None,
) -> SolveResult:
    """Solve a chain of a pose (or clip) with damped least squares.

    Only the local rotations of ``chain.joints[:-1]`` change (with ``chain.constraints``),
    plus the last chain joint's when its world rotation is kept (see
    :attr:`DLSOptions.keep_effector_world`).

    Args:
        motion: :class:`~ikrig.pose.Motion`, batch shape ``(...)``.
        chain: :class:`~ikrig.solvers.chain.Chain`.
        target_world: ``(..., 3)`` or ``(..., G, 3)`` world position targets (or ``None``);
            batch shapes broadcast with the motion's.
        options: :class:`DLSOptions`.
        effectors: indices into ``chain.joints`` (default: the last one), as for :func:`dls`.
        target_rotation_world: ``None`` or ``(..., 4)`` / ``(..., G, 4)`` xyzw world
            rotation targets of the effector joints.
        weights: :class:`GoalWeights`, as for :func:`dls`.

    Returns:
        :class:`~ikrig.solvers.result.SolveResult` with ``motion`` (the new Motion, in the
        motion's dtype) and ``rotations_local (..., n, 4)`` of the solved joints; the other
        fields as for :func:`dls`.

    Failure behaviour: as for :func:`dls`; a chain that does not match the skeleton raises
    :class:`~ikrig.errors.HierarchyError`.

    Example:
        >>> from ikrig.pose import Motion
        >>> from ikrig.skeleton import Skeleton
        >>> from ikrig.solvers.chain import Chain
        >>> sk = Skeleton(("a", "b", "c", "d"), [-1, 0, 1, 2], [[0, 0, 0], [1, 0, 0]] * 2)
        >>> res = solve_dls(Motion.rest(sk), Chain.between(sk, "a", "d"), [1.0, 1.5, 0.5])
        >>> bool(res.reached)
        True
    """
    opts = check_options(options, DLSOptions, _DEFAULT)
    if not isinstance(chain, Chain):
        raise InputError(f"chain: expected a Chain, got {type(chain).__name__}")
    n = chain.num_bones
    eff, multi, tpos, trot, wpos, wrot = goals(
        n, effectors, target_world, target_rotation_world, _check_weights(weights)
    )
    # pose_problem broadcasts the motion with a stand-in target of the targets' batch shape.
    prob = pose_problem(motion, chain, np.zeros(target_batch(tpos, trot, multi) + (3,)))
    tp, tr = goal_arrays(tpos, trot, multi, prob.batch, len(eff))
    eff_local = flat(prob.motion.rotations_local[..., chain.joints[-1], :], prob.batch, (4,))
    kinds, params = packed_or_free(pack_pose_constraints(prob.motion, chain), n)
    out, rl, err, iters, reached = solve_outputs(tp.shape[0], n + 1)
    rw = np.empty((tp.shape[0], n + 1, 4))
    notify_compiling()
    bad = K.dls_pose_kernel(
        prob.bone, prob.rot_local, prob.parent, prob.root, eff_local, eff, tp, tr, wpos, wrot,
        kinds, params, opts._settings, out, rl, rw, err, iters, reached,
    )  # fmt: skip
    if bad >= 0:
        raise_nonfinite(target_world=target_world, target_rotation_world=target_rotation_world)
    if bad == -2:
        idx = np.flatnonzero(err < 0)
        pos_w = flat(prob.pos_w, prob.batch, (n + 1, 3))
        rows = _rows(idx, pos_w, prob.parent, tr, params)
        rs = _rescaled_goals(rows[0], tp[idx], wpos)
        bone = prob.bone[idx] * (0.5 * rs.scale)[:, None, None]
        rw_k = np.empty((len(idx), n + 1, 4))

        def again(o, r, e, i, ok):
            K.dls_pose_kernel(
                bone, prob.rot_local[idx], rows[1], np.zeros((len(idx), 3)), eff_local[idx],
                eff, rs.target, rows[2], wpos, wrot, kinds, rows[3], opts._settings, o, r, rw_k,
                e, i, ok,
            )  # fmt: skip

        _rescue(again, idx, pos_w[idx, 0], rs, tp, wpos, eff, (out, rl, err, iters, reached))
        rw[idx] = rw_k
    keep = opts.keep_effector_world and not bool(((eff == n) & (wrot > 0)).any())
    return pose_result(prob, chain, out, reached, err, iters, rw[:, :n], keep)


def _rows(idx, pos, parent, trot, params):
    """Rows ``idx`` of the per-problem kernel inputs (``(1, ...)`` arrays are shared)."""
    pick = [frozen(a[idx]) if a.shape[0] > 1 else a for a in (parent, trot, params)]
    p = pos[idx] if pos.shape[0] > 1 else np.repeat(pos, len(idx), axis=0)
    return (p, *pick)


class _Rescaled(NamedTuple):
    """Problems rescaled into the kernel's range (:func:`_rescaled_goals`)."""

    pos: np.ndarray  # (K, m, 3) rescaled chains, roots at the origin
    target: np.ndarray  # (K, G, 3) rescaled targets (far ones moved in)
    scale: np.ndarray  # (K,) the factor applied
    moved: np.ndarray  # (K,) bool: a target was moved in


def _rescaled_goals(pos, tp, wpos) -> _Rescaled:
    """:func:`~ikrig.solvers._harness.rescale.rescaled` for DLS goals (targets of goals without a
    position weight do not count)."""
    tp = tp.copy()
    tp[:, wpos == 0] = pos[:, :1]
    q, v, scale, moved = rescaled(pos, tp, True)
    return _Rescaled(np.ascontiguousarray(q), np.ascontiguousarray(v), scale, moved.any(axis=1))


def _rescue(again, idx, root, rs: _Rescaled, tp, wpos, eff, outs):
    """Solve problems ``idx``, which were out of the kernel's range, again rescaled (``rs``;
    ``again(pos, rl, err, iters, reached)`` runs the kernel on them) and write the results
    back in data units. Where a far target was moved in, the error is recomputed: the
    position goals' weighted distances to the real targets, and the orientation part."""
    out, rl, err, iters, reached = outs
    v, scale, moved = rs.target, rs.scale, rs.moved
    K_, m = len(idx), out.shape[1]
    o, r, e, i, ok = solve_outputs(K_, m)
    again(o, r, e, i, ok)
    out[idx] = scaled_back(root[:, None, :], o, scale)
    rl[idx] = r
    iters[idx] = i
    reached[idx] = ok & ~moved
    with np.errstate(over="ignore"):
        err[idx] = np.minimum(e * 2.0 / scale, np.finfo(np.float64).max)
    if moved.any():
        k = np.flatnonzero(moved)
        w = wpos[None, :, None]
        scaled = (v[k] - o[k][:, eff]) * w  # residuals against the moved-in targets
        rot2 = np.maximum(e[k] ** 2 - np.sum(scaled**2, axis=(1, 2)), 0.0)
        true = (tp[idx[k]] * 0.5 - out[idx[k]][:, eff] * 0.5) * w
        parts = np.concatenate([true.reshape(len(k), -1), (np.sqrt(rot2) / scale[k])[:, None]], 1)
        err[idx[k]] = np.minimum(2.0 * safe_norm(parts), np.finfo(np.float64).max)
