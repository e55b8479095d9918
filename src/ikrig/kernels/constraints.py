"""Numba kernels of the joint constraints: the contract every chain solver relies on.

This module is the only place that dispatches on a constraint's *kind*; each kind's math
lives in its own function below. Solvers (FABRIK, follow, CCD, DLS) call
:func:`project_local` / :func:`project_direction` (or their allocation-free ``*_t`` tuple
forms) from inside their own ``@njit`` kernels and never look at the kind themselves.

Packing
-------
:func:`ikrig.constraints.pack_constraints` turns ``n`` constraint objects (or ``None``) and the
``(n, 3)`` bone vectors into ``kinds (n,) int64`` and ``params (n, N_PARAMS) float64``. Row ``i``
belongs to solved joint ``i`` of a chain (``chain.joints[i]``). Every row, whatever its kind,
holds in ``params[i, P_BONE:P_BONE + 3]`` the unit direction of joint ``i``'s bone (the offset
of the next chain joint) in joint ``i``'s own frame, ``(1, 0, 0)`` for a zero-length bone.

Frames and units
----------------
* Quaternions are unit Hamilton quaternions ``(x, y, z, w)``, ``quat_mul(a, b)`` applies
  ``b`` first. Angles are radians.
* A joint's *local rotation* ``q`` is relative to its parent joint's frame (for the chain
  root: the frame of the root's parent, identity for a skeleton root). The bone's direction
  in the parent frame is ``rotate(q, b)`` with ``b = params[P_BONE:P_BONE + 3]``.
* Every axis stored in ``params[P_AXIS:P_AXIS + 3]`` is a unit vector in the *parent*
  joint's frame (for :data:`KIND_TWIST`: in the joint's own frame, it is the bone axis).
* ``project_direction`` works in world space: ``parent_rot_world`` is the world rotation of
  the frame the constraint is expressed in (the parent joint's world rotation; for the chain
  root the world rotation of the root's parent), ``d_world`` the wanted bone direction (any
  non-zero length); it returns a unit world direction.
* Kernels compute in float64 whatever the input dtype (they read values with ``float()``).

Kinds and what each guarantees
------------------------------
``KIND_FREE (0)``
    ``project_local`` returns ``q`` unchanged; ``project_direction`` returns ``d`` normalised.
``KIND_ANGLE_2D (1)`` (:class:`~ikrig.constraints.AngleLimit2D`) and ``KIND_HINGE (3)``
    (:class:`~ikrig.constraints.Hinge`): params ``[lo, hi, axis(3), bone(3)]``. Allowed local
    rotations are the rotations about ``axis`` by an angle in ``[lo, hi]`` (taken modulo
    2 pi; ``lo = -HINGE_FREE, hi = HINGE_FREE`` means unlimited). ``project_local`` returns
    the exact nearest allowed rotation (smallest rotation angle between input and output).
    ``project_direction`` returns the allowed bone direction nearest to ``d`` (the nearest
    point of the arc ``rotate(parent, rotate(R_axis(theta), bone))``, theta in range); a bone
    along the axis has a single allowed direction. For 2D limits ``pack_constraints`` has
    already shifted ``lo, hi`` so that they measure the angle from the parent bone.
``KIND_CONE (2)`` (:class:`~ikrig.constraints.Cone`): params ``[cos(limit), sin(limit),
    axis(3), bone(3)]``. Allowed: ``angle(rotate(q, bone), axis) <= limit``; twist is free.
    ``project_local`` returns the exact nearest allowed rotation (``q`` pre-multiplied by the
    shortest arc that brings the bone onto the cone); ``project_direction`` returns the
    exact nearest allowed direction. A direction exactly opposite the axis goes to the
    boundary on a fixed side (:func:`v_any_perpendicular`).
``KIND_TWIST (4)`` (:class:`~ikrig.constraints.TwistLimit`): params ``[lo, hi, bone(3),
    bone(3)]``. Allowed: the twist angle ``2 atan2(q_vec . bone, q_w)`` of the swing-twist
    decomposition about the bone axis lies in ``[lo, hi]`` (modulo 2 pi); swing is free.
    ``project_local`` returns the exact nearest allowed rotation (it may also change the
    swing slightly; for a rotation without swing it is the twist clamped). A direction does
    not carry twist: ``project_direction`` returns ``d`` normalised.

Tolerances: an allowed input is returned unchanged (cone: within ``1e-12`` of the cosine);
projecting twice gives the same result up to rounding (idempotent).

Where solvers only approximate: position-based solvers (FABRIK, follow) see bone directions,
not twist. They cannot enforce :data:`KIND_TWIST` with ``project_direction``, and a hinge's
allowed *directions* are exact only for the parent frame they are given: a backward FABRIK
pass uses the parent frame as it stands before the parent moves. Solvers that need every
joint inside its limits snap each final rotation with ``project_local``.

Allocation-free forms
---------------------
``project_local_t(kind, params_row, q)`` and ``project_direction_t(kind, params_row, parent,
d)`` take and return plain tuples ``(x, y, z, w)`` / ``(x, y, z)`` of float64, for hot loops.
The ``q_*`` / ``v_*`` tuple helpers (quaternion product, rotation, shortest arc, ...) and the
angle helpers are defined once in :mod:`ikrig.kernels.qmath` and re-exported here.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit.setup import njit

# The tuple helpers live in ikrig.kernels.qmath (the one copy); they are re-exported here
# because they are part of this module's kernel contract.
from .qmath import (  # noqa: F401
    TINY,
    angle_in_interval,
    nearest_angle_in_interval,
    q_between,
    q_conj,
    q_from_array,
    q_mul,
    q_normalize,
    q_rotate,
    v_any_perpendicular,
    v_cross,
    v_dot,
    v_from_array,
    v_norm,
    v_normalize,
    wrap_angle,
)

KIND_FREE = 0
KIND_ANGLE_2D = 1
KIND_CONE = 2
KIND_HINGE = 3
KIND_TWIST = 4
NUM_KINDS = 5

N_PARAMS = 8
P_LO = 0  # hinge / 2D / twist: lower angle; cone: cos(limit)
P_HI = 1  # hinge / 2D / twist: upper angle; cone: sin(limit)
P_AXIS = 2  # 2:5 hinge / 2D / cone axis in the parent frame; twist: bone axis (own frame)
P_BONE = 5  # 5:8 the bone's unit direction in the joint's own frame (every kind)

HINGE_FREE = 10.0  # |lo|, |hi| of an unlimited hinge: every angle in (-pi, pi] is inside

_EPS_DIR = 1e-12
_TINY = TINY

# --------------------------------------------------------------------------------------
# Per-kind math
# --------------------------------------------------------------------------------------


@njit(cache=True)
def _axis(p):
    return (p[P_AXIS], p[P_AXIS + 1], p[P_AXIS + 2])


@njit(cache=True)
def _bone(p):
    return (p[P_BONE], p[P_BONE + 1], p[P_BONE + 2])


@njit(cache=True)
def _hinge_local(p, q):
    """Nearest rotation about the axis with an angle in [lo, hi] (hinge and 2D limits)."""
    a = _axis(p)
    s = q[0] * a[0] + q[1] * a[1] + q[2] * a[2]
    t = wrap_angle(2.0 * math.atan2(s, q[3]))
    th = nearest_angle_in_interval(p[P_LO], p[P_HI], t)
    h = 0.5 * th
    sh = math.sin(h)
    return (a[0] * sh, a[1] * sh, a[2] * sh, math.cos(h))


@njit(cache=True)
def _hinge_direction(p, parent, d):
    """Nearest allowed bone direction on the hinge's arc (world space)."""
    a = _axis(p)
    b = _bone(p)
    dl = q_rotate(q_conj(parent), d)
    ba = v_dot(b, a)
    bp = (b[0] - ba * a[0], b[1] - ba * a[1], b[2] - ba * a[2])
    nbp = v_norm(bp)
    if nbp <= _EPS_DIR:  # bone along the axis: one allowed direction
        return v_normalize(q_rotate(parent, b), (1.0, 0.0, 0.0))
    e1 = (bp[0] / nbp, bp[1] / nbp, bp[2] / nbp)
    e2 = v_cross(a, e1)
    x = v_dot(dl, e1)
    y = v_dot(dl, e2)
    if x * x + y * y <= _TINY:
        th = nearest_angle_in_interval(p[P_LO], p[P_HI], 0.0)
    else:
        th = nearest_angle_in_interval(p[P_LO], p[P_HI], math.atan2(y, x))
    c = math.cos(th) * nbp
    s = math.sin(th) * nbp
    v = (
        ba * a[0] + c * e1[0] + s * e2[0],
        ba * a[1] + c * e1[1] + s * e2[1],
        ba * a[2] + c * e1[2] + s * e2[2],
    )
    return v_normalize(q_rotate(parent, v), (1.0, 0.0, 0.0))


@njit(cache=True)
def _cone_clamp(cos_l, sin_l, a, v):
    """Unit ``v`` moved onto the cone of half-angle ``limit`` about unit ``a`` if outside."""
    c = v_dot(v, a)
    if c >= cos_l - _EPS_DIR:
        return v
    u = (v[0] - c * a[0], v[1] - c * a[1], v[2] - c * a[2])
    nu = v_norm(u)
    if nu <= _EPS_DIR:
        u = v_any_perpendicular(a)
    else:
        # v nearly opposite a leaves u short and its rounding tilted toward a: one more
        # Gram-Schmidt step keeps the result on the cone to rounding (not 5e-9 rad off)
        u = (u[0] / nu, u[1] / nu, u[2] / nu)
        d = v_dot(u, a)
        u = (u[0] - d * a[0], u[1] - d * a[1], u[2] - d * a[2])
        nu = v_norm(u)
        u = (u[0] / nu, u[1] / nu, u[2] / nu)
    return (
        cos_l * a[0] + sin_l * u[0],
        cos_l * a[1] + sin_l * u[1],
        cos_l * a[2] + sin_l * u[2],
    )


@njit(cache=True)
def _cone_local(p, q):
    """Nearest rotation whose bone lies inside the cone: shortest arc onto the boundary."""
    a = _axis(p)
    bw = q_rotate(q, _bone(p))
    n = v_norm(bw)
    if n <= _TINY:
        return q
    bw = (bw[0] / n, bw[1] / n, bw[2] / n)
    c = v_dot(bw, a)
    if c >= p[P_LO] - _EPS_DIR:
        return q
    w = _cone_clamp(p[P_LO], p[P_HI], a, bw)
    return q_normalize(q_mul(q_between(bw, w), q))


@njit(cache=True)
def _cone_direction(p, parent, d):
    """Nearest direction inside the cone (world space)."""
    a = q_rotate(parent, _axis(p))
    v = v_normalize(d, (a[0], a[1], a[2]))
    return _cone_clamp(p[P_LO], p[P_HI], a, v)


@njit(cache=True)
def _twist_local(p, q):
    """Nearest rotation whose twist about the bone axis lies in [lo, hi]."""
    b = _axis(p)
    qx, qy, qz, qw = q
    if qw < 0.0:
        qx, qy, qz, qw = -qx, -qy, -qz, -qw
    y = qx * b[0] + qy * b[1] + qz * b[2]
    x = qw
    lo = p[P_LO]
    hi = p[P_HI]
    if x * x + y * y <= _TINY or angle_in_interval(lo, hi, 2.0 * math.atan2(y, x)):
        return (qx, qy, qz, qw)
    # Project (x, y) onto the nearer boundary line of the allowed double wedge.
    ulx, uly = math.cos(0.5 * lo), math.sin(0.5 * lo)
    uhx, uhy = math.cos(0.5 * hi), math.sin(0.5 * hi)
    sl = x * ulx + y * uly
    sh = x * uhx + y * uhy
    if abs(sl) >= abs(sh):
        s, ux, uy, e = sl, ulx, uly, lo
    else:
        s, ux, uy, e = sh, uhx, uhy, hi
    dy = s * uy - y
    out = (qx + dy * b[0], qy + dy * b[1], qz + dy * b[2], s * ux)
    n = math.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3])
    if n <= _EPS_DIR:
        h = 0.5 * e
        return (b[0] * math.sin(h), b[1] * math.sin(h), b[2] * math.sin(h), math.cos(h))
    return (out[0] / n, out[1] / n, out[2] / n, out[3] / n)


# --------------------------------------------------------------------------------------
# Dispatch (the only place that looks at the kind)
# --------------------------------------------------------------------------------------


@njit(cache=True)
def project_local_t(kind, params_row, q):
    """Nearest allowed local rotation; ``q`` and the result are float64 tuples (x, y, z, w)."""
    if kind == KIND_CONE:
        return _cone_local(params_row, q)
    if kind == KIND_HINGE or kind == KIND_ANGLE_2D:
        return _hinge_local(params_row, q)
    if kind == KIND_TWIST:
        return _twist_local(params_row, q)
    return q


@njit(cache=True)
def project_direction_t(kind, params_row, parent, d):
    """Nearest allowed unit world bone direction; tuples (parent: x, y, z, w; d: x, y, z)."""
    if kind == KIND_CONE:
        return _cone_direction(params_row, parent, d)
    if kind == KIND_HINGE or kind == KIND_ANGLE_2D:
        return _hinge_direction(params_row, parent, d)
    return v_normalize(d, q_rotate(parent, _bone(params_row)))


@njit(cache=True)
def project_local(kind, params_row, q):
    """Nearest allowed local rotation. ``q: (4,)`` xyzw array -> new ``(4,)`` float64 array."""
    r = project_local_t(kind, params_row, q_from_array(q))
    out = np.empty(4)
    out[0], out[1], out[2], out[3] = r
    return out


@njit(cache=True)
def project_direction(kind, params_row, parent_rot_world, d_world):
    """Nearest allowed unit bone direction in world space -> new ``(3,)`` float64 array.

    ``parent_rot_world: (4,)`` world rotation of the constraint's (parent) frame,
    ``d_world: (3,)`` wanted direction (any non-zero length).
    """
    r = project_direction_t(kind, params_row, q_from_array(parent_rot_world), v_from_array(d_world))
    out = np.empty(3)
    out[0], out[1], out[2] = r
    return out


@njit(cache=True)
def project_local_batch(kinds, params, q, out):
    """``out[k] = project_local(kinds[k], params[k], q[k])`` over ``(M, ...)`` arrays."""
    for k in range(q.shape[0]):
        r = project_local_t(kinds[k], params[k], q_from_array(q[k]))
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = r


@njit(cache=True)
def project_direction_batch(kinds, params, parent, d, out):
    """``out[k] = project_direction(kinds[k], params[k], parent[k], d[k])`` over ``(M, ...)``."""
    for k in range(d.shape[0]):
        r = project_direction_t(kinds[k], params[k], q_from_array(parent[k]), v_from_array(d[k]))
        out[k, 0], out[k, 1], out[k, 2] = r
