"""Check CCD's "unstick" turn against plain CCD (issue 9): it must never make a solve worse.

Plain CCD leaves a joint alone when its effector and the target lie on one line through it.
ikrig turns such joints (the kick) only when the whole chain lies on the target line at a
saddle of the error, and returns the best pose it saw. This script compares ``ccd_2d`` with a
plain planar CCD written here in pure Python (the same sweep, clamping and stopping rules,
no kick), on:

1. the single-bone case ``ccd_2d([[0, 0], [1, 0]], [0.3, 0.4])``: plain CCD points the bone
   at the target (53.13 degrees, error 0.5) and that is the best possible;
2. 300 random limited planar chains (2 to 6 bones, asymmetric limits, start poses bent or
   straight, targets anywhere in 1.2 chain lengths, a third of them near the root or on the
   chain's line), at the default tolerance and at tolerance 0: how often ``ccd_2d`` ends
   worse than plain CCD without being within the tolerance, and by how much at most (in
   chain lengths, over every chain);
3. 3D ``ccd`` on nearly straight chains with the target behind the root on their line: the
   largest relative change of a bone length and the false ``reached`` flags.

Usage::

    python benchmarks/ccd_unstick_check.py [--chains 300] [--seed 9]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ikrig.solvers.ccd import ccd
from ikrig.solvers.ccd2d import CCD2DOptions, ccd_2d


def _wrap(t: float) -> float:
    t = (t + math.pi) % (2 * math.pi) - math.pi
    return math.pi if t <= -math.pi else t


def _circ(a: float, b: float) -> float:
    d = abs(a - b) % (2 * math.pi)
    return min(d, 2 * math.pi - d)


def _nearest(lo: float, hi: float, t: float) -> float:
    for s in (t, t + 2 * math.pi, t - 2 * math.pi):
        if lo <= s <= hi:
            return s
    return lo if _circ(lo, t) <= _circ(hi, t) else hi


def plain_ccd_2d(pos, target, limits_rad, tol=1e-3, max_iter=100) -> float:
    """Plain planar CCD (no kick) on joint angles; returns the final error."""
    pos = np.asarray(pos, dtype=float)
    n = len(pos) - 1
    free = [lo <= -math.pi and hi >= math.pi for lo, hi in limits_rad]
    lens = [math.hypot(*(pos[i + 1] - pos[i])) for i in range(n)]
    phi = [math.atan2(*(pos[i + 1] - pos[i])[::-1]) for i in range(n)]
    theta = [_nearest(*limits_rad[0], 0.0)]
    theta += [_nearest(*limits_rad[i], _wrap(phi[i] - phi[i - 1])) for i in range(1, n)]
    tx, ty = target
    L = sum(lens)
    it = 0
    moved = True
    while True:
        a = phi[0]
        xs, ys = [pos[0, 0]], [pos[0, 1]]
        for i in range(n):
            a += theta[i]
            xs.append(xs[-1] + lens[i] * math.cos(a))
            ys.append(ys[-1] + lens[i] * math.sin(a))
        e = math.hypot(tx - xs[-1], ty - ys[-1])
        if e <= tol * L or it >= max_iter or not moved:
            return e
        it += 1
        moved = False
        ex, ey = xs[-1], ys[-1]
        for i in range(n - 1, -1, -1):
            ax, ay, bx, by = ex - xs[i], ey - ys[i], tx - xs[i], ty - ys[i]
            if min(ax * ax + ay * ay, bx * bx + by * by) <= (1e-12 * L) ** 2:
                continue
            delta = math.atan2(ax * by - ay * bx, ax * bx + ay * by)
            old = theta[i]
            lo, hi = limits_rad[i]
            new = _wrap(old + delta) if free[i] else min(max(old + delta, lo), hi)
            if new == old:
                continue
            d = new - old
            ex, ey = (xs[i] + math.cos(d) * ax - math.sin(d) * ay,
                      ys[i] + math.sin(d) * ax + math.cos(d) * ay)  # fmt: skip
            theta[i] = new
            moved = True


def random_problem(rng):
    n = int(rng.integers(2, 7))
    lens = rng.uniform(0.2, 1.5, n)
    L = lens.sum()
    straight = rng.uniform() < 0.3
    ang = np.zeros(n) if straight else rng.uniform(-1.0, 1.0, n)
    phi = rng.uniform(-np.pi, np.pi) + np.cumsum(ang)
    pos = np.concatenate(
        [[[0.0, 0.0]], np.cumsum(lens[:, None] * np.c_[np.cos(phi), np.sin(phi)], 0)]
    )
    lo = rng.uniform(-170.0, 0.0, n)
    hi = np.minimum(lo + rng.uniform(10.0, 250.0, n), 180.0)
    free = rng.uniform(size=n) < 0.25
    lo[free], hi[free] = -180.0, 180.0
    kind = rng.uniform()
    if kind < 0.15:  # near the root
        target = rng.normal(size=2) * 0.05 * L
    elif kind < 0.3:  # on the chain's line (ahead or behind)
        d = pos[-1] / np.linalg.norm(pos[-1])
        target = d * rng.uniform(-1.0, 1.0) * L
    else:
        r = 1.2 * L * math.sqrt(rng.uniform())
        a = rng.uniform(-np.pi, np.pi)
        target = np.array([r * math.cos(a), r * math.sin(a)])
    return pos, target, np.c_[lo, hi], L


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chains", type=int, default=300)
    ap.add_argument("--seed", type=int, default=9)
    args = ap.parse_args()

    res = ccd_2d([[0.0, 0.0], [1.0, 0.0]], [0.3, 0.4])
    plain = plain_ccd_2d([[0.0, 0.0], [1.0, 0.0]], [0.3, 0.4], [(-math.pi, math.pi)])
    print("1. ccd_2d([[0, 0], [1, 0]], [0.3, 0.4]):")
    print(f"   ccd_2d angle {float(res.angles_deg[0]):.2f} deg, error {float(res.error):.4f}, "
          f"{int(res.iterations)} sweeps; plain CCD error {plain:.4f} (53.13 deg)")  # fmt: skip

    for tol in (1e-3, 0.0):
        rng = np.random.default_rng(args.seed)
        worse, better, worst = 0, 0, 0.0
        ours, theirs = [], []
        for _ in range(args.chains):
            pos, target, lim, L = random_problem(rng)
            r = ccd_2d(pos, target, CCD2DOptions(tolerance=tol), limits_deg=lim)
            p = plain_ccd_2d(pos, target, np.radians(lim).tolist(), tol=tol)
            diff = (float(r.error) - p) / L
            ours.append(float(r.error) / L)
            theirs.append(p / L)
            if not r.reached:  # within the tolerance both stop, wherever they are
                worse += diff > 1e-9
                worst = max(worst, diff)
            better += diff < -1e-9
        print(f"2. {args.chains} random limited planar chains, tolerance {tol:g}: ccd_2d ended "
              f"worse than plain CCD (not within the tolerance) in {worse} (by up to "
              f"{worst:.3g} L), better in {better}; mean error {np.mean(ours):.4f} L vs plain "
              f"{np.mean(theirs):.4f} L")  # fmt: skip

    rng = np.random.default_rng(args.seed)
    worst_len, false_reached = 0.0, 0
    for _ in range(args.chains):
        n = int(rng.integers(2, 7))
        p = np.zeros((n + 1, 3))
        p[:, 0] = np.arange(n + 1)
        p[1:, 1:] += rng.normal(size=(n, 2)) * 10 ** rng.uniform(-9, -5)
        t = np.array([-rng.uniform(0.01, 0.9 * n), 0.0, 0.0])
        r = ccd(p, t)
        before = np.linalg.norm(np.diff(p, axis=0), axis=1)
        after = np.linalg.norm(np.diff(r.positions_world, axis=0), axis=1)
        worst_len = max(worst_len, float(np.abs(after / before - 1).max()))
        false_reached += bool(r.reached) and bool(np.abs(after / before - 1).max() > 1e-6)
    print(f"3. 3D ccd, {args.chains} nearly straight chains, target behind the root on their "
          f"line: largest bone length change {worst_len:.3g} (relative), "
          f"'reached' with a bone changed by more than 1e-6: {false_reached}")  # fmt: skip


if __name__ == "__main__":
    main()
