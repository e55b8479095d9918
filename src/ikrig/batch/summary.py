"""What a batch tells its user at the end: counts, the median and worst of each metric, the
failing clips by name; and the ``--report`` files (JSON, and a CSV beside it)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._files import write_text
from ..metrics.table import worse_than
from .job import BASELINE

__all__ = ["batch_summary", "summary_table", "write_report"]

#: metrics shown in the table, in this order (others are in the JSON and CSV only)
TABLE_METRICS = (
    "pen_p95", "pen_max", "float_p95", "skate", "skate_rel", "height_dev_p95",
    "planted_shift", "pops", "bone_drift", "pelvis_dev", "pelvis_rise",
    "pelvis_change_p95", "joint_disp_p95", "upper_body_change",
)  # fmt: skip


def _stats(entries: list[dict[str, Any]]) -> dict[str, dict[str, float | str | int]]:
    """Per metric over the ``ok`` clips: median, worst (largest) and the worst clip."""
    values: dict[str, list[tuple[float, str]]] = {}
    for e in entries:
        for name, v in (e.get("metrics") or {}).items():
            if v is not None and np.isfinite(v):
                values.setdefault(name, []).append((float(v), e["relative"]))
    out: dict[str, dict[str, float | str | int]] = {}
    for name in sorted(values):
        vs = values[name]
        worst = max(vs)
        out[name] = {
            "median": float(np.median([v for v, _ in vs])),
            "worst": worst[0],
            "worst_clip": worst[1],
            "clips": len(vs),
        }
    return out


def _worse_than_baseline(entries: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per measure, the clips whose result is worse than their do-nothing baseline (its
    values recorded with the :data:`~ikrig.batch.job.BASELINE` prefix)."""
    out: dict[str, list[str]] = {}
    for e in entries:
        m = e.get("metrics") or {}
        base = {k[len(BASELINE) :]: v for k, v in m.items() if k.startswith(BASELINE)}
        for key in worse_than(m, base) if base else ():
            out.setdefault(key, []).append(e["relative"])
    return out


def batch_summary(entries: list[dict[str, Any]], skipped: int, seconds: float) -> dict:
    """The JSON-ready summary of a batch: ``entries`` are the manifest entries of every clip
    of this batch (done now, or earlier and ``skipped``). ``worse_than_baseline`` names, per
    measure, the clips placed worse than doing nothing (:func:`~ikrig.metrics.worse_than`)."""
    ok = [e for e in entries if e["status"] == "ok"]
    failed = [e for e in entries if e["status"] != "ok"]
    return {
        "clips": len(entries),
        "done": len(ok) - skipped,
        "skipped": skipped,
        "failed": len(failed),
        "frames": int(sum(e.get("frames") or 0 for e in ok)),
        "seconds": round(seconds, 3),
        "metrics": _stats(ok),
        "worse_than_baseline": _worse_than_baseline(ok),
        "warnings": [
            {"clip": e["relative"], "warnings": e["warnings"]} for e in ok if e.get("warnings")
        ],
        "failures": [{"clip": e["relative"], "error": e["error"]} for e in failed],
        "entries": entries,
    }


def summary_table(summary: dict) -> str:
    """The text printed at the end of a batch."""
    lines = [
        f"clips: {summary['clips']}  done: {summary['done']}  skipped (already done): "
        f"{summary['skipped']}  failed: {summary['failed']}  frames: {summary['frames']}  "
        f"time: {summary['seconds']:.1f} s"
    ]
    stats = summary["metrics"]
    shown = [m for m in TABLE_METRICS if m in stats]
    if shown:
        lines.append(f"  {'metric':<16} {'median':>10} {'worst':>10}  worst clip")
        for m in shown:
            s = stats[m]
            lines.append(f"  {m:<16} {s['median']:>10.4g} {s['worst']:>10.4g}  {s['worst_clip']}")
    worse = summary.get("worse_than_baseline") or {}
    if worse:
        lines.append("  worse than doing nothing (the baseline), clips per measure:")
        for key, clips in sorted(worse.items()):
            lines.append(f"    {key:<20} {len(clips):>4}  {', '.join(clips[:3])}")
    for w in summary.get("warnings") or []:
        lines.append(f"  warning {w['clip']}: {w['warnings'][0]}")
    for f in summary["failures"]:
        lines.append(f"  FAILED {f['clip']}: {f['error']}")
    return "\n".join(lines)


def _csv_text(entries: list[dict[str, Any]]) -> str:
    names = sorted({k for e in entries for k in (e.get("metrics") or {})})
    head = ["clip", "status", "error", "frames", "seconds", "input", "output"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head + names)
    for e in entries:
        m = e.get("metrics") or {}
        row = [e["relative"], e["status"], e.get("error") or "", e.get("frames", 0)]
        row += [e.get("seconds", ""), e["input"], e["output"]]
        w.writerow(row + ["" if m.get(n) is None else m[n] for n in names])
    return buf.getvalue()


def write_report(path: str | os.PathLike[str], summary: dict) -> tuple[Path, Path]:
    """Write the summary as JSON at ``path`` and the per-clip rows as CSV beside it (same
    name, ``.csv``), each atomically; return both paths."""
    path = Path(path)
    csv_path = path.with_suffix(".csv")
    write_text(path, json.dumps(summary, indent=2))
    write_text(csv_path, _csv_text(summary["entries"]))
    return path, csv_path
