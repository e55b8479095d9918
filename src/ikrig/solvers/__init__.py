"""IK solvers.

* :mod:`ikrig.solvers.two_bone` -- analytic two-bone IK (legs, arms): position level
  (:func:`two_bone_positions`; :func:`two_bone_positions_only` when only the points are
  needed; :func:`two_bone_positions_soa` for big component-first batches) and pose level
  (:func:`solve_two_bone`).
* :mod:`ikrig.solvers.chain` and the iterative chain solvers (:mod:`~ikrig.solvers.fabrik`,
  :mod:`~ikrig.solvers.follow`, :mod:`~ikrig.solvers.ccd`, :mod:`~ikrig.solvers.ccd2d`,
  :mod:`~ikrig.solvers.dls`) for chains of any length.
* :mod:`ikrig.solvers.body` -- a whole skeleton solved to goals on any of its joints
  (:func:`solve_body`: position, orientation, aim, look-at and keep goals).
"""

from .body import BodyOptions, BodyResult, solve_body
from .ccd import CCDOptions, ccd, solve_ccd
from .ccd2d import CCD2DOptions, CCD2DResult, ccd_2d
from .chain import Chain
from .dls import DLSOptions, GoalWeights, dls, solve_dls
from .fabrik import FabrikOptions, fabrik, solve_fabrik
from .follow import FollowOptions, follow, solve_follow
from .result import SolveResult
from .two_bone import (
    TwoBoneOptions,
    TwoBonePositions,
    TwoBoneResult,
    TwoBoneSoA,
    solve_two_bone,
    two_bone_positions,
    two_bone_positions_only,
    two_bone_positions_soa,
)

__all__ = [
    "BodyOptions",
    "BodyResult",
    "CCD2DOptions",
    "CCD2DResult",
    "CCDOptions",
    "Chain",
    "DLSOptions",
    "GoalWeights",
    "FabrikOptions",
    "FollowOptions",
    "SolveResult",
    "ccd",
    "ccd_2d",
    "dls",
    "fabrik",
    "follow",
    "solve_body",
    "solve_ccd",
    "solve_dls",
    "solve_fabrik",
    "solve_follow",
    "TwoBoneOptions",
    "TwoBonePositions",
    "TwoBoneResult",
    "TwoBoneSoA",
    "solve_two_bone",
    "two_bone_positions",
    "two_bone_positions_only",
    "two_bone_positions_soa",
]
