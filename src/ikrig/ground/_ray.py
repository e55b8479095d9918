"""The ray loop every ground kernel shares, and its records. Everything here is private.

All kernels work in float64 on flat, C-contiguous arrays; the public wrappers convert,
broadcast and flatten the inputs and cast the results back to the caller's dtype.

Ray kernels share one contract. Inputs: ``origins (N, 3)``, ``directions (N, 3)`` (any
length; normalised here, a zero direction is a miss), ``max_dist (N,)`` (``>= 0``, may be
``inf``). Outputs, written in place into the arrays of a :class:`RayOut`: ``mask (N,)
bool``, ``dist (N,)`` (distance along the unit direction), ``point (N, 3)``, ``normal (N,
3)`` (unit, turned to face the ray origin's side, i.e. against the direction). A miss
writes ``dist = max_dist``, ``point = origin + unit_dir * max_dist`` (the origin itself
when ``max_dist`` is infinite) and ``normal = +Y``. Hits have ``0 <= dist <= max_dist``.

:func:`cast_rays` is that loop, written once: each ground supplies only its intersection,
``intersect(shape, ray) -> Hit``, and binds it in a small cached kernel::

    @njit(cache=True)
    def hf_raycast(heights, grid, origins, dirs, tmaxs, mask, dist, point, normal):
        hf = HeightfieldShape(heights, grid_of(grid))
        cast_rays(_hf_hit, hf, origins, dirs, tmaxs, RayOut(mask, dist, point, normal))

Vertical queries work the same way through :func:`query_points` and ``height(shape, xz)
-> Surface``. The loops and the per-ray (per-point) functions are inlined into each such
kernel at the level of Numba's IR (``@njit(inline="always")``):

- a function passed as an argument to a compiled call is a process-specific pointer,
  which stops Numba from caching the caller; inlined, the call to it is a static call;
- a call per ray costs about as much as a simple intersection.

What crosses from Python into a kernel is plain arrays and one-element structured arrays
of settings (``grid_settings``, ``profile_settings``, ``blocks_settings``): Numba
dispatches those in a fraction of the time a namedtuple takes (about 0.2 against 0.9 us
each, which counts for the few-point queries of the foot placer). Each ground builds its
kernel arguments once; the kernels build their named records (the ``shape``, the
:class:`RayOut`) from them.

An inlined call still binds the shape record once per ray, and Numba counts references
to each array in it; LLVM removes those updates only when it can pair them. So, inside
inlined functions: read arrays as ``shape.field[i]`` (a local name bound to an array,
``boxes = shape.boxes``, adds updates it cannot pair), return from one place, and read
the record last on every path (a record left early on some paths is released at several
places). Where this fails the kernel pays two atomic updates per array per ray; an array
passed to a function per ray (inlined or not) pays them too. The mesh kernel, with six
arrays, therefore writes its loop out and reads its arrays as its own arguments.

Vectors travel as tuples: ``(x, y, z)`` in world space, ``(x, z)`` for horizontal positions.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit.setup import njit

# Barycentric slack of the ray-triangle test: rays through a shared edge or vertex hit at
# least one of the triangles sharing it (both, at the same distance, is harmless).
BARY_EPS = 1e-9
# A ray is parallel to a triangle (no hit) when |cos(angle to its normal)| is below this.
PARALLEL_EPS = 1e-12
# Relative padding of bounding boxes and cell height ranges (times a cell size).
PAD = 1e-7


# The walking frame of the profile and blocks grounds, ``s = (xz - start) . w`` on a floor,
# as the fields of their kernels' settings: one-element structured arrays, which cross from
# Python into a kernel much faster than a namedtuple.
FRAME_FIELDS = [(f, np.float64) for f in ("start_x", "start_z", "w_x", "w_z", "floor")]


class Ray(NamedTuple):
    """One ray of a batch, as an intersection function sees it."""

    row: int  # its row in the batch (for shapes holding per-ray data)
    origin: tuple[float, float, float]  # world space
    direction: tuple[float, float, float]  # unit (zeros for a zero input direction)
    max_dist: float  # >= 0, may be inf


class Hit(NamedTuple):
    """What an intersection function returns: a hit when ``t >= 0``, else nothing."""

    t: float  # distance along the unit direction, 0 <= t <= max_dist
    normal: tuple[float, float, float]  # surface normal, any length and either side


class RayOut(NamedTuple):
    """The output arrays of a ray kernel (see the module docstring)."""

    mask: np.ndarray  # (N,) bool
    dist: np.ndarray  # (N,)
    point: np.ndarray  # (N, 3)
    normal: np.ndarray  # (N, 3)


class Surface(NamedTuple):
    """What a vertical-query function returns for one ``(x, z)``."""

    height: float  # world Y (0 where nothing is found)
    normal: tuple[float, float, float]  # unit, turned up (+Y where nothing is found)
    found: bool


@njit(cache=True)
def no_hit():
    """The :class:`Hit` that reports nothing."""
    return Hit(-1.0, (0.0, 0.0, 0.0))


@njit(cache=True)
def unit_dir(d):
    """``(unit direction, ok)``: ``d`` normalised, and False (zeros) for a zero vector."""
    dx, dy, dz = d
    m = max(abs(dx), abs(dy), abs(dz))
    if not (m > 0.0):
        return (0.0, 0.0, 0.0), False
    dx /= m
    dy /= m
    dz /= m
    n = math.sqrt(dx * dx + dy * dy + dz * dz)
    return (dx / n, dy / n, dz / n), True


@njit(cache=True)
def write_miss(out, ray):
    """Write a miss for ``ray`` (see the module docstring)."""
    i = ray.row
    ox, oy, oz = ray.origin
    dx, dy, dz = ray.direction
    tmax = ray.max_dist
    out.mask[i] = False
    out.dist[i] = tmax
    if math.isinf(tmax):
        out.point[i, 0] = ox
        out.point[i, 1] = oy
        out.point[i, 2] = oz
    else:
        out.point[i, 0] = ox + dx * tmax
        out.point[i, 1] = oy + dy * tmax
        out.point[i, 2] = oz + dz * tmax
    out.normal[i, 0] = 0.0
    out.normal[i, 1] = 1.0
    out.normal[i, 2] = 0.0


@njit(cache=True)
def write_hit(out, ray, hit):
    """Write ``hit`` for ``ray``; its normal is normalised and turned to face against the
    direction."""
    i = ray.row
    ox, oy, oz = ray.origin
    dx, dy, dz = ray.direction
    t = hit.t
    nx, ny, nz = hit.normal
    out.mask[i] = True
    out.dist[i] = t
    out.point[i, 0] = ox + dx * t
    out.point[i, 1] = oy + dy * t
    out.point[i, 2] = oz + dz * t
    n = math.sqrt(nx * nx + ny * ny + nz * nz)
    if not (n > 0.0):
        nx, ny, nz, n = 0.0, 1.0, 0.0, 1.0
    if nx * dx + ny * dy + nz * dz > 0.0:
        n = -n
    out.normal[i, 0] = nx / n + 0.0  # + 0.0: no negative zeros
    out.normal[i, 1] = ny / n + 0.0
    out.normal[i, 2] = nz / n + 0.0


@njit(inline="always")
def cast_rays(intersect, shape, origins, dirs, tmaxs, out):
    """The ray loop: normalise each direction, ask ``intersect(shape, ray) -> Hit`` (not for
    a zero direction), write the hit or the miss into ``out`` (a :class:`RayOut`)."""
    for i in range(origins.shape[0]):
        direction, ok = unit_dir((dirs[i, 0], dirs[i, 1], dirs[i, 2]))
        ray = Ray(i, (origins[i, 0], origins[i, 1], origins[i, 2]), direction, tmaxs[i])
        hit = intersect(shape, ray) if ok else no_hit()
        if hit.t >= 0.0:
            write_hit(out, ray, hit)
        else:
            write_miss(out, ray)


@njit(inline="always")
def query_points(height, shape, xz, out_h, out_n, out_mask):
    """The vertical-query loop: ``height(shape, (x, z)) -> Surface`` for each row of ``xz
    (N, 2)``, written into ``out_h (N,)``, ``out_n (N, 3)`` and ``out_mask (N,)``."""
    for i in range(xz.shape[0]):
        s = height(shape, (xz[i, 0], xz[i, 1]))
        out_h[i] = s.height
        out_n[i, 0] = s.normal[0]
        out_n[i, 1] = s.normal[1]
        out_n[i, 2] = s.normal[2]
        out_mask[i] = s.found


@njit(cache=True)
def ray_tri(ray, a, e1, e2, nlen, tmax):
    """Moller-Trumbore, two-sided: distance to triangle ``a, a + e1, a + e2`` or -1.0.

    ``nlen = |e1 x e2|`` (twice the area; <= 0 means degenerate). Accepts
    ``0 <= t <= tmax``.
    """
    if not (nlen > 0.0):
        return -1.0
    ox, oy, oz = ray.origin
    dx, dy, dz = ray.direction
    ax, ay, az = a
    e1x, e1y, e1z = e1
    e2x, e2y, e2z = e2
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
