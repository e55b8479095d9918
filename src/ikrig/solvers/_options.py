"""Problem set-up, constraint packing and result assembly of the chain solvers (FABRIK,
follow, CCD, planar CCD, DLS). Private; the argument checks themselves live in
:mod:`ikrig._checks`.

* :func:`init_options` checks the fields every ``*Options`` dataclass shares;
* the two problem set-ups every solver starts from: :func:`positions_problem` (chains given
  as world positions) and :func:`pose_problem` (a chain of a :class:`~ikrig.pose.Motion`);
* constraint packing for both levels (:func:`pack_position_constraints`,
  :func:`pack_pose_constraints`), cached for repeated calls on the same chain.

Conventions implemented here (see ``docs/solvers.md``):

* **tolerance** is a fraction of the chain's length (the sum of its bone lengths, per
  problem); the kernels multiply it by that length;
* **position-level frames**: the input pose is the rest pose. Every joint's local rotation is
  the identity there and every joint frame is the world frame turned by
  ``parent_rotation_world`` (identity by default), so joint ``i``'s bone in its own frame is
  ``parent_rotation_world^-1 (p[i + 1] - p[i])``, and constraints are packed from those bones.

Kernels compute in float64; :func:`finish` casts results back to float32 when every float
input was float32.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import fields
from typing import NamedTuple

import numpy as np

from .._checks import (
    F32,
    F64,
    as_float,
    as_points,
    batch_shape,
    check_fields,
    check_finite,
    raise_nonfinite,
)
from ..constraints import N_PARAMS, pack_constraints
from ..errors import InputError
from ..math.quat import quat_conj, quat_rotate
from ..pose import Motion
from ._rescale import packable, rescue
from .chain import Chain, chain_world, write_chain
from .result import SolveResult

IDENTITY = np.array([[0.0, 0.0, 0.0, 1.0]])  # (1, 4): "the same identity for every problem"
IDENTITY.flags.writeable = False
NO_AXIS = np.zeros(3)  # a bend axis of zeros: "choose one automatically"
NO_AXIS.flags.writeable = False


# --------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------


def init_options(opts) -> None:
    """Check the shared fields of a solver's ``*Options`` (:func:`~ikrig._checks.check_fields`)
    and store the kernels' form of ``bend_axis`` in ``_bend`` if it has one."""
    check_fields(opts)
    if "_bend" in {f.name for f in fields(opts)}:
        object.__setattr__(opts, "_bend", axis_array(opts.bend_axis))


def axis_array(axis) -> np.ndarray:
    """The kernels' ``(3,)`` float64 form of a checked axis (zeros for ``None``)."""
    if axis is None:
        return NO_AXIS
    a = np.array(axis, dtype=np.float64)
    a.flags.writeable = False
    return a


# --------------------------------------------------------------------------------------
# Arrays and batches
# --------------------------------------------------------------------------------------


def flat(a, batch, tail, dtype=F64) -> np.ndarray:
    """``a`` broadcast to ``batch + tail`` and flattened to C-contiguous ``(N,) + tail``."""
    if a.shape[: a.ndim - len(tail)] != batch:
        a = np.broadcast_to(a, batch + tail)
    return np.ascontiguousarray(a.reshape((-1,) + tail), dtype=dtype)


def finish(a, batch, dtype, tail=()) -> np.ndarray:
    """A flat float64 kernel result reshaped to ``batch + tail`` in the result dtype."""
    a = a.reshape(batch + tail)
    return a if dtype == F64 else a.astype(dtype)


def result_dtype(*arrays) -> np.dtype:
    """float32 when every given float array is float32, else float64."""
    for a in arrays:
        if a is not None and a.dtype != F32:
            return F64
    return F32


def parent_rotations(parent_rotation_world, batch) -> np.ndarray:
    """``(1, 4)`` identity for ``None``, else unit ``(N, 4)`` float64 (``N`` the batch size)."""
    if parent_rotation_world is None:
        return IDENTITY
    q = as_float(parent_rotation_world, "parent_rotation_world", last=4, dtype=np.float64,
                 finite=False)  # fmt: skip
    check_finite(q, "parent_rotation_world")
    if q.shape[:-1] == ():
        out = q.reshape(1, 4)
    else:
        try:
            out = np.broadcast_to(q, tuple(batch) + (4,)).reshape(-1, 4)
        except ValueError:
            raise InputError(
                f"parent_rotation_world {q.shape} does not broadcast to the batch shape {batch}"
            ) from None
    norms = np.linalg.norm(out, axis=-1, keepdims=True)
    if not (norms > 1e-12).all():
        raise InputError("parent_rotation_world: contains a zero quaternion")
    return np.ascontiguousarray(out / norms)


class PositionsProblem(NamedTuple):
    """A validated position-level problem (see :func:`positions_problem`)."""

    pos: np.ndarray  # (M, n + 1, 3) float64, M = 1 (one chain for every target) or N
    target: np.ndarray  # (N, 3) float64
    batch: tuple
    dtype: np.dtype
    own: np.ndarray  # positions_world as given (its own batch shape), float32/float64


def positions_problem(positions_world, target_world) -> PositionsProblem:
    """Validate and flatten chains given by joint positions and their targets.

    A single chain (``positions_world`` without batch axes) stays ``(1, n + 1, 3)``: the
    kernels read it for every target."""
    p, t = positions_world, target_world
    if (
        type(p) is np.ndarray
        and type(t) is np.ndarray
        and p.dtype is F64
        and t.dtype is F64
        and p.ndim == 2
        and p.strides == (24, 8)
        and t.strides == (8,)
        and t.shape == (3,)
        and p.shape[0] >= 2
    ):  # fast path: one C-contiguous float64 problem
        return tuple.__new__(PositionsProblem, (p[None], t[None], (), F64, p))
    p = as_points(p, "positions_world", 3, 2)
    t = as_points(t, "target_world", 3, 1)
    if p.shape[-2] < 2:
        raise InputError(f"positions_world: a chain needs at least 2 joints, got shape {p.shape}")
    batch = batch_shape(("positions_world", p.shape[:-2]), ("target_world", t.shape[:-1]))
    m = p.shape[-2]
    pf = flat(p, (), (m, 3)) if p.ndim == 2 else flat(p, batch, (m, 3))
    return PositionsProblem(pf, flat(t, batch, (3,)), batch, result_dtype(p, t), p)


def positions_setup(positions_world, target_world, constraints, parent_rotation_world):
    """The common start of every position-level solve: ``(problem, parent (M, 4), packed
    constraints or None)``."""
    prob = positions_problem(positions_world, target_world)
    parent = parent_rotations(parent_rotation_world, prob.batch)
    packed = pack_position_constraints(constraints, prob, parent_rotation_world)
    return prob, parent, packed


# --------------------------------------------------------------------------------------
# Constraints
# --------------------------------------------------------------------------------------

_FREE: dict = {}
_PACKED: OrderedDict = OrderedDict()
_PACKED_MAX = 64


def free_constraints(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``kinds (n,)`` zeros and ``params (1, n, P)`` zeros (every joint free), cached."""
    got = _FREE.get(n)
    if got is None:
        got = _FREE[n] = (np.zeros(n, dtype=np.int64), np.zeros((1, n, N_PARAMS)))
        for a in got:
            a.flags.writeable = False
    return got


def _check_count(constraints, n: int):
    if constraints is None:
        return None
    cons = tuple(constraints)
    if len(cons) != n:
        raise InputError(
            f"constraints: expected {n} entries (one per solved joint, root first), got {len(cons)}"
        )
    if all(c is None for c in cons):
        return None
    return cons


def _pack_cached(cons: tuple, bones: np.ndarray):
    """``pack_constraints`` of one rest pose ``(n, 3)``, remembered for repeated calls."""
    try:
        key = (cons, bones.tobytes())
        got = _PACKED.get(key)
    except TypeError:  # an unhashable entry: pack_constraints reports what is wrong
        key, got = None, None
    if got is None:
        kinds, params = pack_constraints(cons, packable(bones))
        got = (kinds, params.reshape((1,) + params.shape))
        if key is not None:
            _PACKED[key] = got
            if len(_PACKED) > _PACKED_MAX:
                _PACKED.popitem(last=False)
    return got


def rest_bones(own_positions, parent_rotation_world) -> np.ndarray:
    """Each joint's bone in its own rest frame, ``parent^-1 (p[i + 1] - p[i])``: ``(..., n, 3)``
    over the broadcast of the positions' and the parent rotations' own batch shapes."""
    bones = np.diff(np.asarray(own_positions, dtype=np.float64), axis=-2)
    if parent_rotation_world is not None:
        q = np.asarray(parent_rotation_world, dtype=np.float64)
        q = q / np.linalg.norm(q, axis=-1, keepdims=True)
        bones = quat_rotate(quat_conj(q)[..., None, :], bones)
    return bones


def pack_position_constraints(constraints, prob: PositionsProblem, parent_rotation_world):
    """Packed constraints of position-level chains: ``None`` when every joint is free, else
    ``(kinds (n,), params (M, n, P))`` with ``M`` 1 (one rest pose for the whole batch) or
    ``N`` (one per problem). Constraints are relative to each problem's input pose."""
    n = prob.pos.shape[1] - 1
    cons = _check_count(constraints, n)
    if cons is None:
        return None
    try:
        return _pack_positions(cons, prob, parent_rotation_world, 1.0)
    except InputError:
        # Packing reads the positions before the kernels check them: name NaN here. Else
        # the bones overflowed (coordinates beyond 1e307): halve (directions are the same).
        check_finite(prob.own, "positions_world")
        return _pack_positions(cons, prob, parent_rotation_world, 0.5)


def _pack_positions(cons, prob: PositionsProblem, parent_rotation_world, scale):
    n = prob.pos.shape[1] - 1
    own = prob.own if scale == 1.0 else prob.own * scale
    bones = rest_bones(own, parent_rotation_world)
    if bones.shape[:-2] == ():
        return _pack_cached(cons, np.ascontiguousarray(bones))
    try:
        bones = np.broadcast_to(bones, prob.batch + (n, 3))
    except ValueError:
        raise InputError(
            f"parent_rotation_world: does not broadcast to the batch shape {prob.batch}"
        ) from None
    kinds, params = pack_constraints(cons, packable(bones.reshape(-1, n, 3)))
    return kinds, params


def pack_pose_constraints(motion: Motion, chain: Chain):
    """Packed constraints of a skeleton chain (frames of the skeleton's joints): ``None``
    when every joint is free, else ``(kinds (n,), params (1, n, P))``."""
    cons = _check_count(chain.constraints, chain.num_bones)
    if cons is None:
        return None
    bones = motion.skeleton.offsets[list(chain.joints[1:])].astype(np.float64)
    return _pack_cached(cons, np.ascontiguousarray(bones))


def packed_or_free(packed, n):
    """``packed``, or the all-free packing for ``None``."""
    return free_constraints(n) if packed is None else packed


# --------------------------------------------------------------------------------------
# Pose level
# --------------------------------------------------------------------------------------


def broadcast_motion(motion: Motion, batch) -> Motion:
    """``motion`` broadcast (copied) to the batch shape ``batch``."""
    if motion.batch_shape == tuple(batch):
        return motion
    J = motion.num_joints
    rl = np.broadcast_to(motion.rotations_local, tuple(batch) + (J, 4)).copy()
    pl = np.broadcast_to(motion.positions_local, tuple(batch) + (J, 3)).copy()
    ft = motion.frame_time if len(batch) == len(motion.batch_shape) else None
    return Motion(motion.skeleton, rl, pl, ft)


class PoseProblem(NamedTuple):
    """A validated pose-level problem (see :func:`pose_problem`)."""

    motion: Motion  # broadcast to the batch shape
    target: np.ndarray  # (N, [G,] 3) float64
    batch: tuple
    dtype: np.dtype  # the motion's
    rot_w: np.ndarray  # (..., n + 1, 4) world rotations of the chain's joints
    pos_w: np.ndarray  # (..., n + 1, 3) world positions
    parent: np.ndarray  # (N, 4) float64 world rotation of the chain root's parent
    bone: np.ndarray  # (N, n, 3) float64 bones in the joints' own frames
    rot_local: np.ndarray  # (N, n, 4) float64 local rotations of the solved joints
    root: np.ndarray  # (N, 3) float64 chain root positions


def chain_positions(prob: PoseProblem, chain: Chain):
    """Flat float64 ``positions (N, n + 1, 3)`` and ``world rotations (N, n, 4)`` of the
    chain's joints (the position-based solvers' pose-level input)."""
    n = chain.num_bones
    pos = flat(prob.pos_w, prob.batch, (n + 1, 3))
    rot = flat(prob.rot_w[..., :-1, :], prob.batch, (n, 4))
    return pos, rot


def pose_problem(motion, chain, target_world, extra_target_dims: int = 0) -> PoseProblem:
    """Validate a pose-level call; ``target_world`` is ``(..., [G,] 3)`` (``G`` when
    ``extra_target_dims`` is 1)."""
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected a Motion, got {type(motion).__name__}")
    if not isinstance(chain, Chain):
        raise InputError(f"chain: expected a Chain, got {type(chain).__name__}")
    chain.check(motion.skeleton)
    tgt = as_points(target_world, "target_world", 3, 1 + extra_target_dims)
    tb = tgt.shape[: tgt.ndim - 1 - extra_target_dims]
    batch = batch_shape(("motion", motion.batch_shape), ("target_world", tb))
    motion = broadcast_motion(motion, batch)
    rot_w, pos_w, parent_rot = chain_world(motion, chain)
    joints = list(chain.joints)
    n = len(joints) - 1
    tail = tgt.shape[tgt.ndim - 1 - extra_target_dims :]
    return PoseProblem(
        motion=motion,
        target=flat(tgt, batch, tail),
        batch=batch,
        dtype=motion.dtype,
        rot_w=rot_w,
        pos_w=pos_w,
        parent=flat(parent_rot, batch, (4,)),
        bone=flat(motion.positions_local[..., joints[1:], :], batch, (n, 3)),
        rot_local=flat(motion.rotations_local[..., joints[:-1], :], batch, (n, 4)),
        root=flat(pos_w[..., 0, :], batch, (3,)),
    )


# --------------------------------------------------------------------------------------
# Kernel inputs and results
# --------------------------------------------------------------------------------------

_REST_ROT: dict = {}


def rest_rotations(parent: np.ndarray, n: int) -> np.ndarray:
    """``(M, n, 4)`` start world rotations of a position-level chain's solved joints: every
    joint's frame is its root's parent frame (``parent (M, 4)``) in the input pose."""
    if parent is IDENTITY:
        got = _REST_ROT.get(n)
        if got is None:
            got = _REST_ROT[n] = np.ascontiguousarray(np.broadcast_to(IDENTITY[:, None], (1, n, 4)))
            got.flags.writeable = False
        return got
    return np.ascontiguousarray(np.broadcast_to(parent[:, None, :], (parent.shape[0], n, 4)))


def positions_result(prob: PositionsProblem, out, reached, err, iters, rot_local) -> SolveResult:
    """The :class:`SolveResult` of a position-level solve from flat kernel outputs."""
    batch, dtype = prob.batch, prob.dtype
    m = out.shape[1]
    if dtype is F64:
        return SolveResult(
            out.reshape(batch + (m, 3)),
            reached.reshape(batch),
            err.reshape(batch),
            iters.reshape(batch),
            None,
            rot_local.reshape(batch + (m - 1, 4)),
        )
    return SolveResult(
        positions_world=finish(out, batch, dtype, (m, 3)),
        reached=reached.reshape(batch),
        error=finish(err, batch, dtype),
        iterations=iters.reshape(batch),
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
        reached=reached.reshape(batch),
        error=finish(err, batch, dtype),
        iterations=iters.reshape(batch),
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
