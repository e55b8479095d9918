"""Step 8 (8a and 8b): two-bone leg IK toward the ankle targets with ``ik.soften``, blended out
where there is no ground, and the ankle turned to the ground (the turn of step 3b).

Each leg bends in the source's bend plane, turned by the shortest arc that takes the
source's hip-to-ankle axis onto the hip-to-target one; its hip and knee turn by deltas built
from that plane (:func:`leg_deltas`), so a thigh never twists about itself and a knee a hair
past straight bends on through straight instead of turning the thigh half round (the Fox's
front legs did, on some frames of its walk).

A knee bends the way it usually does (:func:`bend_normal`): the context knows that way from
the reference clip (``FootContext.bend_axes``), and where the source bends it less than
:data:`STRAIGHT_BEND` that way, or the other way, the plane is lifted until it does. So
a solved knee never folds backward, except by the IK weight's blend toward the source
(hence by no more than the source's own backward bend): the Fox's right elbow, 2.4 deg past
straight at frame 16 of its walk, had been taken on to 16 deg backward on flat ground and
82 deg on stairs, and Xia's neutral walk's knees, 3.5-8 deg past straight in 131 leg-frames, to
up to 31 deg backward on flat ground and 107 on stairs. For a given reach the two-bone leg
has two knees, mirror images; keeping the backward one only while the reach allows it would
switch sides (a pop) as the reach crossed the source's, so a knee the source bends backward
is always mirrored to the usual side, continuous in the pose and the target.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..._jit.setup import njit
from ...kernels.qmath import (
    TINY,
    q_between,
    q_conj,
    q_from_array,
    q_get,
    q_mul,
    q_rotate,
    v_cross,
    v_dot,
    v_norm,
    v_normalize,
    v_sub,
    v_unit_or,
)
from ...kernels.two_bone import (
    TwoBoneConstants,
    TwoBonePoints,
    make_constants,
    solve_two_bone_positions_serial,
    unpack_constants,
)
from ...signal.springs import lane, spring_advance, spring_rate
from ...solvers.two_bone import TwoBoneOptions
from ..context import FootContext
from .align import q_toward
from .goals import FootGoals

if TYPE_CHECKING:
    from ..state import FootState


class LegPlan(NamedTuple):
    """What the legs of ``F`` frames are solved toward (steps 5-7).

    Attributes:
        root_offset: ``(F,)`` the root's vertical offset, pelvis drop not yet subtracted.
        pelvis_drop: ``(F,)`` the pelvis drop.
        targets_world: ``(F, feet, 3)`` ankle targets.
        ground_found: ``(F, feet)`` bool, the ground was found (the IK weight's goal).
        pitch: ``(F,)`` radians, front up: the body's turn with the ground (step 5c,
            :mod:`~ikrig.foot.stages.pitch`), already made in the goals' pose.
    """

    root_offset: np.ndarray
    pelvis_drop: np.ndarray
    targets_world: np.ndarray
    ground_found: np.ndarray
    pitch: np.ndarray


@dataclass(frozen=True, eq=False)
class FrameInfo:
    """Per-frame by-products of a solve: ``root_offset (F,)`` (the net vertical move of the
    root, pelvis drop included), ``pelvis_drop (F,)``, ``targets_world (F, feet, 3)``,
    ``reached (F, feet)``, ``ground_found (F, feet)``, ``pitch (F,)`` (radians, front up:
    the body's turn with the ground, 0 for a biped)."""

    root_offset: np.ndarray
    pelvis_drop: np.ndarray
    targets_world: np.ndarray
    reached: np.ndarray
    ground_found: np.ndarray
    pitch: np.ndarray


STRAIGHT_BEND = math.radians(1.0)
"""A leg bent less than this (angle between thigh and shin) counts as straight: the sense of
its geometric bend is then noise (a rig's offsets may hold a small built-in bend, a
recording its jitter)."""


@njit(cache=True)
def bend_normal(p, hip_r, knee_r, usual, sin_straight):
    """Unit normal ``n`` of a source leg's bend plane, with the sense the knee bends: the
    knee lies on the side ``a x n`` of the hip-to-ankle axis ``a``.

    With the way the knee usually bends (``usual``, a unit axis in the hip's frame), the
    geometric normal ``g = thigh x shin`` where the leg bends that way by at least
    ``asin(sin_straight)`` (the sine read along the axis, turned into the world and off the
    thigh: ``u``); else ``g + (sin_straight |thigh| |shin| - g.u) u``, the source's plane
    lifted until it bends the usual way by that much: the frame's own sideways lean kept,
    its sense (a hair past straight, or folded backward) not. The normal is continuous in
    the pose and the same as before wherever the source clearly bends the usual way.

    Without it (``usual`` zero): a leg bent by more than ``asin(sin_straight)`` (or
    folded past a right angle) gives its geometric normal ``thigh x shin``. A straighter
    leg on a rig whose rest leg (its bone offsets, read off the pose) is straight too keeps
    the direction of that normal but takes its sense from the knee's local rotation, the
    way the knee turned away from that rest (then the rotation is the bend; a built-in bend
    of the offsets of a fraction of a degree, as the Fox's front legs have, would otherwise
    decide); an exactly straight leg takes the rotation's axis off the thigh; a straight
    knee at rest, any perpendicular.

    Args:
        p: ``(hip, knee, ankle)`` world positions (3-tuples); hip_r, knee_r: world rotations
            (xyzw); usual: 3-tuple, unit or zero; sin_straight: sine of
            :data:`STRAIGHT_BEND`.
    """
    hip, knee, ankle = p
    b, s = v_sub(knee, hip), v_sub(ankle, knee)
    n = v_cross(b, s)
    lb, ls, ln = v_norm(b), v_norm(s), v_norm(n)
    straight = sin_straight * lb * ls
    if v_dot(usual, usual) > 0.25 and lb > 0.0:
        u = q_rotate(hip_r, usual)
        bh = (b[0] / lb, b[1] / lb, b[2] / lb)
        ub = v_dot(u, bh)
        u = (u[0] - bh[0] * ub, u[1] - bh[1] * ub, u[2] - bh[2] * ub)
        lu = v_norm(u)
        if lu > 1e-6:
            u = (u[0] / lu, u[1] / lu, u[2] / lu)
            lift = max(straight - v_dot(n, u), 0.0)
            return v_normalize((n[0] + u[0] * lift, n[1] + u[1] * lift, n[2] + u[2] * lift), u)
    if ln > straight or v_dot(b, s) < 0.0:
        return v_unit_or(n, b)
    rest = v_cross(q_rotate(q_conj(hip_r), b), q_rotate(q_conj(knee_r), s))
    if v_norm(rest) > straight:  # a rest bent on purpose: the rotation is not the bend
        return v_unit_or(n, b)
    q = q_mul(q_conj(hip_r), knee_r)  # the knee's local rotation
    sgn = 1.0 if q[3] >= 0.0 else -1.0
    r = q_rotate(hip_r, (q[0] * sgn, q[1] * sgn, q[2] * sgn))
    if ln > 1e-12 * lb * ls:
        f = 1.0 if v_dot(n, r) >= 0.0 else -1.0
        return (n[0] * f / ln, n[1] * f / ln, n[2] * f / ln)
    bh = v_normalize(b, (1.0, 0.0, 0.0))
    rb = v_dot(r, bh)
    return v_unit_or((r[0] - bh[0] * rb, r[1] - bh[1] * rb, r[2] - bh[2] * rb), bh)


@njit(cache=True)
def _in_plane(normal, u, v):
    """The rotation taking the unit ``u`` (perpendicular to the unit ``normal``) to the
    direction of ``v`` about ``normal`` (``v`` is perpendicular to it too)."""
    q = q_between(u, v)
    if q[3] > 1e-12:
        return q
    return (normal[0], normal[1], normal[2], 0.0)  # a half turn: about the normal


@njit(cache=True)
def _positive(q):
    """``q`` or ``-q``, whichever has ``w >= 0``."""
    return q if q[3] >= 0.0 else (-q[0], -q[1], -q[2], -q[3])


@njit(cache=True)
def leg_deltas(old, new, normal, normal_new, w):
    """World rotation deltas ``(hip, knee)`` of one leg, weighted by ``w``, each applied on
    the left of the joint's world rotation.

    The bend plane turns from ``normal`` onto ``normal_new`` by the shortest arc (no twist
    about the leg), then each bone turns in the new plane onto its new direction; the knee's
    local change is therefore a hinge about its bend axis, which may take it through
    straight (a knee that was a hair past straight bends the way it turns, without the thigh
    turning half round). Hip delta and hinge are each weighted by a normalised lerp from the
    identity.

    Args:
        old, new: ``(thigh, shin)`` unit directions (3-tuples), source and solved.
        normal, normal_new: unit bend normals, perpendicular to the thighs and shins.
    """
    plane = q_between(normal, normal_new)
    thigh, shin = q_rotate(plane, old[0]), q_rotate(plane, old[1])
    hip = q_mul(_in_plane(normal_new, thigh, new[0]), plane)
    knee = q_mul(_in_plane(normal_new, shin, new[1]), plane)
    hinge = q_mul(q_conj(hip), knee)
    hip_w = q_toward(_positive(hip), w)
    return hip_w, q_mul(hip_w, q_toward(_positive(hinge), w))


@njit(cache=True)
def solve_leg(p, target, rot, usual, w, tb):
    """One leg's IK (step 8a): two-bone toward ``target`` in the source's bend plane turned
    by the shortest arc from the source's hip-to-ankle axis to the hip-to-target one, bent
    the way the knee usually bends (:func:`bend_normal`), so neither the thigh twists about
    itself nor the knee flips side where the leg is near straight.

    Args:
        p: ``(hip, knee, ankle)`` world positions (3-tuples), source.
        target: world position (3-tuple); rot: ``(hip, knee)`` world rotations, source.
        usual: the way the knee usually bends, a unit axis in the hip's frame (3-tuple),
            or zero. w: IK weight in [0, 1]; tb:
            :class:`~ikrig.kernels.two_bone.TwoBoneConstants`.

    Returns:
        ``(hip delta, knee delta, reached)``: world rotation deltas (xyzw) and whether the
        ankle, turned by the weighted deltas, lies within ``tb.tolerance`` leg lengths of
        the target.
    """
    hip, knee, ankle = p
    normal = bend_normal(p, rot[0], rot[1], usual, math.sin(STRAIGHT_BEND))
    # (fallback directions are computed only where needed: v_unit_or)
    reach, toward = v_sub(ankle, hip), v_sub(target, hip)
    aim = v_unit_or(toward if v_norm(toward) > TINY else reach, normal)
    turned = q_rotate(q_between(reach, aim), normal)
    bend = v_unit_or(v_cross(aim, turned), aim)
    length = v_norm(v_sub(knee, hip)) + v_norm(v_sub(ankle, knee))
    pole = (hip[0] + bend[0] * length, hip[1] + bend[1] * length, hip[2] + bend[2] * length)
    sol = solve_two_bone_positions_serial(TwoBonePoints(hip, knee, ankle, target, pole), tb)
    thigh, shin = v_sub(knee, hip), v_sub(ankle, knee)
    thigh_new, shin_new = v_sub(sol.mid, hip), v_sub(sol.end, sol.mid)
    along = v_normalize(thigh_new, aim)
    n_new = v_cross(thigh_new, shin_new)
    if v_dot(n_new, turned) < 0.0 or v_norm(n_new) <= 1e-12 * v_norm(thigh) * v_norm(shin):
        # straight (or a fallback of the solve): the turned normal, off the new thigh
        tg = v_dot(turned, along)
        n_new = (turned[0] - along[0] * tg, turned[1] - along[1] * tg, turned[2] - along[2] * tg)
    n_new = v_unit_or(n_new, along)
    d_hip, d_knee = leg_deltas(
        (v_normalize(thigh, aim), v_normalize(shin, aim)),
        (along, v_normalize(shin_new, aim)),
        normal,
        n_new,
        w,
    )
    sw = 1.0 + (sol.stretch - 1.0) * w
    t, s = q_rotate(d_hip, thigh), q_rotate(d_knee, shin)
    miss = v_sub((hip[0] + (t[0] + s[0]) * sw, hip[1] + (t[1] + s[1]) * sw,
                  hip[2] + (t[2] + s[2]) * sw), target)  # fmt: skip
    return d_hip, d_knee, v_norm(miss) <= tb.tolerance * length


@njit(cache=True)
def legs_run(pose, axes, plan, consts, weight, rotations_local, reached):
    """Step 8 (8a and 8b), per frame.

    Args:
        pose: ``(positions_world (F, J, 3), rotations_world (F, J, 4), joints (K, 3),
            parents (K,))``: the source's FK, the joints of each leg's hip, knee and ankle,
            and each hip's parent joint (-1: a root hip, turned by nothing).
        axes: ``(K, 3)`` the way each knee usually bends, a unit axis in its hip's frame, or
            zero (``FootContext.bend_axes``).
        plan: ``(targets (F, K, 3) world, root (F,) vertical offset with the pelvis drop,
            found (F, K) bool, align (F, K, 4) world ankle turns of step 3b)``.
        consts: two-bone constants (:func:`~ikrig.kernels.two_bone.make_constants`).
        weight: ``(rate (1,) RATE, springs (lanes, K))`` of the IK weight, whose goal is
            ``found`` (frame ``f`` uses lane ``f % lanes``).
        rotations_local: ``(F, J, 4)`` the frames' local rotations, whose hips, knees and
            ankles are overwritten with the new ones.
        reached: ``(F, K)`` out.
    """
    pos_w, rot_w, joints, parents = pose
    targets, root, found, align = plan
    rate, bank = weight[0][0], weight[1]
    tb = TwoBoneConstants(*unpack_constants(consts))
    for f in range(targets.shape[0]):
        up = root[f]
        springs = lane(bank, f)
        for k in range(targets.shape[1]):
            # 6. leg IK on the shifted pose, weighted out where no ground was found
            w = spring_advance(springs, k, 1.0 if found[f, k] else 0.0, rate)
            w = min(max(w, 0.0), 1.0)
            p, r = pos_w[f], rot_w[f]
            hip, knee, ankle = joints[k, 0], joints[k, 1], joints[k, 2]
            d_hip, d_knee, ok = solve_leg(
                ((p[hip, 0], p[hip, 1] + up, p[hip, 2]), (p[knee, 0], p[knee, 1] + up, p[knee, 2]),
                 (p[ankle, 0], p[ankle, 1] + up, p[ankle, 2])),
                (targets[f, k, 0], targets[f, k, 1], targets[f, k, 2]),
                (q_from_array(r[hip]), q_from_array(r[knee])),
                (axes[k, 0], axes[k, 1], axes[k, 2]),
                w,
                tb,
            )  # fmt: skip
            reached[f, k] = ok
            # 8b. new rotations: hip and knee from the IK, the ankle turned to the ground
            hip_w = q_mul(d_hip, q_from_array(r[hip]))
            knee_w = q_mul(d_knee, q_from_array(r[knee]))
            ankle_w = q_mul(q_toward(q_get(align[f], k), w), q_from_array(r[ankle]))
            parent = (0.0, 0.0, 0.0, 1.0) if parents[k] < 0 else q_from_array(r[parents[k]])
            locals_ = (
                q_mul(q_conj(parent), hip_w),
                q_mul(q_conj(hip_w), knee_w),
                q_mul(q_conj(knee_w), ankle_w),
            )
            for j in range(3):
                for c in range(4):
                    rotations_local[f, joints[k, j], c] = locals_[j][c]


@functools.lru_cache(maxsize=8)
def _two_bone_consts(soften: float) -> np.ndarray:
    o = TwoBoneOptions(soften=soften)
    return make_constants(np.float64, o.soften, o.max_stretch, o.tolerance)


def solve_legs(
    ctx: FootContext,
    goals: FootGoals,
    plan: LegPlan,
    state: FootState,
    rotations_local: np.ndarray,
) -> FrameInfo:
    """Step 8 (8a and 8b) on ``F`` frames: two-bone leg IK toward ``plan.targets_world`` on the
    pose moved up by ``root_offset - pelvis_drop``, blended out where the ground was not
    found, and the ankle turned to the ground (``goals.align``). The IK weight's spring is
    ``state.weight``.

    ``rotations_local``: ``(F, J, 4)``, C-contiguous, the frames' local rotations in the
    clip's dtype (a copy of the source's): each leg's hip, knee and ankle are overwritten
    in place with their new local rotations. Returns the :class:`FrameInfo`.
    """
    rot_w = goals.rotations_world
    targets = plan.targets_world
    F, K = targets.shape[:2]
    root = np.ascontiguousarray(plan.root_offset - plan.pelvis_drop, dtype=np.float64)
    found = np.ascontiguousarray(plan.ground_found, dtype=np.bool_)
    reached = np.empty((F, K), dtype=np.bool_)
    legs_run(
        (goals.positions_world, rot_w, ctx.leg_joints, ctx.hip_parents),
        np.ascontiguousarray(ctx.bend_axes, dtype=np.float64),
        (targets, root, found, goals.align),
        _two_bone_consts(ctx.options.ik.soften),
        (spring_rate(ctx.options.ik.weight_halflife, goals.frame_time), state.weight),
        rotations_local,
        reached,
    )
    return FrameInfo(root, plan.pelvis_drop, targets, reached, found, plan.pitch)
