"""A regular grid of heights: two triangles per cell, exact queries on those triangles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._checks import as_float, positive
from ..errors import InputError
from ._grid_walk import Grid, grid_settings
from ._heightfield_kernels import hf_height_at, hf_raycast
from ._ray import PAD
from .base import Hits, frozen, prepare_rays, run_height_kernel, run_ray_kernel


class Heightfield:
    """Terrain given by heights on a regular XZ grid.

    Args:
        heights: ``(H, W)`` world Y of the grid vertices, in length units; ``heights[iz, ix]``
            is the height at ``x = origin_xz[0] + ix * cell_x``, ``z = origin_xz[1] +
            iz * cell_z`` (rows run along +Z, columns along +X). ``H, W >= 2``.
        origin_xz: ``(2,)`` world ``(x, z)`` of vertex ``[0, 0]``.
        cell_size: cell edge length, a scalar or ``(cell_x, cell_z)``, > 0.

    Each cell is split into two triangles along its diagonal from vertex ``(ix, iz)`` to
    ``(ix + 1, iz + 1)``: ``(00, 10, 11)`` and ``(00, 11, 01)``. The surface is exactly that
    triangle mesh: :meth:`height_at` interpolates linearly on the triangle under the point
    (vectorised, exact), :meth:`raycast` walks the cells the ray crosses (2D DDA, skipping
    cells whose height range the ray misses) and intersects their two triangles (Numba).

    Outside the grid's XZ rectangle there is no ground: queries there are misses. Rays that
    start below the surface hit it from below (the normal then faces down, toward them).

    Raises:
        InputError: wrong shapes, fewer than 2 rows or columns, NaN heights, or a cell size
            that is not > 0.
    """

    def __init__(
        self, heights: ArrayLike, origin_xz: ArrayLike = (0.0, 0.0), cell_size: ArrayLike = 1.0
    ) -> None:
        h = as_float(heights, "heights", dtype=np.float64)
        if h.ndim != 2 or h.shape[0] < 2 or h.shape[1] < 2:
            raise InputError(f"heights: expected shape (H, W) with H, W >= 2, got {h.shape}")
        o = as_float(origin_xz, "origin_xz", last=2, dtype=np.float64)
        if o.shape != (2,):
            raise InputError(f"origin_xz: expected shape (2,), got {o.shape}")
        c = np.asarray(cell_size, dtype=np.float64)
        if c.shape == ():
            c = np.array([c, c])
        if c.shape != (2,):
            raise InputError(f"cell_size: expected a scalar or (2,), got shape {c.shape}")
        self.heights = np.ascontiguousarray(h)
        self.heights.setflags(write=False)
        self.origin_xz = frozen(o)
        self.cell_size = frozen([positive(c[0], "cell_size"), positive(c[1], "cell_size")])
        self.hmin = float(h.min())
        self.hmax = float(h.max())
        self._kernel_args = self._make_kernel_args()

    def _make_kernel_args(self) -> tuple[np.ndarray, np.ndarray]:
        """``(heights, grid settings)``: what the kernels take, built once (a ground does not
        change after construction)."""
        h, w = self.heights.shape
        x0, z0 = self.origin_xz.tolist()
        cx, cz = self.cell_size.tolist()
        pad = PAD * min(cx, cz)
        grid = Grid(x0, z0, cx, cz, w - 1, h - 1, self.hmin, self.hmax, pad)
        return self.heights, grid_settings(grid)

    @property
    def shape(self) -> tuple[int, int]:
        """``(H, W)``: vertex rows (along Z) and columns (along X)."""
        h, w = self.heights.shape
        return int(h), int(w)

    @property
    def bounds_xz(self) -> np.ndarray:
        """``(2, 2)``: ``[[x_min, z_min], [x_max, z_max]]`` of the grid."""
        h, w = self.heights.shape
        lo = self.origin_xz
        return np.array([lo, lo + self.cell_size * np.array([w - 1, h - 1])])

    def __repr__(self) -> str:
        h, w = self.heights.shape
        return (
            f"Heightfield({h}x{w}, origin_xz={self.origin_xz.tolist()},"
            f" cell_size={self.cell_size.tolist()}, heights in [{self.hmin:g}, {self.hmax:g}])"
        )

    @classmethod
    def from_function(
        cls,
        fn: Callable[[np.ndarray, np.ndarray], ArrayLike],
        bounds_xz: ArrayLike,
        cell_size: float,
    ) -> Heightfield:
        """Sample ``fn(x, z) -> y`` (vectorised over arrays) on a grid covering ``bounds_xz``.

        Args:
            fn: callable taking two broadcastable arrays of world x and z.
            bounds_xz: ``(2, 2)`` ``[[x_min, z_min], [x_max, z_max]]``; the grid starts at
                the minimum corner and reaches at least the maximum one.
            cell_size: scalar > 0.
        """
        b = as_float(bounds_xz, "bounds_xz", last=2, dtype=np.float64)
        cell = positive(cell_size, "cell_size")
        n = np.maximum(np.ceil((b[1] - b[0]) / cell).astype(np.int64), 1) + 1
        xs = b[0, 0] + cell * np.arange(n[0])
        zs = b[0, 1] + cell * np.arange(n[1])
        heights = np.asarray(fn(xs[None, :], zs[:, None]), dtype=np.float64)
        heights = np.broadcast_to(heights, (n[1], n[0]))
        return cls(heights, b[0], cell)

    def height_at(self, xz: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact heights and upward normals of the triangle under each point.

        ``xz: (..., 2)`` -> ``(heights (...), normals (..., 3), mask (...))``; points on the
        grid's border count as inside, points outside are misses (height 0, normal +Y).
        See :meth:`ikrig.ground.Ground.height_at`.
        """
        return run_height_kernel(*self._height_kernel(), xz)

    def _height_kernel(self) -> tuple[Any, tuple]:
        return hf_height_at, self._kernel_args

    def raycast(
        self, origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
    ) -> Hits:
        """Nearest hit of each ray with the triangles; see :meth:`ikrig.ground.Ground.raycast`."""
        rays = prepare_rays(origins, directions, max_dist)
        return run_ray_kernel(hf_raycast, self._kernel_args, rays)
