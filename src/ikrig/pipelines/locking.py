"""Step 9 of foot placement: foot locking.

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

import numpy as np

from .._numba import njit
from .smoothing import spring_rate, spring_step


@njit(cache=True)
def lock_step(s, contact, p, px, pz, dt, radius, y, eydt):
    """One frame of one foot's lock.

    ``s``: the foot's state row (9,): [locked, point, anchor_x, anchor_z, delta_x, delta_z,
    released, velocity_x, velocity_z], updated in place; ``contact``: in contact this frame;
    ``p``: the planted point (0 heel, 1 toe) at ``(px, pz)``; ``y, eydt``: the release
    spring's rate (:func:`~ikrig.pipelines.smoothing.spring_rate`). Returns the correction
    ``(delta_x, delta_z)``.
    """
    if contact and s[6] == 0.0:
        if s[0] == 0.0 or s[1] != p:
            # (re)anchor so that the current correction carries on unchanged
            s[0] = 1.0
            s[1] = p
            s[2] = px + s[4]
            s[3] = pz + s[5]
        dx = s[2] - px
        dz = s[3] - pz
        if dx * dx + dz * dz > radius * radius:
            s[6] = 1.0  # released until this span ends
        else:
            s[7] = (dx - s[4]) / dt
            s[8] = (dz - s[5]) / dt
            s[4] = dx
            s[5] = dz
    if not contact or s[6] != 0.0:
        if not contact:
            s[0] = 0.0
            s[6] = 0.0
        # delta returns to zero on the spring
        for c in range(2):
            s[4 + c], s[7 + c] = spring_step(s[4 + c], s[7 + c], 0.0, 0.0, y, eydt, dt)
    return s[4], s[5]


@njit(cache=True)
def _lock_run(contact, planted, points_xz, dt, radius, halflife, state, out):
    """Locking over F frames: contact (F, K) bool; planted (F, K) int (0 heel, 1 toe);
    points_xz (F, K, 2, 2); state (K, 9) (see :func:`lock_step`); out (F, K, 2)."""
    y, eydt = spring_rate(halflife, dt)
    for f in range(contact.shape[0]):
        for k in range(contact.shape[1]):
            p = planted[f, k]
            out[f, k, 0], out[f, k, 1] = lock_step(
                state[k], contact[f, k], p, points_xz[f, k, p, 0], points_xz[f, k, p, 1],
                dt, radius, y, eydt,
            )  # fmt: skip


def new_lock_state(feet: int) -> np.ndarray:
    """Fresh locking state for ``feet`` feet (nothing locked, no correction)."""
    return np.zeros((feet, 9))


def lock_feet(contact, planted, points_xz, frame_time, radius, halflife, state=None):
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
        float(frame_time),
        float(radius),
        float(halflife),
        state,
        out,
    )
    return out
