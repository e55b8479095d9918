"""Whole clip libraries: ``ikrig foot`` on every clip, on all cores or on a Dask cluster.

- :mod:`~ikrig.batch.inputs`: files, folders and globs to clips and mirrored outputs;
- :mod:`~ikrig.batch.job`: one clip, exactly as ``ikrig foot`` does it, in a worker;
- :mod:`~ikrig.batch.manifest`: what is done (input and options hashes, status, metrics);
- :mod:`~ikrig.batch.local` and :mod:`~ikrig.batch.cluster`: the two runners;
- :mod:`~ikrig.batch.run`: a whole batch; :mod:`~ikrig.batch.summary`: the summary.
"""

from .inputs import ALL_ANIMATIONS, ClipPath, each_animation, expand_inputs
from .job import ClipOutcome, ClipTask, FootJob, run_clip
from .manifest import MANIFEST_NAME, Manifest
from .run import LOCK_NAME, BatchInterrupted, BatchSettings, default_jobs, legs_map, run_batch
from .summary import batch_summary, summary_table, write_report

__all__ = [
    "ALL_ANIMATIONS",
    "LOCK_NAME",
    "MANIFEST_NAME",
    "BatchInterrupted",
    "BatchSettings",
    "ClipOutcome",
    "ClipPath",
    "ClipTask",
    "FootJob",
    "Manifest",
    "batch_summary",
    "default_jobs",
    "each_animation",
    "expand_inputs",
    "legs_map",
    "run_batch",
    "run_clip",
    "summary_table",
    "write_report",
]
