"""The ground interface: :class:`Hits` (the result of a ray cast) and the :class:`Ground`
protocol every ground implements, plus the input handling the grounds share.

Space and units: every position is in world space (``_world``), Y up, in the data's own
length units; distances are measured along the *normalised* ray direction, so they are
lengths in the same units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from .._checks import as_float, broadcast_batch, float_dtype
from .._jit.setup import notify_compiling
from ..errors import InputError
from ._ray import RayOut


@dataclass(frozen=True, eq=False)
class Hits:
    """Where a batch of rays meets the ground.

    Attributes:
        mask: ``(...) bool``, True where the ray hit the ground within ``max_dist``.
        distance: ``(...)``, distance from the origin to the hit along the ray, in length
            units (``0 <= distance <= max_dist``).
        point: ``(..., 3)`` world-space hit point, ``origin + unit_direction * distance``.
        normal: ``(..., 3)`` unit surface normal at the hit, turned to face the side the ray
            came from (against the ray direction).

    Misses are flagged by ``mask``, never by an exception or NaN: a miss has
    ``distance = max_dist``, ``point = origin + unit_direction * max_dist`` (the origin
    itself when ``max_dist`` is infinite, and for a zero direction) and ``normal = +Y``.

    The arrays have the broadcast batch shape of the query and the dtype of its inputs
    (float32 stays float32, anything else is float64).
    """

    mask: np.ndarray
    distance: np.ndarray
    point: np.ndarray
    normal: np.ndarray

    @property
    def shape(self) -> tuple[int, ...]:
        """The batch shape ``(...)``."""
        return self.mask.shape


@runtime_checkable
class Ground(Protocol):
    """Anything the foot-placement pipeline can plant feet on.

    Implementations: :class:`~ikrig.ground.Plane`, :class:`~ikrig.ground.Heightfield`,
    :class:`~ikrig.ground.MeshGround` and the procedural grounds of
    :mod:`ikrig.ground.procedural`.
    """

    def raycast(
        self, origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
    ) -> Hits:
        """Nearest intersection of each ray with the ground.

        Args:
            origins: ``(..., 3)`` world-space ray origins.
            directions: ``(..., 3)`` ray directions, any length (normalised internally); a
                zero direction is a miss.
            max_dist: ``(...)`` or scalar, ``>= 0`` (may be ``inf``): hits farther than this
                are misses.

        Returns:
            :class:`Hits` with the broadcast batch shape of the arguments.

        Raises:
            InputError: wrong trailing size, NaN or infinite coordinates, NaN or negative
                ``max_dist``, or batch shapes that do not broadcast.
        """
        ...

    def height_at(self, xz: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vertical queries: the ground's height under (or over) world positions.

        Args:
            xz: ``(..., 2)`` world-space ``(x, z)`` positions.

        Returns:
            ``(heights (...), normals (..., 3), mask (...))``: the height (world Y) of the
            topmost ground surface at each position, its unit normal turned up
            (``normal_y >= 0``), and True where there is ground there. Where ``mask`` is
            False the height is 0 and the normal +Y.

        Raises:
            InputError: wrong trailing size or NaN/infinite input.
        """
        ...


@dataclass(frozen=True)
class RayBatch:
    """Validated, broadcast and flattened ray-cast inputs (float64, C-contiguous)."""

    dtype: np.dtype
    shape: tuple[int, ...]
    origins: np.ndarray  # (N, 3)
    directions: np.ndarray  # (N, 3), not normalised
    max_dist: np.ndarray  # (N,)


def prepare_rays(
    origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
) -> RayBatch:
    """Validate and flatten ray-cast arguments (see :meth:`Ground.raycast`)."""
    dtype = float_dtype(origins, directions)
    o = as_float(origins, "origins", last=3)
    d = as_float(directions, "directions", last=3)
    md = as_float(max_dist, "max_dist", finite=False, dtype=np.float64)
    if np.isnan(md).any():
        raise InputError("max_dist: contains NaN")
    if (md < 0).any():
        raise InputError(f"max_dist: must be >= 0, got minimum {md.min()!r}")
    shape, (o, d, md) = broadcast_batch(
        ("origins", o, 1), ("directions", d, 1), ("max_dist", md, 0)
    )
    n = int(np.prod(shape, dtype=np.int64))
    return RayBatch(
        dtype=dtype,
        shape=shape,
        origins=_kernel_array(o.reshape(n, 3)),
        directions=_kernel_array(d.reshape(n, 3)),
        max_dist=_kernel_array(md.reshape(n)),
    )


def _kernel_array(a) -> np.ndarray:
    """C-contiguous, writeable float64: one compiled signature per kernel (Numba compiles
    read-only arrays, such as broadcast views, as a separate type)."""
    return np.require(a, dtype=np.float64, requirements=["C", "W"])


def frozen(a: ArrayLike) -> np.ndarray:
    """A read-only, C-contiguous float64 copy of ``a``: a ground's geometry, fixed once built
    (its kernels' arguments are built once, from these)."""
    out = np.array(a, dtype=np.float64, order="C")
    out.setflags(write=False)
    return out


def prepare_xz(xz: ArrayLike) -> tuple[np.dtype, tuple[int, ...], np.ndarray]:
    """Validate and flatten vertical-query positions: ``(dtype, batch shape, (N, 2) f64)``."""
    dtype = float_dtype(xz)
    a = as_float(xz, "xz", last=2)
    shape = a.shape[:-1]
    return dtype, shape, _kernel_array(a.reshape(-1, 2))


def empty_outputs(n: int) -> RayOut:
    """Ray-kernel output buffers for ``n`` rays."""
    return RayOut(
        np.empty(n, dtype=np.bool_),  # mask
        np.empty(n, dtype=np.float64),  # dist
        np.empty((n, 3), dtype=np.float64),  # point
        np.empty((n, 3), dtype=np.float64),  # normal
    )


def run_ray_kernel(kernel: Callable[..., Any], args: tuple, rays: RayBatch) -> Hits:
    """Call a ray kernel ``kernel(*args, origins, directions, max_dist, *out)`` (see
    :mod:`ikrig.ground._ray`; ``args``: the ground's arrays; ``out``: a :class:`RayOut`) on
    a batch and shape its outputs."""
    out = empty_outputs(rays.origins.shape[0])
    notify_compiling()
    kernel(*args, rays.origins, rays.directions, rays.max_dist, *out)
    return make_hits(rays, out)


def make_hits(rays: RayBatch, out: RayOut) -> Hits:
    """Reshape flat results to the batch shape and cast them to the batch dtype."""
    s, dt = rays.shape, rays.dtype
    return Hits(
        mask=out.mask.reshape(s),
        distance=out.dist.reshape(s).astype(dt, copy=False),
        point=out.point.reshape(s + (3,)).astype(dt, copy=False),
        normal=out.normal.reshape(s + (3,)).astype(dt, copy=False),
    )


def run_height_kernel(
    kernel: Callable[..., Any], args: tuple, xz: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Call a vertical-query kernel on ``xz (..., 2)`` (validated) and shape its outputs."""
    dtype, shape, flat = prepare_xz(xz)
    h, nrm, mask = _height_outputs(kernel, args, flat, shape)
    return h.astype(dtype, copy=False), nrm.astype(dtype, copy=False), mask


def _height_outputs(kernel, args, flat, shape):
    """Run ``kernel`` on ``flat (n, 2)`` float64 positions into float64 ``(heights, normals,
    mask)`` of the batch ``shape`` (the kernel writes flat views of them)."""
    h, nrm = np.empty(shape), np.empty(shape + (3,))
    mask = np.empty(shape, dtype=np.bool_)
    notify_compiling()
    kernel(*args, flat, h.reshape(-1), nrm.reshape(-1, 3), mask.reshape(-1))
    return h, nrm, mask


def query_heights(ground: Ground, xz: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ground.height_at(xz)`` for positions ikrig computed itself (finite float64
    ``(..., 2)``): a built-in ground's kernel (its ``_height_kernel()``) is called directly,
    without the input checks that protect the public method; any other ground goes through
    ``height_at``. Returns float64 ``(heights, normals, mask)``."""
    fast = getattr(ground, "_height_kernel", None)
    if fast is None:
        return ground.height_at(xz)
    kernel, args = fast()
    flat = np.ascontiguousarray(xz, dtype=np.float64).reshape(-1, 2)
    return _height_outputs(kernel, args, flat, xz.shape[:-1])


def height_from_raycast(
    kernel: Callable[..., Any], args: tuple, xz: ArrayLike, top: float, bottom: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertical queries answered by a ray kernel casting rays straight down from above.

    ``kernel(*args, origins, directions, max_dist, *out)`` is a ray kernel (see
    :mod:`ikrig.ground._ray`); ``top``/``bottom``: the ground's highest and lowest world Y.
    Returns the topmost surface, normals turned up (the rays come from above), height 0 and
    normal +Y where nothing is hit.
    """
    dtype, batch, flat = prepare_xz(xz)
    n = flat.shape[0]
    span = max(top - bottom, 0.0)
    start = top + 0.5 * span + 1e-6 * (abs(top) + abs(bottom)) + 1e-9  # above everything
    origins = np.empty((n, 3))
    origins[:, 0] = flat[:, 0]
    origins[:, 1] = start
    origins[:, 2] = flat[:, 1]
    directions = np.zeros((n, 3))
    directions[:, 1] = -1.0
    out = empty_outputs(n)
    notify_compiling()
    kernel(*args, origins, directions, np.full(n, np.inf), *out)
    h = np.where(out.mask, out.point[:, 1], 0.0)
    return (
        h.reshape(batch).astype(dtype, copy=False),
        out.normal.reshape(batch + (3,)).astype(dtype, copy=False),
        out.mask.reshape(batch),
    )
