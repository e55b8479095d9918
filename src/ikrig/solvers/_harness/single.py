"""The one-problem fast path of the chain solvers and their ``out=`` buffers (private; the
kernels' side is :mod:`.single_kernels`).

A call with one chain and one target, both float64 ndarrays the kernels can read as they
are (C-contiguous, writeable, ``(m, D)`` and ``(D,)``), no constraints and the rest frames,
skips the general set-up (broadcasting, flattening, packing) and most of a batch kernel's
arguments. Every check here is a plain attribute test of what decides the kernel's array
types (type, dtype, dimensions, layout); the shapes are checked by the kernel itself, which
returns :data:`~.single_kernels.NOT_ONE` when they do not fit, and the shared arrays come
from the kernels' own constants. The result is built from the arrays the solve wrote, the
caller's ``out=`` buffers or fresh ones. Anything else, and any problem the kernel flags
(non-finite or out-of-range input, shapes that do not fit, outputs overlapping inputs),
takes the general path, which gives the same answer, raises the same errors and rescues
the same problems; given ``out=`` it copies its result into the buffers
(:func:`written_to`), after checking them (:func:`~ikrig._checks.check_out`).

Per-problem fields of a single problem's result (``reached``, ``error``, ``iterations``)
are NumPy scalars on every path (see :class:`~ikrig.solvers.result.SolveResult`).
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar

import numpy as np

from ..._checks import F64, check_out
from ..result import SolveResult
from .packing import free_constraints
from .problem import IDENTITY, one_chain, rest_rotations

_REST: dict[int, tuple] = {}
_ITERS = tuple(np.int64(i) for i in range(1025))  # iteration counts as NumPy scalars
_R = TypeVar("_R", bound=SolveResult)
_BOOLS = (np.False_, np.True_)
_new = object.__new__
_ndarray = np.ndarray
_empty = np.empty
_f64 = np.float64
OUT_FIELDS = ("positions_world", "rotations_local")
"""The fields an ``out=`` tuple of the chain solvers holds, in order (``ccd_2d`` adds
``angles``)."""


def rest_frames(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What every unconstrained position-level problem of ``n`` bones shares, cached:
    ``(rot (1, n, 4), parent (1, 4), kinds (n,), params (1, n, P))``, the rest frames
    (identity) and every joint free, read-only: the arrays the general path passes (the
    one-problem kernels take the same values from their constants)."""
    got = _REST.get(n)
    if got is None:
        got = _REST[n] = (rest_rotations(IDENTITY, n), IDENTITY, *free_constraints(n))
    return got


def solve_one(
    kernel,
    positions_world,
    target_world,
    settings,
    out=None,
    cls: type[_R] = SolveResult,  # type: ignore[assignment]
) -> _R | None:
    """A single free problem solved by ``kernel``, a ``*_one`` kernel
    (``kernel(pos, target, settings, positions, rotations)``, or with ``angles`` last for
    :class:`~ikrig.solvers.ccd2d.CCD2DResult`), into ``out`` (the caller's buffers) or
    fresh arrays; None when the arguments are not for it or the kernel flags the problem:
    the caller then takes the general path.

    Every check is inline (each Python call here costs as much as a check): the array
    types (type, dtype, dimensions, C-contiguous and writeable) of the inputs and of the
    ``out`` arrays, what Numba dispatches on; the kernel checks the shapes. The result is
    built without the frozen dataclass's ``__init__`` (see
    :meth:`~ikrig.solvers.result.SolveResult._trusted`), its per-problem fields NumPy
    scalars (iteration counts up to 1024 from a cache)."""
    p, t = positions_world, target_world
    if not (
        type(p) is _ndarray
        and type(t) is _ndarray
        and p.dtype is F64
        and t.dtype is F64
        and p.ndim == 2
        and t.ndim == 1
        and p.flags.carray
        and t.flags.carray
    ):
        return None
    k = 2 if cls is SolveResult else 3
    if out is None:
        m, D = p.shape
        if m < 2:
            return None
        outs = (_empty((m, D)), _empty((m - 1, 4))) + ((_empty(m - 1),) if k == 3 else ())
    elif type(out) is tuple and len(out) == k:
        for a in out:
            if type(a) is not _ndarray or a.dtype is not F64 or not a.flags.carray:
                return None
        outs = out
    else:
        return None
    err, iters, reached, bad = kernel(p, t, settings, *outs)
    if bad != -1:
        return None
    res = _new(cls)
    fields = res.__dict__
    fields["positions_world"] = outs[0]
    fields["reached"] = _BOOLS[reached]
    fields["error"] = _f64(err)
    fields["iterations"] = _ITERS[iters] if iters <= 1024 else np.int64(iters)
    fields["motion"] = None
    fields["rotations_local"] = outs[1]
    if k == 3:
        fields["angles"] = outs[2]
    return res


def solve_one_fixed(kernel, fixed, positions_world, target_world, settings) -> SolveResult | None:
    """As :func:`solve_one` for a ``*_one`` kernel that also takes shared arrays
    (``fixed(n)``, cached by the solver: DLS's goal arrays) and does not check shapes: they
    are checked here (:func:`~.problem.one_chain`). No ``out=``."""
    if not one_chain(positions_world, target_world):
        return None
    m = positions_world.shape[0]
    out, rl = np.empty((m, 3)), np.empty((m - 1, 4))
    err, iters, reached, bad = kernel(positions_world, target_world, fixed(m - 1), settings,
                                      out, rl)  # fmt: skip
    if bad != -1:
        return None
    return SolveResult._trusted(out, _BOOLS[reached], _f64(err), _ITERS[iters] if iters <= 1024
                                else np.int64(iters), None, rl)  # fmt: skip


def written_to(res: _R, out, fields: tuple[str, ...] = OUT_FIELDS) -> _R:
    """``res`` (a general-path result) with its ``fields`` copied into the caller's ``out``
    buffers (checked: :func:`~ikrig._checks.check_out`) and viewing them."""
    arrays = [getattr(res, f) for f in fields]
    wanted = [(f"out[{i}] ({f})", a.shape, a.dtype) for i, (f, a) in enumerate(zip(fields, arrays))]
    bufs = check_out(out, wanted)
    for b, a in zip(bufs, arrays):
        np.copyto(b, a)
    return dataclasses.replace(res, **dict(zip(fields, bufs)))  # type: ignore[arg-type]
