"""Legs from the shape of a pose, for rigs whose names say nothing usable (step 3 of
:mod:`~ikrig.character.legs`).

The pose is a *reference pose in the Y-up world*: the rest pose built from the skeleton's
offsets (BVH, whose rest pose is the T-pose), or world joint positions a caller gives, one
pose ``(J, 3)`` or a clip's frames ``(F, J, 3)``. A glTF skeleton needs the latter: its bind
pose lives in the nodes' rotations, which an ikrig :class:`~ikrig.skeleton.Skeleton` (offsets
only) does not hold, so the zero-rotation rest pose of its offsets is no pose at all.

With frames, the reference is the clip's typical pose (:func:`reference_pose`): per joint the
median height over the frames, and the median horizontal place relative to the root joint in
that frame (so a clip that travels keeps its shape). In a walk both feet are on the ground
about half the time, so their median heights agree, whatever the first frame's phase.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..pose import Motion
from ..skeleton import Skeleton

FOOT_BAND = 0.1
"""Fraction of the pose's height: a second foot's leaf is at most this far above the lowest
leaf, and the ankle is the highest joint of its branch this close to its leaf."""
SPLIT_ABOVE = 0.25
"""Fraction of the pose's height: the two legs' branches split at least this far above the
second foot (the same foot's toe digits split lower)."""
LIMB_BAND = 0.25
"""Fraction of the pose's height: a limb whose lowest leaf is at most this far above the
lowest leaf reaches the ground. More than two such limbs (a four-legged animal, whose front
and hind feet need not end at the same height) are more legs than this search knows: it
finds none, and the legs must be named (``--legs``)."""
TOE_AHEAD = 0.02
"""Fraction of the pose's height: toes this far ahead of their ankles show where the
character faces."""
KNEE_AHEAD = 0.03
"""Fraction of the pose's height: knees bent this far forward show it when toes do not
(a walk's do; the straight knees of a standing idle may point either way)."""
HANG = 0.05
"""Fraction of the pose's height: at rest the hip hangs this far above the knee, the knee
this far above the ankle."""


def reference_pose(skeleton: Skeleton, pose_world: np.ndarray | None = None) -> np.ndarray:
    """The pose the shape search reads, ``(J, 3)`` in the Y-up world.

    Args:
        skeleton: the skeleton (``J`` joints).
        pose_world: None for the rest pose of the offsets; ``(J, 3)`` world positions; or
            ``(F, J, 3)`` world positions of a clip's frames, reduced to their typical pose
            (module docstring).

    Raises:
        InputError: ``pose_world`` of another shape, or with a NaN or infinite value.
    """
    if pose_world is None:
        return Motion.rest(skeleton).positions_world()
    pos = np.asarray(pose_world, dtype=np.float64)
    J = skeleton.num_joints
    if pos.ndim not in (2, 3) or pos.shape[-2:] != (J, 3) or (pos.ndim == 3 and not len(pos)):
        raise InputError(f"pose_world: expected shape ({J}, 3) or (F, {J}, 3), got {pos.shape}")
    if not np.isfinite(pos).all():
        raise InputError("pose_world: has a NaN or infinite position")
    if pos.ndim == 2:
        return pos
    out = np.median(pos, axis=0)
    flat = pos[..., [0, 2]] - pos[:, :1, [0, 2]]  # horizontal, relative to the root joint
    out[:, [0, 2]] = np.median(flat, axis=0) + np.median(pos[:, 0, [0, 2]], axis=0)
    return out


def legs_by_shape(skeleton: Skeleton, pose: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Two legs ``(hip, knee, ankle, toe)`` from a reference pose ``(J, 3)``, the left one
    first; [] when the pose shows no two hanging legs.

    The lowest leaf and the lowest leaf on another branch that splits from it at least
    :data:`SPLIT_ABOVE` of the height above it (and no more than :data:`FOOT_BAND` higher)
    are the feet; the joint where they split is the pelvis. Down each branch the ankle is
    the first joint within :data:`FOOT_BAND` of the height of its leaf, its child the toe
    (-1 when the ankle is the leaf); the knee and hip are the two joints above, each at least
    :data:`HANG` of the height above the next. A pose with more than two legs reaching the
    ground (:data:`LIMB_BAND`) gives []. The left leg is the one on the character's left,
    facing where its toes point (else where its knees bend, else +Z: left is then +X).
    """
    y = pose[:, 1]
    height = float(np.ptp(y)) or 1.0
    leaves = sorted((j for j in range(skeleton.num_joints) if not skeleton.children(j)),
                    key=lambda j: y[j])  # fmt: skip
    if len(leaves) < 2:
        return []
    first = leaves[0]
    pair = None
    for other in leaves[1:]:
        if y[other] - y[first] > FOOT_BAND * height:
            break  # not a second foot
        split = _split(skeleton, other, first)
        if split >= 0 and y[split] - y[other] >= SPLIT_ABOVE * height:
            pair = (split, first, other)
            break
    if pair is None or _limbs(skeleton, y, leaves, height) > 2:
        return []
    found = [_leg_down(skeleton, y, pair[0], leaf, height) for leaf in pair[1:]]
    legs = [g for g in found if g is not None]
    if len(legs) < 2:
        return []
    side = _left_axis(pose, legs, height)
    if pose[legs[0][0], [0, 2]] @ side < pose[legs[1][0], [0, 2]] @ side:
        legs.reverse()  # the leg on the character's left first
    return legs


def _left_axis(pose: np.ndarray, legs: list[tuple[int, int, int, int]], height: float):
    """``(2,)`` the horizontal (x, z) direction to the character's left, up x forward, where
    forward is where the toes point from the ankles, else where the knees bend (from the
    middle of hip and ankle), else +Z (so left is +X) when neither shows a direction."""
    xz = pose[:, [0, 2]]
    toes = [xz[t] - xz[a] for _, _, a, t in legs if t >= 0]
    knees = [xz[k] - 0.5 * (xz[h] + xz[a]) for h, k, a, _ in legs]
    forward = np.array([0.0, 1.0])
    for vectors, least in ((toes, TOE_AHEAD), (knees, KNEE_AHEAD)):
        mean = np.mean(vectors, axis=0) if vectors else np.zeros(2)
        if np.hypot(*mean) > least * height:
            forward = mean
            break
    return np.array([forward[1], -forward[0]])


def _leg_down(
    skeleton: Skeleton, y: np.ndarray, top: int, leaf: int, height: float
) -> tuple[int, int, int, int] | None:
    """The leg ``(hip, knee, ankle, toe)`` on the path from ``top`` (excluded) down to
    ``leaf`` (:func:`legs_by_shape`), or None when the path holds no hanging leg."""
    path = list(skeleton.chain(top, leaf))[1:]
    i = len(path) - 1
    while i > 0 and y[path[i - 1]] - y[leaf] <= FOOT_BAND * height:
        i -= 1
    if i < 2:
        return None
    hip, knee, ankle = path[i - 2 : i + 1]
    if not (y[hip] - y[knee] > HANG * height and y[knee] - y[ankle] > HANG * height):
        return None
    return hip, knee, ankle, (path[i + 1] if i + 1 < len(path) else -1)


def _limbs(skeleton: Skeleton, y: np.ndarray, leaves: list[int], height: float) -> int:
    """How many legs reach within :data:`LIMB_BAND` of the lowest leaf (``leaves`` sorted
    by height): leaves on branches that split at least :data:`SPLIT_ABOVE` above each other,
    each holding a hanging leg below the split (IK target bones hung from the root do not)."""
    ends: list[int] = []
    for leaf in leaves:
        if y[leaf] - y[leaves[0]] > LIMB_BAND * height:
            break
        splits = [_split(skeleton, leaf, e) for e in ends]
        if not all(s >= 0 and y[s] - y[leaf] >= SPLIT_ABOVE * height for s in splits):
            continue
        if not ends or _leg_down(skeleton, y, splits[0], leaf, height) is not None:
            ends.append(leaf)
    return len(ends)


def _split(skeleton: Skeleton, a: int, b: int) -> int:
    """The nearest common ancestor of joints ``a`` and ``b`` (either itself), -1 if none."""
    above = {b, *skeleton.ancestors(b)}
    return next((j for j in (a, *skeleton.ancestors(a)) if j in above), -1)


def with_sides(legs: list, said: list[str]) -> list:
    """Two legs found by shape (left first) labelled "left" and "right": as their names say
    (``said[k]``: the side the names of leg ``k`` say, "" for none) when they say one each,
    else in the order given."""
    sides = ["left", "right"]
    if sorted(said) == ["left", "right"]:
        sides = list(said)
    return [replace(leg, side=s) for leg, s in zip(legs, sides)]
