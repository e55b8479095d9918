"""Step 5d, offline: a foot that never plants is carried by its hip.

Some feet have no contact anywhere in a clip: the Fox's run slides its front paws at 2-2.7
legs a second while they are down, so neither the pipeline nor the metrics find a contact
for them. Such a foot had no planned swing: it followed the ground under it, keeping its
recorded clearance. At the top of its swing the run's front paw reaches about a leg ahead of
its shoulder; on the stairs the ground there is a quarter of a leg higher than under the
shoulder, so the leg went straight, pulled the paw short, and folded as the paw came down
(a knee pop once a stride: 4 on the stairs, 3 on the slope). And the body, which follows
its planted feet (steps 5a, 5c, 6b), never came up for it.

So such a *free* foot (:func:`free_feet`):

1. :func:`carried` says where the body carries it with its hip: the ankle of the turned
   pose (step 5c) lifted with the root, the leg in its recorded shape;
2. :func:`rise_needs` says how far its hip would have to come up for that sole to touch
   the ground where it is lower than that (a paw landing on a higher step): the pelvis
   plan raises an end of the body all of whose feet are free by :data:`RISE_SHARE` of
   that (:func:`~.pelvis.plan_pelvis`);
3. :func:`carry_free_feet` blends each free foot's target from the ground-following one
   (near the ground, where the recording has it touch down) to the carried one (from
   :data:`FREE_HEIGHT` of clearance up), and keeps the sole out of the ground where it is
   (:func:`sole_lift`), after the pelvis plan, in the finally turned pose;
   :func:`settle_free_feet` then writes the offsets those targets stand at, so that the
   knee smoothing (step 7) lowers none of them into the ground where it is carried.

A foot with a contact anywhere keeps its planned swings (step 4): a swing between two
contacts already goes from one footprint to the next.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...signal.easing import smoothstep
from ..context import FootContext
from .swing import KEEP_DIP

if TYPE_CHECKING:
    from .goals import FootGoals

FREE_HEIGHT = 0.24
"""Leg lengths: a free foot at least this high over its recorded floor is carried by its
hip in full; below, the ground-following target takes over (smoothstep), so it lands where
the recording lands it. Measured on the Fox (knee pops; float over contacts, % of a leg):
from 0.06 to 0.24 its run pops no knee; below 0.18 its walk's front left paw, which goes
unplanted but touches down, is carried too near its landings and the walk floats 2.17-2.19
up the stairs or the slope (its goal 2.15); from 0.36 up the walk pops a knee there (and
from 0.5 the run on the stairs)."""


RISE_SHARE = 0.5
"""The share of a free foot's rise (what its hip would need to come up for the carried
foot to touch the ground, not cut into it) that its end of the body is given. Measured on
the Fox's run up the stairs and the slope (its front legs: fold, % of a leg; the body's
pitch, degrees): at 0 a knee pop is left on the stairs, the front legs fold 7 and 4 %
(5, 3 on the slope), the pitch peaks at 23 (16); at 1 they keep their recorded extension
(fold 0) but the body rears to 31 (23) degrees, a standard deviation of 5.9 (3.6 at 0),
and the hind legs fold 1-2 % more (a turn about the pelvis swings the hind hips below it);
at 0.5 the front legs fold 3 and 1 % (2, 1), the pitch peaks at 25 (19). Any share from
0.25 to 1 leaves no pop."""


def free_feet(goals: FootGoals) -> np.ndarray:
    """``(feet,)`` bool: the feet with no contact in the clip."""
    return np.logical_not(np.any(goals.contacts, axis=0))


def no_free_feet(goals: FootGoals) -> np.ndarray:
    """``(feet,)`` all False: a recipe that carries no foot by its hip."""
    return np.zeros(np.shape(goals.contacts)[1], dtype=bool)


def sole_lift(ctx: FootContext, goals: FootGoals, shift: np.ndarray) -> np.ndarray:
    """``(F, feet)`` how far each sole, moved by ``shift (F, feet, 3)`` from where the
    recording has it, must come up to stand no deeper in the ground than the recording's
    own dip below its floor (kept to :data:`~.swing.KEEP_DIP`, as step 4 keeps it); 0
    where it clears the ground."""
    return np.maximum(-_room(ctx, goals, shift), 0.0)


def _room(ctx: FootContext, goals: FootGoals, shift: np.ndarray) -> np.ndarray:
    """``(F, feet)`` the sole's clearance over the ground, moved by ``shift``, beyond the
    recorded dip it may keep (negative: too deep)."""
    ceiling = goals.ceiling[:, None, None]
    clear, _ = ctx.sole.sole_clearance(goals.points + shift[:, :, None], ctx.ground, ceiling)
    return clear - np.clip(goals.source_clearance, -KEEP_DIP * ctx.unit, 0.0)


def carried(ctx: FootContext, goals: FootGoals, lift: np.ndarray) -> np.ndarray:
    """``(F, feet, 3)`` each ankle as the body carries it: the ankle of the goals' (turned)
    pose, lifted by ``lift (F,)`` (the root's offset, less any pelvis drop)."""
    ankles = goals.positions_world[:, ctx.leg_joints[:, 2]].copy()
    ankles[..., 1] += lift[:, None]
    return ankles


def rise_needs(
    ctx: FootContext, goals: FootGoals, lift: np.ndarray, free: np.ndarray
) -> np.ndarray:
    """``(F, feet)`` how far each ``free (feet,)`` foot's hip comes up: :data:`RISE_SHARE`
    of what keeps the foot, carried (:func:`carried`, with ``lift (F,)``), out of the
    ground; NaN for the other feet (:func:`~.pelvis.plan_pelvis` reads it so)."""
    need = RISE_SHARE * sole_lift(ctx, goals, carried(ctx, goals, lift) - goals.ankles)
    return np.where(free, need, np.nan)


def carry_free_feet(
    ctx: FootContext, goals: FootGoals, lift: np.ndarray, targets: np.ndarray, free: np.ndarray
) -> np.ndarray:
    """The ankle ``targets (F, feet, 3)`` (world) with each free foot's blended from its
    ground-following target to the carried one (:func:`carried`, with ``lift (F,)``) by
    its recorded clearance (:data:`FREE_HEIGHT`), then lifted out of the ground
    (:func:`sole_lift`) where it is: a new array, or ``targets`` itself where no foot is
    free."""
    if not free.any():
        return targets
    weight = smoothstep(np.maximum(goals.source_clearance, 0.0) / (FREE_HEIGHT * ctx.unit))
    weight = np.where(free, weight, 0.0)[..., None]
    out = targets + weight * (carried(ctx, goals, lift) - targets)
    out[..., 1] += np.where(free, sole_lift(ctx, goals, out - goals.ankles), 0.0)
    return out


def settle_free_feet(
    ctx: FootContext, goals: FootGoals, targets: np.ndarray, free: np.ndarray
) -> None:
    """Write each free foot's vertical offset (``goals.offsets``) and the offset at which
    its sole touches the ground where it is carried (``goals.planted``) from its final
    ankle ``targets (F, feet, 3)``: the knee smoothing (step 7) lowers no target below
    that."""
    if not free.any():
        return
    offsets = targets[..., 1] - goals.ankles[..., 1]
    touch = offsets - _room(ctx, goals, targets - goals.ankles)
    goals.offsets = np.where(free, offsets, goals.offsets)
    goals.planted = np.where(free, touch, goals.planted)
