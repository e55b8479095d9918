"""A whole batch: which clips still need doing, running them (locally or on a cluster),
recording each in the manifest as it finishes, and the summary."""

from __future__ import annotations

import fnmatch
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from .._files import sync_files
from ..errors import IkrigError, InputError
from .inputs import ClipPath
from .job import (
    ClipOutcome,
    ClipTask,
    FootJob,
    clip_sha256,
    one_line,
    options_hash,
    remove_stale_parts,
)
from .manifest import MANIFEST_NAME, Manifest
from .summary import batch_summary

__all__ = ["BatchSettings", "legs_map", "run_batch"]


class BatchSettings(NamedTuple):
    """How a batch runs: the output folder, ``jobs`` local workers or a Dask ``scheduler``
    address, ``force`` (redo finished clips), a progress bar, the legs (one spec for every
    clip, or a map of patterns to specs, see :func:`legs_map`)."""

    out_dir: str
    jobs: int = 1
    scheduler: str | None = None
    force: bool = False
    progress: bool = True
    legs: str | dict[str, str] | None = None


def legs_map(value: str | None) -> str | dict[str, str] | None:
    """``--legs``: a spec (``hip,knee,ankle[,toe];...``) for every clip, or a JSON file
    mapping glob patterns (matched against the clip's path relative to the inputs, then its
    file name; the first match wins) to specs, for libraries of mixed rigs."""
    if value is None or not value.lower().endswith(".json"):
        return value
    try:
        data = json.loads(Path(value).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"--legs {value}: cannot read the legs map ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise InputError(f"--legs {value}: expected a JSON object of pattern -> legs spec")
    return data


def _legs_for(legs: str | dict[str, str] | None, relative: str) -> str | None:
    if not isinstance(legs, dict):
        return legs
    name = relative.rsplit("/", 1)[-1]
    for pattern, spec in legs.items():
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern):
            return spec
    return None


LOCK_NAME = ".ikrig_batch.lock"
"""The lock file a running batch holds in its output folder (removed when it ends)."""


class BatchInterrupted(IkrigError):
    """The batch was interrupted (Ctrl-C); the message says how far it got and how to go
    on. Every clip it finished is recorded, so the same command resumes."""


@contextmanager
def _locked(out_dir: Path) -> Iterator[int | None]:
    """One batch at a time per output folder (released by the OS if the batch is killed);
    yields the lock's file descriptor (None where there is no lock). The lock file is
    removed when the batch ends; a batch that locked a file another one had just removed
    (the path no longer names it) tries again."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield None
        return
    path = out_dir / LOCK_NAME
    for _ in range(100):
        f = open(path, "a")  # noqa: SIM115 - closed below, after the lock file is removed
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise InputError(f"another ikrig batch is writing to {out_dir}") from None
        if _same_file(f, path):
            break
        f.close()
    try:
        yield f.fileno()
    finally:
        try:
            path.unlink()
        except OSError:
            pass
        f.close()


def _same_file(f: Any, path: Path) -> bool:
    """Whether the open file ``f`` is still the file at ``path``."""
    try:
        return os.path.samestat(os.fstat(f.fileno()), os.stat(path))
    except OSError:
        return False


def _plan(
    clips: list[ClipPath], job: FootJob, settings: BatchSettings, manifest: Manifest
) -> tuple[list[ClipTask], list[str]]:
    """The tasks still to do, and the clips skipped as already done."""
    todo, skipped = [], []
    for c in clips:
        legs = _legs_for(settings.legs, c.relative)
        mine = job if c.animation is None else job._replace(animation=c.animation)
        opts = options_hash(mine, legs)
        if not settings.force and c.relative in manifest.entries:
            try:
                done = manifest.is_done(c.relative, clip_sha256(c.source), opts)
            except Exception:  # noqa: BLE001 - one clip never stops the batch: it is redone
                done = False
            if done:
                skipped.append(c.relative)
                continue
        todo.append(ClipTask(os.path.abspath(c.source), c.relative, str(c.output), legs, mine))
    return todo, skipped


class _Progress:
    """The bar: clips done of the total (rate, ETA), frames done and frames per second."""

    def __init__(self, total: int, show: bool) -> None:
        from tqdm import tqdm

        class Bar(tqdm):
            monitor_interval = 0  # no monitor thread: the workers fork from this process

        self.bar = Bar(total=total, unit="clip", disable=not show, dynamic_ncols=True)
        self.frames, self.failed, self.t0 = 0, 0, time.perf_counter()

    def step(self, outcome: ClipOutcome) -> None:
        self.frames += outcome.frames
        self.failed += outcome.status != "ok"
        rate = self.frames / max(time.perf_counter() - self.t0, 1e-9)
        self.bar.set_postfix(frames=self.frames, fps=f"{rate:.0f}", failed=self.failed)
        self.bar.update(1)


def _synced(outcome: ClipOutcome) -> ClipOutcome:
    """``outcome`` once the files its worker left unflushed are on disk, so that a clip is
    recorded as done only when its output survives a crash of the operating system; a clip
    whose output cannot be flushed fails with the reason."""
    if not outcome.unsynced:
        return outcome
    try:
        sync_files(outcome.unsynced)
    except OSError as exc:
        error = f"cannot flush the output to disk: {one_line(exc)}"
        return outcome._replace(status="failed", error=error, metrics={}, unsynced=())
    return outcome._replace(unsynced=())


def run_batch(clips: list[ClipPath], job: FootJob, settings: BatchSettings) -> dict[str, Any]:
    """Do every clip not yet done; return the summary (:func:`batch_summary`) of all of
    them. A bad clip is recorded as failed and the batch goes on."""
    t0 = time.perf_counter()
    out_dir = Path(settings.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with _locked(out_dir) as lock:
        # left by a killed batch (its workers finish the clip they write, but a worker
        # killed mid-write leaves its temporary file); this run's, at its end
        remove_stale_parts([out_dir / MANIFEST_NAME, *(Path(c.output) for c in clips)])
        manifest = Manifest(out_dir)
        todo, skipped = _plan(clips, job, settings, manifest)
        hashes = {t.relative: options_hash(t.job, t.legs) for t in todo}
        bar = _Progress(len(todo), settings.progress)

        done: list[str] = []

        def on_done(task: ClipTask, outcome: ClipOutcome) -> None:
            outcome = _synced(outcome)
            manifest.record(outcome, (task.source, task.output), hashes[task.relative])
            bar.step(outcome)
            done.append(task.relative)

        manifest.open()
        interrupted = False
        try:
            if not todo:
                pass
            elif settings.scheduler:
                from .cluster import run_cluster

                run_cluster(todo, settings.scheduler, on_done)
            else:
                from .local import run_local

                mine = (lock, manifest.fileno())  # workers must not hold them (see run_local)
                run_local(todo, settings.jobs, on_done, tuple(fd for fd in mine if fd is not None))
        except KeyboardInterrupt:
            interrupted = True
        finally:
            bar.bar.close()
            manifest.close()
            remove_stale_parts(Path(t.output) for t in todo)  # from workers killed writing
    if interrupted:
        left = len(todo) - len(done)
        raise BatchInterrupted(
            f"interrupted: {len(done)} of {len(todo)} clips done in this run"
            f" ({len(skipped)} were done before), {left} left; run the same command to resume"
        )
    entries = manifest.select(c.relative for c in clips)
    return batch_summary(entries, len(skipped), time.perf_counter() - t0)


def default_jobs() -> int:
    """Worker processes by default: one per core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
