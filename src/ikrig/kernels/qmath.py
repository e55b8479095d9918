"""Scalar quaternion, vector and angle helpers for the Numba kernels (the one copy).

Private. Every chain-solver kernel (FABRIK, follow, CCD, planar CCD, DLS) and the joint
constraint kernels (:mod:`ikrig.kernels.constraints`) use these. They take and return plain
tuples, ``(x, y, z, w)`` for quaternions (scalar last, Hamilton product, ``q_mul(a, b)``
applies ``b`` first) and ``(x, y, z)`` for vectors, so hot loops allocate nothing. Kernels
compute in float64 whatever the input dtype (the public wrappers cast float32 results back).

Also here: :func:`chain_fk` (forward kinematics of a chain from its local rotations, shared
by CCD and DLS) and :func:`all_finite`.

Note: Numba's on-disk cache does not notice edits to a module a cached kernel calls into;
clear the cache directory (``ikrig._jit.setup.CACHE_DIR``) after editing this file.
"""

from __future__ import annotations

import math

import numpy as np

from .._jit.setup import NUMPY_ERRORS, njit

TWO_PI = 2.0 * math.pi
TINY = 1e-300

# --------------------------------------------------------------------------------------
# Quaternions and vectors
# --------------------------------------------------------------------------------------


@njit(cache=True, **NUMPY_ERRORS)
def q_mul(a, b):
    """Hamilton product ``a * b`` of tuples (``b`` applied first). Exact IEEE operations,
    no fused multiply-adds: kernels compiled with other float options compile their own
    (:data:`ikrig.kernels.two_bone.q_mul`)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    )


@njit(cache=True, **NUMPY_ERRORS)
def q_conj(q):
    """Conjugate (inverse of a unit quaternion)."""
    return (-q[0], -q[1], -q[2], q[3])


@njit(cache=True)
def q_rotate(q, v):
    """Rotate vector tuple ``v`` by unit quaternion tuple ``q``."""
    qx, qy, qz, qw = q
    vx, vy, vz = v
    tx = 2.0 * (qy * vz - qz * vy)
    ty = 2.0 * (qz * vx - qx * vz)
    tz = 2.0 * (qx * vy - qy * vx)
    return (
        vx + qw * tx + (qy * tz - qz * ty),
        vy + qw * ty + (qz * tx - qx * tz),
        vz + qw * tz + (qx * ty - qy * tx),
    )


@njit(cache=True, **NUMPY_ERRORS)
def q_normalize(q):
    """Unit quaternion; a zero quaternion gives the identity."""
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    if n <= TINY:
        return (0.0, 0.0, 0.0, 1.0)
    inv = 1.0 / n
    return (q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)


@njit(cache=True, **NUMPY_ERRORS)
def q_from_array(a):
    """Read a ``(4,)`` array (any float dtype) as a float64 tuple."""
    return (float(a[0]), float(a[1]), float(a[2]), float(a[3]))


@njit(cache=True, **NUMPY_ERRORS)
def v_from_array(a):
    """Read a ``(3,)`` array (any float dtype) as a float64 tuple."""
    return (float(a[0]), float(a[1]), float(a[2]))


@njit(cache=True, **NUMPY_ERRORS)
def q_get(a, i):
    """Row ``i`` of an ``(n, 4)`` array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])


@njit(cache=True, **NUMPY_ERRORS)
def q_set(a, i, q):
    """Write tuple ``q`` into row ``i`` of an ``(n, 4)`` array."""
    a[i, 0], a[i, 1], a[i, 2], a[i, 3] = q


@njit(cache=True, **NUMPY_ERRORS)
def v_get(a, i):
    """Row ``i`` of an ``(n, 3)`` array as a tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit(cache=True, **NUMPY_ERRORS)
def v_set(a, i, v):
    """Write tuple ``v`` into row ``i`` of an ``(n, 3)`` array."""
    a[i, 0], a[i, 1], a[i, 2] = v


@njit(cache=True, **NUMPY_ERRORS)
def v_dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, **NUMPY_ERRORS)
def v_cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, **NUMPY_ERRORS)
def v_norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(cache=True, **NUMPY_ERRORS)
def v_sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True, **NUMPY_ERRORS)
def v_any_perpendicular(v):
    """A unit vector perpendicular to ``v``: ``v`` x (the axis it is least aligned with)."""
    ax, ay, az = abs(v[0]), abs(v[1]), abs(v[2])
    if ax <= ay and ax <= az:
        c = (0.0, v[2], -v[1])
    elif ay <= az:
        c = (-v[2], 0.0, v[0])
    else:
        c = (v[1], -v[0], 0.0)
    n = v_norm(c)
    if n <= TINY:
        return (1.0, 0.0, 0.0)
    return (c[0] / n, c[1] / n, c[2] / n)


@njit(cache=True)
def v_normalize(v, fallback):
    """Unit vector of ``v``; ``fallback`` when ``v`` is (nearly) zero."""
    n = v_norm(v)
    if n <= TINY:
        return fallback
    inv = 1.0 / n
    return (v[0] * inv, v[1] * inv, v[2] * inv)


@njit(cache=True)
def v_unit_or(v, z):
    """Unit vector of ``v``; when ``v`` is (nearly) zero, :func:`v_any_perpendicular` of
    ``z``, computed only then (``v_normalize(v, v_any_perpendicular(z))`` computes it
    always)."""
    n = v_norm(v)
    if n <= TINY:
        return v_any_perpendicular(z)
    inv = 1.0 / n
    return (v[0] * inv, v[1] * inv, v[2] * inv)


@njit(cache=True, **NUMPY_ERRORS)
def q_between(u, v):
    """Shortest-arc rotation taking the direction of ``u`` to that of ``v`` (tuples).

    Opposite vectors give a half turn about :func:`v_any_perpendicular` of ``u``; a zero
    vector gives the identity.
    """
    nu = v_norm(u)
    nv = v_norm(v)
    if nu <= TINY or nv <= TINY:
        return (0.0, 0.0, 0.0, 1.0)
    if not 1e-150 < nu * nv < 1e150:  # the quaternion's squares would under/overflow
        u = (u[0] / nu, u[1] / nu, u[2] / nu)
        v = (v[0] / nv, v[1] / nv, v[2] / nv)
        nu = nv = 1.0
    c = v_cross(u, v)
    w = nu * nv + v_dot(u, v)
    if w <= 1e-14 * nu * nv:
        p = v_any_perpendicular((u[0] / nu, u[1] / nu, u[2] / nu))
        return (p[0], p[1], p[2], 0.0)
    return q_normalize((c[0], c[1], c[2], w))


@njit(cache=True)
def q_exp(v):
    """Unit quaternion of a rotation vector (axis times angle)."""
    a = v_norm(v)
    h = 0.5 * a
    k = math.sin(h) / a if a > 0.0 else 0.5
    return (v[0] * k, v[1] * k, v[2] * k, math.cos(h))


@njit(cache=True)
def q_log(q):
    """Rotation vector (angle in ``[0, pi]``) of a unit quaternion, and its angle."""
    x, y, z, w = q
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    s = math.sqrt(x * x + y * y + z * z)
    angle = 2.0 * math.atan2(s, w)
    k = angle / s if s > 0.0 else 2.0
    return (x * k, y * k, z * k), angle


# --------------------------------------------------------------------------------------
# Angles
# --------------------------------------------------------------------------------------


@njit(cache=True)
def wrap_angle(t):
    """Angle wrapped to ``(-pi, pi]``."""
    t = (t + math.pi) % TWO_PI - math.pi
    return math.pi if t <= -math.pi else t


@njit(cache=True)
def circ_dist(a, b):
    """Distance of two angles on the circle, in ``[0, pi]``."""
    d = abs(a - b) % TWO_PI
    return d if d <= math.pi else TWO_PI - d


@njit(cache=True)
def nearest_angle_in_interval(lo, hi, t):
    """The angle in ``[lo, hi]`` nearest to ``t`` on the circle (``t`` in ``(-pi, pi]``).

    Returns ``t`` (or ``t +- 2 pi``) when it lies in the range, else the nearer end.
    """
    if lo <= t <= hi:
        return t
    if lo <= t + TWO_PI <= hi:
        return t + TWO_PI
    if lo <= t - TWO_PI <= hi:
        return t - TWO_PI
    return lo if circ_dist(lo, t) <= circ_dist(hi, t) else hi


@njit(cache=True)
def angle_in_interval(lo, hi, t):
    """Whether angle ``t`` (or ``t +- 2 pi``) lies in ``[lo, hi]``."""
    return (lo <= t <= hi) or (lo <= t + TWO_PI <= hi) or (lo <= t - TWO_PI <= hi)


# --------------------------------------------------------------------------------------
# Chains
# --------------------------------------------------------------------------------------


@njit(cache=True)
def all_finite(a):
    """Whether every value of array ``a`` is finite."""
    for v in a.ravel():
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True, **NUMPY_ERRORS)
def pick(a, k):
    """Element ``k`` of an ``(M, ...)`` array shared by every problem (``M == 1``) or given
    per problem (``M == N``)."""
    return a[k] if a.shape[0] > 1 else a[0]


@njit(cache=True, **NUMPY_ERRORS)
def row_finite(pk, target, k, D=3):
    """Whether the first ``D`` coordinates of the chain ``pk (m, >= D)`` and of
    ``target[k]`` are finite: a sum of ``x * 0``, 0 for finite values and NaN otherwise (a
    plain sum overflows for finite values near 1e308 and would call them non-finite)."""
    s = 0.0
    for j in range(D):
        s += target[k, j] * 0.0
    for i in range(pk.shape[0]):
        for j in range(D):
            s += pk[i, j] * 0.0
    return s == 0.0


@njit(cache=True)
def chain_fk(bone, rl, pq, root, pos, rw):
    """World rotations ``rw (n, 4)`` and positions ``pos (n + 1, 3)`` of one chain.

    ``bone (n, 3)``: each solved joint's bone in its own frame; ``rl (n, 4)``: local
    rotations; ``pq``: tuple, world rotation of the chain root's parent; ``root``: tuple,
    world position of the chain root.
    """
    n = bone.shape[0]
    w = pq
    p = root
    v_set(pos, 0, p)
    for i in range(n):
        w = q_mul(w, q_get(rl, i))
        q_set(rw, i, w)
        b = q_rotate(w, v_get(bone, i))
        p = (p[0] + b[0], p[1] + b[1], p[2] + b[2])
        v_set(pos, i + 1, p)


@njit(cache=True)
def rest_frame(pk, parent_row, bone):
    """Frames of a chain given by positions ``pk (n + 1, 3)`` whose input pose is the rest
    pose: every joint frame is the unit ``parent_row`` rotation, so ``bone[i]`` (written)
    is ``parent^-1 (p[i + 1] - p[i])``. Returns the parent rotation as a unit tuple."""
    pq = q_normalize(q_from_array(parent_row))
    inv = q_conj(pq)
    for i in range(bone.shape[0]):
        v_set(bone, i, q_rotate(inv, v_sub(v_get(pk, i + 1), v_get(pk, i))))
    return pq


@njit(cache=True)
def identity_rotations(n):
    """``(n, 4)`` identity quaternions."""
    rl = np.zeros((n, 4))
    for i in range(n):
        rl[i, 3] = 1.0
    return rl
