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

from .._jit.setup import njit
from ._grid_walk import (
    Grid,
    grid_of,
    grid_settings,
    grid_span,
    grid_walk,
    outside,
    t_exit,
    walk_next,
)
from ._ray import (
    PARALLEL_EPS,
    Hit,
    Ray,
    RayOut,
    cast_rays,
    no_hit,
    ray_tri,
    unit_dir,
    write_hit,
    write_miss,
)


class MeshShape(NamedTuple):
    """A triangle mesh binned into an XZ grid (:func:`mesh_args`: as :func:`mesh_raycast`
    takes it)."""

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


@njit(cache=True)
def _swept_box(ray, t_a, t_b, pad):
    """``(x0, x1, y0, y1, z0, z1)``: the box the ray sweeps between distances ``t_a`` and
    ``t_b``, padded by ``pad``."""
    ox, oy, oz = ray.origin
    dx, dy, dz = ray.direction
    xa = ox + dx * t_a
    xb = ox + dx * t_b
    ya = oy + dy * t_a
    yb = oy + dy * t_b
    za = oz + dz * t_a
    zb = oz + dz * t_b
    return (
        min(xa, xb) - pad,
        max(xa, xb) + pad,
        min(ya, yb) - pad,
        max(ya, yb) + pad,
        min(za, zb) - pad,
        max(za, zb) + pad,
    )


@njit(inline="always")
def _picked_hit(p, ray):
    """The hit on the plane of the ray's picked triangle: its distance recomputed in
    float64; outside ``[0, max_dist]`` or parallel to the plane, nothing."""
    f = p.rows[ray.row]
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


def mesh_args(m: MeshShape) -> tuple:
    """The arguments :func:`mesh_raycast` takes before the rays: the arrays of ``m`` and its
    grid's :func:`~ikrig.ground._grid_walk.grid_settings`."""
    return (m.tri, m.nrm, m.starts, m.items, m.ibox, m.cell_y, grid_settings(m.grid))


@njit(cache=True)
def mesh_raycast(
    tri, nrm, starts, items, ibox, cell_y, grid, origins, dirs, tmaxs, mask, dist, point, normal
):
    """Nearest-hit ray casts on a triangle mesh (the arrays of :func:`mesh_args`).

    The loop of :func:`~ikrig.ground._ray.cast_rays`, written out with the intersection in
    it, so that the mesh's arrays are read only as this kernel's arguments (an array handed
    to a function per ray costs two atomic reference-count updates; see
    :mod:`ikrig.ground._ray`). Each ray walks the grid's cells; in each, it tests the
    triangles whose box meets the box the ray sweeps through the cell, and stops at the
    first cell holding a hit nearer than its exit. Among hits at the same distance the
    lowest row wins.
    """
    out = RayOut(mask, dist, point, normal)
    g = grid_of(grid)
    for i in range(origins.shape[0]):
        direction, ok = unit_dir((dirs[i, 0], dirs[i, 1], dirs[i, 2]))
        ray = Ray(i, (origins[i, 0], origins[i, 1], origins[i, 2]), direction, tmaxs[i])
        oy = ray.origin[1]
        dy = direction[1]
        best = math.inf
        best_f = -1
        t0, t1 = grid_span(g, ray.origin, direction, ray.max_dist) if ok else (1.0, 0.0)
        if t0 <= t1:
            w = grid_walk(g, ray.origin, direction, t0)
            for _ in range(g.nx + g.nz + 2):
                t_out = t_exit(w, t1)
                c = w.iz * g.nx + w.ix
                ya = oy + dy * w.t_in
                yb = oy + dy * min(t_out, best)
                if max(ya, yb) + g.pad >= cell_y[c, 0] and min(ya, yb) - g.pad <= cell_y[c, 1]:
                    lim = min(ray.max_dist, best)
                    bx0, bx1, by0, by1, bz0, bz1 = _swept_box(ray, w.t_in, min(t_out, best), g.pad)
                    for k in range(starts[c], starts[c + 1]):
                        if (
                            ibox[k, 0] > bx1
                            or ibox[k, 1] < bx0
                            or ibox[k, 2] > by1
                            or ibox[k, 3] < by0
                            or ibox[k, 4] > bz1
                            or ibox[k, 5] < bz0
                        ):
                            continue
                        f = items[k]
                        a = (tri[f, 0], tri[f, 1], tri[f, 2])
                        e1 = (tri[f, 3], tri[f, 4], tri[f, 5])
                        e2 = (tri[f, 6], tri[f, 7], tri[f, 8])
                        t = ray_tri(ray, a, e1, e2, tri[f, 9], lim)
                        if t >= 0.0 and (t < best or (t == best and f < best_f)):
                            best = t
                            best_f = f
                            lim = t
                if best <= t_out or t_out >= t1:
                    break
                w = walk_next(w)
                if outside(w, g):
                    break
        if best_f >= 0:
            write_hit(out, ray, Hit(best, (nrm[best_f, 0], nrm[best_f, 1], nrm[best_f, 2])))
        else:
            write_miss(out, ray)


@njit(cache=True)
def tri_hits(p, origins, dirs, tmaxs, mask, dist, point, normal):
    """Complete ray casts whose triangle is already known (a :class:`PickedRows`).

    Used after an external intersector (Embree) picked the triangles: the distance is
    recomputed in float64 from the triangle's plane; rays whose distance falls outside
    ``[0, max_dist]`` (or that are parallel to the plane) become misses.
    """
    cast_rays(_picked_hit, p, origins, dirs, tmaxs, RayOut(mask, dist, point, normal))
