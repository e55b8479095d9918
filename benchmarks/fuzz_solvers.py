"""Fuzz the solvers with random and degenerate problems at every scale; count the outcomes.

Each case is one batch of problems for one solver (two-bone positions, CCD, planar CCD,
FABRIK, follow, DLS), in float32 or float64, at a scale from 1e-10 to 1e10, of one kind:
random chains and targets, straight chains with the target on their line (ahead, behind the
root), a target at the root or at the effector, a zero-length bone, coincident joints, a
target 1e30 away. A case is

- **ok** when every output is finite, every bone keeps its length (1e-6 relative in float64,
  1e-4 in float32, plus the rounding of the coordinates), and ``reached`` is only claimed
  within the solver's tolerance;
- **clear error** when it raises an ``ikrig`` error in one line under 300 characters;
- **other** otherwise (NaN or inf out, a bone that changed length, a false ``reached``,
  another exception), with a few examples printed.

Usage::

    python benchmarks/fuzz_solvers.py [--cases 2400] [--batch 64] [--seed 0]
    PYTHONPATH=/tmp/before/src python benchmarks/fuzz_solvers.py   # another checkout
"""

from __future__ import annotations

import argparse
import collections
import time

import numpy as np

from ikrig.errors import IkrigError
from ikrig.solvers import two_bone_positions
from ikrig.solvers.ccd import ccd
from ikrig.solvers.ccd2d import ccd_2d
from ikrig.solvers.dls import dls
from ikrig.solvers.fabrik import fabrik
from ikrig.solvers.follow import follow

KINDS = ("random", "line_ahead", "line_behind", "at_root", "at_effector", "zero_bone",
         "coincident", "far")  # fmt: skip
SCALES = (1e-10, 1e-5, 1.0, 1e5, 1e10)
SOLVERS = ("two_bone", "ccd", "ccd_2d", "fabrik", "follow", "dls")


def problem(rng: np.random.Generator, kind: str, n: int, batch: int, planar: bool):
    """Chains ``(batch, n + 1, 3)`` and targets ``(batch, 3)`` of one kind, unit scale."""
    bones = rng.normal(size=(batch, n, 3))
    if planar:
        bones[..., 2] = 0.0
    bones /= np.linalg.norm(bones, axis=-1, keepdims=True)
    bones *= rng.uniform(0.2, 1.0, size=(batch, n, 1))
    if kind in ("line_ahead", "line_behind"):
        bones[:] = bones[:, :1] * (1.0 + 1e-9 * rng.normal(size=(batch, n, 1)))
    if kind == "zero_bone":
        bones[:, rng.integers(n)] = 0.0
    if kind == "coincident":
        bones[:, : max(1, n - 1)] = 0.0
    pos = np.concatenate([np.zeros((batch, 1, 3)), np.cumsum(bones, axis=1)], axis=1)
    reach = np.linalg.norm(bones, axis=-1).sum(-1, keepdims=True)
    target = rng.normal(size=(batch, 3)) * reach
    if kind == "line_ahead":
        target = bones[:, 0] * 0.5 * n
    elif kind == "line_behind":
        target = -bones[:, 0] * rng.uniform(0.1, 2.0, size=(batch, 1))
    elif kind == "at_root":
        target = np.zeros((batch, 3))
    elif kind == "at_effector":
        target = pos[:, -1].copy()
    elif kind == "far":
        target = rng.normal(size=(batch, 3)) * 1e30
    if planar:
        target[..., 2] = 0.0
    return pos, target


def solve(name: str, pos: np.ndarray, target: np.ndarray):
    """``(positions_world (batch, m, 3), reached, error, tolerance relative to L)``."""
    if name == "two_bone":
        pole = pos[:, 1] + np.array([0.0, 0.0, 1.0], pos.dtype) * np.abs(pos).max()
        r = two_bone_positions(pos[:, 0], pos[:, 1], pos[:, 2], target, pole_world=pole)
        out = np.stack([np.broadcast_to(pos[:, 0], r.end_world.shape), r.mid_world, r.end_world], 1)
        miss = np.asarray(r.end_world, np.float64) - np.asarray(target, np.float64)
        return out, r.reached, np.linalg.norm(miss, axis=-1), 1e-5, r.stretch
    if name == "ccd_2d":
        r = ccd_2d(pos[..., :2], target[..., :2])
        out = np.concatenate([r.positions_world, np.zeros_like(r.positions_world[..., :1])], -1)
        return out, r.reached, r.error, 1e-3, None
    r = {"ccd": ccd, "fabrik": fabrik, "follow": follow, "dls": dls}[name](pos, target)
    return r.positions_world, r.reached, r.error, 1e-3, None


def judge(name: str, pos: np.ndarray, target: np.ndarray) -> str | None:
    """None when the case is fine, else what is wrong."""
    out, reached, error, tol, stretch = solve(name, pos, target)
    out, error = np.asarray(out, np.float64), np.asarray(error, np.float64)
    if not (np.isfinite(out).all() and np.isfinite(error).all()):
        return "non-finite output"
    rtol = 1e-6 if pos.dtype == np.float64 else 1e-4
    eps = np.finfo(pos.dtype).eps
    p64 = pos.astype(np.float64)
    before = np.linalg.norm(np.diff(p64, axis=1), axis=-1)
    after = np.linalg.norm(np.diff(out, axis=1), axis=-1)
    if stretch is not None:
        before = before * np.asarray(stretch, np.float64)[:, None]
    size = np.maximum(np.abs(out).max((1, 2)), np.abs(p64).max((1, 2)))[:, None]
    if not (np.abs(after - before) <= rtol * before + 16 * eps * size).all():
        worst = float(np.max(np.abs(after - before) / np.maximum(before, 1e-300)))
        return f"bone length changed (worst {worst:.3g} relative)"
    L = before.sum(-1)
    claimed = np.asarray(reached, bool)
    honest = error <= tol * L * (1 + 1e-6) + 16 * eps * size[:, 0]
    if (claimed & ~honest).any():
        return "reached claimed outside the tolerance"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=2400)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", type=int, default=8)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    counts: collections.Counter = collections.Counter()
    others: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    started = time.perf_counter()
    for case in range(args.cases):
        name = SOLVERS[case % len(SOLVERS)]
        kind = KINDS[(case // len(SOLVERS)) % len(KINDS)]
        dtype = (np.float32, np.float64)[(case // (len(SOLVERS) * len(KINDS))) % 2]
        scale = SCALES[int(rng.integers(len(SCALES)))]
        n = 2 if name == "two_bone" else int(rng.integers(2, 7))
        pos, target = problem(rng, kind, n, args.batch, planar=name == "ccd_2d")
        pos = (pos * scale).astype(dtype)  # a far target stays 1e30 away at every scale
        target = (target * (1.0 if kind == "far" else scale)).astype(dtype)
        try:
            problem_found = judge(name, pos, target)
        except IkrigError as exc:
            msg = str(exc)
            ok = "\n" not in msg and len(msg) < 300
            problem_found = None if ok else f"unclear error: {msg[:120]}"
            if ok:
                counts["clear error"] += 1
                examples.setdefault("clear error", f"{name}, {kind}: {msg[:100]}")
                continue
        except Exception as exc:  # noqa: BLE001 - counting what escapes is the point
            problem_found = f"{type(exc).__name__}: {str(exc)[:100]}"
        if problem_found is None:
            counts["ok"] += 1
            continue
        counts["other"] += 1
        key = f"{name} {problem_found.split('(')[0].strip()}"
        others[key] += 1
        examples.setdefault(key, f"{kind}, {np.dtype(dtype).name}, scale {scale:g}, n={n}")
    seconds = time.perf_counter() - started
    print(
        f"tried {args.cases}  ok {counts['ok']}  clear error {counts['clear error']}"
        f"  other {counts['other']}  ({args.cases * args.batch} problems, {seconds:.0f} s)"
    )
    if "clear error" in examples:
        print(f"  clear error, e.g. {examples['clear error']}")
    for key, count in others.most_common(args.examples):
        print(f"  {count:5d} x {key}  (e.g. {examples[key]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
