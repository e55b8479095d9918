"""Foot-placement settings: :class:`FootOptions`, composed of small frozen groups, one per
concern. Lengths are in leg lengths, times in seconds, angles in radians.

Every numeric field is checked against one table, :data:`LIMITS` (``"group.field" -> rule``),
when its group is made: a value out of range, NaN or infinite raises
:class:`~ikrig.errors.InputError` naming the field.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import NamedTuple

from .._checks import in_range, positive
from ..errors import InputError

MODES = ("trace-offset", "goal-blend", "full")
"""The recipes (:mod:`ikrig.foot.recipes`) a :class:`FootOptions` can name."""

DATUMS = ("clip", "absolute")
"""How a ground's heights meet the clip (:attr:`FootOptions.datum`)."""


class Rule(NamedTuple):
    """A numeric field's valid values: ``lo <= x <= hi``, or ``x > 0`` and finite when
    ``positive``."""

    lo: float = 0.0
    hi: float = math.inf
    positive: bool = False


TIME = Rule(0.0, 10.0)
POSITIVE = Rule(positive=True)
FRACTION = Rule(0.0, 1.0)

LIMITS: dict[str, Rule] = {
    "contacts.height_on": POSITIVE,
    "contacts.height_off": POSITIVE,
    "contacts.speed_on": POSITIVE,
    "contacts.speed_off": POSITIVE,
    "contacts.floor_percentile": Rule(0.0, 50.0),
    "contacts.min_span": TIME,
    "contacts.max_gap": TIME,
    "contacts.blend_in": TIME,
    "contacts.blend_out": TIME,
    "contacts.stand_span": TIME,
    "contacts.stand_radius": POSITIVE,
    "contacts.stand_height": POSITIVE,
    "root.halflife": TIME,
    "root.softness": POSITIVE,
    "pelvis.max_extension": Rule(0.5, 1.0),
    "pelvis.max_drop": FRACTION,
    "ik.soften": FRACTION,
    "ik.weight_halflife": TIME,
    "align.max_angle": Rule(0.0, math.pi / 2),
    "align.normal_halflife": TIME,
    "lock.radius": POSITIVE,
    "lock.halflife": TIME,
    "plan.pelvis_window": TIME,
    "plan.smoothing": TIME,
    "plan.lift_ahead": TIME,
    "plan.knee_smoothing": TIME,
    "plan.knee_jerk_limit": POSITIVE,
    "plan.plant_ramp": TIME,
    "plan.plant_clearance": FRACTION,
    "plan.max_swing_bump": POSITIVE,
    "plan.footprint_reach": Rule(0.0, 0.5),
    "live.pelvis_halflife": TIME,
    "live.swing_halflife": TIME,
    "live.target_halflife": TIME,
    "live.plant_softness": POSITIVE,
    "trace.offset_halflife": TIME,
    "trace.reach": POSITIVE,
}


def _check_group(group: object, prefix: str) -> None:
    """Check every field of ``group`` that :data:`LIMITS` lists under ``prefix``."""
    for f in dataclasses.fields(group):  # type: ignore[arg-type]
        rule = LIMITS.get(f"{prefix}.{f.name}")
        if rule is None:
            continue
        value = getattr(group, f.name)
        if rule.positive:
            positive(value, f.name)
        else:
            in_range(value, f.name, rule.lo, rule.hi)


@dataclass(frozen=True)
class ContactOptions:
    """Step 2, contact detection (lengths in leg lengths, times in seconds).

    Attributes:
        height_on: a sole point this close to its floor level may start a contact (0.05).
        height_off: ... and must stay this close to keep it (0.06, the contact height of
            the metrics in issue 11).
        speed_on: horizontal speed (leg lengths per second) to start a contact (0.5).
        speed_off: ... and to keep it (0.75).
        min_span: offline: shorter contacts are dropped (0.08 s).
        max_gap: offline: shorter gaps between contacts are filled (0.05 s).
        floor_percentile: each sole point's floor level is this percentile of its height (5).
        blend_in: seconds of ramp before a contact, while the foot is placed (0.12).
        blend_out: seconds of ramp after a contact, while the foot lifts (0.12).
        stand_span: offline: a sole point that stays within ``stand_radius`` of where it is
            for this long (1 s: longer than a walk's stance) and within ``stand_height`` of
            its floor level throughout *stands*: its foot is in contact whatever
            ``height_on`` and the speeds say (a stand recorded a little above the walk's
            floor, or with jitter); 0: off.
        stand_radius: how far (per axis) a standing point may wander over ``stand_span``
            (0.02 leg lengths: a still foot with mocap jitter, not one sliding or lifting).
        stand_height: how high over its floor level a standing point may be (0.1).
    """

    height_on: float = 0.05
    height_off: float = 0.06
    speed_on: float = 0.5
    speed_off: float = 0.75
    min_span: float = 0.08
    max_gap: float = 0.05
    floor_percentile: float = 5.0
    blend_in: float = 0.12
    blend_out: float = 0.12
    stand_span: float = 1.0
    stand_radius: float = 0.02
    stand_height: float = 0.1

    def __post_init__(self) -> None:
        _check_group(self, "contacts")


@dataclass(frozen=True)
class RootOptions:
    """Step 5a, the root following the ground under the planted feet.

    Attributes:
        halflife: smoothing of the root (0.15 s): live, its spring's half-life; offline,
            the half-width of its zero-lag window (a biped's: twice that,
            :data:`~ikrig.foot.stages.targets.ROOT_WINDOW`).
        softness: width of the soft minimum over the planted feet that sets how high the
            character stands (0.05 leg lengths).
    """

    halflife: float = 0.15
    softness: float = 0.05

    def __post_init__(self) -> None:
        _check_group(self, "root")


@dataclass(frozen=True)
class PelvisOptions:
    """Step 6, the pelvis coming down when a leg would straighten too far.

    Attributes:
        max_extension: a leg may straighten to this fraction of its length, or to what the
            source had at that moment, whichever is more, before the pelvis drops (0.97).
            There is no margin below the source's own extension: a leg the animation holds
            straight may stay straight, so flat ground leaves the pelvis as recorded.
        max_drop: the largest pelvis drop (0.35 leg lengths).
    """

    max_extension: float = 0.97
    max_drop: float = 0.35

    def __post_init__(self) -> None:
        _check_group(self, "pelvis")


@dataclass(frozen=True)
class IKOptions:
    """Step 8a, the two-bone leg IK.

    Attributes:
        soften: two-bone soft-IK start, fraction of the leg length (1 = off).
        weight_halflife: blending IK in and out where the ground is missing (0.08 s).
    """

    soften: float = 1.0
    weight_halflife: float = 0.08

    def __post_init__(self) -> None:
        _check_group(self, "ik")


@dataclass(frozen=True)
class AlignOptions:
    """Steps 3b and 8b, feet turned to the ground normal (full mode).

    Attributes:
        enabled: turn the feet (True).
        max_angle: limit of that turn; steeper ground counts as flat (35 degrees).
        normal_halflife: smoothing of the ground normal (0.05 s).
    """

    enabled: bool = True
    max_angle: float = float(math.radians(35.0))
    normal_halflife: float = 0.05

    def __post_init__(self) -> None:
        _check_group(self, "align")


@dataclass(frozen=True)
class LockOptions:
    """Step 3c, foot locking (full mode).

    Attributes:
        enabled: lock planted feet (True).
        radius: a lock is released past this drift (0.1 leg lengths).
        halflife: return of a released lock (0.08 s).
    """

    enabled: bool = True
    radius: float = 0.1
    halflife: float = 0.08

    def __post_init__(self) -> None:
        _check_group(self, "lock")


@dataclass(frozen=True)
class PlanOptions:
    """Offline only: what the pipeline plans seeing the whole clip.

    Attributes:
        pelvis_window: the pelvis drop is a smooth upper envelope of what the legs need
            within this long before and after each frame (0.12 s), so it comes down ahead
            of a need and back up after it, without kinks. (At 0.1 s, with the root
            planned without lag, bandai1_sidestep_left up the stairs released the drop as
            its root rose: a pelvis acceleration of 3.12 times the source's; at 0.12 s,
            2.52. At 0.15 s the Fox's walk floated more than its goal up the stairs.)
        smoothing: half-width of the zero-lag (Hann) window that smooths the planned foot
            offsets, held at or above the ground (0.12 s; 0 off).
        lift_ahead: half-width of the smooth envelope that lifts the smoothed plan where
            it would still cut into the ground (a toe at a riser right after lift-off, a
            corner the smoothing cuts just before a landing): the lift starts twice this
            ahead and is gone twice this after (0.05 s). Longer floats a foot that has
            landed (at 0.12 s the built-in walk's feet floated up to 1.05 % of a leg for
            0.12 s after landing on a tread; at 0.05 s, 0.47 % for 0.05 s); shorter lifts
            more sharply, which the knee smoothing then rounds off by holding the foot up
            a little.
        knee_smoothing: full mode: half-width of the zero-lag window that smooths each
            knee's correction (result minus source angle) in time where it turns too
            sharply, the ankle target moving vertically to match (0.08 s; 0 off). Near full
            extension this trades a fraction of a percent of the leg in foot height for a
            knee without pops (0.06 s left the Fox's elbow one pop, climbing the stairs).
        knee_jerk_limit: the largest change of angular velocity over 1/30 s (rad/s) a
            knee's correction may have before it is smoothed (1.5; knee pops are counted
            above 2 rad/s beyond the source's own).
        plant_clearance: the share of the animation's own clearance over its floor that a
            planted foot keeps over the ground (1: all of it, the default: a foot stands as
            high over the ground as it stood over its recorded floor, so flat ground at the
            clip's floor leaves it as recorded, and a clip whose contacts float floats no
            more than it did; 0: every planted foot stands exactly on the ground mid-contact,
            pressing down the hover contact detection allows, up to ``height_off``, with the
            pose of the leg, or the pelvis, paying for it).
        plant_ramp: with ``plant_clearance < 1``, the clearance a planted foot gives up is
            blended out over this long after the contact starts and back in before it ends
            (0 s). ``smoothing`` rounds the plan's corners off either way.
        max_swing_bump: the highest a swinging foot is lifted above its planned path to
            clear the ground (0.4 leg lengths).
        footprint_reach: how far a footprint may slide to rest on one surface instead of
            straddling a riser or an edge (0.2 leg lengths; 0 turns it off; ``full`` only,
            :mod:`~ikrig.foot.stages.footprints`).
    """

    pelvis_window: float = 0.12
    smoothing: float = 0.12
    lift_ahead: float = 0.05
    knee_smoothing: float = 0.08
    knee_jerk_limit: float = 1.5
    plant_clearance: float = 1.0
    plant_ramp: float = 0.0
    max_swing_bump: float = 0.4
    footprint_reach: float = 0.2

    def __post_init__(self) -> None:
        _check_group(self, "plan")


@dataclass(frozen=True)
class LiveOptions:
    """Live placement without a plan: causal estimates of what the offline plan decides.

    Attributes:
        pelvis_halflife: how slowly the pelvis comes back up after a drop (0.12 s).
        swing_halflife: smoothing of a swinging foot's height (0.05 s).
        target_halflife: full mode: a spring on each foot's vertical offset (0.04 s; 0 off)
            that takes the last kinks out (lock switches, plant ramps), never letting the
            sole sink into the ground.
        plant_softness: a planted foot keeps ``c^2 / (c + k)`` of the animation's own
            clearance ``c`` over its floor, ``k`` = this (0.005 leg lengths), so that
            planting never snaps a foot down.
    """

    pelvis_halflife: float = 0.12
    swing_halflife: float = 0.05
    target_halflife: float = 0.04
    plant_softness: float = 0.005

    def __post_init__(self) -> None:
        _check_group(self, "live")


@dataclass(frozen=True)
class TraceOptions:
    """The ``trace-offset`` recipe (the simple game recipe).

    Attributes:
        offset_halflife: smoothing of the foot and body offsets (0.06 s).
        reach: a trace that finds no ground within this distance of the foot blends IK out
            (0.5 leg lengths).
    """

    offset_halflife: float = 0.06
    reach: float = 0.5

    def __post_init__(self) -> None:
        _check_group(self, "trace")


@dataclass(frozen=True)
class FootOptions:
    """Foot-placement settings, one group per concern.

    Attributes:
        mode: the recipe: ``"full"`` (default), ``"goal-blend"`` or ``"trace-offset"``
            (:mod:`ikrig.foot.recipes`).
        contacts: :class:`ContactOptions`; root: :class:`RootOptions`; pelvis:
            :class:`PelvisOptions`; ik: :class:`IKOptions`; align: :class:`AlignOptions`;
            lock: :class:`LockOptions`; plan: :class:`PlanOptions` (offline only); live:
            :class:`LiveOptions` (live without a plan only); trace: :class:`TraceOptions`
            (``trace-offset`` only).
        datum: how the ground's heights meet the clip. ``"clip"`` (default): the ground's
            ``y = 0`` is the clip's own recorded floor (the lowest of the sole points' 5th
            percentile heights), so a flat ground at ``y = 0`` leaves every planted foot at its
            recorded height whatever height the file's floor is at. ``"absolute"``: the clip
            and the ground already share coordinates; the lowest sole point is planted on the
            ground exactly.
    """

    mode: str = "full"
    contacts: ContactOptions = field(default_factory=ContactOptions)
    root: RootOptions = field(default_factory=RootOptions)
    pelvis: PelvisOptions = field(default_factory=PelvisOptions)
    ik: IKOptions = field(default_factory=IKOptions)
    align: AlignOptions = field(default_factory=AlignOptions)
    lock: LockOptions = field(default_factory=LockOptions)
    plan: PlanOptions = field(default_factory=PlanOptions)
    live: LiveOptions = field(default_factory=LiveOptions)
    trace: TraceOptions = field(default_factory=TraceOptions)
    datum: str = "clip"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"mode: expected one of {', '.join(MODES)}, got {self.mode!r}")
        if self.datum not in DATUMS:
            raise InputError(f"datum: expected one of {', '.join(DATUMS)}, got {self.datum!r}")

    def replace(self, **changes: object) -> FootOptions:
        """A copy with ``changes`` (whole groups or ``mode``)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
