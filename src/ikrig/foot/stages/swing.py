"""Step 4: the vertical offset of each foot over time.

Offline (:func:`plan_foot_offsets`) every swing is planned from lift-off to landing, seeing
the whole clip; live without a plan (:func:`live_foot_offsets`) a causal estimate holds a
swinging foot at its lift-off offset, raised to clear the ground beneath it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..._jit.setup import njit
from ...signal.easing import smootherstep, smoothstep, swing_bump
from ...signal.filters import running_max, upper_envelope, zero_lag_smooth
from ...signal.spans import spans_of
from ...signal.springs import SpringBank, as_lanes, lane, spring_advance, spring_rate
from ..context import FootContext
from .goals import FootGoals

if TYPE_CHECKING:
    from ..state import FootState


LIFT_ABOVE = 0.005
"""Leg lengths: a plan this far or less below ``planted`` is held on it, deeper dips are
lifted ahead (:func:`plan_foot_offsets`)."""


KEEP_DIP = 0.018
"""Leg lengths: how deep a recorded dip below the floor is kept (:func:`plan_foot_offsets`).
Just under issue 11's largest penetration (2 % of a leg), so that a recording that sinks a
little is left as it is: the Fox's run sinks its hind paws 1.2-1.7 % at each landing, and
lifting them to 1 % raised the toes in contact, which then floated 0.14 % of a leg more
than recorded (issue 34: never worse than the source). Deeper dips (a foot that sinks 7 %
for a second) are lifted to this depth, the leg bending for it."""


class PlanHeights(NamedTuple):
    """The heights (data units) :func:`plan_foot_offsets` works with; 0 turns each off."""

    lift_above: float = 0.0
    """Deficits up to this are only held at ``planted``, not lifted ahead: the smoothing's
    own small dips must not lift a planted foot early."""
    keep_dip: float = 0.0
    """Where the animation dips below its floor by up to this the dip is kept, as recorded;
    deeper dips are kept to this depth."""
    free_height: float = 0.0
    """The clearance from which a foot without contacts is smoothed in full; below it the
    smoothing fades out towards the ground (0: smoothed everywhere)."""
    max_bump: float = 0.0
    """The highest a swinging foot is lifted above its path from lift-off to landing to
    clear the ground (0: never)."""


NO_HEIGHTS = PlanHeights()
"""Every height of :class:`PlanHeights` off."""


@njit(cache=True)
def plan_run(planted, clearance, contacts, ramp, keep_share, max_bump, out):
    """One foot's plan (see :func:`plan_foot_offsets`): ``planted, clearance (F,)``,
    ``contacts (F,)`` bool, ``ramp`` frames, ``keep_share`` the share of the clearance kept
    mid-contact, ``max_bump`` in data units; ``out (F,)``."""
    starts, ends = spans_of(contacts)
    # in contact, and where no contact bounds the air phase (before the first, after the
    # last): the ground under the foot plus the animation's own clearance
    stance = np.empty_like(planted)
    for f in range(len(planted)):  # (loops, not array expressions: these compile faster)
        stance[f] = planted[f] + clearance[f]
        out[f] = stance[f]
    give = 1.0 - keep_share
    for i in range(len(starts)):  # what is given up of the clearance, blended out mid-contact
        s, e = starts[i], ends[i]
        for f in range(s, e):
            keep = 1.0 - give * smootherstep((f - s + 1) / ramp) * smootherstep((e - f) / ramp)
            stance[f] = planted[f] + clearance[f] * keep
            out[f] = stance[f]
    # air phases between two contacts: from the lift-off offset to the landing offset
    for i in range(1, len(starts)):
        a, b = ends[i - 1] - 1, starts[i]
        if b <= a + 1:
            continue
        d_a, d_b = stance[a], stance[b]
        span = b - a
        amp = 0.0
        for f in range(a + 1, b):
            u = (f - a) / span
            base = d_a + (d_b - d_a) * smootherstep(u)
            # near lift-off and landing the foot is still on the ground: a scuff there is
            # not worth a high bump (shape ~ 0), so the amplitude divides by at least 0.25
            amp = max(amp, max(planted[f] - base, 0.0) / max(swing_bump(u), 0.25))
        amp = min(amp, max_bump)
        for f in range(a + 1, b):
            u = (f - a) / span
            out[f] = d_a + (d_b - d_a) * smootherstep(u) + amp * swing_bump(u)


def plan_foot_offsets(
    planted: np.ndarray,
    source_clearance: np.ndarray,
    contacts: np.ndarray,
    ramp_frames: float,
    smooth_frames: int = 0,
    heights: PlanHeights = NO_HEIGHTS,
    keep_share: float = 1.0,
    lift_frames: int | None = None,
) -> np.ndarray:
    """Offline: the vertical offset of each foot over the whole clip.

    In contact a foot stands on the ground plus the animation's own clearance over its floor
    (``source_clearance``): as high over the ground as it stood over its recorded floor, so
    flat ground at the floor leaves it as recorded. With ``keep_share < 1`` the rest of the
    clearance is blended out over ``ramp_frames`` after the contact starts and back in
    before it ends (``keep_share = 0``: heel strike and push-off keep the animation's
    motion while a flat foot stands exactly on the ground). Between two contacts the offset
    moves from the lift-off value to the landing value on a smootherstep (zero velocity and
    acceleration at both ends), plus a smooth bump just high enough that the sole clears
    the ground all along (``planted``, the offset at which the sole would touch it), at
    most ``heights.max_bump``. Before the first and after the last contact (a clip that starts or
    ends mid-stride) the foot follows the ground under it, keeping the animation's own
    clearance: it never holds a landing height it has not reached yet.

    Last, the whole plan is smoothed without lag (:func:`~ikrig.signal.filters.zero_lag_smooth`,
    half-width ``smooth_frames``) and lifted wherever it is below ``planted`` by a smooth
    upper envelope of the deficit (half-width ``lift_frames``), which starts rising twice
    that ahead (a toe that reaches a riser's edge right after lift-off, where the bump is
    still low) and is gone twice that after (the smoothing cuts the corner of a landing
    onto higher ground, and a long envelope floats the landed foot). The smoothing
    rounds off the plan's kinks (plant ramps, the lowest sole point switching, a foot
    slapping flat), which show as knee pops. Out of contact a foot keeps its exact
    ground-following offset where it is near the ground, the smoothed one from
    ``free_height`` of clearance up (blended by smoothstep): with no stance held level,
    averaging in the ground under its other frames would lift it off the ground just where
    it touches it (a paw that slides back and forth on a slope, never slow enough to count
    as a contact, or one that touches down after its contact ends). In contact, and near a
    step in the ground under it (a riser's edge), the plan is smoothed: the smoothing's lift
    ahead of a riser is what keeps a foot out of it. Elsewhere in contact the smoothing may
    round the plan off but lift it by at most ``lift_above`` over the exact plan (unless the
    recording dips deeper than that below its floor, a kink to round off): in a contact
    shorter than the window (a paw's two frames in an 18-frame cycle) the window averages in
    the swing around it and held the paw off the slope it stands on. Around a landing onto a
    step (a riser crossed within the window before it, none under the foot within the window
    after it) whose planned swing clears the ground on its own, the smoothing fades out
    towards the landing frame (:func:`_edge_fades`): the swing's descent is already smooth,
    and averaging it into the first frames of the contact floated the landed foot (up to 3 %
    of a leg for 4 frames on a tread of the built-in stairs). The same holds, in reverse, at
    a lift-off from a step: the smoothing averaged the swing's rise into the contact's last
    frames and lifted the foot before it left (a trot's front paw on a tread, 2.2 % of a leg
    at its last contact frame). Only a swing between two contacts fades: before a clip's
    first contact and after its last one there is no planned swing, only the ground under
    the foot, whose jump at a riser the smoothing has to round off. Offline it replaces
    the causal target spring (``live.target_halflife``), whose lag lets a path sink below
    ``planted`` where that rises. The lift is rarely active: a symmetric window lowers a
    curve only near its peaks, and there by a second-order amount, while the kinks of
    ``planted`` (a maximum over sole samples) point upwards.

    Args:
        planted: ``(F, feet)`` offsets at which each foot's sole touches the ground.
        source_clearance: ``(F, feet)`` the animation's clearance over its own floor
            (negative where it dips below it).
        contacts: ``(F, feet)`` bool.
        ramp_frames: frames over which the clearance is blended out and back in.
        smooth_frames: half-width (frames) of the final zero-lag smoothing (0: off).
        heights: :class:`PlanHeights` (data units).
        keep_share: the share of the clearance a foot keeps mid-contact, in ``[0, 1]``.
        lift_frames: half-width (frames) of the envelope that lifts the plan out of the
            ground (None: ``smooth_frames``).

    Returns:
        ``(F, feet)`` offsets. A foot with no contact at all follows the ground under it.
    """
    lift_above, keep_dip, free_height, max_bump = heights
    # a shallow dip below the floor (mocap noise, up to ``keep_dip``) is the recorded height
    # and stays; a deeper one is lifted out of the ground
    signed = np.asarray(source_clearance, dtype=np.float64)
    planted = np.asarray(planted, dtype=np.float64) + np.clip(signed, -keep_dip, 0.0)
    clearance = np.maximum(signed, 0.0)
    flags = np.asarray(contacts, dtype=np.bool_)
    out = np.empty(planted.shape[::-1])  # (feet, F): one contiguous row per foot
    ramp = max(float(ramp_frames), 1.0)
    for k in range(planted.shape[1]):
        plan_run(
            np.ascontiguousarray(planted[:, k]),
            np.ascontiguousarray(clearance[:, k]),
            np.ascontiguousarray(flags[:, k]),
            ramp,
            float(keep_share),
            float(max_bump),
            out[k],
        )
    out = out.T
    if smooth_frames >= 1:
        planned = out
        smoothed = zero_lag_smooth(out, smooth_frames)
        if free_height > 0:  # out of contact, near the ground: the ground under the foot
            out = np.where(flags, out, planted + clearance)
        steps = _steps(out, free_height)
        edge = _near_edges(steps, smooth_frames)
        # a foot standing on smooth ground (no edge near, no deep recorded dip to round
        # off) is not lifted off it by the smoothing: in a contact shorter than the window
        # the window averages in the swing around it
        held = flags & ~edge & (signed >= -lift_above)
        smoothed = np.where(held, np.minimum(smoothed, out + lift_above), smoothed)
        weight = _smoothing_weights(clearance, flags, free_height, edge)
        out = out + weight * (smoothed - out)
        # near a landing onto a step or a lift-off from one, the planned swing (when it
        # clears the ground)
        clears = planned >= planted - lift_above
        out = planned + _edge_fades(clears, steps, flags, smooth_frames) * (out - planned)
    # where the sole would still cut into the ground (a toe reaching a riser's edge right
    # after lift-off), lift the foot by a smooth envelope of the deficit that starts
    # rising ahead of it, instead of snapping it up there
    deficit = planted - out
    deficit = np.where(deficit > lift_above, deficit, 0.0)
    if deficit.any():
        lift = smooth_frames if lift_frames is None else lift_frames
        out = out + upper_envelope(deficit, max(lift, 1))
    return np.maximum(out, planted)


def _steps(plan: np.ndarray, height: float) -> np.ndarray:
    """``(F, feet)`` bool: a step in the ground under the foot into each frame (``plan``
    changing by more than ``height`` from the frame before: a riser's edge). All False when
    ``height <= 0``."""
    step = np.zeros(plan.shape, dtype=bool)
    if height > 0:
        step[1:] = np.abs(np.diff(plan, axis=0)) > height
    return step


def _near_edges(steps: np.ndarray, radius: int) -> np.ndarray:
    """``(F, feet)`` bool: within ``radius`` frames of a step (:func:`_steps`)."""
    edge = steps.copy()
    edge[:-1] |= steps[1:]
    return running_max(edge.astype(np.float64), radius) > 0  # (the float64 kernel)


def _edge_fades(
    clears: np.ndarray, steps: np.ndarray, contacts: np.ndarray, radius: int
) -> np.ndarray:
    """``(F, feet)`` in [0, 1]: the share of the smoothing each frame keeps (see
    :func:`plan_foot_offsets`), around landings and lift-offs (:func:`_landing_fades` of the
    clip and of the clip run backwards)."""
    back = np.zeros_like(steps)
    back[:-1] = steps[1:]  # a step into frame f + 1 is, backwards, one into frame f
    lift_offs = _landing_fades(clears[::-1], back[::-1], contacts[::-1], radius)[::-1]
    return np.minimum(_landing_fades(clears, steps, contacts, radius), lift_offs)


def _landing_fades(
    clears: np.ndarray, steps: np.ndarray, contacts: np.ndarray, radius: int
) -> np.ndarray:
    """``(F, feet)`` in [0, 1]: the share of the smoothing each frame keeps around landings.
    1 except around a landing (a contact's first frame ``b``, after an earlier contact)
    with a step (:func:`_steps`) in ``[b - radius, b]``, none in ``(b, b + radius]``, and
    the planned swing clearing the ground (``clears (F, feet)`` bool) over ``[b - radius,
    b)``: there ``smoothstep(|f - b| / radius)``, 0 at the landing."""
    fade = np.ones(contacts.shape)
    F = len(contacts)
    landing = contacts.copy()
    landing[:1] = False
    landing[1:] &= ~contacts[:-1]
    zero = np.zeros((1, contacts.shape[1]), dtype=np.int64)
    n_steps = np.concatenate([zero, np.cumsum(steps, axis=0)])  # steps before each frame
    n_cuts = np.concatenate([zero, np.cumsum(~clears, axis=0)])
    b, k = np.nonzero(landing)
    lo, hi = np.maximum(b - radius, 0), np.minimum(b + radius + 1, F)
    crossed = n_steps[b + 1, k] > n_steps[lo, k]
    ahead = n_steps[hi, k] > n_steps[b + 1, k]
    cuts = n_cuts[b, k] > n_cuts[lo, k]
    swung = np.cumsum(contacts, axis=0)[b, k] > 1  # (this landing's frame, and one before)
    keep = crossed & ~ahead & ~cuts & swung
    b, k = b[keep], k[keep]
    for off in range(1 - radius, radius):
        f = b + off
        ok = (f >= 0) & (f < F)
        np.minimum.at(fade, (f[ok], k[ok]), smoothstep(np.float64(abs(off) / radius)))
    return fade


def _smoothing_weights(
    clearance: np.ndarray, contacts: np.ndarray, height: float, edge: np.ndarray
) -> np.ndarray:
    """``(F, feet)`` how much of the smoothed plan each frame takes (see
    :func:`plan_foot_offsets`): 1 in contact; out of contact 0 on the ground and 1 from
    ``height`` of ``clearance`` up (smoothstep), but 1 near an ``edge`` (:func:`_near_edges`),
    where the smoothing's lift keeps it out of the riser. All 1 when ``height <= 0``."""
    if not height > 0:
        return np.ones_like(clearance)
    return np.where(edge | contacts, 1.0, smoothstep(clearance / height))


def plan_offsets(ctx: FootContext, goals: FootGoals) -> np.ndarray:
    """Step 4, offline: every foot's vertical offset ``(F, feet)`` over the whole clip
    (:func:`plan_foot_offsets` with the context's plan options)."""
    o, dt = ctx.options.plan, goals.frame_time
    return plan_foot_offsets(
        goals.planted,
        goals.source_clearance,
        goals.contacts,
        o.plant_ramp / dt,
        round(o.smoothing / dt),
        PlanHeights(
            LIFT_ABOVE * ctx.unit,
            KEEP_DIP * ctx.unit,
            ctx.options.contacts.height_off * ctx.unit,
            o.max_swing_bump * ctx.unit,
        ),
        o.plant_clearance,
        round(o.lift_ahead / dt),
    )


@njit(cache=True)
def swing_run(planted, stance, contacts, rate, held, spring, out):
    """Live, without a plan (see :func:`live_foot_offsets`): ``planted, stance (F, K)``,
    ``contacts (F, K)`` bool, ``rate`` the spring's ``(1,)``
    :data:`~ikrig.signal.springs.RATE`, ``held (lanes, K)`` and ``spring`` (``(lanes,
    K)`` springs) in place (frame ``f`` uses lane ``f % lanes``), ``out (F, K)``."""
    r = rate[0]
    for f in range(planted.shape[0]):
        last, bank = lane(held, f), lane(spring, f)
        for k in range(planted.shape[1]):
            if contacts[f, k] or last[k] != last[k]:
                last[k] = stance[f, k]
            goal = stance[f, k] if contacts[f, k] else max(last[k], planted[f, k])
            x = spring_advance(bank, k, goal, r)
            out[f, k] = stance[f, k] if contacts[f, k] else max(x, planted[f, k])


def live_foot_offsets(
    goals: FootGoals, halflife: float, held: np.ndarray, spring: SpringBank
) -> np.ndarray:
    """Live (no plan): a causal estimate of :func:`plan_foot_offsets`, ``(F, feet)``.

    In contact the foot stands on the ground (``goals.stance``); in the air it holds its
    lift-off offset, raised to clear the ground (``goals.planted``), on a spring
    (``halflife``) that never lags below the ground. Without knowing where the foot will
    land this is reactive: rising ground lifts the foot as it arrives over it. ``held
    (feet,)``: the last stance offsets (NaN at the start) and ``spring``, in place.
    """
    out = np.empty(goals.planted.shape)
    feet = int(goals.planted.shape[-1])
    swing_run(
        np.ascontiguousarray(goals.planted, dtype=np.float64),
        np.ascontiguousarray(goals.stance, dtype=np.float64),
        np.ascontiguousarray(goals.contacts, dtype=np.bool_),
        spring_rate(float(halflife), float(goals.frame_time)),
        held.reshape(-1, feet),
        as_lanes(spring, feet),
        out,
    )
    return out


def live_offsets(ctx: FootContext, goals: FootGoals, state: FootState) -> np.ndarray:
    """Step 4, live without a plan: :func:`live_foot_offsets` with the context's
    ``live.swing_halflife`` and the state's swing spring."""
    return live_foot_offsets(goals, ctx.options.live.swing_halflife, state.swing_held, state.swing)
