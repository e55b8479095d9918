"""Analytic two-bone IK: :mod:`~ikrig.solvers.two_bone.pose` (a skeleton's pose,
:func:`solve_two_bone`) and the position-level solves (:func:`two_bone_positions`, and
:func:`two_bone_positions_soa` for big batches), with private helpers for their arguments,
result types and loops. The compiled core is :mod:`ikrig.kernels.two_bone`."""

from .pose import (
    PARALLEL_MIN,
    TwoBoneOptions,
    TwoBonePositions,
    TwoBoneResult,
    TwoBoneSoA,
    solve_two_bone,
    two_bone_positions,
    two_bone_positions_soa,
)

__all__ = [
    "PARALLEL_MIN",
    "TwoBoneOptions",
    "TwoBonePositions",
    "TwoBoneResult",
    "TwoBoneSoA",
    "solve_two_bone",
    "two_bone_positions",
    "two_bone_positions_soa",
]
