"""The analytic two-bone solve of one element, for Numba kernels of any package.

Entry point: :func:`solve_two_bone_kernel` (``@njit``, inlined into the caller), taking
named records and returning a :class:`TwoBoneSolution`; :func:`solve_two_bone_fast` is
its common case with the default options (about 0.6 of the cost), which marks the
elements that need the full solve. Callers: the two-bone solver's array loops
(:mod:`ikrig.solvers.two_bone._loops`); the foot-placement leg IK, which builds its own
rotations, takes the positions alone (:func:`solve_two_bone_positions_serial`). Settings
cross from Python into compiled code as a packed record array (:func:`make_constants`, cheap
to pass to a Numba function) and become a :class:`TwoBoneConstants` once per call
(:func:`unpack_constants`).

Spaces: every point is world space (any frame works, as long as all five share it); the
rotation deltas are world-space xyzw quaternions, applied on the left of the joints' world
rotations (``new = delta * old``).

Performance notes (they explain the unusual style):

- A Python float literal is a float64 constant to Numba, and one float64 constant in a
  float32 loop widens the whole loop to float64. Every constant is therefore read from
  :class:`TwoBoneConstants` (same dtype as the data); no float literal appears in the
  per-element math.
- Per-element fallbacks are branch-free: every candidate is computed and one is chosen with
  ``sel`` (a scalar ``a if c else b``, which LLVM turns into a vector blend).
- ``error_model="numpy"``: with Python's error model every division checks for zero and may
  raise, which is an early loop exit and stops vectorisation. ``fastmath`` is limited to
  ``contract`` (FMA) and ``arcp``; ``nnan``/``ninf`` would delete the NaN tests.
- ``sqrt_abs(x)`` is ``sqrt(abs(x))``: when LLVM cannot prove ``x >= 0`` it keeps a
  ``sqrtf`` library call (which may set ``errno``) and the loop does not vectorise.
- The big-batch kernels loop with ``prange``. Numba compiles a ``prange`` body as a separate
  function whose array arguments are marked ``noalias`` when the body creates no aliases;
  only then does LLVM vectorise a loop over 15 input and 7 output streams (otherwise it
  gives up: "too many memory checks needed"). So the bodies index the argument arrays
  directly, never bind a sub-array (or a tuple of arrays) to a name, and the records carry
  flags as ints: Numba's alias analysis counts bool values taken from a tuple as aliases.
  The AoS loops index with unsigned integers: with signed ones Numba's negative-index
  wraparound adds a per-element select that stops LLVM from vectorising strided accesses.
- The per-element bodies (:func:`~ikrig.kernels._two_bone_math.geometry`,
  :func:`solve_two_bone_kernel` and the solver's positions-only pass) are inlined by Numba
  so the loops can vectorise; the small helpers are ordinary functions that LLVM inlines
  (Numba-level inlining of dozens of call sites compiles very slowly).
- NaN/inf inputs are detected inside the loops: ``(|b|^2 + ...) * 0`` is NaN exactly when
  an input is NaN or infinite (or a squared length overflows); ``bad`` reports it.

Per-element algorithm (shared part: :func:`~ikrig.kernels._two_bone_math.geometry`):

1. ``l1 = |mid - root|``, ``l2 = |end - mid|``, ``d = |target - root|``. A chain whose
   shorter bone is below ``eps`` times the longer is *degenerate* and left unchanged.
2. Soft IK (ozz rule, only in the "full" variants): with ``da = L * soften`` and
   ``ds = L - da``, a target farther than ``da`` (and than ``|l1 - l2|``) is placed at
   ``da + ds * (1 - 3^4 / (alpha + 3)^4)``, ``alpha = (d - da) / ds``.
3. Stretch ("full" variants): both bones scale by ``s = clamp(d / d_soft, 1, max_stretch)``.
4. The reach distance is clamped to ``[|l1 - l2|, l1 + l2] * s``.
5. The aim axis ``a`` is the root->target direction; for a target at the root (closer than
   ``eps * L``) the current root->end direction, else root->mid, else +X.
6. The bend direction ``u`` (unit, perpendicular to ``a``) points toward the pole: the
   pole's component perpendicular to ``a``; if the pole is on the aim line, the current
   mid's; if that is on the line too, ``a x n_old`` (keeps the current bend plane and
   sense); if the chain is straight as well, ``a x X`` (or ``a x Y`` when ``a`` is near X).
   The twist angle then rotates ``u`` about ``a``.
7. Law of cosines (factorised, exact at full extension): ``mid' = root + a x + u h``,
   ``end' = root + a reach``. For a zero reach (target at the root and ``l1 == l2``) ``x``
   keeps the current mid's projection on ``a``.
8. Rotations: the root delta maps the old frame (thigh direction, bend normal) onto the
   new one; the hinge turns about the old bend normal by the change of bend angle; the mid
   delta is ``root delta * hinge``. With ``shortest_arc`` the root delta is the shortest
   arc from the old thigh direction to the new one and the hinge the shortest arc from the
   old shin to the new one turned back by the root delta. Root delta and hinge are each
   weighted by a normalised lerp from the identity after forcing ``w >= 0`` (as ozz does)
   and the stretch by ``1 + w (s - 1)``; below weight 1 the positions are the old bones,
   scaled by that stretch, turned by the weighted deltas. For a straight chain the old bend
   normal is the new one projected off the thigh.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit.setup import njit
from ._two_bone_math import (
    INLINE,
    SMALL,
    bend_plane_delta,
    fast_geometry,
    geometry,
    half_angle,
    old_bend_normal,
    rotate,
    sel,
    shortest_arc,
    sqrt_abs,
)
from .qmath import q_mul as _shared_q_mul

q_mul = njit(**SMALL)(getattr(_shared_q_mul, "py_func", _shared_q_mul))  # plain with JIT off
"""The Hamilton product of :mod:`.qmath`, compiled again with this solver's float options.
A function compiled while a caller is being compiled adds the caller's ``fastmath`` to its
own: had these kernels shared :func:`.qmath.q_mul`, the one they compiled first would have
carried fused multiply-adds into every other kernel that calls it, and into Numba's cache,
so that a BVH file's rotations (or these kernels' own) differed in the last bit with the
order in which a process first compiled them (found by ``tests/test_info_fast.py`` in CI,
whose warm-up compiles the two-bone kernels first; guarded by
``tests/test_kernel_options.py``)."""

__all__ = [
    "EPS",
    "RANGE",
    "TwoBoneConstants",
    "TwoBonePoints",
    "TwoBoneSolution",
    "TwoBoneWeights",
    "make_constants",
    "unpack_constants",
    "solve_two_bone_kernel",
    "solve_two_bone_fast",
    "solve_two_bone_serial",
    "solve_two_bone_serial_arc",
    "solve_two_bone_positions_serial",
]

# Relative threshold for "on the line", "straight" and "zero length" tests.
EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}
# Bone lengths in [LO, HI] and target and pole distances up to HI keep every intermediate
# (up to fourth powers of lengths times EPS^2) a normal number of the dtype; the array loops
# re-solve other elements in float64 (float32 data) or flag them (float64).
RANGE = {np.dtype(np.float32): (1e-6, 1e6), np.dtype(np.float64): (1e-70, 1e70)}


class TwoBoneConstants(NamedTuple):
    """Settings of the per-element solve, every value of the data's float dtype (float32
    arithmetic stays float32). Build with :func:`make_constants` + :func:`unpack_constants`.
    """

    zero: float  # 0
    one: float  # 1
    half: float  # 0.5
    two: float  # 2
    three: float  # 3 (soft-IK rule)
    soften: float  # ozz soft-IK ratio in [0, 1]; 1: off
    max_stretch: float  # >= 1; 1: no stretch
    tolerance: float  # reached: end within tolerance * (l1 + l2) of the target
    eps: float  # relative threshold of the "zero length" / "on the line" tests
    perp: float  # 0.7: |axis . X| below this uses axis x X as a fixed perpendicular
    lo: float  # safe range of lengths [lo, hi] of the dtype (see RANGE)
    hi: float


class TwoBonePoints(NamedTuple):
    """The five points of one problem, each a 3-tuple ``(x, y, z)``, world space."""

    root: tuple  # root joint (hip, shoulder); it does not move
    mid: tuple  # mid joint (knee, elbow)
    end: tuple  # end joint (ankle, wrist)
    target: tuple  # where the end should go
    pole: tuple  # the mid joint bends toward this point (pass mid to keep the plane)


class TwoBoneWeights(NamedTuple):
    """Blend of one problem: weight (clamped to [0, 1]) and the twist angle as cos, sin."""

    weight: float
    cos_twist: float
    sin_twist: float


class TwoBoneSolution(NamedTuple):
    """Result of :func:`solve_two_bone_kernel` (flags are ints 0/1, not bools: see the note
    on aliases).
    """

    bad: int  # 1: an input is NaN or infinite
    mid: tuple  # new mid position (x, y, z), world space
    end: tuple  # new end position, world space
    root_delta: tuple  # world-space rotation delta of the root, xyzw, w >= 0
    mid_delta: tuple  # world-space rotation delta of the mid joint (includes the root's)
    stretch: float  # factor applied to both bones (blended with the weight)
    reached: int  # 1: the end lies within tolerance * L of the target
    slow: int  # 1: a fallback was needed or a length is out of the safe range


# One structured dtype object per float dtype: Numba's dispatcher types an argument fast
# only when its dtype is the very object it has seen (an equal copy takes a slow path).
_PACKED = {
    np.dtype(t): np.dtype([(name, t) for name in TwoBoneConstants._fields])
    for t in (np.float32, np.float64)
}


def make_constants(
    dtype, soften: float, max_stretch: float, tolerance: float, as_float64: bool = False
) -> np.ndarray:
    """The packed, read-only constants for data of ``dtype`` (float32 or float64): a
    ``(1,)`` structured array with the fields of :class:`TwoBoneConstants`, the form to
    pass from Python to a kernel (cheaper to dispatch than a named tuple); compiled code
    reads it with :func:`unpack_constants`. ``as_float64``: the same values (the data's
    ``EPS`` and ``RANGE``) stored as float64, for solving float32 data in float64.
    """
    dtype = np.dtype(dtype)
    key = np.dtype(np.float64) if as_float64 else dtype
    packed: dict = _PACKED  # keyed by dtype objects (the stubs of some NumPy versions differ)
    c = np.zeros(1, dtype=packed[key])
    lo, hi = RANGE[dtype]
    values = TwoBoneConstants(
        zero=0.0, one=1.0, half=0.5, two=2.0, three=3.0, soften=min(max(soften, 0.0), 1.0),
        max_stretch=max_stretch, tolerance=tolerance, eps=EPS[dtype], perp=0.7, lo=lo, hi=hi,
    )  # fmt: skip
    for name, value in zip(TwoBoneConstants._fields, values, strict=True):
        c[name] = value
    c.setflags(write=False)
    return c


@njit(**SMALL)
def unpack_constants(packed):
    """The values of a :func:`make_constants` array in the field order of
    :class:`TwoBoneConstants`; build the record in the kernel that uses it with
    ``TwoBoneConstants(*unpack_constants(packed))`` (a ``prange`` loop needs the class
    called where the record is made, to rebuild it in the loop's body).
    """
    c = packed[0]
    return (
        c.zero, c.one, c.half, c.two, c.three, c.soften, c.max_stretch, c.tolerance, c.eps,
        c.perp, c.lo, c.hi,
    )  # fmt: skip


@njit(**INLINE)
def solve_two_bone_kernel(p, weights, k, arc):
    """Full solve of one two-bone problem (steps 1-8).

    Args:
        p: :class:`TwoBonePoints` (world space, the data's dtype).
        weights: :class:`TwoBoneWeights`.
        k: :class:`TwoBoneConstants` of the same dtype.
        arc: shortest-arc rotations (``TwoBoneOptions.root_rotation="shortest_arc"``),
            else bend-plane ones; a compile-time constant where speed matters.

    Returns:
        :class:`TwoBoneSolution`. A degenerate chain gives the input positions, identity
        deltas and ``reached`` 0. ``slow`` is 1 when a fallback was needed (degenerate
        chain, target at the root, pole on the aim line), a length is out of the safe range
        ``[k.lo, k.hi]`` or an input is not finite; the array loops re-solve such
        elements in float64.
    """
    zero, one, two, tol = k.zero, k.one, k.two, k.tolerance
    # (fields read by name: a tuple taken by position from a tuple is an alias to Numba)
    g = geometry(p, k, True)
    chk, ok_chain, ok_fast, l1, l2, L = g.chk, g.ok_chain, g.ok_fast, g.l1, g.l2, g.length
    s, l1s, l2s, reach, x, hsq, csq = g.stretch, g.l1s, g.l2s, g.reach, g.x, g.hsq, g.bend_sq
    ax, ay, az = g.aim
    cx, cy, cz = g.bend
    bx, by, bz = g.thigh
    sx, sy, sz = g.shin
    nx, ny, nz = g.normal
    rx, ry, rz = p.root
    mx, my, mz = p.mid
    ex, ey, ez = p.end
    tx, ty, tz = p.target
    w, ct, st = weights
    degen = ok_chain == 0
    chk = chk + (w + ct + st) * zero
    w = sel(w > zero, w, zero)
    w = sel(w < one, w, one)
    # Unit bend direction, twisted about a.
    inv = one / sqrt_abs(csq)
    ux, uy, uz = cx * inv, cy * inv, cz * inv
    vx, vy, vz = ay * uz - az * uy, az * ux - ax * uz, ax * uy - ay * ux
    ux, uy, uz = ux * ct + vx * st, uy * ct + vy * st, uz * ct + vz * st
    h = sqrt_abs(hsq)
    # New positions.
    nmx, nmy, nmz = rx + ax * x + ux * h, ry + ay * x + uy * h, rz + az * x + uz * h
    nex, ney, nez = rx + ax * reach, ry + ay * reach, rz + az * reach

    # Old frame: thigh direction b1, bend normal n (unit, perpendicular to b1).
    i1 = one / sel(degen, one, l1)
    i2 = one / sel(degen, one, l2)
    b1x, b1y, b1z = bx * i1, by * i1, bz * i1
    il = one / sel(degen, one, l1s)
    kx, kh = x * il, h * il
    g2x, g2y, g2z = uy * az - uz * ay, uz * ax - ux * az, ux * ay - uy * ax  # new normal
    fx, fy, fz = old_bend_normal((nx, ny, nz), (b1x, b1y, b1z), (g2x, g2y, g2z), l1 * l2, k)

    if arc:
        # Root: the shortest arc from the old thigh b1 to the new one g1. Mid: root delta
        # times the shortest arc from the old shin to the new shin turned back by the root.
        g1x, g1y, g1z = ax * kx + ux * kh, ay * kx + uy * kh, az * kx + uz * kh  # new thigh
        qx, qy, qz, qw = shortest_arc((b1x, b1y, b1z), (g1x, g1y, g1z), (fx, fy, fz), k)
        ox, oy, oz = sx * i2, sy * i2, sz * i2
        kr = reach - x  # new shin: a (reach - x) - u h
        vx, vy, vz = ax * kr - ux * h, ay * kr - uy * h, az * kr - uz * h
        inv = one / sqrt_abs(sel(degen, one, vx * vx + vy * vy + vz * vz))
        vx, vy, vz = rotate((-qx, -qy, -qz, qw), (vx * inv, vy * inv, vz * inv), two)
        hx_, hy_, hz_, hw = shortest_arc((ox, oy, oz), (vx, vy, vz), (fx, fy, fz), k)
    else:
        # Root delta: the old frame (b1, f, b1 x f) onto the new one.
        qx, qy, qz, qw = bend_plane_delta(
            (b1x, b1y, b1z), (fx, fy, fz), (ax, ay, az), (ux, uy, uz), kx, kh, k
        )
        # Hinge about f by the change of bend angle (beta: angle from thigh to shin about f).
        cb = (bx * sx + by * sy + bz * sz) * i1 * i2
        sb = (fx * nx + fy * ny + fz * nz) * i1 * i2
        il2 = il / sel(degen, one, l2s)
        cb2 = (x * (reach - x) - hsq) * il2
        sb2 = h * reach * il2
        hs, hw = half_angle(cb2 * cb + sb2 * sb, sb2 * cb - cb2 * sb, k)

    # Weights: nlerp from the identity, then mid delta = root delta * hinge.
    omw = one - w
    rx_, ry_, rz_, rw_ = qx * w, qy * w, qz * w, qw * w + omw
    inv = one / np.sqrt(rx_ * rx_ + ry_ * ry_ + rz_ * rz_ + rw_ * rw_)
    rx_, ry_, rz_, rw_ = rx_ * inv, ry_ * inv, rz_ * inv, rw_ * inv
    if arc:
        hx_, hy_, hz_, hw = hx_ * w, hy_ * w, hz_ * w, hw * w + omw
        inv = one / np.sqrt(hx_ * hx_ + hy_ * hy_ + hz_ * hz_ + hw * hw)
        hx_, hy_, hz_, hw = hx_ * inv, hy_ * inv, hz_ * inv, hw * inv
    else:
        hs = hs * w
        hw = hw * w + omw
        inv = one / np.sqrt(hs * hs + hw * hw)
        hx_, hy_, hz_, hw = fx * hs * inv, fy * hs * inv, fz * hs * inv, hw * inv
    mqx, mqy, mqz, mqw = q_mul((rx_, ry_, rz_, rw_), (hx_, hy_, hz_, hw))

    # Weighted positions: the bones, stretched by sw = 1 + w (s - 1) (s at weight 1),
    # turned by the weighted deltas.
    full_w = w >= one
    sw = sel(full_w, s, one + (s - one) * w)
    bx, by, bz, sx, sy, sz = bx * sw, by * sw, bz * sw, sx * sw, sy * sw, sz * sw
    t1x = two * (ry_ * bz - rz_ * by)
    t1y = two * (rz_ * bx - rx_ * bz)
    t1z = two * (rx_ * by - ry_ * bx)
    wmx = rx + bx + rw_ * t1x + (ry_ * t1z - rz_ * t1y)
    wmy = ry + by + rw_ * t1y + (rz_ * t1x - rx_ * t1z)
    wmz = rz + bz + rw_ * t1z + (rx_ * t1y - ry_ * t1x)
    t2x = two * (mqy * sz - mqz * sy)
    t2y = two * (mqz * sx - mqx * sz)
    t2z = two * (mqx * sy - mqy * sx)
    wex = wmx + sx + mqw * t2x + (mqy * t2z - mqz * t2y)
    wey = wmy + sy + mqw * t2y + (mqz * t2x - mqx * t2z)
    wez = wmz + sz + mqw * t2z + (mqx * t2y - mqy * t2x)
    # The exact law-of-cosines positions at weight 1, else the rotated bones.
    nmx = sel(degen, mx, sel(full_w, nmx, wmx))
    nmy = sel(degen, my, sel(full_w, nmy, wmy))
    nmz = sel(degen, mz, sel(full_w, nmz, wmz))
    nex = sel(degen, ex, sel(full_w, nex, wex))
    ney = sel(degen, ey, sel(full_w, ney, wey))
    nez = sel(degen, ez, sel(full_w, nez, wez))
    sgn = sel(mqw < zero, -one, one)
    fx, fy, fz = nex - tx, ney - ty, nez - tz
    lim = tol * L
    return TwoBoneSolution(
        sel(chk != chk, 1, 0),
        (nmx, nmy, nmz),
        (nex, ney, nez),
        (sel(degen, zero, rx_), sel(degen, zero, ry_), sel(degen, zero, rz_),
         sel(degen, one, rw_)),
        (sel(degen, zero, mqx * sgn), sel(degen, zero, mqy * sgn),
         sel(degen, zero, mqz * sgn), sel(degen, one, mqw * sgn)),
        sel(degen, one, sw),
        sel((fx * fx + fy * fy + fz * fz <= lim * lim) & (not degen), 1, 0),
        sel(ok_fast != 0, 0, 1),
    )  # fmt: skip


@njit(cache=True, **SMALL)
def solve_two_bone_serial(p, weights, k):
    """:func:`solve_two_bone_kernel` with bend-plane rotations, as a separately compiled
    function for serial loops (one element at a time: nothing to gain from inlining).
    Every such loop calls the same machine code, compiled once (seconds on a cold cache)
    instead of once per caller."""
    return solve_two_bone_kernel(p, weights, k, False)


@njit(cache=True, **SMALL)
def solve_two_bone_serial_arc(p, weights, k):
    """:func:`solve_two_bone_serial` with shortest-arc rotations."""
    return solve_two_bone_kernel(p, weights, k, True)


@njit(**INLINE)
def solve_two_bone_fast(p, k, rng):
    """:func:`solve_two_bone_kernel` with the default options (weight 1, no twist, no soft
    IK or stretch, bend-plane rotations), for the common case only: about 0.6 of its cost.

    Args:
        p: :class:`TwoBonePoints`; k: :class:`TwoBoneConstants` of the same dtype.
        rng: require lengths in the safe range (compile-time; float32 data).

    Returns:
        :class:`TwoBoneSolution` with ``bad`` 0. ``slow`` is 1 where a fallback of
        :func:`~ikrig.kernels._two_bone_math.fast_geometry` is needed, a length is out of
        range or an input is not finite (a straight chain is not slow: its bend normal
        falls back as in the full solve); the other fields are then meaningless and the
        caller re-solves the element with :func:`solve_two_bone_kernel` (which flags bad
        inputs).
    """
    zero, one = k.zero, k.one
    g = fast_geometry(p, k, False, rng)
    l1, l2, x, hsq, reach = g.l1, g.l2, g.x, g.hsq, g.reach
    rx, ry, rz = p.root
    ax, ay, az = g.aim
    cx, cy, cz = g.bend
    bx, by, bz = g.thigh
    sx, sy, sz = g.shin
    inv = one / sqrt_abs(g.bend_sq)
    ux, uy, uz = cx * inv, cy * inv, cz * inv
    h = sqrt_abs(hsq)
    nmx, nmy, nmz = rx + ax * x + ux * h, ry + ay * x + uy * h, rz + az * x + uz * h
    nex, ney, nez = rx + ax * reach, ry + ay * reach, rz + az * reach
    # old frame: thigh b1, bend normal f (thigh x shin, or the fallbacks of a straight
    # chain); divisions and square roots bound this loop: share them where exact enough
    nx, ny, nz = by * sz - bz * sy, bz * sx - bx * sz, bx * sy - by * sx
    l12 = l1 * l2
    i12 = one / l12
    i1 = l2 * i12
    b1 = (bx * i1, by * i1, bz * i1)
    u = (ux, uy, uz)
    g2 = (uy * az - uz * ay, uz * ax - ux * az, ux * ay - uy * ax)  # new normal u x a
    fx, fy, fz = old_bend_normal((nx, ny, nz), b1, g2, l12, k)
    qr = bend_plane_delta(b1, (fx, fy, fz), (ax, ay, az), u, x * i1, h * i1, k)
    # hinge about f by the change of bend angle, then mid delta = root delta * hinge
    cb = (bx * sx + by * sy + bz * sz) * i12
    sb = (fx * nx + fy * ny + fz * nz) * i12
    cb2 = (x * (reach - x) - hsq) * i12  # (no stretch: the bones keep l1, l2)
    sb2 = h * reach * i12
    hs, hw = half_angle(cb2 * cb + sb2 * sb, sb2 * cb - cb2 * sb, k)
    mqx, mqy, mqz, mqw = q_mul(qr, (fx * hs, fy * hs, fz * hs, hw))
    sgn = sel(mqw < zero, -one, one)
    tx, ty, tz = p.target
    ex, ey, ez = nex - tx, ney - ty, nez - tz
    lim = k.tolerance * g.length
    return TwoBoneSolution(
        0,
        (nmx, nmy, nmz),
        (nex, ney, nez),
        qr,
        (mqx * sgn, mqy * sgn, mqz * sgn, mqw * sgn),
        g.stretch,
        sel(ex * ex + ey * ey + ez * ez <= lim * lim, 1, 0),
        sel(g.ok != 0, 0, 1),
    )  # fmt: skip


class TwoBonePlaced(NamedTuple):
    """Result of :func:`solve_two_bone_positions_serial` (world space)."""

    mid: tuple  # new mid position (x, y, z)
    end: tuple  # new end position
    stretch: float  # factor applied to both bones (1 for a degenerate chain)


@njit(cache=True, **SMALL)
def solve_two_bone_positions_serial(p, k):
    """The positions and stretch of :func:`solve_two_bone_kernel` at weight 1 without
    twist, with the same arithmetic (the same bits), without the rotation deltas: half the
    cost, for a caller that builds its own rotations (the foot pipeline's leg IK).

    Args:
        p: :class:`TwoBonePoints`; k: :class:`TwoBoneConstants` (float64).

    Returns:
        :class:`TwoBonePlaced`; a degenerate chain keeps its mid and end, stretch 1.
    """
    g = geometry(p, k, True)
    degen = g.ok_chain == 0
    rx, ry, rz = p.root
    ax, ay, az = g.aim
    cx, cy, cz = g.bend
    inv = k.one / sqrt_abs(g.bend_sq)
    ux, uy, uz = cx * inv, cy * inv, cz * inv
    h, x, reach = sqrt_abs(g.hsq), g.x, g.reach
    mx, my, mz = p.mid
    ex, ey, ez = p.end
    return TwoBonePlaced(
        (sel(degen, mx, rx + ax * x + ux * h), sel(degen, my, ry + ay * x + uy * h),
         sel(degen, mz, rz + az * x + uz * h)),
        (sel(degen, ex, rx + ax * reach), sel(degen, ey, ry + ay * reach),
         sel(degen, ez, rz + az * reach)),
        sel(degen, k.one, g.stretch),
    )  # fmt: skip
