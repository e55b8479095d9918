"""The ground layer: planes, heightfields, meshes, built-in grounds.

Known answers come from an independent brute-force reference: every ray against every
triangle in NumPy (plane intersection plus an edge-function inside test, not the kernels'
Moller-Trumbore), and for the analytic grounds the triangles or rectangles they stand for.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ikrig.errors import FileFormatError, IkrigError, InputError
from ikrig.ground import (
    GROUND_NAMES,
    BlocksGround,
    Ground,
    Heightfield,
    Hits,
    MeshGround,
    Plane,
    ProfileGround,
    embree_available,
    load_ground,
    make_ground,
    walking_frame,
)
from ikrig.ground import procedural as P

BATCH_SHAPES = [(), (1,), (3, 2)]
DTYPES = [np.float32, np.float64]
UP = np.array([0.0, 1.0, 0.0])
DOWN = np.array([0.0, -1.0, 0.0])


# ---------------------------------------------------------------------------- references


def brute_raycast(tris, origins, directions, max_dist=np.inf):
    """Nearest hit of each ray with all triangles ``(T, 3, 3)``, in plain NumPy.

    Returns ``(mask, dist, point, normal)`` for flat ``(N, 3)`` rays, normals facing the
    ray's origin side. A loop over rays, vectorised over the triangles.
    """
    tris = np.asarray(tris, dtype=np.float64)
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    n = np.cross(b - a, c - a)
    n2 = np.einsum("ij,ij->i", n, n)
    good = n2 > 0
    origins, directions = np.broadcast_arrays(
        np.asarray(origins, dtype=np.float64), np.asarray(directions, dtype=np.float64)
    )
    origins, directions = origins.reshape(-1, 3), directions.reshape(-1, 3)
    md = np.broadcast_to(np.asarray(max_dist, dtype=np.float64), origins.shape[:1])
    out_mask = np.zeros(len(origins), dtype=bool)
    out_t = md.copy()
    out_n = np.tile(UP, (len(origins), 1))
    for i, (o, d) in enumerate(zip(origins, unit_rows(directions))):
        if not d.any():
            continue
        den = n @ d
        ok = good & (np.abs(den) > 1e-12 * np.sqrt(n2))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(ok, np.einsum("ij,ij->i", a - o, n) / den, -1.0)
        p = o + t[:, None] * d
        inside = ok & (t >= 0) & (t <= md[i])
        for v0, v1 in ((a, b), (b, c), (c, a)):
            edge = np.einsum("ij,ij->i", np.cross(v1 - v0, p - v0), n)
            inside &= edge >= -1e-9 * n2
        if inside.any():
            k = np.flatnonzero(inside)[np.argmin(t[inside])]
            out_mask[i] = True
            out_t[i] = t[k]
            nk = n[k] / np.sqrt(n2[k])
            out_n[i] = -nk if nk @ d > 0 else nk
    reach = np.where(np.isinf(out_t), 0.0, out_t)
    return out_mask, out_t, origins + unit_rows(directions) * reach[:, None], out_n


def unit_rows(d):
    """Unit rows of ``(N, 3)``, zero rows stay zero (scaled first: no under/overflow)."""
    d = np.asarray(d, dtype=np.float64)
    m = np.abs(d).max(axis=1, keepdims=True)
    d = d / np.where(m > 0, m, 1.0)
    length = np.linalg.norm(d, axis=1, keepdims=True)
    return d / np.where(length > 0, length, 1.0)


def heightfield_triangles(hf: Heightfield) -> np.ndarray:
    """The ``(2 (H-1) (W-1), 3, 3)`` triangles a heightfield documents."""
    h = hf.heights
    H, W = h.shape
    cx, cz = hf.cell_size
    x0, z0 = hf.origin_xz
    tris = []
    for iz in range(H - 1):
        for ix in range(W - 1):

            def v(jx, jz, ix=ix, iz=iz):
                return [x0 + (ix + jx) * cx, h[iz + jz, ix + jx], z0 + (iz + jz) * cz]

            tris.append([v(0, 0), v(1, 0), v(1, 1)])
            tris.append([v(0, 0), v(1, 1), v(0, 1)])
    return np.array(tris)


def assert_hits_equal(h: Hits, ref, atol=1e-9):
    mask, dist, point, normal = ref
    bad = np.flatnonzero(h.mask.reshape(-1) != mask)
    assert bad.size == 0, f"hit/miss differs from the reference at rays {bad.tolist()}"
    np.testing.assert_allclose(h.distance.reshape(-1)[mask], dist[mask], atol=atol)
    np.testing.assert_allclose(h.point.reshape(-1, 3)[mask], point[mask], atol=atol)
    np.testing.assert_allclose(h.normal.reshape(-1, 3)[mask], normal[mask], atol=atol)


def assert_no_nan(h: Hits):
    for a in (h.distance, h.point, h.normal):
        assert not np.isnan(a).any()
    np.testing.assert_allclose(np.linalg.norm(h.normal, axis=-1), 1.0, atol=1e-6)


def assert_miss_convention(h: Hits, origins, directions, max_dist):
    """Misses: distance = max_dist, point = origin + unit dir * max_dist (origin if inf)."""
    o = np.broadcast_to(origins, h.point.shape).reshape(-1, 3)
    d = np.broadcast_to(directions, h.point.shape).reshape(-1, 3).astype(np.float64)
    md = np.broadcast_to(max_dist, h.mask.shape).reshape(-1)
    m = ~h.mask.reshape(-1)
    unit = unit_rows(d)
    reach = np.where(np.isinf(md), 0.0, md)
    np.testing.assert_array_equal(h.distance.reshape(-1)[m], md[m].astype(h.distance.dtype))
    np.testing.assert_allclose(h.point.reshape(-1, 3)[m], (o + unit * reach[:, None])[m], 1e-6)
    np.testing.assert_array_equal(h.normal.reshape(-1, 3)[m], np.tile(UP, (m.sum(), 1)))


def random_heightfield(rng, shape=(7, 9)):
    return Heightfield(rng.normal(scale=0.5, size=shape), (-1.0, 2.0), (0.4, 0.3))


def random_mesh(rng, n_faces=40, n_vertices=30, spread=1.0):
    v = rng.uniform(-spread, spread, size=(n_vertices, 3))
    f = np.array([rng.choice(n_vertices, 3, replace=False) for _ in range(n_faces)])
    return v, f


def make_all_grounds(rng):
    """One instance of every ground type, with its triangles (for the brute force) or None."""
    hf = random_heightfield(rng)
    v, f = random_mesh(rng)
    path = np.c_[np.linspace(0, 1, 20), np.linspace(0, 3, 20)]
    return {
        "plane": Plane([0.1, -0.2, 0.3], [0.2, 1.0, -0.1]),
        "heightfield": hf,
        "mesh": MeshGround(v, f),
        "stairs": make_ground("stairs", path, 0.9, floor_height=0.1),
        "slope": make_ground("slope", path, 0.9),
        "bumps": make_ground("bumps", path, 0.9),
        "blocks": make_ground("blocks", path, 0.9, seed=3),
    }


# ---------------------------------------------------------------------------- plane


def test_plane_vertical_and_oblique_rays_known_answers():
    g = Plane([0.0, 1.0, 0.0], [0.0, 2.0, 0.0])
    h = g.raycast(
        [[0.0, 3.0, 0.0], [5.0, -1.0, 2.0], [0.0, 4.0, 0.0]], [[0, -1, 0], [0, 2, 0], [3, -3, 0]]
    )
    assert h.mask.tolist() == [True, True, True]
    np.testing.assert_allclose(h.distance, [2.0, 2.0, 3.0 * math.sqrt(2.0)])
    np.testing.assert_allclose(h.point, [[0, 1, 0], [5, 1, 2], [3, 1, 0]], atol=1e-12)
    np.testing.assert_allclose(h.normal, [[0, 1, 0], [0, -1, 0], [0, 1, 0]])  # faces the origin
    # away from the plane, parallel to it, beyond max_dist: misses
    h = g.raycast(
        [[0, 3, 0], [0, 3, 0], [0, 3, 0]], [[0, 1, 0], [1, 0, 0], [0, -1, 0]], [9, 9, 1.5]
    )
    assert not h.mask.any()
    np.testing.assert_allclose(h.distance, [9, 9, 1.5])
    np.testing.assert_allclose(h.point, [[0, 12, 0], [9, 3, 0], [0, 1.5, 0]])


def test_tilted_plane():
    angle = math.radians(30.0)
    n = np.array([-math.sin(angle), math.cos(angle), 0.0])  # y = tan(30) x
    g = Plane([0.0, 0.0, 0.0], n)
    h = g.raycast([2.0, 5.0, -1.0], DOWN)
    np.testing.assert_allclose(h.point, [2.0, 2.0 * math.tan(angle), -1.0])
    np.testing.assert_allclose(h.normal, n)
    np.testing.assert_allclose(h.distance, 5.0 - 2.0 * math.tan(angle))
    # a ray along the normal from a point 2 above the plane
    on = np.array([1.0, math.tan(angle), 0.0])
    h = g.raycast(on + 2.0 * n, -n)
    np.testing.assert_allclose(h.distance, 2.0)
    np.testing.assert_allclose(h.point, on, atol=1e-12)
    heights, normals, mask = g.height_at([[2.0, 7.0], [-1.0, 0.0]])
    np.testing.assert_allclose(heights, [2.0 * math.tan(angle), -math.tan(angle)])
    np.testing.assert_allclose(normals, [n, n])
    assert mask.all()
    # downward normal given: heights the same, normals still up
    heights2, normals2, _ = Plane([0.0, 0.0, 0.0], -n).height_at([[2.0, 7.0], [-1.0, 0.0]])
    np.testing.assert_allclose(heights2, heights)
    np.testing.assert_allclose(normals2, normals)


def test_plane_against_brute_force():
    rng = np.random.default_rng(1)
    g = Plane([0.3, -0.1, 0.2], [0.3, 1.0, 0.4])
    n = g.normal
    u = np.cross(n, [1, 0, 0])
    u /= np.linalg.norm(u)
    w = np.cross(n, u)
    big = 100.0
    quad = [g.point + big * (-u - w), g.point + big * (u - w), g.point + big * (u + w)]
    quad2 = [g.point + big * (-u - w), g.point + big * (u + w), g.point + big * (-u + w)]
    o = rng.uniform(-2, 2, size=(200, 3))
    d = rng.normal(size=(200, 3))
    # within 50 of the origins the 2 x 200 square stands for the infinite plane
    assert_hits_equal(g.raycast(o, d, 50.0), brute_raycast([quad, quad2], o, d, 50.0), atol=1e-8)


def test_vertical_plane_has_no_height():
    heights, normals, mask = Plane([0, 0, 0], [1, 0, 0]).height_at(np.zeros((4, 2)))
    assert not mask.any()
    np.testing.assert_array_equal(heights, 0.0)
    np.testing.assert_array_equal(normals, np.tile(UP, (4, 1)))


def test_plane_rejects_zero_normal():
    with pytest.raises(InputError):
        Plane([0, 0, 0], [0, 0, 0])


# ---------------------------------------------------------------------------- heightfield


def test_heightfield_vertical_queries_equal_triangle_interpolation():
    rng = np.random.default_rng(2)
    hf = random_heightfield(rng)
    (x0, z0), (x1, z1) = hf.bounds_xz
    xz = np.c_[rng.uniform(x0, x1, 300), rng.uniform(z0, z1, 300)]
    heights, normals, mask = hf.height_at(xz)
    assert mask.all()
    origins = np.c_[xz[:, 0], np.full(len(xz), 10.0), xz[:, 1]]
    ref_mask, ref_t, ref_p, ref_n = brute_raycast(heightfield_triangles(hf), origins, DOWN)
    assert ref_mask.all()
    np.testing.assert_allclose(heights, ref_p[:, 1], atol=1e-12)
    np.testing.assert_allclose(normals, ref_n, atol=1e-12)
    # the ray casts agree with both
    assert_hits_equal(hf.raycast(origins, DOWN), (ref_mask, ref_t, ref_p, ref_n), atol=1e-12)


def test_heightfield_interpolation_formula():
    # one cell, corners h00=0, h10=1 (x+1), h01=2 (z+1), h11=4
    hf = Heightfield([[0.0, 1.0], [2.0, 4.0]], (0.0, 0.0), 1.0)
    heights, _, _ = hf.height_at([[0.75, 0.25], [0.25, 0.75], [0.5, 0.5], [1.0, 1.0], [0, 0]])
    # (u >= v): h00 + u (h10 - h00) + v (h11 - h10); (u < v): h00 + v (h01 - h00) + u (h11 - h01)
    np.testing.assert_allclose(heights, [0.75 + 0.25 * 3, 0.75 * 2 + 0.25 * 2, 2.0, 4.0, 0.0])


def test_heightfield_oblique_rays_equal_brute_force():
    rng = np.random.default_rng(3)
    hf = random_heightfield(rng, shape=(9, 12))
    tris = heightfield_triangles(hf)
    (x0, z0), (x1, z1) = hf.bounds_xz
    n = 400
    o = np.c_[rng.uniform(x0 - 1, x1 + 1, n), rng.uniform(-2, 2, n), rng.uniform(z0 - 1, z1 + 1, n)]
    d = rng.normal(size=(n, 3)) - [0.0, 0.8, 0.0]
    d[:50, 1] = 0.0  # horizontal rays
    d[50:100] *= [1, 0.01, 1]  # almost horizontal: long walks through the grid
    md = rng.choice([np.inf, 1.0, 3.0], size=n)
    ref = brute_raycast(tris, o, d, md)
    assert 30 < ref[0].sum() < n - 30
    h = hf.raycast(o, d, md)
    assert_hits_equal(h, ref)
    assert_miss_convention(h, o, d, md)


def test_heightfield_misses_outside_grid():
    hf = Heightfield(np.ones((3, 4)), (0.0, 0.0), 1.0)  # x in [0, 3], z in [0, 2]
    xz = np.array([[-0.01, 1.0], [3.01, 1.0], [1.0, -0.01], [1.0, 2.5]])
    heights, normals, mask = hf.height_at(xz)
    assert not mask.any()
    np.testing.assert_array_equal(heights, 0.0)
    np.testing.assert_array_equal(normals, np.tile(UP, (4, 1)))
    o = np.c_[xz[:, 0], np.full(4, 5.0), xz[:, 1]]
    h = hf.raycast(o, DOWN)
    assert not h.mask.any()
    assert_miss_convention(h, o, DOWN, np.inf)
    # horizontal rays passing beside or over the grid
    h = hf.raycast([[-1, 0.5, 2.5], [-1, 1.5, 1.0]], [1, 0, 0])
    assert not h.mask.any()
    # the border itself belongs to the grid
    heights, _, mask = hf.height_at([[0.0, 0.0], [3.0, 2.0], [3.0, 1.0]])
    assert mask.all()
    np.testing.assert_allclose(heights, 1.0)


def test_heightfield_grazing_edges_and_vertices():
    rng = np.random.default_rng(4)
    hf = random_heightfield(rng)
    cx, cz = hf.cell_size
    x0, z0 = hf.origin_xz
    H, W = hf.shape
    # vertical rays exactly through every vertex: the vertex's height
    ix, iz = np.meshgrid(np.arange(W), np.arange(H))
    o = np.stack([x0 + ix * cx, np.full(ix.shape, 5.0), z0 + iz * cz], axis=-1)
    h = hf.raycast(o, DOWN)
    assert h.mask.all()
    np.testing.assert_allclose(h.point[..., 1], hf.heights, atol=1e-12)
    heights, _, mask = hf.height_at(o[..., [0, 2]])
    assert mask.all()
    np.testing.assert_allclose(heights, hf.heights, atol=1e-12)
    # rays running exactly along grid lines and diagonals, slightly downward
    tris = heightfield_triangles(hf)
    starts = [[x0 - 0.5, 2.0, z0 + 2 * cz], [x0 + 3 * cx, 2.0, z0 - 0.5], [x0, 2.0, z0]]
    dirs = [[1.0, -1.2, 0.0], [0.0, -1.2, 1.0], [cx, -1.0, cz]]
    h = hf.raycast(starts, dirs)
    assert_no_nan(h)
    assert h.mask.all()
    ref_mask, ref_t, ref_p, _ = brute_raycast(tris, starts, dirs)
    assert ref_mask.all()
    # on an edge either neighbour's normal is right; the point is the same
    np.testing.assert_allclose(h.distance, ref_t, atol=1e-12)
    np.testing.assert_allclose(h.point, ref_p, atol=1e-12)


def test_heightfield_ray_from_below_hits_underside():
    hf = Heightfield(np.zeros((3, 3)), (0, 0), 1.0)
    h = hf.raycast([1.0, -2.0, 1.0], [0.0, 1.0, 0.0])
    assert h.mask
    np.testing.assert_allclose(h.distance, 2.0)
    np.testing.assert_allclose(h.normal, DOWN)


def test_heightfield_matches_mesh_of_same_triangles():
    rng = np.random.default_rng(5)
    hf = random_heightfield(rng, shape=(10, 8))
    tris = heightfield_triangles(hf)
    mesh = MeshGround(tris.reshape(-1, 3), np.arange(len(tris) * 3).reshape(-1, 3))
    o = rng.uniform(-2, 4, size=(500, 3))
    d = rng.normal(size=(500, 3))
    a, b = hf.raycast(o, d), mesh.raycast(o, d)
    np.testing.assert_array_equal(a.mask, b.mask)
    np.testing.assert_allclose(a.distance[a.mask], b.distance[b.mask], atol=1e-9)
    np.testing.assert_allclose(a.normal[a.mask], b.normal[b.mask], atol=1e-9)


def test_heightfield_from_function():
    hf = Heightfield.from_function(lambda x, z: 0.5 * x - z, [[0, 0], [2, 1]], 0.25)
    assert hf.shape == (5, 9)
    heights, normals, _ = hf.height_at([[1.3, 0.7]])
    np.testing.assert_allclose(heights, [0.65 - 0.7])  # a plane is reproduced exactly
    n = np.array([-0.5, 1.0, 1.0]) / 1.5
    np.testing.assert_allclose(normals, [n])


@pytest.mark.parametrize("heights", [np.zeros((1, 4)), np.zeros(4), [[0.0, np.nan], [0, 0]]])
def test_heightfield_rejects_bad_heights(heights):
    with pytest.raises(InputError):
        Heightfield(heights, (0, 0), 1.0)


def test_heightfield_rejects_bad_cell_size():
    with pytest.raises(InputError):
        Heightfield(np.zeros((2, 2)), (0, 0), 0.0)


@given(seed=st.integers(0, 2**31 - 1))
def test_heightfield_random_rays_property(seed):
    rng = np.random.default_rng(seed)
    hf = Heightfield(rng.normal(size=(4, 5)), rng.normal(size=2), rng.uniform(0.2, 2.0, 2))
    o = rng.normal(scale=3, size=(20, 3))
    d = rng.normal(size=(20, 3))
    assert_hits_equal(hf.raycast(o, d), brute_raycast(heightfield_triangles(hf), o, d))


# ---------------------------------------------------------------------------- mesh


def test_mesh_random_rays_equal_brute_force():
    rng = np.random.default_rng(6)
    v, f = random_mesh(rng, n_faces=40)
    g = MeshGround(v, f)
    n = 500
    o = rng.uniform(-2, 2, size=(n, 3))
    d = rng.uniform(-1, 1, size=(n, 3)) - o  # aimed at the mesh's box
    d[:100] = rng.normal(size=(100, 3))
    md = rng.choice([np.inf, 0.5, 2.0], size=n)
    ref = brute_raycast(v[f], o, d, md)
    assert 50 < ref[0].sum() < n - 50
    h = g.raycast(o, d, md)
    assert_hits_equal(h, ref)
    assert_miss_convention(h, o, d, md)


def test_mesh_spread_out_many_cells_equal_brute_force():
    # many small triangles over a wide area: long walks through the grid, nearest across cells
    rng = np.random.default_rng(7)
    centres = np.c_[rng.uniform(-5, 5, 600), rng.uniform(-0.5, 0.5, 600), rng.uniform(-5, 5, 600)]
    tris = centres[:, None, :] + rng.normal(scale=0.3, size=(600, 3, 3))
    g = MeshGround(tris.reshape(-1, 3), np.arange(1800).reshape(-1, 3))
    n = 300
    o = np.c_[rng.uniform(-6, 6, n), rng.uniform(-1, 2, n), rng.uniform(-6, 6, n)]
    d = rng.normal(size=(n, 3)) * [1, 0.2, 1]
    ref = brute_raycast(tris, o, d)
    assert ref[0].sum() > 60
    assert_hits_equal(g.raycast(o, d), ref)


def test_mesh_grazing_vertices_and_edges():
    # vertical rays exactly through the vertices and edge midpoints of a grid mesh
    rng = np.random.default_rng(13)
    hf = random_heightfield(rng, shape=(6, 7))
    tris = heightfield_triangles(hf)
    g = MeshGround(tris.reshape(-1, 3), np.arange(len(tris) * 3).reshape(-1, 3))
    cx, cz = hf.cell_size
    x0, z0 = hf.origin_xz
    H, W = hf.shape
    gx, gz = np.meshgrid(np.arange(0, W - 1 + 0.25, 0.5), np.arange(0, H - 1 + 0.25, 0.5))
    xz = np.stack([x0 + gx * cx, z0 + gz * cz], axis=-1)
    expected, _, _ = hf.height_at(xz)
    heights, normals, mask = g.height_at(xz)
    assert mask.all()
    np.testing.assert_allclose(heights, expected, atol=1e-12)
    assert (normals[..., 1] > 0).all()
    # horizontal rays along the grid's edge lines at the height of a flat mesh: no NaN
    flat = MeshGround(tris.reshape(-1, 3) * [1, 0, 1], np.arange(len(tris) * 3).reshape(-1, 3))
    xz = xz.reshape(-1, 2)
    h = flat.raycast(np.c_[xz[:, 0], np.zeros(len(xz)), xz[:, 1] - 5], [0.0, 0.0, 1.0])
    assert_no_nan(h)
    assert not h.mask.any()  # parallel to every triangle


def test_mesh_height_at_topmost():
    # two horizontal squares at y=1 and y=3 over the same area, and a vertical wall
    sq = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 1], [0, 0, 1]], dtype=float)
    v = np.concatenate([sq + [0, 1, 0], sq + [0, 3, 0], [[0.5, 0, 0], [0.5, 5, 0], [0.5, 0, 1]]])
    f = [[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7], [8, 9, 10]]
    g = MeshGround(v, f)
    heights, normals, mask = g.height_at([[0.2, 0.3], [0.9, 0.9], [2.0, 2.0]])
    assert mask.tolist() == [True, True, False]
    np.testing.assert_allclose(heights, [3.0, 3.0, 0.0])
    np.testing.assert_allclose(normals, np.tile(UP, (3, 1)))
    # from below, the lower square faces down
    h = g.raycast([0.2, -1.0, 0.3], UP)
    np.testing.assert_allclose(h.point, [0.2, 1.0, 0.3])
    np.testing.assert_allclose(h.normal, DOWN)
    # horizontal ray hits the wall, normal facing back
    h = g.raycast([0.0, 2.0, 0.5], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(h.point, [0.5, 2.0, 0.5])
    np.testing.assert_allclose(h.normal, [-1.0, 0.0, 0.0])


def test_mesh_degenerate_triangles_ignored():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 1], [2, 0, 0]], dtype=float)
    g = MeshGround(v, [[0, 1, 2], [0, 1, 3], [1, 1, 2]])
    h = g.raycast([[0.2, 1, 0.2], [0.5, 1, 0.0]], DOWN)
    assert h.mask.tolist() == [True, True]
    with pytest.raises(InputError):
        MeshGround(v, [[0, 1, 3]])


@pytest.mark.parametrize(
    "faces", [np.zeros((0, 3), int), [[0, 1, 5]], [[0, 1]], [[0.0, 1.0, 2.0]], [[-1, 0, 1]]]
)
def test_mesh_rejects_bad_faces(faces):
    with pytest.raises(InputError):
        MeshGround(np.eye(3), faces)


@pytest.mark.skipif(not embree_available(), reason="embreex is not installed")
def test_mesh_embree_backend_agrees():
    rng = np.random.default_rng(8)
    v, f = random_mesh(rng, n_faces=60)
    a = MeshGround(v, f, backend="numba")
    b = MeshGround(v, f, backend="embree")
    o = rng.uniform(-2, 2, size=(400, 3))
    d = rng.normal(size=(400, 3))
    ha, hb = a.raycast(o, d), b.raycast(o, d)
    same = ha.mask == hb.mask
    assert same.mean() > 0.99  # embree is float32: edge cases may differ
    both = ha.mask & hb.mask
    assert np.abs(ha.distance[both] - hb.distance[both]).max() < 1e-4


def test_mesh_unknown_backend():
    with pytest.raises(InputError):
        MeshGround(np.eye(3), [[0, 1, 2]], backend="optix")


# ---------------------------------------------------------------------------- mesh files

OBJ = """# a unit square at y = 0.5, two triangles
v 0 0.5 0
v 1 0.5 0
v 1 0.5 1
v 0 0.5 1
f 1 2 3
f 1 3 4
"""


def test_load_obj(tmp_path):
    pytest.importorskip("trimesh")
    path = tmp_path / "square.obj"
    path.write_text(OBJ)
    g = MeshGround.load(path)
    heights, _, mask = g.height_at([[0.3, 0.6], [2.0, 2.0]])
    assert mask.tolist() == [True, False]
    np.testing.assert_allclose(heights[0], 0.5)
    g2 = load_ground(str(path), np.zeros((3, 2)), 1.0, floor_height=7.0)  # used as given
    assert isinstance(g2, MeshGround)
    np.testing.assert_allclose(g2.height_at([0.3, 0.6])[0], 0.5)


@pytest.mark.parametrize("content", [b"\x00\x01garbage\xff" * 10, b"v 1 2\nf 1 2 3\n", b""])
def test_unreadable_mesh_file_one_line_error(tmp_path, content):
    pytest.importorskip("trimesh")
    path = tmp_path / "broken.stl"
    path.write_bytes(content)
    with pytest.raises(FileFormatError) as info:
        MeshGround.load(path)
    msg = str(info.value)
    assert "broken.stl" in msg and "\n" not in msg


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_a_non_finite_vertex_names_its_line(tmp_path, bad):
    """trimesh drops the faces of a NaN or infinite vertex without a word (a hole in the
    ground, or 'no triangles'); the loader names the vertex and its OBJ line instead."""
    pytest.importorskip("trimesh")
    path = tmp_path / "holed.obj"
    path.write_text(OBJ.replace("v 1 0.5 1", f"# a comment\nvn 0 1 0\nv 1 {bad} 1", 1))
    with pytest.raises(FileFormatError) as info:
        MeshGround.load(path)
    assert str(info.value) == f"{path}:6: vertex 3 is not finite (NaN or infinite)"
    unused = tmp_path / "unused.obj"  # a bad vertex no face uses is harmless
    unused.write_text(OBJ + f"v 5 {bad} 5\n")
    np.testing.assert_allclose(MeshGround.load(unused).height_at([0.3, 0.6])[0], 0.5)


def test_missing_mesh_file(tmp_path):
    pytest.importorskip("trimesh")
    with pytest.raises(FileFormatError, match="nope.obj"):
        MeshGround.load(tmp_path / "nope.obj")
    with pytest.raises(InputError, match="nope.obj"):
        load_ground(str(tmp_path / "nope.obj"), np.zeros((2, 2)), 1.0)


def test_mesh_load_without_trimesh(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "trimesh", None)  # import fails
    path = tmp_path / "square.obj"
    path.write_text(OBJ)
    with pytest.raises(IkrigError) as info:
        MeshGround.load(path)
    assert "square.obj" in str(info.value) and "trimesh" in str(info.value)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------- built-in grounds


def diagonal_path(n=40, length=6.0):
    t = np.linspace(0.0, 1.0, n)
    d = np.array([0.6, 0.8])
    lateral = np.array([0.8, -0.6]) * 0.2 * np.sin(6 * t)[:, None]
    return np.array([1.0, -2.0]) + length * t[:, None] * d + lateral


def test_walking_frame():
    start, w = walking_frame(diagonal_path(), 1.0)
    np.testing.assert_allclose(start, [1.0, -2.0])
    np.testing.assert_allclose(w, [0.6, 0.8], atol=0.05)
    start, w = walking_frame([[1.0, 1.0], [1.1, 1.0], [1.0, 1.05]], 1.0)  # barely moves
    np.testing.assert_allclose(w, [0.0, 1.0])


@pytest.mark.parametrize("name", GROUND_NAMES)
def test_builtin_ground_starts_at_floor(name):
    path = diagonal_path()
    g = make_ground(name, path, 0.9, seed=1, floor_height=-0.4)
    assert isinstance(g, Ground)
    heights, normals, mask = g.height_at(path[0])
    assert mask
    np.testing.assert_allclose(heights, -0.4, atol=1e-12)
    np.testing.assert_allclose(normals, UP, atol=1e-12)
    # everywhere along the path there is ground, without NaN
    heights, normals, mask = g.height_at(path)
    assert mask.all() and np.isfinite(heights).all()
    h = g.raycast(np.c_[path[:, 0], np.full(len(path), 10.0), path[:, 1]], DOWN)
    assert h.mask.all()
    np.testing.assert_allclose(h.point[:, 1], heights, atol=1e-9)


def test_stairs_step_heights():
    path = diagonal_path()
    leg = 0.9
    g = make_ground("stairs", path, leg, floor_height=0.25)
    start, w = walking_frame(path, leg)
    s1, riser, tread = P.FEATURE_START * leg, P.STAIR_RISER * leg, P.STAIR_TREAD * leg
    lateral = np.array([w[1], -w[0]])
    for n in range(1, 8):
        for frac in (0.05, 0.5, 0.95):
            for off in (-1.0, 0.0, 2.0):
                xz = start + (s1 + (n - 1 + frac) * tread) * w + off * lateral
                h = g.raycast([xz[0], 5.0, xz[1]], DOWN)
                assert h.mask
                np.testing.assert_allclose(h.point[1], 0.25 + n * riser, atol=1e-12)
                np.testing.assert_allclose(h.normal, UP, atol=1e-12)
                np.testing.assert_allclose(g.height_at(xz)[0], 0.25 + n * riser, atol=1e-12)
    # before the first riser: the floor; exactly on a riser: its top
    np.testing.assert_allclose(g.height_at(start + 0.99 * s1 * w)[0], 0.25)
    np.testing.assert_allclose(g.height_at(start + (s1 + tread) * w)[0], 0.25 + 2 * riser)
    # walking into a riser: a horizontal ray hits it, normal facing back
    o = start + (s1 + 0.3 * tread) * w
    h = g.raycast([o[0], 0.25 + 1.5 * riser, o[1]], [w[0], 0.0, w[1]])
    assert h.mask
    np.testing.assert_allclose(h.distance, 0.7 * tread, atol=1e-12)
    np.testing.assert_allclose(h.normal, [-w[0], 0.0, -w[1]], atol=1e-12)


def profile_triangles(g: ProfileGround, half_width=20.0, ends=50.0):
    """Triangles of a profile ground over a finite band (for the brute force)."""
    ks = np.concatenate([[g.s_knots[0] - ends], g.s_knots, [g.s_knots[-1] + ends]])
    ky = np.concatenate([[g.y_knots[0]], g.y_knots, [g.y_knots[-1]]]) + g.floor_height
    w = g.direction_xz
    lat = np.array([w[1], -w[0]])
    tris = []
    for k in range(len(ks) - 1):
        if ks[k] == ks[k + 1] and ky[k] == ky[k + 1]:
            continue
        p = [
            g.start_xz + ks[j] * w + side * half_width * lat for j in (k, k + 1) for side in (-1, 1)
        ]
        q = [[p[i][0], ky[k + i // 2], p[i][1]] for i in range(4)]
        tris += [[q[0], q[1], q[3]], [q[0], q[3], q[2]]]
    return np.array(tris)


@pytest.mark.parametrize("name", ["stairs", "slope"])
def test_profile_ground_equals_brute_force(name):
    rng = np.random.default_rng(9)
    path = diagonal_path()
    g = make_ground(name, path, 0.9, floor_height=0.3)
    assert isinstance(g, ProfileGround)
    start, w = walking_frame(path, 0.9)
    n = 400
    s = rng.uniform(-1, 8, n)
    u = rng.uniform(-3, 3, n)
    o = np.c_[
        start[0] + s * w[0] + u * w[1], rng.uniform(-0.5, 3.0, n), start[1] + s * w[1] - u * w[0]
    ]
    d = rng.normal(size=(n, 3))
    d[:40] = [w[0], 0.0, w[1]]  # horizontal, along the walking direction
    d[40:80] = [-w[0], 0.0, -w[1]]
    md = rng.choice([12.0, 1.0], size=n)  # stay inside the reference's finite band
    ref = brute_raycast(profile_triangles(g), o, d, md)
    h = g.raycast(o, d, md)
    assert_hits_equal(h, ref)
    assert_miss_convention(h, o, d, md)


def test_slope_angle():
    path = np.c_[np.zeros(10), np.linspace(0, 10, 10)]
    g = make_ground("slope", path, 1.0)
    heights, normals, _ = g.height_at([[0.0, 2.0], [0.0, 5.0]])
    tan = math.tan(math.radians(P.SLOPE_DEG))
    np.testing.assert_allclose(heights, [1.0 * tan, 4.0 * tan])
    angle = math.degrees(math.acos(normals[0, 1]))
    assert 10.0 <= angle <= 15.0


def blocks_reference(g: BlocksGround, origins, directions, max_dist):
    """Brute force for blocks: box faces as triangles, floor plane minus the footprints."""
    w = g.direction_xz
    lat = np.array([w[1], -w[0]])
    fh = g.floor_height

    def world(s, u, y):
        xz = g.start_xz + s * w + u * lat
        return [xz[0], fh + y, xz[1]]

    tris = []
    for s0, s1, u0, u1, h in g.boxes:
        if h <= 0:
            continue
        c = [world(s, u, y) for y in (0, h) for s in (s0, s1) for u in (u0, u1)]
        for a, b, cc, dd in [(4, 5, 7, 6), (0, 1, 5, 4), (2, 3, 7, 6), (0, 2, 6, 4), (1, 3, 7, 5)]:
            tris += [[c[a], c[b], c[cc]], [c[a], c[cc], c[dd]]]
    mask, t, p, n = brute_raycast(np.array(tris), origins, directions, max_dist)
    # the floor, where not inside a footprint
    o_all, d_all = np.broadcast_arrays(np.asarray(origins, float), np.asarray(directions, float))
    for i, (o, d) in enumerate(zip(o_all.reshape(-1, 3), d_all.reshape(-1, 3))):
        d = d / np.linalg.norm(d)
        if d[1] == 0:
            continue
        tf = (fh - o[1]) / d[1]
        md = np.broadcast_to(max_dist, mask.shape)[i]
        if tf < 0 or tf > md or (mask[i] and t[i] <= tf):
            continue
        q = o + tf * d
        rel = q[[0, 2]] - g.start_xz
        s, u = rel @ w, rel @ lat
        b = g.boxes
        if np.any((b[:, 4] > 0) & (b[:, 0] < s) & (s < b[:, 1]) & (b[:, 2] < u) & (u < b[:, 3])):
            continue
        mask[i], t[i], p[i] = True, tf, q
        n[i] = UP if d[1] < 0 else DOWN
    return mask, t, p, n


def test_blocks_equal_brute_force():
    rng = np.random.default_rng(10)
    path = diagonal_path(length=3.0)
    g = make_ground("blocks", path, 0.9, seed=5, floor_height=0.1)
    assert isinstance(g, BlocksGround)
    assert (g.boxes[:, 4] > 0).sum() >= 5
    start, w = walking_frame(path, 0.9)
    n = 400
    s = rng.uniform(-1, 6, n)
    u = rng.uniform(-3, 3, n)
    o = np.c_[
        start[0] + s * w[0] + u * w[1], rng.uniform(0.0, 0.4, n), start[1] + s * w[1] - u * w[0]
    ]
    d = rng.normal(size=(n, 3)) * [1, 0.3, 1]
    d[:60, 1] = -np.abs(d[:60, 1])
    ref = blocks_reference(g, o, d, np.inf)
    assert assert_hits_equal(g.raycast(o, d), ref) is None
    # vertical queries: block tops inside footprints, floor elsewhere
    xz = o[:, [0, 2]]
    heights, normals, mask = g.height_at(xz)
    ref_mask, _, ref_p, _ = blocks_reference(
        g, np.c_[xz[:, 0], np.full(n, 5.0), xz[:, 1]], DOWN, np.inf
    )
    assert mask.all() and ref_mask.all()
    np.testing.assert_allclose(heights, ref_p[:, 1], atol=1e-12)
    np.testing.assert_array_equal(normals, np.tile(UP, (n, 1)))


def test_blocks_heights_and_layout():
    path = diagonal_path()
    leg = 0.8
    g = make_ground("blocks", path, leg, seed=2)
    h = g.boxes[:, 4]
    assert h.max() <= P.BLOCK_HEIGHT[1] * leg and (h[h > 0] >= P.BLOCK_HEIGHT[0] * leg).all()
    # first blocks one leg length after the start
    assert g.boxes[h > 0, 0].min() >= P.FEATURE_START * leg
    g2 = make_ground("blocks", path, leg, seed=2)
    g3 = make_ground("blocks", path, leg, seed=3)
    np.testing.assert_array_equal(g.boxes, g2.boxes)
    assert not np.array_equal(g.boxes, g3.boxes)


def test_bumps_amplitude_and_grid():
    path = diagonal_path()
    leg = 0.9
    g = make_ground("bumps", path, leg, seed=4, floor_height=1.0)
    assert isinstance(g, Heightfield)
    np.testing.assert_allclose(np.abs(g.heights - 1.0).max(), P.BUMP_AMPLITUDE * leg)
    np.testing.assert_allclose(g.cell_size, P.BUMP_CELL * leg)
    (x0, z0), (x1, z1) = g.bounds_xz
    margin = P.MARGIN * leg
    assert x0 <= path[:, 0].min() - margin + 1e-9 and x1 >= path[:, 0].max() + margin - 1e-9
    assert z0 <= path[:, 1].min() - margin + 1e-9 and z1 >= path[:, 1].max() + margin - 1e-9
    g2 = make_ground("bumps", path, leg, seed=5, floor_height=1.0)
    assert not np.array_equal(g.heights, g2.heights)


def test_load_ground_names_and_errors():
    path = diagonal_path()
    for name in GROUND_NAMES:
        g = load_ground(name, path, 0.9, floor_height=0.5)
        np.testing.assert_allclose(g.height_at(path[0])[0], 0.5, atol=1e-12)
    with pytest.raises(InputError, match="ramp"):
        load_ground("ramp", path, 0.9)
    with pytest.raises(InputError):
        make_ground("ramp", path, 0.9)
    with pytest.raises(InputError):
        make_ground("flat", path, 0.0)
    with pytest.raises(InputError):
        make_ground("flat", np.zeros((0, 2)), 1.0)


# ---------------------------------------------------------------------------- all grounds


@pytest.fixture(scope="module")
def grounds():
    return make_all_grounds(np.random.default_rng(11))


GROUND_KINDS = ["plane", "heightfield", "mesh", "stairs", "slope", "bumps", "blocks"]


@pytest.mark.parametrize("kind", GROUND_KINDS)
@pytest.mark.parametrize("shape", BATCH_SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_batched_equals_loop_dtypes_shapes(grounds, kind, shape, dtype):
    g = grounds[kind]
    rng = np.random.default_rng(12)
    o = rng.uniform(-1.5, 1.5, size=shape + (3,)).astype(dtype)
    o[..., 1] += 1.0
    d = (rng.normal(size=shape + (3,)) - [0, 1, 0]).astype(dtype)
    h = g.raycast(o, d)
    assert h.shape == shape and h.mask.dtype == bool
    assert h.distance.shape == shape and h.point.shape == shape + (3,)
    assert h.normal.shape == shape + (3,)
    for a in (h.distance, h.point, h.normal):
        assert a.dtype == dtype
    assert_no_nan(h)
    for idx in np.ndindex(*shape):
        one = g.raycast(o[idx], d[idx])
        assert one.shape == ()
        assert one.mask == h.mask[idx]
        np.testing.assert_array_equal(one.distance, h.distance[idx])
        np.testing.assert_array_equal(one.point, h.point[idx])
        np.testing.assert_array_equal(one.normal, h.normal[idx])
    heights, normals, mask = g.height_at(o[..., [0, 2]])
    assert heights.shape == shape and normals.shape == shape + (3,) and mask.shape == shape
    assert heights.dtype == dtype and normals.dtype == dtype
    assert (normals[..., 1] >= 0).all()
    for idx in np.ndindex(*shape):
        h1, n1, m1 = g.height_at(o[idx][[0, 2]])
        assert m1 == mask[idx]
        np.testing.assert_array_equal(h1, heights[idx])
        np.testing.assert_array_equal(n1, normals[idx])


@pytest.mark.parametrize("kind", GROUND_KINDS)
def test_broadcasting_origins_directions_max_dist(grounds, kind):
    g = grounds[kind]
    o = np.array([[0.1, 2.0, 0.2], [0.3, 2.0, -0.4], [-0.5, 2.0, 0.6]])
    h = g.raycast(o[:, None, :], [[0, -1, 0], [0.1, -1, 0.2]], max_dist=np.array([np.inf, 0.5]))
    assert h.shape == (3, 2)
    ref = g.raycast(o, [0.1, -1, 0.2], max_dist=0.5)
    np.testing.assert_array_equal(h.mask[:, 1], ref.mask)
    np.testing.assert_array_equal(h.point[:, 1], ref.point)


@pytest.mark.parametrize("kind", GROUND_KINDS)
def test_degenerate_rays_no_nan(grounds, kind):
    g = grounds[kind]
    o = np.array([[0.1, 0.5, 0.2]] * 6)
    d = np.array(
        [
            [0.0, 0.0, 0.0],  # zero direction
            [1.0, 0.0, 0.0],  # horizontal
            [0.0, 0.0, -1.0],
            [1e-300, 0.0, 0.0],  # tiny but non-zero
            [1e200, -1e200, 0.0],  # huge
            [0.0, 1.0, 0.0],
        ]
    )
    for md in (np.inf, 3.0, 0.0):
        h = g.raycast(o, d, md)
        assert_no_nan(h)
        assert not h.mask[0]
        assert_miss_convention(h, o, d, md)
        assert (h.distance[h.mask] <= md).all()
    # a tiny direction is a direction
    np.testing.assert_array_equal(g.raycast(o[3], d[3]).mask, g.raycast(o[3], [1, 0, 0]).mask)


@pytest.mark.parametrize("kind", GROUND_KINDS)
def test_nan_input_raises(grounds, kind):
    g = grounds[kind]
    with pytest.raises(InputError, match="origins"):
        g.raycast([np.nan, 0, 0], DOWN)
    with pytest.raises(InputError, match="directions"):
        g.raycast([0, 1, 0], [0, np.nan, 0])
    with pytest.raises(InputError, match="max_dist"):
        g.raycast([0, 1, 0], DOWN, np.nan)
    with pytest.raises(InputError, match="max_dist"):
        g.raycast([0, 1, 0], DOWN, -1.0)
    with pytest.raises(InputError, match="xz"):
        g.height_at([np.nan, 0.0])
    with pytest.raises(InputError, match="xz"):
        g.height_at([0.0, 0.0, 0.0])
    with pytest.raises(InputError):
        g.raycast(np.zeros((2, 3)), np.zeros((3, 3)))


@pytest.mark.parametrize("kind", GROUND_KINDS)
def test_empty_batch(grounds, kind):
    h = grounds[kind].raycast(np.zeros((0, 3)), DOWN)
    assert h.shape == (0,) and h.point.shape == (0, 3)
    heights, normals, mask = grounds[kind].height_at(np.zeros((0, 2)))
    assert heights.shape == (0,) and normals.shape == (0, 3)


def test_internal_height_queries_equal_height_at():
    """The pipeline's unchecked fast path gives what the public method gives, for every
    ground (those without a kernel go through ``height_at``)."""
    from ikrig.ground.base import query_heights

    rng = np.random.default_rng(5)
    xz = rng.uniform(-1.0, 4.0, size=(3, 4, 2))
    for name, g in make_all_grounds(rng).items():
        for got, want in zip(query_heights(g, xz), g.height_at(xz)):
            np.testing.assert_array_equal(got, want, err_msg=name)
