"""The whole-body Levenberg-Marquardt kernels (private; see :mod:`ikrig.solvers.body`).

Per frame: start from the input pose, or (warm start) from the previous frame's correction
applied to it, projected onto the constraints; with a temporal pull the prior's target is
the input turned part of the way toward that start (``Settings.blend``); where position or
orientation goals say where joints and their children are or how they turn, also try the
analytic start (:mod:`._init`) and keep whichever start has the smaller objective; spread
look-at goals' turns over their chains. An analytic or look-at start that meets every goal
is the result (a function of the targets alone, the same way every frame; iterating would
only add the prior's bias, or move a look-at's spread toward the prior's). Else iterate (at
least once: the prior's pull settles what the goals leave free the same way every frame, so
the output is smooth in time):

1. the damped Gauss-Newton system of every active goal residual and every free node's prior
   (:func:`~._residuals.build`), solved on the tree (:func:`~._tree_solve.tree_solve`);
2. the step is scaled down so that no joint turns (and no root moves, in ``L``) by more
   than ``max_step``, applied (world-axis increments to local rotations, then each joint's
   constraint) and kept only if the objective did not grow: an accepted step scales the
   damping by Nielsen's rule from the ratio of the drop to the model's prediction (down to
   ``lam_min``), a rejected one is undone and doubles it, then 4 times, ... (at least
   ``1e-3 L``);
3. the frame ends when every goal is reached and the last step turned no joint by more than
   ``CONVERGED`` radians, when the model predicts an unscaled step to lower the objective by
   less than a relative ``1e-12`` a second time (a stationary point: unreachable or
   conflicting goals; after the first, the prior stops pulling, see below), or at the
   iteration limit. A frame whose goals are not met by half the iteration budget also
   stops the prior's pull: it then only damps the steps by each joint's stiffness (its pull
   along the goals' curved null space can fight the goals), and steps are judged by the
   goals' part of the objective alone.

A frame without an active goal, or whose input already meets every goal (within the
tolerances), is its input, bit for bit, and resets the warm start.
"""

from __future__ import annotations

import math

import numpy as np

from ..._jit.setup import njit, prange
from ...kernels.qmath import q_conj, q_exp, q_get, q_log, q_mul, q_normalize, q_rotate, q_set
from ._init import analytic_start, joint_targets, look_start
from ._records import Scratch, State
from ._residuals import (
    aim_frame,
    apply_step,
    build,
    constrain,
    evaluate,
    forward,
    goal_errors,
)
from ._tree_solve import tree_solve

CONVERGED = 1e-2  # radians: a step this small, with every goal reached, ends the frame
STALL = 1e-14  # radians: no step at all
LAM_REJECT = 1e-3  # smallest damping after a rejected step, fraction of L


@njit(cache=True)
def _state(J, G, B):
    return State(np.empty((J, 4)), np.empty((J, 3)), np.empty((J, 4)), np.empty((J, 3)),
                 np.zeros((G, 2, 3)), np.zeros((B, 3)), np.zeros((G, 3)),
                 np.full(G, -2, dtype=np.int64))  # fmt: skip


@njit(cache=True)
def _scratch(J, B, D):
    return Scratch(np.zeros((B, D, 3, 3)), np.zeros((B, 3)), np.zeros((B, 3)), np.zeros((B, 3, 3)),
                   np.zeros((B, 3)), np.zeros((D, 3, 3)), np.zeros((D, 3, 3)), np.zeros((D, 4)),
                   np.empty((J, 4)), np.empty((J, 3)), np.zeros((J, 3)),
                   np.zeros(J), np.zeros((J, 4)), np.zeros(J))  # fmt: skip


@njit(cache=True)
def _largest_step(tree, step):
    big = 0.0
    for b in range(step.shape[0]):
        if tree.node_free[b]:
            big = max(big, math.sqrt(step[b, 0] ** 2 + step[b, 1] ** 2 + step[b, 2] ** 2))
    return big


@njit(cache=True)
def _predicted(tree, grad, step, scale, lam2):
    """The drop of the objective the linear model predicts for ``scale * step``, the
    solution of ``(H + lam2 I) step = grad``: ``2 s step.grad - s^2 step.(grad - lam2 step)``."""
    a = 0.0
    b = 0.0
    for n in range(step.shape[0]):
        if tree.node_free[n]:
            for c in range(3):
                a += step[n, c] * grad[n, c]
                b += step[n, c] * step[n, c]
    return 2.0 * scale * a - scale * scale * (a - lam2 * b)


@njit(cache=True)
def _all_reached(goals, tgt, wt, st, s, perr, rerr, ok):
    """Every goal but the hints (``goals.soft``, which give way) within its tolerance;
    fills the errors and ``ok`` of all."""
    goal_errors(goals, tgt, wt, st, s, perr, rerr, ok)
    for g in range(ok.shape[0]):
        if not ok[g] and not goals.soft[g]:
            return False
    return True


@njit(cache=True)
def freeze_looks(tree, goals, tgt, wt, st):
    """Fix each active look-at goal's target direction in the frame of its *base*, the
    parent of its chain's top joint, for one iteration (``st.look_u``, ``st.look_base``).

    Only the chain turns for a look-at (its Jacobian has the chain's columns alone), yet a
    joint above the chain that another goal turns (a hand's goal turning the spine, the
    root) turns the head and the line from the head to the target with it. With the target
    direction fixed in the base's frame, such a turn turns both alike: the residual is
    the chain's own and the linear model is right. Each iteration starts from the true
    direction again, so the solve still ends with the head on the target."""
    for g in range(goals.kind.shape[0]):
        st.look_base[g] = -2
        if wt[g, 0] <= 0.0:
            continue
        node = tree.joint_node[goals.joint[g]]
        top = -1
        for k in range(tree.depth[node]):
            b = tree.anc[node, k]
            if goals.look[g, b] > 0.0:
                top = tree.node_joint[b]
        if top < 0:
            continue  # an aim goal, not a look-at
        _, u, _, _, _ = aim_frame(goals, g, tgt, st)
        base = tree.parents[top]
        if base >= 0:
            u = q_rotate(q_conj(q_get(st.rw, base)), u)
        st.look_u[g, 0], st.look_u[g, 1], st.look_u[g, 2] = u
        st.look_base[g] = base


@njit(cache=True)
def solve_frame(tree, goals, tgt, wt, rl0, pl0, s, st, sc, errs, stand):
    """Levenberg-Marquardt from the state ``st`` (module notes, steps 1-3) for one frame;
    ``errs``: its ``(perr, rerr, ok)`` rows, filled at the end; ``stand``: a start that
    meets every goal is the result. Returns the iterations."""
    perr, rerr, ok = errs
    L = s.length
    if s.look:
        forward(tree, st)
        freeze_looks(tree, goals, tgt, wt, st)
    eg, ep = evaluate(tree, goals, tgt, wt, rl0, pl0, st, s)
    reached = _all_reached(goals, tgt, wt, st, s, perr, rerr, ok)
    lam2 = s.lam_min**2
    nu = 2.0
    it = 0
    stalls = 0
    while it < s.max_iter and not (it == 0 and reached and stand):
        # the objective the step minimises: with the prior's pull or without it
        pull = reached or (2 * it < s.max_iter and stalls == 0)
        if s.look and it > 0:  # the look-at directions as the last step left them
            freeze_looks(tree, goals, tgt, wt, st)
            eg, ep = evaluate(tree, goals, tgt, wt, rl0, pl0, st, s)
        e = eg + ep if pull else eg
        build(tree, goals, tgt, wt, st, s, math.sqrt(lam2), sc, pull)
        sc.grad0[:, :] = sc.grad
        tree_solve(tree, sc)
        big = _largest_step(tree, sc.step)
        if big <= STALL:
            break
        scale = min(1.0, s.max_step / big)
        pred = _predicted(tree, sc.grad0, sc.step, scale, lam2)
        sc.rl_save[:, :] = st.rl
        sc.pl_save[:, :] = st.pl
        apply_step(tree, st, sc.step, scale, L)
        it += 1
        eg_new, ep_new = evaluate(tree, goals, tgt, wt, rl0, pl0, st, s)
        e_new = eg_new + ep_new if pull else eg_new
        if e_new <= e:
            drop = e - e_new
            eg, ep = eg_new, ep_new
            # Nielsen's update from the gain ratio: damping follows how well the model
            # predicted the drop (a large residual's curvature makes it overshoot)
            gain = drop / pred if pred > 0.0 else 1.0
            lam2 = max(lam2 * max(1.0 / 3.0, 1.0 - (2.0 * gain - 1.0) ** 3), s.lam_min**2)
            nu = 2.0
            reached = _all_reached(goals, tgt, wt, st, s, perr, rerr, ok)
            if reached and big * scale <= CONVERGED:
                break
            if pred <= 1e-12 * e and scale == 1.0:
                if stalls > 0:
                    break  # the model sees nothing left to gain: a stationary point
                stalls = 1
        else:
            st.rl[:, :] = sc.rl_save
            st.pl[:, :] = sc.pl_save
            lam2 = max(lam2 * nu, (LAM_REJECT * L) ** 2)
            nu *= 2.0
            eg, ep = evaluate(tree, goals, tgt, wt, rl0, pl0, st, s)
    st.look_base[:] = -2  # evaluations outside the iterations see the true directions
    goal_errors(goals, tgt, wt, st, s, perr, rerr, ok)
    return it


@njit(cache=True)
def _active(wt):
    for g in range(wt.shape[0]):
        if wt[g, 0] > 0.0 or wt[g, 1] > 0.0:
            return True
    return False


@njit(cache=True)
def _input_meets_goals(tree, goals, tgt, wt, rl0, pl0, s, st, errs):
    """Whether the frame's input already meets every goal (then it is the optimum, to the
    tolerance, and is kept as it is); fills ``errs`` with its errors."""
    st.rl[:, :] = rl0
    st.pl[:, :] = pl0
    forward(tree, st)
    perr, rerr, ok = errs
    return _all_reached(goals, tgt, wt, st, s, perr, rerr, ok)


@njit(cache=True)
def _start(tree, rl0, pl0, corr, shift, st, warm):
    """The frame's start: its input with the warm-start correction (``corr`` local
    rotations, ``shift`` root translations) on the free nodes, projected."""
    st.pl[:, :] = pl0
    for b in range(tree.node_joint.shape[0]):
        j = tree.node_joint[b]
        if tree.node_trans[b]:
            if warm and tree.node_free[b]:
                for c in range(3):
                    st.pl[j, c] += shift[j, c]
            continue
        q = q_get(rl0, j)
        if tree.node_free[b]:
            if warm:
                q = q_normalize(q_mul(q_get(corr, j), q))
            q = constrain(tree, j, q)
        q_set(st.rl, j, q)


@njit(cache=True)
def _prior_target(rl0, pl0, st, blend, rp, pp):
    """The prior's target: ``blend`` of the way from the input (``rl0``, ``pl0``) to the
    start in ``st`` (the warm start), per joint along the shortest turn."""
    for j in range(rl0.shape[0]):
        q0 = q_get(rl0, j)
        v, _ = q_log(q_mul(q_get(st.rl, j), q_conj(q0)))
        q_set(rp, j, q_normalize(q_mul(q_exp((blend * v[0], blend * v[1], blend * v[2])), q0)))
        for c in range(3):
            pp[j, c] = pl0[j, c] + blend * (st.pl[j, c] - pl0[j, c])


@njit(cache=True)
def _try_analytic(tree, goals, tgt, wt, rl0, pl0, s, st, sc):
    """Replace the start by the analytic one (:mod:`._init`) when its objective is smaller;
    returns whether it did."""
    if joint_targets(tree, goals, tgt, wt, sc) == 0:
        return False
    eg, ep = evaluate(tree, goals, tgt, wt, rl0, pl0, st, s)
    sc.rl_save[:, :] = st.rl
    sc.pl_save[:, :] = st.pl
    analytic_start(tree, st, sc)
    eg_new, ep_new = evaluate(tree, goals, tgt, wt, rl0, pl0, st, s)
    if eg_new + ep_new > eg + ep:
        st.rl[:, :] = sc.rl_save
        st.pl[:, :] = sc.pl_save
        return False
    return True


@njit(cache=True)
def solve_sequence(tree, goals, frames, s, outs, r):
    """Sequence ``r`` (frames along the last batch axis, warm-started in order)."""
    J = tree.parents.shape[0]
    G = goals.kind.shape[0]
    B = tree.depth.shape[0]
    st = _state(J, G, B)
    sc = _scratch(J, B, tree.anc.shape[1])
    corr = np.zeros((J, 4))
    corr[:, 3] = 1.0
    shift = np.zeros((J, 3))
    rpt = np.empty((J, 4))
    ppt = np.empty((J, 3))
    for f in range(frames.rl0.shape[1]):
        rl0, pl0 = frames.rl0[r, f], frames.pl0[r, f]
        tgt, wt = frames.tgt[r, f], frames.wt[r, f]
        errs = (outs.perr[r, f], outs.rerr[r, f], outs.ok[r, f])
        active = _active(wt)
        if not active:
            outs.perr[r, f] = 0.0
            outs.rerr[r, f] = 0.0
            outs.ok[r, f] = True
        if not active or _input_meets_goals(tree, goals, tgt, wt, rl0, pl0, s, st, errs):
            outs.rl[r, f] = rl0
            outs.pl[r, f] = pl0
            outs.iters[r, f] = 0
            corr[:, :3] = 0.0
            corr[:, 3] = 1.0
            shift[:, :] = 0.0
            continue
        _start(tree, rl0, pl0, corr, shift, st, s.warm)
        rp, pp = rl0, pl0
        if s.blend > 0.0:
            _prior_target(rl0, pl0, st, s.blend, rpt, ppt)
            rp, pp = rpt, ppt
        stand = s.look
        if s.init:
            stand = _try_analytic(tree, goals, tgt, wt, rp, pp, s, st, sc) or stand
        if s.look:
            look_start(tree, goals, tgt, wt, st, s)
        outs.iters[r, f] = solve_frame(tree, goals, tgt, wt, rp, pp, s, st, sc, errs, stand)
        outs.rl[r, f] = st.rl
        outs.pl[r, f] = st.pl
        for j in range(J):
            q_set(corr, j, q_normalize(q_mul(q_get(st.rl, j), q_conj(q_get(rl0, j)))))
            for c in range(3):
                shift[j, c] = st.pl[j, c] - pl0[j, c]


@njit(cache=True, parallel=True)
def body_kernel(tree, goals, frames, s, outs):
    """Every sequence of ``frames`` (:class:`~._records.Frames`, ``R`` of ``F`` frames),
    in parallel over the sequences, into ``outs`` (:class:`~._records.Outs`)."""
    for r in prange(frames.rl0.shape[0]):
        solve_sequence(tree, goals, frames, s, outs, r)


@njit(cache=True)
def body_kernel_one(tree, goals, frames, s, outs):
    """:func:`body_kernel` for one sequence (a pose or a clip): no thread pool to start."""
    solve_sequence(tree, goals, frames, s, outs, 0)
