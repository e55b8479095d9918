"""Forward kinematics, goal residuals and their Jacobian blocks for the whole-body kernels
(private; the records are in :mod:`._records`).

Residuals are "target minus current", weighted so that they add up in data units:

* position: ``w (t - p)``, ``p`` the joint's point (joint position plus its rotated offset);
* orientation: ``w L log(T R^-1)``, a world rotation vector (one radian weighs like ``L``);
* aim: ``w L (u - d)``, ``d`` the joint's forward axis in the world, ``u`` the unit
  direction from the joint to the target; the pole part ``w2 L (v - c)`` with ``c`` and
  ``v`` the up axis and the pole direction, both made perpendicular to ``d`` and unit;
* the prior of each free node: ``k (rho)``, ``rho`` the world rotation vector that takes the
  joint's local rotation back to the input's (a root translation: the way back, in ``L``).

Jacobian blocks ``A`` are the change of the *current* quantity per node increment (world
axis angles through the joint; root translations in units of ``L``), so a Gauss-Newton step
solves ``(A^T A + prior + damping) delta = A^T e + prior rho``.
"""

from __future__ import annotations

import math

from ..._jit.setup import njit
from ...kernels.constraints import project_local_t
from ...kernels.qmath import (
    q_conj,
    q_exp,
    q_get,
    q_log,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    v_get,
    v_set,
)
from ._records import AIM, POS, ROT
from ._tree_solve import add_block_products

IDENTITY = (0.0, 0.0, 0.0, 1.0)
CLAMP = 0.2  # per step no position goal counts as farther than this times L (see build)


@njit(cache=True)
def forward(tree, st):
    """World rotations and positions of the state's pose (``st.rw``, ``st.pw``)."""
    parents, rl, pl, rw, pw = tree.parents, st.rl, st.pl, st.rw, st.pw
    for j in range(parents.shape[0]):
        p = parents[j]
        if p < 0:
            q_set(rw, j, q_get(rl, j))
            v_set(pw, j, v_get(pl, j))
            continue
        pq = q_get(rw, p)
        q_set(rw, j, q_mul(pq, q_get(rl, j)))
        t = q_rotate(pq, v_get(pl, j))
        pw[j, 0] = pw[p, 0] + t[0]
        pw[j, 1] = pw[p, 1] + t[1]
        pw[j, 2] = pw[p, 2] + t[2]


@njit(cache=True)
def goal_point(goals, g, st):
    """The world point of position goal ``g`` (joint position plus its rotated offset)."""
    j = goals.joint[g]
    o = q_rotate(q_get(st.rw, j), (goals.vec[g, 0], goals.vec[g, 1], goals.vec[g, 2]))
    return (st.pw[j, 0] + o[0], st.pw[j, 1] + o[1], st.pw[j, 2] + o[2])


@njit(cache=True)
def _unit(v):
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n <= 1e-300:
        return (0.0, 0.0, 0.0), 0.0
    return (v[0] / n, v[1] / n, v[2] / n), n


@njit(cache=True)
def _perp_unit(v, d):
    """``v`` without its component along unit ``d``, made unit (zeros if nothing is left)."""
    k = v[0] * d[0] + v[1] * d[1] + v[2] * d[2]
    return _unit((v[0] - k * d[0], v[1] - k * d[1], v[2] - k * d[2]))


@njit(cache=True)
def aim_frame(goals, g, tgt, st, frozen=False):
    """Aim goal ``g``'s forward axis ``d``, the unit direction ``u`` to its target and the
    distance (0: the target is on the joint), the unit up ``c`` and pole ``v`` directions
    perpendicular to ``d`` (zeros when undefined). ``frozen``: a look-at's ``u`` is the one
    :func:`~._kernels.freeze_looks` fixed in its base joint's frame (see there)."""
    j = goals.joint[g]
    r = q_get(st.rw, j)
    vec = goals.vec
    d = q_rotate(r, (vec[g, 0], vec[g, 1], vec[g, 2]))
    u, dist = _unit((tgt[g, 0] - st.pw[j, 0], tgt[g, 1] - st.pw[j, 1], tgt[g, 2] - st.pw[j, 2]))
    base = st.look_base[g]
    if frozen and base > -2:
        fu = (st.look_u[g, 0], st.look_u[g, 1], st.look_u[g, 2])
        u = fu if base < 0 else q_rotate(q_get(st.rw, base), fu)
    elif dist == 0.0:
        u = d
    c, _ = _perp_unit(q_rotate(r, (vec[g, 3], vec[g, 4], vec[g, 5])), d)
    pole = (tgt[g, 3] - st.pw[j, 0], tgt[g, 4] - st.pw[j, 1], tgt[g, 5] - st.pw[j, 2])
    v, _ = _perp_unit(pole, d)
    return d, u, dist, c, v


@njit(cache=True)
def evaluate(tree, goals, tgt, wt, rl0, pl0, st, s):
    """Forward kinematics of ``st``, its residuals (``st.res``, ``st.rho``) and the two
    parts of the objective: the sums of the squared weighted goal residuals and priors."""
    forward(tree, st)
    res, L = st.res, s.length
    e = 0.0
    for g in range(goals.kind.shape[0]):
        res[g, :, :] = 0.0
        w = wt[g, 0]
        if w <= 0.0 and wt[g, 1] <= 0.0:
            continue
        kind = goals.kind[g]
        if kind == POS:
            p = goal_point(goals, g, st)
            r = (w * (tgt[g, 0] - p[0]), w * (tgt[g, 1] - p[1]), w * (tgt[g, 2] - p[2]))
        elif kind == ROT:
            t = (tgt[g, 0], tgt[g, 1], tgt[g, 2], tgt[g, 3])
            v, _ = q_log(q_mul(t, q_conj(q_get(st.rw, goals.joint[g]))))
            r = (w * L * v[0], w * L * v[1], w * L * v[2])
        else:
            d, u, _, c, v = aim_frame(goals, g, tgt, st, True)
            r = (w * L * (u[0] - d[0]), w * L * (u[1] - d[1]), w * L * (u[2] - d[2]))
            w2 = wt[g, 1] * L
            if w2 > 0.0:
                res[g, 1, 0] = w2 * (v[0] - c[0])
                res[g, 1, 1] = w2 * (v[1] - c[1])
                res[g, 1, 2] = w2 * (v[2] - c[2])
        res[g, 0, 0], res[g, 0, 1], res[g, 0, 2] = r
        for a in range(2):
            e += res[g, a, 0] ** 2 + res[g, a, 1] ** 2 + res[g, a, 2] ** 2
    return e, prior_residuals(tree, rl0, pl0, st, L)


@njit(cache=True)
def prior_residuals(tree, rl0, pl0, st, L):
    """``st.rho`` of every free node and the prior's part of the objective."""
    e = 0.0
    for b in range(tree.node_joint.shape[0]):
        st.rho[b, :] = 0.0
        if not tree.node_free[b]:
            continue
        j = tree.node_joint[b]
        if tree.node_trans[b]:
            rho = ((pl0[j, 0] - st.pl[j, 0]) / L, (pl0[j, 1] - st.pl[j, 1]) / L,
                   (pl0[j, 2] - st.pl[j, 2]) / L)  # fmt: skip
        else:
            p = tree.parents[j]
            par = IDENTITY if p < 0 else q_get(st.rw, p)
            v, _ = q_log(q_mul(q_get(rl0, j), q_conj(q_get(st.rl, j))))
            rho = q_rotate(par, v)
        v_set(st.rho, b, rho)
        k = tree.prior[b]
        e += k * k * (rho[0] * rho[0] + rho[1] * rho[1] + rho[2] * rho[2])
    return e


@njit(cache=True, inline="always")
def _cross_block(jb, k, r, f):
    """``jb[k] = -f [r]x`` (the change of ``w x r``-type quantities, scaled by ``f``)."""
    jb[k, 0, 0] = 0.0
    jb[k, 0, 1] = f * r[2]
    jb[k, 0, 2] = -f * r[1]
    jb[k, 1, 0] = -f * r[2]
    jb[k, 1, 1] = 0.0
    jb[k, 1, 2] = f * r[0]
    jb[k, 2, 0] = f * r[1]
    jb[k, 2, 1] = -f * r[0]
    jb[k, 2, 2] = 0.0


@njit(cache=True, inline="always")
def _diag_block(jb, k, f):
    jb[k, :, :] = 0.0
    jb[k, 0, 0] = f
    jb[k, 1, 1] = f
    jb[k, 2, 2] = f


@njit(cache=True)
def _blocks(tree, goals, g, part, tgt, wt, st, s, jb):
    """Jacobian blocks ``jb[k]`` of goal ``g``'s residual ``part`` (0 main, 1 pole) for the
    ``k``-th node of its path, weighted and scaled by the goal's share of each node."""
    L = s.length
    j = goals.joint[g]
    node = tree.joint_node[j]
    kind = goals.kind[g]
    w = wt[g, part]
    if kind == POS:
        p = goal_point(goals, g, st)
    elif kind == AIM:
        d, u, dist, c, _ = aim_frame(goals, g, tgt, st, True)
        w *= L
    else:
        w *= L
    for k in range(tree.depth[node]):
        b = tree.anc[node, k]
        f = w * goals.share[g, b]
        if not tree.node_free[b] or f == 0.0:
            jb[k, :, :] = 0.0
            continue
        trans = tree.node_trans[b]
        a = tree.node_joint[b]
        if kind == POS:
            if trans:
                _diag_block(jb, k, f * L)
            else:
                _cross_block(jb, k, (p[0] - st.pw[a, 0], p[1] - st.pw[a, 1], p[2] - st.pw[a, 2]), f)
        elif kind == ROT:
            if trans:
                jb[k, :, :] = 0.0
            else:
                _diag_block(jb, k, f)
        elif part == 1:  # the pole: c turns with the joint
            if trans:
                jb[k, :, :] = 0.0
            else:
                _cross_block(jb, k, c, f)
        else:  # aim: d turns with the joint, u moves with its position
            if trans:
                _aim_u_block(jb, k, u, dist, (0.0, 0.0, 0.0), f * L, True)
            else:
                _cross_block(jb, k, d, f)
                r = (st.pw[j, 0] - st.pw[a, 0], st.pw[j, 1] - st.pw[a, 1],
                     st.pw[j, 2] - st.pw[a, 2])  # fmt: skip
                if a != j and st.look_base[g] == -2:  # a look-at's u is frozen
                    _aim_u_block(jb, k, u, dist, r, f, False)


@njit(cache=True, inline="always")
def _aim_u_block(jb, k, u, dist, r, f, trans):
    """Add the change of ``-u`` to ``jb[k]`` (the current quantity is ``d - u``):
    ``-(I - u u^T) [r]x / dist`` per world angle (the joint moves by ``w x r``), or set it to
    ``(I - u u^T) / dist`` per root translation."""
    if dist <= 0.0:
        if trans:
            jb[k, :, :] = 0.0
        return
    inv = f / dist
    for row in range(3):
        for col in range(3):
            if trans:
                m = (1.0 if row == col else 0.0) - u[row] * u[col]
                jb[k, row, col] = m * inv
            else:
                # (I - u u^T) [r]x, column col of [r]x is e_col x r
                ex = (1.0 if col == 0 else 0.0, 1.0 if col == 1 else 0.0, 1.0 if col == 2 else 0.0)
                cx = (ex[1] * r[2] - ex[2] * r[1], ex[2] * r[0] - ex[0] * r[2],
                      ex[0] * r[1] - ex[1] * r[0])  # fmt: skip
                k2 = u[0] * cx[0] + u[1] * cx[1] + u[2] * cx[2]
                jb[k, row, col] += (cx[row] - k2 * u[row]) * inv


@njit(cache=True)
def _add_point_goal(tree, goals, g, w, st, s, sc):
    """A position goal's blocks and gradient, in closed form: per rotation node the block is
    ``-f [r]x`` (``r`` from the node's joint to the goal's point), so a pair's product is
    ``f_i f_k ((r_i . r_k) I - r_k r_i^T)`` and the gradient ``f r x e``; a root translation
    node's block is ``f L I``."""
    hanc, grad, lever, anc = sc.hanc, sc.grad, sc.lever, tree.anc
    node = tree.joint_node[goals.joint[g]]
    dep = tree.depth[node]
    p = goal_point(goals, g, st)
    e = (st.res[g, 0, 0], st.res[g, 0, 1], st.res[g, 0, 2])
    for k in range(dep):
        b = anc[node, k]
        f = w * goals.share[g, b] if tree.node_free[b] else 0.0
        a = tree.node_joint[b]
        if tree.node_trans[b]:
            lever[k, 0], lever[k, 1], lever[k, 2], lever[k, 3] = 0.0, 0.0, 0.0, -f * s.length
        else:
            lever[k, 0] = p[0] - st.pw[a, 0]
            lever[k, 1] = p[1] - st.pw[a, 1]
            lever[k, 2] = p[2] - st.pw[a, 2]
            lever[k, 3] = f
    for i in range(dep):
        fi = lever[i, 3]
        if fi == 0.0:
            continue
        x = anc[node, i]
        ri = (lever[i, 0], lever[i, 1], lever[i, 2])
        if tree.node_trans[x]:  # the path's top: only its own block
            fi = -fi
            for c in range(3):
                grad[x, c] += fi * e[c]
                hanc[x, 0, c, c] += fi * fi
            continue
        grad[x, 0] += fi * (ri[1] * e[2] - ri[2] * e[1])
        grad[x, 1] += fi * (ri[2] * e[0] - ri[0] * e[2])
        grad[x, 2] += fi * (ri[0] * e[1] - ri[1] * e[0])
        for k in range(i, dep):
            fk = lever[k, 3]
            if fk == 0.0:
                continue
            h = hanc[x, k - i]
            if tree.node_trans[anc[node, k]]:  # (-fi [ri]x)^T (g I) = fi g [ri]x, g = -fk
                m = -fi * fk
                h[0, 1] -= m * ri[2]
                h[0, 2] += m * ri[1]
                h[1, 0] += m * ri[2]
                h[1, 2] -= m * ri[0]
                h[2, 0] -= m * ri[1]
                h[2, 1] += m * ri[0]
                continue
            m = fi * fk
            rk = (lever[k, 0], lever[k, 1], lever[k, 2])
            d = m * (ri[0] * rk[0] + ri[1] * rk[1] + ri[2] * rk[2])
            for r in range(3):
                for c in range(3):
                    h[r, c] -= m * rk[r] * ri[c]
                h[r, r] += d


@njit(cache=True)
def _add_rotation_goal(tree, goals, g, w, st, sc):
    """An orientation goal's blocks: ``f I`` on every rotation node of its path."""
    hanc, grad, anc = sc.hanc, sc.grad, tree.anc
    node = tree.joint_node[goals.joint[g]]
    dep = tree.depth[node]
    for i in range(dep):
        x = anc[node, i]
        if tree.node_trans[x] or not tree.node_free[x]:
            continue
        fi = w * goals.share[g, x]
        if fi == 0.0:
            continue
        for c in range(3):
            grad[x, c] += fi * st.res[g, 0, c]
        for k in range(i, dep):
            y = anc[node, k]
            if tree.node_trans[y] or not tree.node_free[y]:
                continue
            m = fi * w * goals.share[g, y]
            for c in range(3):
                hanc[x, k - i, c, c] += m


@njit(cache=True)
def _clamp_residuals(goals, wt, st, reach):
    """Scale every goal residual alike (in place, for this step only) so that no position
    goal is farther than ``reach`` from its target: far or unreachable targets are
    approached in steps, where the Gauss-Newton model (which ignores a large residual's
    curvature) holds; the same factor for all keeps their balance."""
    far = 0.0
    for g in range(goals.kind.shape[0]):
        w = wt[g, 0]
        if goals.kind[g] == POS and w > 0.0:
            r = st.res[g, 0]
            far = max(far, math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) / w)
    if far > reach:
        st.res[:, :, :] *= reach / far


@njit(cache=True)
def build(tree, goals, tgt, wt, st, s, lam, sc, pull):
    """The damped Gauss-Newton system of the state ``st`` into ``sc.hanc`` and ``sc.grad``;
    the prior's pull toward the input (its gradient) only with ``pull`` (else the prior
    only damps the step, by each joint's stiffness)."""
    hanc, grad, jb = sc.hanc, sc.grad, sc.jb
    hanc[:, :, :, :] = 0.0
    grad[:, :] = 0.0
    anc = tree.anc
    _clamp_residuals(goals, wt, st, CLAMP * s.length)
    for g in range(goals.kind.shape[0]):
        kind = goals.kind[g]
        if kind == POS:
            if wt[g, 0] > 0.0:
                _add_point_goal(tree, goals, g, wt[g, 0], st, s, sc)
            continue
        if kind == ROT:
            if wt[g, 0] > 0.0:
                _add_rotation_goal(tree, goals, g, wt[g, 0] * s.length, st, sc)
            continue
        node = tree.joint_node[goals.joint[g]]
        dep = tree.depth[node]
        for part in range(2):
            if wt[g, part] <= 0.0:
                continue
            _blocks(tree, goals, g, part, tgt, wt, st, s, jb)
            e0, e1, e2 = st.res[g, part, 0], st.res[g, part, 1], st.res[g, part, 2]
            for i in range(dep):
                x = anc[node, i]
                if not tree.node_free[x]:
                    continue
                a = jb[i]
                for c in range(3):
                    grad[x, c] += a[0, c] * e0 + a[1, c] * e1 + a[2, c] * e2
                for k in range(i, dep):
                    if tree.node_free[anc[node, k]]:
                        add_block_products(hanc, x, k - i, a, jb[k])
    lam2 = lam * lam
    for b in range(tree.depth.shape[0]):
        if not tree.node_free[b]:
            hanc[b, 0, :, :] = 0.0
            for c in range(3):
                hanc[b, 0, c, c] = 1.0
                grad[b, c] = 0.0
            continue
        k2 = tree.prior[b] ** 2
        for c in range(3):
            hanc[b, 0, c, c] += k2 + lam2
            if pull:
                grad[b, c] += k2 * st.rho[b, c]


@njit(cache=True)
def apply_step(tree, st, step, scale, L):
    """Turn and move the state's nodes by ``scale * step`` (world-axis angles; root
    translations in ``L``), then project each turned joint onto its constraint. Uses the
    world rotations of the state before the step."""
    for b in range(tree.node_joint.shape[0]):
        if not tree.node_free[b]:
            continue
        j = tree.node_joint[b]
        dx, dy, dz = scale * step[b, 0], scale * step[b, 1], scale * step[b, 2]
        if tree.node_trans[b]:
            st.pl[j, 0] += dx * L
            st.pl[j, 1] += dy * L
            st.pl[j, 2] += dz * L
            continue
        p = tree.parents[j]
        par = IDENTITY if p < 0 else q_get(st.rw, p)
        v = q_rotate(q_conj(par), (dx, dy, dz))
        q = q_normalize(q_mul(q_exp(v), q_get(st.rl, j)))
        q_set(st.rl, j, constrain(tree, j, q))


@njit(cache=True)
def constrain(tree, j, q):
    """``q`` projected onto joint ``j``'s constraint (unit)."""
    k = tree.kinds[j]
    if k == 0:
        return q
    return q_normalize(project_local_t(k, tree.params[j], q))


@njit(cache=True)
def goal_errors(goals, tgt, wt, st, s, perr, rerr, ok):
    """Each goal's position error (data units), rotation error (radians) and ``reached``
    in the state ``st`` (whose forward kinematics is current); absent goals: 0, 0, True."""
    for g in range(goals.kind.shape[0]):
        perr[g] = 0.0
        rerr[g] = 0.0
        ok[g] = True
        if wt[g, 0] <= 0.0 and wt[g, 1] <= 0.0:
            continue
        kind = goals.kind[g]
        if kind == POS:
            p = goal_point(goals, g, st)
            d = math.sqrt((tgt[g, 0] - p[0]) ** 2 + (tgt[g, 1] - p[1]) ** 2
                          + (tgt[g, 2] - p[2]) ** 2)  # fmt: skip
            perr[g] = d
            ok[g] = d <= s.tol
        elif kind == ROT:
            t = (tgt[g, 0], tgt[g, 1], tgt[g, 2], tgt[g, 3])
            _, ang = q_log(q_mul(t, q_conj(q_get(st.rw, goals.joint[g]))))
            rerr[g] = ang
            ok[g] = ang <= s.rtol
        else:
            d, u, _, c, v = aim_frame(goals, g, tgt, st)
            ang = 0.0
            if wt[g, 0] > 0.0:
                ang = _angle(d, u)
            if wt[g, 1] > 0.0 and (c[0] != 0.0 or c[1] != 0.0 or c[2] != 0.0):
                if v[0] != 0.0 or v[1] != 0.0 or v[2] != 0.0:
                    ang = max(ang, _angle(c, v))
            rerr[g] = ang
            ok[g] = ang <= s.rtol


@njit(cache=True)
def _angle(a, b):
    """Angle between unit vectors (atan2 of the cross and dot products: exact near 0)."""
    cx = a[1] * b[2] - a[2] * b[1]
    cy = a[2] * b[0] - a[0] * b[2]
    cz = a[0] * b[1] - a[1] * b[0]
    return math.atan2(
        math.sqrt(cx * cx + cy * cy + cz * cz), a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    )
