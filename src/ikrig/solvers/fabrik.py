"""FABRIK (Forward And Backward Reaching Inverse Kinematics) for chains of any length.

Two entry points, one kernel:

* :func:`fabrik` works on bare joint positions (no skeleton): a chain of ``n + 1`` points;
* :func:`solve_fabrik` solves a :class:`~ikrig.solvers.chain.Chain` of a
  :class:`~ikrig.pose.Motion` and writes the new rotations back.

Algorithm, per batch element: bone lengths are measured from the input and kept exactly.
If the effector is already within ``tolerance`` of the target nothing moves (0 iterations).
A target at or beyond the chain's reach gives, in one pass, the chain stretched straight
towards it (``reached`` is False unless it is within tolerance). Otherwise each iteration
runs a backward pass (effector onto the target, every joint pulled towards its child) and a
forward pass (root back in place, every joint pulled towards its parent), and stops as soon
as the effector is within ``tolerance``. A chain lying on the root-target line (straight
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
only enforced by the snapping (directions carry no twist). Constrained FABRIK therefore
may converge slowly or stop short of targets the limits allow; ``reached`` tells (for a
6-link chain with 0.8 rad cones about 99.8 % of reachable targets are reached, with
+-1.2 rad 2D limits on every joint about 93 %).

Frames for position-level chains: without a skeleton, joint ``i``'s frame is its parent's
frame turned by the shortest arc onto the bone (parallel transport from the chain root's
parent frame ``parent_rotation_world``, identity by default), and every bone lies along the
+X axis of its own frame. So a 2D chain in the XY plane has its joint frames turning about
+Z, :class:`~ikrig.constraints.AngleLimit2D` measures the angle between consecutive bones,
and the root's rest direction is the parent frame's +X.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._numba import notify_compiling
from ..constraints.base import pack_constraints
from ..errors import InputError
from ..pose import Motion
from . import _chain_kernels as K
from .chain import Chain, bone_vectors_local, chain_world, rotations_from_positions, write_chain
from .result import SolveResult

_NO_BEND = np.zeros(3)


def _check_bend(bend_axis) -> np.ndarray:
    if bend_axis is None:
        return _NO_BEND
    a = np.asarray(bend_axis, dtype=np.float64)
    if a.shape != (3,) or not np.isfinite(a).all() or not np.linalg.norm(a) > 0:
        raise InputError(
            f"bend_axis: expected None or 3 finite numbers, not all 0, got {bend_axis!r}"
        )
    return a


def _check_tolerance(tolerance) -> float:
    tol = float(tolerance)
    if not np.isfinite(tol) or tol <= 0:
        raise InputError(f"tolerance: must be a finite number > 0, got {tolerance!r}")
    return tol


@dataclass(frozen=True)
class FabrikOptions:
    """Options of :func:`fabrik` and :func:`solve_fabrik`.

    Attributes:
        max_iterations: most backward+forward pass pairs per element (``>= 1``).
        tolerance: the effector counts as on the target within this distance, in the data's
            units (absolute; scale it with your data: 1e-3 suits metres).
        bend_axis: ``None`` or a world-space ``(3,)`` axis: a chain lying on the
            root-target line is bowed about this axis (made perpendicular to the line);
            default: a fixed perpendicular of the line (+Z for a chain along X).

    Raises:
        InputError: non-integer or < 1 iterations, tolerance not > 0, bad bend axis.
    """

    max_iterations: int = 100
    tolerance: float = 1e-3
    bend_axis: tuple[float, float, float] | None = None

    def __post_init__(self):
        it = self.max_iterations
        if isinstance(it, bool) or not isinstance(it, (int, np.integer)) or it < 1:
            raise InputError(f"max_iterations: must be an integer >= 1, got {it!r}")
        object.__setattr__(self, "max_iterations", int(it))
        object.__setattr__(self, "tolerance", _check_tolerance(self.tolerance))
        bend = _check_bend(self.bend_axis)
        if self.bend_axis is not None:
            object.__setattr__(self, "bend_axis", tuple(float(x) for x in bend))
        object.__setattr__(self, "_bend", bend)


_DEFAULT = FabrikOptions()


# --------------------------------------------------------------------------------------
# Validation shared with follow.py
# --------------------------------------------------------------------------------------


_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)


def _prepare(positions_world, target_world):
    """Validate and flatten: ``(pos (N, m, 3), target (N, 3), batch, dtype)`` float64."""
    p = np.asarray(positions_world)
    t = np.asarray(target_world)
    pdt, tdt = p.dtype, t.dtype
    if (
        pdt == _F64
        and tdt == _F64
        and p.ndim == 2
        and t.ndim == 1
        and p.shape[1] == 3
        and p.shape[0] >= 2
        and t.shape[0] == 3
    ):  # fast path: a single float64 problem
        return (
            np.ascontiguousarray(p).reshape(1, p.shape[0], 3),
            np.ascontiguousarray(t).reshape(1, 3),
            (),
            _F64,
        )
    if pdt.kind not in "fiu" or tdt.kind not in "fiu":
        raise InputError(
            f"positions_world, target_world: expected numbers, got {p.dtype} and {t.dtype}"
        )
    if p.ndim < 2 or p.shape[-1] != 3 or p.shape[-2] < 2:
        raise InputError(f"positions_world: expected shape (..., n + 1 >= 2, 3), got {p.shape}")
    if t.ndim < 1 or t.shape[-1] != 3:
        raise InputError(f"target_world: expected shape (..., 3), got {t.shape}")
    # float32 if a float32 meets float32 or small integers, else float64
    dtype = _F32 if (pdt == _F32 or tdt == _F32) and pdt.itemsize <= 4 and (
        tdt.itemsize <= 4) else _F64  # fmt: skip
    m = p.shape[-2]
    batch = p.shape[:-2]
    if batch != t.shape[:-1]:
        try:
            batch = np.broadcast_shapes(batch, t.shape[:-1])
        except ValueError:
            raise InputError(
                f"positions_world {p.shape} and target_world {t.shape}: batch shapes do not"
                " broadcast"
            ) from None
        p = np.broadcast_to(p, batch + (m, 3))
        t = np.broadcast_to(t, batch + (3,))
    n_el = 1
    for s in batch:
        n_el *= s
    pf = np.ascontiguousarray(p, dtype=np.float64).reshape(n_el, m, 3)
    tf = np.ascontiguousarray(t, dtype=np.float64).reshape(n_el, 3)
    return pf, tf, batch, dtype


def _raise_bad(pf, tf, k):
    name = "target_world" if not np.isfinite(tf[k]).all() else "positions_world"
    raise InputError(f"{name}: contains NaN or infinite values (flattened batch element {k})")


def _parent_rotations(parent_rotation_world, batch, n_el) -> np.ndarray:
    if parent_rotation_world is None:
        q = np.zeros((n_el, 4))
        q[:, 3] = 1.0
        return q
    q = np.asarray(parent_rotation_world, dtype=np.float64)
    if q.shape[-1:] != (4,) or not np.isfinite(q).all():
        raise InputError(
            f"parent_rotation_world: expected finite (..., 4) xyzw, got shape {q.shape}"
        )
    try:
        q = np.broadcast_to(q, tuple(batch) + (4,))
    except ValueError:
        raise InputError(
            f"parent_rotation_world {q.shape} does not broadcast to the batch shape {batch}"
        ) from None
    q = np.ascontiguousarray(q).reshape(n_el, 4)
    norms = np.linalg.norm(q, axis=-1)
    if not (norms > 0).all():
        raise InputError("parent_rotation_world: contains a zero quaternion")
    return q / norms[:, None]


@lru_cache(maxsize=64)
def _packed_xaxis(constraints: tuple, n: int):
    """Packed constraints of a position-level chain (every bone along its frame's +X)."""
    if len(constraints) != n:
        raise InputError(
            f"constraints: expected {n} entries (one per bone), got {len(constraints)}"
        )
    bones = np.zeros((n, 3))
    bones[:, 0] = 1.0
    return pack_constraints(constraints, bones)


def _packed_positions(constraints, n):
    """``None`` when every joint is free, else ``(kinds, params)``."""
    if constraints is None:
        return None
    cons = tuple(constraints)
    if all(c is None for c in cons) and len(cons) in (0, n):
        return None
    try:
        return _packed_xaxis(cons, n)
    except TypeError:  # an unhashable entry: pack without the cache (pack_constraints checks)
        return _packed_xaxis.__wrapped__(cons, n)


def _finish(a, batch, dtype, tail):
    a = a.reshape(tuple(batch) + tail)
    return a if dtype == np.float64 else a.astype(dtype)


# --------------------------------------------------------------------------------------
# Position level
# --------------------------------------------------------------------------------------


def fabrik(
    positions_world,
    target_world,
    options: FabrikOptions | None = None,
    constraints=None,
    parent_rotation_world=None,
) -> SolveResult:
    """Solve chains of joint positions with FABRIK (no skeleton needed).

    Args:
        positions_world: ``(..., n + 1, 3)`` the chains' joints, root first; the start pose.
            Bone lengths are taken from it. Zero-length bones are allowed.
        target_world: ``(..., 3)`` the targets of the end effectors (``positions[..., -1]``).
            Batch shapes broadcast.
        options: :class:`FabrikOptions` (default: 100 iterations, tolerance 1e-3).
        constraints: ``None`` or ``n`` entries (a constraint of :mod:`ikrig.constraints` or
            ``None``), one per joint from the root to the one before the effector, in the
            frame convention of the module docstring (bones along +X of their frames).
        parent_rotation_world: ``(..., 4)`` xyzw world rotation of the chain root's parent
            frame (constraints of joint 0 are expressed in it); default identity.

    Returns:
        :class:`~ikrig.solvers.result.SolveResult` with ``positions_world (..., n + 1, 3)``
        (the root does not move; bone lengths kept to rounding), ``reached (...)``, ``error
        (...)`` (effector-target distance), ``iterations (...)``, ``motion=None`` and
        ``rotations_local (..., n, 4)`` (the joints' local rotations in the position-level
        frame convention) when constraints are given, else ``None``. float32 in, float32 out.

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
    opts = _DEFAULT if options is None else options
    if not isinstance(opts, FabrikOptions):
        raise InputError(f"options: expected FabrikOptions, got {type(opts).__name__}")
    pf, tf, batch, dtype = _prepare(positions_world, target_world)
    n = pf.shape[1] - 1
    packed = _packed_positions(constraints, n)
    notify_compiling()
    if packed is None:
        n_el = pf.shape[0]
        out = np.empty_like(pf)
        err = np.empty(n_el)
        iters = np.empty(n_el, dtype=np.int64)
        reached = np.empty(n_el, dtype=np.bool_)
        bad = K.fabrik_free(
            pf, tf, opts.max_iterations, opts.tolerance, opts._bend, out, err, iters, reached
        )
        local = None
    else:
        kinds, params = packed
        parent = _parent_rotations(parent_rotation_world, batch, pf.shape[0])
        rot = K.parallel_frames(pf, parent, params)
        out, _, rl, err, iters, reached, bad = K.fabrik_constrained(
            pf, tf, rot, parent, kinds, params, opts.max_iterations, opts.tolerance, opts._bend
        )
        local = _finish(rl, batch, dtype, (n, 4))
    if bad >= 0:
        _raise_bad(pf, tf, bad)
    return SolveResult(
        positions_world=_finish(out, batch, dtype, (n + 1, 3)),
        reached=reached.reshape(batch),
        error=_finish(err, batch, dtype, ()),
        iterations=iters.reshape(batch),
        rotations_local=local,
    )


# --------------------------------------------------------------------------------------
# Pose level
# --------------------------------------------------------------------------------------


def _broadcast_motion(motion: Motion, batch) -> Motion:
    if tuple(batch) == motion.batch_shape:
        return motion
    J = motion.num_joints
    rl = np.broadcast_to(motion.rotations_local, tuple(batch) + (J, 4)).copy()
    pl = np.broadcast_to(motion.positions_local, tuple(batch) + (J, 3)).copy()
    ft = motion.frame_time if len(batch) else None
    return Motion(motion.skeleton, rl, pl, ft)


def _pose_setup(motion, chain, target_world):
    """Validate a pose-level call: ``(motion, rot_w, pos_w, parent_rot, target, batch)``."""
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected a Motion, got {type(motion).__name__}")
    if not isinstance(chain, Chain):
        raise InputError(f"chain: expected a Chain, got {type(chain).__name__}")
    chain.check(motion.skeleton)
    t = np.asarray(target_world)
    if t.dtype.kind not in "fiu" or t.ndim < 1 or t.shape[-1] != 3:
        raise InputError(f"target_world: expected numbers shaped (..., 3), got {t.shape}")
    try:
        batch = np.broadcast_shapes(motion.batch_shape, t.shape[:-1])
    except ValueError:
        raise InputError(
            f"target_world {t.shape} does not broadcast with the motion's batch shape"
            f" {motion.batch_shape}"
        ) from None
    motion = _broadcast_motion(motion, batch)
    rot_w, pos_w, parent_rot = chain_world(motion, chain)
    t = np.broadcast_to(t.astype(motion.dtype, copy=False), tuple(batch) + (3,))
    return motion, rot_w, pos_w, parent_rot, t, batch


def _pose_result(motion, chain, res, rot_w, pos_w, rot_new_world):
    """Write solved world rotations back; positions come from the new motion's FK."""
    if rot_new_world is None:
        rot_new_world = rotations_from_positions(rot_w, pos_w, res.positions_world)
    new_motion, local = write_chain(motion, chain, rot_new_world)
    return SolveResult(
        positions_world=res.positions_world,
        reached=res.reached,
        error=res.error,
        iterations=res.iterations,
        motion=new_motion,
        rotations_local=local,
    )


def _packed_chain(motion: Motion, chain: Chain):
    if all(c is None for c in chain.constraints):
        return None
    return pack_constraints(chain.constraints, bone_vectors_local(motion.skeleton, chain))


def solve_fabrik(
    motion: Motion, chain: Chain, target_world, options: FabrikOptions | None = None
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
        solved joints' local rotations change; the effector keeps its world rotation) and
        ``rotations_local (..., n, 4)`` of the solved joints. Without constraints each joint
        turns by the shortest arc from its old bone direction to the new one
        (:func:`~ikrig.solvers.chain.rotations_from_positions`, twist kept); with
        constraints the rotations tracked (and snapped into the limits) by the kernel are
        used.

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
    opts = _DEFAULT if options is None else options
    if not isinstance(opts, FabrikOptions):
        raise InputError(f"options: expected FabrikOptions, got {type(opts).__name__}")
    motion, rot_w, pos_w, parent_rot, t, batch = _pose_setup(motion, chain, target_world)
    packed = _packed_chain(motion, chain)
    if packed is None:
        res = fabrik(pos_w, t, opts)
        return _pose_result(motion, chain, res, rot_w, pos_w, None)
    kinds, params = packed
    pf, tf, _, dtype = _prepare(pos_w, t)
    n = chain.num_bones
    rot = np.ascontiguousarray(rot_w[..., :-1, :], dtype=np.float64).reshape(-1, n, 4)
    par = np.ascontiguousarray(parent_rot, dtype=np.float64).reshape(-1, 4)
    notify_compiling()
    out, rw, _, err, iters, reached, bad = K.fabrik_constrained(
        pf, tf, rot, par, kinds, params, opts.max_iterations, opts.tolerance, opts._bend
    )
    if bad >= 0:
        _raise_bad(pf, tf, bad)
    res = SolveResult(
        positions_world=_finish(out, batch, dtype, (n + 1, 3)),
        reached=reached.reshape(batch),
        error=_finish(err, batch, dtype, ()),
        iterations=iters.reshape(batch),
    )
    return _pose_result(motion, chain, res, rot_w, pos_w, _finish(rw, batch, dtype, (n, 4)))


__all__ = ["FabrikOptions", "fabrik", "solve_fabrik"]
