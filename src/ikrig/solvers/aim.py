"""Aim IK: one joint turned so that one of its local axes points at a world target.

The same job as ozz-animation's ``IKAimJob``, batched over any shape: documented inputs, one
validation step (:mod:`ikrig._checks`), a closed-form run step (one Numba kernel over the
elements, float64 inside: :mod:`ikrig.solvers._aim_kernels`), and a result holding the
joint's local correction and ``reached``.

The solve, per element, in the joint's own frame (``_js``: the target and the pole turned
by the inverse of the joint's world rotation, the target taken from the joint's position):

1. **Offset.** The ray that must hit the target starts at the joint-local point
   ``offset_local`` (the eyes in a head, a muzzle in a gun) and runs along
   ``forward_local``. The direction that brings that ray onto the target, turning about
   the joint, ends where the offset's forward line meets the sphere through the target
   centred on the joint: ``offsetted = offset + forward (sqrt(r^2 - ac^2) - forward .
   offset)``, ``r = |target_js|``, ``ac`` the offset's distance from the forward line
   through the joint. An offset farther from that line than ``r`` cannot aim at the target:
   the correction is the identity and ``reached`` is False (ozz's rule).
2. **Aim.** The shortest arc from ``offsetted`` onto ``target_js`` (a half turn about an
   axis square to ``offsetted`` when they are opposite, ozz's choice of axis).
3. **Up toward the pole.** The turned ``up_local`` is rolled about the target direction
   until it lies in the plane of the target direction and ``pole_world``, on the pole's
   side. When the target direction is aligned with the pole or with the turned up (or up
   is zero), there is no plane and no roll (ozz's rule).
4. **Twist.** ``twist_angle`` radians about the target direction, right-handed.
5. **Weight.** ``w >= 0`` is forced, then the correction is blended from the identity by
   ``weight`` clipped to ``[0, 1]`` (normalised lerp, as ozz; ``weight <= 0``: identity,
   ``>= 1``: the full correction).

The correction is local and *post-multiplied*: ``rotations_local[j] =
quat_mul(rotations_local[j], correction_local)``, so that the joint's new world rotation
is ``quat_mul(joint_rotation_world, correction_local)`` (it turns the joint's frame before
its own rotation does; its children follow).

Joints in ikrig carry no scale, so ozz's scaled-parent and zero-scale cases have no
counterpart; every other ozz case is reproduced (``tests/test_aim.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._checks import (
    as_points,
    batch_shape,
    check_finite,
    check_unit_quaternions,
    float_dtype,
)
from .._jit.setup import notify_compiling
from ..errors import InputError
from . import _aim_kernels as K

__all__ = ["AimAxes", "AimResult", "aim"]

_X = (1.0, 0.0, 0.0)
_Y = (0.0, 1.0, 0.0)
_ZERO = (0.0, 0.0, 0.0)
_NO_PLANE = {np.dtype(np.float32): 1e-12, np.dtype(np.float64): 1e-24}
"""Squared sine below which two directions are taken as aligned (no plane for the up
axis), by the input's dtype: its rounding noise must not pick a random roll."""
_ON_SPHERE = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-12}
"""Relative slack, by the input's dtype, within which an offset on the target's sphere
counts as on it (rounding must not make it unreachable)."""


class AimAxes(NamedTuple):
    """Which axes of a joint aim, in the joint's own (local) frame; ``None`` takes the
    caller's default (:func:`aim`: +X, +Y and the origin, as ozz).

    Attributes:
        forward_local: ``(..., 3)`` the axis to point at the target (any non-zero length;
            it is normalised).
        up_local: ``(..., 3)`` the axis to turn toward the pole (any length; zero turns
            nothing).
        offset_local: ``(..., 3)`` the point, in the joint's frame and the data's units,
            whose forward ray must hit the target (the eyes of a head).
    """

    forward_local: ArrayLike | None = None
    up_local: ArrayLike | None = None
    offset_local: ArrayLike | None = None


class AimResult(NamedTuple):
    """What :func:`aim` returns, over the batch shape ``(...)``.

    Attributes:
        correction_local: ``(..., 4)`` xyzw unit quaternion, ``w >= 0``, in the input's
            dtype: post-multiply it onto the joint's local rotation
            (``local' = local * correction``).
        reached: ``(...)`` bool: the target can be aimed at (ozz's flag): the offset is not
            outside the target's sphere, and (unlike ozz, which says True there) the target
            is not at the joint and ``forward_local`` is not zero. It does not look at
            ``weight``.
        error_angle: ``(...)`` float64 radians in ``[0, pi]``: after the (weighted)
            correction, the angle between the aimed axis and the direction from the offset
            point to the target (0 when the target is at the offset point, pi when
            ``forward_local`` is zero). 0 up to rounding when ``reached`` and
            ``weight >= 1``.
    """

    correction_local: np.ndarray
    reached: np.ndarray
    error_angle: np.ndarray


def aim(
    joint_rotation_world: ArrayLike,
    joint_position_world: ArrayLike,
    target_world: ArrayLike,
    axes: AimAxes | None = None,
    pole_world: ArrayLike | None = None,
    twist_angle: ArrayLike = 0.0,
    weight: ArrayLike = 1.0,
) -> AimResult:
    """Turn a joint so that its forward axis (from its offset point) aims at a target, its
    up axis toward a pole (ozz-animation's ``IKAimJob``; the steps are in
    :mod:`ikrig.solvers.aim`).

    Args:
        joint_rotation_world: ``(..., 4)`` xyzw unit quaternion, the joint's world rotation
            (its frame, as :func:`ikrig.pose.fk` gives it).
        joint_position_world: ``(..., 3)`` the joint's world position.
        target_world: ``(..., 3)`` the world point to aim at.
        axes: :class:`AimAxes`; defaults: ``forward_local`` +X, ``up_local`` +Y,
            ``offset_local`` the origin.
        pole_world: ``(..., 3)`` world *direction* the up axis turns toward (default +Y).
        twist_angle: scalar or ``(...)`` radians about the target direction (default 0).
        weight: scalar or ``(...)``, clipped to ``[0, 1]`` (default 1).

    Every argument broadcasts with the others. The result is float32 when the joint's
    rotation and position and the target are all float32, float64 otherwise; the solve
    runs in float64.

    Returns:
        :class:`AimResult` ``(correction_local (..., 4), reached (...), error_angle (...))``.

    Degenerate elements never raise and never give NaN: a zero ``forward_local``, a target
    at the joint, or an offset outside the target's sphere give the identity with
    ``reached`` False; a zero ``up_local``, or a target direction aligned with the pole or
    with the turned up axis, give no roll (the shortest arc, then the twist).

    Raises:
        InputError: a wrong shape, shapes that do not broadcast, a NaN or infinite value,
            or a joint rotation that is not a unit quaternion (the message names the
            argument).

    Example:
        >>> import numpy as np
        >>> r = aim([0, 0, 0, 1.0], [0, 0, 0], [0, 0, 1.0])  # +X turned onto +Z
        >>> np.round(r.correction_local, 5).tolist(), bool(r.reached)
        ([0.0, -0.70711, 0.0, 0.70711], True)
    """
    args = _checked(joint_rotation_world, joint_position_world, target_world, axes,
                    pole_world, twist_angle, weight)  # fmt: skip
    return _run(args)


class _Args(NamedTuple):
    """The checked inputs: the kernel's rows (float64, flattened to ``(N, k)``), the batch
    shape and the dtype of the result."""

    rows: K.AimRows
    batch: tuple[int, ...]
    dtype: np.dtype


def _scalars(value: ArrayLike, name: str) -> np.ndarray:
    try:
        a = np.asarray(value)
    except Exception as exc:  # ragged lists and the like
        raise InputError(f"{name}: cannot be read as a numeric array ({exc})") from None
    if a.dtype.kind not in "fiu" or a.dtype == np.bool_:
        raise InputError(f"{name}: expected numbers, got dtype {a.dtype}")
    return a.astype(np.float64, copy=False)


def _checked(rotation, position, target, axes, pole, twist, weight) -> _Args:
    """Step 1: shapes, finiteness and unit rotations, named; everything broadcast."""
    if axes is None:
        axes = AimAxes()
    elif not isinstance(axes, AimAxes):
        raise InputError(f"axes: expected AimAxes, got {type(axes).__name__}")
    fwd = _X if axes.forward_local is None else axes.forward_local
    up = _Y if axes.up_local is None else axes.up_local
    off = _ZERO if axes.offset_local is None else axes.offset_local
    vectors = {
        "joint_rotation_world": as_points(rotation, "joint_rotation_world", last=4),
        "joint_position_world": as_points(position, "joint_position_world"),
        "target_world": as_points(target, "target_world"),
        "forward_local": as_points(fwd, "forward_local"),
        "up_local": as_points(up, "up_local"),
        "offset_local": as_points(off, "offset_local"),
        "pole_world": as_points(_Y if pole is None else pole, "pole_world"),
    }
    scalars = {"twist_angle": _scalars(twist, "twist_angle"), "weight": _scalars(weight, "weight")}
    for name, a in {**vectors, **scalars}.items():
        if not np.isfinite(a).all():
            check_finite(a, name)
    q = vectors["joint_rotation_world"]
    check_unit_quaternions(q, "joint_rotation_world")
    shapes = [(n, a.shape[:-1]) for n, a in vectors.items()]
    batch = batch_shape(*shapes, *[(n, a.shape) for n, a in scalars.items()])
    dtype = float_dtype(q, vectors["joint_position_world"], vectors["target_world"])
    n = int(np.prod(batch, dtype=np.int64))

    def flat(a: np.ndarray, k: int) -> np.ndarray:
        """``(n, k)`` float64 C-contiguous rows, or ``(1, k)`` for one row standing for all."""
        a = a.astype(np.float64, copy=False)
        rows = a.reshape(1, k) if a.size == k else np.broadcast_to(a, batch + (k,)).reshape(n, k)
        rows = np.ascontiguousarray(rows)
        return rows if rows.flags.writeable else rows.copy()  # one array type for Numba

    rot, pos, tgt, fwd, up, off, pole = (flat(a, a.shape[-1]) for a in vectors.values())
    twist, w = (flat(a[..., None], 1).reshape(-1) for a in scalars.values())
    return _Args(K.AimRows(rot, pos, tgt, fwd, up, off, pole, twist, w), batch, dtype)


def _run(a: _Args) -> AimResult:
    """Step 2: the compiled per-element solve (:mod:`._aim_kernels`) over ``N`` rows."""
    n = int(np.prod(a.batch, dtype=np.int64))
    out = K.AimOut(np.empty((n, 4)), np.empty(n, dtype=np.bool_), np.empty(n))
    if n:
        notify_compiling()
        K.aim_rows(a.rows, _NO_PLANE[a.dtype], _ON_SPHERE[a.dtype],
                   out._replace(reached=out.reached.view(np.uint8)))  # fmt: skip
    return AimResult(
        out.correction.astype(a.dtype, copy=False).reshape(a.batch + (4,)),
        out.reached.reshape(a.batch),
        out.error.reshape(a.batch),
    )
