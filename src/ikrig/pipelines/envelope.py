"""A smooth envelope over the ground, for feet in the air.

A swinging foot that followed the exact ground would jump up the moment it passes over a
step's edge. Instead it follows ``S``: the ground's maximum within a radius (a dilation),
blurred twice with a box filter. ``S(x)`` is smooth in ``x`` and never below the ground
within ``radius`` of ``x``, so a foot that keeps its animated clearance over ``S`` clears
every edge and rises ahead of steps smoothly.

``S`` is sampled on a lattice anchored at the world origin, in square tiles computed on first
use and cached; a tile's values depend only on the ground, never on which query came first,
so offline and live runs see the same envelope.
"""

from __future__ import annotations

import math

import numpy as np

_NO_GROUND = -1e30


def _shift_max(a: np.ndarray, r: int, axis: int) -> np.ndarray:
    """Running maximum over a window of ``2 r + 1`` along ``axis`` (edges: window clipped)."""
    out = a.copy()
    step = 1
    covered = 0  # out holds the max over [i - covered, i + covered]
    while covered < r:
        s = min(step, r - covered)
        lo = np.take(out, range(0, out.shape[axis] - s), axis=axis)
        hi = np.take(out, range(s, out.shape[axis]), axis=axis)
        new = out.copy()
        idx_hi = [slice(None)] * a.ndim
        idx_lo = [slice(None)] * a.ndim
        idx_hi[axis] = slice(s, None)
        idx_lo[axis] = slice(0, -s)
        new[tuple(idx_hi)] = np.maximum(new[tuple(idx_hi)], lo)
        new[tuple(idx_lo)] = np.maximum(new[tuple(idx_lo)], hi)
        out = new
        covered += s
        step *= 2
    return out


def _box(a: np.ndarray, r: int, axis: int) -> np.ndarray:
    """Mean over a window of ``2 r + 1`` along ``axis`` (the array must have ``r`` of margin)."""
    if r == 0:
        return a
    c = np.cumsum(a, axis=axis)
    c = np.concatenate([np.zeros_like(np.take(c, [0], axis=axis)), c], axis=axis)
    n = a.shape[axis]
    hi = np.take(c, range(2 * r + 1, n + 1), axis=axis)
    lo = np.take(c, range(0, n - 2 * r), axis=axis)
    return (hi - lo) / (2 * r + 1)


class SwingEnvelope:
    """Smooth upper envelope ``S`` of a ground's heights.

    Args:
        ground: anything with ``height_at(xz (..., 2)) -> (heights, normals, mask)``.
        cell: lattice spacing, in the data's units.
        radius: ``S(x)`` >= every ground height within this distance of ``x``.
        blur: radius of each of the two box blurs (smoothness), in the data's units.
        tile: lattice cells per tile side.

    Example:
        >>> from ikrig.pipelines.envelope import SwingEnvelope
        >>> class Step:  # ground 0 for x < 1, 1 beyond
        ...     def height_at(self, xz):
        ...         xz = np.asarray(xz, float)
        ...         h = (xz[..., 0] >= 1.0).astype(float)
        ...         n = np.zeros(xz.shape[:-1] + (3,)); n[..., 1] = 1
        ...         return h, n, np.ones(h.shape, bool)
        >>> env = SwingEnvelope(Step(), cell=0.05, radius=0.2, blur=0.1)
        >>> bool(env.height_at(np.array([0.85, 0.0])) >= 1.0)
        True
    """

    def __init__(self, ground, cell: float, radius: float, blur: float, tile: int = 64):
        self.ground = ground
        self.cell = float(cell)
        self.blur_cells = max(1, int(math.ceil(blur / cell)))
        # dilate by radius + both blurs' reach + two cells for interpolation and sampling
        self.dilate_cells = int(math.ceil(radius / cell)) + 2 * self.blur_cells + 2
        self.tile = int(tile)
        self._tiles: dict[tuple[int, int], np.ndarray] = {}

    def _compute_tile(self, ti: int, tj: int) -> np.ndarray:
        T, d, b = self.tile, self.dilate_cells, self.blur_cells
        m = d + 2 * b  # margin of lattice points sampled around the tile
        ii = np.arange(ti * T - m, (ti + 1) * T + 1 + m)
        jj = np.arange(tj * T - m, (tj + 1) * T + 1 + m)
        xz = np.stack(np.meshgrid(ii * self.cell, jj * self.cell, indexing="ij"), axis=-1)
        h, _, mask = self.ground.height_at(xz)
        h = np.where(mask, np.asarray(h, dtype=np.float64), _NO_GROUND)
        h = _shift_max(_shift_max(h, d, 0), d, 1)[d:-d, d:-d]
        for _ in range(2):
            h = _box(_box(h, b, 0), b, 1)
        return h  # (T + 1, T + 1) lattice values of this tile

    def _tile(self, key):
        t = self._tiles.get(key)
        if t is None:
            t = self._tiles[key] = self._compute_tile(*key)
        return t

    def height_at(self, xz) -> np.ndarray:
        """``S`` at ``xz (..., 2)`` -> ``(...)``; far below any ground where there is none."""
        xz = np.asarray(xz, dtype=np.float64)
        u = xz[..., 0] / self.cell
        v = xz[..., 1] / self.cell
        i0, j0 = np.floor(u).astype(np.int64), np.floor(v).astype(np.int64)
        fu, fv = u - i0, v - j0
        ti, tj = np.floor_divide(i0, self.tile), np.floor_divide(j0, self.tile)
        out = np.empty(u.shape)
        flat_ti, flat_tj = ti.reshape(-1), tj.reshape(-1)
        keys = np.unique(np.stack([flat_ti, flat_tj], axis=-1), axis=0)
        for a, c in keys:
            sel = (ti == a) & (tj == c)
            t = self._tile((int(a), int(c)))
            li, lj = i0[sel] - a * self.tile, j0[sel] - c * self.tile
            su, sv = fu[sel], fv[sel]
            out[sel] = (
                t[li, lj] * (1 - su) * (1 - sv)
                + t[li + 1, lj] * su * (1 - sv)
                + t[li, lj + 1] * (1 - su) * sv
                + t[li + 1, lj + 1] * su * sv
            )
        return out
