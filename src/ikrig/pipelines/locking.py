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

import math

import numpy as np

from .._numba import njit


@njit(cache=True)
def _lock_run(contact, planted, points_xz, dt, radius, halflife, state, out):
    """Locking over F frames.

    contact (F, K) bool; planted (F, K) int (0 heel, 1 toe); points_xz (F, K, 2, 2);
    state (K, 7): [locked, point, anchor_x, anchor_z, delta_x, delta_z, released] and
    velocity in state2 appended as columns 7, 8 -> (K, 9); out (F, K, 2).
    """
    y = 2.0 * math.log(2.0) / max(halflife, 1e-9)
    eydt = math.exp(-y * dt)
    for f in range(contact.shape[0]):
        for k in range(contact.shape[1]):
            s = state[k]
            p = planted[f, k]
            px = points_xz[f, k, p, 0]
            pz = points_xz[f, k, p, 1]
            if contact[f, k] and s[6] == 0.0:
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
            if not contact[f, k] or s[6] != 0.0:
                if not contact[f, k]:
                    s[0] = 0.0
                    s[6] = 0.0
                # spring of delta toward zero
                for c in range(2):
                    x = s[4 + c]
                    v = s[7 + c]
                    j1 = v + x * y
                    s[4 + c] = eydt * (x + j1 * dt)
                    s[7 + c] = eydt * (v - j1 * y * dt)
            out[f, k, 0] = s[4]
            out[f, k, 1] = s[5]


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
