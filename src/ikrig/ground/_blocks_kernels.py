"""Blocks-ground kernels (private): a floor plane with boxes standing on it.

The boxes live in a slot grid of the walking frame ``s = (xz - start) . w``,
``u = (xz - start) . (w_z, -w_x)``: ``boxes (S, 5)`` holds per slot ``s0, s1, u0, u1,
height`` (height 0: empty slot), slot ``ju * n_s + js``. Ray casts work in the frame
``(s, y - floor, u)``. See :mod:`ikrig.ground._ray` for the kernels' contract.

The kernels take ``boxes`` and the ground's :func:`blocks_settings` (cheap to pass from
Python) and build their :class:`BlocksShape` from them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit.setup import njit
from ._grid_walk import Grid, grid_span, grid_walk, outside, t_exit, walk_next
from ._ray import BARY_EPS, FRAME_FIELDS, PAD, Hit, RayOut, Surface, cast_rays, no_hit, query_points


class SlotGrid(NamedTuple):
    """The slot grid of a blocks ground, in the walking frame."""

    s_lo: float  # (s, u) corner of slot (0, 0)
    u_lo: float
    size_s: float  # slot sizes, > 0
    size_u: float
    n_s: int  # slot counts
    n_u: int


class BlocksShape(NamedTuple):
    """A blocks ground as its kernels take it."""

    boxes: np.ndarray  # (S, 5) module docstring
    slots: SlotGrid
    max_height: float  # the highest box, >= 0
    start: tuple[float, float]  # world (x, z) of the frame's origin
    w: tuple[float, float]  # unit (x, z) of the s axis
    floor: float  # world Y of the floor


BLOCKS_DTYPE = np.dtype(
    FRAME_FIELDS
    + [(f, np.int64 if f in ("n_s", "n_u") else np.float64) for f in SlotGrid._fields]
    + [("max_height", np.float64)]
)


def blocks_settings(slots: SlotGrid, max_height: float, start, w, floor: float) -> np.ndarray:
    """``(1,)`` :data:`BLOCKS_DTYPE`: a blocks ground's slot grid, highest box, frame
    (``start``, ``w``: world ``(x, z)``) and floor as a kernel argument."""
    row = (start[0], start[1], w[0], w[1], floor, *slots, max_height)
    return np.array([row], dtype=BLOCKS_DTYPE)


@njit(cache=True)
def _blocks_of(boxes, settings):
    """The :class:`BlocksShape` of the kernels' arguments."""
    r = settings[0]
    slots = SlotGrid(r.s_lo, r.u_lo, r.size_s, r.size_u, r.n_s, r.n_u)
    return BlocksShape(boxes, slots, r.max_height, (r.start_x, r.start_z), (r.w_x, r.w_z), r.floor)


@njit(cache=True)
def _in_box(boxes, slot, s, u):
    """True if ``(s, u)`` lies strictly inside the footprint of the box of ``slot``."""
    return (
        boxes[slot, 4] > 0.0
        and boxes[slot, 0] < s < boxes[slot, 1]
        and boxes[slot, 2] < u < boxes[slot, 3]
    )


@njit(cache=True)
def _slot_of(s, u, g):
    """Slot index of ``(s, u)`` in the :class:`SlotGrid` ``g``, or -1 outside it."""
    gs = (s - g.s_lo) / g.size_s
    gu = (u - g.u_lo) / g.size_u
    if not (gs >= 0.0 and gu >= 0.0 and gs < g.n_s and gu < g.n_u):
        return -1
    return int(gu) * g.n_s + int(gs)


@njit(inline="always")
def _blocks_height(b, xz):
    """The box top inside a footprint (edges included), the floor elsewhere; normal +Y."""
    rx = xz[0] - b.start[0]
    rz = xz[1] - b.start[1]
    s = rx * b.w[0] + rz * b.w[1]
    u = rx * b.w[1] - rz * b.w[0]
    h = 0.0
    slot = _slot_of(s, u, b.slots)
    if slot >= 0:
        if b.boxes[slot, 0] <= s <= b.boxes[slot, 1] and b.boxes[slot, 2] <= u <= b.boxes[slot, 3]:
            h = b.boxes[slot, 4]
    return Surface(b.floor + h, (0.0, 1.0, 0.0), True)


@njit(cache=True)
def _box_hit(boxes, slot, origin, direction, tmax):
    """Nearest crossing of the frame ray ``origin + t direction`` (``(s, y, u)``) with the
    top and the four sides of a slot's box: a :class:`Hit` with an outward face normal in
    the frame."""
    s0, y0, u0 = origin
    a, b, c = direction
    bs0 = boxes[slot, 0]
    bs1 = boxes[slot, 1]
    bu0 = boxes[slot, 2]
    bu1 = boxes[slot, 3]
    h = boxes[slot, 4]
    best = -1.0
    rs = 0.0
    ru = 0.0
    ry = 0.0
    if h <= 0.0:
        return Hit(best, (rs, ry, ru))
    eps_s = BARY_EPS * (bs1 - bs0)
    eps_u = BARY_EPS * (bu1 - bu0)
    eps_y = BARY_EPS * h
    if b != 0.0:  # top
        t = (h - y0) / b
        if 0.0 <= t <= tmax:
            s = s0 + a * t
            u = u0 + c * t
            if bs0 - eps_s <= s <= bs1 + eps_s and bu0 - eps_u <= u <= bu1 + eps_u:
                best = t
                rs, ru, ry = 0.0, 0.0, 1.0
    if a != 0.0:  # faces s = bs0, s = bs1
        for side in range(2):
            plane = bs0 if side == 0 else bs1
            t = (plane - s0) / a
            if 0.0 <= t <= tmax and (best < 0.0 or t < best):
                u = u0 + c * t
                y = y0 + b * t
                if bu0 - eps_u <= u <= bu1 + eps_u and -eps_y <= y <= h + eps_y:
                    best = t
                    rs, ru, ry = (-1.0 if side == 0 else 1.0), 0.0, 0.0
    if c != 0.0:  # faces u = bu0, u = bu1
        for side in range(2):
            plane = bu0 if side == 0 else bu1
            t = (plane - u0) / c
            if 0.0 <= t <= tmax and (best < 0.0 or t < best):
                s = s0 + a * t
                y = y0 + b * t
                if bs0 - eps_s <= s <= bs1 + eps_s and -eps_y <= y <= h + eps_y:
                    best = t
                    rs, ru, ry = 0.0, (-1.0 if side == 0 else 1.0), 0.0
    return Hit(best, (rs, ry, ru))


@njit(cache=True)
def _frame_grid(b):
    """The slot grid as a :class:`Grid` of the frame ``(s, y - floor, u)``."""
    g = b.slots
    pad = PAD * min(g.size_s, g.size_u)
    return Grid(g.s_lo, g.u_lo, g.size_s, g.size_u, g.n_s, g.n_u, 0.0, b.max_height, pad)


@njit(inline="always")
def _blocks_hit(b, ray):
    """The floor outside the b.boxes' footprints, then the b.boxes of the slots the ray
    crosses (2D DDA); the first slot with a hit holds the nearest box hit."""
    w = b.w
    ox, oy, oz = ray.origin
    dx, dy, dz = ray.direction
    tmax = ray.max_dist
    rx = ox - b.start[0]
    rz = oz - b.start[1]
    s0 = rx * w[0] + rz * w[1]
    u0 = rx * w[1] - rz * w[0]
    y0 = oy - b.floor
    a = dx * w[0] + dz * w[1]
    c = dx * w[1] - dz * w[0]
    bb = dy
    best = Hit(-1.0, (0.0, 0.0, 0.0))  # in the frame (s, y, u)
    if bb != 0.0:
        t = -y0 / bb
        if 0.0 <= t <= tmax:
            s = s0 + a * t
            u = u0 + c * t
            slot = _slot_of(s, u, b.slots)
            if slot < 0 or not _in_box(b.boxes, slot, s, u):
                best = Hit(t, (0.0, 1.0, 0.0))
    lim = tmax if best.t < 0.0 else best.t
    g = _frame_grid(b)
    origin = (s0, y0, u0)
    direction = (a, bb, c)
    t0, t1 = grid_span(g, origin, direction, lim)
    if t0 <= t1:
        walk = grid_walk(g, origin, direction, t0)
        for _ in range(g.nx + g.nz + 2):
            t_out = t_exit(walk, t1)
            hit = _box_hit(b.boxes, walk.iz * g.nx + walk.ix, origin, direction, lim)
            if hit.t >= 0.0:
                best = hit
                break
            if t_out >= t1:
                break
            walk = walk_next(walk)
            if outside(walk, g):
                break
    hit = no_hit()
    if best.t >= 0.0:
        # back from the walking frame: s axis = (w_x, w_z), u axis = (w_z, -w_x)
        ns_, ny_, nu_ = best.normal
        hit = Hit(best.t, (ns_ * w[0] + nu_ * w[1], ny_, ns_ * w[1] - nu_ * w[0]))
    return hit


@njit(cache=True)
def blocks_height_at(boxes, settings, xz, out_h, out_n, out_mask):
    """Vertical queries on a blocks ground; never misses."""
    query_points(_blocks_height, _blocks_of(boxes, settings), xz, out_h, out_n, out_mask)


@njit(cache=True)
def blocks_raycast(boxes, settings, origins, dirs, tmaxs, mask, dist, point, normal):
    """Ray casts on a blocks ground: the floor (holed under the boxes) and the boxes' tops
    and sides."""
    out = RayOut(mask, dist, point, normal)
    cast_rays(_blocks_hit, _blocks_of(boxes, settings), origins, dirs, tmaxs, out)
