"""Step 3d (offline): footprints that fit the ground.

A foot planted across a riser or a block's edge stands on its toe with its heel in the air
(or the other way round). Seeing each contact whole, this step slides the footprint of the
contact, by as little as it can, along the foot and across it, until the whole sole rests
on one surface (a tread, a block's top, a slope): the ground's heights under the sole then
lie on a straight line. The shift is constant through the contact (a planted foot never
slides) and moves from one footprint's shift to the next on a smootherstep during the
swing between them, so the step's length changes a little and nothing snaps.
"""

from __future__ import annotations

import numpy as np

from ..._jit.setup import njit, notify_compiling
from ...ground.views import heights_below
from ...signal.spans import spans
from ..context import FootContext
from .goals import FootGoals

ALONG = np.linspace(-1.0, 1.0, 17)
"""Candidate shifts along the foot, in units of ``options.plan.footprint_reach``."""
ACROSS = np.array([0.0, -0.5, 0.5])
"""Candidate shifts across the foot, in the same unit."""
SAMPLES = np.linspace(-0.1, 1.1, 9)
"""Where the ground is read from heel (0) to toe (1), a little beyond both."""
FLAT_ENOUGH = 0.004
"""A footprint whose ground departs from a straight line by less than this (leg lengths)
needs no shift."""
LEVEL_SPREAD = 0.02
"""... and whose ground's mean level, read at the start, middle and end of the contact,
spreads by less than this (leg lengths): gentle ground under a slowly sliding foot, not a
step."""


def _unevenness(heights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far ``heights (..., n, S)`` (at :data:`SAMPLES` along the sole, at ``n`` frames of
    one contact) depart from flat: at each frame the largest residual of their straight-line
    fit, the largest over the frames; and across the frames the spread of their mean levels
    (a foot that slides off a block within its contact: flat at each frame, on two levels).
    Both ``(...)``, in the units of ``heights``."""
    h = np.ascontiguousarray(heights, dtype=np.float64)
    out = np.empty(h.shape[:-1])
    notify_compiling()
    _unevenness_kernel(h.reshape(-1, h.shape[-1]), SAMPLES - SAMPLES.mean(), out.reshape(-1))
    return out.max(axis=-1), np.ptp(h.mean(axis=-1), axis=-1)


def _excess(heights: np.ndarray, unit: float) -> np.ndarray:
    """How far past flat enough a footprint's ``heights (..., n, S)`` are (leg lengths of
    ``unit``, ``(...)``, 0 where flat enough): the residual past :data:`FLAT_ENOUGH` or the
    spread of levels past :data:`LEVEL_SPREAD` (:func:`_unevenness`), the larger."""
    residual, spread = _unevenness(heights)
    return np.maximum(np.maximum(residual / unit - FLAT_ENOUGH, spread / unit - LEVEL_SPREAD), 0)


@njit(cache=True)
def _unevenness_kernel(heights, x, out):
    """:func:`_unevenness` of each row of ``heights (n, S)`` into ``out (n,)``; ``x (S,)``
    the sample positions, centred."""
    S = len(x)
    xx = 0.0
    for s in range(S):
        xx += x[s] * x[s]
    for i in range(heights.shape[0]):
        h = heights[i]
        mean = 0.0
        for s in range(S):
            mean += h[s]
        mean /= S
        hx = 0.0
        for s in range(S):
            hx += (h[s] - mean) * x[s]
        slope = hx / xx
        worst = 0.0
        for s in range(S):
            worst = max(worst, abs(h[s] - mean - slope * x[s]))
        out[i] = worst


def footprint_shifts(ctx: FootContext, goals: FootGoals) -> np.ndarray:
    """The horizontal shift ``(F, feet, 2)`` (X, Z) of every footprint, see the module.

    A footprint is read at the first, middle and last frame of its contact (a lock that
    gives way, or a recorded slide, moves it a little within the contact): each candidate
    shift is judged at all three (:func:`_excess`)."""
    F, K = goals.contacts.shape
    reach = ctx.options.plan.footprint_reach * ctx.unit
    out = np.zeros((F, K, 2))
    if reach <= 0.0:
        return out
    for k in range(K):
        runs = spans(goals.contacts[:, k])
        if not runs:
            continue
        when = np.array([(a, (a + b - 1) // 2, b - 1) for a, b in runs])  # (spans, 3)
        heel = goals.points[when, k, 0][..., [0, 2]]  # (spans, 3, 2)
        toe = goals.points[when, k, 1][..., [0, 2]]
        axis = toe[:, 1] - heel[:, 1]  # the middle frame's
        length = np.linalg.norm(axis, axis=-1, keepdims=True)
        along = np.where(length > 1e-9, axis / np.maximum(length, 1e-12), [1.0, 0.0])
        across = along[:, ::-1] * [-1.0, 1.0]
        # (spans, 3, S, 2): the sole samples at each of the three frames
        sole = heel[:, :, None, :] + SAMPLES[:, None] * (toe - heel)[:, :, None, :]
        ceiling = goals.ceiling[when[:, 1]]
        picked = np.zeros((len(runs), 2))
        # a footprint whose ground is already flat stays (no other candidate costs 0)
        h, _, hit = heights_below(ctx.ground, sole, ceiling[:, None, None])
        uneven = (_excess(h, ctx.unit) > 0.0) | ~hit.all(axis=(-2, -1))
        if uneven.any():
            picked[uneven] = _best_shifts(
                ctx, sole[uneven], ceiling[uneven], along[uneven], across[uneven], reach
            )
        out[:, k] = _through_time(runs, picked, F)
    return out


def _best_shifts(ctx: FootContext, sole, ceiling, along, across, reach) -> np.ndarray:
    """The cheapest shift ``(spans, 2)`` of each footprint among the :data:`ALONG` x
    :data:`ACROSS` candidates: unevenness past flat enough (:func:`_excess`) costs 50 per
    leg length, distance 1 per leg length; zero where no candidate has the ground under
    every sample. ``sole (spans, n, S, 2)`` the samples' X and Z at ``n`` frames,
    ``ceiling (spans,)``, ``along``, ``across`` ``(spans, 2)`` unit axes."""
    n = len(sole)
    # candidates (spans, A, C, 2) and the sole samples under each (spans, A, C, n, S, 2)
    shift = reach * (
        ALONG[None, :, None, None] * along[:, None, None, :]
        + ACROSS[None, None, :, None] * across[:, None, None, :]
    )
    xz = shift[:, :, :, None, None, :] + sole[:, None, None, :, :, :]
    h, _, hit = heights_below(ctx.ground, xz, ceiling[:, None, None, None, None])
    cost = _excess(h, ctx.unit) * 50.0 + np.linalg.norm(shift, axis=-1) / ctx.unit
    cost = np.where(hit.all(axis=(-2, -1)), cost, np.inf)
    flat = cost.reshape(n, -1)
    best = np.argmin(flat, axis=-1)
    picked = shift.reshape(n, -1, 2)[np.arange(n), best]
    picked[~np.isfinite(flat[np.arange(n), best])] = 0.0
    return picked


def _through_time(runs: list[tuple[int, int]], shifts: np.ndarray, frames: int) -> np.ndarray:
    """Shifts ``(F, 2)``: constant through each run, a smootherstep between runs, held
    before the first and after the last."""
    out = np.empty((frames, 2))
    notify_compiling()
    _through_time_kernel(np.array(runs, dtype=np.int64), shifts, out)
    return out


@njit(cache=True)
def _through_time_kernel(runs, shifts, out):
    """:func:`_through_time` of ``runs (R, 2)`` ``[start, end)`` and ``shifts (R, 2)`` into
    ``out (F, 2)``."""
    last = runs.shape[0] - 1
    r = 0  # the run at or before frame f (the first one before any)
    for f in range(out.shape[0]):
        while r < last and runs[r + 1, 0] <= f:
            r += 1
        b = runs[r, 1]
        if f >= b and r < last and f >= runs[0, 0]:  # between run r and the next
            u = (f - (b - 1)) / (runs[r + 1, 0] - b + 1)
            s = u * u * u * (u * (6.0 * u - 15.0) + 10.0)
            for c in range(2):
                out[f, c] = shifts[r, c] + (shifts[r + 1, c] - shifts[r, c]) * s
        else:
            out[f, 0], out[f, 1] = shifts[r, 0], shifts[r, 1]


def fit_footprints(ctx: FootContext, goals: FootGoals) -> None:
    """Step 3d on ``goals`` (offline, after the sole steps): adds the footprint shifts to
    ``goals.shift`` and moves ``goals.points`` with them."""
    shift = footprint_shifts(ctx, goals)
    goals.shift = goals.shift + shift
    goals.points = goals.points.copy()
    goals.points[..., 0] += shift[:, :, None, 0]
    goals.points[..., 2] += shift[:, :, None, 1]
