"""Whole-body IK: a whole skeleton solved to goals on any of its joints (issue 38).

Goals (:mod:`.goals`): :class:`PositionGoal` (a joint or a point fixed to it, such as an end
site), :class:`OrientationGoal` (a joint's world rotation), :class:`AimGoal` (a local axis at
a world point, up toward a pole), :class:`LookAtGoal` (a head's aim shared with its
ancestors), :class:`KeepGoal` (a joint stays where the input has it); each with a weight
that may vary per frame. :func:`goals_from_targets` makes them from per-frame joint targets
(``ikrig fit``). :func:`solve_body` solves a pose, a clip or a crowd (:class:`BodyOptions`:
stiffness, constraints, locks, the root mode, warm start).

The algorithm: Levenberg-Marquardt over every joint's rotation (world-axis increments) and
the roots' translations, the input pose as a stiffness-weighted prior, the damped
Gauss-Newton system solved on the tree in ``O(J d^2)`` (``d``: the deepest joint path),
steps that would raise the objective undone; an analytic start where joints and their
children have position goals. Numba kernels; see :mod:`._kernels` for the details.

Example:
    >>> import numpy as np
    >>> from ikrig.pose import Motion
    >>> from ikrig.skeleton import Skeleton
    >>> sk = Skeleton(("root", "a", "b", "c"), [-1, 0, 1, 1],
    ...               [[0, 0, 0], [0, 1, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]])
    >>> goals = [PositionGoal("b", [0.8, 1.2, 0.3]), KeepGoal("root")]
    >>> res = solve_body(Motion.rest(sk), goals)
    >>> res.reached.tolist(), res.motion.rotations_local.shape
    ([True, True], (4, 4))
"""

from .goals import (
    AimGoal,
    Goal,
    KeepGoal,
    LookAtGoal,
    OrientationGoal,
    PositionGoal,
    goals_from_targets,
)
from .options import ROOT_MODES, BodyOptions
from .solve import BodyResult, solve_body

__all__ = [
    "AimGoal",
    "BodyOptions",
    "BodyResult",
    "Goal",
    "KeepGoal",
    "LookAtGoal",
    "OrientationGoal",
    "PositionGoal",
    "ROOT_MODES",
    "goals_from_targets",
    "solve_body",
]
