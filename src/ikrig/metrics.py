"""Foot-placement quality: one clip (``result``) against the clip it was made from
(``source``), measured the way an outsider would, against the source's own floors, never
with the pipeline's sole model (issue 11; ``../shared/reference/foot_metrics.md`` has the
definitions used in the literature).

All lengths are in **percent of the leg length** (``legs.leg_length``), speeds in percent of
the leg length per second, accelerations in percent of the leg length per second squared;
times come from ``source.frame_time``. Values are given over all foot joints pooled and
``per_foot`` (per leg side, its ankle and toe pooled).

Foot joints and floors
    A leg's foot joints are its ankle and, when it has one, its toe joint. The *floor* of a
    foot joint is the 5th percentile (:data:`FLOOR_PERCENTILE`) of its world height (Y) over
    the **source**.

Ground
    ``ground.height_at(xz)`` under each joint of the result, as given: its ``y = 0`` meets
    the joints' floors (foot placement's default datum, "clip"). ``None`` is a flat ground at
    0. A (frame, joint) where the query misses is left out of every ground value and counted
    in ``misses``.

Height over the ground
    ``h = result height - (ground height + the joint's floor)``: 0 for a joint standing where
    the source's stood on its floor.

Contacts (from the source alone)
    A joint is in contact in a frame when it is within :data:`CONTACT_HEIGHT` (6 %) of a leg
    above its floor and its horizontal (XZ) speed is below :data:`CONTACT_SPEED` (0.5 leg/s)
    in the source, the speed by central differences (one-sided at the ends). Then gaps
    shorter than :data:`CONTACT_MIN_SPAN` (50 ms) are filled, and after that spans shorter
    than 50 ms dropped.

``pen_mean``, ``pen_p95``, ``pen_max``
    Penetration ``max(0, -h)`` over all kept frames (frames above the ground count as 0).

``float_mean``, ``float_p95``
    Float ``max(0, h)`` over the kept contact frames. ``None`` without any.

``skate``, ``skate_source``, ``skate_rel``
    The joint's horizontal speed over each transition ``t -> t+1`` with contact in both
    frames (and both kept), in the result, its mean; the same in the source;
    ``skate_rel = skate / skate_source`` (1.0 when both are 0, ``None`` when only the
    source's is).

``planted_shift``
    Per joint, ``|5th percentile of h over the kept frames|``: how far the level the joint
    rests on in the result is from its recorded floor; the largest over the joints. A flat
    ground at ``y = 0`` must leave it near 0; a wrong datum moves it by the whole offset.

``pops``
    Knee pops: sudden changes of knee angular velocity the result has and its source does
    not, see :func:`knee_pops`. The knee angle is the angle at the knee between thigh and
    shin (``pi`` straight), its change of angular velocity measured over ``POP_WINDOW``
    (1/30 s), a frame flagged when it exceeds the source's nearby largest by more than
    ``POP_THRESHOLD`` (2 rad/s), flagged frames closer than two windows being one pop.

``bone_drift`` (plain ratio)
    The largest change of a bone's length over the leg length, bones being the parent-child
    distances that are constant in the source (a distance that changes in the source, such
    as a pelvis translated under a static root, is a translation, not a bone).

``pelvis_dev``
    The largest horizontal distance between the result's and the source's pelvis (the hips'
    common ancestor, :func:`~ikrig.character.legs.pelvis_joint`; not necessarily joint 0).

``pelvis_rise``
    The largest rise of the pelvis over its height in the source beyond the highest ground
    under the foot joints in that frame (frames where the ground is found under every foot
    joint): how far the body rises more than the ground under the feet asks. ``None``
    without such a frame.

``pelvis_acc``, ``pelvis_acc_source``, ``pelvis_acc_ratio``
    The pelvis's vertical acceleration over a fixed step ``h = 1/30 s`` (``W =
    max(1, round(h / dt))`` frames): ``(y[t+W] - 2 y[t] + y[t-W]) / (W dt)^2``, the 99th
    percentile of its magnitude, in the result and in the source; their ratio, the source's
    floored at :data:`ACC_FLOOR` so that a clip standing still does not divide by ~0.

``misses``
    (frame, joint) pairs left out because the ground query missed.

Structural problems (clips that are not ``(F,)`` or differ in frame count or hierarchy, a
missing ``frame_time``, a ground without ``height_at``) raise
:class:`~ikrig.errors.InputError`; empty samples give ``None``, never NaN.
"""

from __future__ import annotations

import math

import numpy as np

from .character.legs import Legs, pelvis_joint
from .errors import InputError
from .pose import Motion
from .signal.filters import jerk_excess

__all__ = [
    "CONTACT_HEIGHT",
    "CONTACT_MIN_SPAN",
    "CONTACT_SPEED",
    "FLOOR_PERCENTILE",
    "POP_THRESHOLD",
    "POP_WINDOW",
    "foot_metrics",
    "joint_contacts",
    "knee_angles",
    "knee_pops",
    "metrics_table",
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
ACC_WINDOW = 1.0 / 30.0
"""Seconds: the step of the pelvis's vertical acceleration."""
ACC_FLOOR = 1.0
"""% leg/s^2: the least source acceleration ``pelvis_acc_ratio`` divides by."""

_KEYS = (
    "pen_mean",
    "pen_p95",
    "pen_max",
    "float_mean",
    "float_p95",
    "skate",
    "skate_source",
    "skate_rel",
    "planted_shift",
    "pops",
    "bone_drift",
    "pelvis_dev",
    "pelvis_rise",
    "pelvis_acc",
    "pelvis_acc_source",
    "pelvis_acc_ratio",
    "misses",
)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def joint_contacts(positions_world: np.ndarray, leg_length: float, frame_time: float):
    """Contacts of foot joints by the rule above, from the source's positions
    ``(F, n, 3)``: ``(contacts (F, n) bool, floors (n,))``."""
    p = np.asarray(positions_world, dtype=np.float64)
    floors = np.percentile(p[..., 1], FLOOR_PERCENTILE, axis=0) if len(p) else np.zeros(0)
    if len(p) >= 2:
        speed = np.linalg.norm(np.gradient(p[..., [0, 2]], frame_time, axis=0), axis=-1)
    else:
        speed = np.zeros(p.shape[:-1])
    low = (p[..., 1] - floors < CONTACT_HEIGHT * leg_length) & (speed < CONTACT_SPEED * leg_length)
    n = max(1, int(round(CONTACT_MIN_SPAN / frame_time)))
    for k in range(low.shape[1] if low.ndim == 2 else 0):
        c = low[:, k]
        runs = _runs(c)
        for (_, e), (s, _) in zip(runs, runs[1:]):
            if s - e < n:
                c[e:s] = True
        for s, e in _runs(c):
            if e - s < n:
                c[s:e] = False
    return low, floors


def knee_angles(positions_world: np.ndarray, legs: Legs) -> np.ndarray:
    """Knee angle ``(F, legs)`` in radians (``pi`` = straight) from joint positions ``(F, J, 3)``.

    The angle at the knee between the knee->hip and knee->ankle segments; a zero-length
    segment gives 0.
    """
    out = []
    for leg in legs.legs:
        a = positions_world[:, leg.hip] - positions_world[:, leg.knee]
        b = positions_world[:, leg.ankle] - positions_world[:, leg.knee]
        c = np.linalg.norm(np.cross(a, b), axis=-1)
        out.append(np.arctan2(c, np.sum(a * b, axis=-1)))
    return np.stack(out, axis=-1) if out else np.zeros((len(positions_world), 0))


def knee_pops(
    angles_result, angles_source, frame_time: float, threshold: float = POP_THRESHOLD,
    window: float = POP_WINDOW,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Count knee pops of a result against its source (see the module docstring).

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


def _stat(values: np.ndarray, kind: str):
    if values.size == 0:
        return None
    if kind == "mean":
        return float(np.mean(values))
    if kind == "p95":
        return float(np.percentile(values, 95.0))
    return float(np.max(values))


def _rel(skate, skate_source):
    if skate is None or skate_source is None:
        return None
    if skate_source > 0.0:
        return float(skate / skate_source)
    return 1.0 if skate == 0.0 else None


def _clip_positions(motion: Motion, name: str) -> np.ndarray:
    if len(motion.batch_shape) != 1:
        raise InputError(f"{name}: expected a clip with batch shape (F,), got {motion.batch_shape}")
    return motion.positions_world().astype(np.float64)


def _ground_heights(ground, xz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Heights ``(...)`` under ``xz (..., 2)`` and a kept mask."""
    if ground is None:
        return np.zeros(xz.shape[:-1]), np.ones(xz.shape[:-1], dtype=bool)
    if not callable(getattr(ground, "height_at", None)):
        raise InputError(
            f"ground: expected an object with height_at(xz), got {type(ground).__name__}"
        )
    h, _, mask = ground.height_at(xz)
    h = np.broadcast_to(np.asarray(h, dtype=np.float64), xz.shape[:-1])
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), xz.shape[:-1]) & np.isfinite(h)
    return np.where(mask, h, 0.0), mask


def _speeds(p: np.ndarray, ok: np.ndarray, dt: float) -> np.ndarray:
    """Horizontal speeds of ``p (F, 3)`` over the transitions where ``ok (F-1,)``."""
    t = np.flatnonzero(ok)
    return np.linalg.norm(p[t + 1][:, [0, 2]] - p[t][:, [0, 2]], axis=-1) / dt


def _pelvis_acc(y: np.ndarray, dt: float) -> float:
    W = max(1, int(round(ACC_WINDOW / dt)))
    if len(y) <= 2 * W:
        return 0.0
    a = (y[2 * W :] - 2.0 * y[W:-W] + y[: -2 * W]) / (W * dt) ** 2
    return float(np.percentile(np.abs(a), 99.0))


def _bone_drift(pos_r: np.ndarray, pos_s: np.ndarray, parents: np.ndarray, unit: float) -> float:
    child = np.flatnonzero(parents >= 0)
    if not len(child):
        return 0.0
    len_s = np.linalg.norm(pos_s[:, child] - pos_s[:, parents[child]], axis=-1)
    len_r = np.linalg.norm(pos_r[:, child] - pos_r[:, parents[child]], axis=-1)
    bones = np.ptp(len_s, axis=0) <= 1e-9 * unit if len(len_s) else np.zeros(0, bool)
    return float(np.max(np.abs(len_r - len_s)[:, bones], initial=0.0)) / unit


def _values(parts: dict, cols: list[int], body: dict) -> dict:
    """The values of the joints ``cols`` (indices into the per-joint samples) plus the
    whole-body ones."""

    def cat(key: str) -> np.ndarray:
        return np.concatenate([parts[key][k] for k in cols]) if cols else np.zeros(0)

    skate, skate_source = _stat(cat("skate"), "mean"), _stat(cat("skate_source"), "mean")
    pen = cat("pen")
    return {
        "pen_mean": _stat(pen, "mean"),
        "pen_p95": _stat(pen, "p95"),
        "pen_max": _stat(pen, "max"),
        "float_mean": _stat(cat("float"), "mean"),
        "float_p95": _stat(cat("float"), "p95"),
        "skate": skate,
        "skate_source": skate_source,
        "skate_rel": _rel(skate, skate_source),
        "planted_shift": max(
            (parts["shift"][k] for k in cols if parts["shift"][k] is not None), default=None
        ),
        "misses": int(sum(parts["misses"][k] for k in cols)),
        **body,
    }


def foot_metrics(result: Motion, source: Motion, ground, legs: Legs) -> dict:
    """Foot-placement quality of ``result`` against ``source`` (definitions: module docstring).

    Args:
        result: the edited clip, batch shape ``(F,)``.
        source: the clip it was made from: same hierarchy and frame count; its
            ``frame_time`` (seconds) is used.
        ground: ``height_at(xz (..., 2)) -> (heights, normals, mask)`` with its ``y = 0`` at
            the joints' floors, or ``None`` (flat at 0).
        legs: the legs (``leg_length`` is the unit).

    Returns:
        A JSON-ready dict: ``frames``, ``frame_time``, ``leg_length``, ``feet`` (sides), the
        overall values (module docstring), and ``per_foot``: ``{side: {same keys}}`` (the
        pelvis, bone and pop values concern the whole body and are repeated per foot, but
        ``pops`` counts that leg's).

    Raises:
        InputError: see the module docstring.
    """
    if not isinstance(result, Motion) or not isinstance(source, Motion):
        raise InputError("result and source: expected ikrig Motion clips")
    if source.frame_time is None:
        raise InputError("source: needs a frame_time (seconds per frame) for speeds")
    if result.batch_shape != source.batch_shape:
        raise InputError(
            f"result {result.batch_shape} and source {source.batch_shape}: frame counts differ"
        )
    if not np.array_equal(result.skeleton.parents, source.skeleton.parents):
        raise InputError("result and source: skeleton hierarchies (parents) differ")
    dt, unit = float(source.frame_time), float(legs.leg_length)
    pos_r, pos_s = _clip_positions(result, "result"), _clip_positions(source, "source")
    scale = 100.0 / unit
    joints = [(leg.side, j) for leg in legs.legs for j in (leg.ankle, leg.toe) if j >= 0]
    idx = [j for _, j in joints]
    contacts, floors = joint_contacts(pos_s[:, idx], unit, dt)
    gh, kept = _ground_heights(ground, pos_r[:, idx][..., [0, 2]])
    h = (pos_r[:, idx, 1] - gh - floors) * scale
    names = ("pen", "float", "skate", "skate_source", "shift", "misses")
    parts: dict[str, list] = {name: [] for name in names}
    for k, j in enumerate(idx):
        c, ok = contacts[:, k], kept[:, k]
        parts["pen"].append(np.maximum(0.0, -h[ok, k]))
        parts["float"].append(np.maximum(0.0, h[ok & c, k]))
        both = c[:-1] & c[1:]
        parts["skate"].append(_speeds(pos_r[:, j], both & ok[:-1] & ok[1:], dt) * scale)
        parts["skate_source"].append(_speeds(pos_s[:, j], both, dt) * scale)
        rest = abs(float(np.percentile(h[ok, k], FLOOR_PERCENTILE))) if ok.any() else None
        parts["shift"].append(rest)
        parts["misses"].append(int(np.count_nonzero(~ok)))
    pops, _ = knee_pops(knee_angles(pos_r, legs), knee_angles(pos_s, legs), dt)
    pelvis = pelvis_joint(source.skeleton, legs)
    acc_r = _pelvis_acc(pos_r[:, pelvis, 1], dt) * scale
    acc_s = _pelvis_acc(pos_s[:, pelvis, 1], dt) * scale
    dev = np.linalg.norm(pos_r[:, pelvis][:, [0, 2]] - pos_s[:, pelvis][:, [0, 2]], axis=-1)
    all_kept = kept.all(axis=1)
    rise = (pos_r[:, pelvis, 1] - pos_s[:, pelvis, 1] - gh.max(axis=1, initial=0.0))[all_kept]
    body = {
        "bone_drift": _bone_drift(pos_r, pos_s, source.skeleton.parents, unit),
        "pelvis_dev": float(np.max(dev, initial=0.0)) * scale,
        "pelvis_rise": float(rise.max()) * scale if rise.size else None,
        "pelvis_acc": acc_r,
        "pelvis_acc_source": acc_s,
        "pelvis_acc_ratio": acc_r / max(acc_s, ACC_FLOOR),
    }
    per_foot = {}
    for i, leg in enumerate(legs.legs):
        cols = [k for k, (side, _) in enumerate(joints) if side == leg.side]
        per_foot[leg.side] = _values(parts, cols, {**body, "pops": int(pops[i])})
    overall = _values(parts, list(range(len(idx))), {**body, "pops": int(pops.sum())})
    return {
        "frames": int(pos_r.shape[0]),
        "frame_time": dt,
        "leg_length": unit,
        "feet": [leg.side for leg in legs.legs],
        **overall,
        "per_foot": per_foot,
    }


_COLUMNS = (  # (key, header, width, format)
    ("pen_mean", "pen mean", 8, "{:8.3f}"),
    ("pen_p95", "pen p95", 8, "{:8.3f}"),
    ("pen_max", "pen max", 8, "{:8.3f}"),
    ("float_mean", "flt mean", 8, "{:8.3f}"),
    ("float_p95", "flt p95", 8, "{:8.3f}"),
    ("planted_shift", "shift", 6, "{:6.3f}"),
    ("skate_rel", "skt rel", 7, "{:7.3f}"),
    ("pops", "pops", 5, "{:5d}"),
    ("bone_drift", "bone drift", 10, "{:10.1e}"),
    ("pelvis_dev", "pelv dev", 8, "{:8.3f}"),
    ("pelvis_acc_ratio", "acc x", 6, "{:6.2f}"),
    ("misses", "misses", 6, "{:6d}"),
)


def _cell(value, width: int, fmt: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-".rjust(width)
    return fmt.format(value)


def metrics_table(rows) -> str:
    """A fixed-width text table of several metric dicts, one row each.

    Args:
        rows: ``[(label, metrics), ...]`` with ``metrics`` from :func:`foot_metrics` (or its
            ``per_foot`` entries). Missing or ``None`` values print as ``-``.

    Returns:
        The table (header, unit line, rule, one line per row), lines joined by ``\\n``.
        Lengths are in % of leg length, skate in % of leg length per second, bone drift a
        plain ratio.
    """
    rows = list(rows)
    label_w = max([5] + [len(str(label)) for label, _ in rows])
    header = "label".ljust(label_w) + "".join(" " + h.rjust(w) for _, h, w, _ in _COLUMNS)
    lines = [
        header,
        "(% of leg length against each foot joint's floor in the source; shift: the level a"
        " joint rests on; acc x: pelvis vertical acceleration p99 over the source's)",
        "-" * len(header),
    ]
    for label, m in rows:
        cells = [_cell(m.get(key), w, fmt) for key, _, w, fmt in _COLUMNS]
        lines.append(str(label).ljust(label_w) + "".join(" " + c for c in cells))
    return "\n".join(lines)
