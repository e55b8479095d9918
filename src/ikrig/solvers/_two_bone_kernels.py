"""Per-element Numba kernels of the analytic two-bone solver (see
:mod:`ikrig.solvers.two_bone`; the loops over arrays are in
:mod:`ikrig.solvers._two_bone_loops`).

Everything here is private: the public wrappers validate and shape the inputs, the loops
take flat C-contiguous arrays and small ``consts`` arrays (:func:`make_consts`).

Performance notes (they explain the unusual style):

- A Python float literal is a float64 constant to Numba, and one float64 constant in a
  float32 loop widens the whole loop to float64. Every constant is therefore read from
  ``consts`` (same dtype as the data) into a local before the loop; no float literal
  appears in the per-element math.
- Per-element fallbacks are branch-free: every candidate is computed and one is chosen with
  ``_sel`` (a scalar ``a if c else b``, which LLVM turns into a vector blend).
- ``error_model="numpy"``: with Python's error model every division checks for zero and may
  raise, which is an early loop exit and stops vectorisation. ``fastmath`` is limited to
  ``contract`` (FMA) and ``arcp``; ``nnan``/``ninf`` would delete the NaN tests.
- ``_sqrt(x)`` is ``sqrt(abs(x))``: when LLVM cannot prove ``x >= 0`` it keeps a ``sqrtf``
  library call (which may set ``errno``) and the loop does not vectorise.
- The big-batch kernels loop with ``prange``. Numba compiles a ``prange`` body as a separate
  function whose array arguments are marked ``noalias`` when the body creates no aliases;
  only then does LLVM vectorise a loop over 15 input and 7 output streams (otherwise it
  gives up: "too many memory checks needed"). So the bodies index the argument arrays
  directly, never bind a sub-array to a name, and the per-element functions return flags
  as ints: Numba's alias analysis counts bool values unpacked from a tuple as aliases.
  The AoS loops index with unsigned integers: with signed ones Numba's negative-index
  wraparound adds a per-element select that stops LLVM from vectorising strided accesses.
- The per-element bodies (:func:`_geometry`, :func:`_fast_positions`, :func:`_solve_core`)
  are inlined by Numba so the loops can vectorise (Numba inlines at most 30 arguments,
  hence the constants tuple of :func:`_solve_core`); the small helpers are ordinary functions
  that LLVM inlines (Numba-level inlining of dozens of call sites compiles very slowly).
- The SoA kernel solves the common case without fallbacks (:func:`_fast_positions`, half
  the work) and marks the rest, which a serial pass re-solves with :func:`_geometry`; the
  parallel AoS kernel marks the same elements (``slow`` of :func:`_solve_core`). The
  serial passes work in float64, so float32 data out of float32's safe range (``RANGE``)
  are marked too and solved without overflow or underflow.
- NaN/inf inputs are detected inside the loops: ``(|b|^2 + ...) * 0`` is NaN exactly when
  an input is NaN or infinite (or a squared length overflows), and the kernels return the
  count of such elements (in the SoA kernel every such element fails a test of the fast
  path and is counted by the fallback pass). The wrapper raises, naming the argument.
- The serial AoS kernel writes one ``(N, 15)`` buffer (fewer arguments and allocations per
  call); the parallel one writes separate arrays (stride-3/4 stores vectorise, stride-15
  ones do not).

Per-element algorithm (shared part: :func:`_geometry`):

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
8. Rotations (AoS kernels): the root delta maps the old frame (thigh direction, bend
   normal) onto the new one; the hinge turns about the old bend normal by the change of
   bend angle; the mid delta is ``root delta * hinge``. With ``arc`` the root delta is the
   shortest arc from the old thigh direction to the new one and the hinge the shortest arc
   from the old shin to the new one turned back by the root delta. Root delta and hinge
   are each weighted by a normalised lerp from the identity after forcing ``w >= 0`` (as
   ozz does) and the stretch by ``1 + w (s - 1)``; below weight 1 the positions are the
   old bones, scaled by that stretch, turned by the weighted deltas. For a straight chain
   the old bend normal is the new one projected off the thigh.
"""

from __future__ import annotations

import numpy as np

from .._numba import njit

# Layout of the ``consts`` array (built once per dtype and options by the wrapper).
C_ZERO = 0
C_ONE = 1
C_HALF = 2
C_TWO = 3
C_THREE = 4
C_SOFTEN = 5
C_MAX_STRETCH = 6
C_TOL = 7
C_EPS = 8
C_PERP = 9
C_LO = 10
C_HI = 11
N_CONSTS = 12

# Relative threshold for "on the line", "straight" and "zero length" tests.
EPS = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9}
# Bone lengths in [LO, HI] and target and pole distances up to HI keep every intermediate
# (up to fourth powers of lengths times EPS^2) a normal number of the dtype; the array loops
# re-solve other elements in float64 (float32 data) or flag them (float64).
RANGE = {np.dtype(np.float32): (1e-6, 1e6), np.dtype(np.float64): (1e-70, 1e70)}


def make_consts(
    dtype, soften: float, max_stretch: float, tolerance: float, as_float64: bool = False
) -> np.ndarray:
    """The read-only ``consts`` array for data of ``dtype`` (float32 or float64) and the
    options; ``as_float64``: the same values (the data's ``EPS`` and ``RANGE``) stored as
    float64, for solving float32 data in float64."""
    dtype = np.dtype(dtype)
    c = np.zeros(N_CONSTS, dtype=np.float64 if as_float64 else dtype)
    c[C_ONE] = 1.0
    c[C_HALF] = 0.5
    c[C_TWO] = 2.0
    c[C_THREE] = 3.0
    c[C_SOFTEN] = min(max(soften, 0.0), 1.0)
    c[C_MAX_STRETCH] = max_stretch
    c[C_TOL] = tolerance
    c[C_EPS] = EPS[dtype]
    c[C_PERP] = 0.7
    c[C_LO], c[C_HI] = RANGE[dtype]
    c.setflags(write=False)
    return c


# 'contract' (FMA) and 'arcp' (x / y as x * (1 / y)) only: no 'nnan'/'ninf', which would
# let LLVM delete the NaN test.
_FASTMATH = {"contract", "arcp"}
# Small helpers are ordinary functions: LLVM inlines them. The big per-element bodies are
# inlined by Numba ("always") so that the loops calling them can vectorise; Numba-level
# inlining is slow to compile, so only those three use it.
_SMALL = {"error_model": "numpy", "fastmath": _FASTMATH}
_INLINE = {"inline": "always", "error_model": "numpy", "fastmath": _FASTMATH}


@njit(**_SMALL)
def _sel(c, a, b):
    return a if c else b


@njit(**_SMALL)
def _sqrt(x):
    """Square root of a value that is >= 0 (or NaN).

    ``abs`` tells LLVM the argument is not negative, so it emits the sqrt instruction
    instead of a ``sqrtf`` library call that may set ``errno`` and blocks vectorisation.
    """
    return np.sqrt(abs(x))


@njit(**_SMALL)
def _reach(d, l1, l2, L, zero, one, three, soften, max_stretch, full):
    """Reach distance, stretch factor and stretched bones for a target at ``d`` (steps 2-4).

    ``full`` (a compile-time constant) enables soft IK and stretch.
    """
    if full:
        da = L * soften
        ds = L - da
        soft_on = (d > da) & (ds > zero) & (d > abs(l1 - l2))
        # ds * 3^4 / (alpha + 3)^4 with alpha = (d - da) / ds, using one division
        k = (three * ds) / _sel(soft_on, d - da + three * ds, one)
        k2 = k * k
        dsoft = _sel(soft_on, L - ds * (k2 * k2), _sel(d < L, d, L))
        s = d / _sel(dsoft > zero, dsoft, one)
        s = _sel(s > one, s, one)
        s = _sel(s < max_stretch, s, max_stretch)
        reach = dsoft * s
    else:
        s = one
        reach = d
    l1s = l1 * s
    l2s = l2 * s
    lo = abs(l1s - l2s)
    hi = l1s + l2s  # the same sum as in _law_of_cosines, so a clamped reach gives h = 0
    reach = _sel(reach > lo, reach, lo)
    reach = _sel(reach < hi, reach, hi)
    return reach, s, l1s, l2s


@njit(**_SMALL)
def _law_of_cosines(reach, l1s, l2s, zero, half):
    """Mid offset ``x`` along the aim axis and squared height ``h^2`` (``reach > 0``).

    Uses ``l1 -+ x = (L -+ ...)`` factorised forms, which are exact at full extension and
    full fold (``x = (reach^2 + l1^2 - l2^2) / (2 reach)`` leaves ``h ~ sqrt(eps) * l1``
    there, a visible kink in float32).
    """
    inv2r = half / reach
    lmx = (l1s + l2s - reach) * (reach + l2s - l1s) * inv2r  # l1 - x
    lpx = (reach + l1s - l2s) * (reach + l1s + l2s) * inv2r  # l1 + x
    x = l1s - lmx
    x = _sel(x < l1s, x, l1s)
    x = _sel(x > -l1s, x, -l1s)
    hsq = lmx * lpx
    return x, _sel(hsq > zero, hsq, zero)


@njit(**_INLINE)
def _fast_positions(
    rx, ry, rz, mx, my, mz, ex, ey, ez, tx, ty, tz, px, py, pz,
    zero, one, half, three, soften, max_stretch, tol, eps, lo, hi, full, rng,
):  # fmt: skip
    """Positions-only solve of the common case, without the fallbacks of :func:`_geometry`.

    ``rng`` (compile-time): also mark lengths out of ``[lo, hi]`` (float32 data).

    Returns ``(slow, mid xyz, end xyz, reached)`` (ints for the flags). ``slow`` is 1 when a
    fallback may be needed (degenerate chain, target at the root, pole on the aim line), a
    length is out of the dtype's safe range ``[lo, hi]`` or an input is not finite (every
    NaN/inf input makes one of the tests below false); the
    caller re-solves such elements with :func:`_geometry`, which also flags bad inputs.
    Skipping the fallbacks and the NaN bookkeeping halves the cost of the common case.
    """
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
    lmin = _sel(l1 < l2, l1, l2)
    lmax = _sel(l1 < l2, l2, l1)
    inv = one / np.sqrt(dsq)
    ax, ay, az = dx * inv, dy * inv, dz * inv
    d = dsq * inv
    reach, s, l1s, l2s = _reach(d, l1, l2, L, zero, one, three, soften, max_stretch, full)
    pa = qx * ax + qy * ay + qz * az
    cx, cy, cz = qx - ax * pa, qy - ay * pa, qz - az * pa
    csq = cx * cx + cy * cy + cz * cz
    x, hsq = _law_of_cosines(reach, l1s, l2s, zero, half)
    hc = _sqrt(hsq / csq)  # h / |c|
    err = reach - d  # the end lands on the aim line: its distance to the target
    eps_l = eps * L
    ok = (lmin > eps * lmax) & (d > eps_l) & (csq > (eps * eps) * (psq + L * L))
    if rng:
        hi2 = hi * hi
        ok = ok & (lmin >= lo) & (lmax <= hi) & (dsq <= hi2) & (psq <= hi2)
    if full:
        ok = ok & (reach > eps_l)  # implied by d > eps_l without soft IK
    return (
        _sel(ok, 0, 1),
        rx + ax * x + cx * hc, ry + ay * x + cy * hc, rz + az * x + cz * hc,
        rx + ax * reach, ry + ay * reach, rz + az * reach,
        _sel(abs(err) <= tol * L, 1, 0),
    )  # fmt: skip


@njit(**_INLINE)
def _geometry(
    rx, ry, rz, mx, my, mz, ex, ey, ez, tx, ty, tz, px, py, pz,
    zero, one, half, three, soften, max_stretch, eps, perp, lo, hi, full,
):  # fmt: skip
    """The shared per-element solve (steps 1-7 without twist).

    ``full`` (a compile-time constant at every call site) enables softening and stretch.
    Returns the quantities the kernels need; LLVM drops the ones a kernel does not use.
    ``c`` is the unnormalised bend direction and ``csq`` its squared length; ``ok_fast`` is
    1 when the lengths are in the dtype's safe range (``lo``, ``hi``: see ``RANGE``) and no
    fallback was needed (the cases :func:`_fast_positions` leaves to a second pass).
    """
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
    lmin = _sel(l1 < l2, l1, l2)
    lmax = _sel(l1 < l2, l2, l1)
    ok_chain = _sel(lmin > eps * lmax, 1, 0)  # an int, not a bool: see the note on aliases
    hi2 = hi * hi
    in_rng = (lmin >= lo) & (lmax <= hi) & (dsq <= hi2) & (psq <= hi2)

    # Aim axis: root->target, else root->end, else root->mid, else +X.
    erx, ery, erz = bx + sx, by + sy, bz + sz
    ersq = erx * erx + ery * ery + erz * erz
    thr = eps2 * Lsq
    ok_d = dsq > thr
    ok_e = ersq > thr
    ok_m = l1sq > thr
    vx = _sel(ok_d, dx, _sel(ok_e, erx, _sel(ok_m, bx, one)))
    vy = _sel(ok_d, dy, _sel(ok_e, ery, _sel(ok_m, by, zero)))
    vz = _sel(ok_d, dz, _sel(ok_e, erz, _sel(ok_m, bz, zero)))
    vsq = _sel(ok_d, dsq, _sel(ok_e, ersq, _sel(ok_m, l1sq, one)))
    inv = one / _sqrt(vsq)
    ax, ay, az = vx * inv, vy * inv, vz * inv
    d = _sel(ok_d, dsq * inv, zero)  # a target closer than eps * L counts as at the root

    reach, s, l1s, l2s = _reach(d, l1, l2, L, zero, one, three, soften, max_stretch, full)

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
    use_x = abs(ax) < perp  # a x (+X) is long enough, else use a x (+Y)
    c4x = _sel(use_x, zero, -az)
    c4y = _sel(use_x, az, zero)
    c4z = _sel(use_x, -ay, ax)
    c4sq = c4x * c4x + c4y * c4y + c4z * c4z
    cx = _sel(ok1, c1x, _sel(ok2, c2x, _sel(ok3, c3x, c4x)))
    cy = _sel(ok1, c1y, _sel(ok2, c2y, _sel(ok3, c3y, c4y)))
    cz = _sel(ok1, c1z, _sel(ok2, c2z, _sel(ok3, c3z, c4z)))
    csq = _sel(ok1, c1sq, _sel(ok2, c2sq, _sel(ok3, c3sq, c4sq)))

    # Law of cosines: x along a, h along the bend direction.
    # for a zero reach (l1 == l2, target at the root) keep the mid's offset along a
    ok_r = reach > eps * L
    x, hsq = _law_of_cosines(_sel(ok_r, reach, one), l1s, l2s, zero, half)
    xf = ma * s
    xf = _sel(xf < l1s, xf, l1s)
    xf = _sel(xf > -l1s, xf, -l1s)
    x = _sel(ok_r, x, xf)
    hsq = _sel(ok_r, hsq, (l1s - xf) * (l1s + xf))
    hsq = _sel(hsq > zero, hsq, zero)
    ok_fast = _sel(in_rng & (ok_chain != 0) & ok_d & ok1 & ok_r, 1, 0)
    return (
        chk, ok_chain, ok_fast, l1, l2, L, s, l1s, l2s, reach, x, hsq,
        ax, ay, az, cx, cy, cz, csq, bx, by, bz, sx, sy, sz, dx, dy, dz, nx, ny, nz,
    )  # fmt: skip


@njit(**_SMALL)
def _half_angle(c, s, zero, one):
    """(sin(t/2), cos(t/2)) up to a common sign from (cos t, sin t) (any common scale).

    Uses ``(s, 1 + c)`` when ``c >= 0`` and ``(1 - c, s)`` otherwise; both are exact
    identities and neither cancels, so small and near-half-turn angles stay accurate.
    """
    pos = c >= zero
    hs = _sel(pos, s, one - c)
    hc = _sel(pos, one + c, s)
    inv = one / np.sqrt(hs * hs + hc * hc)
    inv = _sel(hc < zero, -inv, inv)  # w >= 0
    return hs * inv, hc * inv


@njit(**_SMALL)
def _arc(ux, uy, uz, vx, vy, vz, fx, fy, fz, zero, one, eps):
    """Shortest-arc rotation (xyzw, ``w >= 0``) taking the unit ``u`` onto the unit ``v``.

    ``q ~ (u x m, u . m)`` with ``m = u + v`` (the half-way vector), whose norm is ``|m|``;
    when ``v`` is opposite ``u`` (``|m| <= eps``) a half turn about the unit ``f``, which
    must be perpendicular to ``u``.
    """
    mx, my, mz = ux + vx, uy + vy, uz + vz
    ok = mx * mx + my * my + mz * mz > eps * eps
    qx = _sel(ok, uy * mz - uz * my, fx)
    qy = _sel(ok, uz * mx - ux * mz, fy)
    qz = _sel(ok, ux * my - uy * mx, fz)
    qw = _sel(ok, ux * mx + uy * my + uz * mz, zero)
    inv = one / np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    return qx * inv, qy * inv, qz * inv, qw * inv


@njit(**_SMALL)
def _rotate(qx, qy, qz, qw, vx, vy, vz, two):
    """``v`` turned by the unit quaternion ``q`` (``v + w t + q x t``, ``t = 2 q x v``)."""
    tx = two * (qy * vz - qz * vy)
    ty = two * (qz * vx - qx * vz)
    tz = two * (qx * vy - qy * vx)
    return (
        vx + qw * tx + (qy * tz - qz * ty),
        vy + qw * ty + (qz * tx - qx * tz),
        vz + qw * tz + (qx * ty - qy * tx),
    )


@njit(**_INLINE)
def _solve(
    rx, ry, rz, mx, my, mz, ex, ey, ez, tx, ty, tz, px, py, pz, w, ct, st,
    zero, one, half, two, three, soften, max_stretch, tol, eps, perp,
):  # fmt: skip
    """Full solve of one element, bend-plane rotations (the foot pipeline's entry point).

    ``w, ct, st``: weight, cosine and sine of the twist angle.
    Returns ``(bad, mid xyz, end xyz, root delta xyzw, mid delta xyzw, stretch, reached)``
    where ``bad`` is 1 when an input is NaN or infinite and ``reached`` is 0 or 1 (ints,
    not bools: see the note on aliases). No range check: meant for float64 data.
    """
    (
        bad, nmx, nmy, nmz, nex, ney, nez, qrx, qry, qrz, qrw,
        qmx, qmy, qmz, qmw, stretch, reached, _,
    ) = _solve_core(
        rx, ry, rz, mx, my, mz, ex, ey, ez, tx, ty, tz, px, py, pz, w, ct, st,
        (zero, one, half, two, three, soften, max_stretch, tol, eps, perp, zero, one), False,
    )  # fmt: skip
    return (
        bad, nmx, nmy, nmz, nex, ney, nez, qrx, qry, qrz, qrw,
        qmx, qmy, qmz, qmw, stretch, reached,
    )  # fmt: skip


@njit(**_INLINE)
def _solve_core(
    rx, ry, rz, mx, my, mz, ex, ey, ez, tx, ty, tz, px, py, pz, w, ct, st, k, arc,
):  # fmt: skip
    """:func:`_solve` with the range test and the rotation mode.

    ``k``: the tuple ``(zero, one, half, two, three, soften, max_stretch, tol, eps, perp,
    lo, hi)`` (a tuple because Numba inlines functions of at most 30 arguments).
    ``arc`` (a compile-time constant where speed matters): shortest-arc rotations, else
    bend-plane ones. Returns :func:`_solve`'s values and ``slow``, 1 when a fallback was
    needed (degenerate chain, target at the root, pole on the aim line), a length is out of
    the safe range ``[lo, hi]`` of the dtype or an input is not finite.
    """
    zero, one, half, two, three, soften, max_stretch, tol, eps, perp, lo, hi = k
    (
        chk, ok_chain, ok_fast, l1, l2, L, s, l1s, l2s, reach, x, hsq,
        ax, ay, az, cx, cy, cz, csq, bx, by, bz, sx, sy, sz, dx, dy, dz, nx, ny, nz,
    ) = _geometry(
        rx, ry, rz, mx, my, mz, ex, ey, ez, tx, ty, tz, px, py, pz,
        zero, one, half, three, soften, max_stretch, eps, perp, lo, hi, True,
    )  # fmt: skip
    degen = ok_chain == 0
    chk = chk + (w + ct + st) * zero
    w = _sel(w > zero, w, zero)
    w = _sel(w < one, w, one)
    # Unit bend direction, twisted about a.
    inv = one / _sqrt(csq)
    ux, uy, uz = cx * inv, cy * inv, cz * inv
    vx, vy, vz = ay * uz - az * uy, az * ux - ax * uz, ax * uy - ay * ux
    ux, uy, uz = ux * ct + vx * st, uy * ct + vy * st, uz * ct + vz * st
    h = _sqrt(hsq)
    # New positions.
    nmx, nmy, nmz = rx + ax * x + ux * h, ry + ay * x + uy * h, rz + az * x + uz * h
    nex, ney, nez = rx + ax * reach, ry + ay * reach, rz + az * reach

    # Old frame: thigh direction b1, bend normal n (unit, perpendicular to b1).
    i1 = one / _sel(degen, one, l1)
    i2 = one / _sel(degen, one, l2)
    b1x, b1y, b1z = bx * i1, by * i1, bz * i1
    # New frame: thigh g1 = a x/l1s + u h/l1s, normal g2 = u x a, g3 = g1 x g2.
    il = one / _sel(degen, one, l1s)
    kx, kh = x * il, h * il
    g1x, g1y, g1z = ax * kx + ux * kh, ay * kx + uy * kh, az * kx + uz * kh
    g2x, g2y, g2z = uy * az - uz * ay, uz * ax - ux * az, ux * ay - uy * ax
    g3x, g3y, g3z = ux * kx - ax * kh, uy * kx - ay * kh, uz * kx - az * kh
    nsq = nx * nx + ny * ny + nz * nz
    ok_n = nsq > eps * eps * (l1 * l2) * (l1 * l2)
    # Straight chain: the new normal projected off the thigh, else a fixed perpendicular.
    pg = g2x * b1x + g2y * b1y + g2z * b1z
    p1x, p1y, p1z = g2x - b1x * pg, g2y - b1y * pg, g2z - b1z * pg
    ok_p = p1x * p1x + p1y * p1y + p1z * p1z > eps * eps
    use_x = abs(b1x) < perp
    fx = _sel(ok_n, nx, _sel(ok_p, p1x, _sel(use_x, zero, -b1z)))
    fy = _sel(ok_n, ny, _sel(ok_p, p1y, _sel(use_x, b1z, zero)))
    fz = _sel(ok_n, nz, _sel(ok_p, p1z, _sel(use_x, -b1y, b1x)))
    inv = one / np.sqrt(fx * fx + fy * fy + fz * fz)
    fx, fy, fz = fx * inv, fy * inv, fz * inv
    hx, hy, hz = b1y * fz - b1z * fy, b1z * fx - b1x * fz, b1x * fy - b1y * fx

    if arc:
        # Root: the shortest arc from the old thigh b1 to the new one g1. Mid: root delta
        # times the shortest arc from the old shin to the new shin turned back by the root.
        qx, qy, qz, qw = _arc(b1x, b1y, b1z, g1x, g1y, g1z, fx, fy, fz, zero, one, eps)
        ox, oy, oz = sx * i2, sy * i2, sz * i2
        kr = reach - x  # new shin: a (reach - x) - u h
        vx, vy, vz = ax * kr - ux * h, ay * kr - uy * h, az * kr - uz * h
        inv = one / _sqrt(_sel(degen, one, vx * vx + vy * vy + vz * vz))
        vx, vy, vz = _rotate(-qx, -qy, -qz, qw, vx * inv, vy * inv, vz * inv, two)
        hx_, hy_, hz_, hw = _arc(ox, oy, oz, vx, vy, vz, fx, fy, fz, zero, one, eps)
    else:
        # Root delta: rotation matrix R = G F^T (columns g1,g2,g3 and b1,f,h), then quaternion
        # from the largest of the four diagonal candidates (Shepperd), branch-free.
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
        tx_ = one + r00 - r11 - r22
        ty_ = one - r00 + r11 - r22
        tz_ = one - r00 - r11 + r22
        qx, qy, qz, qw = r21 - r12, r02 - r20, r10 - r01, tw
        best = tw
        bx_ = tx_ > best
        qx = _sel(bx_, tx_, qx)
        qy = _sel(bx_, r01 + r10, qy)
        qz = _sel(bx_, r02 + r20, qz)
        qw = _sel(bx_, r21 - r12, qw)
        best = _sel(bx_, tx_, best)
        by_ = ty_ > best
        qx = _sel(by_, r01 + r10, qx)
        qy = _sel(by_, ty_, qy)
        qz = _sel(by_, r12 + r21, qz)
        qw = _sel(by_, r02 - r20, qw)
        best = _sel(by_, ty_, best)
        bz_ = tz_ > best
        qx = _sel(bz_, r02 + r20, qx)
        qy = _sel(bz_, r12 + r21, qy)
        qz = _sel(bz_, tz_, qz)
        qw = _sel(bz_, r10 - r01, qw)
        inv = one / np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        inv = _sel(qw < zero, -inv, inv)
        qx, qy, qz, qw = qx * inv, qy * inv, qz * inv, qw * inv
        # Hinge about f by the change of bend angle (beta: angle from thigh to shin about f).
        cb = (bx * sx + by * sy + bz * sz) * i1 * i2
        sb = (fx * nx + fy * ny + fz * nz) * i1 * i2
        il2 = il / _sel(degen, one, l2s)
        cb2 = (x * (reach - x) - hsq) * il2
        sb2 = h * reach * il2
        hs, hw = _half_angle(cb2 * cb + sb2 * sb, sb2 * cb - cb2 * sb, zero, one)

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
    mqx = rw_ * hx_ + rx_ * hw + ry_ * hz_ - rz_ * hy_
    mqy = rw_ * hy_ - rx_ * hz_ + ry_ * hw + rz_ * hx_
    mqz = rw_ * hz_ + rx_ * hy_ - ry_ * hx_ + rz_ * hw
    mqw = rw_ * hw - rx_ * hx_ - ry_ * hy_ - rz_ * hz_

    # Weighted positions: the bones, stretched by sw = 1 + w (s - 1) (s at weight 1),
    # turned by the weighted deltas.
    full_w = w >= one
    sw = _sel(full_w, s, one + (s - one) * w)
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
    nmx = _sel(degen, mx, _sel(full_w, nmx, wmx))
    nmy = _sel(degen, my, _sel(full_w, nmy, wmy))
    nmz = _sel(degen, mz, _sel(full_w, nmz, wmz))
    nex = _sel(degen, ex, _sel(full_w, nex, wex))
    ney = _sel(degen, ey, _sel(full_w, ney, wey))
    nez = _sel(degen, ez, _sel(full_w, nez, wez))
    sgn = _sel(mqw < zero, -one, one)
    fx, fy, fz = nex - tx, ney - ty, nez - tz
    lim = tol * L
    return (
        _sel(chk != chk, 1, 0), nmx, nmy, nmz, nex, ney, nez,
        _sel(degen, zero, rx_), _sel(degen, zero, ry_), _sel(degen, zero, rz_),
        _sel(degen, one, rw_), _sel(degen, zero, mqx * sgn), _sel(degen, zero, mqy * sgn),
        _sel(degen, zero, mqz * sgn), _sel(degen, one, mqw * sgn), _sel(degen, one, sw),
        _sel((fx * fx + fy * fy + fz * fz <= lim * lim) & (not degen), 1, 0),
        _sel(ok_fast != 0, 0, 1),
    )  # fmt: skip
