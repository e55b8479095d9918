"""Look-at spread over a chain: a head and its ancestors share the turn toward a target.

The scheme of ozz-animation's look-at sample, batched over frames: the chain's joints are
solved one after the other with the aim job (:func:`ikrig.solvers.aim.aim`), from the head
(the nearest joint) to the farthest ancestor.

1. The head is aimed with its own ``forward_local``, ``up_local`` and ``offset_local`` (the
   eyes), weighted by its chain weight (0.5 by default): it takes part of the turn.
2. Each next joint up the chain carries the head's forward axis and offset point, turned by
   the corrections below it, into its own frame, and is aimed with them, weighted by its
   chain weight: it takes part of what is left.
3. The farthest joint has weight 1 by default, so the eye ray ends on the target.

World transforms of the input pose serve every step: a correction turns a joint's
descendants only, and the chain is solved child to parent. ``weight`` (a scalar or one per
frame) scales every joint's weight, blending the look in and out (ozz's chain weight).

The up axis: with ``up_local`` given, the head's is carried up the chain as the forward
axis is; by default each joint's up is the world up (+Y) seen from that joint in that
frame, turned toward the world up: the turn adds no roll about the look direction, so the
head keeps the tilt it has in the clip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._checks import as_points, batch_shape, check_finite, check_real
from ..errors import HierarchyError, InputError
from ..math.quat import quat_conj, quat_mul, quat_rotate
from ..pose import Motion, fk
from .aim import AimAxes, aim

__all__ = [
    "DEFAULT_CHAIN_LENGTH",
    "DEFAULT_FORWARD_LOCAL",
    "DEFAULT_JOINT_WEIGHT",
    "LOOK_TOLERANCE",
    "LookResult",
    "look_at",
    "look_chain",
]

DEFAULT_CHAIN_LENGTH = 4
"""Joints in a default chain: the head and up to three ancestors (ozz's sample: head and
three spine joints)."""
DEFAULT_JOINT_WEIGHT = 0.5
"""Default chain weight of every joint but the farthest (which takes 1), as ozz's sample."""
DEFAULT_FORWARD_LOCAL = (0.0, 0.0, 1.0)
"""The default forward axis of the head: +Z, where a BVH or glTF character faces at rest.
Rigs whose joint frames differ need theirs (``ikrig look`` finds it from the clip: see
:func:`ikrig.character.head.axis_local`)."""
LOOK_TOLERANCE = 1e-4
"""Radians: a frame's look is ``reached`` when the eye ray misses the target by no more."""
_UP = np.array([0.0, 1.0, 0.0])


class LookResult(NamedTuple):
    """What :func:`look_at` returns.

    Attributes:
        motion: the new :class:`~ikrig.pose.Motion` (batch shape: the motion's broadcast
            with the target's and the weight's; the input's dtype); only the chain's local
            rotations changed, and only on frames with a target and a weight above 0 (the
            others are the input's, bit for bit).
        reached: ``(...)`` bool: the eye ray (the head's forward axis from its offset point)
            is within :data:`LOOK_TOLERANCE` of the target; False where a weight below 1
            leaves the head short of it; True on frames without a target (nothing to
            reach), as :class:`~ikrig.solvers.body.BodyResult` says of absent goals.
        error_angle: ``(...)`` float64 radians in ``[0, pi]``: the angle between the eye ray
            and the way from the eyes to the target, after the solve; 0 on frames without a
            target (NaN target rows), where there is nothing to measure.
        chain: the joint indices that shared the turn, the head first.
    """

    motion: Motion
    reached: np.ndarray
    error_angle: np.ndarray
    chain: tuple[int, ...]


def look_chain(
    motion: Motion, joint: str | int, length: int = DEFAULT_CHAIN_LENGTH
) -> tuple[int, ...]:
    """The default look-at chain: ``joint`` and its ancestors, nearest first, at most
    ``length`` joints, none of them a root joint or the pelvis.

    The pelvis is where the head's branch meets the branch of the lowest joint (a foot) in
    the motion's first pose (the rest pose for a motion without frames): that joint and
    those above it carry the legs, so they never turn to look.

    Raises:
        InputError: an unknown joint, or ``length`` not an integer >= 1.

    Example:
        >>> from ikrig.skeleton import Skeleton
        >>> names = ("hips", "foot", "spine", "chest", "neck", "head")
        >>> offsets = [[0, 1, 0], [0, -1, 0], [0, .2, 0], [0, .2, 0], [0, .2, 0], [0, .1, 0]]
        >>> sk = Skeleton(names, [-1, 0, 0, 2, 3, 4], offsets)
        >>> [sk.names[j] for j in look_chain(Motion.rest(sk), "head")]
        ['head', 'neck', 'chest', 'spine']
    """
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected a Motion, got {type(motion).__name__}")
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise InputError(f"length: must be an integer >= 1, got {length!r}")
    sk = motion.skeleton
    head = sk.index(joint)
    first = motion.rotations_local.reshape(-1, sk.num_joints, 4)
    pose = motion if not motion.batch_shape else None
    if pose is None:
        pose = Motion.rest(sk) if len(first) == 0 else _first(motion)
    lowest = int(np.argmin(pose.positions_world()[:, 1]))
    legs = {lowest, *sk.ancestors(lowest)}
    out = [head]
    for a in sk.ancestors(head):
        if len(out) >= length or a in legs or sk.parents[a] < 0:
            break
        out.append(a)
    return tuple(out) if head not in legs or len(out) == 1 else (head,)


def _first(motion: Motion) -> Motion:
    """The motion's first pose (index 0 on every batch axis)."""
    return motion[(0,) * len(motion.batch_shape)]


def look_at(
    motion: Motion,
    joint: str | int,
    target_world: ArrayLike,
    weight: ArrayLike = 1.0,
    *,
    chain: Sequence[str | int] | None = None,
    chain_weights: ArrayLike | None = None,
    axes: AimAxes | None = None,
) -> LookResult:
    """Turn a head (``joint``) and its ancestors so that the head looks at a target.

    Args:
        motion: the pose, clip or crowd (batch shape ``B``).
        joint: the head joint, by name or index.
        target_world: ``(..., 3)`` world point to look at, broadcast with ``B``; a row of
            NaN means no target that frame (the frame is left as it is).
        weight: scalar or ``(...)`` per frame, broadcast with ``B``, clipped to ``[0, 1]``;
            it scales every chain weight (0 leaves the frame as it is, bit for bit).
        chain: the head's ancestors that share the turn (names or indices, any order; the
            head may be listed too, it always takes part); default :func:`look_chain`.
        chain_weights: one weight in ``[0, 1]`` per joint of the chain, head first (the
            order of :attr:`LookResult.chain`); default 0.5 for every joint but the
            farthest, which takes 1 so that the head ends on the target.
        axes: the head's :class:`~ikrig.solvers.aim.AimAxes`, in its local frame, each
            ``(3,)`` or broadcast with ``B``: ``forward_local`` (default
            :data:`DEFAULT_FORWARD_LOCAL`), ``up_local`` (default: the world up as each
            joint sees it, module docstring), ``offset_local`` (the eyes; default the
            joint's origin).

    Returns:
        :class:`LookResult` ``(motion, reached, error_angle, chain)``.

    Per-frame trouble never raises and never gives NaN in the motion: a target the aim job
    cannot reach at some joint (inside the eyes' offset, at the joint) leaves that joint as
    it is, and ``reached`` says whether the eyes end on the target.

    Raises:
        InputError: not a Motion, an unknown joint, a chain joint that is no ancestor of
            the head (``HierarchyError``), weights out of range or of the wrong count, a
            target row with some but not all values NaN, infinite values, shapes that do
            not broadcast.

    Example:
        >>> import numpy as np
        >>> from ikrig.skeleton import Skeleton
        >>> names = ("hips", "foot", "spine", "chest", "neck", "head")
        >>> offsets = [[0, 1, 0], [0, -1, 0], [0, .2, 0], [0, .2, 0], [0, .2, 0], [0, .1, 0]]
        >>> rest = Motion.rest(Skeleton(names, [-1, 0, 0, 2, 3, 4], offsets))
        >>> r = look_at(rest, "head", [1.0, 2.0, 1.0])  # to the front left, a little up
        >>> bool(r.reached), r.chain, round(float(r.error_angle), 6)
        (True, (5, 4, 3, 2), 0.0)
    """
    job = _setup(motion, joint, target_world, weight, chain, chain_weights, axes)
    return _solve(job)


class _Job(NamedTuple):
    """A checked look-at: the motion, the chain and its weights, and per-frame arrays
    flattened to ``N`` rows of the batch shape."""

    motion: Motion
    chain: tuple[int, ...]
    weights: np.ndarray
    target: np.ndarray
    weight: np.ndarray
    axes: tuple[np.ndarray, np.ndarray | None, np.ndarray]
    batch: tuple[int, ...]


def _chain(motion: Motion, head: int, chain, weights) -> tuple[tuple[int, ...], np.ndarray]:
    sk = motion.skeleton
    if chain is None:
        joints = look_chain(motion, head)
    else:
        if isinstance(chain, (str, Mapping)) or not isinstance(chain, Sequence):
            raise InputError(f"chain: expected a sequence of joint names or indices, got {chain!r}")
        above = sk.ancestors(head)
        picked = {sk.index(j) for j in chain} - {head}
        for j in sorted(picked):
            if j not in above:
                raise HierarchyError(
                    f"chain: {sk.names[j]!r} is not an ancestor of {sk.names[head]!r}"
                )
        joints = (head,) + tuple(a for a in above if a in picked)
    if weights is None:
        w = np.full(len(joints), DEFAULT_JOINT_WEIGHT)
        w[-1] = 1.0
        return joints, w
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"chain_weights: expected numbers, got {weights!r}") from None
    if w.shape != (len(joints),):
        raise InputError(
            f"chain_weights: expected {len(joints)} weights (one per chain joint, head"
            f" first), got shape {w.shape}"
        )
    for i, v in enumerate(w):
        check_real(float(v), f"chain_weights[{i}]", 0.0, 1.0)
    return joints, w


def _setup(motion, joint, target_world, weight, chain, chain_weights, axes) -> _Job:
    """The validation step: everything named, shapes broadcast, NaN rows allowed only whole."""
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected a Motion, got {type(motion).__name__}")
    if axes is None:
        axes = AimAxes()
    elif not isinstance(axes, AimAxes):
        raise InputError(f"axes: expected AimAxes, got {type(axes).__name__}")
    head = motion.skeleton.index(joint)
    joints, weights = _chain(motion, head, chain, chain_weights)
    target = as_points(target_world, "target_world")
    nan = np.isnan(target)
    bad = np.isinf(target).any(axis=-1) | (nan.any(axis=-1) & ~nan.all(axis=-1))
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
        raise InputError(
            "target_world: each row must be three finite numbers or all NaN (no target);"
            f" first bad row at index {where}"
        )
    w = np.asarray(weight, dtype=np.float64) if not isinstance(weight, bool) else None
    if w is None or w.dtype.kind != "f":
        raise InputError(f"weight: expected a number or an array of numbers, got {weight!r}")
    check_finite(w, "weight")
    named = {"forward_local": axes.forward_local, "up_local": axes.up_local,
             "offset_local": axes.offset_local}  # fmt: skip
    vectors = {k: None if v is None else as_points(v, k) for k, v in named.items()}
    for k, v in vectors.items():
        if v is not None:
            check_finite(v, k)
    shapes = [("motion", motion.batch_shape), ("target_world", target.shape[:-1])]
    shapes.append(("weight", w.shape))
    shapes += [(k, v.shape[:-1]) for k, v in vectors.items() if v is not None]
    batch = batch_shape(*shapes)
    n = int(np.prod(batch, dtype=np.int64))

    def rows(a: np.ndarray | None, default) -> np.ndarray:
        """``a`` (or ``default``) as float64 ``(n, 3)`` rows of ``batch``."""
        a = np.asarray(default if a is None else a, dtype=np.float64)
        return np.broadcast_to(a, batch + (3,)).reshape(n, 3)

    fwd = rows(vectors["forward_local"], DEFAULT_FORWARD_LOCAL)
    up = None if vectors["up_local"] is None else rows(vectors["up_local"], None)
    off = rows(vectors["offset_local"], (0.0, 0.0, 0.0))
    return _Job(
        motion, joints, weights, rows(target, None), np.broadcast_to(w, batch).reshape(n),
        (fwd, up, off), batch,
    )  # fmt: skip


def _solve(job: _Job) -> LookResult:
    """The run step: the chain's aim jobs, head first, on the frames with a look."""
    m, batch, joints = job.motion, job.batch, job.chain
    sk = m.skeleton
    J = sk.num_joints
    n = job.target.shape[0]
    rot_w, pos_w = m.fk()
    rot_w = np.broadcast_to(rot_w, batch + (J, 4)).reshape(n, J, 4)
    pos_w = np.broadcast_to(pos_w, batch + (J, 3)).reshape(n, J, 3)
    rl = np.array(np.broadcast_to(m.rotations_local, batch + (J, 4))).reshape(n, J, 4)
    pl = np.broadcast_to(m.positions_local, batch + (J, 3))

    has_target = ~np.isnan(job.target[:, 0])
    rows = np.flatnonzero(has_target & (job.weight > 0.0))
    fwd0, up0, off0 = job.axes
    if len(rows):
        R = rot_w[rows][:, joints].astype(np.float64)
        P = pos_w[rows][:, joints].astype(np.float64)
        target, w = job.target[rows], np.clip(job.weight[rows], 0.0, 1.0)
        fwd, off = fwd0[rows], off0[rows]
        up = None if up0 is None else up0[rows]
        corr = None
        for k, j in enumerate(joints):
            if k:  # carry the forward axis, the offset point (and up) into this joint
                fwd, off, up = _carried(R[:, k - 1], P[:, k - 1], R[:, k], P[:, k], corr,
                                        (fwd, off, up))  # fmt: skip
            up_k = quat_rotate(quat_conj(R[:, k]), _UP) if up is None else up
            res = aim(R[:, k], P[:, k], target, AimAxes(fwd, up_k, off),
                      weight=w * job.weights[k])  # fmt: skip
            corr = res.correction_local
            rl[rows, j] = quat_mul(rl[rows, j], corr).astype(rl.dtype)
    shape = batch + (J,)
    out = Motion(sk, rl.reshape(shape + (4,)), np.array(pl), m.frame_time if batch else None)
    error = _eye_error(out, joints[0], job, has_target)
    reached = ~has_target | (error <= LOOK_TOLERANCE)
    return LookResult(out, reached.reshape(batch), error.reshape(batch), joints)


def _carried(R_prev, P_prev, R, P, corr, vectors):
    """``(forward, offset, up)`` of the joint below (frame ``R_prev``, ``P_prev``, turned by
    its correction ``corr``) in the frame ``R``, ``P`` of the joint above; ``up`` None stays
    None."""
    fwd, off, up = vectors
    inv = quat_conj(R)

    def axis(v):
        return quat_rotate(inv, quat_rotate(R_prev, quat_rotate(corr, v)))

    point = P_prev + quat_rotate(R_prev, quat_rotate(corr, off))
    return axis(fwd), quat_rotate(inv, point - P), None if up is None else axis(up)


def _eye_error(out: Motion, head: int, job: _Job, has_target: np.ndarray) -> np.ndarray:
    """``(N,)`` float64: the angle between the head's eye ray in ``out`` and the way from the
    eyes to the target; 0 without a target."""
    n = len(has_target)
    error = np.zeros(n)
    rows = np.flatnonzero(has_target)
    if not len(rows):
        return error
    path = list(reversed(out.skeleton.ancestors(head))) + [head]
    rl = out.rotations_local.reshape(n, -1, 4)[rows][:, path].astype(np.float64)
    pl = out.positions_local.reshape(n, -1, 3)
    pl = np.broadcast_to(pl, (n,) + pl.shape[1:])[rows][:, path].astype(np.float64)
    rw, pw = fk(np.arange(-1, len(path) - 1), rl, pl)
    fwd, _, off = job.axes
    eyes = pw[:, -1] + quat_rotate(rw[:, -1], off[rows])
    ray = quat_rotate(rw[:, -1], fwd[rows])
    way = job.target[rows] - eyes
    c = np.cross(ray, way)
    angle = np.arctan2(np.linalg.norm(c, axis=-1), np.sum(ray * way, axis=-1))
    near = np.linalg.norm(way, axis=-1) <= 1e-9 * (1.0 + np.linalg.norm(job.target[rows], axis=-1))
    error[rows] = np.where(near, 0.0, angle)
    return error
