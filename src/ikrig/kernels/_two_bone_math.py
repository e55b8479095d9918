"""Per-element math of the two-bone solve: small scalar helpers and the shared geometry
(steps 1-7 of :mod:`ikrig.kernels.two_bone`; the rotations of step 8 are there too).

Points are 3-tuples ``(x, y, z)`` in world space, quaternions 4-tuples xyzw. Every
constant comes from ``k``, a :class:`~ikrig.kernels.two_bone.TwoBoneConstants` of the
data's dtype (see the performance notes of :mod:`ikrig.kernels.two_bone`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit.setup import njit

# 'contract' (FMA) and 'arcp' (x / y as x * (1 / y)) only: no 'nnan'/'ninf', which would
# let LLVM delete the NaN test.
FASTMATH = {"contract", "arcp"}
# Small helpers are ordinary functions: LLVM inlines them. The big per-element bodies are
# inlined by Numba ("always") so that the loops calling them can vectorise; Numba-level
# inlining is slow to compile, so only those use it.
SMALL = {"error_model": "numpy", "fastmath": FASTMATH}
INLINE = {"inline": "always", "error_model": "numpy", "fastmath": FASTMATH}


class Reach(NamedTuple):
    """Result of :func:`reach_and_stretch` (lengths in the data's units)."""

    reach: float  # root -> new end distance
    stretch: float  # factor applied to both bones
    l1s: float  # stretched root -> mid length
    l2s: float  # stretched mid -> end length


class Geometry(NamedTuple):
    """Result of :func:`geometry`: what the kernels need (LLVM drops what one does not use).

    Flags are ints, not bools (see the note on aliases in :mod:`ikrig.kernels.two_bone`).
    Vectors are 3-tuples in world space, relative to the root.
    """

    chk: float  # NaN iff an input is NaN or infinite (or a squared length overflows)
    ok_chain: int  # 0 for a degenerate chain (shorter bone below eps times the longer)
    ok_fast: int  # 1: lengths in the safe range and no fallback needed
    l1: float  # |mid - root|
    l2: float  # |end - mid|
    length: float  # l1 + l2
    stretch: float
    l1s: float
    l2s: float
    reach: float  # root -> new end distance
    x: float  # new mid's offset along the aim axis
    hsq: float  # new mid's squared height off the aim axis
    aim: tuple  # unit aim axis
    bend: tuple  # bend direction, perpendicular to aim, not normalised
    bend_sq: float  # its squared length
    thigh: tuple  # mid - root
    shin: tuple  # end - mid
    to_target: tuple  # target - root
    normal: tuple  # thigh x shin


class FastGeometry(NamedTuple):
    """Result of :func:`fast_geometry`: the common case of :class:`Geometry`, without the
    fallbacks. Vectors are 3-tuples in world space, relative to the root."""

    ok: int  # 1: no fallback needed (and, if asked, the lengths in the safe range)
    l1: float  # |mid - root|
    l2: float  # |end - mid|
    length: float  # l1 + l2
    d: float  # |target - root|
    stretch: float
    l1s: float
    l2s: float
    reach: float  # root -> new end distance
    x: float  # new mid's offset along the aim axis
    hsq: float  # new mid's squared height off the aim axis
    aim: tuple  # unit aim axis (root -> target)
    bend: tuple  # the pole's offset perpendicular to aim, not normalised
    bend_sq: float  # its squared length
    thigh: tuple  # mid - root
    shin: tuple  # end - mid


@njit(**SMALL)
def sel(c, a, b):
    """``a if c else b`` (LLVM turns it into a vector blend)."""
    return a if c else b


@njit(**SMALL)
def sqrt_abs(x):
    """Square root of a value that is >= 0 (or NaN).

    ``abs`` tells LLVM the argument is not negative, so it emits the sqrt instruction
    instead of a ``sqrtf`` library call that may set ``errno`` and blocks vectorisation.
    """
    return np.sqrt(abs(x))


@njit(**SMALL)
def reach_and_stretch(d, l1, l2, L, k, full):
    """Reach distance, stretch factor and stretched bones for a target at ``d`` (steps 2-4).

    ``full`` (a compile-time constant) enables soft IK and stretch. Returns a :class:`Reach`.
    """
    zero, one, three = k.zero, k.one, k.three
    if full:
        da = L * k.soften
        ds = L - da
        soft_on = (d > da) & (ds > zero) & (d > abs(l1 - l2))
        # ds * 3^4 / (alpha + 3)^4 with alpha = (d - da) / ds, using one division
        q = (three * ds) / sel(soft_on, d - da + three * ds, one)
        q2 = q * q
        dsoft = sel(soft_on, L - ds * (q2 * q2), sel(d < L, d, L))
        s = d / sel(dsoft > zero, dsoft, one)
        s = sel(s > one, s, one)
        s = sel(s < k.max_stretch, s, k.max_stretch)
        reach = dsoft * s
    else:
        s = one
        reach = d
    l1s = l1 * s
    l2s = l2 * s
    lo = abs(l1s - l2s)
    hi = l1s + l2s  # the same sum as in law_of_cosines, so a clamped reach gives h = 0
    reach = sel(reach > lo, reach, lo)
    reach = sel(reach < hi, reach, hi)
    return Reach(reach, s, l1s, l2s)


@njit(**SMALL)
def law_of_cosines(reach, l1s, l2s, k):
    """``(x, h^2)``: mid offset along the aim axis and squared height (``reach > 0``).

    Uses ``l1 -+ x = (L -+ ...)`` factorised forms, which are exact at full extension and
    full fold (``x = (reach^2 + l1^2 - l2^2) / (2 reach)`` leaves ``h ~ sqrt(eps) * l1``
    there, a visible kink in float32).
    """
    inv2r = k.half / reach
    # the bones' difference first: (reach + l2) - l1 rounds reach + l2 to l2's precision,
    # which for a target near the root with equal bones is most of reach (float32: 1e-4)
    lmx = (l1s + l2s - reach) * (reach + (l2s - l1s)) * inv2r  # l1 - x
    lpx = (reach + (l1s - l2s)) * (reach + l1s + l2s) * inv2r  # l1 + x
    x = l1s - lmx
    x = sel(x < l1s, x, l1s)
    x = sel(x > -l1s, x, -l1s)
    hsq = lmx * lpx
    return x, sel(hsq > k.zero, hsq, k.zero)


@njit(**INLINE)
def geometry(p, k, full):
    """The shared per-element solve (steps 1-7 without twist) of the points ``p`` (a
    :class:`~ikrig.kernels.two_bone.TwoBonePoints`) with the constants ``k``.

    ``full`` (a compile-time constant at every call site) enables softening and stretch.
    Returns a :class:`Geometry`; its ``ok_fast`` is 1 when the lengths are in the dtype's
    safe range (``k.lo``, ``k.hi``: see ``RANGE``) and no fallback was needed (the cases
    the solver's fast positions-only pass leaves to a second pass).
    """
    zero, one, eps = k.zero, k.one, k.eps
    rx, ry, rz = p.root
    mx, my, mz = p.mid
    ex, ey, ez = p.end
    tx, ty, tz = p.target
    px, py, pz = p.pole
    bx, by, bz = mx - rx, my - ry, mz - rz
    sx, sy, sz = ex - mx, ey - my, ez - mz
    dx, dy, dz = tx - rx, ty - ry, tz - rz
    qx, qy, qz = px - rx, py - ry, pz - rz
    l1sq = bx * bx + by * by + bz * bz
    l2sq = sx * sx + sy * sy + sz * sz
    dsq = dx * dx + dy * dy + dz * dz
    psq = qx * qx + qy * qy + qz * qz
    chk = (l1sq + l2sq + dsq + psq) * zero  # NaN iff an input is NaN/inf
    l1 = np.sqrt(l1sq)
    l2 = np.sqrt(l2sq)
    L = l1 + l2
    Lsq = L * L
    eps2 = eps * eps
    lmin = sel(l1 < l2, l1, l2)
    lmax = sel(l1 < l2, l2, l1)
    ok_chain = sel(lmin > eps * lmax, 1, 0)  # an int, not a bool: see the note on aliases
    hi2 = k.hi * k.hi
    in_rng = (lmin >= k.lo) & (lmax <= k.hi) & (dsq <= hi2) & (psq <= hi2)

    # Aim axis: root->target, else root->end, else root->mid, else +X.
    erx, ery, erz = bx + sx, by + sy, bz + sz
    ersq = erx * erx + ery * ery + erz * erz
    thr = eps2 * Lsq
    ok_d = dsq > thr
    ok_e = ersq > thr
    ok_m = l1sq > thr
    vx = sel(ok_d, dx, sel(ok_e, erx, sel(ok_m, bx, one)))
    vy = sel(ok_d, dy, sel(ok_e, ery, sel(ok_m, by, zero)))
    vz = sel(ok_d, dz, sel(ok_e, erz, sel(ok_m, bz, zero)))
    vsq = sel(ok_d, dsq, sel(ok_e, ersq, sel(ok_m, l1sq, one)))
    inv = one / sqrt_abs(vsq)
    ax, ay, az = vx * inv, vy * inv, vz * inv
    d = sel(ok_d, dsq * inv, zero)  # a target closer than eps * L counts as at the root

    reach, s, l1s, l2s = reach_and_stretch(d, l1, l2, L, k, full)

    # Bend direction c (unnormalised), perpendicular to a.
    pa = qx * ax + qy * ay + qz * az
    c1x, c1y, c1z = qx - ax * pa, qy - ay * pa, qz - az * pa
    c1sq = c1x * c1x + c1y * c1y + c1z * c1z
    ok1 = c1sq > eps2 * (psq + Lsq)
    ma = bx * ax + by * ay + bz * az
    c2x, c2y, c2z = bx - ax * ma, by - ay * ma, bz - az * ma
    c2sq = c2x * c2x + c2y * c2y + c2z * c2z
    ok2 = c2sq > eps2 * (l1sq + Lsq)
    nx, ny, nz = by * sz - bz * sy, bz * sx - bx * sz, bx * sy - by * sx
    c3x, c3y, c3z = ay * nz - az * ny, az * nx - ax * nz, ax * ny - ay * nx
    c3sq = c3x * c3x + c3y * c3y + c3z * c3z
    ok3 = c3sq > eps2 * l1sq * l2sq
    use_x = abs(ax) < k.perp  # a x (+X) is long enough, else use a x (+Y)
    c4x = sel(use_x, zero, -az)
    c4y = sel(use_x, az, zero)
    c4z = sel(use_x, -ay, ax)
    c4sq = c4x * c4x + c4y * c4y + c4z * c4z
    cx = sel(ok1, c1x, sel(ok2, c2x, sel(ok3, c3x, c4x)))
    cy = sel(ok1, c1y, sel(ok2, c2y, sel(ok3, c3y, c4y)))
    cz = sel(ok1, c1z, sel(ok2, c2z, sel(ok3, c3z, c4z)))
    csq = sel(ok1, c1sq, sel(ok2, c2sq, sel(ok3, c3sq, c4sq)))

    # Law of cosines: x along a, h along the bend direction.
    # for a zero reach (l1 == l2, target at the root) keep the mid's offset along a
    ok_r = reach > eps * L
    x, hsq = law_of_cosines(sel(ok_r, reach, one), l1s, l2s, k)
    xf = ma * s
    xf = sel(xf < l1s, xf, l1s)
    xf = sel(xf > -l1s, xf, -l1s)
    x = sel(ok_r, x, xf)
    hsq = sel(ok_r, hsq, (l1s - xf) * (l1s + xf))
    hsq = sel(hsq > zero, hsq, zero)
    ok_fast = sel(in_rng & (ok_chain != 0) & ok_d & ok1 & ok_r, 1, 0)
    return Geometry(
        chk, ok_chain, ok_fast, l1, l2, L, s, l1s, l2s, reach, x, hsq,
        (ax, ay, az), (cx, cy, cz), csq, (bx, by, bz), (sx, sy, sz), (dx, dy, dz),
        (nx, ny, nz),
    )  # fmt: skip


@njit(**INLINE)
def fast_geometry(p, k, full, rng):
    """Steps 1-7 of the common case, without the fallbacks of :func:`geometry` (half its
    work): the aim axis is root->target and the bend direction the pole's.

    ``full`` (compile-time) enables soft IK and stretch; ``rng`` (compile-time): ``ok``
    also requires the lengths in the safe range ``[k.lo, k.hi]`` (float32 data). Returns
    a :class:`FastGeometry`, whose values are meaningful only where ``ok`` is 1: no
    fallback needed (the chain is not degenerate, the target is not at the root, the pole
    is off the aim line) and every input finite (a NaN/inf input makes a test below
    false). Callers re-solve the other elements with :func:`geometry`.
    """
    one, eps = k.one, k.eps
    rx, ry, rz = p.root
    mx, my, mz = p.mid
    ex, ey, ez = p.end
    tx, ty, tz = p.target
    px, py, pz = p.pole
    bx, by, bz = mx - rx, my - ry, mz - rz
    sx, sy, sz = ex - mx, ey - my, ez - mz
    dx, dy, dz = tx - rx, ty - ry, tz - rz
    qx, qy, qz = px - rx, py - ry, pz - rz
    l1sq = bx * bx + by * by + bz * bz
    l2sq = sx * sx + sy * sy + sz * sz
    dsq = dx * dx + dy * dy + dz * dz
    psq = qx * qx + qy * qy + qz * qz
    l1 = np.sqrt(l1sq)
    l2 = np.sqrt(l2sq)
    L = l1 + l2
    lmin = sel(l1 < l2, l1, l2)
    lmax = sel(l1 < l2, l2, l1)
    inv = one / np.sqrt(dsq)
    ax, ay, az = dx * inv, dy * inv, dz * inv
    d = dsq * inv
    reach, s, l1s, l2s = reach_and_stretch(d, l1, l2, L, k, full)
    pa = qx * ax + qy * ay + qz * az
    cx, cy, cz = qx - ax * pa, qy - ay * pa, qz - az * pa
    csq = cx * cx + cy * cy + cz * cz
    x, hsq = law_of_cosines(reach, l1s, l2s, k)
    eps_l = eps * L
    ok = (lmin > eps * lmax) & (d > eps_l) & (csq > (eps * eps) * (psq + L * L))
    if rng:
        hi2 = k.hi * k.hi
        ok = ok & (lmin >= k.lo) & (lmax <= k.hi) & (dsq <= hi2) & (psq <= hi2)
    if full:
        ok = ok & (reach > eps_l)  # implied by d > eps_l without soft IK
    return FastGeometry(
        sel(ok, 1, 0), l1, l2, L, d, s, l1s, l2s, reach, x, hsq, (ax, ay, az),
        (cx, cy, cz), csq, (bx, by, bz), (sx, sy, sz),
    )  # fmt: skip


@njit(**SMALL)
def old_bend_normal(n, b1, g2, l12, k):
    """The chain's old unit bend normal: ``n = thigh x shin`` normalised; for a straight
    chain (``|n|`` below ``eps * l12``, ``l12 = l1 l2``) the new normal ``g2`` projected
    off the unit thigh ``b1``, else a fixed perpendicular of ``b1`` (``b1 x X``, or
    ``b1 x Y`` when ``b1`` is near X)."""
    zero, one, eps = k.zero, k.one, k.eps
    nx, ny, nz = n
    b1x, b1y, b1z = b1
    g2x, g2y, g2z = g2
    ok_n = nx * nx + ny * ny + nz * nz > eps * eps * l12 * l12
    pg = g2x * b1x + g2y * b1y + g2z * b1z
    p1x, p1y, p1z = g2x - b1x * pg, g2y - b1y * pg, g2z - b1z * pg
    ok_p = p1x * p1x + p1y * p1y + p1z * p1z > eps * eps
    use_x = abs(b1x) < k.perp
    fx = sel(ok_n, nx, sel(ok_p, p1x, sel(use_x, zero, -b1z)))
    fy = sel(ok_n, ny, sel(ok_p, p1y, sel(use_x, b1z, zero)))
    fz = sel(ok_n, nz, sel(ok_p, p1z, sel(use_x, -b1y, b1x)))
    inv = one / np.sqrt(fx * fx + fy * fy + fz * fz)
    return fx * inv, fy * inv, fz * inv


@njit(**INLINE)
def bend_plane_delta(b1, f, a, u, kx, kh, k):
    """The rotation (xyzw, ``w >= 0``) taking the chain's old frame ``(b1, f, b1 x f)``
    (unit thigh, unit bend normal) onto its new one ``(g1, g2, g3)``: thigh
    ``g1 = a kx + u kh``, bend normal ``g2 = u x a``, ``g3 = g1 x g2``, for the unit aim
    ``a``, the unit bend direction ``u`` and the new mid at ``a x + u h`` (``kx = x / l1s``,
    ``kh = h / l1s``). The matrix ``G F^T`` becomes a quaternion from the largest of its
    four diagonal candidates (Shepperd), branch-free.
    """
    zero, one = k.zero, k.one
    b1x, b1y, b1z = b1
    fx, fy, fz = f
    ax, ay, az = a
    ux, uy, uz = u
    g1x, g1y, g1z = ax * kx + ux * kh, ay * kx + uy * kh, az * kx + uz * kh
    g2x, g2y, g2z = uy * az - uz * ay, uz * ax - ux * az, ux * ay - uy * ax
    g3x, g3y, g3z = ux * kx - ax * kh, uy * kx - ay * kh, uz * kx - az * kh
    hx, hy, hz = b1y * fz - b1z * fy, b1z * fx - b1x * fz, b1x * fy - b1y * fx
    r00 = g1x * b1x + g2x * fx + g3x * hx
    r01 = g1x * b1y + g2x * fy + g3x * hy
    r02 = g1x * b1z + g2x * fz + g3x * hz
    r10 = g1y * b1x + g2y * fx + g3y * hx
    r11 = g1y * b1y + g2y * fy + g3y * hy
    r12 = g1y * b1z + g2y * fz + g3y * hz
    r20 = g1z * b1x + g2z * fx + g3z * hx
    r21 = g1z * b1y + g2z * fy + g3z * hy
    r22 = g1z * b1z + g2z * fz + g3z * hz
    tw = one + r00 + r11 + r22
    tx = one + r00 - r11 - r22
    ty = one - r00 + r11 - r22
    tz = one - r00 - r11 + r22
    qx, qy, qz, qw = r21 - r12, r02 - r20, r10 - r01, tw
    best = tw
    bx = tx > best
    qx = sel(bx, tx, qx)
    qy = sel(bx, r01 + r10, qy)
    qz = sel(bx, r02 + r20, qz)
    qw = sel(bx, r21 - r12, qw)
    best = sel(bx, tx, best)
    by = ty > best
    qx = sel(by, r01 + r10, qx)
    qy = sel(by, ty, qy)
    qz = sel(by, r12 + r21, qz)
    qw = sel(by, r02 - r20, qw)
    best = sel(by, ty, best)
    bz = tz > best
    qx = sel(bz, r02 + r20, qx)
    qy = sel(bz, r12 + r21, qy)
    qz = sel(bz, tz, qz)
    qw = sel(bz, r10 - r01, qw)
    inv = one / np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    inv = sel(qw < zero, -inv, inv)
    return qx * inv, qy * inv, qz * inv, qw * inv


@njit(**SMALL)
def half_angle(c, s, k):
    """(sin(t/2), cos(t/2)) up to a common sign from (cos t, sin t) (any common scale).

    Uses ``(s, 1 + c)`` when ``c >= 0`` and ``(1 - c, s)`` otherwise; both are exact
    identities and neither cancels, so small and near-half-turn angles stay accurate.
    """
    one = k.one
    pos = c >= k.zero
    hs = sel(pos, s, one - c)
    hc = sel(pos, one + c, s)
    inv = one / np.sqrt(hs * hs + hc * hc)
    inv = sel(hc < k.zero, -inv, inv)  # w >= 0
    return hs * inv, hc * inv


@njit(**SMALL)
def shortest_arc(u, v, f, k):
    """Shortest-arc rotation (xyzw, ``w >= 0``) taking the unit ``u`` onto the unit ``v``.

    ``q ~ (u x m, u . m)`` with ``m = u + v`` (the half-way vector), whose norm is ``|m|``;
    when ``v`` is opposite ``u`` (``|m| <= eps``) a half turn about the unit ``f``, which
    must be perpendicular to ``u``.
    """
    ux, uy, uz = u
    vx, vy, vz = v
    fx, fy, fz = f
    mx, my, mz = ux + vx, uy + vy, uz + vz
    ok = mx * mx + my * my + mz * mz > k.eps * k.eps
    qx = sel(ok, uy * mz - uz * my, fx)
    qy = sel(ok, uz * mx - ux * mz, fy)
    qz = sel(ok, ux * my - uy * mx, fz)
    qw = sel(ok, ux * mx + uy * my + uz * mz, k.zero)
    inv = k.one / np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    return qx * inv, qy * inv, qz * inv, qw * inv


@njit(**SMALL)
def rotate(q, v, two):
    """``v`` turned by the unit quaternion ``q`` (``v + w t + q x t``, ``t = 2 q x v``)."""
    qx, qy, qz, qw = q
    vx, vy, vz = v
    tx = two * (qy * vz - qz * vy)
    ty = two * (qz * vx - qx * vz)
    tz = two * (qx * vy - qy * vx)
    return (
        vx + qw * tx + (qy * tz - qz * ty),
        vy + qw * ty + (qz * tx - qx * tz),
        vz + qw * tz + (qx * ty - qy * tx),
    )
