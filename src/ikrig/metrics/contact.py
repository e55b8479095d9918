"""Foot-placement quality: one clip (``result``) against the clip it was made from
(``source``), measured the way an outsider would: against each foot joint's own floor in the
source, with contacts read from the source alone, never with the pipeline's sole model or
contacts (issue 11; ``../shared/reference/foot_metrics.md`` has the literature's metrics).

Units: lengths in **% of the leg length** (``legs.leg_length``), speeds in % of the leg
length per second, accelerations in % of the leg length per second squared; times come from
``source.frame_time`` (``dt``). Each value is given over all foot joints pooled, ``per_foot``
(per leg side, its ankle and toe pooled) and ``per_joint`` (by joint name).

Foot joints and floors
    A leg's foot joints are its ankle and, when it has one (``leg.toe >= 0``), its toe. The
    *floor* of a foot joint is the 5th percentile (:data:`FLOOR_PERCENTILE`, NumPy's linear
    interpolation) of its world height (Y) over all frames of the **source**.

Ground
    ``ground.height_at(xz)`` under each foot joint of the result, as given: its ``y = 0``
    meets the joints' floors (foot placement's default datum, "clip"). ``None`` is a flat
    ground at 0. A (frame, joint) where the query misses (or gives a non-finite height) is
    left out of every value that reads the ground and counted in ``misses``.

Height over the ground
    ``h = result height - (ground height + floor)`` per foot joint and frame: 0 where the
    joint stands as high over the ground as the source's stood on its floor.

Contacts (per foot joint, from the source alone), in this order
    1. speed: the horizontal (XZ) speed by central differences, ``|p[t+1] - p[t-1]| /
       (2 dt)``, one-sided ``|p[1] - p[0]| / dt`` and ``|p[F-1] - p[F-2]| / dt`` at the ends
       (0 for a one-frame clip);
    2. raw contact: height above the floor ``<=`` :data:`CONTACT_HEIGHT` (6 % of a leg) and
       speed ``<`` :data:`CONTACT_SPEED` (0.5 leg/s);
    3. gaps between two contact runs that last less than :data:`CONTACT_MIN_SPAN` (50 ms) are
       filled;
    4. then contact runs (those at the clip's ends too) lasting less than 50 ms are dropped.
    A run of ``k`` frames lasts ``k dt``; "less than 50 ms" is ``k dt < 50 ms - dt / 100``
    (the hundredth of a frame absorbs frame times rounded in files, 0.008333 s). So at 30 fps
    one-frame gaps are filled and one-frame runs dropped; at 120 fps, up to five frames.

``pen_mean``, ``pen_p95``, ``pen_max``
    Penetration ``max(0, -h)`` over all frames (frames above the ground count as 0).

``float_mean``, ``float_p95``: float ``max(0, h)`` over the joint's contact frames.

``float_mean_source``, ``float_p95_source``
    The source's own float on its floor, ``max(0, source height - floor)`` over the same
    contact frames (no ground read): a clip recorded without toe joints floats on its own,
    and a placement need not float less (issue 34: the goal is ``<= max(1 %, this)``).

``height_dev_p95``, ``height_dev_max``
    Over the contact frames, ``|h - (source height - floor)|``: how far a planted joint is
    from its recorded height above its floor (0 for ``result == source`` on flat ground at 0).

``skate``, ``skate_source``, ``skate_rel``
    Over the transitions ``t -> t+1`` with source contact in both frames, the mean horizontal
    (XZ) speed ``|p[t+1] - p[t]| / dt`` of the result's joint; the same of the source's;
    ``skate_rel = skate / skate_source`` (1.0 when both are 0, ``None`` when only the
    source's is). Skate does not read the ground, so misses do not change it.

``planted_shift``
    Per joint ``|5th percentile of h|``: how far the level the joint rests on in the result is
    from its recorded floor; the largest over the joints pooled.

``pops``
    Knee pops: sudden changes of knee angular velocity the result has and its source does
    not (:func:`knee_pops`): the knee angle (thigh to shin, ``pi`` straight), its change of
    angular velocity over :data:`POP_WINDOW` (1/30 s), a frame flagged when that exceeds the
    source's largest within the window by more than :data:`POP_THRESHOLD` (2 rad/s), flagged
    frames closer than two windows being one pop. Counted per leg, summed overall.

``bone_drift`` (plain ratio)
    The largest change of a bone's length (the world distance from parent to child) from its
    length in the source, over the leg length, over all frames; bones are the parent-child
    links whose local translation is constant in the source (one that changes there, such as
    a pelvis translated under a static root, is a translation, not a bone).

``pelvis_dev``
    The largest horizontal (XZ) distance between the result's and the source's pelvis (the
    hips' common ancestor, :func:`~ikrig.character.legs.pelvis_joint`; not always joint 0).

``pelvis_rise``
    The largest rise of the pelvis over the source's beyond the highest ground under the foot
    joints, over the frames where the ground is found under every foot joint.

``pelvis_acc``, ``pelvis_acc_source``, ``pelvis_acc_ratio``
    The pelvis's vertical acceleration over a fixed step ``h = 1/30 s``
    (:data:`ACC_WINDOW`, ``W = max(1, round(h / dt))`` frames): ``(y[t+W] - 2 y[t] +
    y[t-W]) / (W dt)^2`` for ``W <= t < F - W``; the 99th percentile of its magnitude in the
    result and in the source; ``pelvis_acc_ratio = pelvis_acc / max(pelvis_acc_source,``
    :data:`ACC_FLOOR` ``)`` so that a source standing still does not divide by ~0.

``misses``: the (frame, foot joint) pairs left out because the ground query missed.

What changed in the animation (pelvis height change, joint displacement, upper-body change,
leg extension): :mod:`ikrig.metrics.fidelity`, its keys (:data:`FIDELITY_KEYS`) among the
body values.

Values without samples (no contact frames, every query missed, a clip of ``2 W`` frames or
fewer for the acceleration) are ``None``, never NaN. Structural problems raise
:class:`~ikrig.errors.InputError`: clips that are not ``(F,)`` with ``F >= 1``, frame
counts or hierarchies that differ, a source without ``frame_time``, legs that are no
:class:`~ikrig.character.legs.Legs` or name joints outside the skeleton, a ground without
``height_at`` or whose answer does not fit the query.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..character.legs import Legs, pelvis_joint
from ..errors import InputError
from ..pose import Motion, bone_length_change
from ..signal.stats import percentile
from .fidelity import fidelity_values, legs_down
from .joints import (
    FLOOR_PERCENTILE,
    joint_contacts,
    knee_angles,
    knee_pops,
)

__all__ = ["ACC_FLOOR", "ACC_WINDOW", "foot_metrics", "foot_summary"]

ACC_WINDOW = 1.0 / 30.0
"""Seconds: the step of the pelvis's vertical acceleration."""
ACC_FLOOR = 10.0
"""% leg/s^2: the least source acceleration ``pelvis_acc_ratio`` divides by (a 1 % bob at
0.5 Hz; the shared clips' p99 run from 27, an idle, to 2800, a run)."""


def _stat(values: np.ndarray, kind: str) -> float | None:
    if values.size == 0:
        return None
    if kind == "mean":
        return float(np.mean(values))
    if kind == "p95":
        return percentile(values, 95.0)
    return float(np.max(values))


def _rel(skate: float | None, skate_source: float | None) -> float | None:
    if skate is None or skate_source is None:
        return None
    if skate_source > 0.0:
        return float(skate / skate_source)
    return 1.0 if skate == 0.0 else None


WorldFK = tuple[np.ndarray, np.ndarray]
"""World rotations ``(F, J, 4)`` and positions ``(F, J, 3)`` (:meth:`~ikrig.pose.Motion.fk`)."""


def _float64(fk: WorldFK) -> WorldFK:
    return np.asarray(fk[0], dtype=np.float64), np.asarray(fk[1], dtype=np.float64)


def _checked(
    result: Motion, source: Motion, legs: Legs, source_fk: Any = None
) -> tuple[WorldFK, WorldFK]:
    """The world transforms (float64) of both clips after the structural checks."""
    if not isinstance(result, Motion) or not isinstance(source, Motion):
        raise InputError("result and source: expected ikrig Motion clips")
    if not isinstance(legs, Legs):
        raise InputError(f"legs: expected ikrig Legs (find_legs), got {type(legs).__name__}")
    for name, m in (("result", result), ("source", source)):
        if len(m.batch_shape) != 1 or m.batch_shape[0] < 1:
            raise InputError(
                f"{name}: expected a clip of batch shape (F >= 1,), got {m.batch_shape}"
            )
    if result.batch_shape != source.batch_shape:
        raise InputError(
            f"result {result.batch_shape} and source {source.batch_shape}: frame counts differ"
        )
    if not np.array_equal(result.skeleton.parents, source.skeleton.parents):
        raise InputError("result and source: skeleton hierarchies (parents) differ")
    if source.frame_time is None:
        raise InputError("source: needs a frame_time (seconds per frame) for speeds")
    J = source.skeleton.num_joints
    for leg in legs.legs:
        if not all(0 <= j < J for j in leg.joints) or leg.toe >= J:
            raise InputError(f"legs: leg {leg.side!r} names a joint outside the {J}-joint skeleton")
    return _float64(result.fk()), _float64(source.fk(source_fk))


def _ground_heights(ground, xz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Heights ``(...)`` under ``xz (..., 2)`` (0 where missed) and the found mask."""
    if ground is None:
        return np.zeros(xz.shape[:-1]), np.ones(xz.shape[:-1], dtype=bool)
    if not callable(getattr(ground, "height_at", None)):
        raise InputError(
            f"ground: expected an object with height_at(xz), got {type(ground).__name__}"
        )
    answer = ground.height_at(xz)
    try:
        h = np.broadcast_to(np.asarray(answer[0], dtype=np.float64), xz.shape[:-1])
        found = np.broadcast_to(np.asarray(answer[2], dtype=bool), xz.shape[:-1])
    except (TypeError, ValueError, IndexError):
        raise InputError(
            f"ground: height_at(xz {xz.shape}) must give (heights, normals, mask) over xz[..., 0]"
        ) from None
    found = found & np.isfinite(h)
    return np.where(found, h, 0.0), found


def _step_speeds(p: np.ndarray, dt: float) -> np.ndarray:
    """Horizontal speeds ``(F - 1, n)`` of ``p (F, n, 3)`` over the transitions ``t -> t+1``."""
    return np.hypot(p[1:, :, 0] - p[:-1, :, 0], p[1:, :, 2] - p[:-1, :, 2]) / dt


def _joint_samples(h: np.ndarray, rec: np.ndarray, c: np.ndarray, found: np.ndarray) -> dict:
    """One joint's ground samples (% leg): ``h (F,)`` over the ground, ``rec (F,)`` the
    source over its floor, contacts ``c`` and found mask ``found``."""
    h_all, h_c = h[found], h[found & c]
    return {
        "pen": np.maximum(0.0, -h_all),
        "float": np.maximum(0.0, h_c),
        "float_source": np.maximum(0.0, rec[c]),
        "height_dev": np.abs(h_c - rec[found & c]),
        "shift": abs(percentile(h_all, FLOOR_PERCENTILE)) if h_all.size else None,
        "misses": int(np.count_nonzero(~found)),
    }


def _values(parts: list[dict]) -> dict[str, Any]:
    """The pooled values of the joints' samples ``parts``."""

    def cat(key: str) -> np.ndarray:
        return np.concatenate([p[key] for p in parts]) if parts else np.zeros(0)

    pen, flt, dev, flt_s = cat("pen"), cat("float"), cat("height_dev"), cat("float_source")
    skate, skate_source = _stat(cat("skate"), "mean"), _stat(cat("skate_source"), "mean")
    shifts = [p["shift"] for p in parts if p["shift"] is not None]
    return {
        "pen_mean": _stat(pen, "mean"),
        "pen_p95": _stat(pen, "p95"),
        "pen_max": _stat(pen, "max"),
        "float_mean": _stat(flt, "mean"),
        "float_p95": _stat(flt, "p95"),
        "float_mean_source": _stat(flt_s, "mean"),
        "float_p95_source": _stat(flt_s, "p95"),
        "height_dev_p95": _stat(dev, "p95"),
        "height_dev_max": _stat(dev, "max"),
        "skate": skate,
        "skate_source": skate_source,
        "skate_rel": _rel(skate, skate_source),
        "planted_shift": max(shifts) if shifts else None,
        "misses": int(sum(p["misses"] for p in parts)),
    }


def _pelvis_acc(y: np.ndarray, dt: float) -> float | None:
    W = max(1, int(round(ACC_WINDOW / dt)))
    if len(y) <= 2 * W:
        return None
    a = (y[2 * W :] - 2.0 * y[W:-W] + y[: -2 * W]) / (W * dt) ** 2
    return percentile(np.abs(a), 99.0)


def _bone_drift(pos_r: np.ndarray, pos_s: np.ndarray, source: Motion, unit: float) -> float:
    """The largest change of a bone's world length from ``pos_s`` to ``pos_r`` (``(F, J, 3)``),
    over the leg length; bones: the links whose local translation is constant in ``source``
    (module docstring)."""
    parents = source.skeleton.parents
    fixed = np.all(np.ptp(source.positions_local, axis=0) <= 1e-9 * unit, axis=-1)  # (J,)
    bones = (parents >= 0) & fixed
    if not bones.any():
        return 0.0
    return float(np.max(bone_length_change(parents, pos_r, pos_s)[bones])) / unit


def _body(pos_r: np.ndarray, pos_s: np.ndarray, source: Motion, legs: Legs, top: np.ndarray):
    """The whole-body values (module docstring); ``top (F,)`` the highest ground under the
    foot joints, NaN where a query missed."""
    dt, scale = float(source.frame_time or 0.0), 100.0 / legs.leg_length
    pelvis = pelvis_joint(source.skeleton, legs)
    y_r, y_s = pos_r[:, pelvis, 1], pos_s[:, pelvis, 1]
    acc_r, acc_s = _pelvis_acc(y_r * scale, dt), _pelvis_acc(y_s * scale, dt)
    dev = np.linalg.norm(pos_r[:, pelvis][:, [0, 2]] - pos_s[:, pelvis][:, [0, 2]], axis=-1)
    rise = (y_r - y_s - top)[np.isfinite(top)] * scale
    return {
        "bone_drift": _bone_drift(pos_r, pos_s, source, legs.leg_length),
        "pelvis_dev": float(np.max(dev)) * scale,
        "pelvis_rise": float(rise.max()) if rise.size else None,
        "pelvis_acc": acc_r,
        "pelvis_acc_source": acc_s,
        "pelvis_acc_ratio": None if acc_r is None else acc_r / max(acc_s or 0.0, ACC_FLOOR),
    }


def foot_metrics(
    result: Motion, source: Motion, ground, legs: Legs, source_fk: Any = None
) -> dict[str, Any]:
    """Foot-placement quality of ``result`` against ``source`` (definitions: module docstring).

    Args:
        result: the edited clip, batch shape ``(F,)``.
        source: the clip it was made from: same hierarchy and frame count; its
            ``frame_time`` (seconds) is used.
        ground: ``height_at(xz (..., 2)) -> (heights, normals, mask)`` with its ``y = 0`` at
            the joints' floors, or ``None`` (flat at 0).
        legs: the legs (``leg_length`` is the unit).
        source_fk: the source's world rotations and positions (:meth:`Motion.fk`), when the
            caller has them already; the result's are always computed here.

    Returns:
        A JSON-ready dict: ``frames``, ``frame_time``, ``leg_length``, ``feet`` (sides), the
        overall values (module docstring); ``per_foot``: ``{side: {same keys}}`` (the body
        values are repeated per foot, but ``pops`` counts that leg's); ``per_joint``:
        ``{joint name: {side, floor (data units), contact_fraction, the foot-joint
        values}}``.

    Raises:
        InputError: see the module docstring.
    """
    m = _measure(result, source, ground, legs, source_fk)
    per_foot = {}
    for i, leg in enumerate(legs.legs):
        mine = [m.parts[k] for k, (side, _) in enumerate(m.joints) if side == leg.side]
        per_foot[leg.side] = {**_values(mine), **m.body, "pops": int(m.pops[i])}
    names = source.skeleton.names
    per_joint = {
        names[j]: {
            "side": side,
            "floor": float(m.floors[k]),
            "contact_fraction": float(np.mean(m.contacts[:, k])),
            **_values([m.parts[k]]),
        }
        for k, (side, j) in enumerate(m.joints)
    }
    return {**_overall(m, legs), "per_foot": per_foot, "per_joint": per_joint}


def foot_summary(
    result: Motion, source: Motion, ground, legs: Legs, source_fk: Any = None
) -> dict[str, Any]:
    """The overall values of :func:`foot_metrics` (its top level, without ``per_foot`` and
    ``per_joint``), for a batch that records one row per clip; same arguments."""
    return _overall(_measure(result, source, ground, legs, source_fk), legs)


class _Measured(NamedTuple):
    """One clip's samples: the foot ``joints`` ``[(side, joint)]`` with their ``floors``,
    ``contacts (F, n)`` and samples ``parts`` (:func:`_joint_samples`), the ``body``
    values, the knee ``pops`` per leg, and ``frames``, ``frame_time``."""

    joints: list[tuple[str, int]]
    floors: np.ndarray
    contacts: np.ndarray
    parts: list[dict]
    body: dict[str, Any]
    pops: np.ndarray
    frames: int
    frame_time: float


def _measure(result: Motion, source: Motion, ground, legs: Legs, source_fk: Any) -> _Measured:
    fk_r, fk_s = _checked(result, source, legs, source_fk)
    pos_r, pos_s = fk_r[1], fk_s[1]
    dt, unit = float(source.frame_time or 0.0), float(legs.leg_length)
    scale = 100.0 / unit
    joints = [(leg.side, j) for leg in legs.legs for j in (leg.ankle, leg.toe) if j >= 0]
    idx = [j for _, j in joints]
    feet_r, feet_s = (np.take(p, idx, axis=1) for p in (pos_r, pos_s))  # faster than [:, idx]
    contacts, floors = joint_contacts(feet_s, unit, dt)
    gh, found = _ground_heights(ground, feet_r[..., [0, 2]])
    h = (feet_r[..., 1] - gh - floors) * scale
    rec = (feet_s[..., 1] - floors) * scale
    steps_r, steps_s = (_step_speeds(p, dt) * scale for p in (feet_r, feet_s))
    both = contacts[:-1] & contacts[1:]
    parts = []
    for k in range(len(idx)):
        part = _joint_samples(h[:, k], rec[:, k], contacts[:, k], found[:, k])
        part["skate"], part["skate_source"] = steps_r[both[:, k], k], steps_s[both[:, k], k]
        parts.append(part)
    top = np.where(found.all(axis=1), gh.max(axis=1, initial=-np.inf), np.nan)
    stance = legs_down(source.skeleton, legs, *fk_s)
    body = _body(pos_r, pos_s, source, legs, top)
    body.update(fidelity_values(fk_r, fk_s, source.skeleton, legs, stance, dt))
    pops, _ = knee_pops(knee_angles(pos_r, legs), knee_angles(pos_s, legs), dt)
    return _Measured(joints, floors, contacts, parts, body, pops, int(pos_r.shape[0]), dt)


def _overall(m: _Measured, legs: Legs) -> dict[str, Any]:
    return {
        "frames": m.frames,
        "frame_time": m.frame_time,
        "leg_length": float(legs.leg_length),
        "feet": [leg.side for leg in legs.legs],
        **_values(m.parts),
        **m.body,
        "pops": int(m.pops.sum()),
    }
