"""Foot-placement quality on every shared clip and built-in ground (issue 4's table).

Run: ``python benchmarks/foot_quality_table.py [--data ../shared/data/bvh] [--live]``.
Prints a Markdown table: for every clip and ground, the do-nothing baseline and each mode
(``full``, ``trace-offset``, ``goal-blend``), measured with :func:`ikrig.metrics.foot_metrics`
against the full result's sole and contacts (lengths in % of leg length). ``--live`` adds the
live placer run causally, one frame per update, without the offline plan.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ikrig.character import find_legs, pelvis_joint
from ikrig.foot import FootOptions, FootPlacer, place_feet
from ikrig.ground import GROUND_NAMES, load_ground
from ikrig.ground.views import RaisedGround
from ikrig.io import read_bvh
from ikrig.metrics import foot_metrics
from ikrig.pose import Motion

MODES = ("full", "trace-offset", "goal-blend")


def live_clip(clip: Motion, ground, legs) -> Motion:
    """The clip placed live, frame by frame, without a plan."""
    placer = FootPlacer.from_clip(clip, ground, legs=legs)
    frames = [placer.update(clip[f], clip.frame_time) for f in range(clip.num_frames)]
    rl = np.stack([p.rotations_local for p in frames])
    pl = np.stack([p.positions_local for p in frames])
    return Motion(clip.skeleton, rl, pl, clip.frame_time)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    default = Path(__file__).resolve().parents[2] / "shared" / "data" / "bvh"
    ap.add_argument("--data", type=Path, default=default)
    ap.add_argument("--live", action="store_true", help="add the causal live placer")
    args = ap.parse_args()

    cols = "pen mean | pen p95 | pen max | float mean | skate rel | pops | bone drift | root dev"
    print(f"| clip | ground | mode | {cols} |")
    print("|---" * 11 + "|")
    pops: dict[str, int] = {}
    for path in sorted(args.data.glob("*.bvh")):
        clip = read_bvh(path).motion
        legs = find_legs(clip.skeleton)
        walk_xz = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs)][:, [0, 2]]
        for name in GROUND_NAMES:
            raw = load_ground(name, walk_xz, legs.leg_length)  # y = 0: the clip's floor (datum)
            results = {m: place_feet(clip, raw, FootOptions(mode=m), legs=legs) for m in MODES}
            full = results["full"]
            ground = RaisedGround(raw, full.datum)  # where the pipeline put it
            rows = [("baseline", full.baseline)] + [(m, r.motion) for m, r in results.items()]
            if args.live:
                rows.append(("live (no plan)", live_clip(clip, raw, legs)))
            for label, motion in rows:
                m = foot_metrics(motion, clip, ground, legs, full.sole, full.contacts)
                rel = "-" if m["skate_rel"] is None else f"{m['skate_rel']:.3f}"
                print(
                    f"| {path.stem} | {name} | {label} | {m['pen_mean']:.3f} | {m['pen_p95']:.3f}"
                    f" | {m['pen_max']:.3f} | {m['float_mean']:.3f} | {rel} | {m['pops']}"
                    f" | {m['bone_drift']:.1e} | {m['root_dev']:.3f} |"
                )
                pops[label] = pops.get(label, 0) + m["pops"]
    print("\nknee pops over all runs: " + ", ".join(f"{k} {v}" for k, v in pops.items()))


if __name__ == "__main__":
    main()
