"""Step 5c: the body pitches with the ground along it (a character whose hips lie along its
body: a quadruped).

The Fox's front shoulders are 1.4 to 2.1 leg lengths ahead of its pelvis. On a 12 degree
slope the ground under its front paws is 35-44 % of a leg higher than under its pelvis.
Moving the root alone (step 5a follows the lower planted feet) folded its front legs: on
the stairs and the slope a crouch of 26-31 % of a leg, where the recording's legs are
almost straight. So the body below the pelvis turns as one, about the pelvis and the
horizontal axis across it, the way the ground along it slopes:

1. :func:`body_axes`: the body's axis (the hips' principal horizontal axis, towards the
   hip farthest from the pelvis), each hip's place along it, and the share of a turn the
   hips' spread along it allows (:data:`BODY_SPREAD`: 0 for a biped, whose hips lie across
   its body, so a biped never pitches);
2. :func:`pitch_goals`, per frame: the slope of a line fit to the ground along the body,
   at most what lifts a planted foot's hip by what the ground under it rises (in the
   frames around too, :data:`CAP_WINDOW`, which step 3's smoothing then overruns less),
   and the lift of the root that holds the lowered end's hip and brings the pelvis part of
   the way (:data:`LINE_LIFT`) to that line. Flat ground at the floor asks for neither;
3. the offline driver smooths both (zero-lag) and turns the goals' pose by the turn
   (:func:`turn_goals`) for the legs' needs (step 6a). The pelvis drop's two ends add a
   turn of their own (:func:`~.pelvis.plan_pelvis`), made about the same axis, so the two
   add up: a frame plan carries the sum, which live placement replays in one turn. Live
   placement without a plan does not pitch (:meth:`~ikrig.foot.live.FootPlacer.update`).

The turn is rigid: the pose below the pelvis keeps its shape in the pelvis's frame (the
upper body's pose relative to the pelvis is kept), and each ankle's turn to the ground
(step 3b) takes the body's turn back, so the feet stand on the ground as before. The Fox's
walk now crouches 8-11 % of a leg on the stairs and the slope, with no knee pop. Its legs,
as straight as recorded again, cost a little float where step 7 smooths their knees and
holds a foot up (its walk on the bumps: 2.14 % of a leg over its contacts, 2.12 level).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ...math.quat import quat_conj, quat_from_axis_angle, quat_mul, quat_rotate
from ...signal.easing import smoothstep
from ...signal.filters import upper_envelope
from ..context import FootContext
from .goals import ground_heights

if TYPE_CHECKING:
    from .goals import FootGoals

BODY_SPREAD = 0.5
"""Leg lengths: hips spread along the body by less than this never pitch it; by twice this
or more, fully (smoothstep between). A human's hips are 0.2-0.3 apart, across the body."""

MAX_PITCH = 0.6
"""Radians: the largest turn the ground asks for (34 degrees)."""

SAMPLES = 9
"""Ground samples along the body (:func:`pitch_goals`); a frame where fewer than half of
them find ground does not turn."""

SAMPLE_MARGIN = 0.25
"""Leg lengths: the samples reach this far behind the hindmost hip and ahead of the
foremost one."""

LINE_LIFT = 0.5
"""The share of the way from the root (which follows the lower planted feet, step 5a) to
the ground line under the pelvis that the root is lifted. Measured on the Fox over the
stairs and the slope: none leaves its walk crouched 10-13 % of a leg and its run 13-16 %;
all of it pops a knee of the walk once on the stairs (and the run's 6 times, against 4);
half crouches the walk 7-10 % and the run 9-12 %, with no pop in the walk."""

CAP_WINDOW = 0.05
"""Seconds: the planted feet's cap on the turn (:func:`pitch_goals`) is a smooth lower
envelope of its frames over this half-width. Frame by frame it is a sawtooth: it declines
through a stance as the root rises ahead of the next step under a foot still planted
behind it, and is released at once at that foot's lift-off. Smoothed frame by frame
(step 3), the turn lifted planted hips past their room beside the release and ramped the
front up fast after it: a hexapod up the stairs pitched 12 degrees in 10 frames onto a
front foot just planted, and step 7 held that foot up 1.02 % of a leg. The smoothed turn
still overruns the cap, less: on that hexapod by 0.04 at most (in sine) over 8 frames,
against 0.11 over 22; on the Fox's walk up the stairs 0.12 against 0.15.

Measured (the hexapod and the trot up the stairs, the Fox's walk and run over 4 grounds):
0.035 s leaves the hexapod's foot 0.81 up; 0.05 s 0.00, the trot's front left ankle 0.35
-> 0.01 in its contact cores, the Fox's front left leg no longer straighter than recorded
by up to 2 % but both front legs 0.8-1.0 % more bent on average up the stairs and the
slope; 0.15 s folds the Fox's walk 13.7 % (9.9)."""


class BodyAxes(NamedTuple):
    """The body's axis, per frame (:func:`body_axes`).

    Attributes:
        forward: ``(N, 3)`` unit, horizontal (Y 0): from the pelvis towards the hip
            farthest from it, along the hips' principal horizontal axis.
        along: ``(N, feet)`` each hip's horizontal distance from the pelvis along it.
        share: ``(N,)`` in [0, 1], the share of a turn the hips' spread allows.
    """

    forward: np.ndarray
    along: np.ndarray
    share: np.ndarray


def body_axes(ctx: FootContext, positions_world: np.ndarray) -> BodyAxes:
    """The body's axis and each hip's place along it (:class:`BodyAxes`).

    Each frame's axis is found from that frame alone, so a live frame finds the offline
    one. A rig whose pelvis lies midway between its end hips (none of the shared ones:
    their pelvis is at the hind hips) could see the axis flip where the two ends are as
    far; the turn it asks for is the same, but the smoothing of step 5c would average
    across the flip.

    Args:
        positions_world: ``(N, J, 3)`` world positions of the source pose.
    """
    xz = _hips(ctx, positions_world)[..., ::2]
    c = xz - xz.mean(axis=1, keepdims=True)
    # the principal axis of the 2 x 2 scatter [[a, b], [b, d]], in closed form
    a, b, d = (np.sum(c[..., i] * c[..., j], axis=1) for i, j in ((0, 0), (0, 1), (1, 1)))
    angle = 0.5 * np.arctan2(2.0 * b, a - d)
    axis = np.stack([np.cos(angle), np.sin(angle)], axis=-1)  # (N, 2)
    far = np.argmax(np.einsum("nki,nki->nk", xz, xz), axis=1)
    toward = np.take_along_axis(xz, far[:, None, None], axis=1)[:, 0]
    axis = np.where(np.einsum("ni,ni->n", axis, toward)[:, None] < 0.0, -axis, axis)
    forward = np.stack([axis[:, 0], np.zeros(len(axis)), axis[:, 1]], axis=-1)
    along = _along(ctx, positions_world, forward)
    spread = (along.max(axis=1) - along.min(axis=1)) / ctx.unit
    share = smoothstep((spread - BODY_SPREAD) / BODY_SPREAD)
    return BodyAxes(forward, along, share)


def level_body_axes(ctx: FootContext, positions_world: np.ndarray) -> BodyAxes:
    """:func:`body_axes` with no share of a turn: the body of a recipe that never pitches
    (a turn asked of it, by a frame plan, still turns about its axis)."""
    axes = body_axes(ctx, positions_world)
    return axes._replace(share=np.zeros_like(axes.share))


def pitch_goals(
    ctx: FootContext, goals: FootGoals, axes: BodyAxes, root_offset: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The body's turn and the root's lift that follow the ground along the body, per frame.

    The turn is the slope of a line fit to the ground at :data:`SAMPLES` points along the
    body (:data:`SAMPLE_MARGIN` beyond its end hips), at most :data:`MAX_PITCH`, and at most
    what raises each planted foot's hip (pin over 0.5, ground found) by what the ground
    under that foot rises beyond ``root_offset`` (a smooth lower envelope over
    :data:`CAP_WINDOW`): the turn is about the end it lowers. The lift holds that end's
    hip where it was, and brings the pelvis :data:`LINE_LIFT` of the way up to the line
    where the line is above the root.

    Args:
        goals: the source pose, the ground queries' ``ceiling``, the pins, ``found``,
            ``planted`` and ``source_clearance`` (step 3), and ``frame_time``.
        axes: :func:`body_axes` of the source pose.
        root_offset: ``(F,)`` the root's vertical offset (step 5a), data units.

    Returns:
        ``(pitch (F,) radians, front up; lift (F,) data units)``, both scaled by
        ``axes.share`` (0 for a biped), and 0 where the line is not found.
    """
    forward, along, share = axes
    if not np.any(share):  # a biped: no ground queries
        return np.zeros(len(share)), np.zeros(len(share))
    lo = along.min(axis=1) - SAMPLE_MARGIN * ctx.unit
    hi = along.max(axis=1) + SAMPLE_MARGIN * ctx.unit
    at = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, SAMPLES)  # (F, S)
    points = goals.positions_world[:, ctx.pelvis, None] + at[..., None] * forward[:, None]
    h, _, hit = ground_heights(ctx.ground, points, ctx.sole.floor, goals.ceiling[:, None])
    slope, rise = _line_fit(at, h - ctx.sole.floor, hit.astype(np.float64))
    share = np.where(hit.sum(axis=1) >= SAMPLES / 2, share, 0.0)
    sine = np.sin(np.clip(np.arctan(slope), -MAX_PITCH, MAX_PITCH) * share)
    # about the end the turn lowers: each hip's lever from it, and the most a planted hip
    # may rise (the ground under its foot beyond the root)
    lever = np.where(
        sine[:, None] >= 0.0,
        along - along.min(axis=1, keepdims=True),
        along.max(axis=1, keepdims=True) - along,
    )
    room = goals.planted + goals.source_clearance - root_offset[:, None]
    held = (goals.pins * goals.found > 0.5) & (lever > 1e-9 * ctx.unit)
    cap = np.where(held, np.maximum(room, 0.0) / np.where(held, lever, 1.0), np.inf)
    cap = np.minimum(cap.min(axis=1), 1.0)
    cap = -upper_envelope(-cap, round(CAP_WINDOW / goals.frame_time))  # (a lower one)
    sine = np.sign(sine) * np.minimum(np.abs(sine), cap)
    lift = np.max(-along * sine[:, None], axis=1, initial=0.0)
    lift += LINE_LIFT * share * np.maximum(rise - root_offset, 0.0)
    return np.arcsin(sine), lift


def _line_fit(at: np.ndarray, h: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least-squares lines through ``(at, h)`` rows ``(F, S)``, weights ``w``:
    ``(slope (F,), height at 0 (F,))``, slope 0 where the samples do not spread."""
    total = np.maximum(w.sum(axis=1), 1.0)
    a_mean = np.sum(w * at, axis=1) / total
    h_mean = np.sum(w * h, axis=1) / total
    da = at - a_mean[:, None]
    den = np.sum(w * da * da, axis=1)
    num = np.sum(w * da * (h - h_mean[:, None]), axis=1)
    slope = np.divide(num, den, out=np.zeros_like(num), where=den > 0.0)
    return slope, h_mean - slope * a_mean


def turned_pose(
    ctx: FootContext,
    source_world: tuple[np.ndarray, np.ndarray],
    axes: BodyAxes,
    pitch: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pose below the pelvis turned by ``pitch (F,)`` radians (front up) about the
    pelvis and the horizontal axis across the body.

    Args:
        source_world: the source pose, ``(rotations (F, J, 4) xyzw, positions (F, J, 3))``
            world; not written.
        axes: :func:`body_axes` of that pose.
        pitch: ``(F,)`` radians.

    Returns:
        ``(rotations (F, J, 4), positions (F, J, 3), turn (F, 4))``: the turned pose (new
        arrays) and the world turn itself, xyzw.
    """
    rot, pos = source_world
    across = np.cross(axes.forward, [0.0, 1.0, 0.0])  # forward x up: a positive turn lifts
    turn = quat_from_axis_angle(across, pitch).astype(rot.dtype)
    below = ctx.memo("below_pelvis", lambda: _below(ctx))
    pivot = pos[:, ctx.pelvis : ctx.pelvis + 1]
    pos, rot = pos.copy(), rot.copy()
    pos[:, below] = pivot + quat_rotate(turn[:, None], pos[:, below] - pivot)
    rot[:, below] = quat_mul(turn[:, None], rot[:, below])
    return rot, pos, turn


def turn_goals(
    ctx: FootContext, goals: FootGoals, axes: BodyAxes | None, pitch: np.ndarray
) -> None:
    """Turn the pose of ``goals`` (world rotations and positions, replaced by new arrays)
    below the pelvis by ``pitch (F,)`` (:func:`turned_pose`); each ankle's turn to the
    ground ``goals.align`` takes the body's turn back. Nothing happens where every
    ``pitch`` is 0 (a biped).

    Args:
        axes: :func:`body_axes` of the goals' pose, or None to find them only if anything
            turns (a live frame: a biped's costs nothing).
    """
    if not np.any(pitch):
        return
    if axes is None:
        axes = body_axes(ctx, goals.positions_world)
    source = (goals.rotations_world, goals.positions_world)
    goals.rotations_world, goals.positions_world, turn = turned_pose(ctx, source, axes, pitch)
    goals.align = quat_mul(goals.align, quat_conj(turn)[:, None]).astype(goals.align.dtype)


def levers(ctx: FootContext, positions_world: np.ndarray, axes: BodyAxes) -> BodyAxes:
    """``axes`` with each hip's place along the body read from ``positions_world (F, J,
    3)``: in a turned pose (:func:`turn_goals`), its horizontal lever about the pelvis
    (shorter by the turn's cosine, about), which the pelvis drop's two ends use."""
    return axes._replace(along=_along(ctx, positions_world, axes.forward))


def turn_pelvis(
    ctx: FootContext, goals: FootGoals, pitch: np.ndarray, rotations_local: np.ndarray
) -> None:
    """Write the pelvis's local rotation of the turned ``goals`` (:func:`turn_goals`) into
    ``rotations_local (F, J, 4)``, where any ``pitch (F,)`` is not 0: the legs' IK (step 8)
    solved them in that pose."""
    if not np.any(pitch):
        return
    rot = goals.rotations_world
    pelvis = rot[:, ctx.pelvis]
    if ctx.pelvis_parent >= 0:
        pelvis = quat_mul(quat_conj(rot[:, ctx.pelvis_parent]), pelvis)
    rotations_local[:, ctx.pelvis] = pelvis


def _hips(ctx: FootContext, positions_world: np.ndarray) -> np.ndarray:
    """``(N, feet, 3)`` each hip's offset from the pelvis (world)."""
    return positions_world[:, ctx.leg_joints[:, 0]] - positions_world[:, ctx.pelvis, None]


def _along(ctx: FootContext, positions_world: np.ndarray, forward: np.ndarray) -> np.ndarray:
    """``(N, feet)`` each hip's horizontal place along the body's ``forward (N, 3)`` axis."""
    return np.einsum("nki,ni->nk", _hips(ctx, positions_world), forward)


def _below(ctx: FootContext) -> np.ndarray:
    """``(J,)`` bool: the pelvis and every joint below it."""
    sk, p = ctx.skeleton, ctx.pelvis
    return np.array([j == p or p in sk.ancestors(j) for j in range(sk.num_joints)])
