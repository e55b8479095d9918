"""Compiling ahead on the second core: the first ``ikrig demo`` or ``ikrig foot`` on a
fresh machine.

Numba compiles one kernel at a time in a process, so a first run compiles its kernels one
after the other on one core, in the order it reaches them: the clip (the built-in walk
solves its legs with two-bone IK; a file's parser), then every step of foot placement,
the report's metrics and the writer. On such a first run, :func:`compile_ahead` starts
one helper process that runs the rest of that job on a small made-up clip
(:func:`ikrig.app.warmup.place_ahead`, which says in what order and why) while the command
itself is still busy with its clip. The two share Numba's disk cache: a kernel the helper
has compiled by the time the command reaches it is loaded, not compiled again. Nothing the
helper computes is kept but that cache. (``ikrig batch`` runs the same job in one of its
workers: :mod:`ikrig.batch.local`.)

The helper starts only in a process that compiles, never on a warm cache: at once when the
cache has no leg IK kernel (the command's imports and clip are its head start), else when
the command first compiles (an edited source). It starts only where a second CPU is there,
and never when ``IKRIG_COMPILE_AHEAD=0``. It runs at a lower priority than the command
and is stopped when the command exits. ``ikrig warmup`` compiles everything ahead of time
instead.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys

from .._jit.setup import CACHE_DIR, on_first_compile
from ..app.warmup import AHEAD_ENV, ahead_wanted, cache_is_cold, place_ahead

ENV = AHEAD_ENV
"""Set to ``0`` to never start the helper."""

_started: list[subprocess.Popen] = []


def compile_ahead(modes: list[str]) -> None:
    """Start the helper (see the module): foot placement in ``modes``, its metrics and a
    BVH writer. At once when the cache has no leg IK kernel, else when this process
    first compiles one of ikrig's kernels (an edited source)."""
    if not ahead_wanted():
        return
    if cache_is_cold():
        _start(modes)
    else:
        on_first_compile(lambda: _start(modes))


def _start(modes: list[str]) -> None:
    if _started:
        return
    env = dict(os.environ, **{ENV: "0"})
    if CACHE_DIR:
        env["NUMBA_CACHE_DIR"] = str(CACHE_DIR)
    code = "import sys; from ikrig.cli.ahead import run_ahead; run_ahead(sys.argv[1:])"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *modes],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except OSError:  # best effort: the command compiles everything itself
        return
    _started.append(proc)
    atexit.register(_stop, proc)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            proc.kill()


def run_ahead(modes: list[str]) -> None:
    """The helper process's job: :func:`ikrig.app.warmup.place_ahead` at a lower priority."""
    if hasattr(os, "nice"):
        os.nice(10)
    place_ahead(modes)
