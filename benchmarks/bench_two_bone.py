"""Benchmark W1: analytic two-bone IK on a leg, one core.

Leg with thigh 0.45 and shin 0.42; N = 100,000 random problems (fixed seed): roots uniform
in [-1, 1]^3, targets at root + a uniform point of the ball of radius 1.0 (about a third out
of reach), poles at root + 0.5 x a random unit vector; mid and end from a random bent pose
of the leg at the root. float32 ``(N, 3)`` inputs; the outputs are knee and ankle positions.

Measured in one run, warm, median over repeats:

* ``aos``: the public :func:`ikrig.solvers.two_bone.two_bone_positions` (also returns the
  rotation deltas);
* ``soa``: the public :func:`ikrig.solvers.two_bone.two_bone_positions_soa` on ``(3, N)``
  copies of the same data;
* ``numpy``: a plain vectorised NumPy implementation written here (positions only, no
  fallbacks), the baseline.

Reports solves/s at N = 100,000, the time per call at N = 1, the ratios, and how long a
fresh process takes to import ikrig and make its first call (the Numba cache at work).

Run: ``python benchmarks/bench_two_bone.py`` (``--help`` for options). Not a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

THREADS_ENV = "NUMBA_NUM_THREADS"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100_000, help="batch size (default 100000)")
    p.add_argument("--repeats", type=int, default=200, help="timed calls per measurement")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--all-cores", action="store_true", help="do not pin to one core")
    p.add_argument("--no-cache-check", action="store_true", help="skip the fresh-process run")
    return p.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
if ARGS is not None and not ARGS.all_cores:
    # one core: one Numba thread, and the process pinned to one CPU
    os.environ[THREADS_ENV] = "1"
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import numpy as np  # noqa: E402

from ikrig.solvers.two_bone import two_bone_positions, two_bone_positions_soa  # noqa: E402

THIGH, SHIN = 0.45, 0.42


def unit(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def workload(n: int, seed: int, dtype=np.float32):
    """The W1 problems as ``(root, mid, end, target, pole)``, each ``(n, 3)``."""
    rng = np.random.default_rng(seed)
    root = rng.uniform(-1, 1, size=(n, 3))
    ball = unit(rng, n) * rng.uniform(0, 1, size=(n, 1)) ** (1 / 3)
    target = root + 1.0 * ball
    pole = root + 0.5 * unit(rng, n)
    thigh = unit(rng, n)
    shin = unit(rng, n)  # a random bend: almost surely not parallel to the thigh
    mid = root + THIGH * thigh
    end = mid + SHIN * shin
    return tuple(a.astype(dtype) for a in (root, mid, end, target, pole))


def numpy_two_bone(root, mid, end, target, pole):
    """Plain NumPy two-bone IK (law of cosines, pole plane), positions only, no fallbacks."""
    l1 = np.linalg.norm(mid - root, axis=-1)
    l2 = np.linalg.norm(end - mid, axis=-1)
    to_target = target - root
    d = np.linalg.norm(to_target, axis=-1)
    a = to_target / d[..., None]
    reach = np.clip(d, np.abs(l1 - l2), l1 + l2)
    x = (reach**2 + l1**2 - l2**2) / (2 * reach)
    h = np.sqrt(np.maximum(l1**2 - x**2, 0))
    p = pole - root
    c = p - a * np.sum(p * a, axis=-1, keepdims=True)
    u = c / np.linalg.norm(c, axis=-1, keepdims=True)
    new_mid = root + a * x[..., None] + u * h[..., None]
    new_end = root + a * reach[..., None]
    reached = np.abs(reach - d) <= 1e-5 * (l1 + l2)
    return new_mid, new_end, reached


def median_time(fn, repeats: int) -> float:
    fn()  # warm (compiles on the first run of a fresh cache)
    times = np.empty(repeats)
    for k in range(repeats):
        t0 = time.perf_counter()
        fn()
        times[k] = time.perf_counter() - t0
    return float(np.median(times))


def fresh_process_first_call() -> float:
    """Seconds for a new interpreter to import ikrig and solve once through both APIs."""
    code = (
        "import time; t0 = time.perf_counter();"
        "import numpy as np;"
        "from ikrig.solvers.two_bone import two_bone_positions, two_bone_positions_soa;"
        "z = np.zeros(3, np.float32); y = np.array([0, 1, 0], np.float32);"
        "two_bone_positions(z, y, y + y, y);"
        "two_bone_positions(np.zeros((300, 3), np.float32), y, y + y, y);"
        "c = np.zeros((3, 300), np.float32); two_bone_positions_soa(c, c + 1, c + 2, c + 3);"
        "print(time.perf_counter() - t0)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    return float(out.stdout.strip().splitlines()[-1])


def main(args) -> None:
    n = args.n
    root, mid, end, target, pole = workload(n, args.seed)
    soa = [np.ascontiguousarray(a.T) for a in (root, mid, end, target, pole)]
    out = (np.empty((3, n), np.float32), np.empty((3, n), np.float32), np.empty(n, bool))

    # agreement of the three implementations on the knee and ankle
    aos = two_bone_positions(root, mid, end, target, pole)
    s = two_bone_positions_soa(*soa)
    ref_mid, ref_end, _ = numpy_two_bone(root, mid, end, target, pole)
    err_soa = max(
        np.abs(s.mid_world.T - aos.mid_world).max(), np.abs(s.end_world.T - aos.end_world).max()
    )
    err_np = max(np.abs(ref_mid - aos.mid_world).max(), np.abs(ref_end - aos.end_world).max())

    cases = {
        "aos": lambda: two_bone_positions(root, mid, end, target, pole),
        "soa": lambda: two_bone_positions_soa(*soa, out=out),
        "numpy": lambda: numpy_two_bone(root, mid, end, target, pole),
    }
    one = [a[:1] for a in (root, mid, end, target, pole)]
    one_aos = [a[0] for a in one]  # single problems, shape (3,)
    one_soa = [np.ascontiguousarray(a.T) for a in one]  # (3, 1)
    single = {
        "aos": lambda: two_bone_positions(*one_aos),
        "soa": lambda: two_bone_positions_soa(*one_soa),
        "numpy": lambda: numpy_two_bone(*one),
    }
    big = {k: median_time(f, args.repeats) for k, f in cases.items()}
    small = {k: median_time(f, 20 * args.repeats) for k, f in single.items()}

    threads = os.environ.get(THREADS_ENV, "default")
    pinned = "" if args.all_cores else ", pinned to one CPU"
    print(f"W1 two-bone leg IK, float32, N = {n:,}, {THREADS_ENV}={threads}{pinned}")
    print(f"out of reach: {100 * (1 - aos.reached.mean()):.1f} %, "
          f"max |soa - aos| = {err_soa:.2e}, max |numpy - aos| = {err_np:.2e}")  # fmt: skip
    print(f"{'':8}{'solves/s at N':>16}{'median ms':>12}{'us per call, N=1':>20}")
    for k in cases:
        print(f"{k:8}{n / big[k]:16.3e}{1e3 * big[k]:12.3f}{1e6 * small[k]:20.2f}")
    print("ratios (throughput at N):"
          f" soa/numpy {big['numpy'] / big['soa']:.1f}x,"
          f" aos/numpy {big['numpy'] / big['aos']:.1f}x,"
          f" soa/aos {big['aos'] / big['soa']:.1f}x")  # fmt: skip
    print("ratios (time per call at N=1):"
          f" numpy/aos {small['numpy'] / small['aos']:.1f}x,"
          f" numpy/soa {small['numpy'] / small['soa']:.1f}x")  # fmt: skip
    met = {True: "met", False: "NOT met"}
    print(f"goals: >= 5e8 solves/s (soa): {met[n / big['soa'] >= 5e8]};"
          f" <= 5 us per single call (aos): {met[small['aos'] <= 5e-6]}")  # fmt: skip
    if not args.no_cache_check:
        t = fresh_process_first_call()
        print(f"fresh process, import + first calls (Numba cache): {t:.2f} s")


if __name__ == "__main__":
    main(ARGS)
