"""Step 9b (offline): footprints that fit the ground.

A foot planted across a riser or a block's edge stands on its toe with its heel in the air
(or the other way round). Seeing each contact whole, this step slides the footprint of the
contact, by as little as it can, along the foot and across it, until the whole sole rests
on one surface (a tread, a block's top, a slope): the ground's heights under the sole then
lie on a straight line. The shift is constant through the contact (a planted foot never
slides) and moves from one footprint's shift to the next on a smootherstep during the
swing between them, so the step's length changes a little and nothing snaps.
"""

from __future__ import annotations

import math

import numpy as np

from ..._numba import njit
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


@njit(cache=True)
def _unevenness(h, x, xx):  # pragma: no cover
    """How far the heights ``h (S,)`` at the centred sample positions ``x (S,)`` (``xx =
    x . x``) depart from their straight-line fit: the largest absolute residual."""
    mean = 0.0
    for q in range(h.shape[0]):
        mean += h[q]
    mean /= h.shape[0]
    slope = 0.0
    for q in range(h.shape[0]):
        slope += (h[q] - mean) * x[q]
    slope /= xx
    worst = 0.0
    for q in range(h.shape[0]):
        worst = max(worst, abs(h[q] - mean - slope * x[q]))
    return worst


@njit(cache=True)
def _best_shifts(ground, shift, samples, unit, out):  # pragma: no cover
    """The least-cost shift of each footprint: ``ground = (heights, hit)``, ``(spans, A, C,
    S)`` under the sole samples of each candidate ``shift (spans, A, C, 2)``. A candidate
    with a miss is out; the cost is 50 times the unevenness beyond :data:`FLAT_ENOUGH`
    (leg lengths) plus the shift's length (leg lengths); the first of equal costs wins.
    ``out (spans, 2)``: the shift chosen, zero where every candidate is out."""
    h, hit = ground
    x = samples - np.mean(samples)
    xx = np.sum(x * x)
    for s in range(h.shape[0]):
        best = np.inf
        for a in range(h.shape[1]):
            for c in range(h.shape[2]):
                if not np.all(hit[s, a, c]):
                    continue
                bad = _unevenness(h[s, a, c], x, xx) / unit - FLAT_ENOUGH
                dx, dz = shift[s, a, c, 0], shift[s, a, c, 1]
                cost = max(bad, 0.0) * 50.0 + math.sqrt(dx * dx + dz * dz) / unit
                if cost < best:
                    best = cost
                    out[s, 0], out[s, 1] = dx, dz


def _smootherstep(u: np.ndarray) -> np.ndarray:
    """``6u^5 - 15u^4 + 10u^3`` on an array ``u`` in [0, 1]."""
    return u * u * u * (u * (6.0 * u - 15.0) + 10.0)


def footprint_shifts(ctx: FootContext, goals: FootGoals) -> np.ndarray:
    """The horizontal shift ``(F, feet, 2)`` (X, Z) of every footprint, see the module."""
    F, K = goals.contacts.shape
    reach = ctx.options.plan.footprint_reach * ctx.unit
    out = np.zeros((F, K, 2))
    if reach <= 0.0:
        return out
    for k in range(K):
        runs = spans(goals.contacts[:, k])
        if not runs:
            continue
        mids = np.array([(a + b - 1) // 2 for a, b in runs])
        heel = goals.points[mids, k, 0][:, [0, 2]]
        toe = goals.points[mids, k, 1][:, [0, 2]]
        axis = toe - heel
        length = np.linalg.norm(axis, axis=-1, keepdims=True)
        along = np.where(length > 1e-9, axis / np.maximum(length, 1e-12), [1.0, 0.0])
        across = along[:, ::-1] * [-1.0, 1.0]
        # candidates (spans, A, C, 2) and the sole samples under each (spans, A, C, S, 2)
        shift = reach * (
            ALONG[None, :, None, None] * along[:, None, None, :]
            + ACROSS[None, None, :, None] * across[:, None, None, :]
        )
        sole = heel[:, None, :] + SAMPLES[:, None] * axis[:, None, :]
        xz = shift[:, :, :, None, :] + sole[:, None, None, :, :]
        ceiling = goals.ceiling[mids][:, None, None, None]
        h, _, hit = heights_below(ctx.ground, xz, ceiling)
        picked = np.zeros((len(runs), 2))
        _best_shifts((h, np.ascontiguousarray(hit)), shift, SAMPLES, ctx.unit, picked)
        out[:, k] = _through_time(runs, picked, F)
    return out


def _through_time(runs: list[tuple[int, int]], shifts: np.ndarray, frames: int) -> np.ndarray:
    """Shifts ``(F, 2)``: constant through each run, a smootherstep between runs, held
    before the first and after the last."""
    starts = np.array([a for a, _ in runs])
    ends = np.array([b for _, b in runs])
    f = np.arange(frames)
    run = np.maximum(np.searchsorted(starts, f, side="right") - 1, 0)  # the run at or before
    out = shifts[run]
    gap = (f >= ends[run]) & (run + 1 < len(runs)) & (f >= starts[0])
    i = run[gap]
    b, c = ends[i], starts[np.minimum(i + 1, len(runs) - 1)]
    u = (f[gap] - (b - 1)) / (c - b + 1)
    out[gap] = shifts[i] + (shifts[i + 1] - shifts[i]) * _smootherstep(u)[:, None]
    return out


def fit_footprints(ctx: FootContext, goals: FootGoals) -> None:
    """Step 9b on ``goals`` (offline, after the sole steps): adds the footprint shifts to
    ``goals.shift`` and moves ``goals.points`` with them."""
    shift = footprint_shifts(ctx, goals)
    goals.shift = goals.shift + shift
    goals.points = goals.points.copy()
    goals.points[..., 0] += shift[:, :, None, 0]
    goals.points[..., 2] += shift[:, :, None, 1]
