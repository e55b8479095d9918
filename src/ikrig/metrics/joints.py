"""What the clip metrics (:mod:`ikrig.metrics`, whose docstring gives the rules) read from
joint positions alone: the contacts of foot joints, and knee angles and pops."""

from __future__ import annotations

import math

import numpy as np

from ..character.legs import Legs
from ..errors import InputError
from ..signal.filters import jerk_excess
from ..signal.spans import clean_spans
from ..signal.stats import percentile

__all__ = [
    "CONTACT_HEIGHT",
    "CONTACT_MIN_SPAN",
    "CONTACT_SPEED",
    "FLOOR_PERCENTILE",
    "POP_THRESHOLD",
    "POP_WINDOW",
    "joint_contacts",
    "knee_angles",
    "knee_pops",
]

POP_WINDOW = 1.0 / 30.0
"""Time step (s) over which the change of knee angular velocity is measured (knee pops)."""
POP_THRESHOLD = 2.0
"""A change of knee angular velocity over ``POP_WINDOW`` exceeding the source's by more than
this (rad/s) is a pop."""
FLOOR_PERCENTILE = 5.0
"""A foot joint's floor: this percentile of its height in the source."""
CONTACT_HEIGHT = 0.06
"""Leg lengths: a joint this close to its floor (and slow) is in contact."""
CONTACT_SPEED = 0.5
"""Leg lengths per second: a joint slower than this (and low) is in contact."""
CONTACT_MIN_SPAN = 0.05
"""Seconds: shorter gaps between contacts are filled, then shorter contacts dropped."""


def _span_frames(frame_time: float) -> int:
    """The fewest frames lasting at least :data:`CONTACT_MIN_SPAN` (:mod:`ikrig.metrics`)."""
    return max(1, math.ceil(CONTACT_MIN_SPAN / frame_time - 0.01))


def joint_contacts(
    positions_world: np.ndarray, leg_length: float, frame_time: float
) -> tuple[np.ndarray, np.ndarray]:
    """Contacts of foot joints by the rule in :mod:`ikrig.metrics`.

    Args:
        positions_world: ``(F, n, 3)`` the source's foot joints, ``F >= 1``.
        leg_length: the length unit of the thresholds.
        frame_time: seconds per frame.

    Returns:
        ``(contacts (F, n) bool, floors (n,))``, floors in the positions' units.
    """
    p = np.asarray(positions_world, dtype=np.float64)
    if p.ndim != 3 or p.shape[-1] != 3 or len(p) == 0:
        raise InputError(f"positions_world: expected (F >= 1, n, 3), got {p.shape}")
    floors = np.array([percentile(p[:, k, 1], FLOOR_PERCENTILE) for k in range(p.shape[1])])
    speed = np.zeros(p.shape[:-1])
    if len(p) >= 2:  # central differences, one-sided at the ends
        speed = np.hypot(*_central_differences(p, frame_time))
    raw = (p[..., 1] - floors <= CONTACT_HEIGHT * leg_length) & (speed < CONTACT_SPEED * leg_length)
    n = _span_frames(frame_time)
    out = np.zeros_like(raw)
    for k in range(raw.shape[1]):
        out[:, k] = clean_spans(raw[:, k], n, n - 1)
    return out, floors


def _central_differences(p: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The x and z velocities ``(F, n)`` of ``p (F >= 2, n, 3)`` by central differences,
    one-sided at the ends (as ``np.gradient``, coordinate by coordinate)."""
    out = []
    for k in (0, 2):
        x = p[..., k]
        v = np.empty_like(x)
        v[1:-1] = (x[2:] - x[:-2]) / (2.0 * dt)
        v[0], v[-1] = (x[1] - x[0]) / dt, (x[-1] - x[-2]) / dt
        out.append(v)
    return out[0], out[1]


def knee_angles(positions_world: np.ndarray, legs: Legs) -> np.ndarray:
    """Knee angle ``(F, legs)`` in radians (``pi`` = straight) from joint positions ``(F, J, 3)``.

    The angle at the knee between the knee->hip and knee->ankle segments; a zero-length
    segment gives 0.
    """
    p = np.asarray(positions_world)
    if not legs.legs:
        return np.zeros((len(p), 0))
    hips, knees, ankles = (np.array(j) for j in zip(*((g.hip, g.knee, g.ankle) for g in legs.legs)))
    knee = [p[:, knees, k] for k in range(3)]  # coordinate by coordinate: (F, legs) each
    a = [p[:, hips, k] - knee[k] for k in range(3)]
    b = [p[:, ankles, k] - knee[k] for k in range(3)]
    cx, cy, cz = (a[i] * b[j] - a[j] * b[i] for i, j in ((1, 2), (2, 0), (0, 1)))
    return np.arctan2(np.sqrt(cx * cx + cy * cy + cz * cz), a[0] * b[0] + a[1] * b[1] + a[2] * b[2])


def knee_pops(
    angles_result, angles_source, frame_time: float, threshold: float = POP_THRESHOLD,
    window: float = POP_WINDOW,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Count knee pops of a result against its source (the rule is in :mod:`ikrig.metrics`).

    Args:
        angles_result: ``(F, legs)`` knee angles of the result, radians.
        angles_source: ``(F, legs)`` knee angles of the source, radians.
        frame_time: seconds per frame.
        threshold: rad/s; a change of angular velocity over ``window`` that exceeds the
            source's nearby ones by more than this is a pop.
        window: seconds over which the change of angular velocity is measured.

    Returns:
        ``(pops (legs,) int, excess (F, legs) float)``: the number of pops per leg and, per
        frame, how much the result's change of angular velocity exceeds the source's (rad/s;
        0 at the ends, where it is undefined).
    """
    a_r = np.asarray(angles_result, dtype=np.float64)
    W = max(1, int(round(window / frame_time)))
    excess = jerk_excess(a_r, angles_source, frame_time, window)
    pops = np.zeros(a_r.shape[1], dtype=np.int64)
    for k in range(a_r.shape[1]):
        idx = np.flatnonzero(excess[:, k] > threshold)
        if len(idx):
            pops[k] = 1 + int(np.count_nonzero(np.diff(idx) >= 2 * W))
    return pops, excess
