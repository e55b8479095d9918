"""Benchmark of the browser viewer's per-frame update (not a test).

The viewer (``ikrig view``) calls :meth:`ikrig.viz.viewer.ClipViewer.update` once per shown
frame: live foot IK for that frame (:class:`ikrig.foot.live.FootPlacer`), FK, the ray
casts under the soles, and the scene-node updates sent to the browser. This script times that
call over consecutive frames of the built-in 31-joint walk (or a BVH file) on a ground, with
foot IK on in each mode and off, with a viser server running on a free localhost port and no
browser attached (so the time is the server's, not the network's or the browser's).

The goal is at least 30 updates per second with foot IK on. Prints the median and the 95th
percentile time per update and the rate they allow.

    python benchmarks/bench_viewer.py [CLIP.bvh] [--ground stairs] [--frames 600]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def time_update(viewer, frames: int) -> np.ndarray:
    F = viewer.clip.num_frames
    viewer.update(0, force=True)
    for f in range(1, 30):  # warm-up: Numba kernels, caches
        viewer.update(f % F)
    times = []
    for k in range(30, 30 + frames):
        t = time.perf_counter()
        viewer.update(k % F)
        times.append(time.perf_counter() - t)
    return np.asarray(times)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("clip", nargs="?", default=None, help="BVH file (default: built-in walk)")
    ap.add_argument("--ground", default="stairs")
    ap.add_argument("--frames", type=int, default=600)
    args = ap.parse_args(argv)

    from ikrig.cli.viz import clip_ground, load_clip
    from ikrig.viz.viewer import MODES, ClipViewer

    clip = load_clip(args.clip)
    ground, _, _ = clip_ground(clip, args.ground)
    viewer = ClipViewer(clip, ground, port=0)
    try:
        print(
            f"clip: {args.clip or 'built-in walk'}, {clip.num_joints} joints,"
            f" {clip.num_frames} frames; ground {args.ground}; {args.frames} updates each"
        )
        for mode in (*MODES, None):
            if mode is None:
                viewer.gui_ik.value = False
                label = "foot IK off"
            else:
                viewer.gui_ik.value = True
                viewer.gui_mode.value = mode
                label = f"foot IK on, {mode}"
            t = time_update(viewer, args.frames)
            med, p95 = float(np.median(t)), float(np.percentile(t, 95))
            print(
                f"  {label:<28s} median {med * 1e3:6.2f} ms  p95 {p95 * 1e3:6.2f} ms"
                f"  -> {1.0 / med:7.1f} updates/s (goal >= 30)"
            )
    finally:
        viewer.close()


if __name__ == "__main__":
    main()
