"""ikrig batch on a library (issue 13): 200 clips (the shared clips, tiled) on 1 and 2 local
worker processes and on a 2-worker Dask LocalCluster, against plain loops in one process.

Reported: clips/s and frames/s of each run (wall time, worker start-up included), the
speed-up from 1 to 2 local workers (goal >= 1.7x on 2 cores), and the batch's overhead per
clip against a plain loop over ``place_feet`` in one warm process (goal <= 10 %). A second
loop runs the batch's own per-clip job (read, hash, place, metrics, write) in-process, to
tell the job's extra work from the pool's. The same again in fresh processes, as a shell runs
them: a plain-loop script against ``ikrig batch --jobs 1`` and ``--jobs 2``, start-up
(imports, loading the compiled kernels) included on both sides. Ground ``slope``, mode
``full``; every timing is the median of ``--rounds`` interleaved rounds (the machine is
shared and noisy). ``NUMBA_NUM_THREADS=1`` gives each process one compute thread.

Run: ``python benchmarks/bench_batch.py [--clips 200] [--rounds 3] [--no-cluster]``. Needs
``../shared/data/bvh*``; the cluster run needs the ``[cluster]`` extra.
"""

from __future__ import annotations

import argparse
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


def one_round(paths: list[Path], lib: Path, tmp: Path, cluster: bool) -> dict[str, float]:
    """Every timing once, into fresh output folders (a batch skips what is already done)."""
    t: dict[str, float] = {}
    t["loop"], _ = plain_loop(paths, tmp / "loop")
    t["jobs_loop"] = job_loop(paths, tmp / "jobs")
    t["one"] = batch(lib, tmp / "out1", jobs=1)
    t["two"] = batch(lib, tmp / "out2", jobs=2)
    t["cold_one"], t["cold_two"] = (cold_batch(lib, tmp / f"cold{j}", j) for j in (1, 2))
    t["cold_plain"] = cold_loop(lib, tmp / "coldloop")
    short = min(paths, key=lambda p: p.stat().st_size)
    t["start1"], t["start2"] = (batch(short, tmp / f"start{j}", jobs=j) for j in (1, 2))
    if cluster:
        t["dask"] = dask_batch(lib, tmp / "out3")
    return t


def report(t: dict[str, float], n: int, frames: int) -> None:
    """Print the medians ``t`` and the goals' ratios."""
    line("plain loop over place_feet", t["loop"], n, frames)
    line("loop over the batch job", t["jobs_loop"], n, frames)
    line("ikrig batch, 1 local process", t["one"], n, frames)
    line("ikrig batch, 2 local processes", t["two"], n, frames)
    if "dask" in t:
        line("ikrig batch, Dask LocalCluster x2", t["dask"], n, frames)
    print("\nfresh processes, start-up included (as a shell runs them):")
    line("plain loop, a Python script", t["cold_plain"], n, frames)
    line("ikrig batch --jobs 1", t["cold_one"], n, frames)
    line("ikrig batch --jobs 2", t["cold_two"], n, frames)
    cold_over = (t["cold_one"] - t["cold_plain"]) / n
    print(
        f"  overhead per clip of ikrig batch --jobs 1 against the script:"
        f" {1e3 * cold_over:.1f} ms = {100 * cold_over * n / t['cold_plain']:.0f} %"
        f"   (goal <= 10 %)\n  speed-up 1 -> 2 processes: {t['cold_one'] / t['cold_two']:.2f}x"
        f"   (goal >= 1.7x)"
    )
    loop, one, two = t["loop"], t["one"], t["two"]
    over = (one - loop) / n
    steady = (one - t["start1"]) / (two - t["start2"])
    over_steady = (one - t["start1"] - loop) / n
    print(
        f"\npool start-up (a one-clip batch): {t['start1']:.2f} s on 1 process,"
        f" {t['start2']:.2f} s on 2"
        f"\nspeed-up 1 -> 2 local processes: {one / two:.2f}x wall, {steady:.2f}x after"
        f" start-up   (goal >= 1.7x on 2 cores)"
        f"\noverhead per clip, 1 process vs plain loop: {1e3 * over:.1f} ms"
        f" = {100 * over / (loop / n):.0f} % wall, {1e3 * over_steady:.1f} ms ="
        f" {100 * over_steady / (loop / n):.0f} % after start-up   (goal <= 10 %)"
        f"\n  of which the job's extra work (hash, metrics): "
        f"{1e3 * (t['jobs_loop'] - loop) / n:.1f} ms, the pool (start-up, dispatch): "
        f"{1e3 * (one - t['jobs_loop']) / n:.1f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3, help="Rounds; medians are reported.")
    ap.add_argument("--no-cluster", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ikrig_bench_batch_"))
    try:
        paths = make_library(tmp / "lib", args.clips)
        plain_loop(paths[:12], tmp / "warm")  # compile or load every kernel first
        _, frames = plain_loop(paths, tmp / "warm_all")
        rounds = [
            one_round(paths, tmp / "lib", tmp / f"round{r}", not args.no_cluster)
            for r in range(args.rounds)
        ]
        print(
            f"{len(paths)} clips, {frames} frames; ground slope, mode full;"
            f" medians of {args.rounds} rounds\n"
        )
        report({k: statistics.median(x[k] for x in rounds) for k in rounds[0]}, len(paths), frames)
        print("\nrounds (s):")
        for k in rounds[0]:
            print(f"  {k:<10}" + "".join(f"{x[k]:8.2f}" for x in rounds))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
