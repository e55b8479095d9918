"""Write the stairs mesh the README's pictures stand on: ``python docs/stairs_obj.py OUT.obj``.

40 boxes along +Z (the built-in walk's path: it starts at the origin, facing +Z, feet on
y = 0), 3 m wide and reaching 0.5 m below the floor: 1 m of flat floor, 10 steps up of
0.08 m on 0.3 m treads, a landing, then 10 steps down and floor again. Each box is 8
vertices and 12 triangles, so no vertex lies near the path: the mesh is drawn only if the
pictures keep faces that overlap their view. Needs NumPy only.
"""

from __future__ import annotations

import sys

import numpy as np

TREAD, RISE, WIDTH, DEPTH = 0.3, 0.08, 3.0, 0.5


def box(lo, hi):
    """8 corners and 12 outward triangles of an axis-aligned box."""
    v = np.array(
        [[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    )
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return v, np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])


def stairs(z0: float = -1.0):
    """Vertices and faces of the 40 boxes, the first starting at ``z0``."""
    heights = [0.0] * 5 + [RISE * k for k in range(1, 11)] + [10 * RISE] * 5
    heights += [RISE * k for k in range(9, -1, -1)] + [0.0] * 10
    verts, faces = [], []
    for k, h in enumerate(heights):
        v, f = box((-WIDTH / 2, -DEPTH, z0 + k * TREAD), (WIDTH / 2, h, z0 + (k + 1) * TREAD))
        faces.append(f + len(verts) * 8)
        verts.append(v)
    return np.concatenate(verts), np.concatenate(faces)


def main(path: str) -> None:
    v, f = stairs()
    lines = [f"v {x:.4f} {y:.4f} {z:.4f}" for x, y, z in v]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in f]
    with open(path, "w") as out:
        out.write(
            "# ikrig README stairs: 40 boxes (docs/stairs_obj.py)\n" + "\n".join(lines) + "\n"
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "stairs.obj")
