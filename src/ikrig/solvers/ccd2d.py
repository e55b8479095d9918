"""Planar cyclic coordinate descent on joint angles, with per-joint angle limits.

The classic 2D CCD of game engines (Unity's 2D IK, for example): a planar chain in the XY
plane is described by its bone lengths and its joint angles, each the signed angle
(counter-clockwise, radians) from the parent bone to the bone; the root's angle is measured
from the +X axis. Each iteration sweeps from the joint before the effector back to the root;
each joint turns by the signed angle between its joint-to-effector and joint-to-target
directions, clamped to ``max_step``, and its angle is clamped to its limits.

:func:`ccd_2d` is batched over any leading shape and keeps float32 as float32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._numba import notify_compiling
from ..errors import InputError
from . import _ccd_kernels as K
from .ccd import (
    F32,
    F64,
    _array,
    _batch,
    _check_iterations,
    _check_nonneg,
    _check_step,
    _flat,
    _options,
    _raise_nonfinite,
)
from .result import SolveResult

__all__ = ["CCD2DOptions", "CCD2DResult", "ccd_2d"]


@dataclass(frozen=True)
class CCD2DOptions:
    """Options of the planar CCD solver (validated on construction).

    Attributes:
        max_iterations: sweeps before giving up (0 only measures the start pose).
        tolerance: reached within ``tolerance * L`` of the target, ``L`` the chain length.
        max_step: largest turn of one joint per sweep, radians, or ``None``.
        bend_direction: ``+1`` (counter-clockwise) or ``-1``: the way a joint turns first
            when the effector and the target lie on one line through it (a straight chain
            and a target straight ahead or behind). If its limit blocks that way it tries
            the other.

    Raises:
        InputError: a value out of range.

    Example:
        >>> CCD2DOptions(max_step=math.radians(30)).bend_direction
        1
    """

    max_iterations: int = 100
    tolerance: float = 1e-3
    max_step: float | None = None
    bend_direction: int = 1
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "max_iterations", _check_iterations(self.max_iterations))
        object.__setattr__(self, "tolerance", _check_nonneg(self.tolerance, "tolerance"))
        object.__setattr__(self, "max_step", _check_step(self.max_step))
        if self.bend_direction not in (1, -1) or isinstance(self.bend_direction, bool):
            raise InputError(f"bend_direction: must be +1 or -1, got {self.bend_direction!r}")
        object.__setattr__(self, "bend_direction", int(self.bend_direction))

    def _consts(self, dtype) -> tuple[np.ndarray, np.generic]:
        """Kernel constants and the bend sign as a scalar of ``dtype`` (cached)."""
        got = self._cache.get(dtype)
        if got is None:
            consts = K.make_consts_2d(dtype, self.tolerance, self.max_step)
            got = self._cache[dtype] = (consts, dtype.type(self.bend_direction))
        return got


@dataclass(frozen=True, eq=False)
class CCD2DResult(SolveResult):
    """A :class:`~ikrig.solvers.result.SolveResult` with the planar joint angles.

    Attributes:
        angles: ``(..., n)`` radians, each bone's signed angle from its parent bone
            (counter-clockwise; the root bone's from +X). Free joints are in ``(-pi, pi]``,
            limited joints inside their limits.
    """

    angles: np.ndarray | None = None

    @property
    def angles_deg(self) -> np.ndarray:
        """``angles`` in degrees."""
        return np.degrees(self.angles)


_DEFAULT = CCD2DOptions()
_FREE = {}


def _limits(n: int, limits_deg, constraints, dtype) -> np.ndarray:
    """``(n, 2)`` radian limits for the kernel; ``(-pi, pi)`` marks a free joint."""
    out = np.empty((n, 2))
    out[:, 0], out[:, 1] = -math.pi, math.pi
    if limits_deg is not None and constraints is not None:
        raise InputError("give either limits_deg or constraints, not both")
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
        from ..constraints import AngleLimit2D

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
    else:
        got = _FREE.get((n, dtype))
        if got is None:
            got = _FREE[(n, dtype)] = out.astype(dtype)
        return got
    limited = pairs[:, 1] - pairs[:, 0] < 2 * math.pi - 1e-12
    out[limited] = pairs[limited]
    return out.astype(dtype)


def ccd_2d(
    positions,
    target,
    options: CCD2DOptions | None = None,
    *,
    limits_deg=None,
    constraints=None,
) -> CCD2DResult:
    """Solve planar chains with 2D CCD on joint angles.

    Args:
        positions: ``(..., n + 1, 2)`` joint positions in the XY plane, root first, or
            ``(..., n + 1, 3)`` whose z is ignored (the output has z = 0). They give the bone
            lengths and the start angles.
        target: ``(..., 2)`` or ``(..., 3)`` (z ignored) effector target; batch shapes
            broadcast with ``positions``'.
        options: :class:`CCD2DOptions`.
        limits_deg: ``(n, 2)`` per-joint ``[min, max]`` angle in **degrees**, each angle
            measured from the parent bone (the root's from +X); a range of 360 or more is a
            free joint.
        constraints: alternatively ``n`` entries of :class:`~ikrig.constraints.AngleLimit2D`
            or ``None`` (free), read as limits of the same angles (normal +Z, or -Z for
            clockwise angles). Note that the root's angle here is measured from +X, which is
            the ``AngleLimit2D`` meaning when the root bone starts along +X.

    Returns:
        :class:`CCD2DResult`: ``positions_world (..., n + 1, D)``, ``angles (..., n)``
        radians, ``rotations_local (..., n, 4)`` (each joint's turn about +Z from its start
        angle, the planar chain read as identity-framed as in
        :func:`ikrig.solvers.ccd.ccd`), ``reached``, ``error`` (distance to the target),
        ``iterations``. A start angle outside its limits is first moved to the nearer limit.

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
    opts = _options(options, CCD2DOptions, _DEFAULT)
    pos = _array(positions, "positions", positions_dim := _dim(positions, "positions"), 2)
    tgt = _array(target, "target", _dim(target, "target"), 1)
    if pos.shape[-2] < 2:
        raise InputError(f"positions: a chain needs at least 2 joints, got shape {pos.shape}")
    n = pos.shape[-2] - 1
    dt = F32 if pos.dtype == F32 and tgt.dtype == F32 else F64
    batch = _batch(pos.shape[:-2], tgt.shape[:-1], "positions", "target")
    p = _flat(pos, batch, (n + 1, positions_dim), dt)
    t = _flat(tgt, batch, tgt.shape[-1:], dt)
    lim = _limits(n, limits_deg, constraints, dt)
    notify_compiling()
    consts, sign = opts._consts(dt)
    status, pw, ang, rl, err, it, ok = K.ccd2d_kernel(p, t, lim, consts, opts.max_iterations, sign)
    if status == 1:
        _raise_nonfinite(np.asarray(positions)[..., :2], "positions", 2)
    if status:
        _raise_nonfinite(np.asarray(target)[..., :2], "target", 2)
    return CCD2DResult(
        positions_world=pw.reshape(batch + (n + 1, positions_dim)),
        reached=ok.reshape(batch),
        error=err.reshape(batch),
        iterations=it.reshape(batch),
        rotations_local=rl.reshape(batch + (n, 4)),
        angles=ang.reshape(batch + (n,)),
    )


def _dim(x, name) -> int:
    shape = np.shape(x)
    if not shape or shape[-1] not in (2, 3):
        raise InputError(f"{name}: expected a last axis of 2 (x, y) or 3 (x, y, 0), got {shape}")
    return shape[-1]
