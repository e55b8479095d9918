"""Foot placement on uneven ground: take a clip recorded on flat ground and plant its feet on
stairs, slopes and rough ground, offline over whole clips or live frame by frame.

The pipeline, as numbered steps (:func:`place_feet` runs them over all frames at once,
:class:`~ikrig.pipelines.live.FootPlacer` over one frame with carried state; both call the
same step functions):

1. **Legs**: hip, knee, ankle, toe of each leg from joint names (or topology, or
   ``legs=``); the leg length is the unit of every threshold.
2. **Contacts**: per-foot contact from the animation and a pinning curve (1 planted,
   0 in the air, ramps between), or user-supplied curves.
3. **Root on the ground**: the root follows the ground under the character's planted feet
   (a soft minimum, so the lower foot's leg keeps its extension), smoothed; its horizontal
   path is kept exactly.
4. **Foot goals**: vertical ground queries along each sole (heel to toe) with normals; a
   planted foot stands exactly on the ground; a swinging foot moves from its lift-off
   height to its landing height on a smooth curve, lifted just enough to clear the ground
   (offline this is planned over the whole swing and smoothed without lag; live it is
   estimated causally).
5. **Pelvis offset**: the pelvis comes down (limited) when a foot target would need the
   leg straighter than the source or ``max_extension``; the other leg bends. Offline the
   drop is a smooth upper envelope of that need (it comes down ahead of it); live it
   follows the need and comes back on a spring.
6. **Leg IK**: two-bone hip-knee-ankle, the pole from the animated knee, ``soften``,
   blended out where there is no ground. Offline (full mode) each knee's correction from
   the source angle is first smoothed in time, the ankle target moving vertically to
   match (6a): near full extension the knee turns fast for the smallest change of reach,
   and this keeps it free of pops.
7. **Foot alignment**: the ankle turns so the sole follows the ground normal, limited to
   ``align_max_angle``, blended by the pinning curve.
8. **Smoothing**: every causal offset and normal moves on a half-life spring (frame-rate
   independent); offline plans use zero-lag windows instead.
9. **Foot locking**: a planted foot keeps its horizontal position until the span ends or
   it drifts past ``lock_radius``, then returns smoothly.

The live placer given a frame of an offline result (:meth:`FootResult.plan`) replays its
decisions (pins, root offset, ankle targets) and returns the offline frame.

Modes compare recipes on the same clips: ``trace-offset`` (the simple game recipe: trace
down from each foot, lower the body by the lower foot's offset, lift the other by the
difference), ``goal-blend`` (rays from the hip through the ankle give ground goals, blended
by the pinning curve, hips sink to avoid over-stretching) and ``full`` (all nine steps).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import numpy as np

from .._checks import in_range, positive
from ..errors import InputError
from ..ground.base import query_heights
from ..ground.coverage import check_coverage
from ..pose import Motion
from ..solvers._two_bone_kernels import make_consts
from ..solvers.two_bone import TwoBoneOptions
from . import _foot_kernels as kernels
from . import foot_steps as steps
from .contacts import ContactOptions, detect_contacts, horizontal_speed, pinning_curve
from .legs import Legs, find_legs
from .locking import new_lock_state
from .smoothing import new_spring_state
from .sole import FootSole, estimate_sole

MODES = ("trace-offset", "goal-blend", "full")


@dataclass(frozen=True)
class FootOptions:
    """Foot-placement settings. Lengths in leg lengths, times in seconds, angles in radians.

    Attributes:
        mode: ``"full"`` (default), ``"goal-blend"`` or ``"trace-offset"``.
        contacts: contact detection and pinning ramps (:class:`ContactOptions`).
        root_halflife: smoothing of the root following the ground (0.15 s).
        pelvis_halflife: live without a plan: how slowly the pelvis comes back up after a
            drop (0.12 s).
        pelvis_window: offline: the pelvis drop is a smooth upper envelope of what the legs
            need within this long before and after each frame (0.1 s), so it comes down
            ahead of a need and back up after it, without kinks.
        offset_halflife: smoothing of foot offsets in ``trace-offset`` mode (0.06 s).
        max_extension: a leg may straighten to this fraction of its length, or to what the
            source already had, before the pelvis drops (0.97).
        extension_cap: no leg straightens beyond this fraction of its length, even where
            the source did (0.995): near full extension the knee angle swings wildly with the
            smallest change of hip height, which shows as knee pops.
        max_pelvis_drop: the largest pelvis drop (0.35 leg lengths).
        soften: two-bone soft-IK start, fraction of the leg length (1 = off).
        align: turn feet to the ground normal (full mode).
        align_max_angle: limit of that turn; steeper ground counts as flat (35 degrees).
        normal_halflife: smoothing of the ground normal (0.05 s).
        lock: foot locking (full mode).
        lock_radius: a lock is released past this drift (0.1 leg lengths).
        lock_halflife: return of a released lock (0.08 s).
        max_swing_bump: the highest a swinging foot is lifted above its planned path to
            clear the ground (0.4 leg lengths).
        swing_halflife: live placement without a plan: smoothing of a swinging foot's
            height (0.05 s).
        target_halflife: full mode, live without a plan: a spring on each foot's vertical
            offset (0.04 s; 0 off) that takes the last kinks out (lock switches, plant
            ramps), never letting the sole sink into the ground. Planned offsets are
            smoothed by ``plan_smoothing`` instead.
        plan_smoothing: offline: half-width of the zero-lag (Hann) window that smooths the
            planned foot offsets, held at or above the ground (0.12 s; 0 off).
        knee_smoothing: offline, full mode: half-width of the zero-lag window that smooths
            each knee's correction (result minus source angle) in time where it turns too
            sharply, the ankle target moving vertically to match (0.06 s; 0 off). Near full
            extension this trades a fraction of a percent of the leg in foot height for a
            knee without pops.
        knee_jerk_limit: the largest change of angular velocity over 1/30 s (rad/s) a
            knee's correction may have before it is smoothed (1.5; knee pops are counted
            above 2 rad/s beyond the source's own).
        trace_reach: ``trace-offset``: a trace that finds no ground within this distance of
            the foot blends IK out (0.5 leg lengths).
        plant_softness: a planted foot keeps ``c^2 / (c + k)`` of the animation's own
            clearance ``c`` over its floor, ``k`` = this (0.005 leg lengths), so that planting
            never snaps a foot down.
        plant_ramp: offline, a planted foot may keep the animation's own clearance over its
            floor near the ends of a contact, blended out over this long after the contact
            starts and back in before it ends (0 s: by default a foot in contact stands on
            the ground throughout; contact detection keeps a foot rising by up to
            ``height_off`` in contact, and keeping that hover shows as float).
            ``plan_smoothing`` rounds the plan's corners off either way. (Live placement
            without a plan uses ``plant_softness``.)
        root_softness: width of the soft minimum over the planted feet that sets how high
            the character stands (0.05 leg lengths).
        weight_halflife: blending IK in and out where the ground is missing (0.08 s).
    """

    mode: str = "full"
    contacts: ContactOptions = field(default_factory=ContactOptions)
    root_halflife: float = 0.15
    pelvis_halflife: float = 0.12
    pelvis_window: float = 0.1
    offset_halflife: float = 0.06
    max_extension: float = 0.97
    extension_cap: float = 0.995
    max_pelvis_drop: float = 0.35
    soften: float = 1.0
    align: bool = True
    align_max_angle: float = float(np.radians(35.0))
    normal_halflife: float = 0.05
    lock: bool = True
    lock_radius: float = 0.1
    lock_halflife: float = 0.08
    max_swing_bump: float = 0.4
    swing_halflife: float = 0.05
    target_halflife: float = 0.04
    plan_smoothing: float = 0.12
    knee_smoothing: float = 0.06
    knee_jerk_limit: float = 1.5
    trace_reach: float = 0.5
    plant_softness: float = 0.005
    plant_ramp: float = 0.0
    root_softness: float = 0.05
    weight_halflife: float = 0.08

    def __post_init__(self):
        if self.mode not in MODES:
            raise InputError(f"mode: expected one of {', '.join(MODES)}, got {self.mode!r}")
        for name in (
            "root_halflife",
            "pelvis_halflife",
            "pelvis_window",
            "plan_smoothing",
            "knee_smoothing",
            "offset_halflife",
            "normal_halflife",
            "lock_halflife",
            "weight_halflife",
            "swing_halflife",
        ):
            in_range(getattr(self, name), name, 0.0, 10.0)
        positive(self.knee_jerk_limit, "knee_jerk_limit")
        in_range(self.max_extension, "max_extension", 0.5, 1.0)
        in_range(self.extension_cap, "extension_cap", self.max_extension, 1.0)
        in_range(self.max_pelvis_drop, "max_pelvis_drop", 0.0, 1.0)
        in_range(self.soften, "soften", 0.0, 1.0)
        in_range(self.align_max_angle, "align_max_angle", 0.0, np.pi / 2)
        for name in (
            "lock_radius",
            "max_swing_bump",
            "trace_reach",
            "plant_softness",
            "root_softness",
            "swing_halflife",
        ):
            positive(getattr(self, name), name)

    def replace(self, **changes) -> FootOptions:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, eq=False)
class FootSetup:
    """What is known about a character before any frame is solved.

    Attributes:
        legs: the legs (step 1) and the leg length.
        sole: sole points and planted heights, and the clip's floor.
        leg_lengths: ``(feet,)`` thigh plus shin of each leg.
        root: index of the root joint.
        leg_joints: ``(feet, 3)`` joint indices of hip, knee and ankle of every leg.
        hip_parents: ``(feet,)`` the parent joint of every hip (-1 for a hip that is a root).
    """

    legs: Legs
    sole: FootSole
    leg_lengths: np.ndarray
    root: int
    leg_joints: np.ndarray
    hip_parents: np.ndarray

    @classmethod
    def create(cls, skeleton, legs: Legs, sole: FootSole) -> FootSetup:
        off = skeleton.offsets
        lengths = np.array(
            [np.linalg.norm(off[g.knee]) + np.linalg.norm(off[g.ankle]) for g in legs.legs]
        )
        joints = np.array([[g.hip, g.knee, g.ankle] for g in legs.legs], dtype=np.int64)
        root = int(np.flatnonzero(skeleton.parents < 0)[0])
        parents = skeleton.parents[joints[:, 0]]
        return cls(legs, sole, lengths, root, joints, np.asarray(parents, dtype=np.int64))

    def index(self, attr: str) -> np.ndarray:
        """``(feet,)`` joint index of ``attr`` ("hip", "knee", "ankle") for every leg."""
        return self.leg_joints[:, ("hip", "knee", "ankle").index(attr)]


class FootState:
    """Everything the pipeline carries from one frame to the next: the spring states
    (``(3, n)`` arrays, see :func:`~ikrig.pipelines.smoothing.spring_advance`) and the locks
    (``(feet, 9)``, see :func:`~ikrig.pipelines.locking.lock_step`). A new state starts
    every spring at rest on its first goal, with nothing locked."""

    def __init__(self, feet: int):
        self.normals = new_spring_state(3 * feet)
        self.lock = new_lock_state(feet)
        self.root = new_spring_state(1)
        self.targets = new_spring_state(feet)
        self.pelvis = new_spring_state(1)
        self.weight = new_spring_state(feet)
        self.offsets = new_spring_state(feet + 1)
        self.swing_held = np.full(feet, np.nan)
        self.swing = new_spring_state(feet)


@dataclass(frozen=True, eq=False)
class FootGoals:
    """Step 4 goals of ``F`` frames (see :func:`foot_goals`).

    Attributes:
        rotations_world, positions_world: FK of the source frames ``(F, J, 4/3)``.
        points: ``(F, feet, 2, 3)`` heel and toe after the ground alignment.
        align: ``(F, feet, 4)`` the alignment turn of each ankle (world, identity if off).
        shift: ``(F, feet, 2)`` the horizontal (X, Z) shift of each foot from locking.
        planted: ``(F, feet)`` offset at which each sole touches the ground.
        stance: ``(F, feet)`` offset of each foot when planted (live estimate).
        source_clearance: ``(F, feet)`` the animation's clearance over its own floor.
        found: ``(F, feet)`` the ground was found under the whole sole.
        frame_time: seconds per frame.
    """

    rotations_world: np.ndarray
    positions_world: np.ndarray
    points: np.ndarray
    align: np.ndarray
    shift: np.ndarray
    planted: np.ndarray
    stance: np.ndarray
    source_clearance: np.ndarray
    found: np.ndarray
    frame_time: float

    def slice(self, a: int, b: int) -> FootGoals:
        """The goals of frames ``a`` to ``b``."""
        arrays = {f.name: getattr(self, f.name)[a:b] for f in dataclasses.fields(self)[:-1]}
        return FootGoals(**arrays, frame_time=self.frame_time)


@dataclass(frozen=True, eq=False)
class FrameInfo:
    """Per-frame by-products of a solve: ``root_offset (F,)``, ``pelvis_drop (F,)``,
    ``targets_world (F, feet, 3)``, ``reached (F, feet)``, ``ground_found (F, feet)``."""

    root_offset: np.ndarray
    pelvis_drop: np.ndarray
    targets_world: np.ndarray
    reached: np.ndarray
    ground_found: np.ndarray


def foot_goals(
    setup: FootSetup, ground, options: FootOptions, motion: Motion, pins, contacts, state, fk=None
):
    """Steps 4a, 7a and 9: where each foot's sole is, how it turns to the ground, where
    locking holds it, and the vertical offsets that would stand it there. Causal: ``state``
    carries the normal spring and the locks.

    Args:
        motion: source frames, batch shape ``(F,)``.
        pins: ``(F, feet)`` pinning weights; contacts: ``(F, feet)`` bool.
        state: :class:`FootState`, updated in place.
        fk: ``(rotations_world, positions_world)`` of ``motion`` if already computed.
    """
    dt = float(motion.frame_time)
    sole, floor = setup.sole, setup.sole.floor
    rot_w, pos_w = motion.fk() if fk is None else fk
    points = sole.points_world(rot_w, pos_w)
    ankles = pos_w[:, setup.leg_joints[:, 2]]
    F, K = ankles.shape[:2]
    # the animation's own clearance over its flat floor, before any change
    source_clear = np.maximum(np.min(points[..., 1] - sole.heights - floor, axis=-1), 0.0)
    align = np.zeros((F, K, 4))
    align[..., 3] = 1.0
    shift = np.zeros((F, K, 2))
    if options.mode == "full" and options.align:
        # 7a. the sole turns to the (smoothed) ground normal, blended by the pinning curve
        _, normals, hit = query_heights(ground, points[..., [0, 2]])
        kernels.align_run(
            points,
            ankles,
            np.ascontiguousarray(normals, dtype=np.float64),
            hit,
            np.ascontiguousarray(pins, dtype=np.float64),
            float(np.cos(options.align_max_angle)),
            dt,
            options.normal_halflife,
            state.normals,
            align,
        )
    if options.mode == "full" and options.lock:
        # 9. foot locking: a planted foot keeps its horizontal place
        gh, _, hit = steps.ground_heights(ground, points, floor)
        kernels.lock_run(
            points,
            sole.heights,
            np.ascontiguousarray(gh, dtype=np.float64),
            hit,
            np.ascontiguousarray(contacts, dtype=np.bool_),
            dt,
            options.lock_radius * setup.legs.leg_length,
            options.lock_halflife,
            state.lock,
            shift,
        )
    planted, found = steps.planted_offsets(ground, sole, points)
    k = options.plant_softness * setup.legs.leg_length
    stance = planted + steps.soft_clearance(source_clear, k)
    return FootGoals(rot_w, pos_w, points, align, shift, planted, stance, source_clear, found, dt)


def plan_offsets(
    setup: FootSetup, options: FootOptions, goals: FootGoals, contacts, frame_time: float
):
    """Step 4b, offline: every foot's vertical offset over the whole clip, swings planned
    from lift-off to landing (:func:`~ikrig.pipelines.foot_steps.plan_foot_offsets`)."""
    ramp = options.plant_ramp / frame_time
    return steps.plan_foot_offsets(
        goals.planted,
        goals.source_clearance,
        contacts,
        ramp,
        options.max_swing_bump * setup.legs.leg_length,
        round(options.plan_smoothing / frame_time),
    )


def foot_targets(
    setup, ground, options, goals: FootGoals, offsets, pins, state: FootState, planned=False
):
    """Steps 3, 4c and 8 on ``F`` frames: how far the root moves up, and the ankle targets.

    Args:
        goals: the frames' :class:`FootGoals`.
        offsets: ``(F, feet)`` vertical foot offsets (planned or live).
        pins: ``(F, feet)`` pinning weights.
        state: :class:`FootState`, updated in place.
        planned: ``offsets`` come from :func:`plan_offsets`, already smoothed (full mode
            then skips the causal target spring, ``target_halflife``).

    Returns:
        ``(root_offset (F,), targets (F, feet, 3), found (F, feet))``: found is where the
        ground was found (the IK is blended out elsewhere).
    """
    dt = float(goals.frame_time)
    L = setup.legs.leg_length
    pos_w = goals.positions_world
    ankles = np.ascontiguousarray(pos_w[:, setup.leg_joints[:, 2]])
    if options.mode == "trace-offset":
        return _trace_offset_targets(setup, ground, options, pos_w, ankles, state, dt)
    # 3. the root follows the ground under the planted feet
    root_offset = np.empty(len(ankles))
    kernels.root_run(
        np.ascontiguousarray(offsets, dtype=np.float64),
        np.ascontiguousarray(pins * goals.found, dtype=np.float64),
        options.root_softness * L,
        ROOT_FLOOR_WEIGHT,
        dt,
        options.root_halflife,
        state.root,
        root_offset,
    )
    if options.mode == "goal-blend":
        targets = _goal_blend_targets(setup, ground, pos_w, ankles, root_offset, pins)
        return root_offset, targets, goals.found
    # 4c, 8. the feet at their offsets; live, a short spring takes the last kinks out of the
    # vertical paths (lock switches, plant ramps), never letting a sole sink into the ground
    targets = np.empty(ankles.shape)
    kernels.full_targets_run(
        ankles,
        np.ascontiguousarray(offsets, dtype=np.float64),
        goals.planted,
        goals.shift,
        dt,
        0.0 if planned else options.target_halflife,
        state.targets,
        targets,
    )
    return root_offset, targets, goals.found


def pelvis_needs(setup, options, goals: FootGoals, root_offset, targets) -> np.ndarray:
    """Step 5a: how far the pelvis must come down ``(F,)`` so that no leg straightens beyond
    the source's extension or ``max_extension`` (never beyond ``extension_cap``), at most
    ``max_pelvis_drop``; zeros in ``trace-offset`` mode (its body offset is the drop)."""
    need = np.zeros(len(root_offset))
    if options.mode != "trace-offset":
        L = setup.legs.leg_length
        prm = np.array(
            [L, options.max_extension, options.extension_cap, options.max_pelvis_drop * L]
        )
        kernels.pelvis_need_run(
            goals.positions_world[:, setup.leg_joints],
            targets,
            np.ascontiguousarray(root_offset, dtype=np.float64),
            setup.leg_lengths,
            prm,
            need,
        )
    return need


def hold_pelvis(setup, options, need, frame_time: float, state: FootState) -> np.ndarray:
    """Step 5b, causal (live without a plan): the pelvis drop ``(F,)`` follows ``need`` at
    once when it grows and comes back up on a spring (``pelvis_halflife``)."""
    drop = np.empty(len(need))
    kernels.pelvis_hold_run(
        need,
        0.01 * setup.legs.leg_length,
        float(frame_time),
        options.pelvis_halflife,
        state.pelvis,
        drop,
    )
    return drop


def plan_pelvis(options, need, frame_time: float) -> np.ndarray:
    """Step 5b, offline: the pelvis drop ``(F,)``, a smooth upper envelope of ``need``
    (:func:`~ikrig.pipelines.foot_steps.upper_envelope` over ``pelvis_window``): never less
    than a leg needs, equal to it where the need holds steady, and coming down ahead of a
    rise and back up after it without kinks, so a leg nearing its reach slows down
    instead of stopping at once (a knee pop)."""
    return steps.upper_envelope(need, round(options.pelvis_window / frame_time))


def solve_legs(
    setup, options, motion: Motion, goals: FootGoals, root_offset, drop, targets, found, state,
    out=None,
):  # fmt: skip
    """Steps 6 and 7b on ``F`` frames: two-bone leg IK toward ``targets (F, feet, 3)`` on the
    pose moved up by ``root_offset - drop (F,)``, blended out where ``found (F, feet)`` is
    False, and the ankle turned to the ground.

    Args:
        motion: source frames ``(F,)``; goals: their :class:`FootGoals`.
        state: :class:`FootState`, updated in place.
        out: ``(rotations_local, positions_local)`` arrays ``(F, J, 4/3)`` to write the
            result into, holding the source values (default: copies of ``motion``'s).

    Returns:
        ``(motion, FrameInfo)``: only rotations and the root translation change.
    """
    rot_w = goals.rotations_world
    F, K = targets.shape[:2]
    root = np.ascontiguousarray(root_offset - drop, dtype=np.float64)
    new_r = np.empty((F, K, 3, 4))
    reached = np.empty((F, K), dtype=np.bool_)
    kernels.legs_run(
        goals.positions_world[:, setup.leg_joints],
        rot_w[:, setup.leg_joints],
        _parent_rotations(rot_w, setup.hip_parents),
        targets,
        root,
        np.ascontiguousarray(found, dtype=np.bool_),
        goals.align,
        _two_bone_consts(options.soften),
        float(goals.frame_time),
        options.weight_halflife,
        state.weight,
        new_r,
        reached,
    )
    if out is None:
        out = (motion.rotations_local.copy(), motion.positions_local.copy())
    rl, pl = out
    pl[:, setup.root, 1] += root
    rl[:, setup.leg_joints] = new_r
    out = Motion._trusted(motion.skeleton, rl, pl, motion.frame_time)
    return out, FrameInfo(root, drop, targets, reached, found)


def _parent_rotations(rot_w, parents):
    """World rotations ``(F, feet, 4)`` of the hips' parents (identity for a root hip)."""
    out = rot_w[:, np.maximum(parents, 0)]
    out[:, parents < 0] = [0.0, 0.0, 0.0, 1.0]
    return out


def apply_feet(
    setup, ground, options, motion: Motion, goals: FootGoals, offsets, pins, state, plan=None
):
    """Steps 3, 5, 6, 7b and 8 on ``F`` frames, causally (the live placer): root, pelvis,
    leg IK, ankle turn, smoothing (locking, step 9, already moved the feet in
    :func:`foot_goals`).

    Args:
        motion: source frames ``(F,)``; goals: their :class:`FootGoals`.
        offsets: ``(F, feet)`` vertical foot offsets (live estimates); pins: ``(F, feet)``.
        state: :class:`FootState`, updated in place.
        plan: a :class:`FramePlan` (``F = 1``) from an offline result: its root offset,
            pelvis drop, ankle targets and ground flags are used instead of steps 3-6a,
            which then reproduces the offline frame.

    Returns:
        ``(motion, FrameInfo)``: only rotations and the root translation change.
    """
    if plan is not None:
        root_offset = np.array([plan.root_offset + plan.pelvis_drop])
        drop = np.array([plan.pelvis_drop])
        targets = np.array(plan.targets_world, dtype=np.float64).reshape(1, -1, 3)
        found = np.array(plan.ground_found, dtype=np.bool_).reshape(1, -1)
    else:
        root_offset, targets, found = foot_targets(
            setup, ground, options, goals, offsets, pins, state
        )
        need = pelvis_needs(setup, options, goals, root_offset, targets)
        drop = hold_pelvis(setup, options, need, goals.frame_time, state)
    return solve_legs(setup, options, motion, goals, root_offset, drop, targets, found, state)


ROOT_FLOOR_WEIGHT = 0.02
"""Weight of every foot in the root's soft minimum besides its pin (so a character in the
air follows its feet too)."""


@functools.lru_cache(maxsize=8)
def _two_bone_consts(soften: float) -> np.ndarray:
    o = TwoBoneOptions(soften=soften)
    return make_consts(np.float64, o.soften, o.max_stretch, o.tolerance)


def _trace_offset_targets(setup, ground, options, pos_w, ankles, state, dt):
    """Trace-offset steps 3-5: ``(root offset (F,), ankle targets (F, feet, 3), found)``."""
    L, floor, K = setup.legs.leg_length, setup.sole.floor, ankles.shape[1]
    # 3. the character (root) follows the ground under it, as a character controller
    gh_root, _, hit_root = steps.ground_heights(ground, pos_w[:, setup.root], floor)
    base = np.where(hit_root, gh_root - floor, 0.0)
    # 4-5. trace down from each ankle, relative to the character: the body drops by the
    # lower foot's offset, the other foot lifts by the difference; no ground within reach
    # blends that foot's IK out
    th, _, thit = steps.ground_heights(ground, ankles, floor)
    elev = th - floor - base[:, None]
    found = thit & (np.abs(elev) <= options.trace_reach * L)
    elev = np.where(found, elev, 0.0)
    body = np.where(found.any(axis=1), np.where(found, elev, np.inf).min(axis=1), 0.0)
    goal = base[:, None] + np.concatenate([elev, body[:, None]], axis=1)
    sm = steps.smooth_stateful(goal, dt, options.offset_halflife, state.offsets)
    return np.ascontiguousarray(sm[:, K]), ankles + sm[:, :K, None] * steps.UP, found


def _goal_blend_targets(setup, ground, pos_w, ankles, root_offset, pins):
    """Goal-blend step 4: rays from the hip through the ankle (limited to the leg: the
    current goal; unlimited: the future goal); the ankle goal sits above the hit by the
    ankle's height over the sole; the pinning curve blends animated and goal positions."""
    shift = root_offset[:, None, None] * steps.UP
    hips = pos_w[:, setup.leg_joints[:, 0]] + shift
    anim = ankles + shift
    d = anim - hips
    heel = setup.sole.heights[:, 0]
    limit = setup.leg_lengths + heel
    near = ground.raycast(hips, d, np.broadcast_to(limit, d.shape[:-1]))
    far = ground.raycast(hips, d, np.inf)
    hit = near.mask | far.mask
    point = np.where(near.mask[..., None], near.point, far.point)
    normal = np.where(near.mask[..., None], near.normal, far.normal)
    goal = point + normal * heel[:, None]
    goal = np.where(hit[..., None], goal, anim)
    w = pins[..., None]
    return anim * (1 - w) + goal * w


# ----------------------------------------------------------------------------------------
# Offline


@dataclass(frozen=True, eq=False)
class FootResult:
    """Offline result: the clip, the baseline (root on ground, no IK), and what was used.

    Attributes:
        motion: the new clip.
        baseline: the do-nothing baseline clip (root following the ground, no IK).
        legs, sole: steps 1 and 2 inputs as used.
        contacts: ``(F, feet)`` bool; pins: ``(F, feet)`` pinning curve.
        info: :class:`FrameInfo` of the result.
        offsets: ``(F, feet)`` the planned vertical foot offsets (step 4b).
    """

    motion: Motion
    baseline: Motion
    legs: Legs
    sole: FootSole
    contacts: np.ndarray
    pins: np.ndarray
    info: FrameInfo
    offsets: np.ndarray

    def plan(self, frame: int) -> FramePlan:
        """Frame ``frame`` of the result as a :class:`FramePlan` for
        :meth:`~ikrig.pipelines.live.FootPlacer.update`, which then reproduces it."""
        i = self.info
        return FramePlan(
            self.pins[frame],
            self.contacts[frame],
            float(i.root_offset[frame]),
            float(i.pelvis_drop[frame]),
            i.targets_world[frame],
            i.ground_found[frame],
        )


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
    """

    pins: np.ndarray
    contacts: np.ndarray
    root_offset: float
    pelvis_drop: float
    targets_world: np.ndarray
    ground_found: np.ndarray


def detect_foot_contacts(
    motion: Motion, legs: Legs, sole: FootSole, options: ContactOptions, fk=None
):
    """Step 2: contact flags ``(F, feet)`` and pinning curve ``(F, feet)`` of a clip
    (``fk``: its world rotations and positions, if already computed)."""
    rot_w, pos_w = motion.fk() if fk is None else fk
    pts = sole.points_world(rot_w, pos_w)
    heights = pts[..., 1] - sole.floor - sole.heights
    speeds = horizontal_speed(pts, motion.frame_time)
    contacts = detect_contacts(heights, speeds, legs.leg_length, motion.frame_time, options)
    pins = pinning_curve(contacts, motion.frame_time, options.blend_in, options.blend_out)
    return contacts, pins


def _check_clip(clip: Motion) -> None:
    if clip.rotations_local.ndim != 3:
        raise InputError(
            f"clip: expected a clip with batch shape (frames,), got {clip.batch_shape}"
        )
    if clip.frame_time is None:
        raise InputError("clip: frame_time is needed for foot placement")


def place_feet(
    clip: Motion,
    ground,
    options: FootOptions | None = None,
    legs: Legs | str | None = None,
    contacts=None,
    progress: bool = False,
    chunk: int = 4096,
) -> FootResult:
    """Plant a clip's feet on ``ground`` (the offline pipeline).

    Args:
        clip: a clip, batch shape ``(F,)``, with ``frame_time``.
        ground: a ground from :mod:`ikrig.ground` (``height_at``, ``raycast``), in the clip's
            world coordinates and units.
        options: :class:`FootOptions`.
        legs: :class:`Legs`, an override string ``"hip,knee,ankle[,toe];..."``, or None to
            find them by name and topology.
        contacts: ``(F, feet)`` user-supplied pinning curve in [0, 1] (contacts where > 0.5),
            or None to detect them.
        progress: show a progress bar (tqdm) on clips longer than ``chunk`` frames.
        chunk: frames per batch; the state carries over, so the result does not depend on it.

    Returns:
        :class:`FootResult`. Only joint rotations and the root translation change; frame
        count and frame time are kept. No NaN anywhere: where the ground is missing, IK
        blends out (``result.info.ground_found`` says where).

    Raises:
        InputError: no legs found (the message lists joints and shows the override), a
            clip without frame time, a user curve of the wrong shape, or a ground under no
            foot in any frame (:func:`~ikrig.ground.coverage.check_coverage`).

    Warns:
        GroundCoverageWarning: the ground is missing under a foot in some frames
            ("ground covers 412 of 600 frames; ...").
    """
    options = options or FootOptions()
    _check_clip(clip)
    # 1. legs
    if not isinstance(legs, Legs):
        legs = find_legs(clip.skeleton, legs)
    fk = clip.fk()
    sole = estimate_sole(clip, legs, options.contacts.floor_percentile, fk=fk)
    # 2. contacts and pinning curves
    if contacts is None:
        contact_flags, pins = detect_foot_contacts(clip, legs, sole, options.contacts, fk=fk)
    else:
        pins = np.asarray(contacts, dtype=np.float64)
        if pins.shape != (clip.num_frames, len(legs.legs)):
            raise InputError(
                f"contacts: expected shape ({clip.num_frames}, {len(legs.legs)}), got {pins.shape}"
            )
        pins = np.clip(pins, 0.0, 1.0)
        contact_flags = pins > 0.5
    setup = FootSetup.create(clip.skeleton, legs, sole)
    # 4a. goals of every frame (feet turned to the ground and locked)
    state = FootState(len(legs.legs))
    goals = foot_goals(setup, ground, options, clip, pins, contact_flags, state, fk=fk)
    check_coverage(goals.found, goals.points, stacklevel=2)
    # 4b. plan every swing from lift-off to landing
    offsets = plan_offsets(setup, options, goals, contact_flags, clip.frame_time)
    # 3, 4c, 8. the root following the ground, and the ankle targets
    root_offset, targets, found = foot_targets(
        setup, ground, options, goals, offsets, pins, state, planned=True
    )
    # 5. the pelvis drop: what the legs need, as a smooth upper envelope
    need = pelvis_needs(setup, options, goals, root_offset, targets)
    drop = plan_pelvis(options, need, clip.frame_time)
    # 6a. full mode: the knees' corrections smoothed in time (no knee pops)
    if options.mode == "full":
        joints = fk[1][:, setup.leg_joints]
        hips = joints[:, :, 0] + (root_offset - drop)[:, None, None] * steps.UP
        radius = round(options.knee_smoothing / clip.frame_time)
        targets = steps.smooth_knee_targets(
            joints, hips, targets, radius, clip.frame_time, options.knee_jerk_limit
        )
    # 6, 7b. leg IK and ankle turn, in chunks (the state carries over)
    chunks = [
        (a, min(a + chunk, clip.num_frames)) for a in range(0, clip.num_frames, max(int(chunk), 1))
    ]
    if progress and len(chunks) > 1:
        from tqdm import tqdm

        chunks = tqdm(chunks, desc="foot placement", unit="chunk", leave=False)
    rl, pl = clip.rotations_local.copy(), clip.positions_local.copy()
    parts = [
        solve_legs(
            setup,
            options,
            clip[a:b],
            goals.slice(a, b),
            root_offset[a:b],
            drop[a:b],
            targets[a:b],
            found[a:b],
            state,
            out=(rl[a:b], pl[a:b]),
        )[1]
        for a, b in chunks
    ]
    motion = Motion._trusted(clip.skeleton, rl, pl, clip.frame_time)
    info = FrameInfo(
        *(
            np.concatenate([getattr(p, f.name) for p in parts])
            for f in dataclasses.fields(FrameInfo)
        )
    )
    baseline = make_baseline(clip, setup, options, offsets, pins * goals.found)
    return FootResult(motion, baseline, legs, sole, contact_flags, pins, info, offsets)


def make_baseline(clip: Motion, setup: FootSetup, options: FootOptions, offsets, pins):
    """The do-nothing baseline: the root follows the ground under the character (step 3,
    from the same foot ``offsets (F, feet)`` and ``pins``), no IK."""
    root_offset = np.empty(clip.num_frames)
    kernels.root_run(
        np.ascontiguousarray(offsets, dtype=np.float64),
        np.ascontiguousarray(pins, dtype=np.float64),
        options.root_softness * setup.legs.leg_length,
        ROOT_FLOOR_WEIGHT,
        float(clip.frame_time),
        options.root_halflife,
        new_spring_state(1),
        root_offset,
    )
    pl = clip.positions_local.copy()
    pl[:, setup.root, 1] += root_offset
    return Motion._trusted(clip.skeleton, clip.rotations_local, pl, clip.frame_time)
