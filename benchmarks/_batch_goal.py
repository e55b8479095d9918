"""Issue 40's batch goal for ``bench_batch.py``: ``ikrig batch`` throughput against an older
source tree in the same run, and where a clip's time goes.

* :func:`against_baseline`: ``ikrig batch LIB -g slope --jobs 2`` as a shell runs it (fresh
  processes, start-up included), this checkout against ``--baseline SRC`` (a ``src`` folder,
  e.g. ``git archive 7021b37 src | tar -x -C /tmp/base``), in alternating order, round by
  round; the goal is the median of the same-round ratios (>= 1.5x).
* :func:`start_and_steady`: the batch job in a fresh process of each tree: the import, the
  first pass over the clips (which loads the compiled kernels) and the steady time per
  clip after it; a batch of a few hundred clips on two workers pays the first two in each
  worker, so they bound the throughput ratio;
* :func:`stages`: the batch's own per-clip job (:func:`ikrig.batch.run_clip`) in this
  process, its four parts timed by wrapping the functions it calls (read and parse, place,
  measure the result and the do-nothing baseline, write and flush): the measurement that
  says what a clip's time is spent on.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL = 1.5


def _cold_batch(lib: Path, out: Path, src: Path | None, jobs: int) -> float:
    """Wall seconds of ``ikrig batch`` in a fresh process, from ``src`` (None: this one)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    cli = "import sys; from ikrig.cli import main; sys.exit(main())"
    args = [sys.executable, "-c", cli, "batch", str(lib), "-g", "slope", "-o", str(out)]
    t0 = time.perf_counter()
    subprocess.run([*args, "--jobs", str(jobs), "--quiet"], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    seconds = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    return seconds


def against_baseline(lib: Path, tmp: Path, baseline: Path, rounds: int, jobs: int = 2) -> dict:
    """``{"now": [s], "before": [s], "ratios": [before / now]}`` over ``rounds`` rounds."""
    for src in (None, baseline):  # warm both trees' kernel caches and the file cache
        _cold_batch(lib, tmp / "warm", src, jobs)
    now, before = [], []
    for r in range(rounds):
        order = ((None, now), (baseline, before))
        for src, into in order if r % 2 == 0 else order[::-1]:
            into.append(_cold_batch(lib, tmp / f"cmp{r}", src, jobs))
    return {"now": now, "before": before, "ratios": [b / a for a, b in zip(now, before)]}


_JOB_PASSES = """
import sys, time, statistics
from pathlib import Path
t0 = time.perf_counter()
from ikrig.batch import ClipTask, FootJob, run_clip
t1 = time.perf_counter()
paths, out = sorted(Path(sys.argv[1]).rglob("*.bvh")), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
job, passes = FootJob("slope"), []
for _ in range(3):
    t = time.perf_counter()
    for i, p in enumerate(paths):
        run_clip(ClipTask(str(p), str(i), str(out / f"{i}.bvh"), None, job))
    passes.append(time.perf_counter() - t)
print(t1 - t0, passes[0], statistics.median(passes[1:]) / len(paths))
"""


def job_passes(lib: Path, out: Path, src: Path | None) -> tuple[float, float, float]:
    """In a fresh process from ``src`` (None: this tree): the seconds to import the batch
    job, the first pass over ``lib`` (loading the compiled kernels) and the steady seconds
    per clip of two later passes (:func:`ikrig.batch.run_clip`, one process)."""
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run([sys.executable, "-c", _JOB_PASSES, str(lib), str(out)], env=env,
                          check=True, capture_output=True, text=True)  # fmt: skip
    shutil.rmtree(out, ignore_errors=True)
    a, b, c = (float(v) for v in done.stdout.split()[-3:])
    return a, b, c


def start_and_steady(lib: Path, tmp: Path, baseline: Path, rounds: int) -> dict:
    """:func:`job_passes` of both trees, alternating, ``rounds`` times: ``{"now": [...],
    "before": [...]}`` of ``(import s, first pass s, steady s per clip)``."""
    got: dict[str, list] = {"now": [], "before": []}
    for r in range(rounds):
        order = (("now", None), ("before", baseline))
        for key, src in order if r % 2 == 0 else order[::-1]:
            got[key].append(job_passes(lib, tmp / f"passes{r}", src))
    return got


def print_start_and_steady(got: dict, clips: int) -> None:
    med = {k: [statistics.median(v[i] for v in got[k]) for i in range(3)] for k in got}
    now, before = med["now"], med["before"]
    print(
        "\nthe batch job in one fresh process, this tree / before (medians):"
        f"\n  import {now[0]:.2f} / {before[0]:.2f} s; first pass over the {clips} clips"
        f" (loads the kernels) {now[1]:.2f} / {before[1]:.2f} s"
        f"\n  steady, per clip: {1e3 * now[2]:.2f} / {1e3 * before[2]:.2f} ms"
        f" ({before[2] / now[2]:.2f}x)"
    )


def print_against(result: dict, baseline: Path, clips: int) -> None:
    now, before = (statistics.median(result[k]) for k in ("now", "before"))
    r = sorted(result["ratios"])
    print(
        f"\nissue 40: ikrig batch --jobs 2 (fresh processes), this tree against {baseline}:"
        f"\n  now {now:.2f} s ({clips / now:.1f} clips/s), before {before:.2f} s"
        f" ({clips / before:.1f} clips/s)"
        f"\n  throughput ratio {statistics.median(r):.2f}x (rounds {r[0]:.2f}x to {r[-1]:.2f}x);"
        f" goal >= {GOAL}x: {'met' if statistics.median(r) >= GOAL else 'NOT met'}"
    )


PARTS = (  # (module, function, part): what run_clip's job calls, by part
    ("ikrig.app.placement", "clip_with_time", "read and parse"),
    ("ikrig.app.placement", "place_clip", "place (the foot pipeline)"),
    ("ikrig.app.placement", "result_summary", "measure (result and baseline)"),
    ("ikrig.io.clips", "write_clip", "write and flush"),
)


def stages(paths: list[Path], out: Path, repeats: int = 3) -> dict[str, float]:
    """Median seconds per clip of each part of :data:`PARTS` and of the whole job
    (``"job"``), over ``repeats`` passes of the batch job over ``paths`` in this process."""
    from _parts import median_parts

    from ikrig.batch import ClipTask, FootJob, run_clip

    out.mkdir(parents=True, exist_ok=True)
    job = FootJob("slope")

    def one_pass() -> None:
        for i, p in enumerate(paths):
            done = run_clip(ClipTask(str(p), str(i), str(out / f"{i}.bvh"), None, job))
            if done.status != "ok":
                raise SystemExit(f"{p}: {done.error}")

    got = median_parts(one_pass, PARTS, repeats, warm=1)  # the first pass warms
    got["job"] = got.pop("total")
    return {k: v / len(paths) for k, v in got.items()}


def print_stages(per_clip: dict[str, float]) -> None:
    job = per_clip["job"]
    print("\nwhere a clip's time goes (the batch job in one process, ms per clip, medians):")
    for _, _, part in PARTS:
        t = per_clip.get(part, 0.0)
        print(f"  {part:<34}{1e3 * t:8.2f} ms {100 * t / job:5.1f} %")
    rest = job - sum(per_clip.get(p, 0.0) for _, _, p in PARTS)
    name = "the rest (hash, up axis, checks)"
    print(f"  {name:<34}{1e3 * rest:8.2f} ms {100 * rest / job:5.1f} %")
    print(f"  {'the whole job':<34}{1e3 * job:8.2f} ms")
