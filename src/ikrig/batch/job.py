"""One clip of a batch: what ``ikrig foot IN -g GROUND -o OUT --mode M`` does, in a worker.

:func:`run_clip` reads its own clip, places the feet with the same functions, in the same
order and with the same options as ``ikrig foot`` (so the written file is byte-identical),
writes the result atomically and returns a small :class:`ClipOutcome`: status, one-line
error, metrics. It never raises for a bad clip; the batch goes on. A local batch's worker
leaves the flush to disk to the batch process (``ClipTask.sync``), which does it before
recording the clip, while the worker goes on with its next one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
import warnings
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, NamedTuple

from .._files import deferred_sync
from .._version import __version__
from ..errors import IkrigError

__all__ = [
    "BASELINE", "ClipOutcome", "ClipTask", "FootJob", "clip_sha256", "file_sha256", "options_hash",
    "remove_stale_parts", "run_clip",
]  # fmt: skip

#: metrics of the report row that are not quality values
_NOT_METRICS = ("frames", "frame_time", "leg_length")

BASELINE = "baseline_"
"""The prefix of a clip's metrics measured on the do-nothing baseline (root on the ground,
no IK), recorded beside the result's so that a batch can say where it did worse."""


class FootJob(NamedTuple):
    """The ``ikrig foot`` options of a batch (``legs`` may differ per clip: see
    :class:`ClipTask`). ``ground_sha256`` is the mesh file's hash (None for a built-in).
    ``animation``, ``fps`` and ``skin`` choose and sample a glTF file's clip (a BVH file has
    one);
    ``at``, ``heading`` (radians), ``path`` (a CSV file, hashed as ``path_sha256``), ``walk``
    and ``cycles`` place it as :class:`~ikrig.app.placement.FootPlacement` does."""

    ground: str
    mode: str = "full"
    seed: int = 0
    datum: str = "clip"
    up: str = "auto"
    ground_sha256: str | None = None
    animation: str | None = None
    fps: float | None = None
    at: tuple[float, float] | None = None
    heading: float | None = None
    path: str | None = None
    path_sha256: str | None = None
    walk: bool = False
    cycles: int = 1
    skin: str | None = None


_PLACING = (
    "animation", "fps", "at", "heading", "path", "path_sha256", "walk", "cycles", "skin",
)  # fmt: skip
"""The :class:`FootJob` fields a batch hashes only when they are not at their default, so
that the manifests of batches run before they existed stay valid."""


class ClipTask(NamedTuple):
    """One clip to do: paths only (each worker reads its own clip), its legs spec, the job;
    ``sync``: flush the output to disk before returning (else the outcome lists the files
    written, for :func:`ikrig._files.sync_files` in the batch process)."""

    source: str
    relative: str
    output: str
    legs: str | None
    job: FootJob
    sync: bool = True


class ClipOutcome(NamedTuple):
    """What a worker sends back: no arrays, a few hundred bytes."""

    relative: str
    status: str  # "ok" or "failed"
    error: str | None
    metrics: dict[str, float | None]
    frames: int
    seconds: float
    input_sha256: str | None
    warnings: list[str]
    unsynced: tuple[str, ...] = ()  # files written, not yet flushed to disk (ClipTask.sync)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def clip_sha256(path: str | os.PathLike[str], data: bytes | None = None) -> str:
    """The SHA-256 of a clip: its file's bytes (``data`` if already read) and, for a
    ``.gltf``, those of the files its buffers and images name in its folder tree (in
    subfolders too), in order, so that editing a ``.bin`` redoes the clip. A file missing,
    not regular, or outside the folder (unless ``ikrig --allow-outside``) counts as empty:
    reading the clip reports it."""
    from ..io.gltf.uri import external_path, outside_allowed

    data = Path(path).read_bytes() if data is None else data
    h = hashlib.sha256(data)
    if Path(path).suffix.lower() == ".gltf":
        folder = Path(path).parent
        for uri in _external_uris(data):
            try:
                file = external_path(folder, uri, str(path), "uri", outside_allowed(None))
                if file.is_file():  # not a device or a FIFO
                    h.update(file.read_bytes())
            except (IkrigError, OSError, ValueError):
                pass
    return h.hexdigest()


def _external_uris(gltf_json: bytes) -> list[str]:
    """The file URIs (as written, percent-encoded) of a glTF document's buffers and images."""
    try:
        doc = json.loads(gltf_json)
    except ValueError:  # a malformed file: reading the clip reports it
        return []
    items = [*doc.get("buffers", []), *doc.get("images", [])] if isinstance(doc, dict) else []
    uris = [i.get("uri") for i in items if isinstance(i, dict)]
    return [u for u in uris if isinstance(u, str) and not u.startswith("data:")]


def options_hash(job: FootJob, legs: str | None) -> str:
    """A hash of everything besides the clip that decides the output (ikrig's version too)."""
    data = {**job._asdict(), "legs": legs, "version": __version__}
    for key in _PLACING:
        if data[key] == FootJob._field_defaults[key]:
            del data[key]
    if job.ground_sha256 is not None:
        data["ground"] = os.path.basename(job.ground)  # the mesh's bytes count, not its path
    if job.path_sha256 is not None:
        data["path"] = os.path.basename(job.path or "")  # the path's bytes count
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def remove_stale_parts(outputs: Iterable[Path]) -> None:
    """Remove the temporary files killed writers left beside these outputs
    (``.NAME.*.part.SUFFIX``, see :func:`ikrig._files.atomic_path`): one listing per folder,
    however many outputs it holds."""
    names: dict[Path, set[str]] = {}
    for output in outputs:
        names.setdefault(output.parent, set()).add(output.name)
    for folder, mine in names.items():
        try:
            entries = list(os.scandir(folder))
        except OSError:  # not made yet
            continue
        for entry in entries:
            name, part = entry.name, entry.name.rfind(".part")
            # ".NAME.RANDOM.part.SUFFIX": mkstemp's RANDOM has no dot
            if name.startswith(".") and part > 0 and name[1:part].rpartition(".")[0] in mine:
                Path(entry.path).unlink(missing_ok=True)


def one_line(exc: BaseException) -> str:
    """An error as one line: ikrig's messages as they are, others with their type."""
    text = " ".join(str(exc).split())
    if isinstance(exc, IkrigError):
        return text or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": {exc.filename}" if exc.filename else "")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _scalars(row: dict[str, Any]) -> dict[str, float | None]:
    return {
        k: (None if v is None else float(v))
        for k, v in row.items()
        if k not in _NOT_METRICS and (v is None or isinstance(v, (int, float)))
    }


def _place(task: ClipTask, data: bytes) -> tuple[dict[str, float | None], int]:
    """``ikrig foot`` on one clip (the same :func:`ikrig.app.placement.place_clip` and writer),
    whose file's bytes are ``data``; writes the output, returns the result's metrics (the
    report's row of the mode) and frame count."""
    from ..app.placement import FootPlacement, clip_with_time, place_clip, result_summary
    from ..character.up import detect_up, from_y_up, to_y_up
    from ..io.clips import clip_format, write_clip

    job = task.job
    gltf = clip_format(task.source) == "gltf"  # (a BVH file has one clip, at its own rate)
    clip = clip_with_time(
        task.source, job.animation if gltf else None, data, job.fps if gltf else None,
        skin=job.skin if gltf else None,
    )  # fmt: skip
    up = detect_up(clip.motion) if job.up == "auto" else job.up
    motion = to_y_up(clip.motion, up)
    at, heading, path, walk, cycles = job.at, job.heading, job.path, job.walk, job.cycles
    placement = FootPlacement(job.seed, job.datum, up, at, heading, path, walk, cycles)
    placed = place_clip(motion, job.ground, [job.mode], task.legs, placement)
    result = placed.results[job.mode]
    # measured before writing, while the arrays are in the CPU's caches; then everything
    # but the output is let go, so that the writer's large buffers reuse that memory
    # instead of faulting in fresh pages (together about 1.4 ms of a 25 ms clip)
    measured = (placed.source, placed.world(), placed.source_fk)
    metrics = _scalars(result_summary(result, *measured))
    metrics["ground_missing_frames"] = float((~result.info.ground_found).any(axis=1).sum())
    baseline = _scalars(
        result_summary(dataclasses.replace(result, motion=result.baseline), *measured)
    )
    metrics.update({BASELINE + k: v for k, v in baseline.items()})
    out = from_y_up(result.motion, up)
    del placed, result, motion
    Path(task.output).parent.mkdir(parents=True, exist_ok=True)
    write_clip(task.output, clip, out)
    return metrics, int(clip.motion.num_frames)


def run_clip(task: ClipTask) -> ClipOutcome:
    """Do one clip; a bad clip comes back ``failed`` with its one-line error."""
    t0 = time.perf_counter()
    sha: str | None = None
    caught: list[warnings.WarningMessage] = []
    try:
        data = Path(task.source).read_bytes()  # read once: hashed, then parsed
        sha = clip_sha256(task.source, data)
        # the files written and left unflushed (none when the worker flushes them)
        writing: AbstractContextManager[list[str]] = (
            nullcontext([]) if task.sync else deferred_sync()
        )
        with warnings.catch_warnings(record=True) as caught, writing as written:
            warnings.simplefilter("always")
            metrics, frames = _place(task, data)
    except Exception as exc:  # a bad clip is recorded, never stops the batch
        return ClipOutcome(
            task.relative, "failed", one_line(exc), {}, 0, time.perf_counter() - t0, sha, []
        )
    said = sorted({" ".join(str(w.message).split()) for w in caught})
    seconds = time.perf_counter() - t0
    return ClipOutcome(
        task.relative, "ok", None, metrics, frames, seconds, sha, said, tuple(written)
    )
