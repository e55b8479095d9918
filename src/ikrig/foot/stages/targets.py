"""Step 5 (5a and 5b): how far the root moves up, and the ankle targets; offline, the root
as a plan (:func:`plan_root`).

Each recipe (:mod:`ikrig.foot.recipes`) picks one target step; all share the signature
``(ctx, goals, state, halflife) -> (root_offset (F,), targets_world (F, feet, 3), found
(F, feet))``, where ``found`` says where the ground was found (the IK blends out
elsewhere) and ``halflife`` is the live target spring (0 offline, where the planned offsets
are smooth already; only :func:`full_targets` has one).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..._jit.setup import njit
from ...signal.filters import zero_lag_smooth
from ...signal.springs import (
    SpringBank,
    as_lanes,
    lane,
    smooth,
    spring_advance,
    spring_bank,
    spring_rate,
)
from ..context import UP, FootContext
from .goals import FootGoals, ground_heights
from .swing import KEEP_DIP

if TYPE_CHECKING:
    from ..state import FootState
    from .pitch import BodyAxes

ROOT_FLOOR_WEIGHT = 0.02
"""Weight of every foot in the root's soft minimum besides its pin (so a character in the
air follows its feet too)."""

Targets = tuple[np.ndarray, np.ndarray, np.ndarray]
"""``(root_offset (F,), targets_world (F, feet, 3), found (F, feet))``."""


@njit(cache=True)
def root_run(offsets, weights, softness, rate, spring, out):
    """Step 5a: how far the character moves up, smoothed.

    A soft minimum (width ``softness``) of the feet's ``offsets (F, K)``, weighted by
    ``weights (F, K)`` plus :data:`ROOT_FLOOR_WEIGHT` (so a character in the air follows its
    feet too): the lower planted foot keeps its leg's extension and the higher one bends, as
    a person on stairs does, and a foot lifted or placed hands over smoothly. Then one
    spring (``spring (lanes, 1)``: frame ``f`` uses lane ``f % lanes``; ``rate``).
    ``out (F,)``.
    """
    r = rate[0]
    for f in range(offsets.shape[0]):
        low = offsets[f, 0]
        for k in range(1, offsets.shape[1]):
            low = min(low, offsets[f, k])
        num = 0.0
        den = 0.0
        for k in range(offsets.shape[1]):
            w = weights[f, k] + ROOT_FLOOR_WEIGHT
            num += w * math.exp(-(offsets[f, k] - low) / softness)
            den += w
        goal = low - softness * math.log(num / den)
        out[f] = spring_advance(lane(spring, f), 0, goal, r)


def root_offsets(
    ctx: FootContext,
    offsets: np.ndarray,
    weights: np.ndarray,
    frame_time: float,
    spring: SpringBank,
) -> np.ndarray:
    """Step 5a: the root's vertical offset ``(F,)`` following the feet's ``offsets (F, feet)``
    where they are planted (``weights (F, feet)``), on the root spring ``spring``."""
    rate = spring_rate(ctx.options.root.halflife, float(frame_time))
    return _soft_root(ctx, offsets, weights, rate, spring)


def _soft_root(
    ctx: FootContext, offsets: np.ndarray, weights: np.ndarray, rate: np.ndarray, spring: SpringBank
) -> np.ndarray:
    """:func:`root_run` with the context's softness, on a spring of ``rate``."""
    out = np.empty(len(offsets))
    root_run(
        np.ascontiguousarray(offsets, dtype=np.float64),
        np.ascontiguousarray(weights, dtype=np.float64),
        ctx.options.root.softness * ctx.unit,
        rate,
        as_lanes(spring, 1),
        out,
    )
    return out


ROOT_WINDOW = 2.0
"""Offline, the root of a body whose hips lie across it (a biped) follows its goal (the
soft minimum of step 5a) through a zero-lag window of this many times ``root.halflife``
either side, not the live spring. The spring lags a climb by 1.4 half-lives (0.22 s): up
the stairs and the slope the legs folded under the late body, a crouch of up to 20 % of a
leg more than recorded (bandai2_run_normal up the stairs). Measured over the 12 shared BVH
clips with the pelvis window of 0.12 s (leg fold, mean and largest, % of a leg; the
pelvis's vertical acceleration, largest ratio to the source's): up the stairs 6.9 and 19.8
with the spring, 5.2 and 10.5 at 2 (up the slope 4.9 and 17.8, 3.4 and 9.2), the
acceleration at most 2.7 (aalto_walk_slow on the blocks; 2.2 with the spring); at 1, 4.8
and 9.4 up the stairs, but an acceleration of 3.35. The window anticipates a climb as much
as it trails it, and the pelvis drop (step 6b) keeps every leg within reach; what it costs
is a planted joint held up a little more at a push-off up the stairs, where step 7 smooths
the knee of a body that now rises on time (the largest height deviation of a planted
joint: xia_old_run 1.8 -> 2.9 % of a leg, for a frame or two, its float mean 0.94 -> 1.0).
A long body (:func:`~.pitch.body_axes`) keeps the spring by its share: its pitch and
two-end drop were measured with it, and without it the Fox's walk up the slope floated
2.17 % of a leg (its goal 2.15), its run 1.12-1.14 (goal 1.10), and the trot's ankle stood
1.27 % off its recorded height up the stairs (bar 1.0)."""


def plan_root(
    ctx: FootContext, goals: FootGoals, root_offset: np.ndarray, axes: BodyAxes
) -> np.ndarray:
    """Step 5a offline (recipes whose root follows the planted feet): the root's vertical
    offset ``(F,)`` as a plan, without lag: the soft minimum of step 5a with no spring,
    smoothed by a zero-lag window of :data:`ROOT_WINDOW` half-lives; blended by
    ``axes.share`` towards ``root_offset (F,)``, the spring's (as :func:`keep_root` smooths
    it)."""
    if np.all(axes.share >= 1.0):
        return keep_root(ctx, goals, root_offset, axes)
    weights = goals.pins * goals.found
    no_spring = spring_rate(0.0, goals.frame_time)
    goal = _soft_root(ctx, ground_offsets(ctx, goals), weights, no_spring, spring_bank(1))
    radius = round(ROOT_WINDOW * ctx.options.root.halflife / goals.frame_time)
    planned = zero_lag_smooth(goal, radius)
    if not np.any(axes.share):  # a biped: the spring's root is not needed
        return planned
    kept = keep_root(ctx, goals, root_offset, axes)
    return planned + axes.share * (kept - planned)


def keep_root(
    ctx: FootContext, goals: FootGoals, root_offset: np.ndarray, axes: BodyAxes
) -> np.ndarray:
    """Step 5a offline, a recipe's own root ``root_offset (F,)`` smoothed by a zero-lag
    window of ``root.halflife`` either side (``axes``: unused)."""
    return zero_lag_smooth(root_offset, round(ctx.options.root.halflife / goals.frame_time))


@njit(cache=True)
def full_targets_run(ankles, offsets, planted, shift, rate, spring, targets):
    """Step 5b: ankle targets ``(F, K, 3)`` from the source ``ankles``, the vertical
    ``offsets (F, K)`` and the locking ``shift (F, K, 2)``. With ``rate.halflife > 0``
    (live estimates) the offsets move on a short spring (``spring``, ``K`` springs; it
    takes the last kinks out: lock switches, plant ramps) that never lets a sole sink below
    ``planted``; with 0 (a plan, already smooth) they are used as they are. ``spring``:
    ``(lanes, K)``, frame ``f`` uses lane ``f % lanes``."""
    r = rate[0]
    for f in range(ankles.shape[0]):
        bank = lane(spring, f)
        for k in range(ankles.shape[1]):
            o = offsets[f, k]
            if r.halflife > 0.0:
                o = max(spring_advance(bank, k, o, r), planted[f, k])
            targets[f, k, 0] = ankles[f, k, 0] + shift[f, k, 0]
            targets[f, k, 1] = ankles[f, k, 1] + o
            targets[f, k, 2] = ankles[f, k, 2] + shift[f, k, 1]


def ground_offsets(ctx: FootContext, goals: FootGoals) -> np.ndarray:
    """``(F, feet)`` the feet's planned offsets less what lifts a foot out of a dip below the
    clip's floor (deeper than :data:`~.swing.KEEP_DIP`): what the root follows (step 5a).
    Lifting a sinking foot mends the recording, not the ground: the leg bends for it, the
    body stays, so flat ground at the floor leaves the pelvis as recorded."""
    sink = np.maximum(-goals.source_clearance - KEEP_DIP * ctx.unit, 0.0)
    return goals.offsets - sink


def full_targets(ctx: FootContext, goals: FootGoals, state: FootState, halflife: float) -> Targets:
    """Step 5 (``full``): the root follows the ground under the planted feet
    (:func:`ground_offsets`);
    each ankle moves by its vertical offset (``goals.offsets``) and its lock shift, live on
    a short spring (``halflife``) that never lets a sole sink into the ground."""
    weights = goals.pins * goals.found
    root_offset = root_offsets(
        ctx, ground_offsets(ctx, goals), weights, goals.frame_time, state.root
    )
    targets = np.empty(goals.ankles.shape)
    full_targets_run(
        goals.ankles,
        np.ascontiguousarray(goals.offsets, dtype=np.float64),
        goals.planted,
        goals.shift,
        spring_rate(float(halflife), goals.frame_time),
        state.targets,
        targets,
    )
    return root_offset, targets, goals.found


def goal_blend_targets(
    ctx: FootContext, goals: FootGoals, state: FootState, halflife: float
) -> Targets:
    """Step 5 (``goal-blend``): the root as in :func:`full_targets`; rays from the
    hip through the ankle (limited to the leg: the current goal; unlimited: the future goal);
    the ankle goal sits above the hit by the ankle's height over the sole; the pinning
    curve blends animated and goal positions. (``halflife``: unused.)"""
    weights = goals.pins * goals.found
    root_offset = root_offsets(
        ctx, ground_offsets(ctx, goals), weights, goals.frame_time, state.root
    )
    pos_w = goals.positions_world
    shift = root_offset[:, None, None] * UP
    hips = pos_w[:, ctx.leg_joints[:, 0]] + shift
    anim = goals.ankles + shift
    d = anim - hips
    heel = ctx.sole.heights[:, 0]
    limit = ctx.leg_lengths + heel
    near = ctx.ground.raycast(hips, d, np.broadcast_to(limit, d.shape[:-1]))
    far = ctx.ground.raycast(hips, d, np.inf)
    hit = near.mask | far.mask
    point = np.where(near.mask[..., None], near.point, far.point)
    normal = np.where(near.mask[..., None], near.normal, far.normal)
    goal = point + normal * heel[:, None]
    goal = np.where(hit[..., None], goal, anim)
    w = goals.pins[..., None]
    return root_offset, anim * (1 - w) + goal * w, goals.found


def trace_offset_targets(
    ctx: FootContext, goals: FootGoals, state: FootState, halflife: float
) -> Targets:
    """Steps 5-6 (``trace-offset``, the simple game recipe): the root follows the ground
    under it, as a character controller; a trace down from each ankle, relative to the
    character, drops the body by the lower foot's offset and lifts the other foot by the
    difference; no ground within ``trace.reach`` blends that foot's IK out. Offsets move
    on springs (``trace.offset_halflife``). (``halflife``: unused.)"""
    o = ctx.options.trace
    L, floor = ctx.unit, ctx.sole.floor
    pos_w = goals.positions_world
    ankles = goals.ankles
    K = ankles.shape[1]
    ceiling = goals.ceiling
    gh_root, _, hit_root = ground_heights(ctx.ground, pos_w[:, ctx.pelvis], floor, ceiling)
    base = np.where(hit_root, gh_root - floor, 0.0)
    th, _, thit = ground_heights(ctx.ground, ankles, floor, ceiling[:, None])
    elev = th - floor - base[:, None]
    found = thit & (np.abs(elev) <= o.reach * L)
    elev = np.where(found, elev, 0.0)
    body = np.where(found.any(axis=1), np.where(found, elev, np.inf).min(axis=1), 0.0)
    goal = base[:, None] + np.concatenate([elev, body[:, None]], axis=1)
    sm = smooth(goal, goals.frame_time, o.offset_halflife, state.offsets)
    return np.ascontiguousarray(sm[:, K]), ankles + sm[:, :K, None] * UP, found
