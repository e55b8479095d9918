"""Which way is up in a clip, and turning a clip into ikrig's Y-up world and back.

A BVH file says nothing about its up axis; most are Y-up, some (Blender and robotics exports)
Z-up. :func:`detect_up` reads it off the clip's poses: the legs, found by name, hang from the
hips along minus the up axis. A clip is better evidence than its rest pose: some rigs, such
as Bandai-Namco's, stretch both legs sideways along X at rest (and the spine along +X); only
their joints' rotation channels stand them up.

:func:`to_y_up` and :func:`from_y_up` turn a clip by the fixed rotation of
:func:`~ikrig.math.axes.to_y_up_quat` (Z-up: -90 degrees about X; X-up: +90 degrees about Z)
at its root joints only (their rest offsets, local translations and rotations), so every
other joint's local data, every bone length and the file's channels stay as they are, and
the round trip is exact up to rounding.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InputError
from ..math.axes import UP_AXES, check_up, to_y_up_quat
from ..math.quat import quat_conj, quat_mul, quat_rotate
from ..pose import Motion
from ..skeleton import Skeleton
from .naming import leg_limbs

__all__ = ["UP_AXES", "detect_up", "from_y_up", "to_y_up"]

MIN_HANG = 0.2
"""The summed hip-over-ankle vector must reach this fraction of the summed leg chain
lengths (hip-knee plus knee-ankle, over legs and poses) to be read as an up axis; below it
(legs sideways or folded, as in some rigs' rest poses) the clip is taken as Y-up."""


def detect_up(clip: Motion | Skeleton) -> str:
    """The up axis (``"y"``, ``"z"`` or ``"x"``) of a clip (any batch shape), or of a
    skeleton's rest pose (also used for a clip without frames).

    The hips sit above the ankles: the vector from ankle to hip, summed over the legs found
    by name (any rig naming: ``LeftUpLeg``, ``thigh.L``, ``UpperLeg_L``...) and over the
    poses, snapped to the nearest axis. It does not depend on the arms, so T and A poses
    read the same. Taken as Y-up (the BVH default; ``ikrig foot --up`` overrides): a
    skeleton without legs found by name, legs pointing along a negative axis, or legs that
    barely hang (below :data:`MIN_HANG` of their length, e.g. sideways at rest).

    Raises:
        InputError: ``clip`` is neither a Motion nor a Skeleton.
    """
    if isinstance(clip, Skeleton):
        clip = Motion.rest(clip)
    if not isinstance(clip, Motion):
        raise InputError(f"detect_up: expected a Motion or a Skeleton, got {type(clip).__name__}")
    skeleton = clip.skeleton
    legs = leg_limbs(skeleton)
    if not legs:
        return "y"
    pos = clip.positions_world().reshape(-1, skeleton.num_joints, 3)
    if len(pos) == 0:
        pos = Motion.rest(skeleton).positions_world()[None]
    pos = pos.astype(np.float64, copy=False)
    hang = np.zeros(3)
    chain = 0.0
    for leg in legs:
        hip, knee, ankle = pos[:, leg.hip], pos[:, leg.knee], pos[:, leg.ankle]
        hang += np.sum(hip - ankle, axis=0)
        chain += float(np.sum(np.linalg.norm(hip - knee, axis=-1)))
        chain += float(np.sum(np.linalg.norm(knee - ankle, axis=-1)))
    axis = int(np.argmax(np.abs(hang)))
    if hang[axis] <= MIN_HANG * chain:
        return "y"
    return "xyz"[axis]


def _turned(motion: Motion, q: np.ndarray) -> Motion:
    """``motion`` with its root joints turned by the world rotation ``q`` ``(4,)`` xyzw."""
    sk = motion.skeleton
    roots = np.flatnonzero(sk.parents < 0)
    offsets = sk.offsets.copy()
    offsets[roots] = quat_rotate(q, offsets[roots])
    rl = np.array(motion.rotations_local, copy=True)
    pl = np.array(motion.positions_local, copy=True)
    rl[..., roots, :] = quat_mul(q, rl[..., roots, :])
    pl[..., roots, :] = quat_rotate(q, pl[..., roots, :])
    skeleton = dataclasses.replace(sk, offsets=offsets)
    return motion.replace(skeleton=skeleton, rotations_local=rl, positions_local=pl)


def to_y_up(motion: Motion, up: str) -> Motion:
    """``motion`` (whose world is ``up``) turned into ikrig's Y-up world; ``"y"`` returns the
    same object.

    Only the root joints change: their rest offsets, local positions and rotations are
    turned by :func:`~ikrig.math.axes.to_y_up_quat` (Z-up: -90 degrees about X, so +Z goes
    to +Y and +Y to -Z; X-up: +90 degrees about Z, so +X goes to +Y). World positions turn
    the same way; the arrays keep their dtype.

    Raises:
        InputError: ``up`` is not one of :data:`~ikrig.math.axes.UP_AXES`.
    """
    q = to_y_up_quat(check_up(up))
    return motion if up == "y" else _turned(motion, q)


def from_y_up(motion: Motion, up: str) -> Motion:
    """The inverse of :func:`to_y_up`: a Y-up ``motion`` turned back into an ``up`` world
    (the conjugate turn at the roots); ``"y"`` returns the same object.

    Raises:
        InputError: ``up`` is not one of :data:`~ikrig.math.axes.UP_AXES`.
    """
    q = quat_conj(to_y_up_quat(check_up(up)))
    return motion if up == "y" else _turned(motion, q)
