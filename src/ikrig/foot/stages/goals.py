"""Step 3 (3a and 3e): where each foot's sole is, the animation's own clearance over its
floor, and the vertical offsets that would stand each foot on the ground.

:func:`sole_goals` starts a :class:`FootGoals` from the source frames; the recipe's sole
steps (3b :mod:`~ikrig.foot.stages.align`, 3c :mod:`~ikrig.foot.stages.lock`) turn and move
its sole points; :func:`plant_feet` then measures them against the ground.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ...ground.views import RaisedGround, heights_below, single_valued, track_level
from ...pose import Motion
from ..context import UP, FootContext


@dataclass(eq=False)
class FootGoals:
    """What the steps know about ``F`` frames, filled in step by step.

    Attributes:
        rotations_world, positions_world: FK of the source frames ``(F, J, 4/3)``.
        ankles: ``(F, feet, 3)`` the source ankles (world, contiguous).
        pins: ``(F, feet)`` pinning weights; contacts: ``(F, feet)`` bool (step 2; zeros
            until the driver sets them).
        points: ``(F, feet, 2, 3)`` heel and toe (world), after alignment and locking.
        source_clearance: ``(F, feet)`` the animation's clearance over its own floor
            (negative where the animation dips below it).
        align: ``(F, feet, 4)`` the alignment turn of each ankle (world, identity if off).
        shift: ``(F, feet, 2)`` the horizontal (X, Z) shift of each foot from locking and
            from fitting its footprints (offline).
        planted: ``(F, feet)`` offset at which each sole touches the ground.
        stance: ``(F, feet)`` offset of each foot when planted (live estimate).
        found: ``(F, feet)`` the ground was found under the whole sole.
        offsets: ``(F, feet)`` vertical foot offsets (step 4; NaN before it).
        ceiling: ``(F,)`` world heights above which nothing is ground: the level the
            character walks on plus its hip height (:func:`reach_ceilings`), so a roof is
            never taken for the floor.
        frame_time: seconds per frame.
    """

    rotations_world: np.ndarray
    positions_world: np.ndarray
    ankles: np.ndarray
    pins: np.ndarray
    contacts: np.ndarray
    points: np.ndarray
    source_clearance: np.ndarray
    align: np.ndarray
    shift: np.ndarray
    planted: np.ndarray
    stance: np.ndarray
    found: np.ndarray
    offsets: np.ndarray
    ceiling: np.ndarray
    frame_time: float

    def slice(self, a: int, b: int) -> FootGoals:
        """The goals of frames ``a`` to ``b``."""
        fields = dataclasses.fields(self)[:-1]
        return dataclasses.replace(self, **{f.name: getattr(self, f.name)[a:b] for f in fields})


def reach_ceilings(
    ctx: FootContext, positions_world: np.ndarray, level: float
) -> tuple[np.ndarray, float]:
    """Per-frame ceilings ``(F,)`` for ground queries (:func:`~ikrig.ground.views.track_level`
    along the pelvis, starting on ``level``), and the level after the last frame. The reach
    is the source pelvis's height over the clip's floor, at least half a leg."""
    xz, reach = _pelvis_reach(ctx, positions_world)
    return track_level(ctx.ground, xz, reach, level)


def _pelvis_reach(ctx: FootContext, positions_world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pelvis's ground position ``(F, 2)`` and how far above its ground the character
    can find ground ``(F,)``: its height over the clip's floor, at least half a leg."""
    pelvis = positions_world[:, ctx.pelvis]
    return pelvis[:, [0, 2]], np.maximum(pelvis[:, 1] - ctx.sole.floor, 0.5 * ctx.unit)


def crowd_ceilings(
    ctx: FootContext, positions_world: np.ndarray, levels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`reach_ceilings` of ``K`` characters one frame each (live): ``positions_world
    (K, J, 3)``, each from its own ground ``levels (K,)``. Returns ``(ceilings (K,), the
    levels after this frame (K,))``, the same values :func:`reach_ceilings` gives frame by
    frame."""
    if single_valued(ctx.ground):  # nothing above its surface: no ceiling
        return np.full(len(levels), np.inf), np.asarray(levels, dtype=np.float64)
    ground = ctx.ground
    inner, dy = (ground.ground, ground.dy) if isinstance(ground, RaisedGround) else (ground, 0.0)
    xz, reach = _pelvis_reach(ctx, positions_world)
    level = np.asarray(levels, dtype=np.float64) - dy  # in the inner ground's frame, as
    ceilings = level + reach  # track_level reckons, so both give the same values
    h, _, hit = heights_below(inner, np.ascontiguousarray(xz), ceilings)
    return ceilings + dy, np.where(hit, h, level) + dy


def sole_goals(
    ctx: FootContext,
    motion: Motion,
    fk: tuple[np.ndarray, np.ndarray],
    ceiling: np.ndarray,
    points: np.ndarray | None = None,
) -> FootGoals:
    """Step 3a: the sole points of ``motion`` (``F`` frames, ``fk`` its world
    rotations and positions, ``ceiling (F,)`` from :func:`reach_ceilings`) and the
    animation's own clearance over its flat floor. No turn, no shift; the driver sets the
    pins and contacts (step 2, which live detection reads off these points), and the ground
    offsets follow in :func:`plant_feet`. ``points``: the sole points ``(F, feet, 2, 3)``
    from ``fk`` when the caller has them; the goals take them over (later steps move them
    in place)."""
    sole = ctx.sole
    rot_w, pos_w = fk
    if points is None:
        points = sole.points_world(rot_w, pos_w)
    F, K = points.shape[:2]
    # the animation's own clearance over its flat floor, before any change
    over = points[..., 1] - sole.heights - sole.floor  # (F, K, heel/toe)
    source_clear = np.minimum(over[..., 0], over[..., 1])
    align = np.zeros((F, K, 4))
    align[..., 3] = 1.0
    unset = np.full((F, K), np.nan)  # planted, stance, offsets: later steps
    ankles = np.ascontiguousarray(pos_w[:, ctx.leg_joints[:, 2]])
    pins, contacts = np.zeros((F, K)), np.zeros((F, K), dtype=bool)
    return FootGoals(
        rot_w, pos_w, ankles, pins, contacts, points, source_clear, align, np.zeros((F, K, 2)),
        unset, unset, np.zeros((F, K), dtype=bool), unset,
        _per_frame(ceiling, F),
        float(motion.frame_time or 0.0),
    )  # fmt: skip


def _per_frame(value: np.ndarray, frames: int) -> np.ndarray:
    """``value`` as a float64 ``(frames,)`` array (broadcast only when it is not one)."""
    a = np.asarray(value, dtype=np.float64)
    return a if a.shape == (frames,) else np.broadcast_to(a, (frames,))


def plant_feet(ctx: FootContext, goals: FootGoals) -> None:
    """Step 3e: the vertical offset ``planted (F, feet)`` that stands each foot
    on the ground, checked from heel to toe (:meth:`FootSole.sole_clearance`: the lowest
    sample sits exactly on the ground beneath it, so no part of the sole cuts into a step
    edge or a bump), where the ground was ``found`` under every sample, and the live
    ``stance`` offset (:func:`soft_clearance` of the animation's clearance added)."""
    ceiling = goals.ceiling[:, None, None]
    clearance, goals.found = ctx.sole.sole_clearance(goals.points, ctx.ground, ceiling)
    goals.planted = -clearance
    k = ctx.options.live.plant_softness * ctx.unit
    goals.stance = goals.planted + soft_clearance(goals.source_clearance, k)


def soft_clearance(c: np.ndarray, k: float) -> np.ndarray:
    """``c^2 / (c + k)`` for clearances ``c >= 0``: about 0 for ``c << k`` (a planted foot
    stands on the ground), ``c - k`` for ``c >> k`` (a foot the animation lifts stays
    lifted), and smooth between, so planting never snaps a foot down."""
    c = np.maximum(c, 0.0)
    return c * c / (c + k)


def ground_heights(
    ground: object, points_world: np.ndarray, floor: float, ceiling: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertical ground queries under points ``(..., 3)``, below ``ceiling`` (broadcast
    against the points' batch shape; see :func:`~ikrig.ground.views.heights_below`).

    Returns:
        ``heights (...)`` (the clip's ``floor`` where nothing was hit), ``normals (..., 3)``
        (+Y where nothing was hit) and ``hit (...)`` bool.
    """
    h, n, hit = heights_below(ground, points_world[..., ::2], ceiling)  # under X and Z
    if not hit.all():
        h = np.where(hit, h, floor)
        n = np.where(hit[..., None], n, UP)
    return h, n, hit
