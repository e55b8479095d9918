"""Foot-placement quality on every shared clip and built-in ground (issues 4 and 11).

Run: ``python benchmarks/foot_quality_table.py [--data DIR ...] [--modes full,...] [--live]``.
Prints a Markdown table: for every clip (in ``../shared/data/bvh`` and ``bvh_more`` by
default, turned Y-up when they are not) and built-in ground (laid at y = 0 along the pelvis:
the clip's floor, the default datum), the do-nothing baseline and each mode, measured with
:func:`ikrig.metrics.foot_metrics`: each foot joint against its own floor in the source,
contacts from the source, lengths in % of leg length. The columns are
:data:`ikrig.metrics.TABLE_COLUMNS`: penetration p95 and max, float mean and p95 over the
source's contacts, the largest height deviation of a planted joint, skate over the
source's, knee pops, bone drift, pelvis horizontal deviation, pelvis vertical acceleration
p99 over the source's, ground misses. ``--live`` adds the live placer run causally, one
frame per update, without the offline plan. ``--mesh`` instead writes each built-in ground
to a PLY file at y = 0 (in the clip file's own up axis) and runs ``ikrig foot`` on it, as a
user would, reading the result back from its BVH file.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from ikrig.character import detect_up, find_legs, pelvis_joint, to_y_up
from ikrig.foot import FootOptions, FootPlacer, place_feet
from ikrig.ground import GROUND_NAMES, load_ground
from ikrig.io import read_bvh
from ikrig.metrics import TABLE_COLUMNS, foot_metrics, table_cell
from ikrig.pose import Motion

MODES = ("full", "trace-offset", "goal-blend")


def live_clip(clip: Motion, ground, legs) -> Motion:
    """The clip placed live, frame by frame, without a plan."""
    placer = FootPlacer.from_clip(clip, ground, legs=legs)
    frames = [placer.update(clip[f], clip.frame_time) for f in range(clip.num_frames)]
    rl = np.stack([p.rotations_local for p in frames])
    pl = np.stack([p.positions_local for p in frames])
    return Motion(clip.skeleton, rl, pl, clip.frame_time)


def mesh_run(path: Path, clip: Motion, up: str, name: str, folder: Path) -> Motion:
    """``ikrig foot`` on the built-in ground ``name`` written as a PLY file; the result,
    read back and turned Y-up."""
    import trimesh
    from click.testing import CliRunner

    from ikrig.cli import main as cli
    from ikrig.math.axes import to_y_up_quat
    from ikrig.math.quat import quat_conj, quat_rotate
    from ikrig.viz.geometry import ground_mesh

    legs = find_legs(clip.skeleton)
    L = legs.leg_length
    walk_xz = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs)][:, [0, 2]]
    bounds = np.stack([walk_xz.min(axis=0) - 2 * L, walk_xz.max(axis=0) + 2 * L])
    v, f = ground_mesh(load_ground(name, walk_xz, L), bounds, cells=400)
    mesh, out = folder / f"{name}.ply", folder / f"{name}.bvh"
    trimesh.Trimesh(quat_rotate(quat_conj(to_y_up_quat(up)), v), f, process=False).export(mesh)
    r = CliRunner().invoke(cli, ["foot", str(path), "--ground", str(mesh), "-o", str(out)])
    if r.exit_code != 0:
        raise SystemExit(r.output)
    return to_y_up(read_bvh(out).motion, up)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    ap.add_argument("--data", type=Path, nargs="+", default=[shared / "bvh", shared / "bvh_more"])
    ap.add_argument("--modes", default="full,trace-offset,goal-blend")
    ap.add_argument("--live", action="store_true", help="add the causal live placer")
    ap.add_argument("--mesh", action="store_true", help="grounds as PLY files, through the CLI")
    args = ap.parse_args()
    modes = args.modes.split(",")

    print("| clip | ground | mode | " + " | ".join(h for _, h, _ in TABLE_COLUMNS) + " |")
    print("|---" * (3 + len(TABLE_COLUMNS)) + "|")
    pops: dict[str, int] = {}
    for path in sorted(p for folder in args.data for p in folder.glob("*.bvh")):
        clip = read_bvh(path).motion
        up = detect_up(clip)
        clip = to_y_up(clip, up)
        legs = find_legs(clip.skeleton)
        walk_xz = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs)][:, [0, 2]]
        for name in GROUND_NAMES:
            ground = load_ground(name, walk_xz, legs.leg_length)  # y = 0: the clip's floor
            if args.mesh:
                with tempfile.TemporaryDirectory() as folder:
                    rows = [("full (mesh file, CLI)", mesh_run(path, clip, up, name, Path(folder)))]
            else:
                results = {
                    m: place_feet(clip, ground, FootOptions(mode=m), legs=legs) for m in modes
                }
                first = next(iter(results.values()))
                rows = [("baseline", first.baseline)] + [(m, r.motion) for m, r in results.items()]
            if args.live:
                rows.append(("live (no plan)", live_clip(clip, ground, legs)))
            for label, motion in rows:
                m = foot_metrics(motion, clip, ground, legs)
                cells = " | ".join(table_cell(m[key], fmt) for key, _, fmt in TABLE_COLUMNS)
                print(f"| {path.stem} | {name} | {label} | {cells} |", flush=True)
                pops[label] = pops.get(label, 0) + m["pops"]
    print("\nknee pops over all runs: " + ", ".join(f"{k} {v}" for k, v in pops.items()))


if __name__ == "__main__":
    main()
