"""Position-level entry points of the two-bone solver: :func:`two_bone_positions` (any
batch shape, rotation deltas too), :func:`two_bone_positions_only` (any batch shape,
positions only) and :func:`two_bone_positions_soa` (big component-first batches, positions
only). See :mod:`ikrig.solvers.two_bone` for the algorithm.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from ..._checks import check_finite_each
from ..._jit.setup import notify_compiling
from ...errors import InputError
from ...kernels.two_bone import make_constants
from . import _loops as KL
from ._args import (
    _F32,
    _F64,
    _chain_points,
    _check_out,
    _dtype_and_batch,
    _filled_rows,
    _flat,
    _scalar_or_array,
    _single_problem,
    _weight_rows,
)
from ._points import POINTS
from ._soa import SOA
from ._types import TwoBoneOptions, TwoBonePositions, TwoBonePositionsOnly, TwoBoneSoA

_finite = math.isfinite
# Batches at least this big go to the multi-threaded, vectorised kernels; smaller ones to
# the serial kernel. Waking the (passively waiting) thread pool costs 70-100 us, so the
# parallel kernel pays from about 700 elements in float64 and 400 in float32 (2 threads,
# AVX2; measured 2.6x slower at 256, 1.3x faster at 1024). The built-in walk's 360 frames
# stay serial: a first run compiles only the serial kernel, whose per-element solve it
# shares with the foot pipeline.
PARALLEL_MIN = 768


@lru_cache(maxsize=64)
def _consts(dtype: np.dtype, soften: float, max_stretch: float, tolerance: float):
    """``(consts, c64)``: the kernels' constants for data of ``dtype``, in that dtype and
    in float64 (float32 data out of float32's safe range are solved in float64)."""
    return tuple(
        make_constants(dtype, soften, max_stretch, tolerance, f64) for f64 in (False, True)
    )


_notified = False


def _notify() -> None:
    global _notified
    if not _notified:
        _notified = True
        notify_compiling()


# ---------------------------------------------------------------------- position level


def two_bone_positions(
    root_world: ArrayLike,
    mid_world: ArrayLike,
    end_world: ArrayLike,
    target_world: ArrayLike,
    pole_world: ArrayLike | None = None,
    weight: ArrayLike = 1.0,
    twist_angle: ArrayLike = 0.0,
    options: TwoBoneOptions | None = None,
) -> TwoBonePositions:
    """Solve two-bone IK on world positions.

    Args:
        root_world: ``(..., 3)`` root joint (hip, shoulder), world space. It does not move.
        mid_world: ``(..., 3)`` mid joint (knee, elbow), world space.
        end_world: ``(..., 3)`` end joint (ankle, wrist), world space.
        target_world: ``(..., 3)`` where the end should go, world space.
        pole_world: ``(..., 3)`` a world-space *point* the mid joint should point toward
            (the "hint"): the mid joint ends in the plane of root, target and pole, on the
            pole's side. Default ``None``: the current mid position (the knee keeps its
            plane).
        weight: scalar or array broadcast to the batch, clamped to ``[0, 1]``: each
            rotation delta is blended from the identity (normalised lerp, as in ozz) and the
            stretch ``s`` from 1 (``1 + weight (s - 1)``); the positions are the old bones
            scaled and turned by these; default 1.
        twist_angle: scalar or array broadcast to the batch, radians: turns the solved
            chain about the root->target axis (right-handed); default 0.
        options: :class:`TwoBoneOptions` (``soften``, ``max_stretch``, ``tolerance``,
            ``root_rotation``).

    All arguments broadcast together. float32 positions give float32 outputs (whatever
    the dtype of ``weight`` and ``twist_angle``), computed in float32 where that is safe
    and in float64 otherwise (tiny or huge lengths, fallbacks, small batches); anything
    else is computed in float64.

    The root delta is not the shortest arc by default: it takes the old bend plane onto
    the new one (the knee stays a hinge), which can add a twist about the thigh. Pass
    ``TwoBoneOptions(root_rotation="shortest_arc")`` for minimal rotations.

    Returns:
        :class:`TwoBonePositions` with ``mid_world``, ``end_world`` ``(..., 3)``,
        ``root_rotation_world``, ``mid_rotation_world`` ``(..., 4)`` (world-space deltas,
        ``w >= 0``), ``reached`` ``(...)`` and ``stretch`` ``(...)``.

    Degenerate problems (per element; they never raise and never give NaN):

    * pole on the root->target line: the current mid position is used as the pole; if it
      is on the line too, the current bend plane and direction are kept (normal of root,
      mid, end); if the chain is straight as well, a fixed perpendicular of the aim axis
      (``axis x X``, or ``axis x Y`` when the axis is near X);
    * target at the root (closer than ~1e-5 of the chain's length): the chain folds along
      the current root->end direction (the end returns onto the root when ``l1 == l2``,
      and the mid joint then keeps its offset along that direction, as in ozz);
    * a zero-length bone (shorter than ~1e-5 of the other): the pose is returned
      unchanged with identity deltas and ``reached`` False;
    * an unreachable target: the chain straightened toward it (stretched when
      ``max_stretch > 1``), ``reached`` False unless within tolerance.

    ``reached`` is geometric: the final end lies within ``tolerance * L`` of the target,
    so ``weight < 1`` or softening that leaves the end short is not reached.

    Raises:
        InputError: wrong shapes, batch shapes that do not broadcast, or NaN/inf inputs
            (the message names the argument). Finiteness is checked inside the kernel,
            through squared lengths (in float64 for float32 data): coordinates must keep
            those finite (any finite float32; below about 1e150 in float64).

    Example:
        >>> import numpy as np
        >>> r = two_bone_positions([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], [0.3, 0.2, 0.2])
        >>> bool(r.reached), np.round(r.end_world, 6).tolist()
        (True, [0.3, 0.2, 0.2])
    """
    if options is None:
        options = _DEFAULT_OPTIONS
    # 1. validate (finiteness is checked inside the kernel)
    fast = _single_problem(root_world, mid_world, end_world, target_world, pole_world)
    if fast is not None:  # one problem, float ndarrays of shape (3,) ready for the kernel
        root, mid, end, target, pole = fr, fm, fe, ft, fp = fast
        dt, batch, n = root.dtype, (), 1
    else:
        root, mid, end, target, pole = _chain_points(
            root_world, mid_world, end_world, target_world, pole_world
        )
    w = weight
    if type(w) is not float or not _finite(w):
        w = _scalar_or_array(weight, "weight")
    tw = twist_angle
    if type(tw) is not float or not _finite(tw):
        tw = _scalar_or_array(twist_angle, "twist_angle")
    if fast is None or type(w) is not float or type(tw) is not float:
        dt, batch, n = _dtype_and_batch(root, mid, end, target, pole, w, tw)
        fr, fm = _flat(root, batch, dt), _flat(mid, batch, dt)
        fe, ft = _flat(end, batch, dt), _flat(target, batch, dt)
        fp = fm if pole is None else _flat(pole, batch, dt)
    elif pole is None:
        fp = fm

    # 2. run
    if options is _DEFAULT_OPTIONS:
        (consts, c64), arc = _DEFAULT_CONSTS[dt], False
    else:
        consts, c64 = _consts(dt, options.soften, options.max_stretch, options.tolerance)
        arc = options.root_rotation == "shortest_arc"
    if not _notified:
        _notify()
    reached = np.empty(batch, dtype=np.bool_)
    flat_reached = reached if reached.ndim == 1 else reached.reshape(n)
    unweighted = type(w) is float and w >= 1.0 and type(tw) is float and tw == 0.0
    if n < PARALLEL_MIN:
        # serial kernel: weights broadcast, one output buffer (few objects per call)
        wct = _UNWEIGHTED[dt] if unweighted else _weight_rows(w, tw, batch, n, dt, True)
        out = np.empty(batch + (KL.OUT_WIDTH,), dtype=dt)
        flat_out = out if out.ndim == 1 else out.reshape(n * KL.OUT_WIDTH)
        nbad = KL.AOS_SERIAL[arc](fr, fm, fe, ft, fp, wct, c64, flat_out, flat_reached)
        result = _positions_result(out, reached)
    else:
        if unweighted and not arc and options.soften >= 1.0 and options.max_stretch <= 1.0:
            # the default options: the common case, then the fallbacks in float64
            wct = _UNWEIGHTED[dt]
            kernel = KL.AOS_FAST[dt == _F32]
        else:
            wct = _filled_rows(dt, n) if unweighted else _weight_rows(w, tw, batch, n, dt, False)
            kernel = KL.AOS_PARALLEL[dt == _F32, arc]
        mid_o, end_o, qr_o, qm_o, stretch_o = _output_views(batch, n, dt)
        outs = (
            mid_o.reshape(-1), end_o.reshape(-1), qr_o.reshape(-1), qm_o.reshape(-1),
            stretch_o.reshape(-1), flat_reached.view(np.uint8),
        )  # fmt: skip
        nbad = kernel((fr, fm, fe, ft, fp), wct, consts, c64, outs)
        result = TwoBonePositions(mid_o, end_o, qr_o, qm_o, reached, stretch_o)
    if nbad:
        # names the first argument holding NaN/inf; none may (squared lengths overflowed)
        check_finite_each(
            root_world=root, mid_world=mid, end_world=end, target_world=target,
            pole_world=pole, weight=w,
        )  # fmt: skip
    return result


_WIDTHS = (3, 3, 4, 4, 1)  # mid, end, root delta, mid delta, stretch
_ALIGN = 16  # elements: each view starts on a 64-byte boundary of the buffer


def _output_views(batch: tuple, n: int, dt: np.dtype) -> list[np.ndarray]:
    """The parallel kernels' outputs (mid, end ``(..., 3)``, deltas ``(..., 4)``, stretch
    ``(...)``) as contiguous views of one buffer. One allocation, not five: glibc's malloc
    serves a block freed back to it again from its heap (its mmap threshold rises to the
    freed size), so repeated big calls reuse warm pages; five separate ones of 1.2-1.6 MB
    each were returned to the system and faulted in again on every call (measured: the
    kernel 0.73 ms of a 2.9 ms call at N = 100,000, float32, one thread)."""
    sizes = [-(-n * w // _ALIGN) * _ALIGN for w in _WIDTHS]
    buf = np.empty(sum(sizes), dt)
    views, at = [], 0
    for w, size in zip(_WIDTHS, sizes):
        views.append(buf[at : at + n * w].reshape(batch + ((w,) if w > 1 else ())))
        at += size
    return views


def _positions_result(out: np.ndarray, reached: np.ndarray) -> TwoBonePositions:
    """Views of the kernel's output buffer as a :class:`TwoBonePositions` (fast init)."""
    res = _new_positions(TwoBonePositions)
    d = res.__dict__
    d["mid_world"] = out[..., KL.OUT_MID : KL.OUT_MID + 3]
    d["end_world"] = out[..., KL.OUT_END : KL.OUT_END + 3]
    d["root_rotation_world"] = out[..., KL.OUT_QR : KL.OUT_QR + 4]
    d["mid_rotation_world"] = out[..., KL.OUT_QM : KL.OUT_QM + 4]
    d["reached"] = reached
    d["stretch"] = out[..., KL.OUT_STRETCH]
    return res


_DEFAULT_OPTIONS = TwoBoneOptions()
_new_positions = object.__new__
_DEFAULT_CONSTS = {dt: _consts(dt, 1.0, 1.0, _DEFAULT_OPTIONS.tolerance) for dt in (_F32, _F64)}
# weight 1, cos 1, sin 0 for the serial kernel (one column, broadcast)
_UNWEIGHTED = {dt: np.array([[1.0], [1.0], [0.0]], dtype=dt) for dt in (_F32, _F64)}


def two_bone_positions_only(
    root_world: ArrayLike,
    mid_world: ArrayLike,
    end_world: ArrayLike,
    target_world: ArrayLike,
    pole_world: ArrayLike | None = None,
    options: TwoBoneOptions | None = None,
) -> TwoBonePositionsOnly:
    """Two-bone IK on world positions, the new positions only (no rotation deltas).

    The solve of :func:`two_bone_positions` at weight 1 and no twist, for callers that
    need where the knee and ankle go and not how the joints turn: a rig that places
    points, a retargeting step that aims its own bones, a check of reach over a library.
    Without the two rotation deltas and the stretch it does about half the work, and on
    big batches it reads and writes ``(N, 3)`` rows about as fast as
    :func:`two_bone_positions_soa` reads its ``(3, N)`` columns, so there is no need to
    transpose. For rotations, weights or twist, use :func:`two_bone_positions`.

    Args:
        root_world, mid_world, end_world, target_world: ``(..., 3)`` as for
            :func:`two_bone_positions` (world space); the root does not move.
        pole_world: ``(..., 3)`` the knee's pole point, or ``None`` (the current mid).
        options: :class:`TwoBoneOptions` (``soften``, ``max_stretch``, ``tolerance``;
            the rotation options do not change positions).

    All arguments broadcast together; float32 positions give float32 outputs (solved in
    float32 where that is safe, else in float64), anything else float64. The same
    positions as :func:`two_bone_positions` up to rounding, and the same ``reached``;
    degenerate problems fall back as there (a degenerate chain is returned unchanged).

    Returns:
        :class:`TwoBonePositionsOnly` with ``mid_world``, ``end_world`` ``(..., 3)`` and
        ``reached`` ``(...)``.

    Raises:
        InputError: wrong shapes, batch shapes that do not broadcast, NaN/inf inputs.

    Example:
        >>> import numpy as np
        >>> r = two_bone_positions_only([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], [0.3, 0.2, 0.2])
        >>> bool(r.reached), np.round(r.end_world, 6).tolist()
        (True, [0.3, 0.2, 0.2])
    """
    if options is None:
        options = _DEFAULT_OPTIONS
    fast = _single_problem(root_world, mid_world, end_world, target_world, pole_world)
    if fast is not None:
        root, mid, end, target, pole = fr, fm, fe, ft, fp = fast
        dt, batch, n = root.dtype, (), 1
        if pole is None:
            fp = fm
    else:
        root, mid, end, target, pole = _chain_points(
            root_world, mid_world, end_world, target_world, pole_world
        )
        dt, batch, n = _dtype_and_batch(root, mid, end, target, pole, 1.0, 0.0)
        fr, fm = _flat(root, batch, dt), _flat(mid, batch, dt)
        fe, ft = _flat(end, batch, dt), _flat(target, batch, dt)
        fp = fm if pole is None else _flat(pole, batch, dt)
    if options is _DEFAULT_OPTIONS:
        consts, c64 = _DEFAULT_CONSTS[dt]
    else:
        consts, c64 = _consts(dt, options.soften, options.max_stretch, options.tolerance)
    full = options.soften < 1.0 or options.max_stretch > 1.0
    if not _notified:
        _notify()
    out_mid, out_end = np.empty(batch + (3,), dt), np.empty(batch + (3,), dt)
    reached = np.empty(batch, dtype=np.bool_)
    kernel = POINTS[dt == _F32, full, n >= PARALLEL_MIN]
    nbad = kernel(fr, fm, fe, ft, fp, consts, c64, out_mid.reshape(-1), out_end.reshape(-1),
                  reached.reshape(-1).view(np.uint8))  # fmt: skip
    if nbad:
        check_finite_each(
            root_world=root, mid_world=mid, end_world=end, target_world=target,
            pole_world=pole,
        )  # fmt: skip
    return TwoBonePositionsOnly(out_mid, out_end, reached)


def two_bone_positions_soa(
    root: np.ndarray,
    mid: np.ndarray,
    end: np.ndarray,
    target: np.ndarray,
    pole: np.ndarray | None = None,
    weight: ArrayLike = 1.0,
    out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    options: TwoBoneOptions | None = None,
) -> TwoBoneSoA:
    """Two-bone IK for big batches stored component-first (structure of arrays).

    The same solve as :func:`two_bone_positions`, positions only. With the default weight
    the kernel runs over contiguous rows of x, y and z and vectorises (AVX); elements that
    need a fallback (degenerate chain, target at the root, pole on the aim line) are
    re-solved in a second, serial pass.

    Args:
        root: ``(3, N)`` root joint positions, world space (float32 or float64).
        mid: ``(3, N)`` mid joint positions, world space.
        end: ``(3, N)`` end joint positions, world space.
        target: ``(3, N)`` targets, world space.
        pole: ``(3, N)`` pole points, world space; default ``None``: the current mid.
        weight: scalar or ``(N,)``; anything but the default 1 runs the general
            (array-of-structures) path on transposed copies.
        out: optional ``(mid_out (3, N), end_out (3, N), reached_out (N,) bool)`` to write
            into (C-contiguous, the input dtype).
        options: :class:`TwoBoneOptions`.

    Returns:
        :class:`TwoBoneSoA` ``(mid_world (3, N), end_world (3, N), reached (N,))``.

    Raises:
        InputError: wrong shapes or dtypes (all inputs must share one float dtype and be
            C-contiguous ``(3, N)``; read-only ones are copied), or NaN/inf inputs (the
            message names the argument).

    Example:
        >>> import numpy as np
        >>> col = lambda *p: np.array(p, dtype=np.float32).reshape(3, 1)
        >>> r = two_bone_positions_soa(col(0, 1, 0), col(0, 0.5, 0.1), col(0, 0, 0),
        ...                            col(0.3, 0.2, 0.2))
        >>> bool(r.reached[0]), np.round(r.end_world[:, 0].astype(float), 5).tolist()
        (True, [0.3, 0.2, 0.2])
    """
    if options is None:
        options = _DEFAULT_OPTIONS
    arrays = [("root", root), ("mid", mid), ("end", end), ("target", target)]
    if pole is not None:
        arrays.append(("pole", pole))
    first = arrays[0][1]
    if not isinstance(first, np.ndarray) or first.dtype not in (_F32, _F64):
        raise InputError(f"root: expected a float32 or float64 (3, N) array, got {first!r:.60}")
    dt = first.dtype
    for name, a in arrays:
        if not isinstance(a, np.ndarray) or a.dtype != dt:
            raise InputError(f"{name}: expected a {dt} array like root, got {type(a).__name__}")
        if a.ndim != 2 or a.shape[0] != 3 or a.shape != first.shape:
            raise InputError(f"{name}: expected shape (3, N) = {first.shape}, got {a.shape}")
        if not a.flags.c_contiguous:
            raise InputError(f"{name}: must be C-contiguous (use np.ascontiguousarray)")
    # read-only arrays are another type to Numba (another compilation): copy them
    arrays = [(name, a if a.flags.writeable else a.copy()) for name, a in arrays]
    root, mid, end, target = (a for _, a in arrays[:4])
    if pole is not None:
        pole = arrays[4][1]
    n = first.shape[1]
    if out is None:
        out_mid = np.empty((3, n), dtype=dt)
        out_end = np.empty((3, n), dtype=dt)
        out_reached = np.empty(n, dtype=np.bool_)
    else:
        out_mid, out_end, out_reached = _check_out(out, dt, n)
    if not (isinstance(weight, (float, int)) and weight >= 1.0):
        # general path: transpose, solve, transpose back
        r = two_bone_positions(
            root.T, mid.T, end.T, target.T, None if pole is None else pole.T, weight,
            options=options,
        )  # fmt: skip
        out_mid[...] = r.mid_world.T
        out_end[...] = r.end_world.T
        out_reached[...] = r.reached
        return TwoBoneSoA(out_mid, out_end, out_reached)
    consts, c64 = _consts(dt, options.soften, options.max_stretch, options.tolerance)
    kernel = SOA[dt == _F32, options.soften < 1.0 or options.max_stretch > 1.0]
    _notify()
    nbad = kernel(
        root, mid, end, target, mid if pole is None else pole, consts, c64,
        out_mid, out_end, out_reached.view(np.uint8),
    )  # fmt: skip
    if nbad:
        check_finite_each(**dict(arrays))
    return TwoBoneSoA(out_mid, out_end, out_reached)
