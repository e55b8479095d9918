"""Whether a limb's end reaches the floor in a clip, the rule shared by the arms that stand
as front legs (:func:`~ikrig.character.legs.find_legs`) and the limbs left unplaced
(:mod:`~ikrig.character.limbs`).

The floor is the legs' floor: the lowest 5th percentile of their ankles' heights. A joint
*reaches the floor* when it is within :data:`FLOOR_REACH` leg lengths of it (or below it) in
at least :data:`DOWN_SHARE` of the frames; a hand at the end of a hanging arm never is, a
quadruped's front foot (whose wrist sits below the hind legs' hocks) is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["DOWN_SHARE", "FLOOR_REACH", "reaches_floor"]

FLOOR_REACH = 0.1
"""Leg lengths above the legs' floor that count as on it."""
DOWN_SHARE = 0.2
"""The share of the frames a limb's end must spend on the floor to look like a leg."""


def reaches_floor(positions_world: np.ndarray, ankles: Sequence[int], unit: float) -> np.ndarray:
    """``(J,)`` bool: per joint whether it reaches the floor of the legs whose ankles are
    ``ankles`` (module docstring).

    Args:
        positions_world: ``(F, J, 3)`` (or ``(J, 3)``, one frame) world positions, Y up.
        ankles: the legs' ankle joints (at least one).
        unit: the leg length, in the positions' units.
    """
    pos = np.asarray(positions_world, dtype=np.float64)
    pos = pos.reshape(-1, *pos.shape[-2:])
    floor = min(float(np.percentile(pos[:, a, 1], 5.0)) for a in ankles)
    return np.mean(pos[..., 1] - floor <= FLOOR_REACH * unit, axis=0) >= DOWN_SHARE
