"""Step 3d (offline): footprints that fit the ground.

A foot planted across a riser or a block's edge stands on its toe with its heel in the air
(or the other way round). Seeing each contact whole, this step slides the footprint of the
contact, by as little as it can, along the foot and across it, until the whole sole rests
on one surface (a tread, a block's top, a slope): the ground's heights under the sole then
lie on a straight line. The shift is constant through the contact (a planted foot never
slides) and moves from one footprint's shift to the next on a smootherstep during the
swing between them, so the step's length changes a little and nothing snaps.

A footprint is also slid away from a riser or a block's edge just ahead of it, or just
behind it: a foot that lifts off level, as a trot's paw does, meets the riser in the first
frames of its swing, and a paw that comes down right past a block's edge is still over the
block a frame or two before it lands. There the plan's bump has barely begun (or has
nearly ended), so the plan would lift the foot within its contact
(:func:`~.swing.plan_foot_offsets`). Only a step counts (a rise past a foot's contact
height, not a bump's flank), and the slide may neither ask the pelvis to come down further
nor take a footprint that rests on one surface onto another.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._jit.setup import njit, notify_compiling
from ...ground.views import heights_below
from ...signal.spans import spans
from ..context import FootContext
from .goals import FootGoals
from .pelvis import allowed_reach
from .swing import LIFT_ABOVE

ALONG = np.linspace(-1.0, 1.0, 17)
"""Candidate shifts along the foot, in units of ``options.plan.footprint_reach``."""
ACROSS = np.array([0.0, -0.5, 0.5])
"""Candidate shifts across the foot, in the same unit."""
STAY = int(np.flatnonzero(ALONG == 0.0)[0]) * len(ACROSS) + int(np.flatnonzero(ACROSS == 0.0)[0])
"""The candidate (flat index over :data:`ALONG` x :data:`ACROSS`) that does not move."""
SAMPLES = np.linspace(-0.1, 1.1, 9)
"""Where the ground is read from heel (0) to toe (1), a little beyond both."""
FLAT_ENOUGH = 0.004
"""A footprint whose ground departs from a straight line by less than this (leg lengths)
needs no shift."""
LEVEL_SPREAD = 0.02
"""... and whose ground's mean level, read at the start, middle and end of the contact,
spreads by less than this (leg lengths): gentle ground under a slowly sliding foot, not a
step."""
CONTACT = slice(1, 4)
"""The first, middle and last frame of a contact among the five of :func:`_footprint_frames`."""


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


class Footprint(NamedTuple):
    """What the footprints of ``spans`` contacts of one foot are judged on, at the five
    frames of :func:`_footprint_frames` (``(before, first, middle, last, after)``)."""

    sole: np.ndarray
    """``(spans, 5, S, 2)`` X and Z of the sole samples (:data:`SAMPLES`)."""
    over: np.ndarray
    """``(spans, 5, S)`` each sample's height over its planted height (world Y)."""
    kept: np.ndarray
    """``(spans, 2)`` the recorded clearance the plan keeps at the contact's first and last
    frame."""
    share: np.ndarray
    """``(spans,)`` the share of the contact an early lift would take, at most the whole
    contact: near an edge the plan's smoothing lifts a foot up to ``plan.smoothing``
    ahead, and its envelope out of the ground twice ``plan.lift_ahead`` ahead."""
    hip: np.ndarray
    """``(spans, 3, 3)`` the hip (world) at the first, middle and last frame."""
    ankle: np.ndarray
    """``(spans, 3, 3)`` the ankle (world) at the same frames."""
    leg_reach: np.ndarray
    """``(spans, 3)`` how far the leg may reach there, hip to ankle
    (:func:`~.pelvis.allowed_reach`)."""
    ceiling: np.ndarray
    """``(spans,)`` world heights above which nothing is ground."""

    def take(self, rows: np.ndarray) -> Footprint:
        """These ``rows`` of every field."""
        return Footprint(*(field[rows] for field in self))


def _rise(heights: np.ndarray, print_: Footprint) -> np.ndarray:
    """``(...)`` how far (world units) the plan would have to lift the foot, more than the
    recording does, for its sole to clear the ground where it is still low before landing
    or after lifting off: the ground under it there over the ground under the footprint,
    the larger of the two. ``heights (..., 5, S)`` the ground under :attr:`Footprint.sole`."""
    clear = np.min(print_.over - heights, axis=-1)  # (..., 5) the sole over the ground
    kept = np.maximum(print_.kept, 0.0)
    landing = clear[..., 1] - kept[..., 0] - clear[..., 0]
    lifting = clear[..., 3] - kept[..., 1] - clear[..., 4]
    return np.maximum(landing, lifting)


def _drop(print_: Footprint, shift: np.ndarray) -> np.ndarray:
    """``(..., 3)`` how far the pelvis must come down at the first, middle and last frame
    for the leg to reach its footprint moved by ``shift (..., 2)`` (X, Z), as
    :func:`~.pelvis.pelvis_drop` reckons it. The fields of ``print_`` broadcast against
    ``shift``'s batch shape."""
    gap = print_.hip - print_.ankle  # (..., 3, 3)
    dx, dz = gap[..., 0] - shift[..., None, 0], gap[..., 2] - shift[..., None, 1]
    upright = np.sqrt(np.maximum(print_.leg_reach**2 - dx * dx - dz * dz, 0.0))
    return np.maximum(gap[..., 1] - upright, 0.0)


def _rise_cost(heights: np.ndarray, print_: Footprint, unit: float, step: float) -> np.ndarray:
    """``(...)`` leg lengths: the ground rising ahead of a footprint (or behind it) past
    :data:`~.swing.LIFT_ABOVE` (:func:`_rise`), times the share of the contact that the
    plan's lift ahead would float (:attr:`Footprint.share`). A rise of ``step`` or less (a
    foot's contact height, data units) is no step but gentle ground (a bump's flank), which
    the plan's swing bump takes as the foot lands or lifts off: it costs nothing."""
    rise = _rise(heights, print_)
    return np.where(rise > step, rise / unit - LIFT_ABOVE, 0.0) * print_.share


def _cost(heights: np.ndarray, print_: Footprint, unit: float, step: float) -> np.ndarray:
    """``(...)`` leg lengths past what a footprint may have: the larger of its ground past
    flat enough through the contact (:func:`_excess`) and :func:`_rise_cost`."""
    flat = _excess(heights[..., CONTACT, :], unit)
    return np.maximum(flat, _rise_cost(heights, print_, unit, step))


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
    gives way, or a recorded slide, moves it a little within the contact), and where the
    foot is still near its floor before and after it (:func:`_footprint_frames`); each
    candidate shift is judged at all five (:func:`_cost`)."""
    F, K = goals.contacts.shape
    reach = ctx.options.plan.footprint_reach * ctx.unit
    out = np.zeros((F, K, 2))
    if reach <= 0.0:
        return out
    step = ctx.options.contacts.height_off * ctx.unit
    low = goals.source_clearance <= step
    radius = int(round(ctx.options.plan.smoothing / goals.frame_time))
    lift = max(int(round(ctx.options.plan.lift_ahead / goals.frame_time)), 1)
    band = 0.01 * ctx.unit  # (as the pelvis steps reckon it)
    for k in range(K):
        runs = spans(goals.contacts[:, k])
        if not runs:
            continue
        when = _footprint_frames(runs, low[:, k], radius)  # (spans, 5)
        share = np.minimum((radius + 2.0 * lift) / np.diff(runs, axis=1)[:, 0], 1.0)
        print_ = _footprints(ctx, goals, k, when, share, band)
        heel, toe = print_.sole[:, 2, 0], print_.sole[:, 2, -1]  # the middle frame's
        axis = toe - heel
        length = np.linalg.norm(axis, axis=-1, keepdims=True)
        along = np.where(length > 1e-9, axis / np.maximum(length, 1e-12), [1.0, 0.0])
        across = along[:, ::-1] * [-1.0, 1.0]
        picked = np.zeros((len(runs), 2))
        # a footprint that fits already stays (no other candidate costs 0)
        h, _, hit = heights_below(ctx.ground, print_.sole, print_.ceiling[:, None, None])
        misfit = (_cost(h, print_, ctx.unit, step) > 0.0) | ~hit.all(axis=(-2, -1))
        if misfit.any():
            picked[misfit] = _best_shifts(
                ctx, print_.take(misfit), (along[misfit], across[misfit]), reach, step
            )
        out[:, k] = _through_time(runs, picked, F)
    return out


def _footprint_frames(runs: list[tuple[int, int]], low: np.ndarray, radius: int) -> np.ndarray:
    """The frames ``(spans, 5)`` each footprint is judged at: the first, middle and last
    frame of its contact, and on either side of it the farthest frame, within ``radius``,
    up to which the foot is still ``low`` (``(F,)`` bool: near its floor in the recording;
    the contact's own end frame where it is not)."""
    F, out = len(low), []
    for a, b in runs:
        before, after = a, b - 1
        while before > max(a - radius, 0) and low[before - 1]:
            before -= 1
        while after < min(b - 1 + radius, F - 1) and low[after + 1]:
            after += 1
        out.append((before, a, (a + b - 1) // 2, b - 1, after))
    return np.array(out, dtype=np.int64).reshape(-1, 5)


def _footprints(
    ctx: FootContext, goals: FootGoals, k: int, when: np.ndarray, share: np.ndarray, band: float
) -> Footprint:
    """The :class:`Footprint` of foot ``k``'s contacts at the frames ``when (spans, 5)``;
    ``band`` the width of the reach's smooth maximum (:func:`~.pelvis.allowed_reach`)."""
    points = goals.points[when, k]  # (spans, 5, 2, 3) heel and toe
    heel, toe = points[..., 0, :], points[..., 1, :]
    # (spans, 5, S, 3): the sole samples at each of the five frames
    sole = heel[..., None, :] + SAMPLES[:, None] * (toe - heel)[..., None, :]
    h = ctx.sole.heights[k]
    planted = h[0] + SAMPLES * (h[1] - h[0])  # each sample's planted height
    kept = goals.source_clearance[when[:, [1, 3]], k]
    over = sole[..., 1] - planted
    hip = goals.positions_world[when[:, CONTACT], ctx.leg_joints[k, 0]]  # (spans, 3, 3)
    ankle = heel[:, CONTACT]
    src = goals.positions_world[when[:, CONTACT], ctx.leg_joints[k, 2]] - hip
    src = np.linalg.norm(src, axis=-1)
    length, most = float(ctx.leg_lengths[k]), ctx.options.pelvis.max_extension
    leg_reach = np.array([allowed_reach(float(r), length, most, band) for r in src.ravel()])
    return Footprint(
        sole[..., ::2], over, kept, share, hip, ankle, leg_reach.reshape(src.shape),
        goals.ceiling[when[:, 2]],
    )  # fmt: skip


def _best_shifts(
    ctx: FootContext,
    print_: Footprint,
    axes: tuple[np.ndarray, np.ndarray],
    reach: float,
    step: float,
) -> np.ndarray:
    """The cheapest shift ``(spans, 2)`` of each footprint among the :data:`ALONG` x
    :data:`ACROSS` candidates, zero where no candidate has the ground under every sample.

    Ground past flat enough (:func:`_excess`) costs 50 per leg length and distance 1 per
    leg length: the cheapest by these alone is where a footprint across an edge goes. Ground
    rising ahead (:func:`_rise_cost`) costs 50 per leg length too, but so do any pelvis drop a
    candidate adds over that one's (:func:`_drop`) and any change of the level it stands on:
    an early lift floats a foot a little for a few frames, a lowered pelvis crouches the
    body, and a footprint slid onto a block takes the body up with it. ``axes``: the
    ``(along, across)`` unit axes ``(spans, 2)`` of each footprint; ``step``: a foot's
    contact height (data units), the least rise that counts as a step."""
    along, across = axes
    n = len(print_.sole)
    # candidates (spans, A, C, 2) and the sole samples under each (spans, A, C, 5, S, 2)
    shift = reach * (
        ALONG[None, :, None, None] * along[:, None, None, :]
        + ACROSS[None, None, :, None] * across[:, None, None, :]
    )
    xz = shift[:, :, :, None, None, :] + print_.sole[:, None, None]
    h, _, hit = heights_below(ctx.ground, xz, print_.ceiling[:, None, None, None, None])
    fields = ("over", "kept", "share", "hip", "ankle", "leg_reach")
    wide = print_._replace(**{f: getattr(print_, f)[:, None, None] for f in fields})
    distance = np.linalg.norm(shift, axis=-1) / ctx.unit
    found = hit.all(axis=(-2, -1))
    flat = _excess(h[..., CONTACT, :], ctx.unit)
    edges = np.where(found, flat * 50.0 + distance, np.inf)
    first = np.argmin(edges.reshape(n, -1), axis=-1)
    drop = _drop(wide, shift).reshape(n, -1, 3)
    more = np.maximum(drop - drop[np.arange(n), first][:, None], 0.0).max(axis=-1)
    # a candidate may not take a footprint that rests on one surface onto another (a block
    # it backs up to, the next tread): the body would follow it up or down (one across an
    # edge has no surface of its own to keep)
    stand = -np.min(wide.over - h, axis=-1)[..., CONTACT].reshape(n, -1, 3)
    level = np.abs(stand - stand[np.arange(n), first][:, None]).max(axis=-1)
    resting = (flat.reshape(n, -1)[:, STAY] == 0.0) & found.reshape(n, -1)[:, STAY]
    level = np.where((level > step) & resting[:, None], level, 0.0)
    fit = np.maximum(flat, _rise_cost(h, wide, ctx.unit, step)).reshape(n, -1)
    cost = (fit + (more + level) / ctx.unit) * 50.0
    cost = np.where(found.reshape(n, -1), cost + distance.reshape(n, -1), np.inf)
    best = np.argmin(cost, axis=-1)
    picked = shift.reshape(n, -1, 2)[np.arange(n), best]
    picked[~np.isfinite(cost[np.arange(n), best])] = 0.0
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
