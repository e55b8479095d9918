"""Packing the skeleton, the options and the goals into the whole-body kernels' records
(private): :func:`pack_tree` (nodes, priors, constraints) and :func:`pack_goals` (goal
kinds, joints, shares, and per-frame targets and weights over the broadcast batch shape).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._checks import batch_shape
from ...constraints import N_PARAMS
from ...errors import InputError
from ...math.quat import quat_rotate, quat_slerp
from ...pose import Motion
from ...skeleton import Skeleton
from ._records import AIM, N_TARGET, N_VEC, POS, ROT, GoalSet, Tree
from .goals import AimGoal, Goal, KeepGoal, LookAtGoal, OrientationGoal, PositionGoal
from .options import BodyOptions


def reaches(skeleton: Skeleton) -> np.ndarray:
    """``(J,)`` each joint's longest rest path down to a leaf or an end site."""
    J = skeleton.num_joints
    out = np.zeros(J)
    lengths = np.linalg.norm(skeleton.offsets, axis=-1)
    for k, j in enumerate(skeleton.end_site_parents):
        out[j] = max(out[j], float(np.linalg.norm(skeleton.end_site_offsets[k])))
    for j in range(J - 1, 0, -1):
        p = skeleton.parents[j]
        if p >= 0:
            out[p] = max(out[p], out[j] + lengths[j])
    return out


def reach_length(skeleton: Skeleton) -> float:
    """The skeleton's reach ``L``: its longest root-to-leaf rest path (1 if that is 0)."""
    r = reaches(skeleton)
    roots = skeleton.parents < 0
    L = float(r[roots].max())
    return L if L > 0 else 1.0


def _index(skeleton: Skeleton, joint, name: str) -> int:
    try:
        return skeleton.index(joint)
    except InputError as exc:
        raise InputError(f"{name}: {exc}") from None


def _bone(skeleton: Skeleton, j: int, children: list[int]) -> np.ndarray:
    """Joint ``j``'s bone in its own frame: its longest child offset, else its longest end
    site, else zeros."""
    cands = [skeleton.offsets[c] for c in children]
    cands += [skeleton.end_site_offsets[k] for k in np.flatnonzero(skeleton.end_site_parents == j)]
    if not cands:
        return np.zeros(3)
    return max(cands, key=lambda v: float(np.linalg.norm(v)))


def _stiffness(skeleton: Skeleton, opts: BodyOptions) -> np.ndarray:
    J = skeleton.num_joints
    k = np.ones(J)
    if isinstance(opts.stiffness, np.ndarray):
        if opts.stiffness.shape != (J,):
            raise InputError(f"stiffness: expected {J} values, got {opts.stiffness.shape[0]}")
        k = opts.stiffness.astype(np.float64)
    elif isinstance(opts.stiffness, dict):
        for joint, v in opts.stiffness.items():
            k[_index(skeleton, joint, "stiffness")] = v
    return k


def pack_tree(skeleton: Skeleton, opts: BodyOptions) -> tuple[Tree, float]:
    """The :class:`~._records.Tree` of ``skeleton`` under ``opts``, and its reach ``L``."""
    J = skeleton.num_joints
    parents = skeleton.parents
    L = reach_length(skeleton)
    k = _stiffness(skeleton, opts)
    locked = {_index(skeleton, j, "locked") for j in opts.locked}
    children: list[list[int]] = [[] for _ in range(J)]
    for j in range(J):
        if parents[j] >= 0:
            children[parents[j]].append(j)
    node_joint, node_trans, node_free, node_parent, prior = [], [], [], [], []
    joint_node = np.zeros(J, dtype=np.int64)
    mu = float(np.hypot(opts.prior_weight, opts.temporal_weight if opts.warm_start else 0.0))
    for j in range(J):
        p = int(parents[j])
        if p < 0:
            node_joint.append(j)
            node_trans.append(True)
            node_free.append(opts.root != "pinned")
            node_parent.append(-1)
            prior.append(mu * k[j] * L)
        joint_node[j] = len(node_joint)
        node_joint.append(j)
        node_trans.append(False)
        node_free.append(j not in locked and not (p < 0 and opts.root == "translate"))
        node_parent.append(len(node_joint) - 2 if p < 0 else int(joint_node[p]))
        prior.append(mu * k[j] * L)
    B = len(node_joint)
    chains = []
    for b in range(B):
        path = [b]
        while node_parent[path[-1]] >= 0:
            path.append(node_parent[path[-1]])
        chains.append(path)
    D = max(len(c) for c in chains)
    anc = np.full((B, D), -1, dtype=np.int64)
    for b, path in enumerate(chains):
        anc[b, : len(path)] = path
    kinds = np.zeros(J, dtype=np.int64)
    params = np.zeros((J, N_PARAMS))
    for joint, c in (opts.constraints or {}).items():
        j = _index(skeleton, joint, "constraints")
        if c is None:
            continue
        kinds[j] = c.kind
        parent_bone = skeleton.offsets[j] if parents[j] >= 0 else None
        params[j] = c.params(_bone(skeleton, j, children[j]), parent_bone)
    start = np.zeros(J + 1, dtype=np.int64)
    start[1:] = np.cumsum([len(c) for c in children])
    flat_children = np.array([c for cs in children for c in cs], dtype=np.int64)
    tree = Tree(
        parents.astype(np.int64), np.array(node_joint, dtype=np.int64), np.array(node_trans),
        np.array(node_free), anc, np.array([len(c) for c in chains], dtype=np.int64),
        joint_node, np.array(prior), kinds, params, start, flat_children,
    )  # fmt: skip
    return tree, L


def hold_reference_roots(tree: Tree, goals: GoalSet) -> Tree:
    """``tree`` with the turn of every *reference root* held at the input.

    Below a root whose translation is solved (root mode ``free``), the goals' lowest common
    ancestor is the *base* of the body. When the base is not the root and turns freely (not
    locked, no constraint), the root's move and the base's turn place the base's subtree
    anywhere, turned any way: the turns of the root and of the joints between it and the
    base add no reach. They are held at the input unless one of them is in a look-at chain
    (so they have no goal either: a goal on one would make it the base or put it below).
    Such a root is a rig's floor-level or armature joint above the pelvis; the prior would
    otherwise share the pelvis's turn with it and swing it away. A full-body solve based at
    the pelvis does the same.
    """
    parents, jn = tree.parents, tree.joint_node
    paths: dict[int, list[int]] = {}  # root -> the path from it to the goals' common ancestor
    for g in {int(j) for j in goals.joint}:
        path = [g]
        while parents[path[-1]] >= 0:
            path.append(int(parents[path[-1]]))
        path.reverse()
        common = paths.setdefault(path[0], path)
        k = 0
        while k < min(len(common), len(path)) and common[k] == path[k]:
            k += 1
        paths[path[0]] = common[:k]
    free = tree.node_free.copy()
    for root, path in paths.items():
        base, above = path[-1], [jn[j] for j in path[:-1]]
        if (
            above
            and free[jn[root] - 1]  # the root's translation node
            and free[jn[base]]
            and tree.kinds[base] == 0
            and not goals.look[:, above].any()
        ):
            free[above] = False
    return tree._replace(node_free=free)


class _Goal:
    """One goal, resolved: its kernel kind, joint, vector, share row, and its target,
    weight and strength arrays (their own batch shapes)."""

    def __init__(self, kind, joint, vec, share, target, weight, pole=None, look=None):
        self.kind, self.joint, self.vec, self.share = kind, joint, vec, share
        self.target, self.weight, self.pole = target, weight, pole
        self.look = np.zeros_like(share) if look is None else look
        self.strength = np.ones(())  # a PositionGoal's own, set by _resolve


def _resolve(skeleton: Skeleton, goal: Goal, i: int, tree: Tree, keep_pos) -> _Goal:
    if not isinstance(goal, Goal):
        raise InputError(
            f"goals[{i}]: expected a goal (PositionGoal, ...), got {type(goal).__name__}"
        )
    j = _index(skeleton, goal.joint, f"goals[{i}].joint")
    vec = np.zeros(N_VEC)
    share = np.ones(len(tree.node_joint))
    if isinstance(goal, PositionGoal):
        if goal.offset_local is not None:
            vec[:3] = goal.offset_local
        resolved = _Goal(POS, j, vec, share, goal.target_world, goal.weight)
        resolved.strength = goal.strength
        return resolved
    if isinstance(goal, KeepGoal):
        return _Goal(POS, j, vec, share, keep_pos(j), goal.weight)
    if isinstance(goal, OrientationGoal):
        return _Goal(ROT, j, vec, share, goal.target_world, goal.weight)
    if isinstance(goal, AimGoal):
        vec[:3] = goal.forward_local
        if goal.up_local is not None:
            vec[3:] = goal.up_local
        return _Goal(AIM, j, vec, share, goal.target_world, goal.weight, goal.pole_world)
    if isinstance(goal, LookAtGoal):
        vec[:3] = goal.forward_local
        look = _look_weights(skeleton, goal, i, j, tree)
        return _Goal(AIM, j, vec, (look > 0).astype(np.float64), goal.target_world, goal.weight,
                     look=look)  # fmt: skip
    raise InputError(f"goals[{i}]: unknown goal type {type(goal).__name__}")


def _look_weights(skeleton: Skeleton, goal: LookAtGoal, i: int, j: int, tree: Tree) -> np.ndarray:
    """Look-at shares: the chain weights on the chain's and the joint's rotation nodes, 0
    elsewhere (the goal moves only those joints)."""
    above = set(skeleton.ancestors(j))
    joints = []
    for c in goal.chain:
        a = _index(skeleton, c, f"goals[{i}].chain")
        if a not in above:
            raise InputError(f"goals[{i}].chain: {skeleton.names[a]!r} is not an ancestor of"
                             f" {skeleton.names[j]!r}")  # fmt: skip
        joints.append(a)
    w = np.array(goal.chain_weights)
    share = np.zeros(len(tree.node_joint))
    share[tree.joint_node[joints + [j]]] = w / w.max()
    return share


def pack_goals(motion: Motion, goals: Sequence[Goal], tree: Tree):
    """The :class:`~._records.GoalSet` and the per-problem ``targets (N, G, N_TARGET)`` and
    ``weights (N, G, 2)`` over the broadcast batch shape, which is returned too."""
    if isinstance(goals, Goal) or not isinstance(goals, Sequence):
        raise InputError("goals: expected a sequence (list or tuple) of goals")
    cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def world():
        if "fk" not in cache:
            rw, pw = motion.fk()
            cache["fk"] = (rw.astype(np.float64, copy=False), pw.astype(np.float64, copy=False))
        return cache["fk"]

    res = [_resolve(motion.skeleton, g, i, tree, lambda j: world()[1][..., j, :])
           for i, g in enumerate(goals)]  # fmt: skip
    named = [("motion", motion.batch_shape)]
    for i, g in enumerate(res):
        named.append((f"goals[{i}].target_world", g.target.shape[:-1]))
        named.append((f"goals[{i}].weight", g.weight.shape))
        named.append((f"goals[{i}].strength", g.strength.shape))
        if g.pole is not None:
            named.append((f"goals[{i}].pole_world", g.pole.shape[:-1]))
    batch = batch_shape(*named)
    N, G = int(np.prod(batch, dtype=np.int64)), len(res)
    tgt = np.zeros((N, G, N_TARGET))
    wt = np.zeros((N, G, 2))
    for i, g in enumerate(res):
        t = np.broadcast_to(g.target, batch + g.target.shape[-1:]).reshape(N, -1)
        w = np.broadcast_to(g.weight, batch).reshape(N)
        absent = np.isnan(t[:, 0]) | (w <= 0)
        t = np.where(absent[:, None], 0.0, t)
        part = ~absent & (w < 1)
        if part.any():
            t = t.copy()
            t[part] = _blended(g, t[part], w[part], _input_frames(world(), batch, N, part, g.joint))
        tgt[:, i, : t.shape[1]] = t
        wt[:, i, 0] = np.where(absent, 0.0, w * np.broadcast_to(g.strength, batch).reshape(N))
        if g.pole is not None:
            pole = np.broadcast_to(g.pole, batch + (3,)).reshape(N, 3)
            off = np.isnan(pole[:, 0]) | absent
            tgt[:, i, 3:6] = np.where(off[:, None], 0.0, pole)
            wt[:, i, 1] = np.where(off, 0.0, w)
    gs = GoalSet(
        np.array([g.kind for g in res], dtype=np.int64),
        np.array([g.joint for g in res], dtype=np.int64),
        np.array([g.vec for g in res]).reshape(G, N_VEC),
        np.array([g.share for g in res]).reshape(G, len(tree.node_joint)),
        np.array([g.look for g in res]).reshape(G, len(tree.node_joint)),
        np.array([bool((g.strength < 1).any()) for g in res], dtype=np.bool_),
    )
    return gs, tgt, wt, batch


def _input_frames(fk, batch, N, rows, j):
    """The input pose's world rotation and position of joint ``j`` on ``rows`` of the
    flattened batch."""
    rw, pw = fk
    q = np.broadcast_to(rw[..., j, :], batch + (4,)).reshape(N, 4)[rows]
    p = np.broadcast_to(pw[..., j, :], batch + (3,)).reshape(N, 3)[rows]
    return q, p


def _blended(g: _Goal, t, w, frame):
    """Targets ``t`` of weights ``w < 1`` blended from where the input pose has the goal
    (its point, its rotation, the point its forward axis meets at the target's distance)."""
    q, p = frame
    k = w[:, None]
    if g.kind == ROT:
        return quat_slerp(q, t, w)
    if g.kind == POS:
        start = p + quat_rotate(q, g.vec[:3])
        return start + k * (t - start)
    out = t.copy()
    to = t[:, :3] - p
    dist = np.linalg.norm(to, axis=-1, keepdims=True)
    start = p + quat_rotate(q, g.vec[:3]) * dist
    out[:, :3] = start + k * (t[:, :3] - start)
    return out
