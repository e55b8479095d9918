"""Benchmark the chain solvers on the workloads W2 (3D chain reach) and W3 (planar chain).

W2: a 3D chain of 10 links of 0.1 (length 1.0), free ball joints, root at the origin, rest
pose straight along +x; 10,000 targets uniform in the ball of radius 0.9 (fixed seed); every
solve starts from the rest pose; success = the end within 1e-3 of the target within 100
iterations (our ``tolerance=1e-3`` is relative to the chain's length, 1.0 here, so it is the
same threshold). Reported for FABRIK, CCD, follow (tail-first) and DLS: success rate, mean
iterations, time per solve for single calls (a Python loop over the public API, one target
per call) and batched (one call for all targets).

W3: the same chain as 10 hinges about z in the z = 0 plane, targets uniform in the disc of
radius 0.9: ``ccd_2d``; FABRIK and follow on the z = 0 chain (they stay in the plane), FABRIK,
CCD and DLS with a free ``Hinge`` about z on every joint.

Same-run references (this machine is noisy, so ratios taken in one run are what to compare):
a 20-line pure-Python FABRIK (Aristidou & Lasenby's Algorithm 1), the same 20 lines compiled
with Numba (single calls and one batched loop), and ikpy (if installed: ``pip install ikpy``;
a benchmark-only comparison, timed on a subset of targets). Times are medians over repeats
(interleaved across solvers), after an untimed warm-up that also compiles the kernels.

Reference figures measured elsewhere with other tools (not in this run): ikpy 15-24 ms per
solve; three.js CCDIKSolver 131 us at 81.5 % success; a 20-line pure-Python FABRIK 24 us; the
same compiled with Numba 2.3 us single, 1.75 us batched. Goals: FABRIK <= 10 us single and
<= 2.5 us batched at 100 % success; CCD <= 20 us single.

Usage::

    python benchmarks/bench_chains.py [--targets 10000] [--repeats 5] [--ikpy-targets 200]
        [--single-targets 10000] [--no-ikpy]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
import warnings
from functools import partial

import numba
import numpy as np

from ikrig._jit.setup import njit
from ikrig.constraints import Hinge
from ikrig.solvers.ccd import CCDOptions, ccd
from ikrig.solvers.ccd2d import CCD2DOptions, ccd_2d
from ikrig.solvers.dls import DLSOptions, dls
from ikrig.solvers.fabrik import FabrikOptions, fabrik
from ikrig.solvers.follow import FollowOptions, follow

N_LINKS = 10
LINK = 0.1
RADIUS = 0.9
TOL = 1e-3
MAX_ITER = 100
SEED = 20240607


# --------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------


def rest_chain(n=N_LINKS, link=LINK) -> np.ndarray:
    """``(n + 1, 3)`` straight along +x from the origin."""
    p = np.zeros((n + 1, 3))
    p[:, 0] = np.arange(n + 1) * link
    return p


def ball_targets(count: int, radius: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.normal(size=(count, 3))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v * radius * rng.uniform(0.0, 1.0, (count, 1)) ** (1 / 3)


def disc_targets(count: int, radius: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.0, 2 * np.pi, count)
    r = radius * np.sqrt(rng.uniform(0.0, 1.0, count))
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros(count)], axis=-1)


# --------------------------------------------------------------------------------------
# References: a 20-line pure-Python FABRIK, and the same lines compiled with Numba
# --------------------------------------------------------------------------------------


def fabrik_py(points, target, tol=TOL, max_iter=MAX_ITER):
    """Aristidou & Lasenby (2011), Algorithm 1, in plain Python (lists of floats)."""
    p = [list(q) for q in points]
    n = len(p) - 1
    d = [math.dist(p[i], p[i + 1]) for i in range(n)]
    root = p[0][:]
    if math.dist(root, target) >= sum(d):  # unreachable: stretch towards the target
        for i in range(n):
            lam = d[i] / math.dist(p[i], target)
            p[i + 1] = [(1 - lam) * a + lam * b for a, b in zip(p[i], target)]
        return p, 1
    it = 0
    while math.dist(p[n], target) > tol and it < max_iter:
        it += 1
        p[n] = list(target)  # backward reaching
        for i in range(n - 1, -1, -1):
            lam = d[i] / math.dist(p[i + 1], p[i])
            p[i] = [(1 - lam) * a + lam * b for a, b in zip(p[i + 1], p[i])]
        p[0] = root[:]  # forward reaching
        for i in range(n):
            lam = d[i] / math.dist(p[i + 1], p[i])
            p[i + 1] = [(1 - lam) * a + lam * b for a, b in zip(p[i], p[i + 1])]
    return p, it


@njit(cache=True)
def _dist(a, b):
    return math.sqrt((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2)


@njit(cache=True)
def fabrik_nb(points, target, tol, max_iter):
    """The same 20 lines compiled with Numba (arrays instead of lists)."""
    p = points.copy()
    n = p.shape[0] - 1
    d = np.empty(n)
    for i in range(n):
        d[i] = _dist(p[i], p[i + 1])
    root = p[0].copy()
    if _dist(root, target) >= d.sum():
        for i in range(n):
            lam = d[i] / _dist(p[i], target)
            p[i + 1] = (1 - lam) * p[i] + lam * target
        return p, 1
    it = 0
    while _dist(p[n], target) > tol and it < max_iter:
        it += 1
        p[n] = target
        for i in range(n - 1, -1, -1):
            lam = d[i] / _dist(p[i + 1], p[i])
            p[i] = (1 - lam) * p[i + 1] + lam * p[i]
        p[0] = root
        for i in range(n):
            lam = d[i] / _dist(p[i + 1], p[i])
            p[i + 1] = (1 - lam) * p[i] + lam * p[i + 1]
    return p, it


@njit(cache=True)
def fabrik_nb_batch(points, targets, tol, max_iter):
    """One compiled loop of :func:`fabrik_nb` over every target: ends and iterations."""
    ends = np.empty_like(targets)
    iters = np.empty(targets.shape[0], dtype=np.int64)
    for k in range(targets.shape[0]):
        p, it = fabrik_nb(points, targets[k], tol, max_iter)
        ends[k] = p[-1]
        iters[k] = it
    return ends, iters


# --------------------------------------------------------------------------------------
# ikpy (benchmark-only, optional)
# --------------------------------------------------------------------------------------


def ikpy_chain(planar: bool):
    """An ikpy chain of 10 links of 0.1: 3 revolute axes (x, y, z) per ball joint, or one
    (z) per hinge; ``None`` when ikpy is not installed."""
    try:
        from ikpy.chain import Chain
        from ikpy.link import OriginLink, URDFLink
    except ImportError:
        return None
    links = [OriginLink()]
    axes = [np.array([0.0, 0.0, 1.0])] if planar else list(np.eye(3))
    for i in range(N_LINKS):
        for a, axis in enumerate(axes):
            offset = np.array([LINK if (a == 0 and i > 0) else 0.0, 0.0, 0.0])
            links.append(URDFLink(f"j{i}_{a}", offset, np.zeros(3), rotation=axis))
    links.append(URDFLink("tip", np.array([LINK, 0.0, 0.0]), np.zeros(3), joint_type="fixed"))
    mask = [False] + [True] * (len(links) - 2) + [False]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Chain(links, active_links_mask=mask, jax_precompile=False)


def run_ikpy(chain, targets):
    """Success rate and ``(wall, cpu)`` time per solve of ikpy's default solver from the
    rest pose (the check of each result is outside the timing)."""
    q0 = np.zeros(len(chain.links))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sols = []
        times = clocked(lambda: sols.extend(chain.inverse_kinematics(t, initial_position=q0)
                                            for t in targets), len(targets))  # fmt: skip
        ends = np.array([chain.forward_kinematics(q)[:3, 3] for q in sols])
    return np.mean(np.linalg.norm(ends - targets, axis=-1) <= TOL), times


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


class Case:
    """One solver set-up: ``call(targets)`` (all targets in one call) and ``call(target)``
    (one target per call) of the public API."""

    def __init__(self, name, call, note=""):
        self.name = name
        self.call = call  # call(targets) -> SolveResult; works for one target too
        self.note = note
        self.batched: list[tuple[float, float]] = []  # (wall, cpu) seconds per solve
        self.single: list[tuple[float, float]] = []

    def stats(self, targets):
        """``(success rate, mean iterations, result)`` of one batched call."""
        res = self.call(targets)
        end = np.asarray(res.positions_world)[..., -1, :]
        if end.shape[-1] == 2:
            end = np.concatenate([end, np.zeros(end.shape[:-1] + (1,))], axis=-1)
        dist = np.linalg.norm(end - targets, axis=-1)
        success = (dist <= TOL * (1 + 1e-12)) & (np.asarray(res.iterations) <= MAX_ITER)
        return success.mean(), float(np.mean(res.iterations)), res


def clocked(fn, count):
    """``(wall, cpu)`` seconds per item of ``fn()`` run once over ``count`` items."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - w0) / count, (time.process_time() - c0) / count


def loop(call, targets):
    def run():
        for t in targets:
            call(t)

    return run


def median2(pairs):
    """Medians of the wall and the CPU times."""
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def us(seconds):
    return f"{seconds * 1e6:.2f}"


# --------------------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------------------


def w2_cases():
    chain = rest_chain()
    f_opts = FabrikOptions(max_iterations=MAX_ITER, tolerance=TOL)
    c_opts = CCDOptions(max_iterations=MAX_ITER, tolerance=TOL)
    d_opts = DLSOptions(max_iterations=MAX_ITER, tolerance=TOL)
    t_opts = FollowOptions(direction="tail", tolerance=TOL)
    return chain, [
        Case("FABRIK", lambda t: fabrik(chain, t, f_opts)),
        Case("CCD", lambda t: ccd(chain, t, c_opts)),
        Case("follow (tail)", lambda t: follow(chain, t, t_opts), "root moves"),
        Case("DLS", lambda t: dls(chain, t, d_opts)),
    ]


def w3_cases():
    chain = rest_chain()
    chain2 = chain[:, :2].copy()
    hinges = [Hinge((0.0, 0.0, 1.0))] * N_LINKS
    f_opts = FabrikOptions(max_iterations=MAX_ITER, tolerance=TOL)
    c_opts = CCDOptions(max_iterations=MAX_ITER, tolerance=TOL)
    d_opts = DLSOptions(max_iterations=MAX_ITER, tolerance=TOL)
    p_opts = CCD2DOptions(max_iterations=MAX_ITER, tolerance=TOL)
    t_opts = FollowOptions(direction="tail", tolerance=TOL)

    def two_d(t):
        return ccd_2d(chain2, np.asarray(t)[..., :2], p_opts)

    return chain, [
        Case("ccd_2d", two_d),
        Case("FABRIK z=0", lambda t: fabrik(chain, t, f_opts)),
        Case("FABRIK hinge z", lambda t: fabrik(chain, t, f_opts, constraints=hinges)),
        Case("follow z=0 (tail)", lambda t: follow(chain, t, t_opts), "root moves"),
        Case("CCD hinge z", lambda t: ccd(chain, t, c_opts, constraints=hinges)),
        Case("DLS hinge z", lambda t: dls(chain, t, d_opts, constraints=hinges)),
    ]


def run_workload(title, chain, cases, targets, args, planar):
    print(f"\n=== {title} ===")
    print(f"{len(targets)} targets (seed {SEED}), tolerance {TOL} (x chain length 1.0),"
          f" max {MAX_ITER} iterations, every solve from the rest pose;"
          f" single calls timed on {min(args.single_targets, len(targets))} targets")  # fmt: skip
    single_targets = targets[: args.single_targets]
    py_targets = targets[: args.python_targets]
    stats = {}
    for case in cases:  # warm-up (compiles) and statistics
        case.call(targets[:8])
        case.call(targets[0])
        stats[case.name] = case.stats(targets)
    fabrik_nb(chain, targets[0], TOL, MAX_ITER)
    fabrik_nb_batch(chain, targets[:4], TOL, MAX_ITER)
    nb_single, nb_batched, py = [], [], []
    for _ in range(args.repeats):  # interleaved repeats
        for case in cases:
            case.batched.append(clocked(partial(case.call, targets), len(targets)))
            case.single.append(clocked(loop(case.call, single_targets), len(single_targets)))
        nb_batched.append(clocked(lambda: fabrik_nb_batch(chain, targets, TOL, MAX_ITER),
                                  len(targets)))  # fmt: skip
        nb_single.append(clocked(loop(lambda t: fabrik_nb(chain, t, TOL, MAX_ITER),
                                      single_targets), len(single_targets)))  # fmt: skip
        py.append(clocked(loop(lambda t: fabrik_py(chain, t), py_targets), len(py_targets)))
    py_res = [fabrik_py(chain, t) for t in py_targets]
    py_ok = np.mean([np.linalg.norm(np.subtract(p[-1], t)) <= TOL
                     for (p, _), t in zip(py_res, py_targets)])  # fmt: skip
    py_it = np.mean([it for _, it in py_res])
    ends, nb_iters = fabrik_nb_batch(chain, targets, TOL, MAX_ITER)
    nb_ok = np.mean(np.linalg.norm(ends - targets, axis=-1) <= TOL)
    py_w, py_c = median2(py)
    nbs_w, nbs_c = median2(nb_single)
    nbb_w, nbb_c = median2(nb_batched)

    head = (f"{'solver':<20} {'success':>8} {'mean it':>8} | {'single us':>15} {'batched us':>15}"
            f" | {'single/py':>9} {'batch/py':>9} {'single/nb':>9} {'batch/nb':>9}")  # fmt: skip
    print(f"{'':<38} | {'wall / cpu':>15} {'wall / cpu':>15} | ratios of cpu times")
    print(head)
    print("-" * len(head))

    def row(name, ok, it, single, batched, note=""):
        s_w, s_c = single
        sw = f"{us(s_w)} / {us(s_c)}"
        if batched is None:
            bw, b_ratio, b_nb = "-", "-", "-"
        else:
            b_w, b_c = batched
            bw, b_ratio, b_nb = f"{us(b_w)} / {us(b_c)}", f"{b_c / py_c:.4f}", f"{b_c / nbb_c:.2f}"
        note = f"  ({note})" if note else ""
        print(f"{name:<20} {ok * 100:7.2f}% {it:>8} | {sw:>15} {bw:>15} | {s_c / py_c:9.4f}"
              f" {b_ratio:>9} {s_c / nbs_c:9.2f} {b_nb:>9}{note}")  # fmt: skip

    for case in cases:
        ok, it, _ = stats[case.name]
        row(case.name, ok, f"{it:.2f}", median2(case.single), median2(case.batched), case.note)
    row("ref: Python FABRIK", py_ok, f"{py_it:.2f}", (py_w, py_c), None,
        f"{len(py_targets)} targets")  # fmt: skip
    row("ref: Numba FABRIK", nb_ok, f"{np.mean(nb_iters):.2f}", (nbs_w, nbs_c), (nbb_w, nbb_c))
    if not args.no_ikpy:
        ch = ikpy_chain(planar)
        if ch is None:
            print("ikpy: not installed (pip install ikpy), skipped")
        else:
            sub = targets[: args.ikpy_targets]
            ok, times = run_ikpy(ch, sub)
            axes = "1 revolute axis per hinge" if planar else "3 revolute axes per ball joint"
            row("ikpy least_squares", ok, "n/a", times, None, f"{len(sub)} targets; {axes}")
    if planar:
        for case in cases:
            pw = np.asarray(stats[case.name][2].positions_world)
            if pw.shape[-1] == 3:
                z = np.abs(pw[..., 2]).max()
                print(f"  {case.name}: largest |z| of the solved chains {z:.1e}")
    for case in cases:
        if case.name.startswith("follow"):
            root = np.asarray(stats[case.name][2].positions_world)[:, 0]
            moved = np.linalg.norm(root, axis=-1)
            print(f"  {case.name}: one pass that drags the root (root displacement mean"
                  f" {moved.mean():.3f}, max {moved.max():.3f}): its success only says the"
                  " effector is on the target")  # fmt: skip
    return stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", type=int, default=10_000)
    ap.add_argument("--single-targets", type=int, default=10_000,
                    help="targets timed one call at a time (a prefix of the set)")  # fmt: skip
    ap.add_argument("--python-targets", type=int, default=2_000,
                    help="targets for the pure-Python reference (a prefix of the set)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ikpy-targets", type=int, default=200)
    ap.add_argument("--no-ikpy", action="store_true")
    args = ap.parse_args()  # fmt: skip

    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__},"
          f" {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}),"
          f" load average {load[0]:.2f} at start")  # fmt: skip
    print("times: median over repeats of the mean per solve, wall-clock and CPU time of this"
          " process (the CPU time is the steadier one on a shared machine); 'py' = the"
          " pure-Python FABRIK, 'nb' = the same compiled with Numba, both in this run")  # fmt: skip

    chain, cases = w2_cases()
    run_workload("W2: 3D chain reach (10 ball joints)", chain, cases,
                 ball_targets(args.targets, RADIUS, SEED), args, planar=False)  # fmt: skip
    chain, cases = w3_cases()
    run_workload("W3: planar chain (10 hinges about z)", chain, cases,
                 disc_targets(args.targets, RADIUS, SEED), args, planar=True)  # fmt: skip
    load = os.getloadavg() if hasattr(os, "getloadavg") else ("?",)
    print(f"\nload average {load[0]:.2f} at the end")
    print("goals: FABRIK <= 10 us single, <= 2.5 us batched at 100 % (W2); CCD <= 20 us single")
    return 0


if __name__ == "__main__":
    sys.exit(main())
