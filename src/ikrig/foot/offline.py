"""Offline foot placement: :func:`place_feet` plants a whole clip's feet on uneven ground.

The steps, in order (each a function of :mod:`ikrig.foot.stages`; the recipe of
``options.mode`` picks the ones marked *recipe*, :mod:`ikrig.foot.recipes`). This numbering
is the one the live placer, the recipes, the state and every step's docstring use:

1. **Legs and soles**: hip, knee, ankle, toe of each leg (names, topology or ``legs=``),
   the leg length (the unit of every threshold), sole points and the clip's own floor,
   which the ground's ``y = 0`` meets (``options.datum``).
2. **Contacts**: per-foot contact and a pinning curve, or user-supplied curves.
3. **Sole goals**: (3a) the sole points; (3b) turned to the ground (*recipe*); (3c) locked
   in place (*recipe*); (3d) each contact's footprint slid onto one surface (*recipe*,
   offline); (3e) the offsets that stand them on the ground (only ground below the hips
   counts).
4. **Swings**: every foot's vertical offset, planned from lift-off to landing.
5. **Root and targets** (*recipe*): (5a) the root follows the ground under the planted
   feet (offline without lag, *recipe*); (5b) the ankle targets; (5c) a body whose hips
   lie along it (a quadruped) pitches with the ground along it (*recipe*); (5d) a foot
   that never plants is carried by its hip, out of the ground (*recipe*).
6. **Pelvis**: (6a) what the legs need (*recipe*); (6b) as a smooth upper envelope, at
   each end of a long body (which pitches further by the difference; an end whose feet
   never plant comes up part of the way their landings need).
7. **Knees** (*recipe*): the knees' corrections smoothed in time (no knee pops).
8. **Leg IK**: (8a) two-bone IK, (8b) the ankle turned, in chunks (the state carries over).
9. **Baseline**: the do-nothing baseline (root on the ground, no IK) for comparison.

:class:`FootResult.plan` gives any frame's decisions as a :class:`FramePlan`, which the
live placer (:class:`~ikrig.foot.live.FootPlacer`) replays to the same frame.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..character.legs import Legs, find_legs
from ..character.sole import FootSole, measure_sole
from ..errors import InputError
from ..ground.coverage import check_coverage
from ..pose import Motion
from ..signal.filters import zero_lag_smooth
from ..signal.springs import spring_bank
from .context import FootContext, check_clip, lift_pelvis
from .options import FootOptions
from .recipes import recipe_for
from .stages.carry import carry_free_feet, rise_needs, settle_free_feet
from .stages.contacts import detect_foot_contacts
from .stages.goals import FootGoals, plant_feet, reach_ceilings, sole_goals
from .stages.legs_ik import FrameInfo, LegPlan, solve_legs
from .stages.pelvis import plan_pelvis
from .stages.pitch import levers, pitch_goals, turn_goals, turn_pelvis
from .stages.swing import plan_offsets
from .stages.targets import root_offsets
from .state import FootState


@dataclass(frozen=True, eq=False)
class FramePlan:
    """What the offline pipeline decided for one frame, as an engine would store it with a
    clip to replay foot placement live (:meth:`FootResult.plan`).

    Attributes:
        pins: ``(feet,)`` pinning weights; contacts: ``(feet,)`` bool.
        root_offset: the root's vertical offset, pelvis drop included (clip units).
        pelvis_drop: the pelvis drop part of it.
        targets_world: ``(feet, 3)`` ankle targets.
        ground_found: ``(feet,)`` bool, the ground was found (IK weight goal).
        pitch: radians, front up: the body's turn with the ground (0 for a biped; step 5c).
    """

    pins: np.ndarray
    contacts: np.ndarray
    root_offset: float
    pelvis_drop: float
    targets_world: np.ndarray
    ground_found: np.ndarray
    pitch: float = 0.0


@dataclass(frozen=True, eq=False)
class FootResult:
    """Offline result: the clip, the baseline (root on ground, no IK), and what was used.

    Attributes:
        motion: the new clip.
        baseline: the do-nothing baseline clip (root following the ground, no IK).
        legs, sole: step 1 as used.
        contacts: ``(F, feet)`` bool; pins: ``(F, feet)`` pinning curve.
        info: :class:`~ikrig.foot.stages.legs_ik.FrameInfo` of the result.
        offsets: ``(F, feet)`` the planned vertical foot offsets (step 4; a foot that never
            plants: where its hip carries it, step 5d).
        datum: how far the given ground was raised to meet the clip (its floor with
            ``datum="clip"``, else 0), in clip units.
    """

    motion: Motion
    baseline: Motion
    legs: Legs
    sole: FootSole
    contacts: np.ndarray
    pins: np.ndarray
    info: FrameInfo
    offsets: np.ndarray
    datum: float

    def plan(self, frame: int) -> FramePlan:
        """Frame ``frame`` of the result as a :class:`FramePlan` for
        :meth:`~ikrig.foot.live.FootPlacer.update`, which then reproduces it."""
        i = self.info
        return FramePlan(
            self.pins[frame],
            self.contacts[frame],
            float(i.root_offset[frame]),
            float(i.pelvis_drop[frame]),
            i.targets_world[frame],
            i.ground_found[frame],
            float(i.pitch[frame]),
        )


def _user_contacts(clip: Motion, feet: int, contacts: Any) -> tuple[np.ndarray, np.ndarray]:
    """Contact flags and pins ``(F, feet)`` from a user-supplied pinning curve, or from a
    ``(flags, pins)`` pair as :func:`~ikrig.foot.detect_foot_contacts` gives."""
    pair = isinstance(contacts, tuple) and len(contacts) == 2
    flags, pins = contacts if pair else (None, contacts)
    pins = np.asarray(pins, dtype=np.float64)
    if pins.shape != (clip.num_frames, feet):
        raise InputError(f"contacts: expected shape ({clip.num_frames}, {feet}), got {pins.shape}")
    pins = np.clip(pins, 0.0, 1.0)
    if not pair:
        return pins > 0.5, pins
    flags = np.asarray(flags)
    if flags.shape != pins.shape or flags.dtype != bool:
        raise InputError(
            f"contacts flags: expected bool {pins.shape}, got {flags.dtype} {flags.shape}"
        )
    return flags, pins


PROGRESS_FRAMES = 4096
"""Step 8 shows a progress bar (when asked) on clips longer than this."""


def _chunks(frames: int, chunk: int, progress: bool) -> Any:
    out = [(a, min(a + chunk, frames)) for a in range(0, frames, max(int(chunk), 1))]
    if progress and frames > PROGRESS_FRAMES:
        from tqdm import tqdm

        return tqdm(out, desc="foot placement", unit="chunk", leave=False)
    return out


def place_feet(
    clip: Motion,
    ground: Any,
    options: FootOptions | None = None,
    legs: Legs | str | None = None,
    contacts: Any = None,
    progress: bool = False,
    chunk: int = PROGRESS_FRAMES,
    fk: tuple[np.ndarray, np.ndarray] | None = None,
) -> FootResult:
    """Plant a clip's feet on ``ground`` (the offline pipeline).

    Args:
        clip: a clip, batch shape ``(F,)``, with ``frame_time``.
        ground: a ground from :mod:`ikrig.ground` (``height_at``, ``raycast``), in the clip's
            world coordinates and units.
        options: :class:`~ikrig.foot.options.FootOptions`.
        legs: :class:`~ikrig.character.legs.Legs`, an override string
            ``"hip,knee,ankle[,toe];..."``, or None to find them by name and topology.
        contacts: ``(F, feet)`` user-supplied pinning curve in [0, 1] (contacts where > 0.5),
            a ``(flags, pins)`` pair of ``(F, feet)`` arrays (bool flags, pins in [0, 1]),
            or None to detect them.
        progress: show a progress bar (tqdm) on clips longer than :data:`PROGRESS_FRAMES`.
        chunk: frames per batch of step 8 (its temporaries are a few dozen bytes per frame
            of a batch; each batch costs about 0.1 ms): by default a whole clip of up to
            :data:`PROGRESS_FRAMES` frames at once. The state carries over, so the result
            does not depend on it.
        fk: the clip's world rotations ``(F, J, 4)`` and positions ``(F, J, 3)``
            (:meth:`~ikrig.pose.Motion.fk`), when the caller has them already.

    Returns:
        :class:`FootResult`. Only joint rotations and the root translation change; frame
        count and frame time are kept. No NaN anywhere: where the ground is missing, IK
        blends out (``result.info.ground_found`` says where).

    Raises:
        InputError: no legs found (the message lists joints and shows the override), a
            clip without frame time, a user curve of the wrong shape, or a ground under no
            foot in any frame (:func:`~ikrig.ground.coverage.check_coverage`).

    Warns:
        DatumWarning: the clip's floor is more than 10 % of a leg from ``y = 0`` (the
            datum used is in the message).
        GroundCoverageWarning: the ground is missing under a foot in some frames
            ("ground covers 412 of 600 frames; ...").
    """
    options = options or FootOptions()
    check_clip(clip)
    # 1. legs and soles
    fk = clip.fk(fk)
    if not isinstance(legs, Legs):
        legs = find_legs(clip.skeleton, legs, fk[1])
    sole, points = measure_sole(clip, legs, options.contacts.floor_percentile, fk=fk)
    ctx = FootContext.create(clip.skeleton, legs, sole, ground, options, fk)
    _warn_far_floor(ctx)
    recipe = recipe_for(options)
    # 2. contacts and pinning curves
    if contacts is None:
        flags, pins = detect_foot_contacts(clip, legs, sole, options.contacts, fk, points)
    else:
        flags, pins = _user_contacts(clip, ctx.feet, contacts)
    # 3. sole goals of every frame: turned to the ground and locked (recipe), planted
    state = FootState(ctx.feet)
    ceiling, _ = reach_ceilings(ctx, fk[1], sole.floor)
    goals = sole_goals(ctx, clip, fk, ceiling, points)  # (takes the points over)
    goals.pins, goals.contacts = pins, flags
    for step in recipe.soles:
        step(ctx, goals, state)
    for planned in recipe.planned_soles:
        planned(ctx, goals)
    plant_feet(ctx, goals)
    check_coverage(goals.found, goals.points, stacklevel=2)
    # 4. every swing planned from lift-off to landing
    goals.offsets = plan_offsets(ctx, goals)
    # 5. the root following the ground, and the ankle targets (already smooth: no spring);
    # the root as a plan, without lag (recipe), by the body's axes (recipe)
    root_offset, targets, found = recipe.targets(ctx, goals, state, 0.0)
    axes = recipe.body(ctx, goals.positions_world)
    root_offset = recipe.root(ctx, goals, root_offset, axes)
    # 5c. a long body pitching with the ground along it (recipe), smoothed as the root is
    smoothing = round(options.root.halflife / goals.frame_time)
    turn = zero_lag_smooth(np.stack(pitch_goals(ctx, goals, axes, root_offset), 1), smoothing)
    root_offset = root_offset + turn[:, 1]
    rot_w = goals.rotations_world  # (the source's, for step 9)
    turn_goals(ctx, goals, axes, turn[:, 0])
    lift = baseline_lift(ctx, goals)  # (step 9's, from the planned offsets of step 4)
    # 5d. feet that never plant carried by their hips (recipe), and how far up they need them
    free = recipe.free(goals)
    rise = rise_needs(ctx, goals, root_offset, free) if free.any() else None
    # 6. the pelvis drop: what the legs need, as a smooth upper envelope at each end, whose
    # difference turns the body further (about the same axis: the turns add up)
    carried = carry_free_feet(ctx, goals, root_offset, targets, free)
    need = recipe.pelvis_need(ctx, goals, root_offset, carried)
    body = levers(ctx, goals.positions_world, axes)
    drop, more = plan_pelvis(ctx, need, body, goals.frame_time, rise)
    turn_goals(ctx, goals, axes, more)
    targets = carry_free_feet(ctx, goals, root_offset - drop, targets, free)  # turned further
    settle_free_feet(ctx, goals, targets, free)
    pitch = turn[:, 0] + more
    plan = LegPlan(root_offset, drop, targets, found, pitch)
    # 7. the knees' corrections smoothed in time (recipe)
    plan = recipe.knees(ctx, goals, plan)
    # 8. leg IK and ankle turn, in chunks (the state carries over)
    offsets = goals.offsets
    motion, info = _solve_in_chunks(ctx, clip, goals, plan, state, (chunk, progress))
    turn_pelvis(ctx, goals, pitch, motion.rotations_local)
    del goals, fk, plan  # the world positions and goals are done with: free them first
    # 9. the do-nothing baseline
    baseline = _lifted(ctx, clip, rot_w, lift)
    return FootResult(motion, baseline, legs, sole, flags, pins, info, offsets, ctx.datum)


class DatumWarning(UserWarning):
    """The clip's recorded floor is far from its file's ``y = 0``."""


FAR_FLOOR = 0.1
"""A clip's floor farther than this (leg lengths) from ``y = 0`` is worth a warning."""


def _warn_far_floor(ctx: FootContext) -> None:
    floor = ctx.sole.floor
    if abs(floor) <= FAR_FLOOR * ctx.unit:
        return
    how = (
        "the ground's y = 0 is put there (datum 'clip')"
        if ctx.options.datum == "clip"
        else "the ground is used as given (datum 'absolute'): the feet move by that much"
    )
    warnings.warn(
        DatumWarning(
            f"the clip's floor is at y = {floor:.4g}, {100 * abs(floor) / ctx.unit:.0f} % of a"
            f" leg from y = 0; {how}"
        ),
        stacklevel=3,
    )


def _solve_in_chunks(
    ctx: FootContext,
    clip: Motion,
    goals: FootGoals,
    plan: LegPlan,
    state: FootState,
    chunking: tuple[int, bool],
) -> tuple[Motion, FrameInfo]:
    """Step 8 over the whole clip, ``chunking = (frames per chunk, progress bar)``."""
    rl, pl = clip.rotations_local.copy(), clip.positions_local.copy()
    parts = []
    for a, b in _chunks(clip.num_frames, *chunking):
        part = LegPlan(*(x[a:b] for x in plan))
        info = solve_legs(ctx, goals.slice(a, b), part, state, rl[a:b])
        lift_pelvis(ctx, goals.rotations_world[a:b], pl[a:b], info.root_offset)
        parts.append(info)
    motion = Motion._trusted(clip.skeleton, rl, pl, clip.frame_time)
    if len(parts) == 1:  # one chunk: its info is the clip's (no copy)
        return motion, parts[0]
    fields = dataclasses.fields(FrameInfo)
    info = FrameInfo(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields))
    return motion, info


def make_baseline(ctx: FootContext, clip: Motion, goals: FootGoals) -> Motion:
    """The do-nothing baseline: the root follows the ground under the character (step 5a,
    from the same planned foot offsets and pins where the ground was found), no IK."""
    return _lifted(ctx, clip, goals.rotations_world, baseline_lift(ctx, goals))


def baseline_lift(ctx: FootContext, goals: FootGoals) -> np.ndarray:
    """``(F,)`` the baseline's root offset (:func:`make_baseline`)."""
    weights = goals.pins * goals.found
    return root_offsets(ctx, goals.offsets, weights, goals.frame_time, spring_bank(1))


def _lifted(ctx: FootContext, clip: Motion, rotations_world: np.ndarray, lift) -> Motion:
    """``clip`` with its body moved up by ``lift (F,)`` (:func:`~.context.lift_pelvis`)."""
    pl = clip.positions_local.copy()
    lift_pelvis(ctx, rotations_world, pl, lift)
    return Motion._trusted(clip.skeleton, clip.rotations_local, pl, clip.frame_time)
