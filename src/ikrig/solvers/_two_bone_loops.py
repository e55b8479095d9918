"""Array loops of the two-bone solver (private; :mod:`ikrig.solvers.two_bone` calls them).

The per-element math and the performance notes are in
:mod:`ikrig.solvers._two_bone_kernels`. Every loop takes two ``consts`` arrays: ``consts``
of the data's dtype and ``c64``, the same options in float64.

float32 safety net: float32 runs out of exponent range for chains below about 1e-6 or
lengths above about 1e6 (fourth powers of lengths appear in the "on the line" tests), so
the vectorised loops solve in the data's dtype only elements whose lengths lie in the safe
range (``C_LO``, ``C_HI``) and that need no fallback (degenerate chain, target at the root,
pole on the aim line); they mark the others, which a serial pass re-solves in float64.
Inputs are converted to float64 before any subtraction there, so every finite float32
input gives a finite result. The serial AoS kernel (small batches) always computes in
float64. float64 data go through the same loops (the second pass then repeats the same
float64 solve for the marked elements; the range is wide enough that only fallbacks and
NaN/inf inputs are marked).
"""

from __future__ import annotations

import numpy as np

from .._numba import njit, numba, prange
from ._two_bone_kernels import (
    _FASTMATH,
    C_EPS,
    C_HALF,
    C_HI,
    C_LO,
    C_MAX_STRETCH,
    C_ONE,
    C_PERP,
    C_SOFTEN,
    C_THREE,
    C_TOL,
    C_TWO,
    C_ZERO,
    _fast_positions,
    _geometry,
    _sel,
    _solve_core,
    _sqrt,
)

uint64 = numba.uint64  # via ikrig._numba, which must configure Numba's cache first
_OPTS = {"cache": True, "error_model": "numpy", "fastmath": _FASTMATH}

# Layout of one element of the serial AoS kernel's float output (``(N, OUT_WIDTH)``).
OUT_MID = 0  # 3 values, new mid position
OUT_END = 3  # 3 values, new end position
OUT_QR = 6  # 4 values, root delta xyzw
OUT_QM = 10  # 4 values, mid delta xyzw
OUT_STRETCH = 14
OUT_WIDTH = 15


def _named(fn, name, **options):
    """Compile ``fn`` under its own name: Numba names cache files after ``__qualname__``
    (and does not key them on options such as ``parallel``), so each variant needs one."""
    fn.__name__ = fn.__qualname__ = name
    return njit(**_OPTS, **options)(fn)


@njit(**_OPTS)
def _unpack(c):
    """The constants ``(zero, one, half, two, three, soften, max_stretch, tol, eps, perp,
    lo, hi)`` of a ``consts`` array."""
    return (
        c[C_ZERO], c[C_ONE], c[C_HALF], c[C_TWO], c[C_THREE], c[C_SOFTEN], c[C_MAX_STRETCH],
        c[C_TOL], c[C_EPS], c[C_PERP], c[C_LO], c[C_HI],
    )  # fmt: skip


@njit(inline="always", **_OPTS)
def _solve64(root, mid, end, target, pole, j, w, ct, st, c64, arc):
    """:func:`_solve_core` in float64 on element ``j`` (flat index of its x) of AoS arrays."""
    f = np.float64
    return _solve_core(
        f(root[j]), f(root[j + 1]), f(root[j + 2]), f(mid[j]), f(mid[j + 1]), f(mid[j + 2]),
        f(end[j]), f(end[j + 1]), f(end[j + 2]), f(target[j]), f(target[j + 1]),
        f(target[j + 2]), f(pole[j]), f(pole[j + 1]), f(pole[j + 2]), f(w), f(ct), f(st),
        _unpack(c64), arc,
    )  # fmt: skip


@njit(**_OPTS)
def aos_solve(root, mid, end, target, pole, wct, c64, arc, out, out_reached):
    """Full solve over flat AoS arrays, serial and in float64 (small batches, single calls).

    Arguments: ``root, mid, end, target, pole`` raveled ``(N, 3)``; ``wct`` ``(3, M)``
    rows weight, cos(twist), sin(twist) with ``M`` 1 (broadcast) or ``N``; ``c64`` the
    float64 consts; ``arc`` shortest-arc rotations; ``out`` raveled ``(N, OUT_WIDTH)`` of
    the data's dtype; ``out_reached`` ``(N,)`` bool. One output buffer and few arguments
    keep the per-call overhead small. Returns the number of elements with a non-finite
    input.
    """
    step = 1 if wct.shape[1] > 1 else 0
    nbad = 0
    for i in range(out_reached.shape[0]):
        k = i * step
        (
            bad, nmx, nmy, nmz, nex, ney, nez, qrx, qry, qrz, qrw,
            qmx, qmy, qmz, qmw, stretch, reached, _,
        ) = _solve64(
            root, mid, end, target, pole, 3 * i, wct[0, k], wct[1, k], wct[2, k], c64, arc
        )  # fmt: skip
        o = OUT_WIDTH * i
        out[o + 0] = nmx
        out[o + 1] = nmy
        out[o + 2] = nmz
        out[o + 3] = nex
        out[o + 4] = ney
        out[o + 5] = nez
        out[o + 6] = qrx
        out[o + 7] = qry
        out[o + 8] = qrz
        out[o + 9] = qrw
        out[o + 10] = qmx
        out[o + 11] = qmy
        out[o + 12] = qmz
        out[o + 13] = qmw
        out[o + 14] = stretch
        out_reached[i] = reached != 0
        nbad += bad
    return nbad


@njit(**_OPTS)
def _aos_redo(root, mid, end, target, pole, wct, c64, arc, out_mid, out_end, out_qr, out_qm,
              out_stretch, out_state):  # fmt: skip
    """Re-solve in float64 the elements :func:`_make_aos_parallel`'s loop marked with 2."""
    nbad = 0
    for i in range(out_state.shape[0]):
        if out_state[i] != 2:
            continue
        j, k = 3 * i, 4 * i
        (
            bad, out_mid[j], out_mid[j + 1], out_mid[j + 2],
            out_end[j], out_end[j + 1], out_end[j + 2],
            out_qr[k], out_qr[k + 1], out_qr[k + 2], out_qr[k + 3],
            out_qm[k], out_qm[k + 1], out_qm[k + 2], out_qm[k + 3],
            out_stretch[i], out_state[i], _,
        ) = _solve64(
            root, mid, end, target, pole, j, wct[0, i], wct[1, i], wct[2, i], c64, arc
        )  # fmt: skip
        nbad += bad
    return nbad


def _make_aos_parallel(arc: bool, redo: bool):
    """Full solve over flat AoS arrays, vectorised and multi-threaded (big batches).

    As :func:`aos_solve`, but ``wct`` is ``(3, N)``, ``consts`` has the data's dtype and the
    outputs are separate raveled arrays: mid and end ``(N, 3)``, deltas ``(N, 4)``, stretch
    ``(N,)`` and ``out_state`` ``(N,)`` uint8 (the bool ``reached`` viewed as bytes; 2 marks
    an element for the float64 pass). Stride 3 and 4 stores vectorise well; stride 15 ones
    do not. ``arc`` and ``redo`` are compile-time constants; without ``redo`` (float64
    data) nothing is marked and the loop does no more work than it needs.
    """

    def kernel(
        root, mid, end, target, pole, wct, consts, c64,
        out_mid, out_end, out_qr, out_qm, out_stretch, out_state,
    ):  # fmt: skip
        k = _unpack(consts)
        nbad = 0
        nslow = 0
        for i in prange(out_state.shape[0]):
            # Unsigned indices: Numba then skips the negative-index wraparound, whose
            # per-element select stops LLVM from vectorising the strided accesses.
            j0 = uint64(3) * uint64(i)
            j1 = j0 + uint64(1)
            j2 = j0 + uint64(2)
            (
                bad, nmx, nmy, nmz, nex, ney, nez, qrx, qry, qrz, qrw,
                qmx, qmy, qmz, qmw, stretch, reached, slow,
            ) = _solve_core(
                root[j0], root[j1], root[j2], mid[j0], mid[j1], mid[j2],
                end[j0], end[j1], end[j2], target[j0], target[j1], target[j2],
                pole[j0], pole[j1], pole[j2], wct[0, i], wct[1, i], wct[2, i], k, arc,
            )  # fmt: skip
            out_mid[j0] = nmx
            out_mid[j1] = nmy
            out_mid[j2] = nmz
            out_end[j0] = nex
            out_end[j1] = ney
            out_end[j2] = nez
            k0 = uint64(4) * uint64(i)
            out_qr[k0] = qrx
            out_qr[k0 + uint64(1)] = qry
            out_qr[k0 + uint64(2)] = qrz
            out_qr[k0 + uint64(3)] = qrw
            out_qm[k0] = qmx
            out_qm[k0 + uint64(1)] = qmy
            out_qm[k0 + uint64(2)] = qmz
            out_qm[k0 + uint64(3)] = qmw
            out_stretch[i] = stretch
            if redo:
                out_state[i] = _sel(slow != 0, 2, reached)
                nslow += slow
                nbad += _sel(slow != 0, 0, bad)  # counted by the second pass
            else:
                out_state[i] = reached
                nbad += bad
        if nslow == 0:
            return nbad
        return nbad + _aos_redo(
            root, mid, end, target, pole, wct, c64, arc,
            out_mid, out_end, out_qr, out_qm, out_stretch, out_state,
        )  # fmt: skip

    name = "aos_solve_parallel" + ("_arc" if arc else "") + ("_f32" if redo else "")
    return _named(kernel, name, parallel=True)


@njit(**_OPTS)
def _soa_redo(root, mid, end, target, pole, c64, full, out_mid, out_end, out_state):
    """Re-solve in float64 the elements the SoA loop marked with 2 (positions only).
    Returns the number of elements with a non-finite input."""
    f = np.float64
    zero, one, half, _, three, soften, max_stretch, tol, eps, perp, lo, hi = _unpack(c64)
    nbad = 0
    for i in range(out_state.shape[0]):
        if out_state[i] != 2:
            continue
        rx, ry, rz = f(root[0, i]), f(root[1, i]), f(root[2, i])
        mx, my, mz = f(mid[0, i]), f(mid[1, i]), f(mid[2, i])
        ex, ey, ez = f(end[0, i]), f(end[1, i]), f(end[2, i])
        (
            chk, ok_chain, _, l1, l2, L, s, l1s, l2s, reach, x, hsq,
            ax, ay, az, cx, cy, cz, csq, bx, by, bz, sx, sy, sz, dx, dy, dz, nx, ny, nz,
        ) = _geometry(
            rx, ry, rz, mx, my, mz, ex, ey, ez,
            f(target[0, i]), f(target[1, i]), f(target[2, i]),
            f(pole[0, i]), f(pole[1, i]), f(pole[2, i]),
            zero, one, half, three, soften, max_stretch, eps, perp, lo, hi, full,
        )  # fmt: skip
        degen = ok_chain == 0
        hc = _sqrt(hsq / csq)  # h / |c|
        out_mid[0, i] = _sel(degen, mx, rx + ax * x + cx * hc)
        out_mid[1, i] = _sel(degen, my, ry + ay * x + cy * hc)
        out_mid[2, i] = _sel(degen, mz, rz + az * x + cz * hc)
        out_end[0, i] = _sel(degen, ex, rx + ax * reach)
        out_end[1, i] = _sel(degen, ey, ry + ay * reach)
        out_end[2, i] = _sel(degen, ez, rz + az * reach)
        fx, fy, fz = ax * reach - dx, ay * reach - dy, az * reach - dz
        lim = tol * L
        out_state[i] = 1 if (fx * fx + fy * fy + fz * fz <= lim * lim) and not degen else 0
        nbad += chk != chk
    return nbad


def _make_soa_kernel(full: bool, rng: bool):
    """Positions-only kernel over component-first ``(3, N)`` arrays, weight 1, no twist.

    ``full`` enables soft IK and stretch; ``rng`` (float32 data) marks lengths out of the
    dtype's safe range too. ``out_state`` is the ``reached`` output viewed as
    uint8. The vectorised loop solves the common case (:func:`_fast_positions`) and marks
    elements that need a fallback (or float64) with 2; :func:`_soa_redo` then re-solves
    those with :func:`_geometry` in float64. Returns the number of elements with a
    non-finite input.
    """

    def kernel(root, mid, end, target, pole, consts, c64, out_mid, out_end, out_state):
        zero, one, half, _, three, soften, max_stretch, tol, eps, _, lo, hi = _unpack(consts)
        n = root.shape[1]
        nslow = 0
        for i in prange(n):
            slow, nmx, nmy, nmz, nex, ney, nez, reached = _fast_positions(
                root[0, i], root[1, i], root[2, i], mid[0, i], mid[1, i], mid[2, i],
                end[0, i], end[1, i], end[2, i], target[0, i], target[1, i], target[2, i],
                pole[0, i], pole[1, i], pole[2, i],
                zero, one, half, three, soften, max_stretch, tol, eps, lo, hi, full, rng,
            )  # fmt: skip
            out_mid[0, i] = nmx
            out_mid[1, i] = nmy
            out_mid[2, i] = nmz
            out_end[0, i] = nex
            out_end[1, i] = ney
            out_end[2, i] = nez
            out_state[i] = _sel(slow != 0, 2, reached)
            nslow += slow
        if nslow == 0:
            return 0
        return _soa_redo(root, mid, end, target, pole, c64, full, out_mid, out_end, out_state)

    name = "soa_positions" + ("_full" if full else "") + ("_f32" if rng else "")
    return _named(kernel, name, parallel=True)


# Keyed by (float32 data, soft IK or stretch) and (float32 data, shortest arc).
SOA = {(f32, full): _make_soa_kernel(full, f32) for f32 in (False, True) for full in (False, True)}
AOS_PARALLEL = {
    (f32, arc): _make_aos_parallel(arc, f32) for f32 in (False, True) for arc in (False, True)
}
