"""Benchmark of the ground ray casts (not a test).

100,000 vertical rays (the foot-placement query) and 100,000 oblique rays on

- a bumpy 20,000-triangle grid mesh (:class:`ikrig.ground.MeshGround`, our Numba grid; and
  trimesh's Embree backend and trimesh's own ray caster when installed);
- the same surface as a :class:`ikrig.ground.Heightfield` (analytic vertical queries and
  DDA ray casts).

Prints the median (and the minimum) wall time of several runs, after one warm-up call (so
Numba compilation and scene building are not counted), and checks that the backends agree.

    python benchmarks/bench_ground.py [--rays 100000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ikrig.ground import Heightfield, MeshGround, embree_available


def bumpy_grid(n: int = 100, size: float = 10.0):
    """A ``(n + 1)^2``-vertex, ``2 n^2``-triangle grid mesh and the same heights."""
    xs = np.linspace(0.0, size, n + 1)
    x, z = np.meshgrid(xs, xs)
    y = 0.3 * np.sin(1.3 * x) * np.cos(0.9 * z) + 0.1 * np.sin(3.0 * x + 2.0 * z)
    vertices = np.c_[x.ravel(), y.ravel(), z.ravel()]
    w = n + 1
    iz, ix = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    a = (iz * w + ix).ravel()
    faces = np.concatenate([np.c_[a, a + 1, a + w + 1], np.c_[a, a + w + 1, a + w]])
    return vertices, faces, y, size / n


def timeit(fn, repeat: int):
    fn()  # warm-up: compilation, caches, lazy scene building
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), float(np.min(times))


def report(name: str, result) -> None:
    med, best = result
    print(f"  {name:<44s} median {med * 1e3:8.2f} ms   (min {best * 1e3:7.2f} ms)")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rays", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args(argv)

    vertices, faces, heights, cell = bumpy_grid()
    rng = np.random.default_rng(0)
    n = args.rays
    xz = rng.uniform(0.0, 10.0, size=(n, 2))
    top = np.c_[xz[:, 0], np.full(n, 5.0), xz[:, 1]]
    down = np.broadcast_to(np.array([0.0, -1.0, 0.0]), (n, 3))
    oblique_o = np.c_[rng.uniform(0, 10, n), rng.uniform(0.5, 3.0, n), rng.uniform(0, 10, n)]
    oblique_d = rng.normal(size=(n, 3)) - [0.0, 0.5, 0.0]

    MeshGround(vertices, faces)  # the first build also loads the compiled kernels
    t = time.perf_counter()
    mesh = MeshGround(vertices, faces)
    build = time.perf_counter() - t
    hf = Heightfield(heights, (0.0, 0.0), cell)
    print(f"{len(faces)} triangles, {n} rays; {mesh!r} (built in {build * 1e3:.1f} ms)")

    print("vertical rays:")
    report("MeshGround.raycast (numba grid)", timeit(lambda: mesh.raycast(top, down), args.repeat))
    report("MeshGround.height_at (numba grid)", timeit(lambda: mesh.height_at(xz), args.repeat))
    report("Heightfield.height_at (analytic)", timeit(lambda: hf.height_at(xz), args.repeat))
    report("Heightfield.raycast (DDA)", timeit(lambda: hf.raycast(top, down), args.repeat))
    ref = mesh.raycast(top, down)
    h_hf, _, _ = hf.height_at(xz)
    assert ref.mask.all() and np.abs(ref.point[:, 1] - h_hf).max() < 1e-9

    print("oblique rays:")
    report(
        "MeshGround.raycast (numba grid)",
        timeit(lambda: mesh.raycast(oblique_o, oblique_d), args.repeat),
    )
    report(
        "Heightfield.raycast (DDA)", timeit(lambda: hf.raycast(oblique_o, oblique_d), args.repeat)
    )

    if embree_available():
        emb = MeshGround(vertices, faces, backend="embree")
        print("Embree (trimesh + embreex), with ikrig's float64 distance refinement:")
        report("vertical", timeit(lambda: emb.raycast(top, down), args.repeat))
        report("oblique", timeit(lambda: emb.raycast(oblique_o, oblique_d), args.repeat))
        report(
            "vertical, trimesh intersects_first alone",
            timeit(lambda: emb._embree.intersects_first(top, down), args.repeat),
        )
        e = emb.raycast(oblique_o, oblique_d)
        o = mesh.raycast(oblique_o, oblique_d)
        both = e.mask & o.mask
        diff = np.abs(e.distance[both] - o.distance[both]).max() if both.any() else 0.0
        print(
            f"  agreement with numba: {np.mean(e.mask == o.mask) * 100:.3f}% same hit/miss,"
            f" max distance difference {diff:.2e}"
        )
    else:
        print("Embree: not installed (pip install embreex)")

    try:
        import trimesh
        from trimesh.ray.ray_triangle import RayMeshIntersector

        tm = trimesh.Trimesh(vertices, faces, process=False)
        plain = RayMeshIntersector(tm)
        k = min(n, 20_000)  # slow: a subset, scaled up
        med, best = timeit(lambda: plain.intersects_first(top[:k], down[:k]), 3)
        report(f"trimesh alone (rtree), vertical, x{n / k:g}", (med * n / k, best * n / k))
    except Exception as exc:  # trimesh or rtree missing
        print(f"trimesh alone: skipped ({type(exc).__name__}: {exc})")


if __name__ == "__main__":
    main()
