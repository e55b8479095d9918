"""The foot-placement report: metrics of the result beside the do-nothing baseline (and any
other modes run for comparison), as a JSON-ready dict and a printed table."""

from __future__ import annotations

from ..foot.offline import FootResult
from ..ground.views import RaisedGround
from ..metrics import foot_metrics, metrics_table, worse_than


def foot_report(results: dict[str, FootResult], source, ground, extra: dict | None = None):
    """Metrics for the baseline and every result.

    Args:
        results: label (a mode name) -> :class:`FootResult`, all from the same ``source``.
        source: the input clip.
        ground: the ground where the pipeline stood the feet (world, after the datum); the
            metrics read it with the clip's floor at its ``y = 0``, so each foot joint is
            measured against its own floor in the source (:mod:`ikrig.metrics`).
        extra: more fields to put in the report (clip path, ground name, ...).

    Returns:
        ``(report dict, table text)``. The report has ``rows`` (label -> the dict of
        :func:`~ikrig.metrics.foot_metrics`, with its ``per_foot`` and ``per_joint`` parts,
        and for every result its ``worse_than_baseline`` keys: :func:`~ikrig.metrics.worse_than`),
        the legs, leg length, floor, frame count and the frames where the ground was missing.
        The table has one line per row (:func:`~ikrig.metrics.metrics_table`).
    """
    first = next(iter(results.values()))
    floors = RaisedGround(ground, -first.sole.floor)
    rows = {"baseline": foot_metrics(first.baseline, source, floors, first.legs)}
    for label, r in results.items():
        rows[label] = foot_metrics(r.motion, source, floors, r.legs)
        rows[label]["worse_than_baseline"] = worse_than(rows[label], rows["baseline"])
    report = {
        **(extra or {}),
        "frames": int(source.num_frames),
        "frame_time": float(source.frame_time),
        "legs": first.legs.describe(source.skeleton),
        "leg_length": float(first.legs.leg_length),
        "floor": float(first.sole.floor),
        "contact_fraction": [float(v) for v in first.contacts.mean(axis=0)],
        "ground_missing_frames": int((~first.info.ground_found).any(axis=1).sum()),
        "rows": rows,
    }
    return report, metrics_table(list(rows.items()))
