"""One-problem entry points of the chain kernels (private): what they share.

A single chain solve from Python (one chain, one target, float64, no constraints, the
rest frames) should cost little more than its iterations. A batch kernel's call costs the
dispatch of eleven or more arrays and as many allocations in Python. Each solver's
``*_one`` kernel instead takes

* ``pos (m, D)`` and ``target (D,)``, the problem's own arrays;
* ``fixed``: a plain tuple of the read-only arrays every such problem of ``n`` bones
  shares, cached by the Python side (:func:`~ikrig.solvers._harness.single.rest_frames`, or the
  solver's own: DLS's goal arrays, ``ccd_2d``'s free limits);
* the solver's ``settings`` record;
* its outputs: ``out (m, D)`` the solved positions, ``rl (n, 4)`` the local rotations (and
  ``ccd_2d``'s angles),

makes the batch kernel's status arrays (:func:`status_arrays`), runs the batch kernel on a
batch of one and returns the status as values: ``(error, iterations, reached, bad)``
(``bad`` as the batch kernel's; the Python side, :mod:`._single`, takes the general path
unless it is -1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._jit.setup import njit


class StatusArrays(NamedTuple):
    """A batch kernel's status arrays for one problem."""

    err: np.ndarray  # (1,)
    iters: np.ndarray  # (1,) int64
    reached: np.ndarray  # (1,) bool


@njit(cache=True)
def status_arrays():
    """Fresh :class:`StatusArrays` arrays."""
    return StatusArrays(np.zeros(1), np.zeros(1, np.int64), np.zeros(1, np.bool_))


@njit(cache=True)
def status(a, bad):
    """The values a ``*_one`` kernel returns: ``(error, iterations, reached, bad)``."""
    return a.err[0], a.iters[0], a.reached[0], bad
