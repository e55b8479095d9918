"""Foot-placement quality metrics: one clip (``result``) against the clip it was made from.

All lengths are in **percent of the leg length** (``legs.leg_length``, thigh plus shin at
rest), so clips in centimetres, inches or metres give the same numbers; speeds are in percent
of the leg length per second; times come from ``source.frame_time`` (seconds). Every value is
computed per foot (in the order of ``legs.legs``, labelled by ``Leg.side``) and over all feet
together (the samples of every foot pooled).

Sole points and clearance
    The sole points are ``sole.points_world(*motion.fk())``, shape ``(F, feet, 2, 3)``
    (heel = ankle, toe). The ground height under each point is a vertical query
    ``ground.height_at(points[..., [0, 2]])``. The clearance of a foot in a frame is
    ``sole.sole_clearance(points, ground)``: the minimum, over the sole sampled at five
    points from heel to toe (planted heights interpolated), of ``y - planted height -
    ground height``; 0 when the foot stands on the ground (a midfoot resting on a step's
    edge counts), negative when any part of the sole penetrates. A (frame, foot) where a
    query misses is left out of every ground metric and counted in ``misses``.

``pen_mean``, ``pen_p95``, ``pen_max`` (% leg length)
    Penetration ``max(0, -clearance)``: mean over all kept frames (frames above the ground
    count as 0), 95th percentile, maximum.

``float_mean``, ``float_p95`` (% leg length)
    Float during contact ``max(0, clearance)`` over the kept frames where ``contacts`` is
    True: mean and 95th percentile. ``None`` when no such frame exists.

``skate`` (% leg length per second)
    Foot skating during contact: for every transition ``t -> t+1`` with contact in both
    frames (and both kept), the horizontal (XZ) displacement of the foot's *planted point*
    (the sole point with the lower clearance at ``t``; the heel on a tie) divided by
    ``frame_time``; the mean
    over those transitions. ``None`` when there is none.

``skate_source``, ``skate_rel``
    ``skate_source`` is the same measure on ``source`` over its own flat floor (ground
    height ``sole.floor`` everywhere) with the source's contacts (``source_contacts``,
    which defaults to ``contacts``: the contacts the pipeline detected on the source).
    ``skate_rel = skate / skate_source`` (1 for a result that skates like its source); when
    ``skate_source`` is 0 it is 1.0 if ``skate`` is 0 too, else ``None`` (undefined).

``pops`` (count)
    Knee pops: sudden changes of knee angular velocity that the result has and its source
    does not. The knee angle is the angle at the knee between thigh and shin (``pi`` for a
    straight leg). Its change of angular velocity is measured over a fixed time step
    ``h = POP_WINDOW`` (1/30 s, ``W = max(1, round(h / frame_time))`` frames):
    ``jump[t] = (a[t+W] - 2 a[t] + a[t-W]) / (W frame_time)`` (rad/s), the difference
    between the mean angular velocities of the ``W`` frames after and before frame ``t``.
    A frame is flagged when the result's ``|jump|`` exceeds the largest ``|jump|`` of the
    source within ``W`` frames by more than ``POP_THRESHOLD`` (2 rad/s); flagged frames less
    than ``2 W`` frames apart form one pop, and ``pops`` counts them.

    Why this form. Over a fixed time step the count does not depend on the frame rate: a
    smooth correction with angular acceleration ``alpha`` gives ``|jump| ~ alpha h`` at 30,
    60 or 120 fps alike, a snap (a sudden change of angular velocity by ``dv``) gives
    ``|jump| ~ dv``, and a one-frame step of the angle by ``s`` gives ``|jump| ~ s / h``.
    The source is the reference because mocap knees themselves turn sharply when the leg
    straightens (up to ~15 rad/s on the shared walks): a result that re-solves the legs
    after a smooth pelvis offset rounds those turns off, and the plain difference
    ``result - source`` would then show jumps of 4-5 rad/s although the result is smoother
    than its source. Comparing magnitudes flags only the jerkiness the result adds: 0 for
    the shared clips against themselves and for legs re-solved under a smoothly lowered
    pelvis by up to 5 % of the leg length (excess <= 0.7 rad/s), 2-10 rad/s where a pelvis
    raised by 2 % makes the knees lock straight, 6-7.5 rad/s for an injected 0.2-0.25 rad
    snap.

``bone_drift`` (plain ratio)
    ``max over frames and bones of | |bone(result)| - |bone(source)| | / leg_length``, bones
    being world parent-to-child segments. About 1e-15 when only rotations change.

``root_dev`` (% leg length)
    The maximum horizontal (XZ) distance between the root joint's world positions in
    ``result`` and ``source``.

``misses`` (count)
    Number of (frame, foot) pairs left out because a ground query missed.

Failure behaviour: structural problems (different skeletons or frame counts, a missing
``frame_time``, ``contacts`` of the wrong shape, a ground without ``height_at``) raise
:class:`~ikrig.errors.InputError`; empty samples give ``None`` values, never NaN.
"""

from __future__ import annotations

import math

import numpy as np

from .character.legs import Legs
from .character.sole import FootSole
from .errors import InputError
from .pose import Motion
from .signal.filters import jerk_excess

__all__ = [
    "POP_THRESHOLD",
    "POP_WINDOW",
    "foot_metrics",
    "knee_angles",
    "knee_pops",
    "metrics_table",
]

POP_WINDOW = 1.0 / 30.0
"""Time step (s) over which the change of knee angular velocity is measured (knee pops)."""

POP_THRESHOLD = 2.0
"""A change of knee angular velocity over ``POP_WINDOW`` exceeding the source's by more than
this (rad/s) is a pop."""

# keys of the per-foot and overall values, in table order
_KEYS = (
    "pen_mean",
    "pen_p95",
    "pen_max",
    "float_mean",
    "float_p95",
    "skate",
    "skate_source",
    "skate_rel",
    "pops",
    "bone_drift",
    "root_dev",
    "misses",
)


class _FlatFloor:
    """A horizontal plane at ``y = height``: the source's own floor."""

    def __init__(self, height: float):
        self.height = float(height)

    def height_at(self, xz):
        xz = np.asarray(xz, dtype=np.float64)
        shape = xz.shape[:-1]
        normals = np.zeros(shape + (3,))
        normals[..., 1] = 1.0
        return np.full(shape, self.height), normals, np.ones(shape, dtype=bool)


def _clip_positions(motion: Motion, name: str) -> tuple[np.ndarray, np.ndarray]:
    if len(motion.batch_shape) != 1:
        raise InputError(f"{name}: expected a clip with batch shape (F,), got {motion.batch_shape}")
    rot, pos = motion.fk()
    return rot.astype(np.float64), pos.astype(np.float64)


def _ground_query(ground, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ground heights ``(F, feet, 2)`` under the points and a ``(F, feet)`` kept mask."""
    if not callable(getattr(ground, "height_at", None)):
        raise InputError(
            f"ground: expected an object with height_at(xz), got {type(ground).__name__}"
        )
    heights, _normals, mask = ground.height_at(points[..., [0, 2]])
    heights = np.broadcast_to(np.asarray(heights, dtype=np.float64), points.shape[:-1])
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), points.shape[:-1])
    mask = mask & np.isfinite(heights)
    heights = np.where(mask, heights, 0.0)
    return heights, mask.all(axis=-1)


def _point_clearance(sole: FootSole, points: np.ndarray, heights: np.ndarray) -> np.ndarray:
    """Per-point clearance ``(F, feet, 2)``: ``y - planted height - ground``."""
    return points[..., 1] - sole.heights - heights


def _skate_samples(points, point_clear, contacts, kept, frame_time) -> list[np.ndarray]:
    """Per foot, the planted point's horizontal speed over each contact transition."""
    F, feet = contacts.shape
    out = []
    for k in range(feet):
        ok = contacts[:-1, k] & contacts[1:, k] & kept[:-1, k] & kept[1:, k]
        t = np.flatnonzero(ok)
        which = np.argmin(point_clear[t, k], axis=-1)  # the lower point at t
        p0 = points[t, k, which][:, [0, 2]]
        p1 = points[t + 1, k, which][:, [0, 2]]
        out.append(np.linalg.norm(p1 - p0, axis=-1) / frame_time)
    return out


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


def _foot_values(pen, flt, sk, sk_src, pops, misses, drift, root_dev) -> dict:
    skate = _stat(sk, "mean")
    skate_source = _stat(sk_src, "mean")
    return {
        "pen_mean": _stat(pen, "mean"),
        "pen_p95": _stat(pen, "p95"),
        "pen_max": _stat(pen, "max"),
        "float_mean": _stat(flt, "mean"),
        "float_p95": _stat(flt, "p95"),
        "skate": skate,
        "skate_source": skate_source,
        "skate_rel": _rel(skate, skate_source),
        "pops": int(pops),
        "bone_drift": float(drift),
        "root_dev": float(root_dev),
        "misses": int(misses),
    }


def foot_metrics(
    result: Motion,
    source: Motion,
    ground,
    legs: Legs,
    sole: FootSole,
    contacts,
    source_contacts=None,
) -> dict:
    """Foot-placement quality of ``result`` against ``source`` (definitions: module docstring).

    Args:
        result: the edited clip, batch shape ``(F,)``.
        source: the clip it was made from: same skeleton hierarchy and frame count; its
            ``frame_time`` (seconds) is used.
        ground: an object with ``height_at(xz (..., 2)) -> (heights, normals, mask)``
            (vertical queries, world space, the clip's units); ``None`` means the source's
            flat floor (height ``sole.floor``).
        legs: the legs (``leg_length`` is the unit).
        sole: the feet's sole points and planted heights (measured on the source), one foot
            per leg in ``legs.legs`` order.
        contacts: ``(F, feet)`` bool, the frames in which each foot should be on the ground.
        source_contacts: ``(F, feet)`` bool contacts of the source for ``skate_source``;
            default ``contacts``.

    Returns:
        A JSON-ready dict (Python floats, ints, lists, ``None``): ``frames``, ``frame_time``
        (s), ``leg_length`` (clip units), ``feet`` (side names), the overall values under the
        keys listed in the module docstring, and ``per_foot``: ``{side: {same keys}}``.
        ``bone_drift`` and ``root_dev`` concern the whole body and are repeated per foot.

    Raises:
        InputError: clips that are not ``(F,)`` or differ in frame count or hierarchy, no
            ``frame_time``, contacts of the wrong shape, a ground without ``height_at``, or
            legs and sole that disagree.
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
    feet = len(legs.legs)
    if sole.joints.shape != (feet, 2):
        raise InputError(f"sole: has {len(sole.joints)} feet for {feet} legs")
    dt = float(source.frame_time)
    unit = float(legs.leg_length)
    rot_r, pos_r = _clip_positions(result, "result")
    rot_s, pos_s = _clip_positions(source, "source")
    F = pos_r.shape[0]
    c = np.asarray(contacts)
    if c.shape != (F, feet):
        raise InputError(f"contacts: expected shape ({F}, {feet}), got {c.shape}")
    c = c.astype(bool)
    cs = c if source_contacts is None else np.asarray(source_contacts)
    if cs.shape != (F, feet):
        raise InputError(f"source_contacts: expected shape ({F}, {feet}), got {cs.shape}")
    cs = cs.astype(bool)
    if ground is None:
        ground = _FlatFloor(sole.floor)

    # ground metrics of the result
    pts = sole.points_world(rot_r, pos_r)
    heights, kept = _ground_query(ground, pts)
    point_clear = _point_clearance(sole, pts, heights)
    clear, sole_kept = sole.sole_clearance(pts, ground)
    kept &= sole_kept
    clear = clear * (100.0 / unit)
    pen = np.maximum(0.0, -clear)
    flt = np.maximum(0.0, clear)
    skate = _skate_samples(pts, point_clear, c, kept, dt)

    # the source over its own flat floor
    pts_s = sole.points_world(rot_s, pos_s)
    point_clear_s = _point_clearance(sole, pts_s, np.full(pts_s.shape[:-1], sole.floor))
    skate_s = _skate_samples(pts_s, point_clear_s, cs, np.ones((F, feet), bool), dt)
    skate = [s * (100.0 / unit) for s in skate]
    skate_s = [s * (100.0 / unit) for s in skate_s]

    pops, _ = knee_pops(knee_angles(pos_r, legs), knee_angles(pos_s, legs), dt)

    parents = result.skeleton.parents
    child = np.flatnonzero(parents >= 0)
    if len(child):
        len_r = np.linalg.norm(pos_r[:, child] - pos_r[:, parents[child]], axis=-1)
        len_s = np.linalg.norm(pos_s[:, child] - pos_s[:, parents[child]], axis=-1)
        drift = float(np.max(np.abs(len_r - len_s), initial=0.0)) / unit
    else:
        drift = 0.0
    root = int(np.flatnonzero(parents < 0)[0])
    root_dev = np.linalg.norm(pos_r[:, root, [0, 2]] - pos_s[:, root, [0, 2]], axis=-1)
    root_dev = float(np.max(root_dev, initial=0.0)) * 100.0 / unit

    per_foot = {}
    for k, leg in enumerate(legs.legs):
        kk = kept[:, k]
        per_foot[leg.side] = _foot_values(
            pen[kk, k],
            flt[kk & c[:, k], k],
            skate[k],
            skate_s[k],
            pops[k],
            np.count_nonzero(~kk),
            drift,
            root_dev,
        )
    overall = _foot_values(
        pen[kept],
        flt[kept & c],
        np.concatenate(skate) if skate else np.zeros(0),
        np.concatenate(skate_s) if skate_s else np.zeros(0),
        int(pops.sum()),
        int(np.count_nonzero(~kept)),
        drift,
        root_dev,
    )
    return {
        "frames": int(F),
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
    ("skate", "skate", 8, "{:8.2f}"),
    ("skate_rel", "skt rel", 7, "{:7.3f}"),
    ("pops", "pops", 5, "{:5d}"),
    ("bone_drift", "bone drift", 10, "{:10.1e}"),
    ("root_dev", "root dev", 8, "{:8.3f}"),
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
        "(lengths in % of leg length, skate in % of leg length per second, bone drift a ratio)",
        "-" * len(header),
    ]
    for label, m in rows:
        cells = [_cell(m.get(key), w, fmt) for key, _, w, fmt in _COLUMNS]
        lines.append(str(label).ljust(label_w) + "".join(" " + c for c in cells))
    return "\n".join(lines)
