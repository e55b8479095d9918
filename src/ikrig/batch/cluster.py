"""The cluster runner: the same clips on an existing Dask distributed cluster.

Needs the ``[cluster]`` extra (``dask[distributed]``), imported only here, only when used.
One task per clip carries the clip's paths and options (a few hundred bytes), never the
clip list or the clip itself: each task reads its own clip and writes its own result
atomically, so the workers must see the same files as the batch (a shared file system).
Tasks are submitted in a bounded window (four per worker thread, at least 16), so memory
stays flat. A worker that dies takes its tasks with it and the scheduler runs them again
elsewhere; a task that raises is retried twice. A clip that keeps killing workers ends as
failed with the scheduler's reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InputError
from .job import ClipOutcome, ClipTask, run_clip

__all__ = ["SCHEDULER_ENV", "run_clip_one_thread", "run_cluster", "scheduler_address"]

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"

OnDone = Callable[[ClipTask, ClipOutcome], None]


def scheduler_address(given: str | None) -> str | None:
    """The scheduler to use: ``--scheduler``, else ``$DASK_SCHEDULER_ADDRESS``, else None
    (run locally)."""
    return given or os.environ.get(SCHEDULER_ENV) or None


def _client(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise InputError(
            "--scheduler needs Dask distributed: pip install 'ikrig[cluster]'"
        ) from None
    try:
        return Client(address, timeout=30)
    except OSError as exc:
        raise InputError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def _failed(task: ClipTask, exc: BaseException) -> ClipOutcome:
    text = " ".join(str(exc).split())
    return ClipOutcome(
        task.relative, "failed", f"{type(exc).__name__}: {text}"[:300], {}, 0, 0.0, None, []
    )


def run_clip_one_thread(task: ClipTask) -> ClipOutcome:
    """:func:`~ikrig.batch.job.run_clip` on one compute thread: a Dask worker runs one task
    per worker thread, so the cluster's threads (``dask worker --nthreads``) are the cores
    used."""
    from .._jit.setup import numba

    numba.set_num_threads(1)
    return run_clip(task)


def run_cluster(tasks: Iterable[ClipTask], address: str, on_done: OnDone) -> None:
    """Run every task on the cluster at ``address``; ``on_done(task, outcome)`` is called
    in this process as each one finishes."""
    from distributed import as_completed

    client = _client(address)
    try:
        threads = sum(client.nthreads().values())
        window = max(16, 4 * threads)
        todo = iter(tasks)
        running: dict[str, ClipTask] = {}
        queue = as_completed()

        def submit_next() -> bool:
            task = next(todo, None)
            if task is None:
                return False
            fut = client.submit(run_clip_one_thread, task, retries=2, pure=False)
            running[fut.key] = task
            queue.add(fut)
            return True

        while len(running) < window and submit_next():
            pass
        for fut in queue:
            task = running.pop(fut.key)
            try:
                outcome = fut.result()
            except Exception as exc:  # KilledWorker and the like: the scheduler gave up
                outcome = _failed(task, exc)
            fut.release()
            on_done(task, outcome)
            submit_next()
    finally:
        client.close()
