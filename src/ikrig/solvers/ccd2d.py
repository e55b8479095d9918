"""Planar cyclic coordinate descent on joint angles, with per-joint angle limits.

The classic 2D CCD of game engines (Unity's 2D IK, for example): a planar chain in the XY
plane is described by its bone lengths and its joint angles, each the signed angle
(counter-clockwise, radians) from the parent bone to the bone. The root's angle is measured
from the root bone's **input (rest) direction**, as :class:`~ikrig.constraints.AngleLimit2D`
measures a chain root's angle and as every chain solver reads a position-level input pose
(see ``docs/solvers.md``): a root limit of ``[-30, 30]`` degrees keeps the root bone within 30
degrees of where it started, whichever way the chain points. Each iteration sweeps from the
joint before the effector back to the root; each joint turns by the signed angle between its
joint-to-effector and joint-to-target directions, clamped to ``max_step``, and its angle is
clamped to its limits: a turn stops at the limit it runs into (the joint cannot pass through
the forbidden arc), while a start angle outside its limits goes to the nearer end on the
circle (see :class:`~ikrig.constraints.AngleLimit2D`). As in 3D CCD
(:mod:`ikrig.solvers.ccd`), the fixed turn that bends a chain lying straight on the target
line is made only at a saddle of the error, and the best pose seen is returned.

:func:`ccd_2d` is batched over any leading shape and keeps float32 as float32.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from .._checks import (
    as_points,
    batch_shape,
    check_options,
    raise_nonfinite,
)
from .._jit.setup import notify_compiling
from ..constraints import AngleLimit2D
from ..errors import InputError
from . import _ccd2d_kernels as K
from ._harness.problem import flat, frozen, init_options, result_dtype
from ._harness.run import finish, per_problem
from ._harness.single import OUT_FIELDS, solve_one, written_to
from .result import SolveResult

__all__ = ["CCD2DOptions", "CCD2DResult", "ccd_2d"]


@dataclass(frozen=True)
class CCD2DOptions:
    """Options of the planar CCD solver (validated on construction).

    Attributes:
        max_iterations: sweeps before giving up (0 only measures the start pose).
        tolerance: reached within ``tolerance * L`` of the target, ``L`` the chain length.
        max_step: largest turn of one joint per sweep, radians, or ``None``.
        bend_axis: ``None`` (+Z) or ``(0, 0, +-1)``: the axis a joint turns about first
            when the whole chain lies on the target line at a saddle of the error (a
            straight chain and a target straight ahead but nearer, or behind): +Z is
            counter-clockwise. If its limit blocks that way it tries the other.

    Raises:
        InputError: a value out of range, a bend axis not along Z.

    Example:
        >>> CCD2DOptions(max_step=math.radians(30), bend_axis=(0, 0, -1)).bend_axis
        (0.0, 0.0, -1.0)
    """

    max_iterations: int = 100
    tolerance: float = 1e-3
    max_step: float | None = None
    bend_axis: tuple[float, float, float] | None = None
    _settings: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        init_options(self)
        axis = self.bend_axis
        if axis is not None and (axis[0] != 0 or axis[1] != 0):
            raise InputError(f"bend_axis: a planar chain bends about +Z or -Z, got {axis}")
        bend_sign = -1.0 if axis is not None and axis[2] < 0 else 1.0
        step = math.pi if self.max_step is None else min(self.max_step, math.pi)
        settings = K.ccd2d_settings(self.max_iterations, self.tolerance, step, bend_sign)
        object.__setattr__(self, "_settings", settings)


@dataclass(frozen=True, eq=False)
class CCD2DResult(SolveResult):
    """A :class:`~ikrig.solvers.result.SolveResult` with the planar joint angles.

    Attributes:
        angles: ``(..., n)`` radians, each bone's signed angle from its parent bone
            (counter-clockwise; the root bone's from its input direction). Free joints are
            in ``(-pi, pi]``, limited joints inside their limits.
    """

    angles: np.ndarray | None = None

    @property
    def angles_deg(self) -> np.ndarray:
        """``angles`` in degrees."""
        return np.degrees(np.asarray(self.angles))


_DEFAULT = CCD2DOptions()
_FREE: dict = {}


def _free_limits(n: int) -> np.ndarray:
    """``(n, 2)`` read-only ``(-pi, pi)`` rows, every joint free; cached."""
    got = _FREE.get(n)
    if got is None:
        got = np.empty((n, 2))
        got[:, 0], got[:, 1] = -math.pi, math.pi
        _FREE[n] = frozen(got)
    return got


def _limits(n: int, limits_deg, constraints) -> np.ndarray:
    """``(n, 2)`` float64 radian limits for the kernel; ``(-pi, pi)`` marks a free joint."""
    if limits_deg is None and constraints is None:
        return _free_limits(n)
    if limits_deg is not None and constraints is not None:
        raise InputError("give either limits_deg or constraints, not both")
    out = np.empty((n, 2))
    out[:, 0], out[:, 1] = -math.pi, math.pi
    if limits_deg is not None:
        lim = np.asarray(limits_deg, dtype=np.float64)
        if lim.shape != (n, 2):
            raise InputError(f"limits_deg: expected shape ({n}, 2) in degrees, got {lim.shape}")
        if not np.isfinite(lim).all():
            raise InputError("limits_deg: contains NaN or infinite values")
        if (lim[:, 0] > lim[:, 1]).any() or (np.abs(lim) > 360).any():
            j = int(np.flatnonzero((lim[:, 0] > lim[:, 1]) | (np.abs(lim) > 360).any(1))[0])
            raise InputError(
                f"limits_deg: joint {j} has [{lim[j, 0]}, {lim[j, 1]}]; need"
                " -360 <= min <= max <= 360 degrees"
            )
        pairs = np.radians(lim)
    elif constraints is not None:
        cons = tuple(constraints)
        if len(cons) != n:
            raise InputError(f"constraints: expected {n} entries, got {len(cons)}")
        pairs = out.copy()
        for j, c in enumerate(cons):
            if c is None:
                continue
            if not isinstance(c, AngleLimit2D):
                raise InputError(
                    f"constraints[{j}]: ccd_2d takes AngleLimit2D or None, got {type(c).__name__}"
                )
            nz = c.normal[2]
            if abs(abs(nz) - 1) > 1e-9:
                raise InputError(f"constraints[{j}]: the normal must be +Z or -Z, got {c.normal}")
            lo, hi = (c.min_angle, c.max_angle) if nz > 0 else (-c.max_angle, -c.min_angle)
            pairs[j] = lo, hi
    limited = pairs[:, 1] - pairs[:, 0] < 2 * math.pi - 1e-12
    out[limited] = pairs[limited]
    return frozen(out)


def _dim(x, name) -> int:
    shape = np.shape(x)
    if not shape or shape[-1] not in (2, 3):
        raise InputError(f"{name}: expected a last axis of 2 (x, y) or 3 (x, y, 0), got {shape}")
    return shape[-1]


def ccd_2d(
    positions_world: ArrayLike,
    target_world: ArrayLike,
    options: CCD2DOptions | None = None,
    *,
    limits_deg: ArrayLike | None = None,
    constraints: Sequence[AngleLimit2D | None] | None = None,
    out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> CCD2DResult:
    """Solve planar chains with 2D CCD on joint angles.

    Args:
        positions_world: ``(..., n + 1, 2)`` joint positions in the XY plane, root first, or
            ``(..., n + 1, 3)`` whose z is ignored (the output has z = 0). They give the bone
            lengths and the start angles; this input pose is the rest pose.
        target_world: ``(..., 2)`` or ``(..., 3)`` (z ignored) effector target; batch shapes
            broadcast with ``positions_world``'s.
        options: :class:`CCD2DOptions`.
        limits_deg: ``(n, 2)`` per-joint ``[min, max]`` angle in **degrees**, each angle
            measured from the parent bone (the root's from the root bone's input direction);
            a range of 360 or more is a free joint.
        constraints: alternatively ``n`` entries of :class:`~ikrig.constraints.AngleLimit2D`
            or ``None`` (free), read as limits of the same angles (normal +Z, or -Z for
            clockwise angles), which is exactly what ``AngleLimit2D`` means for the other
            chain solvers on the same input pose.
        out: ``None`` or the caller's output buffers ``(positions_world, rotations_local,
            angles)``, writeable C-contiguous arrays of the result's shapes ``(..., n + 1,
            D)``, ``(..., n, 4)``, ``(..., n)`` and dtype; the solve writes into them and the
            result views them (a single float64 problem is solved in place).

    Returns:
        :class:`CCD2DResult`: ``positions_world (..., n + 1, D)``, ``angles (..., n)``
        radians, ``rotations_local (..., n, 4)`` (each joint's turn about +Z from its input
        angle: local rotations relative to the input pose, as every chain solver returns),
        ``reached``, ``error`` (distance to the target), ``iterations`` (sweeps run). A start
        angle outside its limits is first moved to the nearer end on the circle (the
        smallest turn into the range, as :class:`~ikrig.constraints.AngleLimit2D` projects).
        The pose is the best one seen: never farther from the target than the start.

    Failure behaviour: unreachable targets (too far, or outside what the limits allow) leave
    the chain as near as CCD gets, ``reached`` False; targets at the root and zero-length
    bones (which follow their parent bone's direction) give finite output. Raises
    :class:`~ikrig.errors.InputError` for wrong shapes, bad limits and NaN input.

    Example:
        >>> import numpy as np
        >>> arm = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
        >>> res = ccd_2d(arm, [1.0, 1.0], limits_deg=[[-180, 180], [0, 150]])
        >>> bool(res.reached), np.round(res.angles_deg).tolist()
        (True, [0.0, 90.0])
    """
    opts = check_options(options, CCD2DOptions, _DEFAULT)
    if limits_deg is None and constraints is None:  # one problem? (fast path)
        res = solve_one(K.ccd2d_one, positions_world, target_world, opts._settings, out,
                        CCD2DResult)  # fmt: skip
        if res is not None:
            return res
    D = _dim(positions_world, "positions_world")
    pos = as_points(positions_world, "positions_world", D, 2)
    tgt = as_points(target_world, "target_world", _dim(target_world, "target_world"), 1)
    if pos.shape[-2] < 2:
        raise InputError(f"positions_world: a chain needs at least 2 joints, got {pos.shape}")
    m = pos.shape[-2]
    n = m - 1
    batch = batch_shape(("positions_world", pos.shape[:-2]), ("target_world", tgt.shape[:-1]))
    p = flat(pos, (), (m, D)) if pos.ndim == 2 else flat(pos, batch, (m, D))
    t = flat(tgt, batch, tgt.shape[-1:])
    lim = _limits(n, limits_deg, constraints)
    N = t.shape[0]
    pos_out = np.zeros((N, m, D))
    ang = np.empty((N, n))
    rl = np.empty((N, n, 4))
    err = np.empty(N)
    iters = np.empty(N, dtype=np.int64)
    reached = np.empty(N, dtype=np.bool_)
    notify_compiling()
    bad = K.ccd2d_kernel(p, t, lim, opts._settings, pos_out, ang, rl, err, iters, reached)
    if bad >= 0:
        raise_nonfinite(positions_world=np.asarray(positions_world)[..., :2],
                        target_world=np.asarray(target_world)[..., :2])  # fmt: skip
    dtype = result_dtype(pos, tgt)
    res = CCD2DResult(
        positions_world=finish(pos_out, batch, dtype, (m, D)),
        reached=per_problem(reached, batch),
        error=per_problem(err, batch, dtype),
        iterations=per_problem(iters, batch),
        rotations_local=finish(rl, batch, dtype, (n, 4)),
        angles=finish(ang, batch, dtype, (n,)),
    )
    return res if out is None else written_to(res, out, OUT_FIELDS + ("angles",))
