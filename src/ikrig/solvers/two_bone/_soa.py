"""Structure-of-arrays loop of the two-bone solver, positions only (private; called by
:func:`ikrig.solvers.two_bone.two_bone_positions_soa`).

The loop solves the common case without fallbacks (:func:`_fast_positions`, half the
work of the full geometry) and marks the rest, which a serial pass (:func:`_soa_redo`)
re-solves in float64 with :func:`~ikrig.kernels._two_bone_math.geometry`. See
:mod:`ikrig.kernels.two_bone` for the algorithm and the performance notes and
:mod:`ikrig.solvers.two_bone._loops` for the float32 safety net.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._jit.setup import njit, prange
from ...kernels._two_bone_math import INLINE, fast_geometry, geometry, sel, sqrt_abs
from ...kernels.two_bone import TwoBoneConstants, TwoBonePoints, unpack_constants
from ._loops import OPTS, count_marked, named


class FastPositions(NamedTuple):
    """Result of :func:`_fast_positions` (flags are ints 0/1)."""

    slow: int  # 1: re-solve this element in the serial pass
    mid: tuple  # new mid position (x, y, z), world space
    end: tuple  # new end position, world space
    reached: int


@njit(**INLINE)
def _fast_positions(p, k, full, rng):
    """Positions-only solve of the common case, without the fallbacks of ``geometry``.

    ``p``: :class:`~ikrig.kernels.two_bone.TwoBonePoints`; ``k``:
    :class:`~ikrig.kernels.two_bone.TwoBoneConstants`. ``full`` (compile-time) enables
    soft IK and stretch; ``rng`` (compile-time): also mark lengths out of
    ``[k.lo, k.hi]`` (float32 data).

    Returns :class:`FastPositions`. ``slow`` is 1 when a fallback may be needed (degenerate
    chain, target at the root, pole on the aim line), a length is out of the dtype's safe
    range or an input is not finite (see
    :func:`~ikrig.kernels._two_bone_math.fast_geometry`); the caller re-solves such
    elements with ``geometry``, which also flags bad inputs. Skipping the fallbacks and the
    NaN bookkeeping halves the cost of the common case.
    """
    g = fast_geometry(p, k, full, rng)
    rx, ry, rz = p.root
    ax, ay, az = g.aim
    cx, cy, cz = g.bend
    x, reach = g.x, g.reach
    hc = sqrt_abs(g.hsq / g.bend_sq)  # h / |c|
    err = reach - g.d  # the end lands on the aim line: its distance to the target
    return FastPositions(
        sel(g.ok != 0, 0, 1),
        (rx + ax * x + cx * hc, ry + ay * x + cy * hc, rz + az * x + cz * hc),
        (rx + ax * reach, ry + ay * reach, rz + az * reach),
        sel(abs(err) <= k.tolerance * g.length, 1, 0),
    )


@njit(**OPTS)
def _column64(a, i):
    """Column ``i`` of a ``(3, N)`` array, in float64."""
    f = np.float64
    return f(a[0, i]), f(a[1, i]), f(a[2, i])


class SlowPositions(NamedTuple):
    """Result of :func:`slow_positions`."""

    mid: tuple  # new mid position (x, y, z), world space
    end: tuple  # new end position
    state: int  # 1 reached, 0 not (or a degenerate chain, returned as it was)
    bad: int  # 1: an input was not finite


@njit(**INLINE)
def slow_positions(p, k, full):
    """The full positions-only solve of one element, fallbacks included, in float64:
    ``p`` float64 :class:`~ikrig.kernels.two_bone.TwoBonePoints`, ``k`` float64 constants.
    A degenerate chain is returned as it was. Returns :class:`SlowPositions`."""
    g = geometry(p, k, full)
    degen = g.ok_chain == 0
    x, reach, L = g.x, g.reach, g.length
    rx, ry, rz = p.root
    mx, my, mz = p.mid
    ex, ey, ez = p.end
    ax, ay, az = g.aim
    cx, cy, cz = g.bend
    dx, dy, dz = g.to_target
    hc = sqrt_abs(g.hsq / g.bend_sq)  # h / |c|
    mid = (sel(degen, mx, rx + ax * x + cx * hc), sel(degen, my, ry + ay * x + cy * hc),
           sel(degen, mz, rz + az * x + cz * hc))  # fmt: skip
    end = (sel(degen, ex, rx + ax * reach), sel(degen, ey, ry + ay * reach),
           sel(degen, ez, rz + az * reach))  # fmt: skip
    fx, fy, fz = ax * reach - dx, ay * reach - dy, az * reach - dz
    lim = k.tolerance * L
    ok = (fx * fx + fy * fy + fz * fz <= lim * lim) and not degen
    return SlowPositions(mid, end, 1 if ok else 0, 1 if g.chk != g.chk else 0)


@njit(**OPTS)
def _soa_redo(points, c64, full, outs):
    """Re-solve in float64 the elements the SoA loop marked with 2 (positions only).

    ``points``: ``(root, mid, end, target, pole)`` ``(3, N)`` arrays; ``outs``:
    ``(out_mid, out_end, out_state)``. Returns the number of elements with a non-finite
    input."""
    # one name per line, indexed (see _two_bone_loops._aos_redo)
    root = points[0]
    mid = points[1]
    end = points[2]
    target = points[3]
    pole = points[4]
    out_mid = outs[0]
    out_end = outs[1]
    out_state = outs[2]
    k = TwoBoneConstants(*unpack_constants(c64))
    nbad = 0
    for i in range(out_state.shape[0]):
        if out_state[i] != 2:
            continue
        sol = slow_positions(
            TwoBonePoints(
                _column64(root, i), _column64(mid, i), _column64(end, i),
                _column64(target, i), _column64(pole, i),
            ),
            k,
            full,
        )  # fmt: skip
        out_mid[0, i], out_mid[1, i], out_mid[2, i] = sol.mid
        out_end[0, i], out_end[1, i], out_end[2, i] = sol.end
        out_state[i] = sol.state
        nbad += sol.bad
    return nbad


def _make_soa_kernel(full: bool, rng: bool):
    """Positions-only kernel over component-first ``(3, N)`` arrays, weight 1, no twist.

    ``root, mid, end, target, pole``: ``(3, N)`` arrays (world space); ``consts``, ``c64``:
    packed constants of the data's dtype and float64; ``out_mid``, ``out_end`` ``(3, N)``
    and ``out_state`` ``(N,)``, the ``reached`` output viewed as uint8. Separate arrays,
    not tuples: this kernel also serves single calls, and a tuple of arrays costs more to
    dispatch. ``full`` enables soft IK and stretch; ``rng`` (float32 data)
    marks lengths out of the dtype's safe range too. The vectorised loop solves the common
    case (:func:`_fast_positions`) and marks elements that need a fallback (or float64)
    with 2; :func:`_soa_redo` then re-solves those. Returns the number of elements with a
    non-finite input.
    """

    def kernel(root, mid, end, target, pole, consts, c64, out_mid, out_end, out_state):
        k = TwoBoneConstants(*unpack_constants(consts))
        n = root.shape[1]
        for i in prange(n):
            sol = _fast_positions(
                TwoBonePoints(
                    (root[0, i], root[1, i], root[2, i]), (mid[0, i], mid[1, i], mid[2, i]),
                    (end[0, i], end[1, i], end[2, i]),
                    (target[0, i], target[1, i], target[2, i]),
                    (pole[0, i], pole[1, i], pole[2, i]),
                ),
                k, full, rng,
            )  # fmt: skip
            out_mid[0, i], out_mid[1, i], out_mid[2, i] = sol.mid
            out_end[0, i], out_end[1, i], out_end[2, i] = sol.end
            out_state[i] = sel(sol.slow != 0, 2, sol.reached)
        # the marks are counted after the loop: a reduction in the parallel loop makes
        # Numba copy the whole loop body and compile several times slower
        if count_marked(out_state) == 0:
            return 0
        return _soa_redo((root, mid, end, target, pole), c64, full, (out_mid, out_end, out_state))

    name = "soa_positions" + ("_full" if full else "") + ("_f32" if rng else "")
    return named(kernel, name, parallel=True)


# Keyed by (float32 data, soft IK or stretch).
SOA = {(f32, full): _make_soa_kernel(full, f32) for f32 in (False, True) for full in (False, True)}
