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
from .contacts import _spans
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


def _smootherstep(u):
    u = np.clip(u, 0.0, 1.0)
    return u * u * u * (u * (6 * u - 15) + 10)


def _bump(u):
    """16 u^2 (1 - u)^2: 1 at mid-swing, 0 with zero slope at lift-off and landing."""
    u = np.clip(u, 0.0, 1.0)
    return 16 * u * u * (1 - u) ** 2


def plan_foot_offsets(planted, source_clearance, contacts, ramp_frames, max_bump):
    """Step 4b, offline: the vertical offset of each foot over the whole clip.

    In contact a foot stands on the ground: the planted offset, plus the animation's own
    clearance (``source_clearance``) blended out over ``ramp_frames`` after the contact
    starts and back in before it ends, so heel strike and push-off keep the animation's
    motion while a flat foot stands exactly on the ground. Between two contacts the offset
    moves from the lift-off value to the landing value on a smootherstep (zero velocity and
    acceleration at both ends), plus a smooth bump just high enough that the sole clears
    the ground all along (``planted``, the offset at which the sole would touch it), at
    most ``max_bump``. Before the first and after the last contact the offset holds.

    Args:
        planted: ``(F, feet)`` offsets at which each foot's sole touches the ground.
        source_clearance: ``(F, feet)`` the animation's clearance over its own floor (>= 0).
        contacts: ``(F, feet)`` bool.
        ramp_frames: frames over which the clearance is blended out and back in.
        max_bump: the largest bump, in the data's units.

    Returns:
        ``(F, feet)`` offsets. A foot with no contact at all follows ``planted`` held at its
        highest value, so it never cuts into the ground.
    """
    F, K = planted.shape
    out = np.empty((F, K))
    t = np.arange(F, dtype=np.float64)
    ramp = max(float(ramp_frames), 1.0)
    stance = planted + source_clearance
    for k in range(K):
        spans = _spans(contacts[:, k])
        for s, e in spans:  # blend the animation's own clearance out mid-contact
            u = t[s:e]
            keep = 1 - _smootherstep((u - s + 1) / ramp) * _smootherstep((e - u) / ramp)
            stance[s:e, k] = planted[s:e, k] + source_clearance[s:e, k] * keep
        if not spans:
            out[:, k] = np.maximum.accumulate(planted[:, k])
            continue
        # air phases: (last contact frame or -1, next contact frame or F)
        gaps = [(-1, spans[0][0])]
        gaps += [(e0 - 1, s1) for (_, e0), (s1, _) in zip(spans, spans[1:])]
        gaps.append((spans[-1][1] - 1, F))
        for s, e in spans:
            out[s:e, k] = stance[s:e, k]
        for a, b in gaps:
            lo, hi = a + 1, b  # frames in the air
            if hi <= lo:
                continue
            d_a = stance[a, k] if a >= 0 else stance[b, k]
            d_b = stance[b, k] if b < F else d_a
            u = (t[lo:hi] - a) / max(b - a, 1)
            base = d_a + (d_b - d_a) * _smootherstep(u)
            if a < 0:  # before the first contact: high at the start, down to the landing
                shape = _smootherstep(2 * (1 - u))
            elif b >= F:  # after the last contact: up from the lift-off, then held
                shape = _smootherstep(2 * u)
            else:
                shape = _bump(u)
            need = np.maximum(planted[lo:hi, k] - base, 0.0)
            # near lift-off and landing the foot is still on the ground: a scuff there is
            # not worth a high bump (shape ~ 0), so the amplitude divides by at least 0.25
            amp = min(float(np.max(need / np.maximum(shape, 0.25))), max_bump)
            out[lo:hi, k] = base + amp * shape
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
