"""Knee hints for tracking: which way a knee bends when a few trackers leave it free.

With the pelvis and the ankles tracked (position and rotation), a leg's hip and ankle are
known, and its knee lies on a circle around the hip-to-ankle line. From a straight-legged
preferred pose the whole-body prior does not choose well on that circle: ikrig and mink
both left the knees 30 to 55 degrees out of their recorded bend plane on average over the
shared clips. For each leg of a biped, :func:`knee_hints` adds a weak position goal (a
*hint*, ``PositionGoal.strength`` :data:`STRENGTH`) that puts the knee where a knee bends:
toward where the pelvis and the foot face, as a tracker rig's leg solver does (FinalIK's
VRIK bends knees toward the feet). The trackers stay exact; the hint only settles the
circle. The steps:

1. The legs (:func:`~ikrig.character.find_legs`) on the preferred pose; a biped's two only.
2. Forward in the preferred pose: left (from the right hip to the left one) x up (from
   the ankles to the hips), turned round where the toes point from the ankles the other
   way, or the knees bend the other way (a rig may name its legs from the viewer's side).
3. Per leg and frame: the hip, from the nearest ancestor with both targets and the hip's
   place in that joint's frame in the preferred pose; the ankle, from its own targets.
4. The knee on the circle, on the side the pelvis faces (forward turned by the pelvis
   tracker), turned toward the foot's toes where they point the pelvis's way (a heel
   kicked up behind says nothing of the knee); that side smoothed over
   :data:`HOLD_SECONDS` without lag, the knee kept on its circle.
5. Strength by bend: none below :data:`BEND_FROM` (a straight knee may be overextended a
   little, and which way it bends is not known), full from :data:`BEND_FULL`, held over
   :data:`HOLD_SECONDS` either side, and faded (smoothly in time) where the side is
   ill-defined. A hint is not required to be met: a frame ends when the trackers are.

Measured (six trackers from the rest pose, 240-300 frames of each shared clip): the mean
joint error against the clip falls to 0.71-0.98 of what it was without hints, the knees'
to 0.09-0.84. Against mink's (``benchmarks/bench_body.py``), ikrig's is then 0.51-0.97 on
the shared clips with hints, and 0.73-0.86 on stretches the constants here were not chosen
on (later frames of the long clips, the Godot glTF character). The largest acceleration of
a joint without a goal stays within 1.5 times the clip's own plus 4 % of a leg per frame
squared.
"""

from __future__ import annotations

import numpy as np

from ..character.legs import Leg, find_legs
from ..errors import InputError
from ..math.quat import quat_conj, quat_mul, quat_rotate
from ..math.vec import triangle_angle
from ..pose import Motion
from ..signal.easing import smoothstep
from ..signal.filters import upper_envelope, zero_lag_smooth
from ..skeleton import Skeleton
from ..solvers.body import PositionGoal

__all__ = ["knee_hints", "STRENGTH", "BEND_FROM", "BEND_FULL", "HOLD_SECONDS"]

STRENGTH = 0.02
"""A hint's strength against the trackers' 1 (and the prior's 5e-4 per radian of reach):
its pull biases the trackers by about ``STRENGTH**2`` of its own miss. At 0.05 that bias
kept some frames iterating (pybvh: 9.2 iterations a frame against 3.8 without hints) for
no better knees; at 0.01 the Bandai walk's fit came out worse (0.54 of mink's joint error
against 0.51, its free joints' largest acceleration 9.0 % of a leg per frame squared
against 6.4)."""
BEND_FROM = np.radians(15.0)
"""Knee bend (radians from straight) below which no hint is given: recorded straight legs
are overextended by up to about 10 degrees (an idle's locked knees), so which way a knee
that bends this little bends is not known."""
BEND_FULL = np.radians(35.0)
"""Knee bend from which a hint has its full strength."""
HOLD_SECONDS = 0.25
"""A hint stays on this long either side of a bent frame, and its side (and its fading)
are smoothed over this half-width: a hint that switched within a step would turn the knee
round with it."""
SOFT_STRAIGHT = 0.01
"""How softly (a fraction of the leg) the hip-to-ankle distance saturates at the leg's
length."""
TOES_AHEAD = 0.05
"""Toes this far ahead of the ankles (a fraction of the leg) show the way the rig faces."""
KNEES_AHEAD = 0.01
"""... else both knees this far ahead of the middle of hip and ankle, or both this far
behind (a bind pose's bent knees)."""
SIDEWAYS = 0.3
"""Forward that lies nearer the leg than this (the sine of the angle) fades the hint."""


def _tracked(positions: np.ndarray, rotations: np.ndarray, j: int) -> np.ndarray:
    """``(F,)`` frames where joint ``j`` has both a position and a rotation target."""
    return ~np.isnan(positions[:, j, 0]) & ~np.isnan(rotations[:, j, 0])


def _forward(
    skeleton: Skeleton, rw: np.ndarray, p: np.ndarray, legs: tuple[Leg, ...]
) -> np.ndarray | None:
    """Step 2: the character's forward ``(3,)`` in the preferred pose (``rw (J, 4)``,
    ``p (J, 3)``), or None. Its axis is left x up, left from the "right" leg's hip to the
    "left" one's; its sign is where the toes point from the ankles (toe joints, else the
    ankles' end sites), else where both knees bend, when those show it: a rig may name its
    legs from the viewer's side."""
    up = np.mean([p[g.hip] - p[g.ankle] for g in legs], axis=0)
    leg = float(np.mean([np.linalg.norm(p[g.ankle] - p[g.hip]) for g in legs]))
    if not leg > 0 or not np.linalg.norm(up) > 0:
        return None
    up /= np.linalg.norm(up)

    def flat(v: np.ndarray) -> np.ndarray:
        return v - (v @ up) * up

    axis = flat(np.cross(p[legs[0].hip] - p[legs[1].hip], up))
    if not np.linalg.norm(axis) > 1e-6 * leg:
        return None
    axis /= np.linalg.norm(axis)
    sites = {int(j): skeleton.end_site_offsets[k] for k, j in enumerate(skeleton.end_site_parents)}
    toes = [p[g.toe] - p[g.ankle] for g in legs if g.toe >= 0]
    toes = toes or [quat_rotate(rw[g.ankle], sites[g.ankle]) for g in legs if g.ankle in sites]
    if toes and np.linalg.norm(flat(np.mean(toes, axis=0))) > TOES_AHEAD * leg:
        return axis if flat(np.mean(toes, axis=0)) @ axis >= 0 else -axis
    knees = [flat(p[g.knee] - 0.5 * (p[g.hip] + p[g.ankle])) @ axis for g in legs]
    if min(knees) > KNEES_AHEAD * leg or max(knees) < -KNEES_AHEAD * leg:
        return axis if knees[0] > 0 else -axis
    return axis


def knee_hints(
    preferred: Motion,
    positions_world: np.ndarray,
    rotations_world: np.ndarray,
    frame_time: float,
) -> list[PositionGoal]:
    """Weak position goals on a biped's knees (module steps 1-5), one per leg that its
    targets determine, for :func:`~ikrig.solvers.body.solve_body`.

    Args:
        preferred: the single preferred pose (batch ``()``).
        positions_world: ``(F, J, 3)`` targets, NaN where none.
        rotations_world: ``(F, J, 4)`` xyzw targets, NaN where none.
        frame_time: seconds per frame.

    Returns:
        ``PositionGoal``\\ s with per-frame ``strength`` (0 where no hint), targets all-NaN
        where the leg is not determined; an empty list for a skeleton without two legs.

    Example:
        >>> from ikrig.data import walk_clip
        >>> clip = walk_clip(seconds=1.0, fps=30)
        >>> rw, pw = clip.fk()
        >>> pos, rot = np.full(pw.shape, np.nan), np.full(rw.shape, np.nan)
        >>> for j in ("Hips", "LeftFoot", "RightFoot"):
        ...     k = clip.skeleton.index(j)
        ...     pos[:, k], rot[:, k] = pw[:, k], rw[:, k]
        >>> hints = knee_hints(Motion.rest(clip.skeleton), pos, rot, clip.frame_time)
        >>> [clip.skeleton.names[h.joint] for h in hints]
        ['LeftLeg', 'RightLeg']
    """
    sk = preferred.skeleton
    rw0, pw0 = preferred.fk()
    try:  # 1.
        legs = find_legs(sk, pose_world=pw0).legs
    except InputError:
        return []
    fwd = _forward(sk, rw0, pw0, legs) if len(legs) == 2 else None
    if fwd is None:
        return []
    hold = max(1, round(HOLD_SECONDS / frame_time))
    hints = []
    for leg in legs:
        if not np.isnan(positions_world[:, leg.knee, 0]).all():
            continue  # the user placed the knee
        base = int(sk.parents[leg.hip])  # 3. the nearest ancestor with both targets
        while base >= 0 and not _tracked(positions_world, rotations_world, base).any():
            base = int(sk.parents[base])
        if base < 0:
            continue
        hint = _leg_hint(leg, base, (rw0, pw0), positions_world, rotations_world, fwd, hold)
        if hint is not None:
            hints.append(PositionGoal(leg.knee, hint[0], strength=hint[1]))
    return hints


def _leg_hint(
    leg: Leg,
    base: int,
    preferred_fk: tuple[np.ndarray, np.ndarray],
    positions: np.ndarray,
    rotations: np.ndarray,
    fwd: np.ndarray,
    hold: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Steps 3-5 for one leg: ``(targets (F, 3), strength (F,))`` or None."""
    rw0, pw0 = preferred_fk
    on = _tracked(positions, rotations, base) & _tracked(positions, rotations, leg.ankle)
    if not on.any():
        return None
    F = positions.shape[0]
    qb = np.where(on[:, None], rotations[:, base], [0.0, 0.0, 0.0, 1.0])
    hip_in_base = quat_rotate(quat_conj(rw0[base]), pw0[leg.hip] - pw0[base])
    hip = positions[:, base] + quat_rotate(qb, np.broadcast_to(hip_in_base, (F, 3)))
    ankle = positions[:, leg.ankle]
    upper = float(np.linalg.norm(pw0[leg.knee] - pw0[leg.hip]))
    lower = float(np.linalg.norm(pw0[leg.ankle] - pw0[leg.knee]))
    along = np.where(on[:, None], ankle - hip, [0.0, -1.0, 0.0])
    d = np.maximum(np.linalg.norm(along, axis=-1), 1e-12)
    u = along / d[:, None]
    # the leg's length as the hip's estimate gives it may exceed the leg's: saturate it
    # smoothly (a clip would put a corner in the knee's path as the leg straightens)
    span, soft = upper + lower, SOFT_STRAIGHT * (upper + lower)
    reach = np.clip(d, abs(upper - lower), span)
    d = np.maximum(span - soft * np.logaddexp(0.0, (span - d) / soft), abs(upper - lower))
    x = (upper**2 - lower**2 + d**2) / (2 * d)  # 4. the knee's foot on the line, and height
    h = np.sqrt(np.maximum(upper**2 - x**2, 0.0))
    qa = np.where(on[:, None], rotations[:, leg.ankle], [0.0, 0.0, 0.0, 1.0])
    pelvis = quat_rotate(quat_mul(qb, quat_conj(rw0[base])), np.broadcast_to(fwd, (F, 3)))
    # the foot's own way: its toes' direction in the ankle's frame (a rig's rest pose may
    # point its feet along its legs), else the character's forward
    toe = pw0[leg.toe] - pw0[leg.ankle] if leg.toe >= 0 else np.zeros(3)
    toe = fwd if np.linalg.norm(toe) <= 0 else toe / np.linalg.norm(toe)
    foot = quat_rotate(qa, np.broadcast_to(quat_rotate(quat_conj(rw0[leg.ankle]), toe), (F, 3)))
    # the knee faces between the pelvis and the foot (toes out a little); a foot that
    # points away from the pelvis's way (a heel kicked up behind) says nothing of the knee
    agree = np.clip(np.sum(foot * pelvis, axis=-1), 0.0, 1.0)
    facing = (pelvis + agree[:, None] * foot) / (1.0 + agree)[:, None]
    side = facing - np.sum(facing * u, axis=-1, keepdims=True) * u
    n_side = np.linalg.norm(side, axis=-1)
    bend = np.pi - triangle_angle(upper, lower, reach)
    strength = smoothstep((bend - BEND_FROM) / (BEND_FULL - BEND_FROM)) * on  # 5.
    strength = np.clip(upper_envelope(strength, hold), 0.0, 1.0)
    strength *= np.clip(zero_lag_smooth(smoothstep(n_side / SIDEWAYS) * on, hold), 0.0, 1.0)
    strength *= on
    if not strength.any():
        return None
    frames = np.arange(F)
    for c in range(3):  # untracked frames take their neighbours' before smoothing
        side[:, c] = np.interp(frames, frames[on], side[on, c])
    # the knee's side smoothed (a foot pointing along the leg turns it fast); the knee kept
    # on its circle, which the trackers fix
    side = zero_lag_smooth(side, hold)
    side -= np.sum(side * u, axis=-1, keepdims=True) * u
    side /= np.maximum(np.linalg.norm(side, axis=-1), 1e-12)[:, None]
    target = hip + x[:, None] * u + h[:, None] * side
    target[~on] = np.nan
    return target, STRENGTH * strength
