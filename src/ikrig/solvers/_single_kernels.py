"""One-problem entry points of the chain kernels (private): what they share.

A single chain solve from Python (one chain, one target, float64, no constraints, the
rest frames) should cost little more than its iterations. A batch kernel's call costs the
dispatch of eleven or more arrays and as many allocations in Python. Each solver's
``*_one`` kernel instead takes the problem's own arrays and its two outputs,

* ``pos (m, D)``, ``target (D,)``, the solver's ``settings`` record,
* ``out (m, D)`` the solved positions, ``rl (n, 4)`` the local rotations,

makes the rest of the batch kernel's arrays here (:func:`one_problem`), runs the batch
kernel on a batch of one and returns the status as values: ``(error, iterations,
reached, bad)`` (``bad`` as the batch kernel's; the Python side, :mod:`._single`, takes
the general path unless it is -1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._numba import njit


class OneProblem(NamedTuple):
    """A batch kernel's status arrays for one problem."""

    err: np.ndarray  # (1,)
    iters: np.ndarray  # (1,) int64
    reached: np.ndarray  # (1,) bool


@njit(cache=True)
def one_problem():
    """Fresh :class:`OneProblem` arrays."""
    return OneProblem(np.zeros(1), np.zeros(1, np.int64), np.zeros(1, np.bool_))


@njit(cache=True)
def status(a, bad):
    """The values a ``*_one`` kernel returns: ``(error, iterations, reached, bad)``."""
    return a.err[0], a.iters[0], a.reached[0], bad
