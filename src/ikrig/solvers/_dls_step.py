"""One damped-least-squares step of :mod:`._dls_kernels` (private): the weighted Jacobian,
the damped solve, the straight-chain tests and the kick axis (module notes of
:mod:`._dls_kernels`, steps 3-6).

The goals travel as a ``Goals`` record and the active residual rows as an ``Active`` record
(both :mod:`._dls_kernels`); ``pos (n + 1, 3)`` are the chain's world joint positions.
"""

from __future__ import annotations

import math

from .._jit.setup import njit
from ..kernels.constraints import project_local_t
from ..kernels.qmath import (
    q_conj,
    q_exp,
    q_get,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    v_any_perpendicular,
    v_get,
    v_sub,
)

EPS = 1e-7  # sine below which directions count as parallel


@njit(cache=True, inline="always")
def jacobian(goals, act, pos, jac):
    """Rows ``:3 m`` of the weighted Jacobian ``jac`` of the active goals (step 3)."""
    n = pos.shape[0] - 1
    effectors, wpos, wrot = goals.effectors, goals.wpos, goals.wrot
    rows = act.rows
    jac[: 3 * act.m, :] = 0.0
    for r in range(act.m):
        g = rows[r] // 2
        e = effectors[g]
        a = 3 * r
        if rows[r] % 2 == 0:
            w = wpos[g]
            for i in range(min(e, n)):
                rx = w * (pos[e, 0] - pos[i, 0])
                ry = w * (pos[e, 1] - pos[i, 1])
                rz = w * (pos[e, 2] - pos[i, 2])
                b = 3 * i
                jac[a + 1, b] = -rz
                jac[a + 2, b] = ry
                jac[a, b + 1] = rz
                jac[a + 2, b + 1] = -rx
                jac[a, b + 2] = -ry
                jac[a + 1, b + 2] = rx
        else:
            w = wrot[g] * act.length
            for i in range(min(e + 1, n)):
                b = 3 * i
                jac[a, b] = w
                jac[a + 1, b + 1] = w
                jac[a + 2, b + 2] = w


@njit(cache=True, inline="always")
def damped_step(mm, n, lam, max_step, sc):
    """``sc.dth = J^T (J J^T + lam^2 I)^-1 sc.res`` over the ``mm`` active rows of
    ``sc.jac`` (``sc``: a ``DLSScratch``; Cholesky of ``sc.amat`` in place), scaled down so
    that no joint turns by more than ``max_step``. Returns the largest joint turn before
    that scaling."""
    jac, amat, res, ysol, dth = sc.jac, sc.amat, sc.res, sc.ysol, sc.dth
    # A = J J^T + lambda^2 I, then Cholesky (lower) in place and two solves.
    for a in range(mm):
        for b in range(a + 1):
            s = 0.0
            for k in range(3 * n):
                s += jac[a, k] * jac[b, k]
            amat[a, b] = s
        amat[a, a] += lam * lam
    for a in range(mm):
        for b in range(a + 1):
            s = amat[a, b]
            for k in range(b):
                s -= amat[a, k] * amat[b, k]
            if a == b:
                amat[a, a] = math.sqrt(s) if s > 0.0 else 1.0
            else:
                amat[a, b] = s / amat[b, b]
    for a in range(mm):
        s = res[a]
        for k in range(a):
            s -= amat[a, k] * ysol[k]
        ysol[a] = s / amat[a, a]
    for a in range(mm - 1, -1, -1):
        s = ysol[a]
        for k in range(a + 1, mm):
            s -= amat[k, a] * ysol[k]
        ysol[a] = s / amat[a, a]
    # dtheta = J^T y, then the per-joint step limit.
    biggest = 0.0
    for b in range(3 * n):
        s = 0.0
        for a in range(mm):
            s += jac[a, b] * ysol[a]
        dth[b] = s
    for i in range(n):
        s = math.sqrt(dth[3 * i] ** 2 + dth[3 * i + 1] ** 2 + dth[3 * i + 2] ** 2)
        biggest = max(biggest, s)
    if biggest > max_step:
        k = max_step / biggest
        for b in range(3 * n):
            dth[b] *= k
    return biggest


@njit(cache=True)
def straight(pos, tiny):
    """Whether every bone longer than ``tiny`` lies on one line; returns ``(straight, the
    first such bone or zeros)``."""
    n = pos.shape[0] - 1
    first = (0.0, 0.0, 0.0)
    f2 = 0.0
    on_line = True
    for i in range(n):
        bv = v_sub(v_get(pos, i + 1), v_get(pos, i))
        b2 = bv[0] * bv[0] + bv[1] * bv[1] + bv[2] * bv[2]
        if b2 <= tiny * tiny:
            continue
        if f2 == 0.0:
            first, f2 = bv, b2
            continue
        cx = first[1] * bv[2] - first[2] * bv[1]
        cy = first[2] * bv[0] - first[0] * bv[2]
        cz = first[0] * bv[1] - first[1] * bv[0]
        if cx * cx + cy * cy + cz * cz > (EPS * EPS) * f2 * b2:
            on_line = False
    return on_line, first


@njit(cache=True)
def aligned(goals, act, pos, tiny):
    """Whether every bone (longer than ``tiny``) before each active position goal's
    effector points along that goal's residual (goals within ``tiny`` of their targets do
    not count): the straight chain points at unreachable targets or is on them."""
    n = pos.shape[0] - 1
    rows, effectors, tpos = act.rows, goals.effectors, goals.tpos
    ok = True
    for r in range(act.m):
        g = rows[r] // 2
        if rows[r] % 2 == 1:
            continue
        e = effectors[g]
        d = v_sub(v_get(tpos, g), v_get(pos, e))
        if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= tiny * tiny:
            continue  # on its target (to rounding): nothing to bend for
        for i in range(min(e, n)):
            bv = v_sub(v_get(pos, i + 1), v_get(pos, i))
            if bv[0] * bv[0] + bv[1] * bv[1] + bv[2] * bv[2] <= tiny * tiny:
                continue
            if bv[0] * d[0] + bv[1] * d[1] + bv[2] * d[2] <= 0.0:
                ok = False
    return ok


@njit(cache=True)
def kick_axis(pos, bend, tiny, first):
    """Unit axis to bend a straight chain about: ``bend`` made perpendicular to the chain's
    line, else a fixed perpendicular of the line."""
    n = pos.shape[0] - 1
    a = v_sub(v_get(pos, n), v_get(pos, 0))
    a2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
    if not a2 > tiny * tiny:
        a = first
        a2 = a[0] * a[0] + a[1] * a[1] + a[2] * a[2]
    if not a2 > tiny * tiny:
        a, a2 = (1.0, 0.0, 0.0), 1.0
    kk = (bend[0] * a[0] + bend[1] * a[1] + bend[2] * a[2]) / a2
    u = (bend[0] - kk * a[0], bend[1] - kk * a[1], bend[2] - kk * a[2])
    u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    b2 = bend[0] ** 2 + bend[1] ** 2 + bend[2] ** 2
    if u2 > EPS * EPS * b2 and b2 > 0.0:
        inv = 1.0 / math.sqrt(u2)
        return (u[0] * inv, u[1] * inv, u[2] * inv)
    inv = 1.0 / math.sqrt(a2)
    return v_any_perpendicular((a[0] * inv, a[1] * inv, a[2] * inv))


@njit(cache=True, inline="always")
def apply_step(ch, st, dth):
    """``L_i <- exp(W_{i-1}^-1 w_i) L_i`` for the world increments ``dth (3 n,)``, then the
    constraint (``ch``: ``FrameChain``, ``st``: ``FrameState``; step 6)."""
    pq, kinds, params, rl, rw = ch.pq, ch.kinds, ch.params, st.rl, st.rw
    for i in range(rl.shape[0]):
        par = pq if i == 0 else q_get(rw, i - 1)
        v = q_rotate(q_conj(par), (dth[3 * i], dth[3 * i + 1], dth[3 * i + 2]))
        nq = q_normalize(q_mul(q_exp(v), q_get(rl, i)))
        if kinds[i] != 0:
            nq = q_normalize(project_local_t(kinds[i], params[i], nq))
        q_set(rl, i, nq)
