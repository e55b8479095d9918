"""The step functions of foot placement, shared by the offline and the live pipeline.

Every function works on ``F`` frames at once (``F = 1`` live). Those that carry state take
it as an argument and return it, so the offline pipeline (all frames) and the live one (one
frame per call) compute the same frames. Lengths are in the clip's units; up is +Y.
"""

from __future__ import annotations

import numpy as np

from ..math.quat import quat_between, quat_identity, quat_nlerp, quat_rotate
from .contacts import _spans
from .smoothing import smooth

UP = np.array([0.0, 1.0, 0.0])


def ground_heights(ground, points_world, floor: float):
    """Vertical ground queries under points ``(..., 3)``.

    Returns:
        ``heights (...)`` (the clip's ``floor`` where nothing was hit), ``normals (..., 3)``
        (+Y where nothing was hit) and ``hit (...)`` bool.
    """
    h, n, hit = ground.height_at(points_world[..., [0, 2]])
    h = np.where(hit, h, floor)
    n = np.where(hit[..., None], n, UP)
    return h, n, hit


def smooth_stateful(goals, frame_time, halflife, state):
    """:func:`~ikrig.pipelines.smoothing.smooth` over ``goals (F, k)``; ``state`` is None (start
    at rest on the first goal) or the ``(x, v, g)`` arrays of a previous call. Returns
    ``(smoothed (F, k), state)``."""
    g = np.asarray(goals, dtype=np.float64)
    if state is None:
        state = (g[0].copy(), np.zeros_like(g[0]), g[0].copy())
    return smooth(g, frame_time, halflife, state), state


def smooth_max(a, b, k):
    """A smooth maximum of ``a`` and ``b``: ``>= max(a, b)``, within ``k / 2`` of it, and
    without the kink of ``max`` where they cross (``k`` in the same units)."""
    return 0.5 * (a + b + np.sqrt((a - b) ** 2 + k * k))


def smooth_min(a, b, k):
    """A smooth minimum: ``<= min(a, b)``, within ``k / 2`` of it (see :func:`smooth_max`)."""
    return 0.5 * (a + b - np.sqrt((a - b) ** 2 + k * k))


def foot_normals(normals, max_angle: float, frame_time, halflife, state):
    """Step 7a: the ground normal under each foot, smoothed.

    The normals under the sole points ``(F, feet, 2, 3)`` are averaged, ignoring those
    steeper than ``max_angle`` (step risers, block sides), which count as +Y.

    Returns:
        ``(F, feet, 3)`` unit normals and the spring state.
    """
    n = np.where((normals[..., 1] >= np.cos(max_angle))[..., None], normals, UP)
    avg = n.sum(axis=-2)
    avg /= np.linalg.norm(avg, axis=-1, keepdims=True)
    F, K = avg.shape[:2]
    sm, state = smooth_stateful(avg.reshape(F, K * 3), frame_time, halflife, state)
    sm = sm.reshape(F, K, 3)
    return sm / np.linalg.norm(sm, axis=-1, keepdims=True), state


def align_rotations(normals, weight, max_angle: float):
    """Step 7b: world rotations ``(F, feet, 4)`` turning +Y to the foot normals, limited to
    ``max_angle`` and blended from the identity by ``weight (F, feet)``."""
    q = quat_between(UP, normals)
    cos_half = np.cos(0.5 * max_angle)
    w = np.abs(q[..., 3])
    over = w < cos_half
    if over.any():  # scale the rotation angle down to max_angle
        s = np.sqrt(1 - cos_half**2) / np.maximum(np.linalg.norm(q[..., :3], axis=-1), 1e-300)
        limited = np.concatenate(
            [q[..., :3] * s[..., None], np.full(w.shape + (1,), cos_half)], axis=-1
        )
        q = np.where(over[..., None], limited, q)
    return quat_nlerp(quat_identity(q.shape[:-1]), q, weight)


def rotate_about(points, pivot, q):
    """Rotate points ``(F, feet, P, 3)`` about pivots ``(F, feet, 3)`` by ``q (F, feet, 4)``."""
    return pivot[..., None, :] + quat_rotate(q[..., None, :], points - pivot[..., None, :])


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


def live_foot_offsets(planted, stance, contacts, frame_time, halflife, state):
    """Step 4b, live (no plan): a causal estimate of :func:`plan_foot_offsets`.

    In contact the foot stands on the ground; in the air it holds its lift-off offset, raised
    to clear the ground beneath it, on a spring (``halflife``) that it never lags below the
    ground. Without knowing where the foot will land this is reactive: rising ground lifts
    the foot as it arrives over it. ``state`` is None or ``(held (feet,), spring state)``;
    returns ``(offsets (F, feet), state)``.
    """
    F, K = planted.shape
    held = state[0] if state is not None else stance[0].copy()
    spring = state[1] if state is not None else None
    goals = np.empty((F, K))
    for f in range(F):
        held = np.where(contacts[f], stance[f], held)
        goals[f] = np.where(contacts[f], stance[f], np.maximum(held, planted[f]))
    out, spring = smooth_stateful(goals, frame_time, halflife, spring)
    return np.where(contacts, stance, np.maximum(out, planted)), (held, spring)


def root_goal(offsets, pins, softness, floor_weight=0.02):
    """Step 3: how far the character moves up: a soft minimum (width ``softness``) of the
    feet's offsets, weighted by their pins (plus ``floor_weight`` so a character in the air
    follows its feet too). The lower planted foot keeps its leg's extension and the higher
    one bends, as a person on stairs does; a foot lifted or placed hands over smoothly.

    ``offsets, pins: (F, feet)`` -> ``(F,)``.
    """
    w = pins + floor_weight
    low = offsets.min(axis=1)
    mean_exp = (w * np.exp(-(offsets - low[:, None]) / softness)).sum(axis=1) / w.sum(axis=1)
    return low - softness * np.log(mean_exp)


def planted_point(points, planted_heights, ground_h):
    """Index ``(F, feet)`` of the lower sole point (0 heel, 1 toe) over the ground."""
    return np.argmin(points[..., 1] - planted_heights - ground_h, axis=-1)


def pelvis_drop(hips, targets, reach):
    """Step 5: how far each hip must come down so its foot target is within ``reach``.

    Args:
        hips: ``(F, feet, 3)`` hip positions (after the root offset).
        targets: ``(F, feet, 3)`` ankle targets.
        reach: ``(F, feet)`` the largest hip-to-ankle distance allowed.

    Returns:
        ``(F, feet)`` drops >= 0 (a target straight below but out of reach needs
        ``vertical gap - reach``; a target too far sideways needs the hip at its height).
    """
    d = hips - targets
    horiz2 = d[..., 0] ** 2 + d[..., 2] ** 2
    vert = np.sqrt(np.maximum(reach**2 - horiz2, 0.0))
    return np.maximum(d[..., 1] - vert, 0.0)
