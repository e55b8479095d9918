"""Foot-placement speed (issue: offline >= 200,000 frames/s on one core for a 31-joint clip on
a heightfield, file I/O excluded; FootPlacer.update <= 100 us per character-frame).

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_foot.py [--frames 20000] [--repeat 5]``.
The clip is the built-in 31-joint humanoid walk (or a shared CMU clip tiled, with
``--clip``); the ground is the built-in ``bumps`` heightfield. Figures are medians over
repeats, warm (kernels compiled first), with the same-run ratio to the goal.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ikrig.character import estimate_sole, find_legs
from ikrig.data.walk import walk_clip
from ikrig.foot import FootOptions, FootPlacer, place_feet
from ikrig.ground import load_ground
from ikrig.pose import Motion


def tiled_clip(path: str | None, frames: int) -> Motion:
    if path:
        from ikrig.io import read_bvh

        clip = read_bvh(path).motion
    else:
        clip = walk_clip(seconds=10.0, fps=120.0)
    reps = -(-frames // clip.num_frames)
    # repeat the clip, shifting each copy along its own path so the walk keeps going
    pl = np.concatenate([clip.positions_local] * reps)[:frames].copy()
    step = clip.positions_local[-1, 0] - clip.positions_local[0, 0]
    step[1] = 0.0
    k = np.repeat(np.arange(reps), clip.num_frames)[:frames]
    pl[:, 0] += k[:, None] * step
    rl = np.concatenate([clip.rotations_local] * reps)[:frames]
    return Motion(clip.skeleton, rl, pl, clip.frame_time)


def median_time(fn, repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (this process only) of ``fn()``, in seconds."""
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--frames", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--clip", default=None, help="a BVH clip to tile instead of the built-in walk")
    ap.add_argument("--live-frames", type=int, default=600)
    ap.add_argument("--only", choices=("offline", "live"), default=None)
    args = ap.parse_args()

    clip = tiled_clip(args.clip, args.frames)
    legs = find_legs(clip.skeleton)
    sole = estimate_sole(clip, legs)
    path_xz = clip.positions_world()[:, 0, [0, 2]]
    ground = load_ground("bumps", path_xz, legs.leg_length, sole.floor)
    fps = 1 / clip.frame_time
    print(
        f"clip: {clip.num_joints} joints, {clip.num_frames} frames at {fps:.0f} fps;"
        f" ground: bumps ({type(ground).__name__})"
    )

    for mode in ("full", "trace-offset", "goal-blend") if args.only != "live" else ():
        opts = FootOptions(mode=mode)
        place_feet(clip[:200], ground, opts, legs=legs)  # compile
        t, cpu = median_time(lambda o=opts: place_feet(clip, ground, o, legs=legs), args.repeat)
        fps = clip.num_frames / t
        print(
            f"offline {mode:12s}: {t * 1e3:8.1f} ms median, {fps:12,.0f} frames/s"
            f"  ({fps / 200_000:.2f} x the 200,000 frames/s goal; CPU {cpu * 1e3:.1f} ms)"
        )

    # live: one character, one frame per update, with and without the offline plan
    r = place_feet(clip, ground, FootOptions(), legs=legs)
    n = min(args.live_frames, clip.num_frames)
    plans = [r.plan(f) for f in range(n)]  # as an engine stores them with the clip
    for planned in (True, False) if args.only != "offline" else ():
        placer = FootPlacer.from_clip(clip, ground)
        placer.update(clip[0], clip.frame_time)  # compile

        def run(planned=planned, placer=placer):
            for f in range(n):
                if planned:
                    placer.update(clip[f], clip.frame_time, plan=plans[f])
                else:
                    placer.update(clip[f], clip.frame_time)

        t, cpu = (x / n for x in median_time(run, args.repeat))
        label = "with plan" if planned else "no plan  "
        print(
            f"live FootPlacer.update ({label}): {t * 1e6:8.1f} us per character-frame"
            f"  ({100e-6 / t:.2f} x the 100 us goal; CPU {cpu * 1e6:.1f} us)"
        )


if __name__ == "__main__":
    main()
