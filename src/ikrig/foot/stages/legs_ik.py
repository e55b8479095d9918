"""Steps 6 and 7b: two-bone leg IK toward the ankle targets, with the pole from the animated
knee and ``ik.soften``, blended out where there is no ground, and the ankle turned to the
ground (the turn of step 7a)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..._numba import njit
from ...kernels.two_bone import (
    TwoBoneConstants,
    TwoBonePoints,
    TwoBoneWeights,
    make_constants,
    solve_two_bone_serial,
    unpack_constants,
)
from ...math._qmath import q_conj, q_get, q_mul
from ...signal.springs import spring_advance, spring_rate
from ...solvers.two_bone import TwoBoneOptions
from ..context import FootContext
from .align import q_toward
from .goals import FootGoals

if TYPE_CHECKING:
    from ..state import FootState


class LegPlan(NamedTuple):
    """What the legs of ``F`` frames are solved toward (steps 3-6a).

    Attributes:
        root_offset: ``(F,)`` the root's vertical offset, pelvis drop not yet subtracted.
        pelvis_drop: ``(F,)`` the pelvis drop.
        targets_world: ``(F, feet, 3)`` ankle targets.
        ground_found: ``(F, feet)`` bool, the ground was found (the IK weight's goal).
    """

    root_offset: np.ndarray
    pelvis_drop: np.ndarray
    targets_world: np.ndarray
    ground_found: np.ndarray


@dataclass(frozen=True, eq=False)
class FrameInfo:
    """Per-frame by-products of a solve: ``root_offset (F,)`` (the net vertical move of the
    root, pelvis drop included), ``pelvis_drop (F,)``, ``targets_world (F, feet, 3)``,
    ``reached (F, feet)``, ``ground_found (F, feet)``."""

    root_offset: np.ndarray
    pelvis_drop: np.ndarray
    targets_world: np.ndarray
    reached: np.ndarray
    ground_found: np.ndarray


@njit(cache=True)
def legs_run(joints_p, joints_r, parent_r, plan, consts, weight, out_r, reached):
    """Steps 6 and 7b, per frame.

    Args:
        joints_p, joints_r: ``(F, K, 3, 3)`` and ``(F, K, 3, 4)`` world positions and
            rotations of hip, knee and ankle (source); parent_r: ``(F, K, 4)`` world rotation
            of each hip's parent.
        plan: ``(targets (F, K, 3) world, root (F,) vertical offset with the pelvis drop,
            found (F, K) bool, align (F, K, 4) world ankle turns of step 7a)``.
        consts: two-bone constants (:func:`~ikrig.kernels.two_bone.make_constants`).
        weight: ``(rate (1,) RATE, spring bank (K,))`` of the IK weight, whose goal is
            ``found``.
        out_r: ``(F, K, 3, 4)`` out: new local rotations of hip, knee and ankle.
        reached: ``(F, K)`` out.
    """
    targets, root, found, align = plan
    rate, bank = weight[0][0], weight[1]
    tb = TwoBoneConstants(*unpack_constants(consts))
    for f in range(targets.shape[0]):
        up = root[f]
        for k in range(targets.shape[1]):
            # 6. leg IK on the shifted pose, weighted out where no ground was found
            w = spring_advance(bank, k, 1.0 if found[f, k] else 0.0, rate)
            w = min(max(w, 0.0), 1.0)
            p = joints_p[f, k]
            knee = (p[1, 0], p[1, 1] + up, p[1, 2])  # also the pole: the knee keeps its plane
            sol = solve_two_bone_serial(
                TwoBonePoints(
                    (p[0, 0], p[0, 1] + up, p[0, 2]), knee, (p[2, 0], p[2, 1] + up, p[2, 2]),
                    (targets[f, k, 0], targets[f, k, 1], targets[f, k, 2]), knee,
                ),
                TwoBoneWeights(w, tb.one, tb.zero),
                tb,
            )  # fmt: skip
            reached[f, k] = sol.reached != 0
            # 7b. new rotations: hip and knee from the IK, the ankle turned to the ground
            hip_w = q_mul(sol.root_delta, q_get(joints_r[f, k], 0))
            knee_w = q_mul(sol.mid_delta, q_get(joints_r[f, k], 1))
            ankle_w = q_mul(q_toward(q_get(align[f], k), w), q_get(joints_r[f, k], 2))
            locals_ = (
                q_mul(q_conj(q_get(parent_r[f], k)), hip_w),
                q_mul(q_conj(hip_w), knee_w),
                q_mul(q_conj(knee_w), ankle_w),
            )
            for j in range(3):
                for c in range(4):
                    out_r[f, k, j, c] = locals_[j][c]


@functools.lru_cache(maxsize=8)
def _two_bone_consts(soften: float) -> np.ndarray:
    o = TwoBoneOptions(soften=soften)
    return make_constants(np.float64, o.soften, o.max_stretch, o.tolerance)


def _parent_rotations(rot_w: np.ndarray, ctx: FootContext) -> np.ndarray:
    """World rotations ``(F, feet, 4)`` of the hips' parents (identity for a root hip)."""
    parents = ctx.hip_parents
    index, root_hips = ctx.memo("hip parents", lambda: (np.maximum(parents, 0), parents < 0))
    out = rot_w[:, index]
    if root_hips.any():
        out[:, root_hips] = [0.0, 0.0, 0.0, 1.0]
    return out


def solve_legs(
    ctx: FootContext, goals: FootGoals, plan: LegPlan, state: FootState
) -> tuple[np.ndarray, FrameInfo]:
    """Steps 6 and 7b on ``F`` frames: two-bone leg IK toward ``plan.targets_world`` on the
    pose moved up by ``root_offset - pelvis_drop``, blended out where the ground was not
    found, and the ankle turned to the ground (``goals.align``). The IK weight's spring is
    ``state.weight``.

    Returns:
        ``(rotations_local (F, feet, 3, 4), info)``: the new local rotations of each leg's
        hip, knee and ankle, and the :class:`FrameInfo`.
    """
    rot_w = goals.rotations_world
    targets = plan.targets_world
    F, K = targets.shape[:2]
    root = np.ascontiguousarray(plan.root_offset - plan.pelvis_drop, dtype=np.float64)
    found = np.ascontiguousarray(plan.ground_found, dtype=np.bool_)
    new_r = np.empty((F, K, 3, 4))
    reached = np.empty((F, K), dtype=np.bool_)
    legs_run(
        goals.positions_world[:, ctx.leg_joints],
        rot_w[:, ctx.leg_joints],
        _parent_rotations(rot_w, ctx),
        (targets, root, found, goals.align),
        _two_bone_consts(ctx.options.ik.soften),
        (spring_rate(ctx.options.ik.weight_halflife, goals.frame_time), state.weight),
        new_r,
        reached,
    )
    return new_r, FrameInfo(root, plan.pelvis_drop, targets, reached, found)
