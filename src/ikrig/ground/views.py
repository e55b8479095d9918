"""Grounds seen the way foot placement needs them: moved to the clip's floor
(:class:`RaisedGround`, the datum) and searched only below what a leg can reach
(:func:`heights_below`, :func:`track_level`), so a roof or an overhang above the character is
never taken for the ground.

World space, Y up, lengths in the data's own units.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .base import Hits, query_heights
from .heightfield import Heightfield
from .plane import Plane
from .procedural import BlocksGround, ProfileGround

SINGLE_VALUED: tuple[type, ...] = (Plane, Heightfield, ProfileGround, BlocksGround)
"""Grounds with one surface over any point: their vertical query is already the surface
below anything, so :func:`heights_below` needs no rays for them."""


class RaisedGround:
    """``ground`` moved up by ``dy`` (world Y, length units): the same surface, every height
    plus ``dy``. Implements the :class:`~ikrig.ground.Ground` protocol.

    Foot placement uses it for its datum: with ``dy`` the clip's recorded floor, the ground's
    ``y = 0`` meets that floor.
    """

    def __init__(self, ground: Any, dy: float) -> None:
        self.ground = ground
        self.dy = float(dy)

    def __repr__(self) -> str:
        return f"RaisedGround({self.ground!r}, dy={self.dy:g})"

    def raycast(
        self, origins: ArrayLike, directions: ArrayLike, max_dist: ArrayLike = np.inf
    ) -> Hits:
        """Nearest hit of each ray; see :meth:`ikrig.ground.Ground.raycast`."""
        lift = np.array([0.0, self.dy, 0.0])
        hits = self.ground.raycast(np.asarray(origins) - lift, directions, max_dist)
        point = (hits.point + lift).astype(hits.point.dtype, copy=False)
        return Hits(hits.mask, hits.distance, point, hits.normal)

    def height_at(self, xz: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Heights plus ``dy``; see :meth:`ikrig.ground.Ground.height_at` (misses: 0, +Y)."""
        h, n, mask = self.ground.height_at(xz)
        return np.where(mask, h + self.dy, 0.0).astype(h.dtype, copy=False), n, mask


def single_valued(ground: Any) -> bool:
    """Whether ``ground`` (raised or not) has one surface over any point
    (:data:`SINGLE_VALUED`): nothing above it, so no ceiling ever changes its answer."""
    while isinstance(ground, RaisedGround):
        ground = ground.ground
    return isinstance(ground, SINGLE_VALUED)


def heights_below(
    ground: Any, xz: np.ndarray, ceiling: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The topmost surface at or below ``ceiling`` under each position.

    Args:
        ground: any ground.
        xz: ``(..., 2)`` finite float64 world positions (made by ikrig: not re-validated for
            built-in grounds).
        ceiling: ``(...)`` world heights, broadcast against ``xz``'s batch shape, or None
            (no limit: the topmost surface, ``height_at``).

    Returns:
        float64 ``(heights (...), normals (..., 3) turned up, mask (...))``; where nothing
        lies below the ceiling the mask is False, the height 0 and the normal +Y. The
        vertical query answers wherever its topmost surface is below the ceiling (and a
        ground of :data:`SINGLE_VALUED` type everywhere); elsewhere a ray cast down from the
        ceiling finds the surface beneath it.
    """
    dy = 0.0
    while isinstance(ground, RaisedGround):  # query the ground itself, then raise its answer
        dy += ground.dy
        ground = ground.ground
    h, n, mask = query_heights(ground, xz)
    h, n = np.asarray(h, dtype=np.float64), np.asarray(n, dtype=np.float64)
    if ceiling is not None and not isinstance(ground, SINGLE_VALUED):
        h, n, mask = _below_ceiling(ground, xz, np.asarray(ceiling, dtype=np.float64) - dy,
                                    (h, n, mask))  # fmt: skip
    if dy != 0.0:
        h = h + dy
        h[~mask] = 0.0
    return h, n, mask


def _below_ceiling(ground: Any, xz: np.ndarray, ceiling: np.ndarray, top: tuple):
    """:func:`heights_below` on an unraised ground whose vertical query gave ``top =
    (heights, normals, mask)``: where that topmost surface is above ``ceiling``, a ray cast
    down from the ceiling finds the surface beneath it."""
    h, n, mask = top
    ceiling = np.broadcast_to(ceiling, h.shape)
    over = mask & (h > ceiling)
    if not over.any():
        return h, n, mask
    xz = np.asarray(xz, dtype=np.float64)[over]
    origins = np.stack([xz[:, 0], ceiling[over], xz[:, 1]], axis=-1)
    hits = ground.raycast(origins, np.array([0.0, -1.0, 0.0]))
    hit = np.asarray(hits.mask, dtype=bool)
    up = np.asarray(hits.normal, dtype=np.float64)
    up = np.where(up[:, 1:2] < 0.0, -up, up)
    h, n, mask = h.copy(), n.copy(), mask.copy()
    h[over] = np.where(hit, hits.point[:, 1], 0.0)
    n[over] = np.where(hit[:, None], up, np.array([0.0, 1.0, 0.0]))
    mask[over] = hit
    return h, n, mask


def track_level(
    ground: Any, xz: np.ndarray, reach: np.ndarray, start: float
) -> tuple[np.ndarray, float]:
    """Per-frame ceilings for :func:`heights_below`: how high a character walking along
    ``xz`` can find its ground.

    Frame by frame, the ceiling is the level of the ground found the frame before plus
    ``reach`` (how far above its ground the character's hips are); the ground found below
    that ceiling under ``xz[f]`` becomes the new level (unchanged where nothing is found).
    A roof above the hips is never reached; a step up of less than ``reach`` is.

    Args:
        ground: any ground.
        xz: ``(F, 2)`` world positions of the character (its pelvis) per frame.
        reach: ``(F,)`` the hips' height above the ground per frame (length units, > 0).
        start: the ground level (world Y) the character starts on.

    Returns:
        ``(ceilings (F,), level)``: the ceilings (world Y; ``+inf`` everywhere for a
        :data:`SINGLE_VALUED` ground, which has nothing above its surface) and the level
        after the last frame (to carry on from, live).
    """
    frames = len(xz)
    if single_valued(ground):
        return np.full(frames, np.inf), float(start)
    inner, dy = (ground.ground, ground.dy) if isinstance(ground, RaisedGround) else (ground, 0.0)
    ceilings = np.empty(frames)
    level = float(start) - dy
    top, _, found = query_heights(inner, np.asarray(xz, dtype=np.float64))  # all frames at once
    for f in range(frames):
        ceilings[f] = level + float(reach[f])
        if found[f] and top[f] <= ceilings[f]:  # the topmost surface is within reach
            level = float(top[f])
        elif found[f]:  # something above the hips: look below them
            h, _, hit = heights_below(inner, xz[f : f + 1], ceilings[f : f + 1])
            if hit[0]:
                level = float(h[0])
    return ceilings + dy, level + dy
