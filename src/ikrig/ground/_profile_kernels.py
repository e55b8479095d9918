"""Profile-ground kernels (private): ``y = floor + f(s)``, ``s = (xz - start) . w``.

``f`` is the polyline through the knots ``(ks[k], ky[k])``: ``ks (K,)`` non-decreasing (equal
neighbours form a vertical face), constant beyond the end knots. See
:mod:`ikrig.ground._ray` for the kernels' contract.

The kernels take ``ks``, ``ky`` and the frame's :func:`profile_settings` (cheap to pass
from Python) and build their :class:`ProfileShape` from them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit.setup import njit
from ._ray import (
    BARY_EPS,
    FRAME_FIELDS,
    PARALLEL_EPS,
    Hit,
    RayOut,
    Surface,
    cast_rays,
    no_hit,
    query_points,
)

PROFILE_DTYPE = np.dtype(FRAME_FIELDS)


class ProfileShape(NamedTuple):
    """A profile ground as its kernels take it."""

    ks: np.ndarray  # (K,) knot positions along w
    ky: np.ndarray  # (K,) knot heights above the floor
    start: tuple[float, float]  # world (x, z) where s = 0
    w: tuple[float, float]  # unit horizontal direction (x, z) of s
    floor: float  # world Y added to every height


class ProfileRays(NamedTuple):
    """A profile ground as its ray casts take it: :class:`ProfileShape` and two lengths."""

    ks: np.ndarray
    ky: np.ndarray
    start: tuple[float, float]
    w: tuple[float, float]
    floor: float
    tol: float  # absolute slack (length units) at the segments' ends
    big: float  # the end knots extend by horizontal segments this long


def profile_settings(start, w, floor: float) -> np.ndarray:
    """``(1,)`` :data:`PROFILE_DTYPE`: the frame (``start``, ``w``: world ``(x, z)``) and
    floor of a profile ground as a kernel argument."""
    return np.array([(start[0], start[1], w[0], w[1], floor)], dtype=PROFILE_DTYPE)


@njit(cache=True)
def _profile_of(ks, ky, settings):
    """The :class:`ProfileShape` of the kernels' arguments."""
    r = settings[0]
    return ProfileShape(ks, ky, (r.start_x, r.start_z), (r.w_x, r.w_z), r.floor)


@njit(cache=True)
def seg_hit(origin, direction, p, q, tol, tmax):
    """Distance at which the 2D ray ``origin + t direction`` (``(s, y)`` plane) crosses
    segment P-Q, or -1.

    ``tol``: absolute slack (in length units) at the segment's ends.
    """
    s0, y0 = origin
    a, b = direction
    ps, py = p
    qs, qy = q
    es = qs - ps
    ey = qy - py
    elen = math.sqrt(es * es + ey * ey)
    det = es * b - a * ey
    if not (elen > 0.0) or abs(det) <= PARALLEL_EPS * elen:
        return -1.0
    ws = ps - s0
    wy = py - y0
    t = (es * wy - ey * ws) / det
    u = (a * wy - b * ws) / det
    slack = tol / elen
    if u < -slack or u > 1.0 + slack or t < 0.0 or t > tmax:
        return -1.0
    return t


@njit(cache=True)
def _search(ks, s, right):
    """``np.searchsorted(ks, s, side="right" if right else "left")`` for a sorted float
    array and a scalar (NaN sorts last), as a plain bisection: NumPy's generic version
    takes seconds to compile."""
    lo, hi = 0, ks.shape[0]
    if s != s:
        return hi
    while lo < hi:
        mid = (lo + hi) // 2
        if ks[mid] < s or (right and ks[mid] == s):
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(inline="always")
def _profile_height(p, xz):
    """Height and upward normal at ``xz``. At a vertical face the top height is returned;
    the normal is that of the segment to the right (+s side). Never misses."""
    w = p.w
    k = p.ks.shape[0]
    s = (xz[0] - p.start[0]) * w[0] + (xz[1] - p.start[1]) * w[1]
    j = _search(p.ks, s, True) - 1  # last knot with p.ks <= s
    slope = 0.0
    if j < 0:
        h = p.ky[0]
    elif p.ks[j] == s:
        h = p.ky[j]
        m = j - 1
        while m >= 0 and p.ks[m] == s:
            h = max(h, p.ky[m])
            m -= 1
        if j + 1 < k and p.ks[j + 1] > s:
            slope = (p.ky[j + 1] - p.ky[j]) / (p.ks[j + 1] - p.ks[j])
    elif j >= k - 1:
        h = p.ky[k - 1]
    else:
        slope = (p.ky[j + 1] - p.ky[j]) / (p.ks[j + 1] - p.ks[j])
        h = p.ky[j] + (s - p.ks[j]) * slope
    n = math.sqrt(slope * slope + 1.0)
    normal = (-slope * w[0] / n + 0.0, 1.0 / n, -slope * w[1] / n + 0.0)
    return Surface(p.floor + h, normal, True)


@njit(cache=True)
def _segment(p, j):
    """Segment ``j`` of the polyline, ``(p, q)``; 0 and K are the ends' horizontal
    extensions."""
    k = p.ks.shape[0]
    if j == 0:
        return (p.ks[0] - p.big, p.ky[0]), (p.ks[0], p.ky[0])
    if j == k:
        return (p.ks[k - 1], p.ky[k - 1]), (p.ks[k - 1] + p.big, p.ky[k - 1])
    return (p.ks[j - 1], p.ky[j - 1]), (p.ks[j], p.ky[j])


@njit(inline="always")
def _profile_hit(p, ray):
    """Project the ray on the vertical plane through ``w``: ``s(t) = s0 + a t``,
    ``y(t) = y0 + b t`` with ``a = d . w``, ``b = d_y``; ``t`` stays the 3D distance. The
    segments are walked in the order the ray's ``s`` meets them, so the first hit is the
    nearest."""
    w = p.w
    tol = p.tol
    k = p.ks.shape[0]
    ox, oy, oz = ray.origin
    dx, dy, dz = ray.direction
    s0 = (ox - p.start[0]) * w[0] + (oz - p.start[1]) * w[1]
    y0 = oy - p.floor
    a = dx * w[0] + dz * w[1]
    b = dy
    # Walk the segments in the order the ray's s meets them; stop once a segment lies
    # beyond the s the ray can still reach (at max_dist, or at the best hit so far).
    if a >= 0.0:
        j = _search(p.ks, s0 - tol, False)
        stop = k + 1
        step = 1
    else:
        j = _search(p.ks, s0 + tol, True)
        stop = -1
        step = -1
    lim = ray.max_dist
    hit_t = -1.0
    hs = 0.0
    hy = 0.0
    while j != stop:
        (ps, py), (qs, qy) = _segment(p, j)
        if math.isinf(lim):
            reach = math.inf if a != 0.0 else 0.0
        else:
            reach = abs(a) * lim
        if step > 0 and ps > s0 + reach + tol:
            break
        if step < 0 and qs < s0 - reach - tol:
            break
        t = seg_hit((s0, y0), (a, b), (ps, py), (qs, qy), tol, lim)
        if t >= 0.0 and (hit_t < 0.0 or t < hit_t):
            hit_t = t
            lim = t
            hs = -(qy - py)
            hy = qs - ps
        j += step
    hit = no_hit()
    if hit_t >= 0.0:
        hit = Hit(hit_t, (hs * w[0], hy, hs * w[1]))
    return hit


@njit(cache=True)
def _reach(p):
    """The :class:`ProfileRays` of a profile ground."""
    ks = p.ks
    ky = p.ky
    k = ks.shape[0]
    span = ks[k - 1] - ks[0]
    yspan = np.max(ky) - np.min(ky)
    tol = BARY_EPS * (span + yspan)
    if not (tol > 0.0):
        tol = 1e-12
    big = 1e9 * (span + abs(ks[0]) + abs(ks[k - 1]) + 1.0)
    return ProfileRays(p.ks, p.ky, p.start, p.w, p.floor, tol, big)


@njit(cache=True)
def profile_height_at(ks, ky, settings, xz, out_h, out_n, out_mask):
    """Vertical queries on a profile ground."""
    query_points(_profile_height, _profile_of(ks, ky, settings), xz, out_h, out_n, out_mask)


@njit(cache=True)
def profile_raycast(ks, ky, settings, origins, dirs, tmaxs, mask, dist, point, normal):
    """Ray casts on a profile ground; the end knots are extended by horizontal segments far
    beyond the profile."""
    out = RayOut(mask, dist, point, normal)
    cast_rays(_profile_hit, _reach(_profile_of(ks, ky, settings)), origins, dirs, tmaxs, out)
