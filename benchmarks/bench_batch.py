"""ikrig batch on a library (issue 13): 200 clips (the shared clips, tiled) on 1 and 2 local
worker processes and on a 2-worker Dask LocalCluster, against plain loops in one process.

Reported: clips/s and frames/s of each run (wall time, worker start-up included), the
speed-up from 1 to 2 local workers (goal >= 1.7x on 2 cores), and the batch's overhead per
clip against a plain loop over ``place_feet`` in one warm process (goal <= 10 %). A second
loop runs the batch's own per-clip job (read, hash, place, metrics, write) in-process, to
tell the job's extra work from the pool's. With both cores busy, the 2-process batch is also
compared with two plain loops side by side, each over half the clips in a copy of the warm
process: what splitting the library by hand gives. The same again in fresh processes, as a
shell runs them: a plain-loop script against ``ikrig batch --jobs 1`` and ``--jobs 2``, start-up
(imports, loading the compiled kernels) included on both sides. Ground ``slope``, mode
``full``. Every timing is the median of ``--rounds`` interleaved rounds, and every goal the
median of its ratio within each round, with the range over the rounds (the machine is shared
and noisy: a ratio taken within one round cancels the slow drifts). The plain loop and the
1-process batch run back to back, in alternating order, so that their ratio compares runs
seconds apart, not minutes.

Every run is also timed in CPU seconds (this process and its finished children: the pool's
workers, the fresh processes). A batch's CPU includes its own process's share (handing out
clips, flushing each output to disk, the manifest: about 1.6 ms a clip), which runs beside
the worker, so its CPU overhead is above its wall-time overhead; the overhead goal is
printed on both. The loop over the batch job flushes each output itself, as the plain loop's
writer does.

Run: ``python benchmarks/bench_batch.py [--clips 200] [--rounds 3] [--no-cluster]
[--baseline SRC] [--goal-only]``: ``--baseline`` adds issue 40's goal, the throughput of
``ikrig batch --jobs 2`` against an older ``src`` folder in the same run, and where a
clip's time goes (:mod:`_batch_goal`); ``--goal-only`` prints only those. Needs
``../shared/data/bvh*``; the cluster run needs the ``[cluster]`` extra.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def make_library(folder: Path, n: int) -> list[Path]:
    sources = sorted(SHARED.glob("bvh*/*.bvh"))
    if not sources:
        raise SystemExit(f"no clips in {SHARED}/bvh*")
    paths = []
    for i in range(n):
        src = sources[i % len(sources)]
        dst = folder / f"{i // len(sources):03d}" / src.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        paths.append(dst)
    return paths


def plain_loop(paths: list[Path], out: Path) -> tuple[float, int]:
    """What a user's script does: read, place_feet, write; one process, warm."""
    from ikrig.character import find_legs, from_y_up, pelvis_joint, to_y_up
    from ikrig.character.up import detect_up
    from ikrig.foot import place_feet
    from ikrig.ground import load_ground
    from ikrig.io import read_bvh, write_bvh

    out.mkdir(parents=True, exist_ok=True)
    t0, frames = time.perf_counter(), 0
    for i, p in enumerate(paths):
        clip = read_bvh(p)
        up = detect_up(clip.motion)
        motion = to_y_up(clip.motion, up)
        legs = find_legs(motion.skeleton)
        path_xz = motion.positions_world()[:, pelvis_joint(motion.skeleton, legs), [0, 2]]
        ground = load_ground("slope", path_xz, legs.leg_length, up=up)
        with warnings.catch_warnings():  # a far floor: the batch records these quietly
            warnings.simplefilter("ignore")
            result = place_feet(motion, ground, legs=legs)
        write_bvh(out / f"{i}.bvh", clip.with_motion(from_y_up(result.motion, up)))
        frames += clip.num_frames
    return time.perf_counter() - t0, frames


def loops_side_by_side(paths: list[Path], out: Path, n: int = 2) -> None:
    """``n`` plain loops at once, each over every ``n``-th clip, in copies of this warm
    process (forked where the batch forks its workers): what a user gets on ``n`` cores by
    splitting the library by hand, against which ``ikrig batch --jobs n`` is measured."""
    import multiprocessing

    from ikrig.batch.local import start_method

    ctx = multiprocessing.get_context(start_method())
    procs = [ctx.Process(target=plain_loop, args=(paths[i::n], out / str(i))) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode for p in procs):
        raise SystemExit("a plain loop failed")


def job_loop(paths: list[Path], out: Path) -> float:
    """The batch's own per-clip job (:func:`ikrig.batch.run_clip`), in one process."""
    from ikrig.batch import ClipTask, FootJob, run_clip

    out.mkdir(parents=True, exist_ok=True)
    job = FootJob("slope")
    t0 = time.perf_counter()
    for i, p in enumerate(paths):
        outcome = run_clip(ClipTask(str(p), str(i), str(out / f"{i}.bvh"), None, job))
        assert outcome.status == "ok", outcome.error
    return time.perf_counter() - t0


def batch(lib: Path, out: Path, jobs: int = 1, scheduler: str | None = None) -> float:
    from ikrig.batch import BatchSettings, FootJob, expand_inputs, run_batch

    clips = expand_inputs([str(lib)], out)
    settings = BatchSettings(str(out), jobs=jobs, scheduler=scheduler, progress=False)
    t0 = time.perf_counter()
    summary = run_batch(clips, FootJob("slope"), settings)
    seconds = time.perf_counter() - t0
    if summary["failed"] or summary["done"] != len(clips):
        raise SystemExit(f"batch failed: {summary['failures'][:3]}")
    return seconds


def cold(args: list[str]) -> float:
    """Wall time of a fresh process, start-up (imports, loading compiled kernels) included,
    as a user's shell runs it."""
    t0 = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def cold_loop(lib: Path, out: Path) -> float:
    """The plain loop as a user's script: a fresh Python process over every clip of ``lib``."""
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from bench_batch import plain_loop;"
        "plain_loop(sorted(Path(sys.argv[2]).rglob('*.bvh')), Path(sys.argv[3]))"
    )
    return cold([sys.executable, "-c", code, str(Path(__file__).parent), str(lib), str(out)])


def cold_batch(lib: Path, out: Path, jobs: int) -> float:
    """``ikrig batch LIB -g slope -o OUT --jobs N`` as a user's shell runs it."""
    cli = "import sys; from ikrig.cli import main; sys.exit(main())"
    args = [sys.executable, "-c", cli, "batch", str(lib), "-g", "slope", "-o", str(out)]
    return cold([*args, "--jobs", str(jobs), "--quiet"])


def line(name: str, seconds: float, clips: int, frames: int) -> None:
    print(
        f"{name:<34}{seconds:8.2f} s{clips / seconds:9.1f} clips/s"
        f"{frames / seconds:11.0f} frames/s{1e3 * seconds / clips:9.1f} ms/clip"
    )


def dask_batch(lib: Path, out: Path) -> float:
    """The batch on a fresh 2-worker Dask LocalCluster (its start-up not timed), in a child
    process: a closed cluster leaves threads and processes winding down that slowed the
    next timings of this process by half."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path;"
        "from distributed import LocalCluster; from bench_batch import batch\n"
        "if __name__ == '__main__':\n"
        "    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,"
        " dashboard_address=None) as c:\n"
        "        print(batch(Path(sys.argv[2]), Path(sys.argv[3]), scheduler=c.scheduler_address))"
    )
    args = [sys.executable, "-c", code, str(Path(__file__).parent), str(lib), str(out)]
    done = subprocess.run(args, check=True, capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def cpu_seconds() -> float:
    """CPU time (user and system) of this process and of its children that have ended."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(f, *args, **kwargs) -> tuple[float, float]:
    """Wall and CPU seconds of ``f(*args, **kwargs)``."""
    cpu, wall = cpu_seconds(), time.perf_counter()
    f(*args, **kwargs)
    return time.perf_counter() - wall, cpu_seconds() - cpu


def one_round(
    paths: list[Path], lib: Path, tmp: Path, cluster: bool, first: bool = True
) -> tuple[dict[str, float], dict[str, float]]:
    """Every timing once, into fresh output folders (a batch skips what is already done):
    wall and CPU seconds by run. The plain loop and the 1-process batch, whose ratio is the
    overhead goal, run back to back, the loop first when ``first`` (rounds alternate)."""
    pair = {
        "loop": lambda: plain_loop(paths, tmp / "loop"),
        "one": lambda: batch(lib, tmp / "out1", jobs=1),
    }
    runs = dict(pair if first else reversed(pair.items()))
    runs |= {
        "jobs_loop": lambda: job_loop(paths, tmp / "jobs"),
        "two": lambda: batch(lib, tmp / "out2", jobs=2),
        "loops2": lambda: loops_side_by_side(paths, tmp / "loops2"),
        "cold_one": lambda: cold_batch(lib, tmp / "cold1", 1),
        "cold_two": lambda: cold_batch(lib, tmp / "cold2", 2),
        "cold_plain": lambda: cold_loop(lib, tmp / "coldloop"),
    }
    short = min(paths, key=lambda p: p.stat().st_size)
    for j in (1, 2):
        runs[f"start{j}"] = lambda j=j: batch(short, tmp / f"start{j}", jobs=j)
    wall, cpu = {}, {}
    for name, run in runs.items():
        wall[name], cpu[name] = timed(run)
    if cluster:  # its scheduler's and workers' CPU is not this batch's: wall time only
        wall["dask"] = dask_batch(lib, tmp / "out3")
    order = ["loop", "one", "jobs_loop", "two", "loops2", "cold_one", "cold_two", "cold_plain"]
    order += ["start1", "start2"] + (["dask"] if cluster else [])
    return {k: wall[k] for k in order}, {k: cpu[k] for k in order if k in cpu}


def _ratios(rounds: list[dict[str, float]], f, unit: str = "x") -> str:
    """The median over the rounds of a same-round ratio ``f(round)``, and its range."""
    v = sorted(f(t) for t in rounds)
    fmt = "{:.2f}x" if unit == "x" else "{:.1f} %"
    return f"{fmt.format(statistics.median(v))} (rounds {fmt.format(v[0])} to {fmt.format(v[-1])})"


def report(
    rounds: list[dict[str, float]], cpus: list[dict[str, float]], n: int, frames: int
) -> None:
    """Print the medians of the timings and of the goals' same-round ratios."""
    t = {k: statistics.median(x[k] for x in rounds) for k in rounds[0]}
    line("plain loop over place_feet", t["loop"], n, frames)
    line("loop over the batch job", t["jobs_loop"], n, frames)
    line("ikrig batch, 1 local process", t["one"], n, frames)
    line("ikrig batch, 2 local processes", t["two"], n, frames)
    line("2 plain loops side by side", t["loops2"], n, frames)
    if "dask" in t:
        line("ikrig batch, Dask LocalCluster x2", t["dask"], n, frames)
    print("\nfresh processes, start-up included (as a shell runs them):")
    line("plain loop, a Python script", t["cold_plain"], n, frames)
    line("ikrig batch --jobs 1", t["cold_one"], n, frames)
    line("ikrig batch --jobs 2", t["cold_two"], n, frames)
    c = {k: statistics.median(x[k] for x in cpus) for k in cpus[0]}
    print("\nCPU seconds (this process and its workers), ms per clip:")
    for key, name in (
        ("loop", "plain loop"), ("jobs_loop", "loop over the batch job"),
        ("one", "ikrig batch, 1 process"), ("two", "ikrig batch, 2 processes"),
        ("loops2", "2 plain loops side by side"),
        ("cold_plain", "plain-loop script"), ("cold_one", "ikrig batch --jobs 1"),
    ):  # fmt: skip
        print(f"  {name:<32}{1e3 * c[key] / n:8.2f}")
    print(
        f"\npool start-up (a one-clip batch): {t['start1']:.2f} s on 1 process,"
        f" {t['start2']:.2f} s on 2\n"
        "\ngoals, as medians of the same-round ratios:"
        f"\n  speed-up 1 -> 2 local processes: {_ratios(rounds, lambda x: x['one'] / x['two'])}"
        "   (goal >= 1.7x on 2 cores)"
        "\n  overhead per clip, 1 process vs the plain loop (goal <= 10 %):"
        f"\n    wall time: {_ratios(rounds, lambda x: 100 * (x['one'] / x['loop'] - 1), '%')}"
        f"\n    CPU time:  {_ratios(cpus, lambda x: 100 * (x['one'] / x['loop'] - 1), '%')}"
        "\n    of which the job's extra work (hash, metrics, walk-in-place check), CPU:"
        f" {_ratios(cpus, lambda x: 100 * (x['jobs_loop'] / x['loop'] - 1), '%')}"
        "\n  both cores busy: 2 processes vs 2 plain loops side by side, each on half the clips:"
        f"\n    wall time: {_ratios(rounds, lambda x: 100 * (x['two'] / x['loops2'] - 1), '%')},"
        f" CPU time: {_ratios(cpus, lambda x: 100 * (x['two'] / x['loops2'] - 1), '%')}"
        "\n  fresh processes, start-up included:"
        f"\n    speed-up --jobs 1 -> 2: {_ratios(rounds, lambda x: x['cold_one'] / x['cold_two'])}"
        "\n    overhead of --jobs 1 against the script, wall:"
        f" {_ratios(rounds, lambda x: 100 * (x['cold_one'] / x['cold_plain'] - 1), '%')},"
        f" CPU: {_ratios(cpus, lambda x: 100 * (x['cold_one'] / x['cold_plain'] - 1), '%')}"
    )


def goal(args: argparse.Namespace, paths: list[Path], tmp: Path) -> None:
    """Issue 40: throughput against ``--baseline`` (same run) and the job's parts."""
    from _batch_goal import (
        against_baseline,
        print_against,
        print_stages,
        print_start_and_steady,
        stages,
        start_and_steady,
    )
    from bench_speed import machine

    print(f"{machine()}\n{len(paths)} clips; ground slope, mode full")
    print_stages(stages(paths, tmp / "stages"))
    if args.baseline:
        result = against_baseline(tmp / "lib", tmp, args.baseline, args.rounds)
        print_against(result, args.baseline, len(paths))
        lib12 = tmp / "lib12"  # one copy of each shared clip
        for p in paths[: len(set(p.name for p in paths))]:
            (lib12 / p.name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, lib12 / p.name)
        got = start_and_steady(lib12, tmp, args.baseline, args.rounds)
        print_start_and_steady(got, len(list(lib12.glob("*.bvh"))))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="Rounds; medians are reported.")
    ap.add_argument("--no-cluster", action="store_true")
    ap.add_argument(
        "--baseline",
        type=Path,
        metavar="SRC",
        help="Also time ikrig batch from this older src folder (issue 40's goal).",
    )
    ap.add_argument(
        "--goal-only",
        action="store_true",
        help="Only the --baseline comparison and where a clip's time goes.",
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ikrig_bench_batch_"))
    try:
        paths = make_library(tmp / "lib", args.clips)
        plain_loop(paths[:12], tmp / "warm")  # compile or load every kernel first
        if args.goal_only:
            goal(args, paths, tmp)
            return
        _, frames = plain_loop(paths, tmp / "warm_all")
        timings = [
            one_round(paths, tmp / "lib", tmp / f"round{r}", not args.no_cluster, r % 2 == 0)
            for r in range(args.rounds)
        ]
        rounds, cpus = [w for w, _ in timings], [c for _, c in timings]
        from bench_speed import machine  # CPU model, load, versions

        print(
            f"{machine()}\n{len(paths)} clips, {frames} frames; ground slope, mode full;"
            f" medians of {args.rounds} rounds\n"
        )
        report(rounds, cpus, len(paths), frames)
        print("\nrounds, wall s / CPU s:")
        for k in rounds[0]:
            print(f"  {k:<10}" + "".join(f"{x[k]:8.2f}" for x in rounds), end="   ")
            print("".join(f"{x[k]:8.2f}" for x in cpus if k in x))
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if args.baseline:
            goal(args, paths, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
