"""Does a ground lie under a clip? The check foot placement runs before solving.

A ground given as a mesh file is used as given, in the clip's coordinates and units; one in
the wrong place or units misses the feet, and foot placement would then leave every frame
as animated and report nothing but dashes. :func:`check_coverage` makes that an error, and
a ground that covers only part of the clip a warning (:class:`GroundCoverageWarning`)
naming how many frames it covers.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError

__all__ = ["GroundCoverageWarning", "check_coverage"]


class GroundCoverageWarning(UserWarning):
    """The ground is missing under the feet in some frames of a clip (they stay animated)."""


def check_coverage(found: ArrayLike, points: ArrayLike | None = None, stacklevel: int = 1) -> int:
    """Check that the ground is under the feet; return the number of frames it fully covers.

    Args:
        found: ``(F, feet)`` bool, the ground was found under each foot's sole in each frame.
        points: optional ``(F, feet, ..., 3)`` world points of the feet, to name where the
            feet are in the error message.
        stacklevel: where the warning points: 1 the caller of this function, 2 its caller.

    Raises:
        InputError: the ground is under no foot in any frame.

    Warns:
        GroundCoverageWarning: the ground is missing under a foot in some frames
            ("ground covers 412 of 600 frames; ...").
    """
    found = np.asarray(found, dtype=bool)
    frames = int(found.shape[0]) if found.ndim else 0
    if frames == 0:
        return 0
    covered = int(found.reshape(frames, -1).all(axis=1).sum())
    if not found.any():
        where = ""
        if points is not None:
            xz = np.asarray(points, dtype=np.float64).reshape(-1, 3)[:, [0, 2]]
            xz = xz[np.isfinite(xz).all(axis=1)]
            if len(xz):
                lo, hi = xz.min(axis=0), xz.max(axis=0)
                where = (
                    f" (the feet stay within x {lo[0]:.4g}..{hi[0]:.4g},"
                    f" z {lo[1]:.4g}..{hi[1]:.4g})"
                )
        raise InputError(
            f"ground: it is under no foot in any of the {frames} frames{where};"
            " a mesh must be in the clip's own coordinates and units, Y up"
        )
    if covered < frames:
        warnings.warn(
            f"ground covers {covered} of {frames} frames; where it is missing under a foot,"
            " the leg is left as animated",
            GroundCoverageWarning,
            stacklevel=stacklevel + 1,
        )
    return covered
