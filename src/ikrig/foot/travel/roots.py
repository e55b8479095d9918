"""Moving a clip's roots: turned about a vertical axis and carried across the ground,
frame by frame (the one operation :mod:`ikrig.foot.travel` and :mod:`ikrig.foot.travel.belt` build
on)."""

from __future__ import annotations

import numpy as np

from ...math.quat import quat_mul
from ...pose import Motion

__all__ = ["move_roots"]


def move_roots(motion: Motion, angles, pivot_xz, targets_xz) -> Motion:
    """``motion`` turned about the vertical axis through ``pivot_xz`` by ``angles`` and
    moved so that the pivot lands on ``targets_xz``, frame by frame.

    Args:
        motion: a clip ``(F,)`` (or a pose, ``F = 1``), Y up.
        angles: ``()`` or ``(F,)`` radians about +Y (+Z turns toward +X).
        pivot_xz: ``(2,)`` the point turned about.
        targets_xz: ``(2,)`` or ``(F, 2)`` where the pivot goes.

    Returns:
        A new Motion: only the root joints' local rotations and positions change (heights
        kept); the dtype is kept.
    """
    shape = motion.batch_shape
    F = motion.num_frames
    a = np.broadcast_to(np.asarray(angles, dtype=np.float64), (F,))
    t = np.broadcast_to(np.asarray(targets_xz, dtype=np.float64), (F, 2))
    pivot = np.asarray(pivot_xz, dtype=np.float64)
    roots = np.flatnonzero(motion.skeleton.parents < 0)
    rl = np.array(motion.rotations_local, dtype=np.float64).reshape(F, -1, 4)
    pl = np.array(motion.positions_local, dtype=np.float64).reshape(F, -1, 3)
    q = np.zeros((F, 1, 4))
    q[:, 0, 1], q[:, 0, 3] = np.sin(0.5 * a), np.cos(0.5 * a)
    rl[:, roots] = quat_mul(q, rl[:, roots])
    c, s = np.cos(a)[:, None], np.sin(a)[:, None]
    x, z = pl[:, roots, 0] - pivot[0], pl[:, roots, 2] - pivot[1]
    pl[:, roots, 0] = c * x + s * z + t[:, :1]
    pl[:, roots, 2] = c * z - s * x + t[:, 1:]
    dt = motion.dtype
    return motion.replace(
        rotations_local=rl.reshape(shape + rl.shape[1:]).astype(dt, copy=False),
        positions_local=pl.reshape(shape + pl.shape[1:]).astype(dt, copy=False),
    )
