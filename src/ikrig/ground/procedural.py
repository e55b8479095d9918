"""Built-in grounds laid out along a clip's root path, sized in leg lengths.

A clip recorded on flat ground is replayed on one of :data:`GROUND_NAMES`:

- ``flat``: the plane ``y = floor_height`` (a :class:`~ikrig.ground.Plane`);
- ``stairs``: a straight flight rising along the walking direction (:class:`ProfileGround`,
  exact: vertical risers, horizontal treads);
- ``slope``: a ramp of :data:`SLOPE_DEG` degrees (:class:`ProfileGround`, exact);
- ``bumps``: smooth rolling ground, a sum of sinusoids (a fine
  :class:`~ikrig.ground.Heightfield`);
- ``blocks``: random flat-topped boxes with vertical sides standing on the floor
  (:class:`BlocksGround`, exact).

Layout (see :func:`walking_frame`): the walking direction ``w`` is the XZ direction from the
path's first to its last point (+Z when the path moves less than half a leg length);
``s = (xz - start) . w`` is the distance along it from the path's start and
``u = (xz - start) . (w_z, -w_x)`` the lateral offset. The ground is at ``floor_height``
for ``s < FEATURE_START * leg_length`` (so at the start of the path) and the features begin
there. Stairs, slope and blocks are exact analytic forms rather than heightfields: a
heightfield cannot represent a vertical face (a fine one turns each riser into a steep slope
one cell wide), while these answer vertical queries and ray casts exactly. Stairs and slope
extend without bound across the walking direction and keep their last height beyond the
end; blocks cover the path's (s, u) bounding box plus :data:`MARGIN` leg lengths, with flat
floor around them; bumps is a heightfield over the path's XZ bounding box plus the margin,
with no ground (misses) outside it.
"""

from __future__ import annotations

import difflib
import math
import os
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._checks import as_float, positive
from ..errors import InputError
from ..math.axes import check_up
from ._blocks_kernels import SlotGrid, blocks_height_at, blocks_raycast, blocks_settings
from ._profile_kernels import profile_height_at, profile_raycast, profile_settings
from .base import Ground, Hits, frozen, prepare_rays, run_height_kernel, run_ray_kernel
from .heightfield import Heightfield
from .mesh import MeshGround
from .plane import Plane

GROUND_NAMES = ("flat", "stairs", "slope", "bumps", "blocks")

# All lengths below are in leg lengths.
FEATURE_START = 1.0  # features begin this far along the walking direction
MARGIN = 2.0  # area covered beyond the path's bounding box
STAIR_RISER = 0.15  # step height (about 13 cm for a 0.85 m leg)
STAIR_TREAD = 0.6  # step depth
SLOPE_DEG = 12.0  # ramp angle (degrees)
BUMP_AMPLITUDE = 0.1  # max |height| of the bumps
BUMP_WAVELENGTHS = (1.2, 3.0)  # range of the sinusoids' wavelengths
BUMP_CELL = 0.02  # heightfield cell size
BUMP_MAX_VERTICES = 4_000_000  # the cell grows beyond BUMP_CELL to stay under this
BLOCK_SLOT = 0.8  # blocks stand one per slot of this size (at most)
BLOCK_FILL = 0.6  # probability that a slot holds a block
BLOCK_SIZE = (0.35, 0.85)  # block footprint side, in slot sizes
BLOCK_HEIGHT = (0.02, 0.2)  # block height range
STILL_PATH = 0.5  # a path moving less than this uses +Z as walking direction
MAX_EXTENT = 10_000  # the most leg lengths a built-in ground spans (about 8 km for a human)
BLOCK_MAX_SLOTS = 1_000_000  # the most block slots


def _direction(direction_xz) -> np.ndarray:
    w = as_float(direction_xz, "direction_xz", last=2, dtype=np.float64)
    if w.shape != (2,):
        raise InputError(f"direction_xz: expected shape (2,), got {w.shape}")
    n = float(np.hypot(w[0], w[1]))
    if not n > 0.0:
        raise InputError("direction_xz: must be non-zero")
    return frozen(w / n)


def _point2(p, name) -> np.ndarray:
    a = as_float(p, name, last=2, dtype=np.float64)
    if a.shape != (2,):
        raise InputError(f"{name}: expected shape (2,), got {a.shape}")
    return frozen(a)


class ProfileGround:
    """Ground whose height varies along one horizontal direction only, exactly.

    ``y = floor_height + f(s)`` with ``s = (xz - start_xz) . direction_xz``; ``f`` is the
    polyline through the knots ``(s_knots[k], y_knots[k])``, constant beyond the first and
    last knot. Two consecutive knots with the same ``s`` make a vertical face (a stair
    riser). The ground extends without bound across ``direction_xz``.

    Args:
        start_xz: ``(2,)`` world ``(x, z)`` where ``s = 0``.
        direction_xz: ``(2,)`` horizontal direction of ``s``, any non-zero length.
        s_knots: ``(K,)`` non-decreasing knot positions along the direction, ``K >= 1``.
        y_knots: ``(K,)`` knot heights relative to ``floor_height``.
        floor_height: world Y added to every height.

    Vertical queries exactly on a vertical face return its top. Ray casts project the ray
    onto the vertical plane along the direction and intersect the polyline (exact, Numba).
    Every ray that reaches the surface hits; a ray parallel to a face misses that face.

    Raises:
        InputError: wrong shapes, NaN, decreasing ``s_knots`` or a zero direction.
    """

    def __init__(
        self,
        start_xz: ArrayLike,
        direction_xz: ArrayLike,
        s_knots: ArrayLike,
        y_knots: ArrayLike,
        floor_height: float = 0.0,
    ) -> None:
        self.start_xz = _point2(start_xz, "start_xz")
        self.direction_xz = _direction(direction_xz)
        ks = as_float(s_knots, "s_knots", dtype=np.float64)
        ky = as_float(y_knots, "y_knots", dtype=np.float64)
        if ks.ndim != 1 or ks.shape != ky.shape or ks.size < 1:
            raise InputError(
                f"s_knots, y_knots: expected two (K,) arrays, K >= 1, got {ks.shape}, {ky.shape}"
            )
        if np.any(np.diff(ks) < 0):
            raise InputError("s_knots: must be non-decreasing")
        self.s_knots = frozen(ks)
        self.y_knots = frozen(ky)
        self.floor_height = float(as_float(floor_height, "floor_height", dtype=np.float64))
        start, w = self.start_xz.tolist(), self.direction_xz.tolist()
        frame = profile_settings(start, w, self.floor_height)
        self._kernel_args = (self.s_knots, self.y_knots, frame)  # built once: see frozen

    def __repr__(self) -> str:
        return (
            f"ProfileGround({self.s_knots.size} knots, start_xz={self.start_xz.tolist()},"
            f" direction_xz={self.direction_xz.tolist()}, floor_height={self.floor_height:g})"
        )

    def height_at(self, xz: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact heights and upward normals; see :meth:`ikrig.ground.Ground.height_at`.

        Never misses.
        """
        return run_height_kernel(*self._height_kernel(), xz)

    def _height_kernel(self) -> tuple[Any, tuple]:
        return profile_height_at, self._kernel_args

    def raycast(
        self, origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
    ) -> Hits:
        """Nearest hit of each ray; see :meth:`ikrig.ground.Ground.raycast`."""
        rays = prepare_rays(origins, directions, max_dist)
        return run_ray_kernel(profile_raycast, self._kernel_args, rays)


class BlocksGround:
    """A floor plane with axis-aligned boxes standing on it, exactly.

    The boxes live in a slot grid of the walking frame ``s = (xz - start_xz) . w``,
    ``u = (xz - start_xz) . (w_z, -w_x)`` (``w = direction_xz``): slot ``(js, ju)`` covers
    ``s in [origin_su[0] + js * slot_size[0], ... + slot_size[0]]`` and likewise in ``u``,
    and holds at most one box, inside it.

    Args:
        start_xz: ``(2,)`` world ``(x, z)`` of the frame's origin.
        direction_xz: ``(2,)`` the ``s`` direction, any non-zero length.
        origin_su: ``(2,)`` ``(s, u)`` of the slot grid's corner.
        slot_size: ``(2,)`` slot size along ``s`` and ``u``, > 0.
        boxes: ``(n_u, n_s, 5)``: ``s0, s1, u0, u1, height`` per slot (walking frame, length
            units, height above the floor); ``height <= 0`` marks an empty slot.
        floor_height: world Y of the floor (and of the boxes' bottoms).

    The surface is the floor outside the boxes' footprints plus each box's top and four
    vertical sides. Vertical queries return the box top inside a footprint (edges
    included), the floor elsewhere; they never miss. Ray casts test the floor and walk the
    slots the ray crosses (2D DDA).

    Raises:
        InputError: wrong shapes, NaN, a box outside its slot or with ``s0 > s1``/``u0 > u1``.
    """

    def __init__(
        self,
        start_xz: ArrayLike,
        direction_xz: ArrayLike,
        origin_su: ArrayLike,
        slot_size: ArrayLike,
        boxes: ArrayLike,
        floor_height: float = 0.0,
    ) -> None:
        self.start_xz = _point2(start_xz, "start_xz")
        self.direction_xz = _direction(direction_xz)
        o = _point2(origin_su, "origin_su")
        g = _point2(slot_size, "slot_size")
        positive(g[0], "slot_size")
        positive(g[1], "slot_size")
        b = as_float(boxes, "boxes", last=5, dtype=np.float64)
        if b.ndim != 3 or b.shape[0] < 1 or b.shape[1] < 1:
            raise InputError(f"boxes: expected shape (n_u, n_s, 5), got {b.shape}")
        nu, ns = b.shape[:2]
        full = b[..., 4] > 0
        js = np.arange(ns)[None, :]
        ju = np.arange(nu)[:, None]
        tol = 1e-9 * float(g.max())
        s_lo, s_hi = o[0] + js * g[0] - tol, o[0] + (js + 1) * g[0] + tol
        u_lo, u_hi = o[1] + ju * g[1] - tol, o[1] + (ju + 1) * g[1] + tol
        inside = (
            (b[..., 0] >= s_lo)
            & (b[..., 1] <= s_hi)
            & (b[..., 2] >= u_lo)
            & (b[..., 3] <= u_hi)
            & (b[..., 0] <= b[..., 1])
            & (b[..., 2] <= b[..., 3])
        )
        if np.any(full & ~inside):
            bad = tuple(int(i) for i in np.argwhere(full & ~inside)[0])
            raise InputError(f"boxes: box {bad} is not an ordered box inside its slot")
        flat = np.where(full[..., None], b, 0.0).reshape(nu * ns, 5)
        self.boxes = frozen(flat)
        self.grid = SlotGrid(float(o[0]), float(o[1]), float(g[0]), float(g[1]), ns, nu)
        self.floor_height = float(as_float(floor_height, "floor_height", dtype=np.float64))
        self.max_height = float(max(self.boxes[:, 4].max(), 0.0))
        start, w = self.start_xz.tolist(), self.direction_xz.tolist()
        settings = blocks_settings(self.grid, self.max_height, start, w, self.floor_height)
        self._kernel_args = (self.boxes, settings)  # built once: see frozen

    def __repr__(self) -> str:
        n = int((self.boxes[:, 4] > 0).sum())
        return (
            f"BlocksGround({n} boxes, start_xz={self.start_xz.tolist()},"
            f" direction_xz={self.direction_xz.tolist()}, floor_height={self.floor_height:g})"
        )

    def height_at(self, xz: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exact heights (normals +Y); see :meth:`ikrig.ground.Ground.height_at`."""
        return run_height_kernel(*self._height_kernel(), xz)

    def _height_kernel(self) -> tuple[Any, tuple]:
        return blocks_height_at, self._kernel_args

    def raycast(
        self, origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
    ) -> Hits:
        """Nearest hit of each ray; see :meth:`ikrig.ground.Ground.raycast`."""
        rays = prepare_rays(origins, directions, max_dist)
        return run_ray_kernel(blocks_raycast, self._kernel_args, rays)


def walking_frame(path_xz: ArrayLike, leg_length: float) -> tuple[np.ndarray, np.ndarray]:
    """``(start_xz (2,), direction_xz (2,) unit)`` of a root path, as the grounds use it.

    ``start_xz`` is the path's first point; the direction runs from the first to the last
    point, or is +Z ``(0, 1)`` when they are less than ``STILL_PATH * leg_length`` apart.

    Raises:
        InputError: ``path_xz`` not ``(F, 2)`` with ``F >= 1``, NaN, ``leg_length <= 0``.
    """
    p = _path(path_xz)
    leg = positive(leg_length, "leg_length")
    delta = p[-1] - p[0]
    n = float(np.hypot(delta[0], delta[1]))
    w = delta / n if n >= STILL_PATH * leg else np.array([0.0, 1.0])
    return p[0].copy(), w


def _path(path_xz) -> np.ndarray:
    p = as_float(path_xz, "path_xz", last=2, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] < 1:
        raise InputError(f"path_xz: expected shape (F, 2) with F >= 1, got {p.shape}")
    return p


def make_ground(
    name: str, path_xz: ArrayLike, leg_length: float, seed: int = 0, floor_height: float = 0.0
) -> Ground:
    """A built-in ground (one of :data:`GROUND_NAMES`) laid out along a root path.

    Args:
        name: ``"flat"``, ``"stairs"``, ``"slope"``, ``"bumps"`` or ``"blocks"``.
        path_xz: ``(F, 2)`` the clip's root ``(x, z)`` per frame, world space.
        leg_length: the character's leg length (hip to ankle), in the clip's units; every
            size of the ground is a multiple of it (module constants).
        seed: seed of the random layout (``bumps`` and ``blocks``; others ignore it).
        floor_height: world Y of the clip's floor; the ground at the path's start is there.

    Returns:
        ``flat``: :class:`~ikrig.ground.Plane` ``y = floor_height``.
        ``stairs``: :class:`ProfileGround`; step ``n = 1, 2, ...`` spans
        ``s in [s1 + (n - 1) T, s1 + n T)`` at height ``floor_height + n R`` with
        ``s1 = FEATURE_START * L`` (or the area's start, under the character, for a path
        that goes less than ``2 * FEATURE_START * L`` along the walking direction), riser
        ``R = STAIR_RISER * L``, tread ``T = STAIR_TREAD * L``; enough steps to pass the
        path's end by :data:`MARGIN`, then a landing.
        ``slope``: :class:`ProfileGround` rising at :data:`SLOPE_DEG` degrees from
        ``s1`` to the path's end plus the margin, then level.
        ``bumps``: :class:`~ikrig.ground.Heightfield` (cell ``BUMP_CELL * L``) of a sum of
        six random sinusoids scaled to a peak ``|height| = BUMP_AMPLITUDE * L``, faded in
        smoothly over the half leg length before ``s1``.
        ``blocks``: :class:`BlocksGround`, slots of ``BLOCK_SLOT * L`` from ``s1`` on.

    Raises:
        InputError: unknown name, bad path, ``leg_length <= 0``.
    """
    if name not in GROUND_NAMES:
        raise InputError(
            f"ground: unknown built-in ground {name!r}; expected one of {GROUND_NAMES}"
        )
    p = _path(path_xz)
    leg = positive(leg_length, "leg_length")
    floor = float(as_float(floor_height, "floor_height", dtype=np.float64))
    start, w = walking_frame(p, leg)
    rel = p - start
    s = rel @ w
    u = rel[:, 0] * w[1] - rel[:, 1] * w[0]
    margin = MARGIN * leg
    s_lo, s_hi = min(float(s.min()), 0.0) - margin, float(s.max()) + margin
    u_lo, u_hi = float(u.min()) - margin, float(u.max()) + margin
    extent = max(s_hi - s_lo, u_hi - u_lo) / leg
    if not extent <= MAX_EXTENT:
        raise InputError(
            f"ground: the clip's root path spans {extent:.3g} leg lengths; built-in grounds"
            f" cover at most {MAX_EXTENT} (is the clip's scale right?)"
        )
    # features begin a leg along the path; under a character that barely travels (a turn on
    # the spot, an idle), everywhere, so that it stands on them too
    s1 = FEATURE_START * leg if float(s.max()) >= 2 * FEATURE_START * leg else s_lo
    rng = np.random.default_rng(seed)

    if name == "flat":
        return Plane([start[0], floor, start[1]], [0.0, 1.0, 0.0])

    if name == "stairs":
        riser, tread = STAIR_RISER * leg, STAIR_TREAD * leg
        n = max(1, math.ceil((s_hi - s1) / tread))
        k = np.arange(n)
        ks = np.repeat(s1 + tread * k, 2)
        ky = np.stack([k * riser, (k + 1) * riser], axis=1).ravel()
        return ProfileGround(start, w, ks, ky, floor)

    if name == "slope":
        rise = (s_hi - s1) * math.tan(math.radians(SLOPE_DEG))
        return ProfileGround(start, w, [s1, s_hi], [0.0, rise], floor)

    if name == "bumps":
        return _bumps(rng, start, w, leg, floor, (s_lo, s_hi, u_lo, u_hi), s1)

    # blocks
    g = BLOCK_SLOT * leg
    ns = max(1, math.ceil((s_hi - s1) / g))
    nu = max(1, math.ceil((u_hi - u_lo) / g))
    if ns * nu > BLOCK_MAX_SLOTS:
        raise InputError(
            f"ground: blocks along this path would need {ns * nu} slots (at most"
            f" {BLOCK_MAX_SLOTS}); the path is too long or too wide for -g blocks"
        )
    size = rng.uniform(*BLOCK_SIZE, size=(nu, ns, 2)) * g
    pos = rng.uniform(0.0, 1.0, size=(nu, ns, 2)) * (g - size)
    height = rng.uniform(*BLOCK_HEIGHT, size=(nu, ns)) * leg
    height = np.where(rng.uniform(size=(nu, ns)) < BLOCK_FILL, height, 0.0)
    s0 = s1 + np.arange(ns)[None, :] * g + pos[..., 0]
    u0 = u_lo + np.arange(nu)[:, None] * g + pos[..., 1]
    boxes = np.stack([s0, s0 + size[..., 0], u0, u0 + size[..., 1], height], axis=-1)
    return BlocksGround(start, w, (s1, u_lo), (g, g), boxes, floor)


def _bumps(rng, start, w, leg, floor, rect, s1) -> Heightfield:
    s_lo, s_hi, u_lo, u_hi = rect
    n_waves = 6
    theta = rng.uniform(0.0, 2.0 * math.pi, n_waves)
    wavelength = rng.uniform(*BUMP_WAVELENGTHS, n_waves) * leg
    phase = rng.uniform(0.0, 2.0 * math.pi, n_waves)
    weight = rng.uniform(0.5, 1.0, n_waves)
    # the (s, u) rectangle's XZ bounding box; u axis = (w_z, -w_x)
    ua = np.array([w[1], -w[0]])
    corners = np.array([start + a * w + b * ua for a in (s_lo, s_hi) for b in (u_lo, u_hi)])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    cell = BUMP_CELL * leg
    area_cells = ((hi[0] - lo[0]) / cell + 2) * ((hi[1] - lo[1]) / cell + 2)
    if area_cells > BUMP_MAX_VERTICES:
        cell *= math.sqrt(area_cells / BUMP_MAX_VERTICES)

    def fn(x, z):
        rx, rz = x - start[0], z - start[1]
        s = rx * w[0] + rz * w[1]
        u = rx * w[1] - rz * w[0]
        h = np.zeros(np.broadcast_shapes(np.shape(x), np.shape(z)))
        for i in range(n_waves):
            k = 2.0 * math.pi / wavelength[i]
            h = h + weight[i] * np.sin(
                k * (math.cos(theta[i]) * s + math.sin(theta[i]) * u) + phase[i]
            )
        t = np.clip((s - (s1 - 0.5 * leg)) / (0.5 * leg), 0.0, 1.0)
        return h * (t * t * (3.0 - 2.0 * t))

    hf = Heightfield.from_function(fn, [lo, hi], cell)
    peak = float(np.abs(hf.heights).max())
    scale = BUMP_AMPLITUDE * leg / peak if peak > 0.0 else 0.0
    return Heightfield(floor + scale * hf.heights, hf.origin_xz, hf.cell_size)


def load_ground(
    name_or_path: str | os.PathLike[str],
    path_xz: ArrayLike,
    leg_length: float,
    floor_height: float = 0.0,
    seed: int = 0,
    up: str = "y",
) -> Ground:
    """A built-in ground by name, or a mesh file as a :class:`~ikrig.ground.MeshGround`.

    Args:
        name_or_path: one of :data:`GROUND_NAMES`, in any case (names win over files of the
            same name),
            or the path of a mesh file (OBJ, STL, PLY, GLB, ...) read with trimesh. A file is
            used as given, in the clip's world coordinates and units; ``path_xz``,
            ``leg_length``, ``floor_height`` and ``seed`` then play no part.
        path_xz, leg_length, floor_height, seed: see :func:`make_ground`.
        up: a mesh file's up axis (:data:`~ikrig.math.axes.UP_AXES`): its vertices are
            turned into the Y-up world as a clip of that convention is (see
            :meth:`MeshGround.load`). Built-in grounds are made in the Y-up world (no turn).

    Raises:
        InputError: neither a built-in name (the nearest one suggested) nor an existing
            file (a missing file named as such); ``up`` not an up axis.
        IkrigError / FileFormatError: see :meth:`MeshGround.load`.
    """
    check_up(up)
    path = ground_file(name_or_path)
    if path is None:
        name = str(name_or_path).strip().lower()
        return make_ground(name, path_xz, leg_length, seed=seed, floor_height=floor_height)
    return MeshGround.load(path, up=up)


def ground_file(name_or_path: Any) -> str | None:
    """None for a built-in ground's name (:data:`GROUND_NAMES`, in any case), else the mesh
    file ``name_or_path`` names.

    Raises:
        InputError: neither: a missing file is named as such, an unknown name gets the names
            and the nearest one.
    """
    if isinstance(name_or_path, str) and name_or_path.strip().lower() in GROUND_NAMES:
        return None
    try:
        path = os.fspath(name_or_path)
    except TypeError:
        raise InputError(
            f"ground: expected a name in {GROUND_NAMES} or a mesh file path, got {name_or_path!r}"
        ) from None
    if not os.path.isfile(path):
        raise InputError(_no_ground(path))
    return path


def _no_ground(path: str) -> str:
    """The error for a ground that is no built-in name and no file: a missing file when it
    looks like one (a suffix or a folder), else the names, with the nearest one."""
    if os.path.splitext(path)[1] or os.sep in path or "/" in path:
        return f"ground: no such file {path!r}"
    near = difflib.get_close_matches(path.lower(), GROUND_NAMES, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"ground: {path!r} is no built-in ground ({', '.join(GROUND_NAMES)}){hint}"
