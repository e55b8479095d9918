"""Ground for foot placement: planes, heightfields, triangle meshes and built-in terrains.

Every ground implements the :class:`Ground` protocol: batched ray casts
(:meth:`Ground.raycast` -> :class:`Hits`) and vertical queries (:meth:`Ground.height_at`).
World space, Y up, lengths in the data's own units. Misses are reported by a mask, never by
an exception or NaN; structural problems (wrong shapes, NaN input) raise
:class:`ikrig.errors.InputError`.

- :class:`Plane`: an infinite plane (analytic).
- :class:`Heightfield`: heights on a regular XZ grid, two triangles per cell (exact).
- :class:`MeshGround`: any triangle mesh, or a mesh file via :meth:`MeshGround.load`
  (the ``[mesh]`` extra, trimesh).
- :func:`make_ground` / :func:`load_ground`: the built-in grounds :data:`GROUND_NAMES`
  laid out along a clip's root path (:mod:`ikrig.ground.procedural`), or a mesh file.

Example:
    >>> import numpy as np
    >>> ground = make_ground("stairs", np.array([[0.0, 0.0], [0.0, 5.0]]), leg_length=1.0)
    >>> heights, normals, mask = ground.height_at(np.array([[0.0, 1.3], [0.0, 1.9]]))
    >>> heights.round(6).tolist()
    [0.15, 0.3]
"""

from .base import Ground, Hits
from .heightfield import Heightfield
from .mesh import MeshGround, embree_available
from .plane import Plane
from .procedural import (
    GROUND_NAMES,
    BlocksGround,
    ProfileGround,
    ground_file,
    load_ground,
    make_ground,
    walking_frame,
)

__all__ = [
    "GROUND_NAMES",
    "BlocksGround",
    "Ground",
    "Heightfield",
    "Hits",
    "MeshGround",
    "Plane",
    "ProfileGround",
    "embree_available",
    "ground_file",
    "load_ground",
    "make_ground",
    "walking_frame",
]
