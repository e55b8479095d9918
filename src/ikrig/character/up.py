"""Which way is up in a clip, and turning a clip into ikrig's Y-up world and back.

A BVH file says nothing about its up axis; most are Y-up, some (Blender and robotics exports)
Z-up. :func:`detect_up` reads it off the clip's poses: the legs, found by name, hang from the
hips along minus the up axis. (Not off the rest pose alone: some rigs, such as
Bandai-Namco's, lie along Z at rest and are stood up by their root's rotation channels.)
:func:`to_y_up` and :func:`from_y_up` turn a clip by the fixed rotation of
:func:`~ikrig.math.axes.to_y_up_quat` at its root joints only (their rest offsets, local
translations and rotations), so every other joint's local data, every bone length and the
file's channels stay as they are, and the round trip is exact up to rounding.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InputError
from ..math.axes import UP_AXES, to_y_up_quat
from ..math.quat import quat_conj, quat_mul, quat_rotate
from ..pose import Motion
from .legs import _by_names

__all__ = ["UP_AXES", "detect_up", "from_y_up", "to_y_up"]

_AXIS = {"x": 0, "y": 1, "z": 2}


def detect_up(motion: Motion) -> str:
    """The up axis (``"y"``, ``"z"`` or ``"x"``) of a clip (any batch shape; its rest pose
    when it has no frames).

    The hips sit above the ankles: the vector from ankle to hip, summed over the legs found
    by name and over the poses, snapped to the nearest positive axis. A skeleton without legs
    found by name, or whose legs point along a negative axis, is taken as Y-up.
    """
    skeleton = motion.skeleton
    legs = _by_names(skeleton)
    if not legs:
        return "y"
    pos = motion.positions_world().reshape(-1, skeleton.num_joints, 3)
    if len(pos) == 0:
        pos = Motion.rest(skeleton).positions_world()[None]
    v = np.sum([pos[:, leg.hip] - pos[:, leg.ankle] for leg in legs], axis=(0, 1))
    axis = int(np.argmax(np.abs(v)))
    if v[axis] <= 0.0:
        return "y"
    return "xyz"[axis]


def _check(up: str) -> None:
    if up not in UP_AXES:
        raise InputError(f"up: expected one of {', '.join(UP_AXES)}, got {up!r}")


def _turned(motion: Motion, q: np.ndarray) -> Motion:
    """``motion`` with its root joints turned by the world rotation ``q``."""
    sk = motion.skeleton
    roots = np.flatnonzero(sk.parents < 0)
    offsets = sk.offsets.copy()
    offsets[roots] = quat_rotate(q, offsets[roots])
    skeleton = dataclasses.replace(sk, offsets=offsets)
    rl = np.array(motion.rotations_local, copy=True)
    pl = np.array(motion.positions_local, copy=True)
    rl[..., roots, :] = quat_mul(q, rl[..., roots, :]).astype(rl.dtype, copy=False)
    pl[..., roots, :] = quat_rotate(q, pl[..., roots, :]).astype(pl.dtype, copy=False)
    return Motion(skeleton, rl, pl, motion.frame_time)


def to_y_up(motion: Motion, up: str) -> Motion:
    """``motion`` (whose world is ``up``) turned into ikrig's Y-up world; ``"y"`` returns it
    as it is.

    Raises:
        InputError: ``up`` is not one of :data:`~ikrig.math.axes.UP_AXES`.
    """
    _check(up)
    return motion if up == "y" else _turned(motion, to_y_up_quat(up))


def from_y_up(motion: Motion, up: str) -> Motion:
    """The inverse of :func:`to_y_up`: a Y-up ``motion`` turned back into an ``up`` world.

    Raises:
        InputError: ``up`` is not one of :data:`~ikrig.math.axes.UP_AXES`.
    """
    _check(up)
    return motion if up == "y" else _turned(motion, quat_conj(to_y_up_quat(up)))
