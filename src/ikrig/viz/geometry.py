"""Drawable geometry shared by the matplotlib pictures and the browser viewer (no plotting library).

Everything here is world space, Y up, in the data's units:

- :func:`bone_segments`: a pose's bones as ``(..., B, 2, 3)`` line segments;
- :func:`ground_mesh`: a triangle mesh of any ground over an XZ rectangle, exact for the
  built-in grounds (stair risers stay vertical, blocks keep their sides);
- :func:`face_shading` / :func:`shade`: per-face colours lit from a fixed direction;
- :func:`clip_faces_xz`, :func:`surface_floor`, :func:`skirts`: faces cut to the view (and
  a little below the lowest top surface), and the cut faces that close a solid ground;
- :func:`arc_points` / :func:`cone_rim`: the fans and cones that show joint limits;
- :func:`body_joint`: the joint a view frames and follows (the pelvis, not joint 0);
- :func:`walking_axes`: the horizontal direction a clip moves in, to place cameras.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..character.legs import pelvis_joint
from ..errors import IkrigError
from ..ground import BlocksGround, Heightfield, MeshGround, Plane, ProfileGround

if TYPE_CHECKING:
    from ..character.legs import Legs
    from ..skeleton import Skeleton

__all__ = [
    "arc_points",
    "body_joint",
    "bone_segments",
    "cone_rim",
    "face_shading",
    "ground_mesh",
    "path_bounds",
    "shade",
    "skirts",
    "surface_floor",
    "walking_axes",
]

LIGHT = np.array([0.35, 0.85, 0.4]) / np.linalg.norm([0.35, 0.85, 0.4])


def bone_segments(parents, positions_world) -> np.ndarray:
    """``(..., B, 2, 3)`` the bones of poses ``positions_world (..., J, 3)``: one segment from
    each non-root joint's parent to the joint (``B`` = number of non-root joints)."""
    parents = np.asarray(parents)
    child = np.flatnonzero(parents >= 0)
    p = np.asarray(positions_world)
    return np.stack([p[..., parents[child], :], p[..., child, :]], axis=-2)


def body_joint(skeleton: Skeleton, legs: Legs | None) -> int:
    """The joint every picture and the viewer frame and follow: the pelvis, the nearest
    common ancestor of the hips (:func:`~ikrig.character.legs.pelvis_joint`), when the
    character has ``legs``; else (no legs, or hips with no common ancestor) the first root.

    Not joint 0: a rig may keep its root on the ground at the origin while the body walks
    away under it (Bandai's ``joint_Root``, Unreal's ``root``). On a rig whose joint 0 is
    the pelvis this is joint 0. Index into ``positions_world[..., j, :]`` (world, Y up)."""
    if legs is not None:
        try:
            return int(pelvis_joint(skeleton, legs))
        except IkrigError:
            pass
    return int(np.flatnonzero(np.asarray(skeleton.parents) < 0)[0])


def walking_axes(path_xz) -> tuple[np.ndarray, np.ndarray]:
    """``(w, u)``: unit XZ walking direction of a body path (the pelvis's,
    :func:`body_joint`; first to last point, +Z for a path that hardly moves) and its
    horizontal perpendicular ``(w_z, -w_x)``."""
    p = np.asarray(path_xz, dtype=np.float64).reshape(-1, 2)
    d = p[-1] - p[0]
    n = float(np.hypot(*d))
    extent = float(np.ptp(p, axis=0).max()) if len(p) else 0.0
    w = d / n if n > 1e-9 and n >= 0.25 * extent else np.array([0.0, 1.0])
    return w, np.array([w[1], -w[0]])


def path_bounds(points_xz, margin: float) -> np.ndarray:
    """``(2, 2)`` ``[[x_min, z_min], [x_max, z_max]]`` of XZ points plus ``margin``."""
    p = np.asarray(points_xz, dtype=np.float64).reshape(-1, 2)
    return np.array([p.min(axis=0) - margin, p.max(axis=0) + margin])


def _rect(bounds_xz) -> np.ndarray:
    b = np.asarray(bounds_xz, dtype=np.float64).reshape(2, 2)
    return np.array([b.min(axis=0), b.max(axis=0)])


def _quad_faces(n_rows: int, n_cols: int, mask=None) -> np.ndarray:
    """Two triangles per cell of an ``n_rows x n_cols`` vertex grid (row-major indices)."""
    r, c = np.meshgrid(np.arange(n_rows - 1), np.arange(n_cols - 1), indexing="ij")
    v00 = (r * n_cols + c).ravel()
    v01, v10, v11 = v00 + 1, v00 + n_cols, v00 + n_cols + 1
    faces = np.concatenate([np.stack([v00, v10, v11], 1), np.stack([v00, v11, v01], 1)])
    if mask is not None:
        m = mask.ravel()
        faces = faces[m[faces].all(axis=1)]
    return faces


def _sampled(ground, bounds, cells: int):
    """Fallback: vertical queries on a grid; triangles only where all corners hit."""
    xs = np.linspace(bounds[0, 0], bounds[1, 0], cells + 1)
    zs = np.linspace(bounds[0, 1], bounds[1, 1], cells + 1)
    X, Z = np.meshgrid(xs, zs, indexing="ij")
    h, _, mask = ground.height_at(np.stack([X, Z], axis=-1))
    verts = np.stack([X, np.asarray(h, dtype=np.float64), Z], axis=-1).reshape(-1, 3)
    return verts, _quad_faces(len(xs), len(zs), np.asarray(mask))


def _su_range(start, w, bounds):
    """Ranges of ``s`` (along ``w``) and ``u`` (along ``(w_z, -w_x)``) over a rectangle."""
    ua = np.array([w[1], -w[0]])
    corners = np.array([[x, z] for x in bounds[:, 0] for z in bounds[:, 1]]) - start
    s, u = corners @ w, corners @ ua
    return (s.min(), s.max()), (u.min(), u.max()), ua


def _profile(g: ProfileGround, bounds):
    (s0, s1), (u0, u1), ua = _su_range(g.start_xz, g.direction_xz, bounds)
    ks, ky = g.s_knots, g.y_knots
    inside = (ks > s0) & (ks < s1)
    s = np.concatenate([[s0], ks[inside], [s1]])
    y = np.concatenate([[np.interp(s0, ks, ky)], ky[inside], [np.interp(s1, ks, ky)]])
    y = y + g.floor_height
    rows = []
    for uu in (u0, u1):
        xz = g.start_xz + s[:, None] * g.direction_xz + uu * ua
        rows.append(np.stack([xz[:, 0], y, xz[:, 1]], axis=-1))
    verts = np.concatenate(rows)
    n = len(s)
    i = np.arange(n - 1)
    faces = np.concatenate([np.stack([i, i + 1, i + n + 1], 1), np.stack([i, i + n + 1, i + n], 1)])
    return verts, faces


def _box(corners_xz, y0, y1):
    """Top and four sides of a box whose footprint is 4 XZ corners (in order)."""
    bottom = np.column_stack([corners_xz[:, 0], np.full(4, y0), corners_xz[:, 1]])
    top = np.column_stack([corners_xz[:, 0], np.full(4, y1), corners_xz[:, 1]])
    verts = np.concatenate([bottom, top])
    faces = [[4, 5, 6], [4, 6, 7]]
    for a in range(4):
        b = (a + 1) % 4
        faces += [[a, b, b + 4], [a, b + 4, a + 4]]
    return verts, np.array(faces)


def _blocks(g: BlocksGround, bounds):
    verts = [
        np.array(
            [
                [bounds[i, 0], g.floor_height, bounds[j, 1]]
                for i, j in ((0, 0), (1, 0), (1, 1), (0, 1))
            ]
        )
    ]
    faces = [np.array([[0, 1, 2], [0, 2, 3]])]
    count = 4
    w = g.direction_xz
    ua = np.array([w[1], -w[0]])
    for s0, s1, u0, u1, h in g.boxes:
        if h <= 0:
            continue
        su = np.array([[s0, u0], [s1, u0], [s1, u1], [s0, u1]])
        xz = g.start_xz + su[:, :1] * w + su[:, 1:] * ua
        if (xz.max(axis=0) < bounds[0]).any() or (xz.min(axis=0) > bounds[1]).any():
            continue
        v, f = _box(xz, g.floor_height, g.floor_height + h)
        verts.append(v)
        faces.append(f + count)
        count += len(v)
    return np.concatenate(verts), np.concatenate(faces)


def _heightfield(g: Heightfield, bounds, cells: int):
    H, W = g.heights.shape
    cx, cz = g.cell_size
    ix0 = int(np.clip(math.floor((bounds[0, 0] - g.origin_xz[0]) / cx), 0, W - 1))
    ix1 = int(np.clip(math.ceil((bounds[1, 0] - g.origin_xz[0]) / cx), 0, W - 1))
    iz0 = int(np.clip(math.floor((bounds[0, 1] - g.origin_xz[1]) / cz), 0, H - 1))
    iz1 = int(np.clip(math.ceil((bounds[1, 1] - g.origin_xz[1]) / cz), 0, H - 1))
    if ix1 <= ix0 or iz1 <= iz0:
        return np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)
    step = max(1, math.ceil(max(ix1 - ix0, iz1 - iz0) / cells))
    ix = np.unique(np.append(np.arange(ix0, ix1 + 1, step), ix1))
    iz = np.unique(np.append(np.arange(iz0, iz1 + 1, step), iz1))
    X = g.origin_xz[0] + cx * ix
    Z = g.origin_xz[1] + cz * iz
    Y = g.heights[np.ix_(iz, ix)]  # (rows along z, cols along x)
    XX, ZZ = np.meshgrid(X, Z)
    verts = np.stack([XX, Y, ZZ], axis=-1).reshape(-1, 3)
    return verts, _quad_faces(len(iz), len(ix))


def _mesh(g: MeshGround, bounds, max_faces: int):
    """The mesh's faces that overlap the rectangle (by their XZ extent: a big quad or tread
    with no vertex inside still counts), less the flat faces hidden under the top surface
    (box bottoms, floors under steps), which would only fight with what covers them."""
    v, f = g.vertices, g.faces
    xz = v[:, [0, 2]][f]  # (T, 3, 2)
    keep = ((xz.min(axis=1) <= bounds[1]) & (xz.max(axis=1) >= bounds[0])).all(axis=1)
    f = f[keep]
    if len(f):
        f = f[~_hidden_flat(g, v, f)]
    if len(f) > max_faces:
        f = f[np.linspace(0, len(f) - 1, max_faces).astype(np.int64)]
    used, inv = np.unique(f, return_inverse=True)
    return v[used], inv.reshape(-1, 3)


def _hidden_flat(g: MeshGround, v, f) -> np.ndarray:
    """Bool per face: a flat face whose centre lies clearly below the topmost surface."""
    n = face_normals(v, f)
    c = v[f].mean(axis=1)
    flat = n[:, 1] > 0.5
    hidden = np.zeros(len(f), dtype=bool)
    if flat.any():
        extent = float(np.ptp(v[f].reshape(-1, 3), axis=0).max())
        h, _, hit = g.height_at(c[flat][:, [0, 2]])
        hidden[flat] = np.asarray(hit) & (c[flat, 1] < np.asarray(h) - 1e-6 * max(extent, 1.0))
    return hidden


def ground_mesh(ground, bounds_xz, cells: int = 48, max_faces: int = 20000):
    """A triangle mesh of ``ground`` over an XZ rectangle, for drawing.

    Args:
        ground: any :class:`~ikrig.ground.Ground`.
        bounds_xz: ``(2, 2)`` ``[[x_min, z_min], [x_max, z_max]]`` world rectangle.
        cells: grid resolution per axis for heightfields and sampled grounds.
        max_faces: a mesh ground with more triangles in the rectangle is thinned to this.

    Returns:
        ``(vertices (V, 3) float64, faces (T, 3) int64)``. Planes, stairs, slopes and blocks
        are exact (a few large faces, vertical risers and box sides); heightfields are their
        own grid (subsampled to ``cells``); meshes their triangles that overlap the
        rectangle, less flat ones hidden under the top surface; any other ground is sampled
        with ``height_at`` (misses leave holes).
    """
    b = _rect(bounds_xz)
    if isinstance(ground, ProfileGround):
        v, f = _profile(ground, b)
    elif isinstance(ground, BlocksGround):
        v, f = _blocks(ground, b)
    elif isinstance(ground, Heightfield):
        v, f = _heightfield(ground, b, cells)
    elif isinstance(ground, MeshGround):
        v, f = _mesh(ground, b, max_faces)
    elif isinstance(ground, Plane):
        v, f = _sampled(ground, b, 1)
    else:
        v, f = _sampled(ground, b, cells)
    return np.asarray(v, dtype=np.float64), np.asarray(f, dtype=np.int64).reshape(-1, 3)


def face_normals(vertices, faces) -> np.ndarray:
    """``(T, 3)`` unit normals of triangles, turned up (``n_y >= 0``)."""
    tri = vertices[faces]
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    n *= np.where(n[:, 1:2] < 0, -1.0, 1.0)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return np.where(length > 0, n / np.where(length > 0, length, 1.0), [0.0, 1.0, 0.0])


def face_shading(vertices, faces, base_rgb=(0.70, 0.74, 0.72), height_tint=0.6) -> np.ndarray:
    """``(T, 3)`` RGB in [0, 1] per triangle: ``base_rgb`` lit from :data:`LIGHT` (vertical
    faces darker than treads), warmer where the ground is higher (``height_tint``)."""
    if len(faces) == 0:
        return np.zeros((0, 3))
    y = vertices[faces][:, :, 1].mean(axis=1)
    return shade(face_normals(vertices, faces), y, base_rgb, height_tint)


def shade(normals, heights, base_rgb=(0.70, 0.74, 0.72), height_tint=0.6) -> np.ndarray:
    """``(T, 3)`` RGB of faces with unit ``normals (T, 3)`` at mean ``heights (T,)``: lit from
    :data:`LIGHT`, warmer the higher they are within the heights given."""
    n = np.asarray(normals, dtype=np.float64).reshape(-1, 3)
    y = np.asarray(heights, dtype=np.float64).reshape(-1)
    if len(y) == 0:
        return np.zeros((0, 3))
    lit = 0.55 + 0.45 * np.abs(n @ LIGHT)
    span = float(np.ptp(y))
    t = (y - y.min()) / span if span > 1e-12 else np.zeros_like(y)
    base = np.asarray(base_rgb, dtype=np.float64)
    warm = np.array([0.88, 0.72, 0.50])
    rgb = base * (1 - height_tint * t[:, None]) + warm * (height_tint * t[:, None])
    return np.clip(rgb * lit[:, None], 0.0, 1.0)


def arc_points(center, axis_u, axis_v, start, stop, radius, n: int = 32) -> np.ndarray:
    """``(n, 3)`` points of a circular arc about ``center`` in the plane of the unit vectors
    ``axis_u`` (angle 0) and ``axis_v`` (angle pi/2), from angle ``start`` to ``stop``."""
    t = np.linspace(start, stop, n)
    c, s = np.cos(t)[:, None], np.sin(t)[:, None]
    return np.asarray(center) + radius * (c * np.asarray(axis_u) + s * np.asarray(axis_v))


def perpendicular(v) -> np.ndarray:
    """A unit vector perpendicular to the non-zero 3-vector ``v``."""
    v = np.asarray(v, dtype=np.float64)
    a = np.array([1.0, 0.0, 0.0]) if abs(v[0]) < 0.9 * np.linalg.norm(v) else np.array([0, 1.0, 0])
    p = np.cross(v, a)
    return p / np.linalg.norm(p)


def cone_rim(apex, axis, half_angle, length, n: int = 32) -> np.ndarray:
    """``(n, 3)`` the rim circle of a cone with ``apex``, unit ``axis``, ``half_angle``
    (radians) and slant ``length``."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis)
    u = perpendicular(axis)
    v = np.cross(axis, u)
    center = np.asarray(apex) + axis * length * math.cos(half_angle)
    return arc_points(center, u, v, 0.0, 2 * math.pi, length * math.sin(half_angle), n)


def _clip_polygon(poly: np.ndarray, axis: int, value: float, keep_above: bool) -> np.ndarray:
    """Sutherland-Hodgman: the part of a 3D polygon on one side of ``p[axis] = value``."""
    d = poly[:, axis] - value if keep_above else value - poly[:, axis]
    out = []
    n = len(poly)
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        da, db = d[i], d[(i + 1) % n]
        if da >= 0:
            out.append(a)
        if (da >= 0) != (db >= 0):
            out.append(a + (b - a) * (da / (da - db)))
    return np.array(out).reshape(-1, 3)


def clip_faces_xz(
    vertices, faces, bounds_xz, y_min: float | None = None
) -> tuple[list, np.ndarray]:
    """Triangles clipped to the vertical prism over an XZ rectangle (cut at ``y_min`` below).

    Returns:
        ``(polygons, index)``: a list of ``(k, 3)`` polygons (triangles inside are kept as
        they are, those crossing the border are cut) and the face each came from.
    """
    b = _rect(bounds_xz)
    tri = np.asarray(vertices, dtype=np.float64)[np.asarray(faces)].reshape(-1, 3, 3)
    x, y, z = tri[..., 0], tri[..., 1], tri[..., 2]
    low = -np.inf if y_min is None else float(y_min)
    inside = ((x >= b[0, 0]) & (x <= b[1, 0]) & (z >= b[0, 1]) & (z <= b[1, 1]) & (y >= low)).all(
        axis=1
    )
    outside = (
        (x < b[0, 0]).all(1)
        | (x > b[1, 0]).all(1)
        | (z < b[0, 1]).all(1)
        | (z > b[1, 1]).all(1)
        | (y < low).all(1)
    )
    planes = [(0, b[0, 0], True), (0, b[1, 0], False), (2, b[0, 1], True), (2, b[1, 1], False)]
    if y_min is not None:
        planes.append((1, low, True))
    polys = list(tri[inside])
    index = list(np.flatnonzero(inside))
    for i in np.flatnonzero(~inside & ~outside):
        p = tri[i]
        for axis, value, above in planes:
            p = _clip_polygon(p, axis, value, above)
            if len(p) < 3:
                break
        if len(p) >= 3:
            polys.append(p)
            index.append(i)
    return polys, np.asarray(index, dtype=np.int64)


def surface_floor(ground, bounds_xz, samples: int = 12) -> float | None:
    """The lowest height of the top surface over an XZ rectangle (sampled on a grid), or
    ``None`` where the ground is missing everywhere. Walls and box sides reaching far below
    it can be cut there: they only hide the steps above them."""
    b = _rect(bounds_xz)
    xs = np.linspace(b[0, 0], b[1, 0], samples)
    zs = np.linspace(b[0, 1], b[1, 1], samples)
    xz = np.stack(np.meshgrid(xs, zs, indexing="ij"), axis=-1).reshape(-1, 2)
    h, _, hit = ground.height_at(xz)
    h = np.asarray(h, dtype=np.float64)[np.asarray(hit, dtype=bool)]
    return float(h.min()) if len(h) else None


def skirts(ground, bounds_xz, y_min: float, samples: int = 96) -> tuple[list, np.ndarray]:
    """The four cut faces of a solid ground clipped to an XZ rectangle: along each edge, the
    top surface's profile down to ``y_min`` (the ground taken as solid below its top, as a
    terrain diorama). They close the cut so the boxes' inner walls do not show through.

    Returns:
        ``(polygons, normals)``: up to four ``(k, 3)`` polygons and their outward normals.
    """
    b = _rect(bounds_xz)
    t = np.linspace(0.0, 1.0, samples)
    corners = np.array(
        [[b[0, 0], b[0, 1]], [b[1, 0], b[0, 1]], [b[1, 0], b[1, 1]], [b[0, 0], b[1, 1]]]
    )
    centre = corners.mean(axis=0)
    polys, normals = [], []
    for k in range(4):
        a, c = corners[k], corners[(k + 1) % 4]
        xz = a + t[:, None] * (c - a)
        h, _, hit = ground.height_at(xz)
        y = np.where(np.asarray(hit, dtype=bool), np.asarray(h, dtype=np.float64), y_min)
        y = np.maximum(y, y_min)
        if not (y > y_min).any():
            continue
        top = np.column_stack([xz[:, 0], y, xz[:, 1]])
        bottom = np.array([[c[0], y_min, c[1]], [a[0], y_min, a[1]]])
        polys.append(np.concatenate([top, bottom]))
        mid = (a + c) / 2 - centre
        normals.append(np.array([mid[0], 0.0, mid[1]]) / float(np.linalg.norm(mid)))
    return polys, np.asarray(normals, dtype=np.float64).reshape(-1, 3)
