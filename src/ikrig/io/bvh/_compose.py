"""The compiled composition of a BVH file's rotation channels into quaternions (private to
:mod:`ikrig.io.bvh`; its NumPy twin, for small files read before Numba has started, is
:func:`ikrig.io.bvh._motion._compose_numpy`)."""

from __future__ import annotations

import numpy as np

from ..._jit.setup import njit, numba, prange
from ...kernels.qmath import q_mul


@njit(cache=True)
def _compose_frame(values, columns, axes, out, f):
    """``out[f, j]`` (xyzw) = product over k of the rotation about axis ``axes[j, k]`` by
    ``values[f, columns[j, k]]`` degrees, composed intrinsically (left to right); a row of
    ``columns`` ends at its first -1. ``values: (F, C)``, ``columns, axes: (J, K)``."""
    half_radians_per_degree = np.pi / 360.0
    for j in range(columns.shape[0]):
        x, y, z, w = 0.0, 0.0, 0.0, 1.0
        for k in range(columns.shape[1]):
            if columns[j, k] < 0:
                break
            half = values[f, columns[j, k]] * half_radians_per_degree
            axis, sin_half = axes[j, k], np.sin(half)
            ex = sin_half if axis == 0 else 0.0
            ey = sin_half if axis == 1 else 0.0
            ez = sin_half if axis == 2 else 0.0
            x, y, z, w = q_mul((x, y, z, w), (ex, ey, ez, np.cos(half)))
        out[f, j, 0], out[f, j, 1], out[f, j, 2], out[f, j, 3] = x, y, z, w


@njit(cache=True)
def _compose_rotations_kernel(values, columns, axes, out):
    """:func:`_compose_frame` for every frame."""
    for f in range(values.shape[0]):
        _compose_frame(values, columns, axes, out, f)


@njit(cache=True, parallel=True)
def _compose_rotations_parallel(values, columns, axes, out):
    """:func:`_compose_rotations_kernel` with the frames shared out over the threads (the
    same values: each frame is composed alone)."""
    for f in prange(values.shape[0]):
        _compose_frame(values, columns, axes, out, f)


PARALLEL_ROTATIONS = 20_000
"""Frames times joints from which the rotations are composed on every thread."""


def compose_rotations(values, columns, axes, out) -> None:
    """``out (F, J, 4)`` xyzw: each joint's rotation channels ``values[:, columns[j]]``
    (degrees, about ``axes[j]``, a row ending at its first -1) composed intrinsically, on
    every thread for a big clip (the same values: each frame is composed alone)."""
    big = len(values) * columns.shape[0] >= PARALLEL_ROTATIONS and numba.get_num_threads() > 1
    (_compose_rotations_parallel if big else _compose_rotations_kernel)(values, columns, axes, out)
