"""Step 3c: foot locking.

During a contact span the foot's planted sole point (heel or toe, whichever is lower) keeps
the horizontal position it had when it was planted: the lock adds a horizontal correction
``delta`` to the whole foot. When the planted point switches (heel to toe as the foot rolls),
the anchor moves to the new point without changing ``delta``, so nothing jumps. A lock gives
way where holding it would take the leg straighter than the source had it at that moment (or
``pelvis.max_extension``, :func:`~ikrig.foot.stages.pelvis.allowed_reach`): the foot falls
back toward the source's, just enough, its anchor moving with it, so the pelvis never comes
down to keep a lock (on flat ground the pelvis stays as recorded). The lock is released when
the correction grows past ``radius`` (the recording moved the foot too far to be skating) or
when the span ends; ``delta`` then returns to zero on a critically damped spring with
``halflife``, so position and velocity stay continuous.

Offline runs the kernel over all frames; live runs it over one frame with the carried
state; both use the same code and give the same frames.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..._jit.setup import njit
from ...signal.springs import as_lanes, lane, spring_rate, spring_step
from ..context import FootContext
from ..state import LockBank, new_lock_state
from .goals import FootGoals, ground_heights
from .pelvis import allowed_reach, pelvis_reach

if TYPE_CHECKING:
    from ..state import FootState


NO_DISK = (0.0, 0.0, math.inf)
"""A :func:`lock_step` ``disk`` that never limits the correction."""


@njit(cache=True)
def onto_disk(dx, dz, disk):
    """The correction ``(dx, dz)`` shortened, toward no correction, until it lies in
    ``disk = (cx, cz, r)`` (which holds ``(0, 0)``): the foot falls back toward the
    source's, never past it."""
    cx, cz, r = disk
    ex, ez = cx - dx, cz - dz
    dd = dx * dx + dz * dz
    if ex * ex + ez * ez <= r * r or dd <= 0.0:  # (no correction lies in it, to rounding)
        return dx, dz
    # the largest t in [0, 1] with |c - t d| <= r
    cd = cx * dx + cz * dz
    cc = cx * cx + cz * cz
    t = (cd + math.sqrt(max(cd * cd - dd * (cc - r * r), 0.0))) / dd
    t = min(max(t, 0.0), 1.0)
    return t * dx, t * dz


@njit(cache=True)
def lock_step(lock, contact, p, pxz, radius, rate, disk):
    """One frame of one foot's ``lock`` (a :data:`LOCK` record, in place).

    ``contact``: in contact this frame; ``p``: the planted point (0 heel, 1 toe) at
    ``pxz = (x, z)``; ``radius``: past it the lock lets go (data units); ``rate``: the
    return spring's :data:`~ikrig.signal.springs.RATE` record; ``disk``: ``(cx, cz, r)``,
    the corrections the leg can reach (within ``r`` of ``(cx, cz)``; :data:`NO_DISK`: any),
    beyond which the correction is shortened onto the disk (:func:`onto_disk`) and the
    anchor moves with it; a correction returning to zero is held on the disk too. Returns
    the correction ``(delta_x, delta_z)``.
    """
    anchor, delta, vel = lock.anchor, lock.delta, lock.velocity
    px, pz = pxz
    if contact and not lock.released:
        if not lock.locked or lock.point != p:
            # (re)anchor so that the current correction carries on unchanged
            lock.locked = True
            lock.point = p
            anchor[0] = px + delta[0]
            anchor[1] = pz + delta[1]
        # out of the leg's reach, the foot falls back toward the source's, just enough
        dx, dz = onto_disk(anchor[0] - px, anchor[1] - pz, disk)
        anchor[0] = px + dx
        anchor[1] = pz + dz
        if dx * dx + dz * dz > radius * radius:
            lock.released = True  # released until this span ends
        else:
            vel[0] = (dx - delta[0]) / rate.dt
            vel[1] = (dz - delta[1]) / rate.dt
            delta[0] = dx
            delta[1] = dz
    if not contact or lock.released:
        if not contact:
            lock.locked = False
            lock.released = False
        # delta returns to zero on the spring
        for c in range(2):
            delta[c], vel[c] = spring_step(delta[c], vel[c], 0.0, 0.0, rate)
        delta[0], delta[1] = onto_disk(delta[0], delta[1], disk)
    return delta[0], delta[1]


@njit(cache=True)
def _lock_run(contact, planted, points_xz, radius, rate, bank, out):
    """Locking over F frames: contact (F, K) bool; planted (F, K) int (0 heel, 1 toe);
    points_xz (F, K, 2, 2); out (F, K, 2)."""
    r = rate[0]
    for f in range(contact.shape[0]):
        locks = lane(bank, f)
        for k in range(contact.shape[1]):
            p = planted[f, k]
            pxz = (points_xz[f, k, p, 0], points_xz[f, k, p, 1])
            out[f, k, 0], out[f, k, 1] = lock_step(
                locks[k], contact[f, k], p, pxz, radius, r, NO_DISK
            )


def lock_feet(
    contact: np.ndarray,
    planted: np.ndarray,
    points_xz: np.ndarray,
    frame_time: float,
    radius: float,
    halflife: float,
    state: LockBank | None = None,
) -> np.ndarray:
    """Horizontal foot corrections from locking.

    Args:
        contact: ``(F, feet)`` bool, the foot is in contact.
        planted: ``(F, feet)`` int, which sole point is planted (0 heel, 1 toe).
        points_xz: ``(F, feet, 2, 2)`` horizontal (X, Z) positions of the sole points.
        frame_time: seconds per frame.
        radius: release when the correction exceeds this (data units).
        halflife: seconds; how fast a released correction returns to zero.
        state: from :func:`new_lock_state`, updated in place (live use); None for a fresh one.

    Returns:
        ``(F, feet, 2)`` correction to add to the foot's X and Z.
    """
    c = np.ascontiguousarray(contact, dtype=np.bool_)
    if state is None:
        state = new_lock_state(c.shape[1])
    out = np.zeros(c.shape + (2,))
    _lock_run(
        c,
        np.ascontiguousarray(planted, dtype=np.int64),
        np.ascontiguousarray(points_xz, dtype=np.float64),
        float(radius),
        spring_rate(float(halflife), float(frame_time)),
        as_lanes(state, c.shape[1]),
        out,
    )
    return out


@njit(cache=True)
def reach_disk(joints, length, reach):
    """The :func:`lock_step` ``disk`` of one leg in one frame: the horizontal corrections
    ``d`` of its ankle that keep the hip-to-ankle distance within
    :func:`~ikrig.foot.stages.pelvis.allowed_reach`: ``|c - d| <= r``, ``c`` the hip less
    the ankle (X, Z), ``r`` at least ``|c|`` (no correction is always within reach).
    ``joints (3, 3)``: hip, knee, ankle (world, source); ``length`` thigh plus shin;
    ``reach`` a :data:`~ikrig.foot.stages.pelvis.REACH` record. The heights are the
    source's: on uneven ground the root and the pelvis then move as the ground asks (giving
    a raised foot more room by its ground's height let locks on blocks hold feet the body
    then had to skate after)."""
    cx = joints[0, 0] - joints[2, 0]
    cy = joints[0, 1] - joints[2, 1]
    cz = joints[0, 2] - joints[2, 2]
    src = math.sqrt(cx * cx + cy * cy + cz * cz)
    r = allowed_reach(src, length, reach.max_extension, 0.01 * reach.unit)
    flat = math.sqrt(max(r * r - cy * cy, 0.0))
    return (cx, cz, max(flat, math.sqrt(cx * cx + cz * cz)))


@njit(cache=True)
def _over_plane(point, plane):
    """How far ``point (3,)`` stands over ``plane = (nx, ny, nz, x, y, z)``, the plane
    through ``(x, y, z)`` with unit normal ``n`` (``ny > 0``), vertically: on planar ground
    the same as over the ground below the point."""
    along = (
        (point[0] - plane[3]) * plane[0]
        + (point[1] - plane[4]) * plane[1]
        + (point[2] - plane[5]) * plane[2]
    )
    return along / max(plane[1], 1e-6)


@njit(cache=True)
def lock_run(points, heights, ground, contacts, radius, rate, legs, bank, shift):
    """Locking applied to the sole points.

    Args:
        points: ``(F, K, 2, 3)`` heel and toe (world), shifted in place.
        heights: ``(K, 2)`` the points' planted heights.
        ground: ``(hit (F, K, 2), plane (F, K, 6))``: the ground was found under each
            point; the ground's plane under the middle of each foot (its normal, then the
            ground point below the middle).
        contacts: ``(F, K)`` bool; a foot locks only where the ground is under both points.
        radius: past it a lock lets go; rate: the return spring's ``(1,)`` RATE.
        legs: ``(joints (F, K, 3, 3), lengths (K,), reach)``: the source's hip, knee and
            ankle (world), each leg's thigh plus shin, and the ``(1,)``
            :data:`~ikrig.foot.stages.pelvis.REACH` record: how far each leg may reach
            (:func:`reach_disk`).
        bank: ``(lanes, K)`` :data:`LOCK` records, in place (frame ``f``: lane ``f % lanes``).
        shift: ``(F, K, 2)`` out: the X and Z correction of each foot.
    """
    hit, plane = ground
    joints, lengths, reach = legs
    r = rate[0]
    for f in range(points.shape[0]):
        locks = lane(bank, f)
        for k in range(points.shape[1]):
            # the planted point: the lower of heel and toe over the ground's plane under the
            # middle of the foot (over a step's edge the ground under each would mislead)
            c0 = _over_plane(points[f, k, 0], plane[f, k]) - heights[k, 0]
            c1 = _over_plane(points[f, k, 1], plane[f, k]) - heights[k, 1]
            p = 1 if c1 < c0 else 0  # (heel on a tie)
            on = contacts[f, k] and hit[f, k, 0] and hit[f, k, 1]
            pxz = (points[f, k, p, 0], points[f, k, p, 2])
            disk = reach_disk(joints[f, k], lengths[k], reach[0])
            dx, dz = lock_step(locks[k], on, p, pxz, radius, r, disk)
            shift[f, k, 0] = dx
            shift[f, k, 1] = dz
            for q in range(2):
                points[f, k, q, 0] += dx
                points[f, k, q, 2] += dz


def hold_feet(ctx: FootContext, goals: FootGoals, state: FootState) -> None:
    """Step 3c on ``goals``: planted feet keep their horizontal place; sets ``goals.shift``
    and moves ``goals.points`` (``state.lock``: :data:`LOCK` records)."""
    o = ctx.options.lock
    ceiling = goals.ceiling[:, None, None]
    _, _, hit = ground_heights(ctx.ground, goals.points, ctx.sole.floor, ceiling)
    mid = goals.points.mean(axis=2)
    gm, nm, _ = ground_heights(ctx.ground, mid, ctx.sole.floor, goals.ceiling[:, None])
    below = np.concatenate([mid[..., :1], gm[..., None], mid[..., 2:]], axis=-1)
    plane = np.concatenate([nm, below], axis=-1)
    lock_run(
        goals.points,
        ctx.sole.heights,
        (hit, np.ascontiguousarray(plane, dtype=np.float64)),
        np.ascontiguousarray(goals.contacts, dtype=np.bool_),
        o.radius * ctx.unit,
        spring_rate(o.halflife, goals.frame_time),
        (goals.positions_world[:, ctx.leg_joints], ctx.leg_lengths, pelvis_reach(ctx)),
        state.lock,
        goals.shift,
    )
