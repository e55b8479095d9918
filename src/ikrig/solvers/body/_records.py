"""The named records the whole-body kernels take (private; a leaf module: the packing code
and every kernel module import these, none of them imports the others' records).

A skeleton's degrees of freedom are *nodes*: a rotation node per joint (3 world-axis angular
increments) and a translation node per root (3 increments in units of the reach ``L``),
ordered parents first; a translation node is its root's rotation node's parent. A goal on a
joint depends on the nodes on its path up the tree, so the Gauss-Newton matrix has blocks
only between a node and its ancestors (``Scratch.hanc``): it factors leaves first with no
fill-in (:mod:`._tree_solve`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

POS = 0  # goal kinds: a point of a joint at a world point
ROT = 1  # a joint's world rotation
AIM = 2  # a joint's axis toward a world point (and an up axis toward a pole)

N_TARGET = 7  # per frame and goal: POS point (3) | ROT quaternion (4) | AIM point (3), pole (3)
N_VEC = 6  # per goal: POS offset (3) | AIM forward (3), up (3)


class Tree(NamedTuple):
    """The skeleton's nodes and per-joint data (read only)."""

    parents: np.ndarray  # (J,) int64
    node_joint: np.ndarray  # (B,) int64 the joint of each node
    node_trans: np.ndarray  # (B,) bool: a root's translation node
    node_free: np.ndarray  # (B,) bool: solved (else held at the input)
    anc: np.ndarray  # (B, D) int64: k-th ancestor node of each node (0: itself), -1 past the top
    depth: np.ndarray  # (B,) int64: valid entries of each anc row
    joint_node: np.ndarray  # (J,) int64 rotation node of each joint
    prior: np.ndarray  # (B,) float64 prior weight of each node (data units per radian / per L)
    kinds: np.ndarray  # (J,) int64 constraint kinds
    params: np.ndarray  # (J, P) float64 constraint parameters
    child_start: np.ndarray  # (J + 1,) int64: children of j are child_list[start[j]:start[j+1]]
    child_list: np.ndarray  # (C,) int64


class GoalSet(NamedTuple):
    """The goals' fixed parts (read only)."""

    kind: np.ndarray  # (G,) int64 POS, ROT or AIM
    joint: np.ndarray  # (G,) int64
    vec: np.ndarray  # (G, N_VEC) float64
    share: np.ndarray  # (G, B) float64 1 where a node may move for the goal, else 0
    look: np.ndarray  # (G, B) float64 a look-at goal's share of the turn per node (else 0)
    soft: np.ndarray  # (G,) bool a hint (strength < 1): a frame may end with it unmet


class Frames(NamedTuple):
    """Per sequence and frame: the input (preferred) pose and the goals' targets."""

    rl0: np.ndarray  # (R, F, J, 4) float64 local rotations
    pl0: np.ndarray  # (R, F, J, 3) float64 local translations
    tgt: np.ndarray  # (R, F, G, N_TARGET) float64
    wt: np.ndarray  # (R, F, G, 2) float64 weights: main residual, pole residual (0: absent)


class Outs(NamedTuple):
    """The entry kernel's outputs."""

    rl: np.ndarray  # (R, F, J, 4) float64
    pl: np.ndarray  # (R, F, J, 3) float64
    perr: np.ndarray  # (R, F, G) float64 position error, data units
    rerr: np.ndarray  # (R, F, G) float64 rotation error, radians
    ok: np.ndarray  # (R, F, G) bool reached (True for an absent goal)
    iters: np.ndarray  # (R, F) int64


class Settings(NamedTuple):
    """The options in kernel units."""

    max_iter: int
    tol: float  # position tolerance, data units
    rtol: float  # angle tolerance, radians
    length: float  # the reach L
    lam_min: float  # smallest damping, data units
    max_step: float  # radians (translations: in L)
    warm: bool
    init: bool
    look: bool  # some goal is a look-at
    blend: float  # the prior's target: this share of the way from the input to the warm start


class State(NamedTuple):
    """One frame's pose while it is solved, its forward kinematics and residuals."""

    rl: np.ndarray  # (J, 4) local rotations
    pl: np.ndarray  # (J, 3) local translations
    rw: np.ndarray  # (J, 4) world rotations
    pw: np.ndarray  # (J, 3) world positions
    res: np.ndarray  # (G, 2, 3) weighted goal residuals (main, pole)
    rho: np.ndarray  # (B, 3) prior residuals (world rotation vectors; translations in L)
    look_u: np.ndarray  # (G, 3) a look-at's target direction frozen in its base's frame
    look_base: np.ndarray  # (G,) int64 that base joint (-1: the world), -2: not a look-at


class Scratch(NamedTuple):
    """Work arrays of one sequence."""

    hanc: np.ndarray  # (B, D, 3, 3) Gauss-Newton blocks H[node, k-th ancestor]
    grad: np.ndarray  # (B, 3)
    grad0: np.ndarray  # (B, 3) the right-hand side before the solve overwrote it
    hinv: np.ndarray  # (B, 3, 3)
    step: np.ndarray  # (B, 3)
    jb: np.ndarray  # (D, 3, 3) one residual's blocks along its path
    gtmp: np.ndarray  # (D, 3, 3)
    lever: np.ndarray  # (D, 4) a position goal's lever arm and factor per path node
    rl_save: np.ndarray  # (J, 4)
    pl_save: np.ndarray  # (J, 3)
    tp: np.ndarray  # (J, 3) position targets of the joints (analytic start)
    tw: np.ndarray  # (J,) their weights (0: none)
    tq: np.ndarray  # (J, 4) orientation targets of the joints (analytic start)
    tqw: np.ndarray  # (J,) their weights (0: none)
