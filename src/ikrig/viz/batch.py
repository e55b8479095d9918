"""The metric distributions of a batch (``ikrig plot batch summary.json``): one histogram
per metric over the clips done, the median marked, the worst clip named."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ._mpl import finish, new_figure

__all__ = ["plot_batch_summary"]

#: the metrics drawn, in this order (those the summary has)
METRICS = (
    "pen_p95", "float_p95", "skate", "skate_rel", "height_dev_p95", "planted_shift",
    "pelvis_rise", "pops",
)  # fmt: skip


def plot_batch_summary(summary: dict[str, Any], path: str | os.PathLike[str] | None = None):
    """Histograms of each metric over a batch's ``ok`` clips (``summary`` as written by
    ``ikrig batch --report``); saved to ``path`` when given. Returns the figure."""
    ok = [e for e in summary.get("entries", []) if e.get("status") == "ok"]
    names = [m for m in METRICS if any((e.get("metrics") or {}).get(m) is not None for e in ok)]
    cols = 4
    rows = max(1, math.ceil(len(names) / cols))
    fig = new_figure(3.2 * cols, 2.6 * rows + 0.6)
    fig.suptitle(
        f"{summary.get('clips', len(ok))} clips: {len(ok)} ok, {summary.get('failed', 0)}"
        " failed (lengths in % of the leg length)"
    )
    for i, name in enumerate(names):
        ax = fig.add_subplot(rows, cols, i + 1)
        values = np.array(
            [e["metrics"][name] for e in ok if e["metrics"].get(name) is not None], dtype=float
        )
        values = values[np.isfinite(values)]
        ax.hist(values, bins=min(30, max(5, len(values) // 2)), color="#4878a8")
        median = float(np.median(values)) if len(values) else math.nan
        ax.axvline(median, color="#d9622b", lw=1.5, label=f"median {median:.3g}")
        ax.set_title(name, fontsize=10)
        ax.set_ylabel("clips", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.legend(fontsize=7, loc="upper right")
    if not names:
        fig.add_subplot(1, 1, 1).text(0.5, 0.5, "no clip done", ha="center", va="center")
    fig.tight_layout()
    return finish(fig, path)
