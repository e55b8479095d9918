"""IK solvers.

* :mod:`ikrig.solvers.two_bone` -- analytic two-bone IK (legs, arms): position level
  (:func:`two_bone_positions`, and :func:`two_bone_positions_soa` for big batches) and pose
  level (:func:`solve_two_bone`).
* :mod:`ikrig.solvers.chain` and the iterative chain solvers (:mod:`~ikrig.solvers.fabrik`,
  :mod:`~ikrig.solvers.follow`, :mod:`~ikrig.solvers.ccd`, :mod:`~ikrig.solvers.ccd2d`,
  :mod:`~ikrig.solvers.dls`) for chains of any length.
"""

from .two_bone import (
    TwoBoneOptions,
    TwoBonePositions,
    TwoBoneResult,
    TwoBoneSoA,
    solve_two_bone,
    two_bone_positions,
    two_bone_positions_soa,
)

__all__ = [
    "TwoBoneOptions",
    "TwoBonePositions",
    "TwoBoneResult",
    "TwoBoneSoA",
    "solve_two_bone",
    "two_bone_positions",
    "two_bone_positions_soa",
]
