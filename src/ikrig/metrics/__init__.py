"""Judge-grade quality measures of foot placement, against the source clip's own floors.

- :mod:`~ikrig.metrics.contact`: penetration, float, skate, pops, bones, the pelvis
  (:func:`foot_metrics`, :func:`foot_summary`);
- :mod:`~ikrig.metrics.joints`: contacts read off the source, knee angles and pops;
- :mod:`~ikrig.metrics.fidelity`: what changed (pelvis height, joints, upper body, legs);
- :mod:`~ikrig.metrics.table`: the printed table, which way is better, worse than the
  baseline.

The package imports nothing of the foot pipeline: a metric that could agree with the
pipeline's own model by construction would prove nothing.
"""

from .contact import ACC_FLOOR, ACC_WINDOW, foot_metrics, foot_summary
from .fidelity import FIDELITY_KEYS
from .joints import (
    CONTACT_HEIGHT,
    CONTACT_MIN_SPAN,
    CONTACT_SPEED,
    FLOOR_PERCENTILE,
    POP_THRESHOLD,
    POP_WINDOW,
    joint_contacts,
    knee_angles,
    knee_pops,
)
from .table import BETTER, TABLE_COLUMNS, metrics_table, table_cell, worse_than

__all__ = [
    "ACC_FLOOR",
    "ACC_WINDOW",
    "BETTER",
    "CONTACT_HEIGHT",
    "CONTACT_MIN_SPAN",
    "CONTACT_SPEED",
    "FIDELITY_KEYS",
    "FLOOR_PERCENTILE",
    "POP_THRESHOLD",
    "POP_WINDOW",
    "TABLE_COLUMNS",
    "foot_metrics",
    "foot_summary",
    "joint_contacts",
    "knee_angles",
    "knee_pops",
    "metrics_table",
    "table_cell",
    "worse_than",
]
