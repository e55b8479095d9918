"""Numba kernel of the aim job (see :mod:`ikrig.solvers.aim` for the steps).

Private. The inputs are one :class:`AimRows` record of float64 C-contiguous arrays with
``n`` rows, or one row that stands for all (a constant axis, a scalar weight); the outputs
one :class:`AimOut` record. Each element is solved on its own, in float64, with the
compiled helpers of :mod:`ikrig.kernels.qmath`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._jit.setup import njit
from ..kernels.qmath import q_conj, q_get, q_mul, q_normalize, q_rotate, q_set, v_cross, v_dot

TINY = 1e-200
"""Vectors shorter than this count as zero."""
OPPOSITE = 1e-12
"""``1 + cos`` below this: opposite directions (within about 1.4e-6 rad of a half turn)."""


class AimRows(NamedTuple):
    """The kernel's inputs, float64, ``(n, k)`` or ``(1, k)`` (``(n,)`` or ``(1,)``)."""

    rotation: np.ndarray
    position: np.ndarray
    target: np.ndarray
    forward: np.ndarray
    up: np.ndarray
    offset: np.ndarray
    pole: np.ndarray
    twist: np.ndarray
    weight: np.ndarray


class AimOut(NamedTuple):
    """The kernel's outputs: ``correction (n, 4)`` float64, ``reached (n,)`` uint8 (a bool
    array's view), ``error (n,)`` float64."""

    correction: np.ndarray
    reached: np.ndarray
    error: np.ndarray


@njit(cache=True)
def _v3(a, i):
    """Row ``i`` of an ``(n, 3)`` array, or its only row."""
    k = i if a.shape[0] > 1 else 0
    return (a[k, 0], a[k, 1], a[k, 2])


@njit(cache=True)
def _s(a, i):
    return a[i if a.shape[0] > 1 else 0]


@njit(cache=True)
def _unit(v):
    """``(v / |v|, |v| > TINY)``; a zero ``v`` stays zero."""
    n = math.sqrt(v_dot(v, v))
    if n <= TINY:
        return (0.0, 0.0, 0.0), False
    return (v[0] / n, v[1] / n, v[2] / n), True


@njit(cache=True)
def _about(axis, angle):
    s = math.sin(0.5 * angle)
    return (axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle))


@njit(cache=True)
def _arc(a, b):
    """Shortest arc from the direction of ``a`` onto that of ``b``; opposite ones a half
    turn about ozz's perpendicular; the identity where either is zero."""
    a1, a_ok = _unit(a)
    b1, b_ok = _unit(b)
    if not (a_ok and b_ok):
        return (0.0, 0.0, 0.0, 1.0)
    real = 1.0 + v_dot(a1, b1)
    if real < OPPOSITE:
        x, y, z = a1
        side = (-y, x, 0.0) if abs(x) > abs(z) else (0.0, -z, y)
        s, _ = _unit(side)
        return (s[0], s[1], s[2], 0.0)
    c = v_cross(a1, b1)
    return q_normalize((c[0], c[1], c[2], real))


@njit(cache=True)
def _one(q, p, t, f, u, off, pole, twist, weight, no_plane, on_sphere):
    """One aim: ``(correction, reached, error angle)`` (module :mod:`ikrig.solvers.aim`)."""
    q = q_normalize(q)
    inv = q_conj(q)
    target = q_rotate(inv, (t[0] - p[0], t[1] - p[1], t[2] - p[2]))
    pole_js = q_rotate(inv, pole)
    fwd, fwd_ok = _unit(f)
    up, _ = _unit(u)

    # 1. the offset: where its forward line meets the target's sphere
    r2 = v_dot(target, target)
    along = v_dot(fwd, off)
    across2 = v_dot(off, off) - along * along
    reached = fwd_ok and r2 > 0.0 and not across2 > r2 * (1.0 + on_sphere)
    corr = (0.0, 0.0, 0.0, 1.0)
    if reached:
        k = math.sqrt(max(r2 - across2, 0.0)) - along
        offsetted = (off[0] + fwd[0] * k, off[1] + fwd[1] * k, off[2] + fwd[2] * k)
        # 2. aim; 3. up toward the pole, about the target direction
        arc = _arc(offsetted, target)
        aim_dir, _ = _unit(target)
        wanted = v_cross(_unit(pole_js)[0], aim_dir)
        have = v_cross(q_rotate(arc, up), aim_dir)
        roll = 0.0
        if v_dot(wanted, wanted) > no_plane and v_dot(have, have) > no_plane:
            roll = math.atan2(v_dot(v_cross(have, wanted), aim_dir), v_dot(have, wanted))
        corr = q_mul(_about(aim_dir, roll), arc)
        # 4. twist; 5. weight, w >= 0 first so that the blend takes the short way
        if twist != 0.0:
            corr = q_mul(_about(aim_dir, twist), corr)
        if corr[3] < 0.0:
            corr = (-corr[0], -corr[1], -corr[2], -corr[3])
        w = min(max(weight, 0.0), 1.0)
        if w < 1.0:
            corr = q_normalize((corr[0] * w, corr[1] * w, corr[2] * w, corr[3] * w + (1.0 - w)))
    if not fwd_ok:
        return corr, reached, math.pi
    # the error: the corrected axis against the corrected offset point's way to the target
    axis = q_rotate(corr, fwd)
    o = q_rotate(corr, off)
    way = (target[0] - o[0], target[1] - o[1], target[2] - o[2])
    scale = math.sqrt(r2) + math.sqrt(v_dot(off, off))
    if math.sqrt(v_dot(way, way)) <= 1e-9 * scale:
        return corr, reached, 0.0
    c = v_cross(axis, way)
    return corr, reached, math.atan2(math.sqrt(v_dot(c, c)), v_dot(axis, way))


@njit(cache=True)
def aim_rows(rows, no_plane, on_sphere, out):
    """Solve every row of ``rows`` (:class:`AimRows`) into ``out`` (:class:`AimOut`)."""
    n = out.correction.shape[0]
    for i in range(n):
        k = i if rows.rotation.shape[0] > 1 else 0
        corr, reached, error = _one(
            q_get(rows.rotation, k), _v3(rows.position, i), _v3(rows.target, i),
            _v3(rows.forward, i), _v3(rows.up, i), _v3(rows.offset, i), _v3(rows.pole, i),
            _s(rows.twist, i), _s(rows.weight, i), no_plane, on_sphere,
        )  # fmt: skip
        q_set(out.correction, i, corr)
        out.reached[i] = 1 if reached else 0
        out.error[i] = error
