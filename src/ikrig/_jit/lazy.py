"""When a compiled kernel's NumPy twin runs instead (issue 40: ``ikrig info`` in 0.3 s).

Importing Numba takes about 0.2 s and the first call of a cached kernel another 0.15 s or
so (Numba's dispatch machinery, SciPy's BLAS tables), whatever the kernel's work. A short
command on a small clip (``ikrig info walk.bvh``) would spend most of its time there. So the
few kernels such a command reaches (the BVH row scan, the Euler composition of its
rotations, forward kinematics) have a NumPy twin that gives the same numbers bit for bit
(the same operations in the same order; tested), and :func:`prefer_numpy` picks the twin
while it is the cheaper choice:

* never once ``numba`` is imported (a command that compiles anything pays the start-up
  anyway, and the compiled kernel is faster from then on);
* never for work of ``limit`` elements or more (each caller's own measured break-even: a
  15 MB BVH file reads faster compiled even counting the start-up);
* never once the twins have spent :data:`NUMPY_BUDGET` seconds in this process (a script
  calling ``fk`` on one pose ten thousand times is better off compiling once).

This module imports neither Numba nor NumPy.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import InputError

__all__ = ["NUMPY_BUDGET", "forced", "numba_loaded", "prefer_numpy", "spending"]

NUMPY_BUDGET = 0.5
"""Seconds the NumPy twins may spend in one process before every later call compiles:
about what importing Numba and loading the kernels from the cache costs."""

_spent = 0.0
_forced: str | None = None  # "numpy" or "compiled": tests run one path or the other


def numba_loaded() -> bool:
    """Whether this process has imported Numba already (its start-up is paid)."""
    return "numba" in sys.modules


def prefer_numpy(work: int, limit: int) -> bool:
    """Whether a kernel of ``work`` elements should run its NumPy twin (module notes):
    Numba not imported, ``work < limit`` and the twins' time budget not used up."""
    if _forced is not None:
        return _forced == "numpy"
    return work < limit and _spent < NUMPY_BUDGET and not numba_loaded()


@contextmanager
def spending() -> Iterator[None]:
    """Count the time of the ``with`` block against :data:`NUMPY_BUDGET` (wrap a NumPy
    twin's work in it)."""
    global _spent
    start = time.perf_counter()
    try:
        yield
    finally:
        _spent += time.perf_counter() - start


@contextmanager
def forced(path: str | None) -> Iterator[None]:
    """Run every kernel that has a NumPy twin as ``path`` says, ``"numpy"`` or
    ``"compiled"`` (``None``: choose as usual), inside the ``with`` block; for tests that
    hold the two paths to the same results and messages. Not thread-safe."""
    global _forced
    if path not in (None, "numpy", "compiled"):
        raise InputError(f"path: expected 'numpy', 'compiled' or None, got {path!r}")
    saved, _forced = _forced, path
    try:
        yield
    finally:
        _forced = saved
