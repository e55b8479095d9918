"""The step functions of foot placement, shared by the offline and the live pipeline.

Every function works on ``F`` frames at once (``F = 1`` live). Those that carry state take
it as an argument and update it in place, so the offline pipeline (all frames) and the live
one (one frame per call) compute the same frames. The per-frame recursions themselves are
Numba kernels in :mod:`ikrig.pipelines._foot_kernels`. Lengths are in the clip's units; up
is +Y.
"""

from __future__ import annotations

import numpy as np

from ..ground.base import query_heights
from . import _foot_kernels as kernels
from .smoothing import smooth

UP = np.array([0.0, 1.0, 0.0])


def ground_heights(ground, points_world, floor: float):
    """Vertical ground queries under points ``(..., 3)``.

    Returns:
        ``heights (...)`` (the clip's ``floor`` where nothing was hit), ``normals (..., 3)``
        (+Y where nothing was hit) and ``hit (...)`` bool.
    """
    h, n, hit = query_heights(ground, points_world[..., [0, 2]])
    h = np.where(hit, h, floor)
    n = np.where(hit[..., None], n, UP)
    return h, n, hit


def smooth_stateful(goals, frame_time, halflife, state):
    """:func:`~ikrig.pipelines.smoothing.smooth` over ``goals (F, k)`` from a ``(3, k)``
    spring state (:func:`~ikrig.pipelines.smoothing.new_spring_state`; NaN: start at rest on
    the first goal), updated in place. Returns the smoothed ``(F, k)``."""
    g = np.asarray(goals, dtype=np.float64)
    if g.shape[0] and np.isnan(state[0, 0]):
        state[0], state[1], state[2] = g[0], 0.0, g[0]
    return smooth(g, frame_time, halflife, (state[0], state[1], state[2]))


def planted_offsets(ground, sole, points):
    """Step 4a: the vertical offset ``(F, feet)`` that stands each foot on the ground.

    The sole is checked from heel to toe (:meth:`FootSole.sole_clearance`): the offset puts
    its lowest sample exactly on the ground beneath it, so no part of the sole cuts into a
    step edge or a bump. ``points: (F, feet, 2, 3)`` heel and toe (after alignment).

    Returns:
        ``(offsets (F, feet), ground found under every sample (F, feet))``.
    """
    clearance, found = sole.sole_clearance(points, ground)
    return -clearance, found


def soft_clearance(c, k):
    """``c^2 / (c + k)`` for clearances ``c >= 0``: about 0 for ``c << k`` (a planted foot
    stands on the ground), ``c - k`` for ``c >> k`` (a foot the animation lifts stays
    lifted), and smooth between, so planting never snaps a foot down."""
    c = np.maximum(c, 0.0)
    return c * c / (c + k)


def zero_lag_smooth(x, radius: int):
    """Offline smoothing of ``x (F, ...)`` along axis 0 without lag: a normalised Hann
    (cos^2) window of half-width ``radius`` frames, the ends padded with the end values.

    Being symmetric, it leaves straight stretches as they are and only rounds corners off,
    with an error of second order in the curvature (a causal spring lags by an amount of
    first order in the velocity). ``radius < 1`` returns a copy.
    """
    x = np.array(x, dtype=np.float64)
    r = int(radius)
    if r < 1 or len(x) == 0:
        return x
    w = np.cos(0.5 * np.pi * np.arange(-r, r + 1) / (r + 1)) ** 2
    pad = np.pad(x, [(r, r)] + [(0, 0)] * (x.ndim - 1), mode="edge")
    return np.lib.stride_tricks.sliding_window_view(pad, 2 * r + 1, axis=0) @ (w / w.sum())


def upper_envelope(x, radius: int):
    """A smooth curve ``>= x (F, ...)`` along axis 0, offline: the running maximum over
    ``radius`` frames each side, then :func:`zero_lag_smooth` over the same half-width.
    Each frame's value is a weighted mean of maxima of windows that all contain that frame,
    so it is never below it; it follows ``x`` where ``x`` is flat, rises ``radius`` frames
    ahead of a rise and turns a one-frame spike into a smooth bump. ``radius < 1`` returns
    a copy."""
    x = np.array(x, dtype=np.float64)
    r = int(radius)
    if r < 1 or len(x) == 0:
        return x
    top = running_max(x, r)
    return zero_lag_smooth(top, r)


def plan_foot_offsets(planted, source_clearance, contacts, ramp_frames, max_bump, smooth_frames=0):
    """Step 4b, offline: the vertical offset of each foot over the whole clip.

    In contact a foot stands on the ground: the planted offset, plus the animation's own
    clearance (``source_clearance``) blended out over ``ramp_frames`` after the contact
    starts and back in before it ends, so heel strike and push-off keep the animation's
    motion while a flat foot stands exactly on the ground. Between two contacts the offset
    moves from the lift-off value to the landing value on a smootherstep (zero velocity and
    acceleration at both ends), plus a smooth bump just high enough that the sole clears
    the ground all along (``planted``, the offset at which the sole would touch it), at
    most ``max_bump``. Before the first and after the last contact the offset holds.

    Last, the whole plan is smoothed without lag (:func:`zero_lag_smooth`, half-width
    ``smooth_frames``) and held at or above ``planted``. This rounds off the plan's kinks
    (plant ramps, the lowest sole point switching, a foot slapping flat), which show as knee
    pops. Offline it replaces the causal target spring (``target_halflife``), whose lag lets
    a path sink below ``planted`` where that rises, to be snapped back up onto it (a kink in
    contact, a jump over a step edge in the air). The hold is rarely active: a symmetric
    window lowers a curve only near its peaks, and there by a second-order amount, while
    the kinks of ``planted`` (a maximum over sole samples) point upwards.

    Args:
        planted: ``(F, feet)`` offsets at which each foot's sole touches the ground.
        source_clearance: ``(F, feet)`` the animation's clearance over its own floor (>= 0).
        contacts: ``(F, feet)`` bool.
        ramp_frames: frames over which the clearance is blended out and back in.
        max_bump: the largest bump, in the data's units.
        smooth_frames: half-width (frames) of the final zero-lag smoothing (0: off).

    Returns:
        ``(F, feet)`` offsets. A foot with no contact at all follows ``planted`` held at its
        highest value, so it never cuts into the ground.
    """
    planted = np.asarray(planted, dtype=np.float64)
    clearance = np.asarray(source_clearance, dtype=np.float64)
    flags = np.asarray(contacts, dtype=np.bool_)
    out = np.empty(planted.shape[::-1])  # (feet, F): one contiguous row per foot
    ramp = max(float(ramp_frames), 1.0)
    for k in range(planted.shape[1]):
        kernels.plan_run(
            np.ascontiguousarray(planted[:, k]),
            np.ascontiguousarray(clearance[:, k]),
            np.ascontiguousarray(flags[:, k]),
            ramp,
            float(max_bump),
            out[k],
        )
    out = out.T
    if smooth_frames >= 1:
        out = np.maximum(zero_lag_smooth(out, smooth_frames), planted)
    return out


def live_foot_offsets(planted, stance, contacts, frame_time, halflife, held, spring):
    """Step 4b, live (no plan): a causal estimate of :func:`plan_foot_offsets`.

    In contact the foot stands on the ground; in the air it holds its lift-off offset, raised
    to clear the ground beneath it, on a spring (``halflife``) that it never lags below the
    ground. Without knowing where the foot will land this is reactive: rising ground lifts
    the foot as it arrives over it.

    Args:
        planted, stance: ``(F, feet)`` the offsets at which each sole touches the ground, and
            at which it stands when planted.
        contacts: ``(F, feet)`` bool.
        held: ``(feet,)`` the last stance offsets (NaN at the start); spring: ``(3, feet)``
            spring state; both updated in place.

    Returns:
        ``(F, feet)`` offsets.
    """
    out = np.empty(planted.shape)
    kernels.swing_run(
        np.ascontiguousarray(planted, dtype=np.float64),
        np.ascontiguousarray(stance, dtype=np.float64),
        np.ascontiguousarray(contacts, dtype=np.bool_),
        float(frame_time),
        float(halflife),
        held,
        spring,
        out,
    )
    return out


def knee_angles_from_reach(d, l1, l2):
    """Knee angles (radians, ``pi`` straight) of two-bone legs with bones ``l1, l2`` whose
    hip and ankle are ``d`` apart (clamped to what the bones can span)."""
    return np.arccos(np.clip((l1 * l1 + l2 * l2 - d * d) / (2 * l1 * l2), -1.0, 1.0))


def running_max(x, radius: int):
    """Maximum of ``x (F, ...)`` over ``+-radius`` frames along axis 0 (ends padded)."""
    x = np.asarray(x)
    pad = np.pad(x, [(radius, radius)] + [(0, 0)] * (x.ndim - 1), mode="edge")
    return np.lib.stride_tricks.sliding_window_view(pad, 2 * radius + 1, axis=0).max(axis=-1)


def angular_jump(angles, frame_time: float, frames: int):
    """Change of angular velocity (rad/s) over ``frames`` frames, ``(F, ...)``:
    ``(a[t+W] - 2 a[t] + a[t-W]) / (W frame_time)``, zero within ``W`` frames of the ends."""
    a = np.asarray(angles, dtype=np.float64)
    W = frames
    out = np.zeros_like(a)
    if len(a) > 2 * W:
        out[W:-W] = (a[2 * W :] - 2.0 * a[W:-W] + a[: -2 * W]) / (W * frame_time)
    return out


def jerk_excess(angles_result, angles_source, frame_time: float, window: float):
    """How much each frame's change of angular velocity over ``window`` seconds (rad/s)
    exceeds the largest the source has within ``window``, ``(F, ...)``: the knee-pop
    measure of :func:`ikrig.metrics.knee_pops`."""
    W = max(1, int(round(window / frame_time)))
    jump_r = np.abs(angular_jump(angles_result, frame_time, W))
    jump_s = np.abs(angular_jump(angles_source, frame_time, W))
    return jump_r - running_max(jump_s, W) if len(jump_r) else jump_r


def smooth_knee_targets(source_joints, hips, targets, radius: int, frame_time, limit):
    """Step 6a, offline: move ankle targets vertically where needed so that no knee turns
    more sharply than its source nearby, by more than ``limit`` (rad/s).

    Near full extension the knee angle turns fast for the smallest change of the
    hip-to-ankle distance, so small kinks in a foot's path (a plant, a lock switch, the
    recording's own jitter) would become sudden turns of the knee (knee pops) that the
    source did not have. The correction the IK would apply to each knee, ``angle(result) -
    angle(source)``, is smoothed without lag (:func:`zero_lag_smooth`, half-width ``radius``
    frames) around the frames where its :func:`angular_jump` exceeds ``limit``, blending
    in and out smoothly, a few passes until none does; then each target moves up or down
    until the IK gives the smoothed angle. The source's own knee motion passes through
    untouched, and so does every stretch where the correction is already smooth; near full
    extension a tiny vertical move buys a smooth knee.

    Args:
        source_joints: ``(F, feet, 3, 3)`` hip, knee and ankle world positions (source).
        hips: ``(F, feet, 3)`` the hips after the root and pelvis offsets.
        targets: ``(F, feet, 3)`` ankle targets.
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
    correction = first
    for _ in range(KNEE_PASSES):
        over = jerk_excess(source + correction, source, frame_time, POP_WINDOW) > limit
        if not over.any():
            break
        # where to smooth: the frames around a violation, blended in and out
        near = np.lib.stride_tricks.sliding_window_view(
            np.pad(over, [(radius, radius), (0, 0)]), 2 * radius + 1, axis=0
        ).any(axis=-1)
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


POP_WINDOW = 1.0 / 30.0
"""Time step (s) over which the change of knee angular velocity is measured (knee pops)."""

KNEE_PASSES = 8
"""Passes of :func:`smooth_knee_targets` at most (each smooths around what is left)."""
