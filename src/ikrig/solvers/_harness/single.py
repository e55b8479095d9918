"""The one-problem fast path of the chain solvers (private; the kernels' side is
:mod:`._single_kernels`).

A call with one chain and one target, both float64 ndarrays the kernels can read as they
are, no constraints and the rest frames, skips the general set-up (broadcasting,
flattening, packing) and most of a batch kernel's arguments: the checks here are plain
attribute tests, the arrays every such problem shares are cached per chain size, and the
result is built from arrays the solver made itself. Anything else, and any problem the
kernel flags (non-finite or out-of-range input), takes the general path, which gives the
same answer, raises the same errors and rescues the same problems.

Per-problem fields of a single problem's result (``reached``, ``error``, ``iterations``)
are NumPy scalars on every path (see :class:`~ikrig.solvers.result.SolveResult`).
"""

from __future__ import annotations

import numpy as np

from ..result import SolveResult
from .packing import free_constraints
from .problem import IDENTITY, one_chain, rest_rotations

_REST: dict[int, tuple] = {}


def rest_frames(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What every unconstrained position-level problem of ``n`` bones shares, cached:
    ``(rot (1, n, 4), parent (1, 4), kinds (n,), params (1, n, P))``, the rest frames
    (identity) and every joint free, read-only. They are the very arrays the general path
    passes, so no kernel is compiled for other array types. A plain tuple: Numba reads
    one in a fraction of the time a named tuple costs it."""
    got = _REST.get(n)
    if got is None:
        got = _REST[n] = (rest_rotations(IDENTITY, n), IDENTITY, *free_constraints(n))
    return got


def solve_one(kernel, fixed, positions_world, target_world, settings) -> SolveResult | None:
    """A single problem solved by ``kernel``, a ``*_one`` kernel, when :func:`one_chain`
    accepts the arguments, else None (as when the kernel flags the problem): the caller
    then takes the general path. ``fixed(n)`` gives the kernel's shared arrays for ``n``
    bones (:func:`rest_frames`, or the solver's own)."""
    if not one_chain(positions_world, target_world):
        return None
    m = positions_world.shape[0]
    out = np.empty((m, 3))
    rl = np.empty((m - 1, 4))
    err, iters, reached, bad = kernel(positions_world, target_world, fixed(m - 1), settings,
                                      out, rl)  # fmt: skip
    if bad != -1:
        return None
    return SolveResult._trusted(out, np.True_ if reached else np.False_, np.float64(err),
                                np.int64(iters), None, rl)  # fmt: skip
