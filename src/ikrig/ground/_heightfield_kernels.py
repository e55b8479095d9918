"""Heightfield kernels (private): vertical queries and ray casts on a grid of heights.

``heights (H, W)``: ``heights[iz, ix]`` at ``(x0 + ix cx, z0 + iz cz)``; the grid of
:class:`HeightfieldShape` counts cells, ``W - 1`` by ``H - 1``. Each cell is split along its
diagonal from ``(ix, iz)`` to ``(ix + 1, iz + 1)`` into the triangles ``(00, 10, 11)`` and
``(00, 11, 01)``. See :mod:`ikrig.ground._ray` for the kernels' contract.

The kernels take ``heights`` and the grid's :func:`~ikrig.ground._grid_walk.grid_settings`
(cheap to pass from Python) and build their :class:`HeightfieldShape` from them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit.setup import njit
from ._grid_walk import Grid, grid_of, grid_span, grid_walk, outside, t_exit, walk_next
from ._ray import BARY_EPS, Hit, RayOut, Surface, cast_rays, no_hit, query_points, ray_tri


class HeightfieldShape(NamedTuple):
    """A heightfield as its kernels take it."""

    heights: np.ndarray  # (H, W) float64
    grid: Grid  # its W - 1 by H - 1 cells, height range [hmin, hmax]


@njit(inline="always")
def _hf_height(hf, xz):
    """Height and upward unit normal of the triangle under ``xz``; nothing outside."""
    g = hf.grid
    nz_ = hf.heights.shape[0]
    nx_ = hf.heights.shape[1]
    gx = (xz[0] - g.x0) / g.cx
    gz = (xz[1] - g.z0) / g.cz
    # the border belongs to the grid, with the ray casts' slack for rounding
    lim_x = nx_ - 1 + BARY_EPS
    lim_z = nz_ - 1 + BARY_EPS
    if not (gx >= -BARY_EPS and gx <= lim_x and gz >= -BARY_EPS and gz <= lim_z):
        return Surface(0.0, (0.0, 1.0, 0.0), False)
    gx = min(max(gx, 0.0), nx_ - 1.0)
    gz = min(max(gz, 0.0), nz_ - 1.0)
    ix = min(int(math.floor(gx)), nx_ - 2)
    iz = min(int(math.floor(gz)), nz_ - 2)
    u = gx - ix
    v = gz - iz
    h00 = hf.heights[iz, ix]
    h10 = hf.heights[iz, ix + 1]
    h01 = hf.heights[iz + 1, ix]
    h11 = hf.heights[iz + 1, ix + 1]
    if u >= v:  # triangle (00, 10, 11)
        sx = h10 - h00
        sz = h11 - h10
    else:  # triangle (00, 11, 01)
        sx = h11 - h01
        sz = h01 - h00
    h = h00 + u * sx + v * sz
    gxw = sx / g.cx
    gzw = sz / g.cz
    n = math.sqrt(gxw * gxw + 1.0 + gzw * gzw)
    return Surface(h, (-gxw / n + 0.0, 1.0 / n, -gzw / n + 0.0), True)


@njit(inline="always")
def _cell_hit(hf, ray, ix, iz):
    """Nearest hit of the ray with the two triangles of cell ``(ix, iz)`` (the first one
    on a tie)."""
    g = hf.grid
    tmax = ray.max_dist
    h00 = hf.heights[iz, ix]
    h10 = hf.heights[iz, ix + 1]
    h01 = hf.heights[iz + 1, ix]
    h11 = hf.heights[iz + 1, ix + 1]
    ax = g.x0 + ix * g.cx
    az = g.z0 + iz * g.cz
    # triangle A: (00, 10, 11); e1 = 10 - 00, e2 = 11 - 00
    e1x, e1y, e1z = g.cx, h10 - h00, 0.0
    e2x, e2y, e2z = g.cx, h11 - h00, g.cz
    nax = e1y * e2z - e1z * e2y
    nay = e1z * e2x - e1x * e2z
    naz = e1x * e2y - e1y * e2x
    la = math.sqrt(nax * nax + nay * nay + naz * naz)
    ta = ray_tri(ray, (ax, h00, az), (e1x, e1y, e1z), (e2x, e2y, e2z), la, tmax)
    # triangle B: (00, 11, 01); e1 = 11 - 00, e2 = 01 - 00
    f2x, f2y, f2z = 0.0, h01 - h00, g.cz
    nbx = e2y * f2z - e2z * f2y
    nby = e2z * f2x - e2x * f2z
    nbz = e2x * f2y - e2y * f2x
    lb = math.sqrt(nbx * nbx + nby * nby + nbz * nbz)
    tb = ray_tri(ray, (ax, h00, az), (e2x, e2y, e2z), (f2x, f2y, f2z), lb, tmax)
    if ta >= 0.0 and (tb < 0.0 or ta <= tb):
        return Hit(ta, (nax, nay, naz))
    if tb >= 0.0:
        return Hit(tb, (nbx, nby, nbz))
    return no_hit()


@njit(inline="always")
def _hf_hit(hf, ray):
    """Walk the cells the ray crosses; the first cell with a hit holds the nearest one."""
    g = hf.grid
    oy = ray.origin[1]
    dy = ray.direction[1]
    t0, t1 = grid_span(g, ray.origin, ray.direction, ray.max_dist)
    hit = no_hit()
    if t0 <= t1:
        w = grid_walk(g, ray.origin, ray.direction, t0)
        for _ in range(hf.heights.shape[1] + hf.heights.shape[0] + 2):
            t_out = t_exit(w, t1)
            ya = oy + dy * w.t_in
            yb = oy + dy * t_out
            h00 = hf.heights[w.iz, w.ix]
            h10 = hf.heights[w.iz, w.ix + 1]
            h01 = hf.heights[w.iz + 1, w.ix]
            h11 = hf.heights[w.iz + 1, w.ix + 1]
            cmin = min(min(h00, h10), min(h01, h11))
            cmax = max(max(h00, h10), max(h01, h11))
            if max(ya, yb) + g.pad >= cmin and min(ya, yb) - g.pad <= cmax:
                hit = _cell_hit(hf, ray, w.ix, w.iz)
                if hit.t >= 0.0:
                    break
            if t_out >= t1:
                break
            w = walk_next(w)
            if outside(w, g):
                break
    return hit


@njit(cache=True)
def hf_height_at(heights, grid, xz, out_h, out_n, out_mask):
    """Vertical queries on a heightfield: height, upward unit normal and mask per point."""
    hf = HeightfieldShape(heights, grid_of(grid))
    query_points(_hf_height, hf, xz, out_h, out_n, out_mask)


@njit(cache=True)
def hf_raycast(heights, grid, origins, dirs, tmaxs, mask, dist, point, normal):
    """Ray casts on a heightfield."""
    hf = HeightfieldShape(heights, grid_of(grid))
    cast_rays(_hf_hit, hf, origins, dirs, tmaxs, RayOut(mask, dist, point, normal))
