"""Live foot placement: :class:`FootPlacer`, one pose per update (or one per character of
a crowd), with its own state.

It runs the same steps as the offline :func:`~ikrig.foot.offline.place_feet`, numbered as
there, on one frame, carrying the springs and locks from frame to frame:

- 2. **Contacts**: the given pins, the plan's, or live detection.
- 3. **Sole goals**: sole points turned and locked (recipe, 3b and 3c), planted (3e).
- 4.-6. **Swings, root and targets, pelvis**: causal estimates, or the plan's decisions
  when a :class:`~ikrig.foot.offline.FramePlan` is given.
- 8. **Leg IK** and the ankle turn (8a, 8b).

Steps 1 (legs and soles, when the placer is made), 3d and 7 (they need the whole clip)
and 9 (the baseline) are offline only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._checks import positive, positive_int
from ..character.legs import Legs, find_legs
from ..character.sole import estimate_sole
from ..errors import InputError
from ..pose import Motion
from ..skeleton import Skeleton
from .context import FootContext, check_clip, lift_pelvis
from .offline import FramePlan
from .options import FootOptions
from .recipes import recipe_for
from .stages.contacts import detect_live
from .stages.goals import FootGoals, crowd_ceilings, plant_feet, sole_goals
from .stages.legs_ik import LegPlan, solve_legs
from .stages.pelvis import hold_pelvis
from .stages.pitch import turn_goals, turn_pelvis
from .stages.swing import live_offsets
from .state import FootState


class FootPlacer:
    """Live foot placement: one pose per :meth:`update`, with its own state; or, with
    ``characters=K``, a crowd: ``K`` poses of the character per update, each with its own
    state, placed at once by the same kernels (each as a placer of its own would).

    Runs the same steps as :func:`~ikrig.foot.offline.place_feet`. Given the same frames,
    frame time and the offline plan of the clip being played (``result.plan(frame)``: pins,
    contacts, root offset, pelvis drop, ankle targets and the body's pitch per frame, as an
    engine would store them with the clip), it returns the same frames as the offline
    pipeline. Without them it works causally: contacts from the pose (height and speed with
    hysteresis; ramps start when a contact starts, not before), swing heights from the
    ground under the foot, the pelvis coming down when a leg needs it and back on a spring;
    the offline pipeline, seeing the whole clip, does better (and pitches a long body, a
    quadruped's, with the ground along it).

    Example:
        >>> from ikrig.data.walk import walk_clip
        >>> from ikrig.ground import load_ground
        >>> clip = walk_clip(seconds=1.0)
        >>> ground = load_ground("flat", clip.positions_world()[:, 0, [0, 2]], 0.85)
        >>> placer = FootPlacer.from_clip(clip, ground)
        >>> pose = placer.update(clip[0], dt=clip.frame_time)
    """

    def __init__(self, context: FootContext, characters: int = 1):
        self.context = context
        self.characters = positive_int(characters, "characters")
        self.recipe = recipe_for(context.options)
        self.reset()

    def reset(self) -> None:
        """Forget the past: springs start on their next goals, nothing is locked, contact
        detection starts afresh (after a teleport or a cut), for every character."""
        self.state = FootState(self.context.feet, self.characters)

    @classmethod
    def from_clip(
        cls,
        reference: Motion,
        ground: Any,
        options: FootOptions | None = None,
        legs: Legs | str | None = None,
        characters: int = 1,
    ) -> FootPlacer:
        """A placer for the character of ``reference`` (a clip of it) on ``ground``, whose
        legs, sole points and floor are measured on that clip; ``characters``: how many
        copies of it each update places (a crowd)."""
        options = options or FootOptions()
        check_clip(reference)
        fk = reference.fk()
        if not isinstance(legs, Legs):
            legs = find_legs(reference.skeleton, legs, fk[1])
        sole = estimate_sole(reference, legs, options.contacts.floor_percentile, fk=fk)
        context = FootContext.create(reference.skeleton, legs, sole, ground, options, fk)
        return cls(context, characters)

    def update(
        self,
        pose: Motion,
        dt: float,
        pin: Any = None,
        contact: Any = None,
        plan: FramePlan | None = None,
    ) -> Motion:
        """Place the feet of one pose, or of each character's (a crowd).

        Args:
            pose: a single pose (batch shape ``()``) of the character; for a placer of
                ``K > 1`` characters, their ``K`` poses (batch shape ``(K,)``).
            dt: seconds since the previous update.
            pin: ``(feet,)`` pinning weights for this frame (``(K, feet)`` for a crowd),
                or None to detect them.
            contact: bool contact flags of the same shape (default ``pin > 0.5``).
            plan: a :class:`~ikrig.foot.offline.FramePlan` of this frame from an offline
                result (``result.plan(frame)``): its pins, contacts, root offset and ankle
                targets replace the causal estimates, and the frame equals the offline one.
                One character only.

        Returns:
            The new pose (batch shape ``()``), or poses (``(K,)``).
        """
        ctx, state, K = self.context, self.state, self.characters
        _check_rig(pose.skeleton, ctx.skeleton)
        batch = () if K == 1 else (K,)
        if pose.batch_shape != batch:
            what = "a single pose" if K == 1 else f"the poses of {K} characters"
            raise InputError(f"pose: expected {what} (batch shape {batch}), got {pose.batch_shape}")
        if plan is not None and K > 1:
            raise InputError("plan: a frame plan places one character; this placer has several")
        positive(dt, "dt")
        frame = Motion._trusted(
            pose.skeleton,
            pose.rotations_local.reshape(K, -1, 4),
            pose.positions_local.reshape(K, -1, 3),
            dt,
        )
        fk = frame.fk()
        level = np.where(state.level == state.level, state.level, ctx.sole.floor)
        ceiling, state.level = crowd_ceilings(ctx, fk[1], level)
        goals = sole_goals(ctx, frame, fk, ceiling)
        # 1. contacts
        if plan is not None:
            _check_plan(plan, ctx.feet)
            pin, contact = plan.pins, plan.contacts
        if pin is None:
            pins, flags = detect_live(ctx, goals.points, float(dt), state.detect)
        else:
            pins = np.clip(_per_foot(pin, "pin", (K, ctx.feet), np.float64), 0.0, 1.0)
            flags = (
                pins > 0.5 if contact is None else _per_foot(contact, "contact", pins.shape, bool)
            )
        goals.pins, goals.contacts = pins, flags
        # 2. sole goals: turned and locked (recipe), planted
        for step in self.recipe.soles:
            step(ctx, goals, state)
        plant_feet(ctx, goals)
        # 3. the causal estimates, or the plan's decisions
        legs = self._estimate(goals) if plan is None else self._replay(goals, plan)
        # 4. leg IK and ankle turn
        rl, pl = frame.rotations_local.copy(), frame.positions_local.copy()
        self.last_info = solve_legs(ctx, goals, legs, state, rl)
        turn_pelvis(ctx, goals, legs.pitch, rl)
        lift_pelvis(ctx, goals.rotations_world, pl, self.last_info.root_offset)
        shape = pose.rotations_local.shape[:-1]
        return Motion._trusted(frame.skeleton, rl.reshape(shape + (4,)), pl.reshape(shape + (3,)))

    def _estimate(self, goals: FootGoals) -> LegPlan:
        """Steps 4, 5 and 6 of one frame, causally. The body does not pitch (step 5c): on
        a spring towards the offline goal, without the pelvis drop's two ends, it turned
        the Fox's knees more often, not less (its walk up the slope: 8 knee pops against 3
        level, and 5.3 times the source's pelvis acceleration against 1.2)."""
        ctx, state = self.context, self.state
        goals.offsets = live_offsets(ctx, goals, state)
        halflife = ctx.options.live.target_halflife
        root_offset, targets, found = self.recipe.targets(ctx, goals, state, halflife)
        need = self.recipe.pelvis_need(ctx, goals, root_offset, targets)
        drop = hold_pelvis(ctx, need, goals.frame_time, state)
        return LegPlan(root_offset, drop, targets, found, np.zeros(len(drop)))

    def _replay(self, goals: FootGoals, plan: FramePlan) -> LegPlan:
        """The :class:`~ikrig.foot.stages.legs_ik.LegPlan` of one frame of an offline result
        (the goals' pose turned by its pitch)."""
        pitch = np.array([plan.pitch], dtype=np.float64)
        turn_goals(self.context, goals, None, pitch)
        return LegPlan(
            np.array([plan.root_offset + plan.pelvis_drop]),
            np.array([plan.pelvis_drop]),
            np.array(plan.targets_world, dtype=np.float64).reshape(1, -1, 3),
            np.array(plan.ground_found, dtype=np.bool_).reshape(1, -1),
            pitch,
        )


def _check_rig(given: Skeleton, placer: Skeleton) -> None:
    """InputError unless a pose's skeleton is the placer's rig: the same object, or the
    same joint names and parents (another clip of the same character)."""
    if given is placer or (
        given.names == placer.names and np.array_equal(given.parents, placer.parents)
    ):
        return
    raise InputError(
        f"pose: its skeleton ({given.num_joints} joints, root {given.names[0]!r}) is not the"
        f" placer's ({placer.num_joints} joints, root {placer.names[0]!r})"
    )


def _per_foot(value: Any, name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A per-frame argument of one value per foot (per character), as an array of
    ``shape``, ``(characters, feet)`` (raises on a wrong size or NaN)."""
    a = np.asarray(value, dtype=dtype)
    if a.size != int(np.prod(shape)):
        each = f" for each of {shape[0]} characters" if shape[0] > 1 else ""
        raise InputError(f"{name}: expected {shape[-1]} value(s){each}, got shape {a.shape}")
    if dtype is not bool and not np.isfinite(a).all():
        raise InputError(f"{name}: contains NaN or infinite values")
    return a.reshape(shape)


def _check_plan(plan: FramePlan, feet: int) -> None:
    t = np.asarray(plan.targets_world)
    if t.shape != (feet, 3) or not np.isfinite(t).all():
        raise InputError(f"plan.targets_world: expected finite ({feet}, 3), got {t.shape}")
    _per_foot(plan.ground_found, "plan.ground_found", (1, feet), bool)
    for name in ("root_offset", "pelvis_drop", "pitch"):
        _per_foot(getattr(plan, name), f"plan.{name}", (1, 1), np.float64)
