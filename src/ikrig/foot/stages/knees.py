"""Step 6a, offline (``full``): each knee's correction smoothed in time, the ankle target
moving vertically to match: near full extension the knee turns fast for the smallest change
of reach, and this keeps it free of pops."""

from __future__ import annotations

import numpy as np

from ...metrics import POP_WINDOW
from ...signal.filters import jerk_excess, running_max, zero_lag_smooth
from ..context import UP, FootContext
from .goals import FootGoals
from .legs_ik import LegPlan

KNEE_PASSES = 8
"""Passes of :func:`smooth_knee_targets` at most (each smooths around what is left)."""


def knee_angles_from_reach(d: np.ndarray, l1: np.ndarray, l2: np.ndarray) -> np.ndarray:
    """Knee angles (radians, ``pi`` straight) of two-bone legs with bones ``l1, l2`` whose
    hip and ankle are ``d`` apart (clamped to what the bones can span)."""
    return np.arccos(np.clip((l1 * l1 + l2 * l2 - d * d) / (2 * l1 * l2), -1.0, 1.0))


def smooth_knee_targets(
    source_joints: np.ndarray,
    hips: np.ndarray,
    targets: np.ndarray,
    radius: int,
    frame_time: float,
    limit: float,
) -> np.ndarray:
    """Move ankle targets vertically where needed so that no knee turns more sharply than
    its source nearby, by more than ``limit`` (rad/s).

    Near full extension the knee angle turns fast for the smallest change of the
    hip-to-ankle distance, so small kinks in a foot's path (a plant, a lock switch, the
    recording's own jitter) would become sudden turns of the knee (knee pops) that the
    source did not have. The correction the IK would apply to each knee, ``angle(result) -
    angle(source)``, is smoothed without lag (:func:`~ikrig.signal.filters.zero_lag_smooth`,
    half-width ``radius`` frames) around the frames where its
    :func:`~ikrig.signal.filters.angular_jump` exceeds ``limit``, blending in and out
    smoothly, a few passes until none does; then each target moves up or down until the IK
    gives the smoothed angle. The source's own knee motion passes through untouched, and so
    does every stretch where the correction is already smooth.

    Args:
        source_joints: ``(F, feet, 3, 3)`` hip, knee and ankle world positions (source).
        hips: ``(F, feet, 3)`` the hips after the root and pelvis offsets (world).
        targets: ``(F, feet, 3)`` ankle targets (world).
        radius: frames; ``< 1`` returns the targets unchanged.
        frame_time: seconds per frame; limit: rad/s.

    Returns:
        ``(F, feet, 3)`` targets (a copy).
    """
    out = np.array(targets, dtype=np.float64)
    if radius < 1 or len(out) <= 2 * radius:
        return out
    hip, knee, ankle = source_joints[..., 0, :], source_joints[..., 1, :], source_joints[..., 2, :]
    l1 = np.linalg.norm(knee - hip, axis=-1)
    l2 = np.linalg.norm(ankle - knee, axis=-1)
    source = knee_angles_from_reach(np.linalg.norm(ankle - hip, axis=-1), l1, l2)
    v = hips - out
    first = knee_angles_from_reach(np.linalg.norm(v, axis=-1), l1, l2) - source
    correction: np.ndarray = first
    for _ in range(KNEE_PASSES):
        over = jerk_excess(source + correction, source, frame_time, POP_WINDOW) > limit
        if not over.any():
            break
        # where to smooth: the frames around a violation, blended in and out
        near = running_max(over, radius)
        w = np.clip(zero_lag_smooth(near.astype(np.float64), radius), 0.0, 1.0)
        correction = correction + w * (zero_lag_smooth(correction, radius) - correction)
    angle = np.minimum(source + correction, np.pi)
    d2 = l1 * l1 + l2 * l2 - 2 * l1 * l2 * np.cos(angle)
    h2 = v[..., 0] ** 2 + v[..., 2] ** 2
    # the ankle below the hip at distance sqrt(d2); no vertical solution (or nothing to
    # change): left as it is
    move = (d2 > h2) & (correction != first)
    out[..., 1] += np.where(move, v[..., 1] - np.sqrt(np.maximum(d2 - h2, 0.0)), 0.0)
    return out


def smooth_knees(ctx: FootContext, goals: FootGoals, plan: LegPlan) -> LegPlan:
    """Step 6a on a whole clip's ``plan``: :func:`smooth_knee_targets` with the context's
    ``plan.knee_smoothing`` and ``plan.knee_jerk_limit``."""
    o, dt = ctx.options.plan, goals.frame_time
    joints = goals.positions_world[:, ctx.leg_joints]
    hips = joints[:, :, 0] + (plan.root_offset - plan.pelvis_drop)[:, None, None] * UP
    radius = round(o.knee_smoothing / dt)
    targets = smooth_knee_targets(joints, hips, plan.targets_world, radius, dt, o.knee_jerk_limit)
    return plan._replace(targets_world=targets)


def keep_knees(ctx: FootContext, goals: FootGoals, plan: LegPlan) -> LegPlan:
    """Step 6a of a recipe without it: ``plan`` as it is."""
    return plan
