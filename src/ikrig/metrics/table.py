"""The clip metrics as a fixed-width text table (:func:`metrics_table`), as ``ikrig foot
--report`` and the benchmarks print them."""

from __future__ import annotations

import math

__all__ = ["BETTER", "TABLE_COLUMNS", "metrics_table", "table_cell", "worse_than"]

TABLE_COLUMNS = (  # (key, header, format)
    ("pen_p95", "pen p95", "{:.3f}"),
    ("pen_max", "pen max", "{:.3f}"),
    ("float_mean", "flt mean", "{:.3f}"),
    ("float_p95", "flt p95", "{:.3f}"),
    ("height_dev_max", "hdev max", "{:.3f}"),
    ("skate_rel", "skate rel", "{:.3f}"),
    ("pops", "pops", "{:d}"),
    ("bone_drift", "bone drift", "{:.1e}"),
    ("pelvis_dev", "pelvis dev", "{:.3f}"),
    ("pelvis_acc_ratio", "acc ratio", "{:.2f}"),
    ("pelvis_change_mean", "pelvis dy", "{:+.2f}"),
    ("joint_disp_p95", "joints p95", "{:.2f}"),
    ("upper_body_change", "upper body", "{:.1e}"),
    ("leg_extension_max", "ext max", "{:.4f}"),
    ("leg_fold", "leg fold", "{:+.2f}"),
    ("misses", "misses", "{:d}"),
)
"""The columns of :func:`metrics_table` (and the benchmark's table): ``(key, header, format)``."""

BETTER = {
    **{
        key: "lower"
        for key in (
            "pen_mean", "pen_p95", "pen_max", "float_mean", "float_p95", "height_dev_p95",
            "height_dev_max", "skate", "skate_rel", "planted_shift", "pops", "bone_drift",
            "pelvis_dev", "pelvis_rise", "pelvis_acc", "pelvis_acc_ratio", "pelvis_change_p95",
            "joint_disp_p95", "joint_disp_worst", "joint_disp_p95_all", "upper_body_change",
            "misses",
        )
    },
    "pelvis_change_mean": "nearer 0",
    "leg_fold": "nearer 0",
}  # fmt: skip
"""Which way each measure is better: ``"lower"``, or ``"nearer 0"`` (a signed change).
Measures not listed (leg extension, the source's own values) have no better way."""

WORSE_MARGIN = (0.02, 1e-3)
"""A value is worse than the baseline's past ``2 %`` of it and ``1e-3`` (rounding and the
noise of float arithmetic are not worse)."""


def worse_than(metrics: dict, baseline: dict) -> list[str]:
    """The keys of :data:`BETTER` in which ``metrics`` are worse than ``baseline`` (the
    do-nothing result's), past :data:`WORSE_MARGIN`; keys missing or ``None`` in either are
    left out."""
    rel, eps = WORSE_MARGIN
    out = []
    for key, way in BETTER.items():
        v, b = metrics.get(key), baseline.get(key)
        if not isinstance(v, (int, float)) or not isinstance(b, (int, float)):
            continue
        if way == "nearer 0":
            v, b = abs(v), abs(b)
        if v > b + max(rel * abs(b), eps):
            out.append(key)
    return out


def table_cell(value, fmt: str) -> str:
    """``value`` formatted with ``fmt``; ``-`` for ``None`` (or a non-finite float)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return fmt.format(value)


def metrics_table(rows) -> str:
    """A fixed-width text table of several metric dicts, one row each.

    Args:
        rows: ``[(label, metrics), ...]`` with ``metrics`` from :func:`foot_metrics` (or its
            ``per_foot`` / ``per_joint`` entries). Missing or ``None`` values print as ``-``.
            A row labelled ``"baseline"`` (the do-nothing result) is what the others are
            held against: a value worse than its (:func:`worse_than`) is marked ``!``.

    Returns:
        The table (header, unit line, rule, one line per row), lines joined by ``\\n``:
        the columns of :data:`TABLE_COLUMNS`, each as wide as its widest cell.
    """
    rows = list(rows)
    base = next((m for label, m in rows if label == "baseline"), None)
    cells = []
    for label, m in rows:
        worse = set() if base is None or label == "baseline" else set(worse_than(m, base))
        cells.append(
            [table_cell(m.get(key), fmt) + "!" * (key in worse) for key, _, fmt in TABLE_COLUMNS]
        )
    widths = [
        max([len(head)] + [len(r[i]) for r in cells])
        for i, (_, head, _) in enumerate(TABLE_COLUMNS)
    ]
    label_w = max([5] + [len(str(label)) for label, _ in rows])
    header = "label".ljust(label_w) + "".join(
        " " + head.rjust(w) for (_, head, _), w in zip(TABLE_COLUMNS, widths)
    )
    lines = [
        header,
        "(% of leg length against each foot joint's floor in the source, contacts from the"
        " source; hdev: a planted joint's height off its recorded one; acc ratio: pelvis"
        " vertical acceleration p99 over the source's; pelvis dy, joints p95, upper body: what"
        " changed, ikrig.metrics.fidelity; ext max: straightest leg, 1 is straight; leg fold:"
        " the most bent leg's mean bend over its recorded one; lower is better, pelvis dy and"
        " leg fold nearer 0; ! worse than the baseline, which does nothing)",
        "-" * len(header),
    ]
    for (label, _), row in zip(rows, cells):
        lines.append(
            str(label).ljust(label_w) + "".join(" " + c.rjust(w) for c, w in zip(row, widths))
        )
    return "\n".join(lines)
