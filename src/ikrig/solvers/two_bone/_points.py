"""Array-of-structures loop of the two-bone solver, positions only (private; called by
:func:`ikrig.solvers.two_bone.two_bone_points`).

The positions-only solve of :mod:`._soa` (:func:`~._soa._fast_positions` in the
vectorised loop, :func:`~._soa.slow_positions` in float64 for the elements it marks) over
raveled ``(N, 3)`` arrays, the layout most callers hold. Without the two rotation deltas
and the stretch of :func:`~._loops._make_aos_parallel`'s kernels, the loop reads 15 and
writes 6 numbers per element, and its stride-3 accesses vectorise (unsigned indices, as
there).
"""

from __future__ import annotations

from ..._jit.setup import njit, prange
from ...kernels._two_bone_math import sel
from ...kernels.two_bone import TwoBoneConstants, TwoBonePoints, unpack_constants
from ._loops import OPTS, count_marked, named, point64, uint64
from ._soa import _fast_positions, slow_positions


@njit(**OPTS)
def _points_redo(points, c64, full, outs):
    """Re-solve in float64 the elements :func:`_make_points_kernel`'s loop marked with 2.

    ``points``: ``(root, mid, end, target, pole)`` raveled ``(N, 3)`` arrays; ``outs``:
    ``(out_mid, out_end, out_state)``. Returns the number of elements with a non-finite
    input."""
    # one name per line, indexed (see _loops._aos_redo)
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
        j = 3 * i
        sol = slow_positions(
            TwoBonePoints(point64(root, j), point64(mid, j), point64(end, j),
                          point64(target, j), point64(pole, j)),
            k,
            full,
        )  # fmt: skip
        out_mid[j], out_mid[j + 1], out_mid[j + 2] = sol.mid
        out_end[j], out_end[j + 1], out_end[j + 2] = sol.end
        out_state[i] = sol.state
        nbad += sol.bad
    return nbad


def _make_points_kernel(full: bool, rng: bool, parallel: bool):
    """Positions-only kernel over raveled ``(N, 3)`` arrays, weight 1, no twist.

    Arguments as :func:`~._soa._make_soa_kernel`'s, the arrays raveled ``(N, 3)`` (world
    space): ``out_mid``, ``out_end`` raveled ``(N, 3)``, ``out_state`` ``(N,)`` uint8.
    ``parallel``: the threaded loop (big batches) or a serial one (no thread pool to wake).
    Returns the number of elements with a non-finite input.
    """

    def kernel(root, mid, end, target, pole, consts, c64, out_mid, out_end, out_state):
        k = TwoBoneConstants(*unpack_constants(consts))
        for i in prange(out_state.shape[0]):
            j0 = uint64(3) * uint64(i)  # unsigned: no wraparound select (see _loops)
            j1 = j0 + uint64(1)
            j2 = j0 + uint64(2)
            sol = _fast_positions(
                TwoBonePoints(
                    (root[j0], root[j1], root[j2]), (mid[j0], mid[j1], mid[j2]),
                    (end[j0], end[j1], end[j2]), (target[j0], target[j1], target[j2]),
                    (pole[j0], pole[j1], pole[j2]),
                ),
                k, full, rng,
            )  # fmt: skip
            out_mid[j0], out_mid[j1], out_mid[j2] = sol.mid
            out_end[j0], out_end[j1], out_end[j2] = sol.end
            out_state[i] = sel(sol.slow != 0, 2, sol.reached)
        if count_marked(out_state) == 0:
            return 0
        return _points_redo((root, mid, end, target, pole), c64, full,
                            (out_mid, out_end, out_state))  # fmt: skip

    name = ("aos_points" + ("_full" if full else "") + ("_f32" if rng else "")
            + ("_par" if parallel else ""))  # fmt: skip
    return named(kernel, name, parallel=parallel)


# Keyed by (float32 data, soft IK or stretch, parallel).
POINTS = {
    (f32, full, par): _make_points_kernel(full, f32, par)
    for f32 in (False, True)
    for full in (False, True)
    for par in (False, True)
}
