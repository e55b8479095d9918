"""An evaluator independent of the foot pipeline: issue 11's metric definitions, measured
against the source clip's own floors (not the pipeline's sole model).

- a foot joint is a leg's ankle and its toe joint (when it has one);
- its floor is the 5th percentile of its height (Y) in the source;
- penetration and float are ``result height - (ground height under it + its floor)``;
  penetration over all frames, float over the joint's contact frames;
- contact: within 6 % of a leg above its floor and slower than 0.5 leg/s horizontally in
  the source (central differences), gaps then spans shorter than 50 ms dropped;
- planted shift: per joint, its floor in the result measured over the ground (the 5th
  percentile of its height over the ground) minus its floor in the source; the largest
  magnitude over the joints. A flat ground at y = 0 must leave every planted foot at its
  recorded level (the datum); a wrong datum sinks or lifts it by the whole offset. (The
  height in single contact frames is not compared: the float bar asks the pipeline to press
  a foot that hovers in its source flat onto the ground.)
- skate: the result joint's horizontal speed over transitions in contact, mean;
- bone drift: the largest change of a bone's length over the leg length, bones being the
  parent-child distances that are constant in the source (a changing one is a translation);
- pelvis (the hips' common ancestor): horizontal deviation, and vertical acceleration over
  1/30 s (p99 of its magnitude; the ratio to the source's, floored at 1 % leg/s^2).
All lengths in % of the leg length.
"""

from __future__ import annotations

import numpy as np

from ikrig.character import Legs, pelvis_joint
from ikrig.metrics import knee_angles, knee_pops
from ikrig.pose import Motion


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return list(zip(edges[::2], edges[1::2]))


def contacts(height: np.ndarray, speed: np.ndarray, leg: float, frames_50ms: int) -> np.ndarray:
    c = (height < 0.06 * leg) & (speed < 0.5 * leg)
    runs = _runs(c)
    for (_, e), (s, _) in zip(runs, runs[1:]):
        if s - e < frames_50ms:
            c[e:s] = True
    for s, e in _runs(c):
        if e - s < frames_50ms:
            c[s:e] = False
    return c


def evaluate(result: Motion, source: Motion, ground, legs: Legs) -> dict:
    """The metrics of ``result`` against ``source`` on ``ground`` (its y = 0 at each joint's
    floor; None: flat at 0)."""
    L, dt = legs.leg_length, float(source.frame_time)
    pr, ps = result.positions_world(), source.positions_world()
    n50 = max(1, int(round(0.05 / dt)))
    pen, flt, skate, skate_src, shift = [], [], [], [], []
    for leg in legs.legs:
        for j in (leg.ankle, leg.toe):
            if j < 0:
                continue
            ys = ps[:, j, 1]
            floor = np.percentile(ys, 5.0)
            speed = np.linalg.norm(np.gradient(ps[:, j][:, [0, 2]], dt, axis=0), axis=-1)
            c = contacts(ys - floor, speed, L, n50)
            if ground is None:
                gh, hit = np.zeros(len(ys)), np.ones(len(ys), bool)
            else:
                gh, _, hit = ground.height_at(pr[:, j][:, [0, 2]])
            h = pr[:, j, 1] - gh - floor
            pen.append(np.maximum(0.0, -h[hit]))
            flt.append(np.maximum(0.0, h[hit & c]))
            if hit.any():  # the joint's floor over the ground in the result, against 0
                shift.append(abs(float(np.percentile(h[hit], 5.0))))
            t = np.flatnonzero(c[:-1] & c[1:])
            for p, out in ((pr, skate), (ps, skate_src)):
                out.append(
                    np.linalg.norm(p[t + 1, j][:, [0, 2]] - p[t, j][:, [0, 2]], axis=-1) / dt
                )
    pct = lambda parts: np.concatenate(parts) * 100.0 / L  # noqa: E731
    pen_a, flt_a, sk, sk_s = pct(pen), pct(flt), pct(skate), pct(skate_src)
    pelvis = pelvis_joint(source.skeleton, legs)
    W = max(1, int(round((1.0 / 30.0) / dt)))

    def acc(y: np.ndarray) -> float:
        if len(y) <= 2 * W:
            return 0.0
        a = (y[2 * W :] - 2.0 * y[W:-W] + y[: -2 * W]) / (W * dt) ** 2
        return float(np.percentile(np.abs(a), 99.0)) * 100.0 / L

    acc_r, acc_s = acc(pr[:, pelvis, 1]), acc(ps[:, pelvis, 1])
    bones = np.flatnonzero(source.skeleton.parents >= 0)
    par = source.skeleton.parents[bones]
    len_s = np.linalg.norm(ps[:, bones] - ps[:, par], axis=-1)
    drift = np.abs(np.linalg.norm(pr[:, bones] - pr[:, par], axis=-1) - len_s)
    # a joint whose distance to its parent changes in the source is a translation (a root
    # or a pelvis with position channels carrying the travel), not a bone
    drift = drift[:, np.ptp(len_s, axis=0) <= 1e-6 * L]
    pops, _ = knee_pops(knee_angles(pr, legs), knee_angles(ps, legs), dt)
    return {
        "pen_p95": float(np.percentile(pen_a, 95.0)) if pen_a.size else 0.0,
        "pen_max": float(pen_a.max(initial=0.0)),
        "float_mean": float(flt_a.mean()) if flt_a.size else 0.0,
        "planted_shift": max(shift, default=0.0) * 100.0 / L,
        "skate": float(sk.mean()) if sk.size else 0.0,
        "skate_source": float(sk_s.mean()) if sk_s.size else 0.0,
        "pelvis_dev": float(
            np.linalg.norm(pr[:, pelvis][:, [0, 2]] - ps[:, pelvis][:, [0, 2]], axis=-1).max()
        )
        * 100.0
        / L,
        "pelvis_acc_ratio": acc_r / max(acc_s, 1.0),
        "bone_drift": float(drift.max(initial=0.0)) / L,
        "pops": int(pops.sum()),
    }
