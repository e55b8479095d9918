"""Numba kernels of the ground layer (see :mod:`ikrig.ground`). Everything here is private.

All kernels work in float64 on flat, C-contiguous arrays; the public wrappers convert,
broadcast and flatten the inputs and cast the results back to the caller's dtype.

Ray kernels share one contract. Inputs: ``origins (N, 3)``, ``directions (N, 3)`` (any
length; normalised here, a zero direction is a miss), ``max_dist (N,)`` (``>= 0``, may be
``inf``). Outputs, written in place: ``mask (N,) bool``, ``dist (N,)`` (distance along the
unit direction), ``point (N, 3)``, ``normal (N, 3)`` (unit, turned to face the ray origin's
side, i.e. against the direction). A miss writes ``dist = max_dist``,
``point = origin + unit_dir * max_dist`` (the origin itself when ``max_dist`` is infinite)
and ``normal = +Y``. Hits have ``0 <= dist <= max_dist``.

Grids are traversed with a 2D DDA in the XZ plane (Amanatides & Woo): the ray is first
clipped to the grid's bounding box (including its height range), then visits the cells its
XZ shadow crosses in order of distance, skipping cells whose height range the ray's height
interval over the cell does not meet.
"""

from __future__ import annotations

import math

import numpy as np

from .._numba import njit

# Barycentric slack of the ray-triangle test: rays through a shared edge or vertex hit at
# least one of the triangles sharing it (both, at the same distance, is harmless).
BARY_EPS = 1e-9
# A ray is parallel to a triangle (no hit) when |cos(angle to its normal)| is below this.
PARALLEL_EPS = 1e-12
# Relative padding of bounding boxes and cell height ranges (times a cell size).
PAD = 1e-7


@njit(cache=True)
def unit_dir(dx, dy, dz):
    """``(ux, uy, uz, ok)``: the unit direction, and False (zeros) for a zero vector."""
    m = max(abs(dx), abs(dy), abs(dz))
    if not (m > 0.0):
        return 0.0, 0.0, 0.0, False
    dx /= m
    dy /= m
    dz /= m
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    return dx / n, dy / n, dz / n, True


@njit(cache=True)
def write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal):
    mask[i] = False
    dist[i] = tmax
    if math.isinf(tmax):
        point[i, 0] = ox
        point[i, 1] = oy
        point[i, 2] = oz
    else:
        point[i, 0] = ox + dx * tmax
        point[i, 1] = oy + dy * tmax
        point[i, 2] = oz + dz * tmax
    normal[i, 0] = 0.0
    normal[i, 1] = 1.0
    normal[i, 2] = 0.0


@njit(cache=True)
def write_hit(i, ox, oy, oz, dx, dy, dz, t, nx, ny, nz, mask, dist, point, normal):
    """Write a hit at distance ``t``; the normal ``(nx, ny, nz)`` is normalised and turned
    to face against the direction."""
    mask[i] = True
    dist[i] = t
    point[i, 0] = ox + dx * t
    point[i, 1] = oy + dy * t
    point[i, 2] = oz + dz * t
    n = math.sqrt(nx * nx + ny * ny + nz * nz)
    if not (n > 0.0):
        nx, ny, nz, n = 0.0, 1.0, 0.0, 1.0
    if nx * dx + ny * dy + nz * dz > 0.0:
        n = -n
    normal[i, 0] = nx / n + 0.0  # + 0.0: no negative zeros
    normal[i, 1] = ny / n + 0.0
    normal[i, 2] = nz / n + 0.0


@njit(cache=True)
def ray_tri(ox, oy, oz, dx, dy, dz, ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, nlen, tmax):
    """Moller-Trumbore, two-sided: distance to triangle ``a, a + e1, a + e2`` or -1.0.

    ``d`` is a unit vector; ``nlen = |e1 x e2|`` (twice the area; <= 0 means degenerate).
    Accepts ``0 <= t <= tmax``.
    """
    if not (nlen > 0.0):
        return -1.0
    px = dy * e2z - dz * e2y
    py = dz * e2x - dx * e2z
    pz = dx * e2y - dy * e2x
    det = e1x * px + e1y * py + e1z * pz
    if abs(det) <= PARALLEL_EPS * nlen:
        return -1.0
    inv = 1.0 / det
    tx = ox - ax
    ty = oy - ay
    tz = oz - az
    u = (tx * px + ty * py + tz * pz) * inv
    if u < -BARY_EPS or u > 1.0 + BARY_EPS:
        return -1.0
    qx = ty * e1z - tz * e1y
    qy = tz * e1x - tx * e1z
    qz = tx * e1y - ty * e1x
    v = (dx * qx + dy * qy + dz * qz) * inv
    if v < -BARY_EPS or u + v > 1.0 + BARY_EPS:
        return -1.0
    t = (e2x * qx + e2y * qy + e2z * qz) * inv
    if t < 0.0 or t > tmax:
        return -1.0
    return t


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
    """``(step, t_next, t_delta)`` of one grid axis for a ray in cell ``i``."""
    if d > 0.0:
        return 1, (lo + (i + 1) * cell - o) / d, cell / d
    if d < 0.0:
        return -1, (lo + i * cell - o) / d, -cell / d
    return 0, math.inf, math.inf


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
def grid_entry(ox, oy, oz, dx, dy, dz, tmax, x0, z0, cx, cz, ncx, ncz, ylo, yhi, pad):
    """Where a unit-direction ray enters a grid of ``ncx x ncz`` XZ cells (corner ``x0, z0``,
    sizes ``cx, cz``) whose contents lie in ``[ylo, yhi]``, padded by ``pad``.

    Returns ``(enters, t0, t1, ix, iz, sx, tnx, tdx, sz, tnz, tdz)``: the parameter interval
    inside the grid, the entry cell and the per-axis DDA state (see :func:`dda_axis`).
    """
    t0, t1 = slab(ox, dx, x0 - pad, x0 + ncx * cx + pad, 0.0, tmax)
    t0, t1 = slab(oz, dz, z0 - pad, z0 + ncz * cz + pad, t0, t1)
    t0, t1 = slab(oy, dy, ylo - pad, yhi + pad, t0, t1)
    if not (t0 <= t1):
        return False, t0, t1, 0, 0, 0, math.inf, math.inf, 0, math.inf, math.inf
    ix = cell_index(ox + dx * t0, x0, cx, ncx)
    iz = cell_index(oz + dz * t0, z0, cz, ncz)
    sx, tnx, tdx = dda_axis(ox, dx, x0, cx, ix)
    sz, tnz, tdz = dda_axis(oz, dz, z0, cz, iz)
    return True, t0, t1, ix, iz, sx, tnx, tdx, sz, tnz, tdz


@njit(cache=True)
def dda_step(ix, iz, sx, sz, tnx, tnz, tdx, tdz):
    """One step of the 2D DDA to the next cell: ``(ix, iz, t_enter, tnx, tnz)``."""
    if tnx <= tnz:
        return ix + sx, iz, tnx, tnx + tdx, tnz
    return ix, iz + sz, tnz, tnx, tnz + tdz


# --------------------------------------------------------------------------- heightfield


@njit(cache=True)
def hf_height_at(heights, x0, z0, cx, cz, xz, out_h, out_n, out_mask):
    """Vertical queries on a heightfield: height, upward unit normal and mask per point.

    ``heights (H, W)``: ``heights[iz, ix]`` at ``(x0 + ix cx, z0 + iz cz)``. Each cell is
    split along its diagonal from ``(ix, iz)`` to ``(ix + 1, iz + 1)``.
    """
    nz_ = heights.shape[0]
    nx_ = heights.shape[1]
    for i in range(xz.shape[0]):
        gx = (xz[i, 0] - x0) / cx
        gz = (xz[i, 1] - z0) / cz
        # the border belongs to the grid, with the ray casts' slack for rounding
        lim_x = nx_ - 1 + BARY_EPS
        lim_z = nz_ - 1 + BARY_EPS
        if not (gx >= -BARY_EPS and gx <= lim_x and gz >= -BARY_EPS and gz <= lim_z):
            out_mask[i] = False
            out_h[i] = 0.0
            out_n[i, 0] = 0.0
            out_n[i, 1] = 1.0
            out_n[i, 2] = 0.0
            continue
        gx = min(max(gx, 0.0), nx_ - 1.0)
        gz = min(max(gz, 0.0), nz_ - 1.0)
        ix = min(int(math.floor(gx)), nx_ - 2)
        iz = min(int(math.floor(gz)), nz_ - 2)
        u = gx - ix
        v = gz - iz
        h00 = heights[iz, ix]
        h10 = heights[iz, ix + 1]
        h01 = heights[iz + 1, ix]
        h11 = heights[iz + 1, ix + 1]
        if u >= v:  # triangle (00, 10, 11)
            sx = h10 - h00
            sz = h11 - h10
        else:  # triangle (00, 11, 01)
            sx = h11 - h01
            sz = h01 - h00
        out_h[i] = h00 + u * sx + v * sz
        gxw = sx / cx
        gzw = sz / cz
        n = math.sqrt(gxw * gxw + 1.0 + gzw * gzw)
        out_n[i, 0] = -gxw / n + 0.0
        out_n[i, 1] = 1.0 / n
        out_n[i, 2] = -gzw / n + 0.0
        out_mask[i] = True


@njit(cache=True)
def hf_raycast(
    heights, x0, z0, cx, cz, hmin, hmax, origins, dirs, tmaxs, mask, dist, point, normal
):
    """Ray casts on a heightfield (see the module docstring for the contract)."""
    nz_ = heights.shape[0]
    nx_ = heights.shape[1]
    pad = PAD * min(cx, cz)
    for i in range(origins.shape[0]):
        ox = origins[i, 0]
        oy = origins[i, 1]
        oz = origins[i, 2]
        dx, dy, dz, ok = unit_dir(dirs[i, 0], dirs[i, 1], dirs[i, 2])
        tmax = tmaxs[i]
        if not ok:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)
            continue
        enters, t0, t1, ix, iz, sx, tnx, tdx, sz, tnz, tdz = grid_entry(
            ox, oy, oz, dx, dy, dz, tmax, x0, z0, cx, cz, nx_ - 1, nz_ - 1, hmin, hmax, pad
        )
        if not enters:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)
            continue
        t_cur = t0
        found = False
        for _ in range(nx_ + nz_ + 2):
            t_out = min(tnx, tnz, t1)
            ya = oy + dy * t_cur
            yb = oy + dy * t_out
            h00 = heights[iz, ix]
            h10 = heights[iz, ix + 1]
            h01 = heights[iz + 1, ix]
            h11 = heights[iz + 1, ix + 1]
            cmin = min(min(h00, h10), min(h01, h11))
            cmax = max(max(h00, h10), max(h01, h11))
            if max(ya, yb) + pad >= cmin and min(ya, yb) - pad <= cmax:
                ax = x0 + ix * cx
                az = z0 + iz * cz
                # triangle A: (00, 10, 11); e1 = 10 - 00, e2 = 11 - 00
                e1x, e1y, e1z = cx, h10 - h00, 0.0
                e2x, e2y, e2z = cx, h11 - h00, cz
                nax = e1y * e2z - e1z * e2y
                nay = e1z * e2x - e1x * e2z
                naz = e1x * e2y - e1y * e2x
                la = math.sqrt(nax * nax + nay * nay + naz * naz)
                ta = ray_tri(
                    ox, oy, oz, dx, dy, dz, ax, h00, az, e1x, e1y, e1z, e2x, e2y, e2z, la, tmax
                )
                # triangle B: (00, 11, 01); e1 = 11 - 00, e2 = 01 - 00
                f2x, f2y, f2z = 0.0, h01 - h00, cz
                nbx = e2y * f2z - e2z * f2y
                nby = e2z * f2x - e2x * f2z
                nbz = e2x * f2y - e2y * f2x
                lb = math.sqrt(nbx * nbx + nby * nby + nbz * nbz)
                tb = ray_tri(
                    ox, oy, oz, dx, dy, dz, ax, h00, az, e2x, e2y, e2z, f2x, f2y, f2z, lb, tmax
                )
                if ta >= 0.0 and (tb < 0.0 or ta <= tb):
                    write_hit(
                        i, ox, oy, oz, dx, dy, dz, ta, nax, nay, naz, mask, dist, point, normal
                    )
                    found = True
                    break
                if tb >= 0.0:
                    write_hit(
                        i, ox, oy, oz, dx, dy, dz, tb, nbx, nby, nbz, mask, dist, point, normal
                    )
                    found = True
                    break
            if t_out >= t1:
                break
            ix, iz, t_cur, tnx, tnz = dda_step(ix, iz, sx, sz, tnx, tnz, tdx, tdz)
            if ix < 0 or ix > nx_ - 2 or iz < 0 or iz > nz_ - 2:
                break
        if not found:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)


# --------------------------------------------------------------------------- triangle mesh


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
def mesh_raycast(
    tri,  # (F, 10): a(3), e1(3), e2(3), |e1 x e2| (<= 0: degenerate)
    nrm,  # (F, 3): unit normals
    starts,
    items,
    ibox,  # (len(items), 6) float32: each item's triangle box, x/y/z min and max
    cell_y,  # (C, 2): min and max height of the triangles binned in each cell
    grid,  # (8,): x0, z0, cx, cz, nx, nz, ymin, ymax
    origins,
    dirs,
    tmaxs,
    mask,
    dist,
    point,
    normal,
):
    """Nearest-hit ray casts on a triangle mesh through its XZ grid."""
    x0 = grid[0]
    z0 = grid[1]
    cx = grid[2]
    cz = grid[3]
    nx_ = int(grid[4])
    nz_ = int(grid[5])
    ymin = grid[6]
    ymax = grid[7]
    pad = PAD * min(cx, cz)
    for i in range(origins.shape[0]):
        ox = origins[i, 0]
        oy = origins[i, 1]
        oz = origins[i, 2]
        dx, dy, dz, ok = unit_dir(dirs[i, 0], dirs[i, 1], dirs[i, 2])
        tmax = tmaxs[i]
        if not ok:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)
            continue
        enters, t0, t1, ix, iz, sx, tnx, tdx, sz, tnz, tdz = grid_entry(
            ox, oy, oz, dx, dy, dz, tmax, x0, z0, cx, cz, nx_, nz_, ymin, ymax, pad
        )
        if not enters:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)
            continue
        t_cur = t0
        best = math.inf
        best_f = -1
        for _ in range(nx_ + nz_ + 2):
            t_out = min(tnx, tnz, t1)
            c = iz * nx_ + ix
            ya = oy + dy * t_cur
            yb = oy + dy * min(t_out, best)
            if max(ya, yb) + pad >= cell_y[c, 0] and min(ya, yb) - pad <= cell_y[c, 1]:
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
                for k in range(starts[c], starts[c + 1]):
                    f = items[k]
                    if (
                        ibox[k, 0] > bx1
                        or ibox[k, 1] < bx0
                        or ibox[k, 2] > by1
                        or ibox[k, 3] < by0
                        or ibox[k, 4] > bz1
                        or ibox[k, 5] < bz0
                    ):
                        continue
                    t = ray_tri(
                        ox,
                        oy,
                        oz,
                        dx,
                        dy,
                        dz,
                        tri[f, 0],
                        tri[f, 1],
                        tri[f, 2],
                        tri[f, 3],
                        tri[f, 4],
                        tri[f, 5],
                        tri[f, 6],
                        tri[f, 7],
                        tri[f, 8],
                        tri[f, 9],
                        lim,
                    )
                    if t >= 0.0 and (t < best or (t == best and f < best_f)):
                        best = t
                        best_f = f
                        lim = t
            if best <= t_out or t_out >= t1:
                break
            ix, iz, t_cur, tnx, tnz = dda_step(ix, iz, sx, sz, tnx, tnz, tdx, tdz)
            if ix < 0 or ix >= nx_ or iz < 0 or iz >= nz_:
                break
        if best_f >= 0:
            f = best_f
            write_hit(
                i,
                ox,
                oy,
                oz,
                dx,
                dy,
                dz,
                best,
                nrm[f, 0],
                nrm[f, 1],
                nrm[f, 2],
                mask,
                dist,
                point,
                normal,
            )
        else:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)


@njit(cache=True)
def tri_hits(tri, nrm, rows, origins, dirs, tmaxs, mask, dist, point, normal):
    """Complete ray casts whose triangle is already known: row ``rows[i]`` of ``tri`` (-1: none).

    Used after an external intersector (Embree) picked the triangles: the distance is
    recomputed in float64 from the triangle's plane; rays whose distance falls outside
    ``[0, max_dist]`` (or that are parallel to the plane) become misses.
    """
    for i in range(origins.shape[0]):
        ox = origins[i, 0]
        oy = origins[i, 1]
        oz = origins[i, 2]
        dx, dy, dz, ok = unit_dir(dirs[i, 0], dirs[i, 1], dirs[i, 2])
        tmax = tmaxs[i]
        f = rows[i]
        if ok and f >= 0:
            nx = nrm[f, 0]
            ny = nrm[f, 1]
            nz = nrm[f, 2]
            den = nx * dx + ny * dy + nz * dz
            if abs(den) > PARALLEL_EPS:
                t = ((tri[f, 0] - ox) * nx + (tri[f, 1] - oy) * ny + (tri[f, 2] - oz) * nz) / den
                t = max(t, 0.0)
                if t <= tmax:
                    write_hit(i, ox, oy, oz, dx, dy, dz, t, nx, ny, nz, mask, dist, point, normal)
                    continue
        write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)


# --------------------------------------------------------------------------- profile grounds


@njit(cache=True)
def seg_hit(s0, y0, a, b, ps, py, qs, qy, tol, tmax):
    """Distance at which the 2D ray ``(s0 + a t, y0 + b t)`` crosses segment P-Q, or -1.

    ``tol``: absolute slack (in length units) at the segment's ends.
    """
    es = qs - ps
    ey = qy - py
    elen = math.sqrt(es * es + ey * ey)
    det = es * b - a * ey
    if not (elen > 0.0) or abs(det) <= PARALLEL_EPS * elen:
        return -1.0
    ws = ps - s0
    wy = py - y0
    t = (es * wy - ey * ws) / det
    u = (a * wy - b * ws) / det
    slack = tol / elen
    if u < -slack or u > 1.0 + slack or t < 0.0 or t > tmax:
        return -1.0
    return t


@njit(cache=True)
def profile_height_at(ks, ky, cxz, w, floor, xz, out_h, out_n, out_mask):
    """Vertical queries on a profile ground ``y = floor + f(s)``, ``s = (xz - c) . w``.

    ``ks (K,)`` non-decreasing knot positions (equal neighbours form a vertical face),
    ``ky (K,)`` knot heights; constant beyond the end knots. At a vertical face the top
    height is returned; the normal is that of the segment to the right (+s side).
    """
    k = ks.shape[0]
    for i in range(xz.shape[0]):
        s = (xz[i, 0] - cxz[0]) * w[0] + (xz[i, 1] - cxz[1]) * w[1]
        j = np.searchsorted(ks, s, side="right") - 1  # last knot with ks <= s
        slope = 0.0
        if j < 0:
            h = ky[0]
        elif ks[j] == s:
            h = ky[j]
            m = j - 1
            while m >= 0 and ks[m] == s:
                h = max(h, ky[m])
                m -= 1
            if j + 1 < k and ks[j + 1] > s:
                slope = (ky[j + 1] - ky[j]) / (ks[j + 1] - ks[j])
        elif j >= k - 1:
            h = ky[k - 1]
        else:
            slope = (ky[j + 1] - ky[j]) / (ks[j + 1] - ks[j])
            h = ky[j] + (s - ks[j]) * slope
        out_h[i] = floor + h
        n = math.sqrt(slope * slope + 1.0)
        out_n[i, 0] = -slope * w[0] / n + 0.0
        out_n[i, 1] = 1.0 / n
        out_n[i, 2] = -slope * w[1] / n + 0.0
        out_mask[i] = True


@njit(cache=True)
def profile_raycast(ks, ky, cxz, w, floor, origins, dirs, tmaxs, mask, dist, point, normal):
    """Ray casts on a profile ground (see :func:`profile_height_at`).

    The ray is projected on the vertical plane through ``w``: ``s(t) = s0 + a t``,
    ``y(t) = y0 + b t`` with ``a = d . w``, ``b = d_y``; ``t`` stays the 3D distance. The
    segments are walked in the order the ray's ``s`` meets them, so the first hit is the
    nearest. The end knots are extended by horizontal segments far beyond the profile.
    """
    k = ks.shape[0]
    span = ks[k - 1] - ks[0]
    yspan = np.max(ky) - np.min(ky)
    tol = BARY_EPS * (span + yspan)
    if not (tol > 0.0):
        tol = 1e-12
    big = 1e9 * (span + abs(ks[0]) + abs(ks[k - 1]) + 1.0)
    for i in range(origins.shape[0]):
        ox = origins[i, 0]
        oy = origins[i, 1]
        oz = origins[i, 2]
        dx, dy, dz, ok = unit_dir(dirs[i, 0], dirs[i, 1], dirs[i, 2])
        tmax = tmaxs[i]
        if not ok:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)
            continue
        s0 = (ox - cxz[0]) * w[0] + (oz - cxz[1]) * w[1]
        y0 = oy - floor
        a = dx * w[0] + dz * w[1]
        b = dy
        # Walk the segments in the order the ray's s meets them; stop once a segment lies
        # beyond the s the ray can still reach (at max_dist, or at the best hit so far).
        if a >= 0.0:
            j = np.searchsorted(ks, s0 - tol, side="left")
            stop = k + 1
            step = 1
        else:
            j = np.searchsorted(ks, s0 + tol, side="right")
            stop = -1
            step = -1
        lim = tmax
        hit_t = -1.0
        hs = 0.0
        hy = 0.0
        while j != stop:
            if j == 0:
                ps, py, qs, qy = ks[0] - big, ky[0], ks[0], ky[0]
            elif j == k:
                ps, py, qs, qy = ks[k - 1], ky[k - 1], ks[k - 1] + big, ky[k - 1]
            else:
                ps, py, qs, qy = ks[j - 1], ky[j - 1], ks[j], ky[j]
            if math.isinf(lim):
                reach = math.inf if a != 0.0 else 0.0
            else:
                reach = abs(a) * lim
            if step > 0 and ps > s0 + reach + tol:
                break
            if step < 0 and qs < s0 - reach - tol:
                break
            t = seg_hit(s0, y0, a, b, ps, py, qs, qy, tol, lim)
            if t >= 0.0 and (hit_t < 0.0 or t < hit_t):
                hit_t = t
                lim = t
                hs = -(qy - py)
                hy = qs - ps
            j += step
        if hit_t >= 0.0:
            write_hit(
                i,
                ox,
                oy,
                oz,
                dx,
                dy,
                dz,
                hit_t,
                hs * w[0],
                hy,
                hs * w[1],
                mask,
                dist,
                point,
                normal,
            )
        else:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)


# --------------------------------------------------------------------------- blocks


@njit(cache=True)
def _in_box(boxes, slot, s, u):
    """True if ``(s, u)`` lies strictly inside the footprint of the box of ``slot``."""
    return (
        boxes[slot, 4] > 0.0
        and boxes[slot, 0] < s < boxes[slot, 1]
        and boxes[slot, 2] < u < boxes[slot, 3]
    )


@njit(cache=True)
def _slot_of(s, u, grid):
    """Slot index of ``(s, u)`` or -1 outside the slot grid."""
    gs = (s - grid[0]) / grid[2]
    gu = (u - grid[1]) / grid[3]
    ns = int(grid[4])
    nu = int(grid[5])
    if not (gs >= 0.0 and gu >= 0.0 and gs < ns and gu < nu):
        return -1
    return int(gu) * ns + int(gs)


@njit(cache=True)
def blocks_height_at(boxes, grid, cxz, w, floor, xz, out_h, out_n, out_mask):
    """Vertical queries on a floor with boxes (top height where inside a box, edges
    included; floor elsewhere). Normals are +Y.

    ``boxes (S, 5)``: per slot ``s0, s1, u0, u1, height`` in the walking frame (height 0:
    empty slot); ``grid``: ``s_lo, u_lo, slot_s, slot_u, n_s, n_u``; ``s = (xz - c) . w``,
    ``u = (xz - c) . (w_z, -w_x)``.
    """
    for i in range(xz.shape[0]):
        rx = xz[i, 0] - cxz[0]
        rz = xz[i, 1] - cxz[1]
        s = rx * w[0] + rz * w[1]
        u = rx * w[1] - rz * w[0]
        h = 0.0
        slot = _slot_of(s, u, grid)
        if slot >= 0:
            if boxes[slot, 0] <= s <= boxes[slot, 1] and boxes[slot, 2] <= u <= boxes[slot, 3]:
                h = boxes[slot, 4]
        out_h[i] = floor + h
        out_n[i, 0] = 0.0
        out_n[i, 1] = 1.0
        out_n[i, 2] = 0.0
        out_mask[i] = True


@njit(cache=True)
def _box_hit(boxes, slot, s0, u0, y0, a, c, b, tmax):
    """Nearest crossing of the ray with the top and the four sides of a slot's box.

    Returns ``(t, ns, nu, ny)`` with an outward face normal, or ``t = -1``.
    """
    bs0 = boxes[slot, 0]
    bs1 = boxes[slot, 1]
    bu0 = boxes[slot, 2]
    bu1 = boxes[slot, 3]
    h = boxes[slot, 4]
    best = -1.0
    rs = 0.0
    ru = 0.0
    ry = 0.0
    if h <= 0.0:
        return best, rs, ru, ry
    eps_s = BARY_EPS * (bs1 - bs0)
    eps_u = BARY_EPS * (bu1 - bu0)
    eps_y = BARY_EPS * h
    if b != 0.0:  # top
        t = (h - y0) / b
        if 0.0 <= t <= tmax:
            s = s0 + a * t
            u = u0 + c * t
            if bs0 - eps_s <= s <= bs1 + eps_s and bu0 - eps_u <= u <= bu1 + eps_u:
                best = t
                rs, ru, ry = 0.0, 0.0, 1.0
    if a != 0.0:  # faces s = bs0, s = bs1
        for side in range(2):
            plane = bs0 if side == 0 else bs1
            t = (plane - s0) / a
            if 0.0 <= t <= tmax and (best < 0.0 or t < best):
                u = u0 + c * t
                y = y0 + b * t
                if bu0 - eps_u <= u <= bu1 + eps_u and -eps_y <= y <= h + eps_y:
                    best = t
                    rs, ru, ry = (-1.0 if side == 0 else 1.0), 0.0, 0.0
    if c != 0.0:  # faces u = bu0, u = bu1
        for side in range(2):
            plane = bu0 if side == 0 else bu1
            t = (plane - u0) / c
            if 0.0 <= t <= tmax and (best < 0.0 or t < best):
                s = s0 + a * t
                y = y0 + b * t
                if bs0 - eps_s <= s <= bs1 + eps_s and -eps_y <= y <= h + eps_y:
                    best = t
                    rs, ru, ry = 0.0, (-1.0 if side == 0 else 1.0), 0.0
    return best, rs, ru, ry


@njit(cache=True)
def blocks_raycast(
    boxes, grid, hmax, cxz, w, floor, origins, dirs, tmaxs, mask, dist, point, normal
):
    """Ray casts on a floor plane with boxes standing on it (tops and sides; the floor is
    holed under the boxes). Boxes are found by a DDA over the slot grid."""
    s_lo = grid[0]
    u_lo = grid[1]
    gs_ = grid[2]
    gu_ = grid[3]
    ns = int(grid[4])
    nu = int(grid[5])
    s_hi = s_lo + ns * gs_
    u_hi = u_lo + nu * gu_
    pad = PAD * min(gs_, gu_)
    for i in range(origins.shape[0]):
        ox = origins[i, 0]
        oy = origins[i, 1]
        oz = origins[i, 2]
        dx, dy, dz, ok = unit_dir(dirs[i, 0], dirs[i, 1], dirs[i, 2])
        tmax = tmaxs[i]
        if not ok:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)
            continue
        rx = ox - cxz[0]
        rz = oz - cxz[1]
        s0 = rx * w[0] + rz * w[1]
        u0 = rx * w[1] - rz * w[0]
        y0 = oy - floor
        a = dx * w[0] + dz * w[1]
        c = dx * w[1] - dz * w[0]
        b = dy
        best = -1.0
        ns_, nu_, ny_ = 0.0, 0.0, 0.0
        # the floor, outside the boxes' footprints
        if b != 0.0:
            t = -y0 / b
            if 0.0 <= t <= tmax:
                s = s0 + a * t
                u = u0 + c * t
                slot = _slot_of(s, u, grid)
                if slot < 0 or not _in_box(boxes, slot, s, u):
                    best = t
                    ns_, nu_, ny_ = 0.0, 0.0, 1.0
        # the boxes: the first slot with a hit holds the nearest box hit
        lim = tmax if best < 0.0 else best
        t0, t1 = slab(s0, a, s_lo - pad, s_hi + pad, 0.0, lim)
        t0, t1 = slab(u0, c, u_lo - pad, u_hi + pad, t0, t1)
        t0, t1 = slab(y0, b, -pad, hmax + pad, t0, t1)
        if t0 <= t1:
            js = cell_index(s0 + a * t0, s_lo, gs_, ns)
            ju = cell_index(u0 + c * t0, u_lo, gu_, nu)
            ss, tns, tds = dda_axis(s0, a, s_lo, gs_, js)
            su, tnu, tdu = dda_axis(u0, c, u_lo, gu_, ju)
            for _ in range(ns + nu + 2):
                t_out = min(tns, tnu, t1)
                tb, bs, bu, by = _box_hit(boxes, ju * ns + js, s0, u0, y0, a, c, b, lim)
                if tb >= 0.0:
                    best = tb
                    ns_, nu_, ny_ = bs, bu, by
                    break
                if t_out >= t1:
                    break
                if tns <= tnu:
                    js += ss
                    tns += tds
                else:
                    ju += su
                    tnu += tdu
                if js < 0 or js >= ns or ju < 0 or ju >= nu:
                    break
        if best >= 0.0:
            # back from the walking frame: s axis = (w_x, w_z), u axis = (w_z, -w_x)
            nx = ns_ * w[0] + nu_ * w[1]
            nz = ns_ * w[1] - nu_ * w[0]
            write_hit(i, ox, oy, oz, dx, dy, dz, best, nx, ny_, nz, mask, dist, point, normal)
        else:
            write_miss(i, ox, oy, oz, dx, dy, dz, tmax, mask, dist, point, normal)


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
