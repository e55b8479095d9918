"""What foot placement carries from one frame to the next, by name.

Offline, :func:`~ikrig.foot.offline.place_feet` makes one :class:`FootState` and runs the
steps over all frames (in chunks); live, :class:`~ikrig.foot.live.FootPlacer` keeps one and
runs the steps on one frame per update. Both compute the same frames.
"""

from __future__ import annotations

import numpy as np

from ..signal.springs import SpringBank, spring_lanes
from .stages.contacts import DetectState, detect_state
from .stages.lock import LockBank, new_lock_state


class FootState:
    """The springs, locks and live contact state of ``feet`` feet, in ``lanes`` lanes: one
    per character placed at once (see :mod:`ikrig.signal.springs`; offline and a single
    live placer use one). A new state starts every spring at rest on its first goal, with
    nothing locked and no contact. Each field has a leading lane axis.

    Attributes:
        normals: ``3 feet`` springs, the ground normal under each foot (step 7).
        lock: ``(feet,)`` :data:`~ikrig.foot.stages.lock.LOCK` records (step 9).
        root: 1 spring, the root's vertical offset (step 3).
        targets: ``feet`` springs, live: each foot's vertical offset (step 4c).
        pelvis: 1 spring, live: the pelvis coming back up (step 5).
        weight: ``feet`` springs, the IK weight, 0 where the ground is missing (step 6).
        offsets: ``feet + 1`` springs, ``trace-offset``: the foot and body offsets.
        swing_held: ``(feet,)`` live: each foot's last stance offset (NaN at the start).
        swing: ``feet`` springs, live: a swinging foot's height (step 4b).
        detect: ``(feet,)`` :data:`~ikrig.foot.stages.contacts.DETECT`, live contact detection.
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
