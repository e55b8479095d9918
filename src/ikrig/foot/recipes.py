"""Recipes: which steps a foot-placement mode runs, as data. No step compares a mode.

=================  =============================  =====================  ==============
recipe             sole steps (3b, 3c)            targets (5a, 5b),      pelvis, knees
                                                  body (5c)
=================  =============================  =====================  ==============
``full``           align (``align.enabled``),     root on the planted    need + plan or
                   lock (``lock.enabled``),       feet, feet at their    hold; knees
                   offline footprints (3d)        offsets and locks;     smoothed (7)
                                                  a long body pitches;
                                                  feet that never plant
                                                  carried (5d)
``goal-blend``     none                           rays hip -> ankle,     need + plan or
                                                  blended by the pins    hold
``trace-offset``   none                           trace down from each   none (its body
                                                  ankle, body offset     offset is the
                                                  by the lower foot      drop)
=================  =============================  =====================  ==============

``trace-offset`` is the simple game recipe, ``goal-blend`` the ray-and-blend recipe, and
``full`` all nine steps (numbered as in :mod:`ikrig.foot.offline`). They run on the same
clips for comparison (``benchmarks/foot_quality_table.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .context import FootContext
from .options import FootOptions
from .stages.align import align_feet
from .stages.carry import free_feet, no_free_feet
from .stages.footprints import fit_footprints
from .stages.goals import FootGoals
from .stages.knees import keep_knees, smooth_knees
from .stages.legs_ik import LegPlan
from .stages.lock import hold_feet
from .stages.pelvis import no_pelvis_need, pelvis_needs
from .stages.pitch import BodyAxes, body_axes, level_body_axes
from .stages.targets import (
    Targets,
    full_targets,
    goal_blend_targets,
    keep_root,
    plan_root,
    trace_offset_targets,
)
from .state import FootState

SoleStep = Callable[[FootContext, FootGoals, FootState], None]
TargetStep = Callable[[FootContext, FootGoals, FootState, float], Targets]
NeedStep = Callable[[FootContext, FootGoals, np.ndarray, np.ndarray], np.ndarray]
KneeStep = Callable[[FootContext, FootGoals, LegPlan], LegPlan]
PlannedSoleStep = Callable[[FootContext, FootGoals], None]
AxesStep = Callable[[FootContext, np.ndarray], BodyAxes]
FreeStep = Callable[[FootGoals], np.ndarray]
RootStep = Callable[[FootContext, FootGoals, np.ndarray, BodyAxes], np.ndarray]


@dataclass(frozen=True)
class Recipe:
    """The steps a mode runs between the shared ones.

    Attributes:
        name: the mode's name.
        soles: steps that turn and move the sole points (3b, 3c), in order.
        planned_soles: offline only, steps that see whole contacts (3d), after ``soles``.
        targets: the root offset and ankle targets (5a, 5b).
        body: the body's axis and the share of a turn it takes with the ground (5c).
        root: offline, the root's offset as a plan (5a), from the target step's and the
            body's axes.
        free: offline, the feet its hips carry (5d): ``(feet,)`` bool.
        pelvis_need: how far the pelvis must come down (6a).
        knees: offline, the knee smoothing (7).
    """

    name: str
    soles: tuple[SoleStep, ...]
    planned_soles: tuple[PlannedSoleStep, ...]
    targets: TargetStep
    body: AxesStep
    root: RootStep
    free: FreeStep
    pelvis_need: NeedStep
    knees: KneeStep


def recipe_for(options: FootOptions) -> Recipe:
    """The :class:`Recipe` of ``options.mode``, its sole steps as enabled by the options."""
    return _RECIPES[options.mode](options)


def _full(options: FootOptions) -> Recipe:
    soles: tuple[SoleStep, ...] = ()
    if options.align.enabled:
        soles += (align_feet,)
    if options.lock.enabled:
        soles += (hold_feet,)
    planned = (fit_footprints,) if options.plan.footprint_reach > 0 else ()
    return Recipe(
        "full",
        soles,
        planned,
        full_targets,
        body_axes,
        plan_root,
        free_feet,
        pelvis_needs,
        smooth_knees,
    )


def _goal_blend(options: FootOptions) -> Recipe:
    return Recipe(
        "goal-blend",
        (),
        (),
        goal_blend_targets,
        level_body_axes,
        plan_root,
        no_free_feet,
        pelvis_needs,
        keep_knees,
    )


def _trace_offset(options: FootOptions) -> Recipe:
    return Recipe(
        "trace-offset",
        (),
        (),
        trace_offset_targets,
        level_body_axes,
        keep_root,
        no_free_feet,
        no_pelvis_need,
        keep_knees,
    )


_RECIPES: dict[str, Callable[[FootOptions], Recipe]] = {
    "full": _full,
    "goal-blend": _goal_blend,
    "trace-offset": _trace_offset,
}
