"""Benchmark BVH reading and writing on a 31-joint x 20,000-frame clip.

Goal: ``read_bvh`` takes at most 0.2 s for this size. With ``--peers``, issue 40's
comparison in the same run (``_bvh_peers.py``; where each part of a read and a write goes,
``_bvh_parts.py``): ikrig against ``bvhio`` and
``upc-pymotion`` on every shared clip and on the big clip, read and write each at least
10 times faster than the fastest peer, writing at least 100 MB/s, round trips exact to the
printed precision and the text unchanged by a second write. The clip is made by tiling a shared CMU
clip (``../shared/data/bvh/cmu_01_01_jumps.bvh``) when it is present, else from a synthetic
31-joint hierarchy with random smooth angles, and written to a temporary directory. Times are
medians over repeats, after one untimed warm-up run (which also compiles the kernels).

Usage::

    python benchmarks/bench_bvh.py [--frames 20000] [--repeats 7] [--synthetic] [--peers]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from ikrig.io import BvhClip, read_bvh, write_bvh
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

SHARED_CLIP = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bvh" / "cmu_01_01_jumps.bvh"
)
NUM_JOINTS = 31


def tiled_text(path: Path, frames: int) -> str:
    """The shared clip's text with its frame rows repeated up to ``frames`` rows."""
    lines = path.read_text().replace("\r\n", "\n").split("\n")
    motion = next(i for i, line in enumerate(lines) if line.strip() == "MOTION")
    rows = [line for line in lines[motion + 3 :] if line.strip()]
    tiled = (rows * (frames // len(rows) + 1))[:frames]
    header = lines[: motion + 1] + [f"Frames: {frames}", lines[motion + 2]]
    return "\n".join(header + tiled) + "\n"


def synthetic_clip(frames: int, seed: int = 0) -> BvhClip:
    """A 31-joint chain-and-branches skeleton with smooth random ZYX angles (no shared data)."""
    rng = np.random.default_rng(seed)
    parents = [-1] + [int(rng.integers(max(0, j - 4), j)) for j in range(1, NUM_JOINTS)]
    skeleton = Skeleton(
        tuple(f"joint{j}" for j in range(NUM_JOINTS)),
        np.array(parents),
        rng.normal(scale=5.0, size=(NUM_JOINTS, 3)),
    )
    t = np.arange(frames)[:, None, None] / 120.0
    angles = np.radians(60 * np.sin(t * rng.uniform(0.5, 3, (1, NUM_JOINTS, 3)) + 1.0))
    from ikrig.math import quat_from_euler

    rotations = quat_from_euler(angles, "ZYX")
    positions = np.repeat(skeleton.offsets[None], frames, axis=0)
    positions[:, 0] = rng.normal(size=(frames, 3)).cumsum(axis=0) * 0.1
    channels = (("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"),)
    channels += (("Zrotation", "Yrotation", "Xrotation"),) * (NUM_JOINTS - 1)
    return BvhClip(Motion(skeleton, rotations, positions, 1 / 120), channels)


def timings(function, repeats: int) -> tuple[float, float, float]:
    """Median and min wall seconds, and median CPU seconds of this process, of ``function()``
    over ``repeats`` runs after a warm-up. CPU time is less disturbed by a busy machine."""
    function()  # warm-up (compiles on a fresh cache)
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        function()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), min(wall), statistics.median(cpu)


def report(what: str, seconds: tuple[float, float, float], note: str) -> None:
    median, fastest, cpu = seconds
    print(f"{what}  median {median:.3f} s  min {fastest:.3f} s  cpu {cpu:.3f} s  ({note})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--synthetic", action="store_true", help="use the synthetic hierarchy even with shared/"
    )
    parser.add_argument("--peers", action="store_true", help="compare with bvhio, upc-pymotion")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "big.bvh"
        if SHARED_CLIP.is_file() and not args.synthetic:
            source.write_text(tiled_text(SHARED_CLIP, args.frames))
            origin = f"tiled {SHARED_CLIP.name}"
        else:
            write_bvh(source, synthetic_clip(args.frames))
            origin = "synthetic hierarchy"
        clip = read_bvh(source)
        size_mb = source.stat().st_size / 1e6
        print(
            f"{clip.motion.num_joints} joints x {clip.num_frames} frames"
            f" ({sum(map(len, clip.channels))} channels, {size_mb:.1f} MB, {origin})"
        )
        report("read_bvh ", timings(lambda: read_bvh(source), args.repeats), "goal <= 0.2 s")
        out = Path(tmp) / "out.bvh"
        write = timings(lambda: write_bvh(out, clip), args.repeats)
        report("write_bvh", write, "Euler angles closest to the source values")
        edited = clip.with_motion(clip.motion[: args.frames - 1])
        write = timings(lambda: write_bvh(out, edited), args.repeats)
        report("write_bvh", write, "no matching source values: frame to frame")
        reread = read_bvh(out)
        written = reread.source_values
        print(f"re-read written file: {written.shape[0]} frames, {written.shape[1]} channels")
        if args.peers:
            from _bvh_peers import compare, table

            shared = sorted(SHARED_CLIP.parent.parent.glob("bvh*/*.bvh"))
            rows = [compare(p, Path(tmp), args.repeats) for p in [*shared, source]]
            print(table(rows))
            from _bvh_parts import report as parts

            print("\nwhere the time goes (medians, ms; the goal's budget is a tenth of the"
                  " fastest peer's time):")  # fmt: skip
            small = sorted(zip(rows, [*shared, source]), key=lambda r: r[0]["MB"])
            for row, path in [small[0], small[len(small) // 2], small[-1]]:
                print(parts(path, Path(tmp) / "parts.bvh", args.repeats, row))


if __name__ == "__main__":
    main()
