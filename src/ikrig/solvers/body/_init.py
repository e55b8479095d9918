"""The analytic starts of the whole-body kernels (private).

:func:`analytic_start`: walking the tree from the roots, a joint with an orientation goal
is turned to it; else a joint whose own position is known (it has a position goal, or it is
a root) and some of whose children have position goals is turned so that its bones point at
those children's targets: the shortest turn that points its longest such bone at its
child's target, then the turn about that bone that best lines up the others (exact when the
bone lengths match the targets). A root with a position goal is first moved onto it (when
its translation is free). Other joints keep their local rotation.

:func:`look_start`: a look-at goal's turn spread over its chain as ozz's look-at sample
does: from the chain's first joint to the head, each joint turns by its share of what is
left (``share / sum of the shares from it to the head``) of the shortest turn that points
the head's forward axis at the target, the head taking the rest; repeated while the
joints' moves left the axis off (the head moves as the chain turns).
"""

from __future__ import annotations

import math

from ..._jit.setup import njit
from ...kernels.qmath import (
    q_between,
    q_conj,
    q_exp,
    q_get,
    q_log,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    v_get,
)
from ._records import AIM, POS, ROT
from ._residuals import constrain, forward

LOOK_PASSES = 4  # passes of look_start over a look-at chain at most


@njit(cache=True)
def joint_targets(tree, goals, tgt, wt, sc):
    """The position target of each joint (``sc.tp``, ``sc.tw`` its weight, 0 for none): the
    heaviest active position goal on the joint itself (no offset); and its orientation
    target (``sc.tq``, ``sc.tqw``): the heaviest active orientation goal on it. Returns how
    many targets there are."""
    tw, tp, tq, tqw = sc.tw, sc.tp, sc.tq, sc.tqw
    tw[:] = 0.0
    tqw[:] = 0.0
    count = 0
    for g in range(goals.kind.shape[0]):
        w = wt[g, 0]
        if w <= 0.0:
            continue
        j = goals.joint[g]
        if goals.kind[g] == ROT:
            if tqw[j] == 0.0:
                count += 1
            if w > tqw[j]:
                tqw[j] = w
                for c in range(4):
                    tq[j, c] = tgt[g, c]
            continue
        if goals.kind[g] != POS:
            continue
        if goals.vec[g, 0] != 0.0 or goals.vec[g, 1] != 0.0 or goals.vec[g, 2] != 0.0:
            continue
        if tw[j] == 0.0:
            count += 1
        if w > tw[j]:
            tw[j] = w
            tp[j, 0], tp[j, 1], tp[j, 2] = tgt[g, 0], tgt[g, 1], tgt[g, 2]
    return count


@njit(cache=True)
def analytic_start(tree, st, sc):
    """Turn (and move) the state's joints toward the targets of :func:`joint_targets`
    (module notes), parents first; ``st.rw``/``st.pw`` end as the new pose's forward
    kinematics."""
    parents, tp, tw = tree.parents, sc.tp, sc.tw
    forward(tree, st)
    for j in range(parents.shape[0]):
        p = parents[j]
        node = tree.joint_node[j]
        if p < 0:
            tnode = tree.anc[node, 1] if tree.depth[node] > 1 else -1
            if tw[j] > 0.0 and tnode >= 0 and tree.node_free[tnode]:
                st.pl[j, 0], st.pl[j, 1], st.pl[j, 2] = tp[j, 0], tp[j, 1], tp[j, 2]
        _place(tree, st, j)
        if not tree.node_free[node]:
            continue
        if sc.tqw[j] > 0.0:  # the goal's own turn
            r = q_get(sc.tq, j)
            local = r if p < 0 else q_mul(q_conj(q_get(st.rw, p)), r)
            q_set(st.rl, j, constrain(tree, j, q_normalize(local)))
            _place(tree, st, j)
        elif tw[j] > 0.0 or p < 0:
            _aim_children(tree, st, sc, j)


@njit(cache=True)
def _place(tree, st, j):
    """World rotation and position of joint ``j`` from its parent's and its local ones."""
    p = tree.parents[j]
    if p < 0:
        q_set(st.rw, j, q_get(st.rl, j))
        st.pw[j, 0], st.pw[j, 1], st.pw[j, 2] = st.pl[j, 0], st.pl[j, 1], st.pl[j, 2]
        return
    pq = q_get(st.rw, p)
    q_set(st.rw, j, q_mul(pq, q_get(st.rl, j)))
    t = q_rotate(pq, v_get(st.pl, j))
    st.pw[j, 0] = st.pw[p, 0] + t[0]
    st.pw[j, 1] = st.pw[p, 1] + t[1]
    st.pw[j, 2] = st.pw[p, 2] + t[2]


@njit(cache=True)
def _aim_children(tree, st, sc, j):
    """Turn joint ``j`` so that its bones point at its children's targets."""
    tp, tw = sc.tp, sc.tw
    lo, hi = tree.child_start[j], tree.child_start[j + 1]
    best, blen = -1, 0.0
    for i in range(lo, hi):
        c = tree.child_list[i]
        if tw[c] > 0.0:
            n = st.pl[c, 0] ** 2 + st.pl[c, 1] ** 2 + st.pl[c, 2] ** 2
            if best < 0 or n > blen:
                best, blen = c, n
    if best < 0 or blen <= 0.0:
        return
    r = q_get(st.rw, j)
    pj = v_get(st.pw, j)
    a = q_rotate(r, v_get(st.pl, best))
    axis = (tp[best, 0] - pj[0], tp[best, 1] - pj[1], tp[best, 2] - pj[2])
    r = q_normalize(q_mul(q_between(a, axis), r))
    n2 = axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2
    if n2 > 0.0:  # the turn about the bone that lines up the other children
        inv = 1.0 / math.sqrt(n2)
        ax = (axis[0] * inv, axis[1] * inv, axis[2] * inv)
        num, den = 0.0, 0.0
        for i in range(lo, hi):
            c = tree.child_list[i]
            if c == best or tw[c] <= 0.0:
                continue
            u = _perp(q_rotate(r, v_get(st.pl, c)), ax)
            v = _perp((tp[c, 0] - pj[0], tp[c, 1] - pj[1], tp[c, 2] - pj[2]), ax)
            w = tw[c]
            cx = u[1] * v[2] - u[2] * v[1]
            cy = u[2] * v[0] - u[0] * v[2]
            cz = u[0] * v[1] - u[1] * v[0]
            num += w * (cx * ax[0] + cy * ax[1] + cz * ax[2])
            den += w * (u[0] * v[0] + u[1] * v[1] + u[2] * v[2])
        if num != 0.0 or den != 0.0:
            t = math.atan2(num, den)
            r = q_normalize(q_mul(q_exp((ax[0] * t, ax[1] * t, ax[2] * t)), r))
    p = tree.parents[j]
    local = r if p < 0 else q_mul(q_conj(q_get(st.rw, p)), r)
    q_set(st.rl, j, constrain(tree, j, q_normalize(local)))
    _place(tree, st, j)


@njit(cache=True)
def _perp(v, a):
    k = v[0] * a[0] + v[1] * a[1] + v[2] * a[2]
    return (v[0] - k * a[0], v[1] - k * a[1], v[2] - k * a[2])


@njit(cache=True)
def look_start(tree, goals, tgt, wt, st, s):
    """Spread each active look-at goal's turn over its chain (module notes), in place;
    ``st.rw``/``st.pw`` end as the pose's forward kinematics."""
    for g in range(goals.kind.shape[0]):
        if goals.kind[g] != AIM or wt[g, 0] <= 0.0:
            continue
        head = goals.joint[g]
        node = tree.joint_node[head]
        dep = tree.depth[node]
        total = 0.0
        for k in range(dep):
            total += goals.look[g, tree.anc[node, k]]
        if total <= 0.0:
            continue
        fwd = (goals.vec[g, 0], goals.vec[g, 1], goals.vec[g, 2])
        for _ in range(LOOK_PASSES):
            forward(tree, st)
            left = total
            for k in range(dep - 1, -1, -1):  # from the top of the path down to the head
                b = tree.anc[node, k]
                share = goals.look[g, b]
                if share <= 0.0 or not tree.node_free[b]:
                    left -= share
                    continue
                d = q_rotate(q_get(st.rw, head), fwd)
                to = (tgt[g, 0] - st.pw[head, 0], tgt[g, 1] - st.pw[head, 1],
                      tgt[g, 2] - st.pw[head, 2])  # fmt: skip
                v, _ = q_log(q_between(d, to))
                a = share / left
                left -= share
                _turn(tree, st, tree.node_joint[b], q_exp((v[0] * a, v[1] * a, v[2] * a)))
            d = q_rotate(q_get(st.rw, head), fwd)
            to = (tgt[g, 0] - st.pw[head, 0], tgt[g, 1] - st.pw[head, 1],
                  tgt[g, 2] - st.pw[head, 2])  # fmt: skip
            _, ang = q_log(q_between(d, to))
            if ang <= 0.25 * s.rtol:
                break


@njit(cache=True)
def _turn(tree, st, j, q):
    """Turn joint ``j`` by the world rotation ``q`` (then its constraint), and update the
    forward kinematics."""
    p = tree.parents[j]
    r = q_mul(q, q_get(st.rw, j))
    local = r if p < 0 else q_mul(q_conj(q_get(st.rw, p)), r)
    q_set(st.rl, j, constrain(tree, j, q_normalize(local)))
    forward(tree, st)
