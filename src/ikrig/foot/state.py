"""What foot placement carries from one frame to the next, by name.

Offline, :func:`~ikrig.foot.offline.place_feet` makes one :class:`FootState` and runs the
steps over all frames (in chunks); live, :class:`~ikrig.foot.live.FootPlacer` keeps one and
runs the steps on one frame per update. Both compute the same frames. The records the
steps carry (:data:`LOCK`, :data:`DETECT`) are defined here, so that the steps import
the state and the state imports no step.
"""

from __future__ import annotations

import numpy as np

from ..signal.springs import SpringBank, spring_lanes

LOCK = np.dtype(
    [
        ("locked", np.bool_),
        ("point", np.int64),
        ("anchor", np.float64, (2,)),
        ("delta", np.float64, (2,)),
        ("velocity", np.float64, (2,)),
        ("released", np.bool_),
    ]
)
"""One foot's lock: ``locked`` (the foot is held), ``point`` (the held sole point, 0 heel,
1 toe), ``anchor`` (X, Z where it is kept), ``delta`` (X, Z correction added to the foot),
``velocity`` (of the correction, per second), ``released`` (the lock let go until this
contact ends)."""

LockBank = np.ndarray
"""``(feet,)`` record array of :data:`LOCK`, or ``(lanes, feet)`` (see
:mod:`ikrig.signal.springs`), updated in place."""


def new_lock_state(feet: int, lanes: int | None = None) -> LockBank:
    """Fresh locks for ``feet`` feet (nothing locked, no correction): ``(feet,)``, or
    ``(lanes, feet)`` when ``lanes`` is given."""
    return np.zeros(feet if lanes is None else (lanes, feet), LOCK)


DETECT = np.dtype([("contact", np.bool_), ("pin", np.float64), ("last", np.float64, (2, 3))])
"""Live contact detection state of one foot: ``contact`` (in contact), ``pin`` (the pinning
weight) and ``last`` (the previous frame's sole points; NaN: speed 0)."""

DetectState = np.ndarray
"""``(lanes, feet)`` record array of :data:`DETECT`, updated in place (lanes: see
:mod:`ikrig.signal.springs`)."""


def detect_state(feet: int, lanes: int = 1) -> DetectState:
    """A fresh detection state: no contact, pins at 0, no previous frame."""
    state = np.zeros((lanes, feet), DETECT)
    state["last"] = np.nan
    return state


class FootState:
    """The springs, locks and live contact state of ``feet`` feet, in ``lanes`` lanes: one
    per character placed at once (see :mod:`ikrig.signal.springs`; offline and a single
    live placer use one). A new state starts every spring at rest on its first goal, with
    nothing locked and no contact. Each field has a leading lane axis.

    Attributes:
        normals: ``3 feet`` springs, the ground normal under each foot (step 3b).
        lock: ``(feet,)`` :data:`LOCK` records (step 3c).
        root: 1 spring, the root's vertical offset (step 5a).
        targets: ``feet`` springs, live: each foot's vertical offset (step 5b).
        pelvis: 1 spring, live: the pelvis coming back up (step 6b).
        weight: ``feet`` springs, the IK weight, 0 where the ground is missing (step 8a).
        offsets: ``feet + 1`` springs, ``trace-offset``: the foot and body offsets.
        swing_held: ``(feet,)`` live: each foot's last stance offset (NaN at the start).
        swing: ``feet`` springs, live: a swinging foot's height (step 4).
        detect: ``(feet,)`` :data:`DETECT`, live contact detection.
        level: ``()`` live: the ground level (world Y) under the pelvis found last frame (NaN
            at the start: the clip's floor), which sets how high ground is searched for.
    """

    def __init__(self, feet: int, lanes: int = 1):
        self.normals: SpringBank = spring_lanes(lanes, 3 * feet)
        self.lock: LockBank = new_lock_state(feet, lanes)
        self.root: SpringBank = spring_lanes(lanes, 1)
        self.targets: SpringBank = spring_lanes(lanes, feet)
        self.pelvis: SpringBank = spring_lanes(lanes, 1)
        self.weight: SpringBank = spring_lanes(lanes, feet)
        self.offsets: SpringBank = spring_lanes(lanes, feet + 1)
        self.swing_held: np.ndarray = np.full((lanes, feet), np.nan)
        self.swing: SpringBank = spring_lanes(lanes, feet)
        self.detect: DetectState = detect_state(feet, lanes)
        self.level: np.ndarray = np.full(lanes, np.nan)
