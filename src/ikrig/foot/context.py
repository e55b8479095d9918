"""The foot-placement job: what is known before any frame is solved, validated once.

Like an ozz-animation job, a :class:`FootContext` holds the inputs every step reads (the
character's legs and soles, the ground, the options) and the values derived from them once
(leg lengths, joint indices, the two-bone constants). Steps take it as their first argument
and never re-check it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .._jit.setup import njit, notify_compiling
from ..character.legs import Legs, pelvis_joint
from ..character.sole import FootSole
from ..errors import InputError
from ..ground.views import RaisedGround
from ..kernels.qmath import q_conj, q_from_array, q_rotate, v_cross, v_dot, v_get, v_norm, v_sub
from ..math.quat import quat_conj, quat_rotate
from ..pose import Motion
from ..signal.stats import medians
from ..skeleton import Skeleton
from .options import FootOptions

UP = np.array([0.0, 1.0, 0.0])
"""World up (+Y): the direction of every vertical offset."""

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class FootContext:
    """A character on a ground with its options.

    Attributes:
        skeleton: the character's skeleton (the poses placed must be of this rig).
        legs: the legs (step 1) and the leg length, the unit of every threshold.
        sole: sole points and planted heights, and the clip's floor (world Y).
        ground: the ground in the clip's world coordinates and units, after the datum:
            with ``options.datum == "clip"`` the given ground raised by the clip's floor
            (:class:`~ikrig.ground.views.RaisedGround`), so its ``y = 0`` meets that floor.
        options: :class:`~ikrig.foot.options.FootOptions`.
        leg_lengths: ``(feet,)`` thigh plus shin of each leg (rest offsets).
        pelvis: the pelvis joint (the hips' common ancestor, not necessarily joint 0): the
            body moves up and down by moving it.
        pelvis_parent: its parent (-1 when the pelvis is a root).
        leg_joints: ``(feet, 3)`` joint indices of hip, knee and ankle of every leg.
        hip_parents: ``(feet,)`` the parent joint of every hip (-1 for a hip that is a root).
        unit: the leg length: lengths in the options are in this unit.
        feet: the number of legs.
        datum: how far the given ground was raised (world Y): the clip's floor, or 0.
        bend_axes: ``(feet, 3)`` the way each knee usually bends, measured on the reference
            clip (:func:`usual_bend_axes`): a unit axis in its hip's frame, zero where the
            clip does not say (then each frame's own bend decides).
    """

    skeleton: Skeleton
    legs: Legs
    sole: FootSole
    ground: Any
    options: FootOptions
    leg_lengths: np.ndarray
    pelvis: int
    pelvis_parent: int
    leg_joints: np.ndarray
    hip_parents: np.ndarray
    unit: float
    feet: int
    datum: float
    bend_axes: np.ndarray
    _memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """``make()``, computed once per context under ``key``: the kernel records a step
        derives from the options (a live placer would otherwise rebuild them every frame)."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = make()
            return value

    @classmethod
    def create(
        cls,
        skeleton: Skeleton,
        legs: Legs,
        sole: FootSole,
        ground: Any,
        options: FootOptions,
        reference_fk: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> FootContext:
        """The job for ``skeleton``'s ``legs`` and ``sole`` on ``ground`` (the ground as
        given; the datum of ``options`` is applied here). ``reference_fk``: the world
        rotations ``(F, J, 4)`` and positions ``(F, J, 3)`` of a reference clip of the
        character (the clip placed, or a live placer's), where the way each knee usually
        bends is measured; None: not known (each frame's own bend decides)."""
        off = skeleton.offsets
        lengths = np.array(
            [np.linalg.norm(off[g.knee]) + np.linalg.norm(off[g.ankle]) for g in legs.legs]
        )
        joints = np.array([[g.hip, g.knee, g.ankle] for g in legs.legs], dtype=np.int64)
        pelvis = pelvis_joint(skeleton, legs)
        parents = np.asarray(skeleton.parents[joints[:, 0]], dtype=np.int64)
        unit, feet = float(legs.leg_length), len(legs.legs)
        datum = float(sole.floor) if options.datum == "clip" else 0.0
        if datum != 0.0:
            ground = RaisedGround(ground, datum)
        pelvis_parent = int(skeleton.parents[pelvis])
        axes = np.zeros((feet, 3))
        if reference_fk is not None:
            axes = usual_bend_axes(joints, *reference_fk)
        return cls(
            skeleton, legs, sole, ground, options, lengths, pelvis, pelvis_parent, joints,
            parents, unit, feet, datum, axes,
        )  # fmt: skip


CLEAR_BEND = np.radians(10.0)
"""A leg bent more than this (angle between thigh and shin) is clearly bent: the frames that
say which way its knee usually bends."""


def usual_bend_axes(
    leg_joints: np.ndarray, rotations_world: np.ndarray, positions_world: np.ndarray
) -> np.ndarray:
    """The way each knee usually bends over a clip: ``(feet, 3)`` unit axes, each in its
    hip's frame, zero for a leg the clip never clearly bends or bends either way as often.

    The axis is the bend normal ``thigh x shin`` (the knee lies on the side ``a x n`` of
    the hip-to-ankle axis ``a``) read in the hip's frame, where a hinge's axis stays put,
    over the frames bent more than :data:`CLEAR_BEND`: the normalised component-wise
    median, kept when most of those frames bend its way. One clip's worth of frames
    decides, not any single one, so a frame the recording bends a hair past straight (the
    Fox's right elbow, 2.4 deg backward at frame 16 of its walk) does not.

    Args:
        leg_joints: ``(feet, 3)`` joint indices of hip, knee and ankle.
        rotations_world, positions_world: ``(F, J, 4)`` and ``(F, J, 3)``, the clip's FK.
    """
    out = np.zeros((len(leg_joints), 3))
    joints = np.ascontiguousarray(leg_joints, dtype=np.int64)
    local = np.empty((len(positions_world), len(out), 3))
    clear = np.empty((len(positions_world), len(out)), dtype=np.bool_)
    notify_compiling()
    _bend_normals_kernel(positions_world, rotations_world, joints, CLEAR_BEND, local, clear)
    for k in range(len(out)):
        mine = local[clear[:, k], k]
        if not len(mine):
            continue
        axis = medians(mine)
        size = np.linalg.norm(axis)
        if size > 1e-9 and np.mean(mine @ axis > 0.0) > 0.5:
            out[k] = axis / size
    return out


@njit(cache=True)
def _bend_normals_kernel(pos_w, rot_w, joints, clear_bend, local, clear):
    """Per frame ``f`` and leg ``k``: ``clear[f, k]``, whether the leg is bent more than
    ``clear_bend`` (radians), and where it is, ``local[f, k]``, the unit bend normal ``thigh x
    shin`` in the hip's frame (:func:`usual_bend_axes`); ``0 < clear_bend < pi / 2``."""
    cos_bend, sin_bend = math.cos(clear_bend), math.sin(clear_bend)
    for f in range(pos_w.shape[0]):
        p = pos_w[f]
        for k in range(joints.shape[0]):
            hip, knee, ankle = joints[k, 0], joints[k, 1], joints[k, 2]
            thigh = v_sub(v_get(p, knee), v_get(p, hip))
            shin = v_sub(v_get(p, ankle), v_get(p, knee))
            n = v_cross(thigh, shin)
            size = v_norm(n)
            # the angle atan2(size, thigh . shin) past clear_bend, without the arctangent
            clear[f, k] = size * cos_bend > v_dot(thigh, shin) * sin_bend
            if clear[f, k]:
                unit = (n[0] / size, n[1] / size, n[2] / size)
                n = q_rotate(q_conj(q_from_array(rot_w[f, hip])), unit)
                local[f, k, 0], local[f, k, 1], local[f, k, 2] = n


def lift_pelvis(
    ctx: FootContext, rotations_world: np.ndarray, positions_local: np.ndarray, offset
) -> None:
    """Move the body up by ``offset (F,)`` (world Y) in place: the pelvis's local position
    in ``positions_local (F, J, 3)``, turned into its parent's frame (``rotations_world
    (F, J, 4)``, the clip's FK) when the pelvis is not a root."""
    p = ctx.pelvis_parent
    if p < 0:
        positions_local[:, ctx.pelvis, 1] += offset
        return
    up = np.zeros((len(positions_local), 3))
    up[:, 1] = offset
    positions_local[:, ctx.pelvis] += quat_rotate(quat_conj(rotations_world[:, p]), up)


def check_clip(clip: Motion) -> None:
    """Raise :class:`~ikrig.errors.InputError` unless ``clip`` is a clip (batch shape
    ``(frames,)``, at least one frame) with a frame time."""
    if clip.rotations_local.ndim != 3:
        raise InputError(
            f"clip: expected a clip with batch shape (frames,), got {clip.batch_shape}"
        )
    if clip.num_frames == 0:
        raise InputError("clip: has no frames; foot placement needs at least one")
    if clip.frame_time is None:
        raise InputError("clip: frame_time is needed for foot placement")
