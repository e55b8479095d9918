"""The clip metrics as a fixed-width text table (:func:`metrics_table`), as ``ikrig foot
--report`` and the benchmarks print them."""

from __future__ import annotations

import math

__all__ = ["TABLE_COLUMNS", "metrics_table", "table_cell"]

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
    ("misses", "misses", "{:d}"),
)
"""The columns of :func:`metrics_table` (and the benchmark's table): ``(key, header, format)``."""


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

    Returns:
        The table (header, unit line, rule, one line per row), lines joined by ``\\n``:
        the columns of :data:`TABLE_COLUMNS`, each as wide as its widest cell.
    """
    rows = list(rows)
    cells = [[table_cell(m.get(key), fmt) for key, _, fmt in TABLE_COLUMNS] for _, m in rows]
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
        " changed, ikrig.metrics_fidelity; ext max: straightest leg, 1 is straight)",
        "-" * len(header),
    ]
    for (label, _), row in zip(rows, cells):
        lines.append(
            str(label).ljust(label_w) + "".join(" " + c.rjust(w) for c, w in zip(row, widths))
        )
    return "\n".join(lines)
