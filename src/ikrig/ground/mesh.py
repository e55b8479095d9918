"""Ground from a triangle mesh: a uniform XZ grid compiled with Numba, or Embree if faster."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._checks import as_float
from .._jit.setup import notify_compiling
from ..errors import FileFormatError, IkrigError, InputError
from ..math.axes import check_up, points_to_y_up
from ._grid_walk import Grid
from ._mesh_kernels import (
    MeshShape,
    PickedRows,
    mesh_args,
    mesh_bin,
    mesh_cell_y,
    mesh_raycast,
    tri_hits,
)
from ._ray import PAD
from .base import (
    Hits,
    empty_outputs,
    height_from_raycast,
    make_hits,
    prepare_rays,
    run_ray_kernel,
)

BACKENDS = ("auto", "numba", "embree")
# Target number of grid cells per (non-degenerate) triangle, and caps on the grid size.
CELLS_PER_TRIANGLE = 1.0
MAX_CELLS_PER_AXIS = 4096
# Triangles whose |e1 x e2| is below this times |e1| |e2| (sine of their smallest angle,
# roughly) are degenerate and left out.
DEGENERATE_EPS = 1e-12


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_finite_vertices(path: str, mesh: Any) -> None:
    """FileFormatError naming the first vertex a face uses that is NaN or infinite (and its
    line in an OBJ file): trimesh would drop its faces without a word, leaving a hole."""
    faces, vertices = getattr(mesh, "faces", None), getattr(mesh, "vertices", None)
    if faces is None or vertices is None or len(faces) == 0:
        return
    used = np.unique(np.asarray(faces))
    used = used[(used >= 0) & (used < len(vertices))]
    bad = used[~np.isfinite(np.asarray(vertices)[used]).all(axis=1)]
    if len(bad):
        k = int(bad[0])
        line = _obj_vertex_line(path, k) if path.lower().endswith(".obj") else None
        raise FileFormatError(path, line, f"vertex {k + 1} is not finite (NaN or infinite)")


def _obj_vertex_line(path: str, k: int) -> int | None:
    """The 1-based line of the ``k``-th (0-based) ``v`` record of an OBJ file."""
    seen = -1
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, start=1):
            if text.split(maxsplit=1)[:1] == ["v"]:
                seen += 1
                if seen == k:
                    return number
    return None


def _f32_down(x: np.ndarray) -> np.ndarray:
    """float32 values <= x."""
    f = x.astype(np.float32)
    return np.where(f > x, np.nextafter(f, np.float32(-np.inf)), f)


def _f32_up(x: np.ndarray) -> np.ndarray:
    """float32 values >= x."""
    f = x.astype(np.float32)
    return np.where(f < x, np.nextafter(f, np.float32(np.inf)), f)


def embree_available() -> bool:
    """True if trimesh's Embree ray backend (the ``embreex`` package) can be imported."""
    try:
        import trimesh.ray.ray_pyembree  # noqa: F401
    except Exception:
        return False
    return True


class MeshGround:
    """Ground given by a triangle mesh (world space, the data's length units, Y up).

    Args:
        vertices: ``(V, 3)`` vertex positions.
        faces: ``(F, 3)`` integer vertex indices, one row per triangle. Winding does not
            matter (triangles are two-sided); degenerate triangles are ignored.
        backend: ``"auto"`` (default), ``"numba"`` or ``"embree"``:

            - ``"numba"``: ikrig's own ray caster. Triangles are binned by their XZ bounding
              box into a uniform grid of about one cell per triangle, each cell keeping the
              height range of its triangles; a ray walks the cells its XZ shadow crosses
              (2D DDA), skipping cells whose height range it misses, and intersects the
              cell's triangles whose bounding box meets the ray's sweep through the cell
              (Moller-Trumbore, two-sided), stopping at the first cell that holds a hit
              nearer than the cell's exit. Exact in float64.
            - ``"embree"``: trimesh's Embree backend (``pip install embreex``) picks the
              triangle; the distance is then recomputed in float64 from that triangle's
              plane. Embree works in float32, so a ray through an edge may get either
              neighbour, and ``max_dist`` is applied afterwards.
            - ``"auto"`` (default): ``"numba"``. Measured with ``benchmarks/bench_ground.py``
              (100,000 rays, 20,000 triangles, one core), trimesh's Embree path was not
              faster than ours (vertical rays about 17-30 ms against 13-20 ms; oblique
              about 18 ms against 12 ms; trimesh also converts and normalises the rays
              in NumPy around the Embree call), so Embree is used only when asked for.
              It is never a dependency.

    Vertical queries (:meth:`height_at`) cast rays straight down from above the mesh (with
    ikrig's grid, whatever the backend) and return the topmost surface.

    Raises:
        InputError: wrong shapes, NaN vertices, face indices out of range, no
            non-degenerate triangle, unknown backend.
        IkrigError: ``backend="embree"`` without embreex/trimesh installed.
    """

    def __init__(self, vertices: ArrayLike, faces: ArrayLike, backend: str = "auto") -> None:
        v = as_float(vertices, "vertices", last=3, dtype=np.float64)
        if v.ndim != 2:
            raise InputError(f"vertices: expected shape (V, 3), got {v.shape}")
        f = np.asarray(faces)
        if f.ndim != 2 or f.shape[1] != 3 or f.dtype.kind not in "iu":
            raise InputError(f"faces: expected integer shape (F, 3), got {f.dtype} {f.shape}")
        if f.shape[0] == 0:
            raise InputError("faces: the mesh has no triangles")
        if f.min() < 0 or f.max() >= v.shape[0]:
            raise InputError(
                f"faces: indices must be in [0, {v.shape[0] - 1}], got [{f.min()}, {f.max()}]"
            )
        if backend not in BACKENDS:
            raise InputError(f"backend: expected one of {BACKENDS}, got {backend!r}")
        self.vertices = np.ascontiguousarray(v)
        self.faces = np.ascontiguousarray(f, dtype=np.int64)
        self.vertices.setflags(write=False)
        self.faces.setflags(write=False)
        self._build()
        self.backend = "numba" if backend == "auto" else backend
        self._embree = None
        if self.backend == "embree":
            self._embree = self._make_embree()

    # ------------------------------------------------------------------ construction

    def _build(self) -> None:
        tris = self.vertices[self.faces]  # (F, 3, 3)
        a = tris[:, 0]
        e1 = tris[:, 1] - a
        e2 = tris[:, 2] - a
        n = np.cross(e1, e2)
        nlen = np.linalg.norm(n, axis=-1)
        scale = np.linalg.norm(e1, axis=-1) * np.linalg.norm(e2, axis=-1)
        valid = nlen > DEGENERATE_EPS * scale
        if not valid.any():
            raise InputError("faces: the mesh has no non-degenerate triangle")
        unit = np.where(valid[:, None], n / np.where(valid, nlen, 1.0)[:, None], 0.0)
        lo3 = tris.min(axis=1)
        hi3 = tris.max(axis=1)
        tri = np.concatenate([a, e1, e2, np.where(valid, nlen, 0.0)[:, None]], axis=1)
        vlo = lo3[valid].min(axis=0)
        vhi = hi3[valid].max(axis=0)
        ext_x = vhi[0] - vlo[0]
        ext_z = vhi[2] - vlo[2]
        ext = max(ext_x, ext_z)
        ext_x = max(ext_x, 1e-9 * ext)
        ext_z = max(ext_z, 1e-9 * ext)
        target = max(1.0, CELLS_PER_TRIANGLE * int(valid.sum()))
        cell = math.sqrt(ext_x * ext_z / target)
        nx = int(min(max(math.ceil(ext_x / cell), 1), MAX_CELLS_PER_AXIS))
        nz = int(min(max(math.ceil(ext_z / cell), 1), MAX_CELLS_PER_AXIS))
        cx = ext_x / nx
        cz = ext_z / nz
        x0, z0 = float(vlo[0]), float(vlo[2])

        def cell_of(x, lo, size, count):
            return np.clip(np.floor((x - lo) / size), 0, count - 1).astype(np.int64)

        # Store the triangles in the order of the cell holding their centroid, so that the
        # triangles of one cell sit together in memory (fewer cache misses per ray).
        centre = tris.mean(axis=1)
        key = cell_of(centre[:, 2], z0, cz, nz) * nx + cell_of(centre[:, 0], x0, cx, nx)
        order = np.argsort(np.where(valid, key, nx * nz), kind="stable")
        self._row_of_face = np.empty(len(order), dtype=np.int64)
        self._row_of_face[order] = np.arange(len(order))
        lo3, hi3, valid = lo3[order], hi3[order], valid[order]
        lo = np.empty((len(valid), 2), dtype=np.int64)
        hi = np.empty((len(valid), 2), dtype=np.int64)
        lo[:, 0] = cell_of(lo3[:, 0], x0, cx, nx)
        lo[:, 1] = cell_of(lo3[:, 2], z0, cz, nz)
        hi[:, 0] = cell_of(hi3[:, 0], x0, cx, nx)
        hi[:, 1] = cell_of(hi3[:, 2], z0, cz, nz)
        lo[~valid, 0] = -1
        notify_compiling()
        starts, items = mesh_bin(lo, hi, nx, nz)
        # Each binned item carries its triangle's box (float32, rounded outwards), stored in
        # item order: a ray tests the boxes of a cell's items from one contiguous block and
        # reads the triangles (scattered in memory) only for the boxes it meets.
        box_lo = _f32_down(lo3[items])
        box_hi = _f32_up(hi3[items])
        grid = Grid(x0, z0, cx, cz, nx, nz, float(vlo[1]), float(vhi[1]), PAD * min(cx, cz))
        self._shape = MeshShape(
            tri=np.ascontiguousarray(tri[order]),
            nrm=np.ascontiguousarray(unit[order]),
            starts=starts,
            items=items,
            ibox=np.ascontiguousarray(np.stack([box_lo, box_hi], axis=-1).reshape(-1, 6)),
            cell_y=mesh_cell_y(
                starts, items, np.ascontiguousarray(lo3[:, 1]), np.ascontiguousarray(hi3[:, 1])
            ),
            grid=grid,
        )
        self._kernel_args = mesh_args(self._shape)
        self.bounds = np.array([vlo, vhi])  # (2, 3) of the non-degenerate triangles

    def _make_embree(self):
        try:
            import trimesh
            from trimesh.ray.ray_pyembree import RayMeshIntersector
        except Exception as exc:
            raise IkrigError(
                f"MeshGround: backend 'embree' needs trimesh and embreex ({_one_line(exc)})"
            ) from None
        mesh = trimesh.Trimesh(self.vertices, self.faces, process=False)
        return RayMeshIntersector(mesh)

    @classmethod
    def load(cls, path: str | os.PathLike[str], backend: str = "auto", up: str = "y") -> MeshGround:
        """Read a mesh file (OBJ, STL, PLY, GLB/glTF, anything trimesh reads) as a ground.

        The geometry is used in world coordinates and the clip's units (a scene's node
        transforms are applied and its meshes merged). ``up`` is the file's up axis
        (:data:`~ikrig.math.axes.UP_AXES`, that of the clip it was made for): a ``"z"`` or
        ``"x"`` file's vertices are turned into ikrig's Y-up world by the same fixed turn
        as the clip (:func:`~ikrig.math.axes.points_to_y_up`, as
        :func:`ikrig.character.to_y_up`). Needs the ``[mesh]`` extra (trimesh), imported
        only here.

        Raises:
            InputError: ``up`` is not an up axis.
            IkrigError: trimesh is not installed (the message names the file).
            FileFormatError: the file does not exist, cannot be parsed or holds no triangle.
        """
        path = os.fspath(path)
        check_up(up)
        try:
            import trimesh
        except ImportError:
            raise IkrigError(
                f"{path}: reading mesh files needs trimesh (pip install 'ikrig[mesh]')"
            ) from None
        if not os.path.exists(path):
            raise FileFormatError(path, None, "no such file")
        if not os.path.isfile(path):
            raise FileFormatError(path, None, "not a file")
        try:
            mesh = trimesh.load_mesh(path, process=False)  # as written, to check it first
        except Exception as exc:
            raise FileFormatError(path, None, f"cannot read mesh ({_one_line(exc)})") from None
        _check_finite_vertices(path, mesh)
        if hasattr(mesh, "process"):
            mesh.process()  # duplicate vertices merged, as trimesh loads by default
        faces = getattr(mesh, "faces", None)
        vertices = getattr(mesh, "vertices", None)
        if faces is None or vertices is None or len(faces) == 0:
            raise FileFormatError(path, None, "no triangles in the file")
        vertices = np.asarray(vertices)
        if up != "y":
            vertices = points_to_y_up(vertices, up)
        try:
            return cls(vertices, np.asarray(faces), backend=backend)
        except InputError as exc:
            raise FileFormatError(path, None, str(exc)) from None

    # ------------------------------------------------------------------ queries

    def __repr__(self) -> str:
        nx, nz = self._shape.grid.nx, self._shape.grid.nz
        return (
            f"MeshGround({len(self.vertices)} vertices, {len(self.faces)} faces,"
            f" grid {nx}x{nz}, backend={self.backend!r})"
        )

    def raycast(
        self, origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
    ) -> Hits:
        """Nearest hit of each ray with the mesh; see :meth:`ikrig.ground.Ground.raycast`."""
        rays = prepare_rays(origins, directions, max_dist)
        if self._embree is not None and rays.origins.shape[0] > 0:
            return self._raycast_embree(rays)
        return run_ray_kernel(mesh_raycast, self._kernel_args, rays)

    def _raycast_embree(self, rays) -> Hits:
        d = rays.directions
        scale = np.max(np.abs(d), axis=-1)
        ok = scale > 0.0
        dirs = np.where(ok[:, None], d, np.array([0.0, -1.0, 0.0]))
        embree: Any = self._embree
        faces_hit = np.asarray(embree.intersects_first(rays.origins, dirs), dtype=np.int64)
        rows = np.where(ok & (faces_hit >= 0), self._row_of_face[np.maximum(faces_hit, 0)], -1)
        picked = PickedRows(self._shape.tri, self._shape.nrm, rows)
        out = empty_outputs(rays.origins.shape[0])
        notify_compiling()
        tri_hits(picked, rays.origins, d, rays.max_dist, *out)
        return make_hits(rays, out)

    def height_at(self, xz: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Height and upward normal of the topmost triangle over/under each point.

        ``xz: (..., 2)``; misses (no triangle there) have height 0 and normal +Y. See
        :meth:`ikrig.ground.Ground.height_at`.
        """
        top, bottom = float(self.bounds[1, 1]), float(self.bounds[0, 1])
        return height_from_raycast(mesh_raycast, self._kernel_args, xz, top, bottom)
