"""Walking a ray through a regular 2D grid of cells (private kernels).

Grids are traversed with a 2D DDA in the XZ plane (Amanatides & Woo): the ray is first
clipped to the grid's bounding box (including its height range, :func:`grid_span`), then
visits the cells its XZ shadow crosses in order of distance (:func:`grid_walk`,
:func:`walk_next`); the callers skip cells whose height range the ray's height interval over
the cell does not meet. The same walk serves grids in any horizontal frame: the blocks
ground walks its slot grid in the ``(s, y, u)`` walking frame.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit.setup import njit


class Grid(NamedTuple):
    """A regular grid of ``nx x nz`` horizontal cells whose contents lie in ``[ylo, yhi]``."""

    x0: float  # corner (x, z) of cell (0, 0)
    z0: float
    cx: float  # cell sizes along x and z, > 0
    cz: float
    nx: int  # cell counts
    nz: int
    ylo: float  # height range of the contents
    yhi: float
    pad: float  # padding of the bounding box and of each cell's height range


# A Grid as a one-element structured array: what crosses from Python into a kernel (Numba
# dispatches a structured array much faster than a namedtuple); :func:`grid_of` reads it back.
GRID_DTYPE = np.dtype([(f, np.int64 if f in ("nx", "nz") else np.float64) for f in Grid._fields])


def grid_settings(grid: Grid) -> np.ndarray:
    """``(1,)`` :data:`GRID_DTYPE`: ``grid`` as a kernel argument."""
    return np.array([tuple(grid)], dtype=GRID_DTYPE)


@njit(cache=True)
def grid_of(settings):
    """The :class:`Grid` of a :func:`grid_settings` array."""
    r = settings[0]
    return Grid(r.x0, r.z0, r.cx, r.cz, r.nx, r.nz, r.ylo, r.yhi, r.pad)


class Axis(NamedTuple):
    """The DDA state of one grid axis."""

    step: int  # +1, -1, or 0 for a ray parallel to the other axis
    t_next: float  # distance at which the ray crosses into the next cell along this axis
    t_delta: float  # distance between two such crossings


class Walk(NamedTuple):
    """Where a ray's walk through a grid stands: its cell and when it entered it."""

    ix: int
    iz: int
    t_in: float
    x: Axis
    z: Axis


@njit(cache=True)
def slab(o, d, lo, hi, t0, t1):
    """Clip the parameter interval ``[t0, t1]`` of ``o + t d`` to ``lo <= x <= hi``."""
    if d == 0.0:
        if o < lo or o > hi:
            return math.inf, -math.inf
        return t0, t1
    ta = (lo - o) / d
    tb = (hi - o) / d
    if ta > tb:
        ta, tb = tb, ta
    return max(t0, ta), min(t1, tb)


@njit(cache=True)
def dda_axis(o, d, lo, cell, i):
    """The :class:`Axis` state of one grid axis for a ray in cell ``i``."""
    if d > 0.0:
        return Axis(1, (lo + (i + 1) * cell - o) / d, cell / d)
    if d < 0.0:
        return Axis(-1, (lo + i * cell - o) / d, -cell / d)
    return Axis(0, math.inf, math.inf)


@njit(cache=True)
def cell_index(x, lo, cell, n):
    """Index of the cell containing ``x`` among ``n`` cells, clamped to ``[0, n - 1]``."""
    f = math.floor((x - lo) / cell)
    if f < 0.0:
        return 0
    if f > n - 1:
        return n - 1
    return int(f)


@njit(cache=True)
def grid_span(grid, origin, direction, tmax):
    """``(t0, t1)``: the parameter interval of the ray ``origin + t direction``,
    ``0 <= t <= tmax``, inside the grid's padded bounding box (empty if ``t0 > t1``)."""
    ox, oy, oz = origin
    dx, dy, dz = direction
    g = grid
    t0, t1 = slab(ox, dx, g.x0 - g.pad, g.x0 + g.nx * g.cx + g.pad, 0.0, tmax)
    t0, t1 = slab(oz, dz, g.z0 - g.pad, g.z0 + g.nz * g.cz + g.pad, t0, t1)
    t0, t1 = slab(oy, dy, g.ylo - g.pad, g.yhi + g.pad, t0, t1)
    return t0, t1


@njit(cache=True)
def grid_walk(grid, origin, direction, t0):
    """The :class:`Walk` of a ray entering the grid at distance ``t0`` (see
    :func:`grid_span`)."""
    ox, _, oz = origin
    dx, _, dz = direction
    g = grid
    ix = cell_index(ox + dx * t0, g.x0, g.cx, g.nx)
    iz = cell_index(oz + dz * t0, g.z0, g.cz, g.nz)
    return Walk(ix, iz, t0, dda_axis(ox, dx, g.x0, g.cx, ix), dda_axis(oz, dz, g.z0, g.cz, iz))


@njit(cache=True)
def walk_next(w):
    """One step of the 2D DDA to the next cell."""
    if w.x.t_next <= w.z.t_next:
        x = Axis(w.x.step, w.x.t_next + w.x.t_delta, w.x.t_delta)
        return Walk(w.ix + w.x.step, w.iz, w.x.t_next, x, w.z)
    z = Axis(w.z.step, w.z.t_next + w.z.t_delta, w.z.t_delta)
    return Walk(w.ix, w.iz + w.z.step, w.z.t_next, w.x, z)


@njit(cache=True)
def t_exit(w, t1):
    """Distance at which the ray leaves the current cell (or the grid, at ``t1``)."""
    return min(w.x.t_next, w.z.t_next, t1)


@njit(cache=True)
def outside(w, grid):
    """True once the walk has left the grid's cells."""
    return w.ix < 0 or w.ix >= grid.nx or w.iz < 0 or w.iz >= grid.nz
