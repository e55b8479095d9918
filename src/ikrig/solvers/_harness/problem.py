"""Problem set-up of the chain solvers (FABRIK, follow, CCD, planar CCD, DLS). Private.

* :func:`init_options` checks the fields every ``*Options`` dataclass shares (the rules
  themselves live in :mod:`ikrig._checks`);
* the two problem set-ups every solver starts from: :func:`positions_problem` (chains given
  as world positions) and :func:`pose_problem` (a chain of a :class:`~ikrig.pose.Motion`),
  validated and flattened to the kernels' C-contiguous float64 ``(N, ...)`` arrays.

Conventions implemented here (see ``docs/solvers.md``):

* **tolerance** is a fraction of the chain's length (the sum of its bone lengths, per
  problem); the kernels multiply it by that length;
* **position-level frames**: the input pose is the rest pose. Every joint's local rotation is
  the identity there and every joint frame is the world frame turned by
  ``parent_rotation_world`` (identity by default), so joint ``i``'s bone in its own frame is
  ``parent_rotation_world^-1 (p[i + 1] - p[i])``, and constraints are packed from those bones.

Kernels compute in float64; results are cast back to float32 when every float
input was float32 (:func:`~ikrig.solvers._harness.run.finish`).
"""

from __future__ import annotations

from dataclasses import fields
from typing import NamedTuple

import numpy as np

from ..._checks import F32, F64, as_float, as_points, batch_shape, check_fields, check_finite
from ...errors import InputError
from ...pose import Motion
from ..chain import Chain, chain_world

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
    """``a`` broadcast to ``batch + tail`` and flattened to C-contiguous ``(N,) + tail``,
    writeable (a read-only array is copied): a kernel gets one array type whatever the
    caller's array was, and is compiled once for it, not also for read-only arrays."""
    if a.shape[: a.ndim - len(tail)] != batch:
        a = np.broadcast_to(a, batch + tail)
    out = np.ascontiguousarray(a.reshape((-1,) + tail), dtype=dtype)
    return out if out.flags.writeable else out.copy()


def frozen(a: np.ndarray) -> np.ndarray:
    """``a``, made read-only. A kernel input that is a cached constant in some calls
    (:data:`IDENTITY` and the rest rotations, free constraints and limits, default goal
    weights and rotations; all read-only) is read-only when made for a call too, and
    positions and targets are always writeable (:func:`flat`): each kernel sees one array
    type and is compiled once, not once per combination."""
    a.flags.writeable = False
    return a


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
    return frozen(np.ascontiguousarray(out / norms))


class PositionsProblem(NamedTuple):
    """A validated position-level problem (see :func:`positions_problem`)."""

    pos: np.ndarray  # (M, n + 1, 3) float64, M = 1 (one chain for every target) or N
    target: np.ndarray | None  # (N, 3) float64 (None: several goals, see dls)
    batch: tuple
    dtype: np.dtype
    own: np.ndarray  # positions_world as given (its own batch shape), float32/float64


def one_chain(positions_world, target_world, dims: tuple[int, ...] = (3,)) -> bool:
    """Whether the arguments are one problem the ``*_one`` kernels read as they are:
    C-contiguous, writeable float64 ndarrays ``(m, D)``, ``m >= 2``, and ``(D,)``, ``D`` in
    ``dims``."""
    p, t = positions_world, target_world
    return (
        type(p) is np.ndarray
        and type(t) is np.ndarray
        and p.dtype is F64
        and t.dtype is F64
        and p.ndim == 2
        and p.shape[1] in dims
        and p.shape[0] >= 2
        and t.shape == p.shape[1:]
        and p.flags.carray
        and t.flags.carray
    )


def positions_problem(positions_world, target_world) -> PositionsProblem:
    """Validate and flatten chains given by joint positions and their targets.

    A single chain (``positions_world`` without batch axes) stays ``(1, n + 1, 3)``: the
    kernels read it for every target."""
    p, t = positions_world, target_world
    if one_chain(p, t):  # one problem the kernels read as it is
        return tuple.__new__(PositionsProblem, (p[None], t[None], (), F64, p))
    p = as_points(p, "positions_world", 3, 2)
    t = as_points(t, "target_world", 3, 1)
    if p.shape[-2] < 2:
        raise InputError(f"positions_world: a chain needs at least 2 joints, got shape {p.shape}")
    batch = batch_shape(("positions_world", p.shape[:-2]), ("target_world", t.shape[:-1]))
    m = p.shape[-2]
    pf = flat(p, (), (m, 3)) if p.ndim == 2 else flat(p, batch, (m, 3))
    return PositionsProblem(pf, flat(t, batch, (3,)), batch, result_dtype(p, t), p)


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
    rot = frozen(flat(prob.rot_w[..., :-1, :], prob.batch, (n, 4)))
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
        parent=frozen(flat(parent_rot, batch, (4,))),
        bone=flat(motion.positions_local[..., joints[1:], :], batch, (n, 3)),
        rot_local=flat(motion.rotations_local[..., joints[:-1], :], batch, (n, 4)),
        root=flat(pos_w[..., 0, :], batch, (3,)),
    )


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
    return frozen(
        np.ascontiguousarray(np.broadcast_to(parent[:, None, :], (parent.shape[0], n, 4)))
    )
