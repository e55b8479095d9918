"""Step 7, offline (``full``): each knee's correction smoothed in time, the ankle target
moving vertically to match: near full extension the knee turns fast for the smallest change
of reach, and this keeps it free of pops."""

from __future__ import annotations

import numpy as np

from ..._jit.setup import NUMPY_ERRORS, njit, notify_compiling
from ...kernels.qmath import v_get, v_norm, v_sub
from ...math.vec import triangle_angle
from ...metrics import POP_WINDOW
from ...signal.filters import hann_window, jump_rows, max_rows, smooth_rows
from ..context import UP, FootContext
from .goals import FootGoals
from .legs_ik import LegPlan

KNEE_PASSES = 8
"""Passes of :func:`smooth_knee_targets` at most (each smooths around what is left)."""


def knee_angles_from_reach(d: np.ndarray, l1: np.ndarray, l2: np.ndarray) -> np.ndarray:
    """Knee angles (radians, ``pi`` straight) of two-bone legs with bones ``l1, l2`` whose
    hip and ankle are ``d`` apart (clamped to what the bones can span)."""
    return triangle_angle(l1, l2, d)


def smooth_knee_targets(
    source_joints: np.ndarray,
    hips: np.ndarray,
    targets: np.ndarray,
    radius: int,
    frame_time: float,
    limit: float,
    lowest: np.ndarray | None = None,
) -> np.ndarray:
    """Move ankle targets vertically where needed so that no knee turns more sharply than
    its source nearby, by more than ``limit`` (rad/s), and never below ``lowest``.

    Near full extension the knee angle turns fast for the smallest change of the
    hip-to-ankle distance, so small kinks in a foot's path (a plant, a lock switch, the
    recording's own jitter) would become sudden turns of the knee (knee pops) that the
    source did not have. The correction the IK would apply to each knee, ``angle(result) -
    angle(source)``, is smoothed without lag (:func:`~ikrig.signal.filters.zero_lag_smooth`,
    half-width ``radius`` frames) around the frames where its
    :func:`~ikrig.signal.filters.angular_jump` exceeds ``limit``, blending in and out
    smoothly, a few passes until none does; then each target moves up or down until the IK
    gives the smoothed angle. The source's own knee motion passes through untouched, and so
    does every stretch where the correction is already smooth. Where the smoothed knee
    would be straighter than a target at ``lowest`` allows (a sole taken into the ground),
    the correction comes down by a smooth upper envelope of the excess (half-width
    ``radius``): the foot is held up a little around there instead, with no kink.

    Args:
        source_joints: ``(F, feet, 3, 3)`` hip, knee and ankle world positions (source).
        hips: ``(F, feet, 3)`` the hips after the root and pelvis offsets (world).
        targets: ``(F, feet, 3)`` ankle targets (world).
        radius: frames; ``< 1`` returns the targets unchanged.
        frame_time: seconds per frame; limit: rad/s.
        lowest: ``(F, feet)`` the lowest world height each target may take (None: none).

    Returns:
        ``(F, feet, 3)`` targets (a copy).
    """
    out = np.array(targets, dtype=np.float64)
    if radius < 1 or len(out) <= 2 * radius:
        return out
    window = max(1, int(round(POP_WINDOW / frame_time)))
    F, K = out.shape[:2]
    floor = np.full((F, K), -np.inf) if lowest is None else np.asarray(lowest, dtype=np.float64)
    notify_compiling()
    _knees_kernel(
        np.ascontiguousarray(source_joints, dtype=np.float64),
        np.ascontiguousarray(hips, dtype=np.float64),
        out,
        np.ascontiguousarray(floor),
        (hann_window(int(radius)), int(radius), window, float(frame_time), float(limit)),
        np.empty((9, F, K)),
    )
    return out


@njit(cache=True, **NUMPY_ERRORS)
def _knees_kernel(joints, hips, out, lowest, smoothing, scratch):
    """:func:`smooth_knee_targets` on ``out (F, K, 3)`` in place, ``lowest (F, K)``, with
    ``smoothing = (Hann weights, radius, pop window in frames, frame time, limit)`` and
    ``scratch (9, F, K)``.
    The filters are :mod:`ikrig.signal.filters`' own, on ``(F, K)`` arrays."""
    w, radius, window, dt, limit = smoothing
    F, K = out.shape[0], out.shape[1]
    l1, l2, source, first = scratch[0], scratch[1], scratch[2], scratch[3]
    for f in range(F):
        for k in range(K):
            hip, knee, ankle = (
                v_get(joints[f, k], 0),
                v_get(joints[f, k], 1),
                v_get(joints[f, k], 2),
            )
            l1[f, k], l2[f, k] = v_norm(v_sub(knee, hip)), v_norm(v_sub(ankle, knee))
            d = v_norm(v_sub(ankle, hip))
            source[f, k] = _knee_angle(d, l1[f, k], l2[f, k])
            first[f, k] = (
                _knee_angle(v_norm(v_sub(v_get(hips[f], k), v_get(out[f], k))), l1[f, k], l2[f, k])
                - source[f, k]
            )
    # the source's own largest jerk within the window, then passes on the correction
    # (loops, not array expressions: those take Numba seconds to compile)
    jump, envelope, work, correction, over = (
        scratch[4],
        scratch[5],
        scratch[6],
        scratch[7],
        scratch[8],
    )
    jump_rows(source, window, dt, jump)
    for f in range(F):
        for k in range(K):
            jump[f, k] = abs(jump[f, k])
            correction[f, k] = first[f, k]
    max_rows(jump, window, envelope)
    for _ in range(KNEE_PASSES):
        for f in range(F):
            for k in range(K):
                work[f, k] = source[f, k] + correction[f, k]
        jump_rows(work, window, dt, jump)
        violated = False
        for f in range(F):
            for k in range(K):
                o = abs(jump[f, k]) - envelope[f, k] > limit
                over[f, k] = 1.0 if o else 0.0
                violated = violated or o
        if not violated:
            break
        # where to smooth: the frames around a violation, blended in and out
        max_rows(over, radius, work)
        smooth_rows(work, w, over)
        smooth_rows(correction, w, jump)
        for f in range(F):
            for k in range(K):
                blend = min(max(over[f, k], 0.0), 1.0)
                correction[f, k] = correction[f, k] + blend * (jump[f, k] - correction[f, k])
    # no straighter than a target at ``lowest`` allows: the excess comes off smoothly
    sunk = False
    for f in range(F):
        for k in range(K):
            over[f, k] = 0.0
            if lowest[f, k] > -np.inf and correction[f, k] != first[f, k]:
                dx = hips[f, k, 0] - out[f, k, 0]
                dy = hips[f, k, 1] - lowest[f, k]
                dz = hips[f, k, 2] - out[f, k, 2]
                most = _knee_angle(np.sqrt(dx * dx + dy * dy + dz * dz), l1[f, k], l2[f, k])
                over[f, k] = max(source[f, k] + correction[f, k] - most, 0.0)
                sunk = sunk or over[f, k] > 0.0
    if sunk:
        max_rows(over, radius, work)
        smooth_rows(work, w, over)
        for f in range(F):
            for k in range(K):
                correction[f, k] -= over[f, k]
    for f in range(F):
        for k in range(K):
            angle = min(source[f, k] + correction[f, k], np.pi)
            a, b = l1[f, k], l2[f, k]
            d2 = a * a + b * b - 2 * a * b * np.cos(angle)
            vx = hips[f, k, 0] - out[f, k, 0]
            vy = hips[f, k, 1] - out[f, k, 1]
            vz = hips[f, k, 2] - out[f, k, 2]
            h2 = vx**2 + vz**2
            # the ankle below the hip at distance sqrt(d2); no vertical solution (or
            # nothing to change): left as it is
            if d2 > h2 and correction[f, k] != first[f, k]:
                out[f, k, 1] += vy - np.sqrt(max(d2 - h2, 0.0))


@njit(cache=True, **NUMPY_ERRORS)
def _knee_angle(d, l1, l2):
    """:func:`knee_angles_from_reach` of one leg (NaN for a zero-length bone, as there)."""
    c = (l1 * l1 + l2 * l2 - d * d) / (2 * l1 * l2)
    return np.arccos(c if c != c else min(max(c, -1.0), 1.0))


def smooth_knees(ctx: FootContext, goals: FootGoals, plan: LegPlan) -> LegPlan:
    """Step 7 on a whole clip's ``plan``: :func:`smooth_knee_targets` with the context's
    ``plan.knee_smoothing`` and ``plan.knee_jerk_limit``, no target lower than where its
    sole touches the ground (``goals.planted``, or the recorded dip the plan keeps)."""
    o, dt = ctx.options.plan, goals.frame_time
    joints = goals.positions_world[:, ctx.leg_joints]
    hips = joints[:, :, 0] + (plan.root_offset - plan.pelvis_drop)[:, None, None] * UP
    radius = round(o.knee_smoothing / dt)
    lowest = plan.targets_world[..., 1] - np.maximum(goals.offsets - goals.planted, 0.0)
    targets = smooth_knee_targets(
        joints, hips, plan.targets_world, radius, dt, o.knee_jerk_limit, lowest
    )
    return plan._replace(targets_world=targets)


def keep_knees(ctx: FootContext, goals: FootGoals, plan: LegPlan) -> LegPlan:
    """Step 7 of a recipe without it: ``plan`` as it is."""
    return plan
