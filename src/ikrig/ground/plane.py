"""An infinite plane, answered analytically (vectorised NumPy, no kernel)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._checks import as_float
from ..errors import InputError
from ._ray import RayOut
from .base import Hits, make_hits, prepare_rays, prepare_xz

# A ray is parallel to the plane (a miss) when |cos(angle to the normal)| is below this; a
# plane is vertical (no vertical-query answer) when |normal_y| is below it.
PARALLEL_EPS = 1e-12


class Plane:
    """The infinite plane through ``point`` with normal ``normal`` (world space).

    Args:
        point: ``(3,)`` a point on the plane, in length units.
        normal: ``(3,)`` its normal, any non-zero length (normalised; the sign does not
            matter: hit normals face the ray's side, vertical-query normals face up).

    Raises:
        InputError: wrong shapes, NaN, or a zero normal.

    Rays parallel to the plane miss (even when they lie in it). A vertical plane has no
    height: :meth:`height_at` reports misses everywhere.

    Example:
        >>> ground = Plane([0, 0, 0], [0, 1, 0])
        >>> float(ground.raycast([0, 2, 0], [0, -1, 0]).distance)
        2.0
    """

    def __init__(
        self, point: ArrayLike = (0.0, 0.0, 0.0), normal: ArrayLike = (0.0, 1.0, 0.0)
    ) -> None:
        p = as_float(point, "point", last=3, dtype=np.float64)
        n = as_float(normal, "normal", last=3, dtype=np.float64)
        if p.shape != (3,) or n.shape != (3,):
            raise InputError(f"Plane: point and normal must be (3,), got {p.shape}, {n.shape}")
        length = float(np.linalg.norm(n))
        if not length > 0.0:
            raise InputError("Plane: normal must be non-zero")
        self.point = p
        self.normal = n / length

    def __repr__(self) -> str:
        return f"Plane(point={self.point.tolist()}, normal={self.normal.tolist()})"

    def raycast(
        self, origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
    ) -> Hits:
        """Nearest hit of each ray with the plane; see :meth:`ikrig.ground.Ground.raycast`."""
        rays = prepare_rays(origins, directions, max_dist)
        o, d, md = rays.origins, rays.directions, rays.max_dist
        scale = np.max(np.abs(d), axis=-1)
        ok = scale > 0.0
        d = d / np.where(ok, scale, 1.0)[:, None]
        length = np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2 + d[:, 2] ** 2)
        d = d / np.where(ok, length, 1.0)[:, None]
        d = np.where(ok[:, None], d, 0.0)
        n = self.normal
        # explicit sums (not BLAS matmul): results do not depend on the batch size
        den = d[:, 0] * n[0] + d[:, 1] * n[1] + d[:, 2] * n[2]
        w = self.point - o
        num = w[:, 0] * n[0] + w[:, 1] * n[1] + w[:, 2] * n[2]
        para = np.abs(den) <= PARALLEL_EPS
        t = num / np.where(para, 1.0, den)
        mask = ok & ~para & (t >= 0.0) & (t <= md)
        dist = np.where(mask, t, md)
        reach = np.where(np.isinf(md), 0.0, md)
        point = o + d * np.where(mask, t, reach)[:, None]
        side = np.where(den > 0.0, -1.0, 1.0)[:, None]
        normal = np.where(mask[:, None], n * side, np.array([0.0, 1.0, 0.0]))
        return make_hits(rays, RayOut(mask, dist, point, normal))

    def height_at(self, xz: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Heights and upward normals; see :meth:`ikrig.ground.Ground.height_at`."""
        dtype, shape, flat = prepare_xz(xz)
        nx, ny, nz = self.normal
        up = self.normal if ny >= 0 else -self.normal
        if abs(ny) <= PARALLEL_EPS:
            h = np.zeros(flat.shape[0])
            nrm = np.broadcast_to(np.array([0.0, 1.0, 0.0]), (flat.shape[0], 3))
            mask = np.zeros(flat.shape[0], dtype=bool)
        else:
            px, py, pz = self.point
            h = py - (nx * (flat[:, 0] - px) + nz * (flat[:, 1] - pz)) / ny
            nrm = np.broadcast_to(up, (flat.shape[0], 3))
            mask = np.ones(flat.shape[0], dtype=bool)
        return (
            h.reshape(shape).astype(dtype, copy=False),
            np.array(nrm.reshape(shape + (3,)), dtype=dtype),
            mask.reshape(shape),
        )
