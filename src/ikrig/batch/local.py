"""The local runner: a pool of worker processes on this machine (no server, no extra).

Clips are handed out in a bounded window (twice the workers), so memory stays flat however
long the list is; results come back as small :class:`~ikrig.batch.job.ClipOutcome` records.
A worker that dies (killed, out of memory, a crash in compiled code) breaks the pool:
the runner starts a new pool and hands the unfinished clips out again, at most
:data:`MAX_TRIES` times each; a clip that keeps killing workers is recorded as failed.

On a cold cache (a first batch after installing) every worker would compile the same
kernels at once, each as slowly as one process alone. So the first worker compiles ahead
instead (:func:`ikrig.app.warmup.place_ahead`, the job ``ikrig foot``'s helper runs) while the
next takes the first clip: the two compile different kernels, and the clips after them
find the cache warm. ``IKRIG_COMPILE_AHEAD=0`` switches this off.

Workers do not wait for the disk: their tasks have ``sync=False``, so each output is
written and renamed atomically and the batch process flushes it to disk before recording
the clip (:func:`ikrig.batch.run.run_batch`), while the worker goes on with its next clip.

Workers are forked from the batch process where that is safe (Linux, one thread, Numba's
thread pool not started), so they start with what it has imported and loaded, in
milliseconds; anywhere else they are spawned (a new interpreter, about a second each). They
use ``cores / jobs`` compute threads each. A worker whose batch process disappears (killed)
finishes the clip it is writing and exits, so no orphan keeps working or leaves a temporary
file behind.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from .job import ClipOutcome, ClipTask, run_clip

__all__ = ["MAX_TRIES", "run_local", "start_method"]

MAX_TRIES = 3
"""How many times a clip is handed to a worker before a dying worker marks it failed."""

OnDone = Callable[[ClipTask, ClipOutcome], None]

_BUSY = threading.Lock()


def _watch_parent(parent: int) -> None:
    """Exit when the batch process is gone, but never in the middle of a clip."""
    while True:
        time.sleep(0.25)
        if os.getppid() != parent:
            with _BUSY:
                os._exit(1)


def _exit_now() -> None:
    """The worker's last act: leave without tearing down the interpreter.

    Registered with :mod:`atexit`, so it runs after the pool's worker loop has returned and
    multiprocessing has flushed the result queue. Tearing down an interpreter that loaded
    Numba and LLVM takes 0.4-0.7 s, which the batch would wait for at its end."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _start_worker(parent: int, threads: int, inherited: tuple[int, ...]) -> None:
    """Pool initializer: close the batch process's files a forked worker inherited
    (``inherited``), set the compute threads, watch the batch process, exit quickly.
    Ctrl-C (SIGINT to the terminal's whole process group) is the batch process's to
    handle: a worker ignores it and finishes its clip, instead of printing a
    ``KeyboardInterrupt`` traceback from the pool's queue under the batch's one line."""
    from .._jit.setup import numba

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for fd in inherited:
        os.close(fd)

    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    atexit.register(_exit_now)


def _run_guarded(task: ClipTask) -> ClipOutcome:
    """:func:`~ikrig.batch.job.run_clip` while holding the worker's busy lock."""
    with _BUSY:
        return run_clip(task)


def _died(task: ClipTask, tries: int) -> ClipOutcome:
    return ClipOutcome(
        task.relative, "failed",
        f"the worker process died {tries} times on this clip (killed, out of memory or a"
        " crash)", {}, 0, 0.0, None, [],
    )  # fmt: skip


def start_method() -> str:
    """``"fork"`` when forking this process is safe: on Linux (macOS's system libraries are
    not fork-safe), with no thread besides this one (a fork copies locks other threads may
    hold) and Numba's thread pool not started (OpenMP's is not fork-safe); else
    ``"spawn"``."""
    from .._jit.setup import numba

    try:
        numba.threading_layer()  # raises until a parallel kernel has run
        pool_started = True
    except ValueError:
        pool_started = False
    alone = threading.active_count() == 1
    linux = sys.platform.startswith("linux")
    return "fork" if linux and alone and not pool_started else "spawn"


def _new_pool(jobs: int, inherited: tuple[int, ...]) -> ProcessPoolExecutor:
    threads = max(1, (os.cpu_count() or 1) // jobs)
    method = start_method()
    return ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context(method),
        initializer=_start_worker,
        initargs=(os.getpid(), threads, inherited if method == "fork" else ()),
    )


def _compile_ahead() -> None:
    """Pool task on a cold cache: :func:`ikrig.app.warmup.place_ahead`, best effort (a
    failure here costs only time: the clips compile what it did not)."""
    from ..app.warmup import place_ahead

    try:
        with _BUSY:
            place_ahead()
    except Exception:
        pass


def _one_pool(
    jobs: int,
    todo: deque[ClipTask],
    tries: dict[str, int],
    on_done: OnDone,
    inherited: tuple[int, ...],
    ahead: bool = False,
) -> None:
    """Run clips from ``todo`` on one pool until it is empty or the pool breaks; clips a
    broken pool lost go back to the front of ``todo``. ``ahead``: one worker compiles
    ahead first (:func:`_compile_ahead`) while the next takes the first clip."""
    pool = _new_pool(jobs, inherited)
    # handed out first: the clips queue behind it
    helper = pool.submit(_compile_ahead) if ahead else None
    running: dict[Future[ClipOutcome], ClipTask] = {}
    broken = False
    try:
        while (todo or running) and not broken:
            while todo and len(running) < 2 * jobs:
                task = todo.popleft()
                try:
                    running[pool.submit(_run_guarded, task)] = task
                except BrokenProcessPool:
                    todo.appendleft(task)
                    broken = True
                    break
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            if any(isinstance(f.exception(), BrokenProcessPool) for f in finished):
                broken = True
                finished, _ = wait(running)  # a broken pool fails all its futures at once
            lost = []
            for fut in finished:
                task = running.pop(fut)
                exc = fut.exception()
                if exc is None:
                    on_done(task, fut.result())
                elif not isinstance(exc, BrokenProcessPool):
                    raise exc  # a bug in the runner itself, never a bad clip
                else:
                    tries[task.relative] = tries.get(task.relative, 0) + 1
                    if tries[task.relative] >= MAX_TRIES:
                        on_done(task, _died(task, tries[task.relative]))
                    else:
                        lost.append(task)
            todo.extendleft(reversed(lost))
    finally:
        # the clips are done: a helper still compiling is not waited for (a batch of
        # broken clips would wait for it), it is stopped; its cache files are whole
        _close(pool, 10.0 if helper is None or helper.done() else 0.5)


def _close(pool: ProcessPoolExecutor, timeout: float = 10.0) -> None:
    """Shut the pool down without hanging: a worker killed while it held the result queue's
    lock leaves the others unable to say goodbye, so stragglers are killed after
    ``timeout`` (all their clips are finished or lost by then)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # CPython's
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + timeout
    for p in processes:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()


def run_local(
    tasks: Iterable[ClipTask], jobs: int, on_done: OnDone, inherited: tuple[int, ...] = ()
) -> None:
    """Run every task on ``jobs`` worker processes; ``on_done(task, outcome)`` is called in
    this process as each one finishes (in completion order). ``inherited``: file
    descriptors of this process a forked worker closes as it starts, such as the output
    folder's lock, which a worker finishing its clip after the batch was killed would
    otherwise hold against the re-run. The tasks run with ``sync=False`` (module
    docstring): the outcomes list the files for ``on_done`` to flush to disk."""
    todo: deque[ClipTask] = deque(t._replace(sync=False) for t in tasks)
    tries: dict[str, int] = {}
    ahead = jobs >= 2 and bool(todo) and _first_run()
    while todo:
        _one_pool(jobs, todo, tries, on_done, inherited, ahead)
        ahead = False  # a pool that broke: its kernels are compiled by now


def _first_run() -> bool:
    """Whether the workers would all compile the same kernels at once: a cold cache
    (:func:`ikrig.app.warmup.cache_is_cold`), where compiling ahead is wanted
    (:func:`ikrig.app.warmup.ahead_wanted`)."""
    from ..app.warmup import ahead_wanted, cache_is_cold

    return ahead_wanted() and cache_is_cold()
