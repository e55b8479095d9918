"""What foot placement changed in the animation (issue 34): the measures an animator reads
first, before any foot measure, measured on the result against its source alone (no ground,
no pipeline model). Lengths are in **% of the leg length**; extensions are plain ratios.

``pelvis_change_mean``, ``pelvis_change_p95``
    The pelvis's (:func:`~ikrig.character.legs.pelvis_joint`) height in the result less its
    height in the source, per frame: its signed mean (negative: the character crouches), and
    the 95th percentile of its size. On flat ground at the clip's floor both should be ~0;
    on uneven ground they include what the ground asks for (a step up lifts the body).

``joint_disp_p95``, ``joint_disp_worst``, ``joint_disp_worst_joint``, ``joint_disp_p95_all``
    The world distance of every joint and end site from its place in the source, per frame,
    except a leg below its hip (knee, ankle, toes, their end sites) while that leg stands
    (:func:`legs_down`): from :data:`STANCE_MARGIN` before to as long after any point of its
    foot (the ankle, the toe, an end site below the ankle) is within the contact height of
    its own floor in the source (:data:`~ikrig.metrics.joints.CONTACT_HEIGHT` over the 5th
    percentile of its height, however fast it moves), where planting a sliding foot moves it
    on purpose (skate says how well). Given: the 95th
    percentile over all those samples pooled; the largest of the per-joint 95th
    percentiles, and that joint's name (end sites are named ``"<parent> end"``); and the
    95th percentile over every joint, end site and frame, stance legs included.

``upper_body_change``
    The largest change, over frames and joints, of any joint outside the legs (below the
    pelvis, not below a hip) in the pelvis's frame: ``R_pelvis^-1 (p_joint - p_pelvis)`` of
    the result against the source's. Foot placement moves the body, never its pose, so this
    is ~0 (float rounding).

``leg_extension_max``, ``leg_extension_max_source``
    The largest hip-to-ankle distance over the thigh plus the shin (a straight leg is 1.0),
    over frames and legs, in the result and in the source.

``leg_fold``, ``leg_fold_leg``
    How much more a leg is bent than recorded, on average: per leg, the mean over frames of
    the source's hip-to-ankle distance less the result's, in % of that leg's thigh plus
    shin; the largest over the legs (negative: every leg straighter than recorded), and
    that leg's side. On flat ground at the floor ~0 (a foot lifted out of a recorded sink
    bends its leg a little); the shared clips walking up the built-in stairs bend a leg
    2-13 % more; a crouch shows here before it shows anywhere else.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..character.legs import Legs, pelvis_joint
from ..math.quat import quat_conj, quat_rotate
from ..pose import end_site_positions
from ..signal.stats import nan_percentiles, percentile
from ..skeleton import Skeleton
from .joints import CONTACT_HEIGHT, FLOOR_PERCENTILE

__all__ = [
    "FIDELITY_KEYS", "STANCE_MARGIN", "fidelity_values", "leg_extensions", "legs_down",
    "upper_body_joints",
]  # fmt: skip

STANCE_MARGIN = 0.25
"""Seconds: a stance, for the joint displacement, starts this long before the source's
contact and ends this long after it (a planted foot is placed, and let go, smoothly)."""

FIDELITY_KEYS = (
    "pelvis_change_mean",
    "pelvis_change_p95",
    "joint_disp_p95",
    "joint_disp_worst",
    "joint_disp_worst_joint",
    "joint_disp_p95_all",
    "upper_body_change",
    "leg_extension_max",
    "leg_extension_max_source",
    "leg_fold",
    "leg_fold_leg",
)
"""The keys :func:`fidelity_values` gives (module docstring)."""


def leg_extensions(positions_world: np.ndarray, legs: Legs) -> np.ndarray:
    """``(F, legs)`` each leg's hip-to-ankle distance over its thigh plus shin, per frame,
    from ``positions_world (F, J, 3)``: 1.0 is a straight leg."""
    out = np.empty((positions_world.shape[0], len(legs.legs)))
    for k, leg in enumerate(legs.legs):
        hip, knee, ankle = (positions_world[:, j] for j in leg.joints)
        bones = np.linalg.norm(knee - hip, axis=-1) + np.linalg.norm(ankle - knee, axis=-1)
        reach = np.linalg.norm(ankle - hip, axis=-1)
        out[:, k] = reach / np.maximum(bones, 1e-12)
    return out


def upper_body_joints(skeleton: Skeleton, legs: Legs) -> np.ndarray:
    """The joints outside the legs: below the pelvis and below no hip (``(n,)`` int)."""
    pelvis = pelvis_joint(skeleton, legs)
    hips = {leg.hip for leg in legs.legs}
    out = []
    for j in range(skeleton.num_joints):
        up = skeleton.ancestors(j)
        if pelvis in up and not hips.intersection(up) and j not in hips:
            out.append(j)
    return np.asarray(out, dtype=np.int64)


def _all_points(skeleton: Skeleton, rot_w: np.ndarray, pos_w: np.ndarray) -> np.ndarray:
    """``(F, J + E, 3)`` joints then end sites."""
    if len(skeleton.end_site_parents) == 0:
        return pos_w
    return np.concatenate([pos_w, end_site_positions(skeleton, rot_w, pos_w)], axis=1)


def _point_names(skeleton: Skeleton) -> list[str]:
    names = list(skeleton.names)
    return names + [f"{names[p]} end" for p in skeleton.end_site_parents]


def legs_down(
    skeleton: Skeleton, legs: Legs, rotations_world: np.ndarray, positions_world: np.ndarray
) -> np.ndarray:
    """``(F, legs)`` bool: some point of each leg's foot (its ankle, toe and the end sites
    below the ankle) is within :data:`~ikrig.metrics.joints.CONTACT_HEIGHT` of its own floor
    (the 5th percentile of its height) in the clip of these world transforms."""
    sites = end_site_positions(skeleton, rotations_world, positions_world)
    unit = float(legs.leg_length)
    out = np.zeros((positions_world.shape[0], len(legs.legs)), dtype=bool)
    for k, leg in enumerate(legs.legs):
        ys = [positions_world[:, j, 1] for j in (leg.ankle, leg.toe) if j >= 0]
        for e, p in enumerate(skeleton.end_site_parents):
            if p == leg.ankle or leg.ankle in skeleton.ancestors(int(p)):
                ys.append(sites[:, e, 1])
        for y in ys:
            out[:, k] |= y - percentile(y, FLOOR_PERCENTILE) <= CONTACT_HEIGHT * unit
    return out


def _stance_mask(skeleton: Skeleton, legs: Legs, stance: np.ndarray, frames: int) -> np.ndarray:
    """``(F, J + E)`` bool: the samples left out of the joint displacement (a leg below its
    hip over ``stance (F, legs)`` dilated by ``frames``)."""
    F, J = stance.shape[0], skeleton.num_joints
    points = np.concatenate([np.arange(J), skeleton.end_site_parents])  # each point's joint
    out = np.zeros((F, len(points)), dtype=bool)
    for k, leg in enumerate(legs.legs):
        below = np.array([leg.hip in skeleton.ancestors(int(j)) for j in points])
        held = stance[:, k].copy()
        for s in range(1, frames + 1):
            held[s:] |= stance[:-s, k]
            held[:-s] |= stance[s:, k]
        out |= held[:, None] & below[None, :]
    return out


def fidelity_values(
    result_fk: tuple[np.ndarray, np.ndarray],
    source_fk: tuple[np.ndarray, np.ndarray],
    skeleton: Skeleton,
    legs: Legs,
    stance: np.ndarray,
    frame_time: float,
) -> dict[str, Any]:
    """The change measures of the module docstring.

    Args:
        result_fk, source_fk: world rotations ``(F, J, 4)`` xyzw and positions ``(F, J, 3)``
            of the result and its source (:meth:`~ikrig.pose.Motion.fk`), same ``F``.
        skeleton: their skeleton; legs: the legs (``leg_length`` is the unit).
        stance: ``(F, legs)`` bool, the leg down in the source (:func:`legs_down`).
        frame_time: seconds per frame (for :data:`STANCE_MARGIN`).

    Returns:
        A JSON-ready dict with the keys of :data:`FIDELITY_KEYS`.
    """
    (rot_r, pos_r), (rot_s, pos_s) = result_fk, source_fk
    scale = 100.0 / float(legs.leg_length)
    pelvis = pelvis_joint(skeleton, legs)
    dy = (pos_r[:, pelvis, 1] - pos_s[:, pelvis, 1]) * scale
    pts_r, pts_s = _all_points(skeleton, rot_r, pos_r), _all_points(skeleton, rot_s, pos_s)
    disp = np.linalg.norm(pts_r - pts_s, axis=-1) * scale  # (F, J + E)
    held = _stance_mask(skeleton, legs, stance, int(round(STANCE_MARGIN / frame_time)))
    counted = np.where(held, np.nan, disp)
    per_joint = np.full(disp.shape[1], 0.0)
    seen = ~held.all(axis=0)
    per_joint[seen] = nan_percentiles(counted[:, seen], 95.0)
    worst = int(np.argmax(per_joint))
    kept = disp[~held]
    upper = upper_body_joints(skeleton, legs)
    change = 0.0
    if upper.size:
        rel_r = quat_rotate(
            quat_conj(rot_r[:, pelvis, None]), pos_r[:, upper] - pos_r[:, pelvis, None]
        )
        rel_s = quat_rotate(
            quat_conj(rot_s[:, pelvis, None]), pos_s[:, upper] - pos_s[:, pelvis, None]
        )
        change = float(np.max(np.linalg.norm(rel_r - rel_s, axis=-1))) * scale
    ext_r, ext_s = leg_extensions(pos_r, legs), leg_extensions(pos_s, legs)
    fold = 100.0 * np.mean(ext_s - ext_r, axis=0)  # (legs,)
    most = int(np.argmax(fold))
    return {
        "pelvis_change_mean": float(np.mean(dy)),
        "pelvis_change_p95": percentile(np.abs(dy), 95.0),
        "joint_disp_p95": percentile(kept, 95.0) if kept.size else 0.0,
        "joint_disp_worst": float(per_joint[worst]),
        "joint_disp_worst_joint": _point_names(skeleton)[worst],
        "joint_disp_p95_all": percentile(disp.ravel(), 95.0),
        "upper_body_change": change,
        "leg_extension_max": float(ext_r.max()),
        "leg_extension_max_source": float(ext_s.max()),
        "leg_fold": float(fold[most]),
        "leg_fold_leg": legs.legs[most].side,
    }
