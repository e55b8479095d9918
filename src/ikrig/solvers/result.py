"""What every iterative chain solver returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..pose import Motion

_R = TypeVar("_R", bound="SolveResult")


@dataclass(frozen=True, eq=False)
class SolveResult:
    """The outcome of a chain solve, over the problem's batch shape ``(...)``.

    Attributes:
        positions_world: ``(..., n + 1, 3)`` solved world positions of the chain's joints,
            root first, end effector last.
        reached: ``(...)`` bool, the end effector ended within the solver's tolerance.
        error: ``(...)`` distance from the end effector to the target (the weighted goal
            residual for multi-goal solvers), in the data's units.
        iterations: ``(...)`` int, iterations used (0 when the start pose already reached).
        motion: the new :class:`~ikrig.pose.Motion` when the solve was given one (only the
            chain's rotations changed), else ``None``.
        rotations_local: ``(..., n, 4)`` xyzw new local rotations of the solved joints (root
            to the joint before the effector) when known, else ``None``.

    For a single problem (batch shape ``()``) ``reached``, ``error`` and ``iterations``
    are NumPy scalars (``np.bool``, ``np.float64`` or ``np.float32``, ``np.int64``), which
    have ``shape == ()`` and work as 0-d arrays do, except that they are immutable.
    """

    positions_world: np.ndarray
    reached: np.ndarray
    error: np.ndarray
    iterations: np.ndarray
    motion: Motion | None = None
    rotations_local: np.ndarray | None = None

    @classmethod
    def _trusted(
        cls: type[_R], positions_world, reached, error, iterations, motion, rotations_local, **more
    ) -> _R:
        """The result from arrays a solver made itself, built without the frozen
        dataclass's ``__init__``, which took a fifth of a single FABRIK solve (``more``: a
        subclass's own fields)."""
        out = object.__new__(cls)
        fields = out.__dict__
        fields["positions_world"] = positions_world
        fields["reached"] = reached
        fields["error"] = error
        fields["iterations"] = iterations
        fields["motion"] = motion
        fields["rotations_local"] = rotations_local
        if more:
            fields.update(more)
        return out
