"""Triangle-mesh kernels (private): binning triangles into an XZ grid, nearest-hit ray casts
through it, and completing ray casts whose triangle an external intersector picked.

Triangle table ``tri (F, 10)``: per row the corner ``a`` (3), the edges ``e1 = b - a`` (3)
and ``e2 = c - a`` (3), and ``|e1 x e2|`` (``<= 0``: degenerate); ``nrm (F, 3)``: unit
normals. See :mod:`ikrig.ground._ray` for the ray kernels' contract.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._numba import njit
from ._grid_walk import Grid, grid_span, grid_walk, outside, t_exit, walk_next
from ._ray import PARALLEL_EPS, Hit, cast_rays, no_hit, ray_tri


class MeshShape(NamedTuple):
    """A triangle mesh binned into an XZ grid, as :func:`mesh_raycast` takes it."""

    tri: np.ndarray  # (F, 10) triangle table (module docstring)
    nrm: np.ndarray  # (F, 3) unit normals
    starts: np.ndarray  # (C + 1,) the items of cell c = iz * nx + ix are
    items: np.ndarray  # items[starts[c]:starts[c + 1]], rows of tri
    ibox: np.ndarray  # (len(items), 6) float32: each item's triangle box, x/y/z min and max
    cell_y: np.ndarray  # (C, 2): min and max height of the triangles binned in each cell
    grid: Grid  # the cells, over the non-degenerate triangles' box


class PickedRows(NamedTuple):
    """Triangles picked per ray by an external intersector, as :func:`tri_hits` takes them."""

    tri: np.ndarray  # (F, 10) triangle table
    nrm: np.ndarray  # (F, 3) unit normals
    rows: np.ndarray  # (N,) row of tri hit by each ray, -1 for none


@njit(cache=True)
def mesh_bin(lo, hi, nx_, nz_):
    """Bin triangles into an XZ grid by their bounding boxes.

    ``lo, hi (F, 2) int``: first and last cell (ix, iz) each triangle's box overlaps
    (``lo[f, 0] < 0`` marks a triangle to leave out). Returns ``(starts (C + 1,), items)``:
    the triangles of cell ``c = iz * nx + ix`` are ``items[starts[c]:starts[c + 1]]``.
    """
    ncell = nx_ * nz_
    counts = np.zeros(ncell + 1, dtype=np.int64)
    for f in range(lo.shape[0]):
        if lo[f, 0] < 0:
            continue
        for iz in range(lo[f, 1], hi[f, 1] + 1):
            for ix in range(lo[f, 0], hi[f, 0] + 1):
                counts[iz * nx_ + ix + 1] += 1
    starts = np.cumsum(counts)
    fill = starts[:-1].copy()
    items = np.empty(starts[-1], dtype=np.int32)
    for f in range(lo.shape[0]):
        if lo[f, 0] < 0:
            continue
        for iz in range(lo[f, 1], hi[f, 1] + 1):
            for ix in range(lo[f, 0], hi[f, 0] + 1):
                c = iz * nx_ + ix
                items[fill[c]] = f
                fill[c] += 1
    return starts, items


@njit(cache=True)
def mesh_cell_y(starts, items, tri_ymin, tri_ymax):
    """``(C, 2)``: min and max height of the triangles binned in each cell (``+inf, -inf``
    for an empty cell)."""
    ncell = starts.shape[0] - 1
    out = np.empty((ncell, 2), dtype=np.float64)
    for c in range(ncell):
        lo = math.inf
        hi = -math.inf
        for k in range(starts[c], starts[c + 1]):
            f = items[k]
            lo = min(lo, tri_ymin[f])
            hi = max(hi, tri_ymax[f])
        out[c, 0] = lo
        out[c, 1] = hi
    return out


@njit(inline="always")
def _mesh_hit(m, ray):
    """Walk the grid's cells; in each, test the triangles whose box meets the box the ray
    sweeps through the cell; stop at the first cell holding a hit nearer than its exit.
    Among hits at the same distance the lowest row wins."""
    g = m.grid
    ox, oy, oz = ray.origin
    dx, dy, dz = ray.direction
    tmax = ray.max_dist
    pad = g.pad
    t0, t1 = grid_span(g, ray.origin, ray.direction, tmax)
    best = math.inf
    best_f = -1
    if t0 <= t1:
        w = grid_walk(g, ray.origin, ray.direction, t0)
        for _ in range(g.nx + g.nz + 2):
            t_out = t_exit(w, t1)
            c = w.iz * g.nx + w.ix
            t_cur = w.t_in
            ya = oy + dy * t_cur
            yb = oy + dy * min(t_out, best)
            if max(ya, yb) + pad >= m.cell_y[c, 0] and min(ya, yb) - pad <= m.cell_y[c, 1]:
                lim = min(tmax, best)
                # the box the ray sweeps in this cell: triangles whose box misses it are skipped
                te = min(t_out, best)
                xa = ox + dx * t_cur
                xb = ox + dx * te
                za = oz + dz * t_cur
                zb = oz + dz * te
                bx0 = min(xa, xb) - pad
                bx1 = max(xa, xb) + pad
                by0 = min(ya, yb) - pad
                by1 = max(ya, yb) + pad
                bz0 = min(za, zb) - pad
                bz1 = max(za, zb) + pad
                for k in range(m.starts[c], m.starts[c + 1]):
                    f = m.items[k]
                    if (
                        m.ibox[k, 0] > bx1
                        or m.ibox[k, 1] < bx0
                        or m.ibox[k, 2] > by1
                        or m.ibox[k, 3] < by0
                        or m.ibox[k, 4] > bz1
                        or m.ibox[k, 5] < bz0
                    ):
                        continue
                    a = (m.tri[f, 0], m.tri[f, 1], m.tri[f, 2])
                    e1 = (m.tri[f, 3], m.tri[f, 4], m.tri[f, 5])
                    e2 = (m.tri[f, 6], m.tri[f, 7], m.tri[f, 8])
                    t = ray_tri(ray, a, e1, e2, m.tri[f, 9], lim)
                    if t >= 0.0 and (t < best or (t == best and f < best_f)):
                        best = t
                        best_f = f
                        lim = t
            if best <= t_out or t_out >= t1:
                break
            w = walk_next(w)
            if outside(w, g):
                break
    # read m last, on every path: its reference is then dropped at one place (see _ray)
    row = max(best_f, 0)
    normal = (m.nrm[row, 0], m.nrm[row, 1], m.nrm[row, 2])
    return Hit(best, normal) if best_f >= 0 else no_hit()


@njit(inline="always")
def _picked_hit(p, ray):
    """The hit on the plane of the ray's picked triangle: its distance recomputed in
    float64; outside ``[0, max_dist]`` or parallel to the plane, nothing."""
    f = p.rows[ray.index]
    hit = no_hit()
    if f >= 0:
        ox, oy, oz = ray.origin
        dx, dy, dz = ray.direction
        nx = p.nrm[f, 0]
        ny = p.nrm[f, 1]
        nz = p.nrm[f, 2]
        den = nx * dx + ny * dy + nz * dz
        if abs(den) > PARALLEL_EPS:
            t = ((p.tri[f, 0] - ox) * nx + (p.tri[f, 1] - oy) * ny + (p.tri[f, 2] - oz) * nz) / den
            t = max(t, 0.0)
            if t <= ray.max_dist:
                hit = Hit(t, (nx, ny, nz))
    return hit


@njit(cache=True)
def mesh_raycast(m, origins, dirs, tmaxs, out):
    """Nearest-hit ray casts on a triangle mesh (a :class:`MeshShape`) through its grid."""
    cast_rays(_mesh_hit, m, origins, dirs, tmaxs, out)


@njit(cache=True)
def tri_hits(p, origins, dirs, tmaxs, out):
    """Complete ray casts whose triangle is already known (a :class:`PickedRows`).

    Used after an external intersector (Embree) picked the triangles: the distance is
    recomputed in float64 from the triangle's plane; rays whose distance falls outside
    ``[0, max_dist]`` (or that are parallel to the plane) become misses.
    """
    cast_rays(_picked_hit, p, origins, dirs, tmaxs, out)
