"""Analytic two-bone IK (thigh-knee-ankle, upper arm-elbow-wrist).

Four entry points, one algorithm (:mod:`ikrig.kernels.two_bone`):

* :func:`two_bone_positions` works on world positions over any batch shape and returns the
  new mid and end positions plus the world-space rotation deltas of the root and mid joints;
* :func:`two_bone_positions_only` is the same solve at weight 1 returning the positions
  only, over any batch shape (``(N, 3)`` rows included): use it when only the points are
  needed; on big batches it is about as fast as the component-first path below;
* :func:`two_bone_positions_soa` is the same solve for big batches stored component-first,
  ``(3, N)``, positions only (about 2x faster per element than the general path, which
  also computes the rotation deltas);
* :func:`solve_two_bone` solves three joints of a :class:`~ikrig.pose.Motion` and returns a
  new Motion with the root and mid (and, by default, end) local rotations changed.

Like ozz-animation's ``IKTwoBoneJob``: a small unit with documented inputs, a validation
step, and a run step that returns corrections plus ``reached``.

The solve, per problem (all positions in world space):

1. Bone lengths ``l1 = |mid - root|``, ``l2 = |end - mid|`` are measured from the input
   and kept (unless stretching is enabled).
2. Soft IK (``TwoBoneOptions.soften < 1``, the ozz rule): a target farther than
   ``da = soften * L`` (``L = l1 + l2``) is placed at ``da + ds (1 - 3^4 / (alpha + 3)^4)``,
   ``ds = L - da``, ``alpha = (d - da) / ds``, so the knee never snaps straight.
3. Stretch (``max_stretch > 1``): both bones lengthen by up to that factor so that the end
   reaches a target beyond the (softened) reach.
4. The end goes onto the root->target line at the reach distance, clamped to
   ``[|l1 - l2|, l1 + l2]``: an unreachable target gives the chain straightened toward it.
5. The mid joint goes into the plane of root, target and pole, on the pole's side
   (law of cosines); ``twist_angle`` then turns the chain about the root->target axis.
6. Rotations: the root delta maps the old thigh direction *and bend plane* onto the new
   ones, so it is not the shortest arc between the old and new thigh directions (it may
   add a twist about the thigh); the mid delta adds a hinge about the bend normal.
   ``TwoBoneOptions.root_rotation="shortest_arc"`` gives minimal rotations instead.
7. ``weight`` blends each rotation delta from the identity (normalised lerp after forcing
   ``w >= 0``, as ozz does) and the stretch from 1 (``1 + weight (s - 1)``); the positions
   follow: the old bones, scaled by the blended stretch, turned by the blended rotations.

float32 data are solved in float32 where that is safe (bone lengths within about 1e-6 to
1e6, targets and poles within 1e6 of the root) and in float64 otherwise, so every finite
input gives finite outputs.

Degenerate inputs never raise and never give NaN (see :func:`two_bone_positions`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..._checks import as_points
from ...errors import HierarchyError, InputError
from ...math.quat import quat_conj, quat_mul
from ...pose import Motion, fk
from ._positions import (
    _DEFAULT_OPTIONS,
    PARALLEL_MIN,
    two_bone_positions,
    two_bone_positions_only,
    two_bone_positions_soa,
)
from ._types import (
    TwoBoneOptions,
    TwoBonePositions,
    TwoBonePositionsOnly,
    TwoBoneResult,
    TwoBoneSoA,
)

__all__ = [
    "PARALLEL_MIN",
    "TwoBoneOptions",
    "TwoBonePositions",
    "TwoBonePositionsOnly",
    "TwoBoneResult",
    "TwoBoneSoA",
    "solve_two_bone",
    "two_bone_positions",
    "two_bone_positions_only",
    "two_bone_positions_soa",
]


def solve_two_bone(
    motion: Motion,
    joints: Sequence[str | int],
    target_world: ArrayLike,
    pole_world: ArrayLike | None = None,
    weight: ArrayLike = 1.0,
    twist_angle: ArrayLike = 0.0,
    options: TwoBoneOptions | None = None,
) -> TwoBoneResult:
    """Solve two-bone IK on three joints of a :class:`~ikrig.pose.Motion`.

    Args:
        motion: the pose, clip or crowd (batch shape ``B``).
        joints: ``(root, mid, end)`` joint names or indices; ``mid`` must be a child of
            ``root`` and ``end`` a child of ``mid``.
        target_world: ``(..., 3)`` where the end joint should go, world space; broadcast
            with ``B``.
        pole_world: ``(..., 3)`` world-space point the mid joint should point toward;
            default ``None``: the current mid position (the knee keeps its plane).
        weight: scalar or array broadcast to the batch, clamped to ``[0, 1]``; default 1.
        twist_angle: scalar or array, radians, about the root->target axis; default 0.
        options: :class:`TwoBoneOptions` (``keep_end_rotation`` applies here;
            ``root_rotation="shortest_arc"`` turns the root and mid joints by their
            shortest arcs instead of carrying the bend plane).

    Forward kinematics gives the three joints' world frames; :func:`two_bone_positions`
    gives the world deltas, which become local rotations:
    ``root_local' = parent_world^-1 * root_delta * root_world``,
    ``mid_local' = root_world'^-1 * mid_delta * mid_world`` and, with
    ``keep_end_rotation``, ``end_local' = mid_world'^-1 * end_world``. When a bone
    stretched, the mid and end local translations are scaled (by the stretch blended with
    ``weight``, as the positions).

    Returns:
        :class:`TwoBoneResult` ``(motion, reached, mid_world, end_world)``.

    Raises:
        InputError: unknown joints, wrong shapes, NaN/inf inputs.
        HierarchyError: ``mid`` is not a child of ``root`` or ``end`` not a child of ``mid``.

    Example:
        >>> import numpy as np
        >>> from ikrig.skeleton import Skeleton
        >>> sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1],
        ...               [[0, 1, 0], [0, -0.5, 0.05], [0, -0.5, -0.05]])
        >>> res = solve_two_bone(Motion.rest(sk), ("hip", "knee", "ankle"), [0.2, 0.3, 0.3])
        >>> bool(res.reached), np.round(res.motion.positions_world()[2], 5).tolist()
        (True, [0.2, 0.3, 0.3])
    """
    if options is None:
        options = _DEFAULT_OPTIONS
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected a Motion, got {type(motion).__name__}")
    sk = motion.skeleton
    try:
        names = tuple(joints)
    except TypeError:
        names = ()
    if len(names) != 3 or isinstance(joints, str):
        raise InputError(f"joints: expected (root, mid, end), got {joints!r}")
    ir, im, ie = (sk.index(j) for j in names)
    parents = sk.parents
    if parents[im] != ir:
        raise HierarchyError(f"joints: {sk.names[im]!r} is not a child of {sk.names[ir]!r}")
    if parents[ie] != im:
        raise HierarchyError(f"joints: {sk.names[ie]!r} is not a child of {sk.names[im]!r}")

    dt = motion.dtype
    rot_w, pos_w = _chain_world(motion, ir, im, ie)  # (..., 4, 4) and (..., 4, 3)
    target = as_points(target_world, "target_world")
    r = two_bone_positions(
        pos_w[..., 1, :], pos_w[..., 2, :], pos_w[..., 3, :], target.astype(dt, copy=False),
        None if pole_world is None else as_points(pole_world, "pole_world").astype(dt),
        weight, twist_angle, options,
    )  # fmt: skip
    batch = r.reached.shape
    parent_w = np.broadcast_to(rot_w[..., 0, :], batch + (4,))
    root_w = quat_mul(r.root_rotation_world, rot_w[..., 1, :])
    mid_w = quat_mul(r.mid_rotation_world, rot_w[..., 2, :])
    rl = np.array(
        np.broadcast_to(motion.rotations_local, batch + motion.rotations_local.shape[-2:])
    )
    rl[..., ir, :] = quat_mul(quat_conj(parent_w), root_w)
    rl[..., im, :] = quat_mul(quat_conj(root_w), mid_w)
    if options.keep_end_rotation:
        rl[..., ie, :] = quat_mul(quat_conj(mid_w), rot_w[..., 3, :])
    pl = motion.positions_local
    if pl.shape[:-2] != batch:
        pl = np.broadcast_to(pl, batch + pl.shape[-2:])
    if options.max_stretch > 1.0 and bool((r.stretch != 1).any()):
        pl = np.array(pl)
        s = r.stretch[..., None]
        pl[..., im, :] *= s
        pl[..., ie, :] *= s
    elif not pl.flags.writeable:
        pl = np.array(pl)
    new = Motion(sk, rl.astype(dt, copy=False), pl.astype(dt, copy=False), motion.frame_time)
    return TwoBoneResult(new, r.reached, r.mid_world, r.end_world)


def _chain_world(motion: Motion, ir: int, im: int, ie: int):
    """World rotations and positions of root's parent, root, mid and end: ``(..., 4, 4/3)``.

    Forward kinematics (:func:`ikrig.pose.fk`) along the root's ancestors and the three
    joints only, not the whole skeleton. The parent slot holds the identity and the origin
    for a root joint.
    """
    sk = motion.skeleton
    path = list(reversed(sk.ancestors(ir))) + [ir, im, ie]
    chain_parents = np.arange(-1, len(path) - 1)
    rot_w, pos_w = fk(
        chain_parents, motion.rotations_local[..., path, :], motion.positions_local[..., path, :]
    )
    k = len(path) - 3  # index of the root in the path
    if k == 0:
        parent_rot = np.zeros(rot_w.shape[:-2] + (1, 4), dtype=rot_w.dtype)
        parent_rot[..., 3] = 1
        parent_pos = np.zeros(pos_w.shape[:-2] + (1, 3), dtype=pos_w.dtype)
    else:
        parent_rot, parent_pos = rot_w[..., k - 1 : k, :], pos_w[..., k - 1 : k, :]
    rots = np.concatenate([parent_rot, rot_w[..., k:, :]], axis=-2)
    poss = np.concatenate([parent_pos, pos_w[..., k:, :]], axis=-2)
    return rots, poss
