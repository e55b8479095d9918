"""Step 6: the pelvis comes down (limited) when a foot target would need the leg straighter
than the source at that moment and ``pelvis.max_extension``; the other leg bends.
:func:`pelvis_needs` measures how far, for each leg (6a); offline the drop is a smooth upper
envelope of that need, coming down ahead of it, at each end of a body that has two (a
quadruped), which then pitches by the difference (:func:`plan_pelvis`); live it follows the
largest need and comes back on a spring (:func:`hold_pelvis`) (6b)."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from ..._jit.setup import njit
from ...signal.easing import smooth_max
from ...signal.filters import upper_envelope
from ...signal.springs import lane, spring_advance, spring_rate
from ..context import FootContext
from ..options import PelvisOptions
from .goals import FootGoals
from .pitch import BodyAxes

if TYPE_CHECKING:
    from ..state import FootState


REACH = np.dtype(
    [
        ("unit", np.float64),
        ("max_extension", np.float64),
        ("max_drop", np.float64),
    ]
)
"""How far legs may straighten: ``unit`` (the leg length, data units), ``max_extension`` (a
fraction of each leg's length) and ``max_drop`` (the largest pelvis drop, data units)."""


@functools.lru_cache(maxsize=32)
def reach_of(options: PelvisOptions, unit: float) -> np.ndarray:
    """The ``(1,)`` :data:`REACH` record of ``options`` for legs of length ``unit``."""
    o = options
    reach = np.array([(unit, o.max_extension, o.max_drop * unit)], REACH)
    reach.flags.writeable = False
    return reach


@njit(cache=True)
def allowed_reach(src, length, max_extension, band):
    """How far a leg of ``length`` (thigh plus shin) may reach, hip to ankle, where the
    source reaches ``src``: the more of ``src`` and ``max_extension * length`` (a smooth
    maximum of width ``band``, no kink; never below ``src``), at most a straight leg, or the
    source's own reach where the rig stretches."""
    r = smooth_max(src, max_extension * length, band)
    return min(r, max(src, length))


@njit(cache=True)
def pelvis_drop(hip, target, reach):
    """How far a ``hip`` (x, y, z) must come down so its foot ``target`` is within ``reach``
    (>= 0; a target straight below but out of reach needs ``vertical gap - reach``, a target
    too far sideways needs the hip at its height)."""
    dx = hip[0] - target[0]
    dz = hip[2] - target[2]
    vert = math.sqrt(max(reach * reach - dx * dx - dz * dz, 0.0))
    return max(hip[1] - target[1] - vert, 0.0)


@njit(cache=True)
def pelvis_need_run(joints_p, targets, root, lengths, reach, need):
    """Step 6a: how far the pelvis must come down so that a leg does not straighten beyond
    the source's extension at that frame or ``max_extension`` (a smooth maximum of the two:
    no kink, never below the source's, so a leg the source holds straight needs no drop; at
    most a straight leg, or the source's stretch), for each leg, clipped to
    ``[0, max_drop]``.

    Args:
        joints_p: ``(F, K, 3, 3)`` hip, knee and ankle world positions (source).
        targets: ``(F, K, 3)`` ankle targets (world); root: ``(F,)`` the root's vertical
            offset.
        lengths: ``(K,)`` leg lengths (thigh plus shin).
        reach: ``(1,)`` :data:`REACH` record.
        need: ``(F, K)`` out.
    """
    reach = reach[0]
    band = 0.01 * reach.unit
    for f in range(targets.shape[0]):
        for k in range(targets.shape[1]):
            sx = joints_p[f, k, 2, 0] - joints_p[f, k, 0, 0]
            sy = joints_p[f, k, 2, 1] - joints_p[f, k, 0, 1]
            sz = joints_p[f, k, 2, 2] - joints_p[f, k, 0, 2]
            src = math.sqrt(sx * sx + sy * sy + sz * sz)
            r = allowed_reach(src, lengths[k], reach.max_extension, band)
            hip = (joints_p[f, k, 0, 0], joints_p[f, k, 0, 1] + root[f], joints_p[f, k, 0, 2])
            tgt = (targets[f, k, 0], targets[f, k, 1], targets[f, k, 2])
            need[f, k] = min(pelvis_drop(hip, tgt, r), reach.max_drop)


def pelvis_needs(
    ctx: FootContext, goals: FootGoals, root_offset: np.ndarray, targets: np.ndarray
) -> np.ndarray:
    """Step 6a: how far the pelvis must come down ``(F, feet)`` so that each leg does not
    straighten beyond the source's extension at that frame or ``max_extension``, at most
    ``max_drop``, with the root at ``root_offset (F,)`` and the ankles at ``targets (F, feet,
    3)``."""
    need = np.zeros(targets.shape[:2])
    pelvis_need_run(
        goals.positions_world[:, ctx.leg_joints],
        targets,
        np.ascontiguousarray(root_offset, dtype=np.float64),
        ctx.leg_lengths,
        pelvis_reach(ctx),
        need,
    )
    return need


def pelvis_reach(ctx: FootContext) -> np.ndarray:
    """The context's ``(1,)`` :data:`REACH` record (:func:`reach_of`)."""
    return ctx.memo("reach", lambda: reach_of(ctx.options.pelvis, ctx.unit))


def no_pelvis_need(
    ctx: FootContext, goals: FootGoals, root_offset: np.ndarray, targets: np.ndarray
) -> np.ndarray:
    """Step 6a of a recipe whose body offset already is its pelvis drop: zeros ``(F, feet)``."""
    return np.zeros(targets.shape[:2])


@njit(cache=True)
def pelvis_hold_run(need, band, rate, spring, drop):
    """Step 6b, causal: the drop follows ``need (F,)`` at once when it grows and comes back
    on a spring (``rate``, 1 spring); a smooth maximum of the two (width ``band``) keeps the
    hand-over free of kinks. ``drop (F,)`` out; ``spring (lanes, 1)``: frame ``f`` uses
    lane ``f % lanes``."""
    r = rate[0]
    for f in range(need.shape[0]):
        held = spring_advance(lane(spring, f), 0, need[f], r)
        drop[f] = smooth_max(need[f], held, band) - 0.5 * band


def hold_pelvis(
    ctx: FootContext, need: np.ndarray, frame_time: float, state: FootState
) -> np.ndarray:
    """Step 6b, live without a plan: the pelvis drop ``(F,)`` follows the largest leg's
    ``need (F, feet)`` at once when it grows and comes back up on a spring
    (``live.pelvis_halflife``)."""
    drop = np.empty(len(need))
    rate = spring_rate(ctx.options.live.pelvis_halflife, float(frame_time))
    pelvis_hold_run(need.max(axis=1, initial=0.0), 0.01 * ctx.unit, rate, state.pelvis, drop)
    return drop


def plan_pelvis(
    ctx: FootContext,
    need: np.ndarray,
    axes: BodyAxes,
    frame_time: float,
    rise: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Step 6b, offline: the pelvis drop ``(F,)`` and the body's further pitch ``(F,)``
    (radians, front up) that meet each leg's ``need (F, feet)``.

    The drop is a smooth upper envelope of the largest need
    (:func:`~ikrig.signal.filters.upper_envelope` over ``plan.pelvis_window``): never less
    than a leg needs, equal to it where the need holds steady, and coming down ahead of a
    rise and back up after it without kinks, so a leg nearing its reach slows down instead
    of stopping at once (a knee pop).

    A body with two ends (``axes.share``, :func:`~.pitch.body_axes`: a quadruped) takes
    that envelope at each end instead: over the legs ahead of the middle of its hips and
    over those behind it. The body then comes down along the line through the two ends (the
    drop at the pelvis, the pitch its slope), so a hind leg that cannot reach lowers the
    hind end, not the front legs with it. An end all of whose feet are free also comes up
    by the smooth upper envelope of their ``rise (F, feet)`` (:func:`~.carry.rise_needs`,
    NaN for a foot that plants), less its drop: nothing planted holds it down, and its
    feet land nearer their recorded legs. A biped (share 0) has the one envelope, no pitch
    and no rise.
    """
    window = round(ctx.options.plan.pelvis_window / frame_time)
    drop = upper_envelope(need.max(axis=1, initial=0.0), window)
    along, share = axes.along, axes.share
    if not np.any(share):  # a biped: one envelope
        return drop, np.zeros(len(drop))
    front = along >= 0.5 * (along.min(axis=1) + along.max(axis=1))[:, None]
    d_front, a_front = _end_drop(need, along, front, window, rise)
    d_hind, a_hind = _end_drop(need, along, ~front, window, rise)
    slope = (d_front - d_hind) / np.maximum(a_front - a_hind, 1e-9 * ctx.unit)
    drop = drop + share * (d_hind - a_hind * slope - drop)
    return drop, share * np.arcsin(np.clip(-slope, -1.0, 1.0))


def _end_drop(
    need: np.ndarray, along: np.ndarray, end: np.ndarray, window: int, rise: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """One end of a long body (:func:`plan_pelvis`): the smooth upper envelope ``(F,)`` of
    the largest ``need`` of its legs (``end (F, feet)`` bool), less that of their ``rise``
    where every one of them is free, and their mean place along the body ``(F,)``."""
    drop = upper_envelope(np.where(end, need, 0.0).max(axis=1, initial=0.0), window)
    if rise is not None:
        free = np.all(~np.isnan(rise) | ~end, axis=1)
        up = upper_envelope(np.where(end & free[:, None], rise, 0.0).max(axis=1), window)
        drop = drop - up
    return drop, np.sum(np.where(end, along, 0.0), axis=1) / np.maximum(end.sum(axis=1), 1)
