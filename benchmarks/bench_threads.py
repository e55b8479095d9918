"""Threads never hurt (issue 12): batched two-bone calls with 1 and 2 Numba threads, with
the machine idle and with another process spinning on the second core.

Each configuration runs in a fresh process (Numba's thread pool starts once per process):
``NUMBA_NUM_THREADS`` 1 or 2, the OpenMP wait policy ikrig sets (passive, the default) or
the runtime's own (active: threads spin between parallel regions), with a busy loop pinned
to CPU 1 (``taskset``) or not. Configurations are interleaved and repeated, and the report
gives medians (ms per call of ``N`` solves) and the same-run ratio of 2 threads over 1.

Run: ``python benchmarks/bench_threads.py [--n 100000] [--rounds 3]``. Linux (taskset).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import sys, time
import numpy as np
from ikrig.solvers import two_bone_positions, two_bone_positions_soa
n, kind = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(1)
root = rng.uniform(-1, 1, (n, 3))
mid = root + [0.0, -0.45, 0.0]
end = mid + [0.0, -0.42, 0.0]
target = root + rng.uniform(-0.6, 0.6, (n, 3))
pole = root + [0.0, 0.0, 0.5]
if kind == "soa":
    args = [np.ascontiguousarray(a.T) for a in (root, mid, end, target, pole)]
    call = lambda: two_bone_positions_soa(*args)
else:
    call = lambda: two_bone_positions(root, mid, end, target, pole)
call()
times = []
for _ in range(40):
    t = time.perf_counter(); call(); times.append(time.perf_counter() - t)
print(float(np.median(times)) * 1e3)
"""


def run(n: int, kind: str, threads: int, policy: str | None) -> float:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    env.pop("OMP_WAIT_POLICY", None)
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(n), kind], env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo"], capture_output=True,
                         text=True).stdout.strip()  # fmt: skip
    print(f"{cpu}; N = {args.n}; medians of {args.rounds} rounds x 40 calls (ms per call)")
    configs = [(k, t, p) for k in ("aos", "soa") for p in (None, "ACTIVE") for t in (1, 2)]
    for busy in (False, True):
        spinner = None
        if busy:
            spinner = subprocess.Popen(
                ["taskset", "-c", "1", sys.executable, "-c", "while 1: pass"]
            )
            time.sleep(0.5)
        try:
            results: dict = {c: [] for c in configs}
            for _ in range(args.rounds):
                for c in configs:
                    results[c].append(run(args.n, *c))
        finally:
            if spinner:
                spinner.kill()
        print(f"\nsecond core {'busy (a spinning process pinned to CPU 1)' if busy else 'idle'}:")
        for kind in ("aos", "soa"):
            for policy in (None, "ACTIVE"):
                one = statistics.median(results[kind, 1, policy])
                two = statistics.median(results[kind, 2, policy])
                name = "ikrig default (passive)" if policy is None else "OMP_WAIT_POLICY=ACTIVE"
                print(f"  {kind} {name:24s} 1 thread {one:6.2f}  2 threads {two:6.2f}"
                      f"  ratio 2/1 {two / one:5.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
