"""Array-of-structures loops of the two-bone solver (private; called by
:mod:`ikrig.solvers.two_bone._positions`).

The per-element solve and the performance notes are in :mod:`ikrig.kernels.two_bone`.
Every loop takes the points as a tuple ``(root, mid, end, target, pole)`` of raveled
``(N, 3)`` arrays (world space) and packed constants
(:func:`~ikrig.kernels.two_bone.make_constants`): ``consts`` of the data's dtype and
``c64``, the same options in float64.

float32 safety net: float32 runs out of exponent range for chains below about 1e-6 or
lengths above about 1e6 (fourth powers of lengths appear in the "on the line" tests), so
the vectorised loops solve in the data's dtype only elements whose lengths lie in the safe
range (``lo``, ``hi``) and that need no fallback (degenerate chain, target at the root,
pole on the aim line); they mark the others, which a serial pass re-solves in float64.
Inputs are converted to float64 before any subtraction there, so every finite float32
input gives a finite result. The serial AoS kernel (small batches) always computes in
float64. float64 data go through the same loops (the second pass then repeats the same
float64 solve for the marked elements; the range is wide enough that only fallbacks and
NaN/inf inputs are marked).
"""

from __future__ import annotations

import numpy as np

from ..._jit.setup import njit, numba, prange
from ...kernels._two_bone_math import FASTMATH, sel
from ...kernels.two_bone import (
    TwoBoneConstants,
    TwoBonePoints,
    TwoBoneWeights,
    solve_two_bone_fast,
    solve_two_bone_kernel,
    solve_two_bone_serial,
    solve_two_bone_serial_arc,
    unpack_constants,
)

uint64 = numba.uint64  # via ikrig._jit.setup, which must configure Numba's cache first
OPTS = {"cache": True, "error_model": "numpy", "fastmath": FASTMATH}

# Layout of one element of the serial AoS kernel's float output (``(N, OUT_WIDTH)``).
OUT_MID = 0  # 3 values, new mid position
OUT_END = 3  # 3 values, new end position
OUT_QR = 6  # 4 values, root delta xyzw
OUT_QM = 10  # 4 values, mid delta xyzw
OUT_STRETCH = 14
OUT_WIDTH = 15


def named(fn, name, **options):
    """Compile ``fn`` under its own name: Numba names cache files after ``__qualname__``
    (and does not key them on options such as ``parallel``), so each variant needs one."""
    fn.__name__ = fn.__qualname__ = name
    return njit(**OPTS, **options)(fn)


@njit(**OPTS)
def point64(a, j):
    """Element ``j`` (flat index of its x) of a raveled ``(N, 3)`` array, in float64."""
    f = np.float64
    return f(a[j]), f(a[j + 1]), f(a[j + 2])


@njit(inline="always", **OPTS)
def _solve64(points, j, wct, col, k64, arc):
    """:func:`~ikrig.kernels.two_bone.solve_two_bone_kernel` in float64 on element ``j``
    (flat index of its x) of the AoS ``points``, with column ``col`` of ``wct``; ``arc``
    a compile-time constant (both serial solves compile otherwise)."""
    p = TwoBonePoints(
        point64(points[0], j), point64(points[1], j), point64(points[2], j),
        point64(points[3], j), point64(points[4], j),
    )  # fmt: skip
    w = TwoBoneWeights(float(wct[0, col]), float(wct[1, col]), float(wct[2, col]))
    if arc:
        return solve_two_bone_serial_arc(p, w, k64)
    return solve_two_bone_serial(p, w, k64)


@njit(**OPTS)
def _store(out, o, values):
    """``out[o : o + len(values)] = values`` for a tuple of 3 or 4 values."""
    for c in range(len(values)):
        out[o + c] = values[c]


def _make_aos_solve(arc: bool):
    """Full solve over flat AoS arrays, serial and in float64 (small batches, single calls).

    Arguments: ``root, mid, end, target, pole`` raveled ``(N, 3)`` (world space); ``wct``
    ``(3, M)`` rows weight, cos(twist), sin(twist) with ``M`` 1 (broadcast) or ``N``;
    ``c64`` the float64 constants; ``out`` raveled ``(N, OUT_WIDTH)`` of the data's dtype;
    ``out_reached`` ``(N,)`` bool. One output buffer and separate arrays (a tuple of arrays
    costs more to dispatch) keep the per-call overhead small. ``arc`` (shortest-arc
    rotations) is a compile-time constant. Returns the number of elements with a
    non-finite input.
    """

    def kernel(root, mid, end, target, pole, wct, c64, out, out_reached):
        points = (root, mid, end, target, pole)
        k64 = TwoBoneConstants(*unpack_constants(c64))
        step = 1 if wct.shape[1] > 1 else 0
        nbad = 0
        for i in range(out_reached.shape[0]):
            sol = _solve64(points, 3 * i, wct, i * step, k64, arc)
            o = OUT_WIDTH * i
            _store(out, o + OUT_MID, sol.mid)
            _store(out, o + OUT_END, sol.end)
            _store(out, o + OUT_QR, sol.root_delta)
            _store(out, o + OUT_QM, sol.mid_delta)
            out[o + OUT_STRETCH] = sol.stretch
            out_reached[i] = sol.reached != 0
            nbad += sol.bad
        return nbad

    return named(kernel, "aos_solve" + ("_arc" if arc else ""))


# Keyed by shortest arc.
AOS_SERIAL = {arc: _make_aos_solve(arc) for arc in (False, True)}


@njit(**OPTS)
def _aos_redo(points, wct, c64, arc, outs):
    """Re-solve in float64 the elements :func:`_make_aos_parallel`'s loop marked with 2.

    ``outs``: the parallel kernel's output arrays (see there)."""
    # one name per line, indexed: Numba must see these as the argument's arrays, or it
    # drops the writes to them as dead (it does not track arrays unpacked from a tuple)
    out_mid = outs[0]
    out_end = outs[1]
    out_qr = outs[2]
    out_qm = outs[3]
    out_stretch = outs[4]
    out_state = outs[5]
    k64 = TwoBoneConstants(*unpack_constants(c64))
    step = 1 if wct.shape[1] > 1 else 0
    nbad = 0
    for i in range(out_state.shape[0]):
        if out_state[i] != 2:
            continue
        j, q = 3 * i, 4 * i
        sol = _solve64(points, j, wct, i * step, k64, arc)
        _store(out_mid, j, sol.mid)
        _store(out_end, j, sol.end)
        _store(out_qr, q, sol.root_delta)
        _store(out_qm, q, sol.mid_delta)
        out_stretch[i] = sol.stretch
        out_state[i] = sol.reached
        nbad += sol.bad
    return nbad


@njit(**OPTS)
def count_marked(out_state):
    """The number of elements marked 2 (for the float64 pass) in ``out_state``."""
    n = 0
    for i in range(out_state.shape[0]):
        n += out_state[i] == 2
    return n


@njit(**OPTS)
def _count_bad(out_state):
    """Count the elements marked 3 (a non-finite input, float64 data) and unmark them
    (``reached`` False). Returns the count."""
    nbad = 0
    for i in range(out_state.shape[0]):
        if out_state[i] == 3:
            out_state[i] = 0
            nbad += 1
    return nbad


def _make_aos_parallel(f32: bool, arc: bool, fast: bool):
    """Full solve over flat AoS arrays, vectorised and multi-threaded (big batches).

    As :func:`_make_aos_solve`'s kernel, but ``wct`` is ``(3, N)`` (or ``(3, 1)`` for the
    ``fast`` kernels, which ignore it but for the float64 pass), ``consts`` has the data's
    dtype and the outputs are a tuple of separate raveled arrays ``outs``: mid and end
    ``(N, 3)``, deltas ``(N, 4)``, stretch ``(N,)`` and ``out_state`` ``(N,)`` uint8 (the
    bool ``reached`` viewed as bytes). Stride 3 and 4 stores vectorise well; stride 15
    ones do not.

    Compile-time choices: ``f32`` (float32 data), ``arc`` (shortest-arc rotations),
    ``fast`` (the default options: weight 1, no twist, no soft IK or stretch, bend-plane
    rotations; :func:`~ikrig.kernels.two_bone.solve_two_bone_fast`; else
    :func:`~ikrig.kernels.two_bone.solve_two_bone_kernel`). The loop marks an element for
    the float64 pass with 2 (float32 data, or a fast kernel's fallback), or an element with
    a non-finite input with 3 (the general kernel on float64 data, which has no float64
    pass: the element ends with ``reached`` False).

    The loop has no reduction (the marks are counted afterwards): Numba's reduction
    analysis copies the whole, inlined loop body and made this kernel compile 4x slower.
    """
    redo = f32 or fast

    def kernel(points, wct, consts, c64, outs):
        # taken here, outside the loop (the loop body indexes the arrays directly), one
        # per line and indexed: see _aos_redo
        root = points[0]
        mid = points[1]
        end = points[2]
        target = points[3]
        pole = points[4]
        out_mid = outs[0]
        out_end = outs[1]
        out_qr = outs[2]
        out_qm = outs[3]
        out_stretch = outs[4]
        out_state = outs[5]
        k = TwoBoneConstants(*unpack_constants(consts))
        for i in prange(out_state.shape[0]):
            # Unsigned indices: Numba then skips the negative-index wraparound, whose
            # per-element select stops LLVM from vectorising the strided accesses.
            j0 = uint64(3) * uint64(i)
            j1 = j0 + uint64(1)
            j2 = j0 + uint64(2)
            # (the points are built in each call: a name bound to them stops LLVM from
            # vectorising the loop)
            if fast:
                sol = solve_two_bone_fast(
                    TwoBonePoints(
                        (root[j0], root[j1], root[j2]), (mid[j0], mid[j1], mid[j2]),
                        (end[j0], end[j1], end[j2]), (target[j0], target[j1], target[j2]),
                        (pole[j0], pole[j1], pole[j2]),
                    ),
                    k, f32,
                )  # fmt: skip
            else:
                sol = solve_two_bone_kernel(
                    TwoBonePoints(
                        (root[j0], root[j1], root[j2]), (mid[j0], mid[j1], mid[j2]),
                        (end[j0], end[j1], end[j2]), (target[j0], target[j1], target[j2]),
                        (pole[j0], pole[j1], pole[j2]),
                    ),
                    TwoBoneWeights(wct[0, i], wct[1, i], wct[2, i]),
                    k, arc,
                )  # fmt: skip
            out_mid[j0], out_mid[j1], out_mid[j2] = sol.mid
            out_end[j0], out_end[j1], out_end[j2] = sol.end
            k0 = uint64(4) * uint64(i)
            k1, k2, k3 = k0 + uint64(1), k0 + uint64(2), k0 + uint64(3)
            out_qr[k0], out_qr[k1], out_qr[k2], out_qr[k3] = sol.root_delta
            out_qm[k0], out_qm[k1], out_qm[k2], out_qm[k3] = sol.mid_delta
            out_stretch[i] = sol.stretch
            if redo:
                out_state[i] = sel(sol.slow + sol.bad != 0, 2, sol.reached)
            else:
                out_state[i] = sel(sol.bad != 0, 3, sol.reached)
        # serial passes over the marks (no reduction in the parallel loop: Numba's
        # reduction analysis copies the whole loop body and compiles 4x slower)
        if not redo:
            return _count_bad(out_state)
        if count_marked(out_state) == 0:
            return 0
        return _aos_redo(points, wct, c64, arc, outs)

    name = "aos_solve_fast" if fast else "aos_solve_parallel"
    name += ("_arc" if arc else "") + ("_f32" if f32 else "")
    return named(kernel, name, parallel=True)


# Keyed by (float32 data, shortest arc): any options.
AOS_PARALLEL = {
    (f32, arc): _make_aos_parallel(f32, arc, False)
    for f32 in (False, True)
    for arc in (False, True)
}
# Keyed by float32 data: the default options (two kernels more would compile for soft IK
# and stretch: 10 s of a cold machine's warm-up, for options seldom used in big batches).
AOS_FAST = {f32: _make_aos_parallel(f32, False, True) for f32 in (False, True)}
