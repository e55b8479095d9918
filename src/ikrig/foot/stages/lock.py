"""Step 9: foot locking.

During a contact span the foot's planted sole point (heel or toe, whichever is lower) keeps
the horizontal position it had when it was planted: the lock adds a horizontal correction
``delta`` to the whole foot. When the planted point switches (heel to toe as the foot rolls),
the anchor moves to the new point without changing ``delta``, so nothing jumps. The lock is
released when the correction grows past ``radius`` (the recording moved the foot too far to
be skating) or when the span ends; ``delta`` then returns to zero on a critically damped
spring with ``halflife``, so position and velocity stay continuous.

Offline runs the kernel over all frames; live runs it over one frame with the carried
state; both use the same code and give the same frames.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..._numba import njit
from ...signal.springs import spring_rate, spring_step
from ..context import FootContext
from .goals import FootGoals, ground_heights

if TYPE_CHECKING:
    from ..state import FootState


class LockBank(NamedTuple):
    """The locks of ``K`` feet, updated in place.

    Attributes:
        locked: ``(K,)`` bool, the foot is held.
        point: ``(K,)`` int, the held sole point (0 heel, 1 toe).
        anchor: ``(K, 2)`` where the held point is kept (X, Z).
        delta: ``(K, 2)`` the correction added to the foot (X, Z).
        velocity: ``(K, 2)`` the correction's velocity (per second).
        released: ``(K,)`` bool, the lock let go until this contact ends.
    """

    locked: np.ndarray
    point: np.ndarray
    anchor: np.ndarray
    delta: np.ndarray
    velocity: np.ndarray
    released: np.ndarray


def new_lock_state(feet: int) -> LockBank:
    """Fresh locks for ``feet`` feet (nothing locked, no correction)."""
    return LockBank(
        np.zeros(feet, np.bool_), np.zeros(feet, np.int64), np.zeros((feet, 2)),
        np.zeros((feet, 2)), np.zeros((feet, 2)), np.zeros(feet, np.bool_),
    )  # fmt: skip


class LockSettings(NamedTuple):
    """``radius`` (data units) past which a lock lets go, and the return spring's rate
    (:class:`~ikrig.signal.springs.SpringRate`)."""

    radius: float
    rate: tuple


@njit(cache=True)
def lock_step(bank, k, contact, p, pxz, settings):
    """One frame of foot ``k``'s lock in ``bank`` (:class:`LockBank`, in place).

    ``contact``: in contact this frame; ``p``: the planted point (0 heel, 1 toe) at
    ``pxz = (x, z)``; ``settings``: :class:`LockSettings`. Returns the correction
    ``(delta_x, delta_z)``.
    """
    anchor, delta, vel = bank.anchor[k], bank.delta[k], bank.velocity[k]
    px, pz = pxz
    if contact and not bank.released[k]:
        if not bank.locked[k] or bank.point[k] != p:
            # (re)anchor so that the current correction carries on unchanged
            bank.locked[k] = True
            bank.point[k] = p
            anchor[0] = px + delta[0]
            anchor[1] = pz + delta[1]
        dx = anchor[0] - px
        dz = anchor[1] - pz
        radius = settings.radius
        if dx * dx + dz * dz > radius * radius:
            bank.released[k] = True  # released until this span ends
        else:
            dt = settings.rate.dt
            vel[0] = (dx - delta[0]) / dt
            vel[1] = (dz - delta[1]) / dt
            delta[0] = dx
            delta[1] = dz
    if not contact or bank.released[k]:
        if not contact:
            bank.locked[k] = False
            bank.released[k] = False
        # delta returns to zero on the spring
        for c in range(2):
            delta[c], vel[c] = spring_step(delta[c], vel[c], 0.0, 0.0, settings.rate)
    return delta[0], delta[1]


@njit(cache=True)
def _lock_run(contact, planted, points_xz, settings, bank, out):
    """Locking over F frames: contact (F, K) bool; planted (F, K) int (0 heel, 1 toe);
    points_xz (F, K, 2, 2); out (F, K, 2)."""
    for f in range(contact.shape[0]):
        for k in range(contact.shape[1]):
            p = planted[f, k]
            pxz = (points_xz[f, k, p, 0], points_xz[f, k, p, 1])
            out[f, k, 0], out[f, k, 1] = lock_step(bank, k, contact[f, k], p, pxz, settings)


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
    settings = LockSettings(float(radius), spring_rate(float(halflife), float(frame_time)))
    _lock_run(
        c,
        np.ascontiguousarray(planted, dtype=np.int64),
        np.ascontiguousarray(points_xz, dtype=np.float64),
        settings,
        state,
        out,
    )
    return out


@njit(cache=True)
def lock_run(points, heights, ground, contacts, settings, bank, shift):
    """Locking applied to the sole points.

    Args:
        points: ``(F, K, 2, 3)`` heel and toe (world), shifted in place.
        heights: ``(K, 2)`` the points' planted heights.
        ground: ``(heights (F, K, 2), hit (F, K, 2))`` the ground under each point.
        contacts: ``(F, K)`` bool; a foot locks only where the ground is under both points.
        settings: :class:`LockSettings`; bank: :class:`LockBank`, in place.
        shift: ``(F, K, 2)`` out: the X and Z correction of each foot.
    """
    gh, hit = ground
    for f in range(points.shape[0]):
        for k in range(points.shape[1]):
            c0 = points[f, k, 0, 1] - heights[k, 0] - gh[f, k, 0]
            c1 = points[f, k, 1, 1] - heights[k, 1] - gh[f, k, 1]
            p = 1 if c1 < c0 else 0  # the lower point is the planted one (heel on a tie)
            on = contacts[f, k] and hit[f, k, 0] and hit[f, k, 1]
            pxz = (points[f, k, p, 0], points[f, k, p, 2])
            dx, dz = lock_step(bank, k, on, p, pxz, settings)
            shift[f, k, 0] = dx
            shift[f, k, 1] = dz
            for q in range(2):
                points[f, k, q, 0] += dx
                points[f, k, q, 2] += dz


def hold_feet(ctx: FootContext, goals: FootGoals, state: FootState) -> None:
    """Step 9 on ``goals``: planted feet keep their horizontal place; sets ``goals.shift``
    and moves ``goals.points`` (``state.lock``: the :class:`LockBank`)."""
    o = ctx.options.lock
    gh, _, hit = ground_heights(ctx.ground, goals.points, ctx.sole.floor)
    settings = LockSettings(o.radius * ctx.unit, spring_rate(o.halflife, goals.frame_time))
    lock_run(
        goals.points,
        ctx.sole.heights,
        (np.ascontiguousarray(gh, dtype=np.float64), hit),
        np.ascontiguousarray(goals.contacts, dtype=np.bool_),
        settings,
        state.lock,
        goals.shift,
    )
