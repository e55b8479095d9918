"""Do no harm (issue 34): what foot placement changes in every shared clip, on every ground.

Run: ``python benchmarks/fidelity_table.py [--grounds flat,stairs,...] [--save FILE.json]
[--compare BEFORE.json]``.

Every BVH clip in ``../shared/data/bvh`` and ``bvh_more`` (turned Y-up) as recorded, and the
shared glTF walk cycles walked (``FootPlacement(walk=True)``, the Fox with its four legs,
found by name since issue 36, and three cycles), placed in ``full`` mode on each built-in
ground at the clip's floor, and measured with :func:`ikrig.metrics.foot_metrics` against
the source's own floors: the change measures (:mod:`ikrig.metrics.fidelity`: pelvis height
change, joint displacement, upper-body change, leg extension) and the foot measures (float
against the source's own, penetration, skate, pops, pelvis acceleration ratio). ``--save``
writes every row as JSON; ``--compare`` prints each value as ``before -> after`` from a
saved run.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

from ikrig.app.placement import FootPlacement, place_clip, result_summary
from ikrig.character import detect_up, to_y_up
from ikrig.io import read_bvh, read_clip

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
WALK = FootPlacement(at=(0.0, 0.0), heading=0.5, walk=True)
GLTF = [  # (file, animation, legs, placement)
    ("CesiumMan.glb", None, None, WALK),
    ("GodotPlatformerPlayer.glb", "walk", None, WALK),
    ("GodotPlatformerPlayer.glb", "run", None, WALK),
    ("Fox.glb", "Walk", None, WALK._replace(cycles=3)),  # its four legs found (issue 36)
]
COLUMNS = (  # (key, header, format)
    ("pelvis_change_mean", "pelvis dy mean", "{:+.2f}"),
    ("pelvis_change_p95", "pelvis dy p95 (size)", "{:.2f}"),
    ("joint_disp_p95", "joints p95", "{:.2f}"),
    ("upper_body_change", "upper body", "{:.1e}"),
    ("leg_extension_max", "ext max", "{:.4f}"),
    ("leg_extension_max_source", "ext src", "{:.4f}"),
    ("float_mean", "flt mean", "{:.2f}"),
    ("float_mean_source", "flt src", "{:.2f}"),
    ("pen_max", "pen max", "{:.2f}"),
    ("skate_rel", "skate rel", "{:.2f}"),
    ("pops", "pops", "{:d}"),
    ("pelvis_acc_ratio", "acc ratio", "{:.2f}"),
)


def cases():
    """``(label, motion, legs, placement)`` of every shared clip."""
    for folder in ("bvh", "bvh_more"):
        for path in sorted((SHARED / folder).glob("*.bvh")):
            motion = read_bvh(path).motion
            yield path.stem, to_y_up(motion, detect_up(motion)), None, FootPlacement()
    for name, animation, legs, placement in GLTF:
        path = SHARED / "gltf" / name
        if path.exists():
            label = f"{path.stem}{'/' + animation if animation else ''} walked"
            yield label, read_clip(path, animation=animation).motion, legs, placement


def measure(grounds: list[str]) -> list[dict]:
    rows = []
    for label, motion, legs, placement in cases():
        for ground in grounds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                placed = place_clip(motion, ground, ["full"], legs, placement)
            r = placed.results["full"]
            m = result_summary(r, placed.source, placed.world(), placed.source_fk)
            rows.append({"clip": label, "ground": ground, **m})
            print(".", end="", flush=True)
    print()
    return rows


def cell(row: dict | None, key: str, fmt: str) -> str:
    value = None if row is None else row.get(key)
    return "-" if value is None else fmt.format(value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--grounds", default="flat,stairs,slope,bumps,blocks")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--compare", type=Path)
    args = ap.parse_args()
    rows = measure(args.grounds.split(","))
    if args.save:
        args.save.write_text(json.dumps(rows, indent=1))
    before = {}
    if args.compare:
        before = {(r["clip"], r["ground"]): r for r in json.loads(args.compare.read_text())}
    print("| clip | ground | " + " | ".join(h for _, h, _ in COLUMNS) + " |")
    print("|---" * (2 + len(COLUMNS)) + "|")
    for row in rows:
        old = before.get((row["clip"], row["ground"]))
        cells = []
        for key, _, fmt in COLUMNS:
            now = cell(row, key, fmt)
            cells.append(now if old is None else f"{cell(old, key, fmt)} -> {now}")
        print(f"| {row['clip']} | {row['ground']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
