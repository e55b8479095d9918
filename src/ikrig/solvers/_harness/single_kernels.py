"""One-problem entry points of the chain kernels (private): what they share.

A single chain solve from Python (one chain, one target, float64, no constraints, the
rest frames) should cost little more than its iterations. A batch kernel's call costs the
dispatch of eleven or more arrays and as many allocations in Python, and every argument
Numba's dispatcher types and unboxes costs a little (a read-only array or a tuple of them
more than a plain array). Each solver's ``*_one`` kernel instead takes only

* ``pos (m, D)`` and ``target (D,)``, the problem's own arrays;
* the solver's ``settings`` record;
* its outputs: ``out (m, D)`` the solved positions, ``rl (n, 4)`` the local rotations (and
  ``ccd_2d``'s angles): fresh arrays, or the caller's ``out=`` buffers;

checks the shapes (:func:`fits`: also that no output overlaps an input or another output),
takes the arrays every such problem shares from module constants (:func:`rest_arrays`,
:func:`free_limits`: read-only C-contiguous arrays, the very types the general path passes,
so the batch kernel keeps its one specialisation), makes the batch kernel's status arrays
(:func:`status_arrays`), runs the batch kernel on a batch of one and returns the status as
values: ``(error, iterations, reached, bad)`` (``bad`` as the batch kernel's, or
:data:`NOT_ONE` when the shapes do not fit; the Python side,
:mod:`~ikrig.solvers._harness.single`, takes the general path unless it is -1).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..._jit.setup import NUMPY_ERRORS, njit
from ...kernels.constraints import N_PARAMS

MAX_BONES = 256
"""Longest chain (bones) of the one-problem kernels; longer ones take the general path."""
NOT_ONE = -3
"""``bad`` of a ``*_one`` kernel whose arguments do not fit (:func:`fits`)."""


def _constant(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


_ROT = _constant(np.tile([0.0, 0.0, 0.0, 1.0], MAX_BONES))  # identity rotations, flat
_PARENT = _constant(np.array([[0.0, 0.0, 0.0, 1.0]]))  # (1, 4) identity
_KINDS = _constant(np.zeros(MAX_BONES, dtype=np.int64))  # every joint free
_PARAMS = _constant(np.zeros(MAX_BONES * N_PARAMS))
_LIMITS = _constant(np.tile([-math.pi, math.pi], MAX_BONES))  # planar: every joint free


class StatusArrays(NamedTuple):
    """A batch kernel's status arrays for one problem."""

    err: np.ndarray  # (1,)
    iters: np.ndarray  # (1,) int64
    reached: np.ndarray  # (1,) bool


class RestArrays(NamedTuple):
    """The read-only arrays a free position-level problem of ``n`` bones passes its batch
    kernel (the values of :func:`~ikrig.solvers._harness.single.rest_frames`)."""

    rot: np.ndarray  # (1, n, 4) identity: the joints' start world rotations
    parent: np.ndarray  # (1, 4) identity: the chain root's parent
    kinds: np.ndarray  # (n,) int64 zeros: every joint free
    params: np.ndarray  # (1, n, N_PARAMS) zeros


@njit(cache=True, **NUMPY_ERRORS)
def status_arrays():
    """Fresh :class:`StatusArrays` arrays."""
    return StatusArrays(np.zeros(1), np.zeros(1, np.int64), np.zeros(1, np.bool_))


@njit(cache=True, **NUMPY_ERRORS)
def status(a, bad):
    """The values a ``*_one`` kernel returns: ``(error, iterations, reached, bad)``."""
    return a.err[0], a.iters[0], a.reached[0], bad


@njit(cache=True, **NUMPY_ERRORS)
def not_one():
    """The values of a ``*_one`` kernel whose arguments do not fit: nothing was solved."""
    return 0.0, 0, False, NOT_ONE


@njit(cache=True, **NUMPY_ERRORS)
def rest_arrays(n):
    """:class:`RestArrays` of ``n <= MAX_BONES`` bones (views of module constants)."""
    return RestArrays(
        _ROT[: 4 * n].reshape((1, n, 4)),
        _PARENT,
        _KINDS[:n],
        _PARAMS[: n * N_PARAMS].reshape((1, n, N_PARAMS)),
    )


@njit(cache=True)
def free_limits(n):
    """``(n, 2)`` read-only ``(-pi, pi)`` rows: ``n <= MAX_BONES`` free planar joints."""
    return _LIMITS[: 2 * n].reshape((n, 2))


@njit(cache=True, **NUMPY_ERRORS)
def apart(a, b):
    """Whether the memory of arrays ``a`` and ``b`` does not overlap."""
    a0, b0 = a.ctypes.data, b.ctypes.data
    return a.size == 0 or b.size == 0 or a0 + a.nbytes <= b0 or b0 + b.nbytes <= a0


@njit(cache=True, **NUMPY_ERRORS)
def fits(pos, target, out, rl, D):
    """Whether a one-problem kernel takes ``pos (m, D)``, ``target (D,)``, ``out (m, D)``
    and ``rl (m - 1, 4)`` (``2 <= m <= MAX_BONES + 1``), the outputs overlapping neither
    the inputs nor each other (a caller's ``out=`` buffers: the general path handles
    those)."""
    m = pos.shape[0]
    return (
        2 <= m <= MAX_BONES + 1
        and pos.shape[1] == D
        and target.shape[0] == D
        and out.shape[0] == m
        and out.shape[1] == D
        and rl.shape[0] == m - 1
        and rl.shape[1] == 4
        and apart(out, pos)
        and apart(out, target)
        and apart(rl, pos)
        and apart(rl, target)
        and apart(out, rl)
    )
