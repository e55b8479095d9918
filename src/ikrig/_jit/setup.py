"""Numba set-up: a writable compile cache, threads that wait passively, ``IKRIG_THREADS``,
and a one-time "compiling" notice.

Import this module (not ``numba``) first in every module that defines kernels::

    from .._jit.setup import njit, notify_compiling

Why: ``@njit(cache=True)`` needs a writable directory. When ikrig sits in a read-only
site-packages and HOME is not writable, Numba finds no cache locator and fails at import
("no locator available"). Unless the user set ``NUMBA_CACHE_DIR`` themselves, we point it at
the first writable directory among ``$IKRIG_CACHE_DIR``, ``$XDG_CACHE_HOME/ikrig/numba``,
``~/.cache/ikrig/numba`` and ``<tempdir>/ikrig-numba-<user>``.

A cached kernel is compiled again when the file defining it *or any ikrig module it
compiles in* changes (Numba alone checks only the first: :mod:`ikrig._jit.cache`).

The first call of a kernel in a fresh cache compiles it (tens of seconds for the whole
package). Instead of sitting silent, ikrig prints one line to stderr when Numba starts
compiling one of its cached kernels (Numba's ``"numba:compile"`` event, which fires only
after a cache miss): once per process that compiles, never when everything loads from the
cache. :func:`notify_compiling` is kept for the call sites; the listener is installed when
this module is imported.
"""

from __future__ import annotations

import getpass
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
        return True
    except OSError:
        return False


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def _choose_cache_dir() -> Path | None:
    candidates = []
    if os.environ.get("IKRIG_CACHE_DIR"):
        candidates.append(Path(os.environ["IKRIG_CACHE_DIR"]))
    if os.environ.get("XDG_CACHE_HOME"):
        candidates.append(Path(os.environ["XDG_CACHE_HOME"]) / "ikrig" / "numba")
    try:
        candidates.append(Path.home() / ".cache" / "ikrig" / "numba")
    except RuntimeError:  # no home directory at all
        pass
    candidates.append(Path(tempfile.gettempdir()) / f"ikrig-numba-{_user()}")
    for c in candidates:
        if _writable(c):
            return c
    return None


if not os.environ.get("NUMBA_CACHE_DIR"):
    _dir = _choose_cache_dir()
    if _dir is not None:
        os.environ["NUMBA_CACHE_DIR"] = str(_dir)

# Threads never hurt: between parallel regions OpenMP threads spin by default, and on a
# machine whose other cores are busy a spinning worker steals the time the main thread
# needs (batched calls 1.5x slower with 2 threads than with 1). Passive waiting puts them
# to sleep instead (benchmarks/bench_threads.py). Set before OpenMP loads; a user's own
# OMP_WAIT_POLICY wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402  (must follow the environment set-up above)
import numba.core.event  # noqa: E402
from numba import njit, prange  # noqa: E402,F401

if os.environ.get("NUMBA_CACHE_DIR") and not numba.config.CACHE_DIR:
    # numba was imported before us: its config already read the environment.
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

# a cached kernel is recompiled when any ikrig source it compiles in changes, not only the
# file that defines it (see ikrig._jit.cache)
from .cache import install as _install_kernel_cache  # noqa: E402
from .cache import is_ikrig_module  # noqa: E402

_install_kernel_cache()

CACHE_DIR = numba.config.CACHE_DIR or None

NUMPY_ERRORS = {"error_model": "numpy"}
"""``@njit(**NUMPY_ERRORS)``: a float division by zero gives inf or NaN, as in NumPy, instead
of raising (for kernels that stand for NumPy formulas). Every jitted helper that kernels of
both error models call declares it too: a helper that declares none is compiled with the
error model of the kernel that first called it, for every later one and in the cache
(``tests/test_kernel_options.py``)."""


def _apply_thread_count() -> None:
    """``IKRIG_THREADS=n``: ikrig's parallel kernels use ``n`` threads (clamped to
    ``NUMBA_NUM_THREADS``, Numba's pool size, which is every core by default); a value that
    is not a whole number is ignored with a warning."""
    value = os.environ.get("IKRIG_THREADS", "").strip()
    if not value:
        return
    try:
        count = int(value)
    except ValueError:
        import warnings

        warnings.warn(f"IKRIG_THREADS={value!r} is not a whole number; ignored", stacklevel=2)
        return
    numba.set_num_threads(max(1, min(count, numba.config.NUMBA_NUM_THREADS)))


_apply_thread_count()

_NOTICE = (
    "ikrig: compiling numerical kernels for this machine (first run only; 'ikrig warmup'"
    " compiles them all ahead of time)..."
)


class _CompileNotice(numba.core.event.Listener):
    """Prints the notice when Numba starts compiling one of ikrig's cached kernels, and
    adds up the time spent compiling them (:func:`compile_seconds`).

    Numba broadcasts ``"numba:compile"`` only after the dispatcher failed to load the
    kernel from its disk cache, so the notice follows the cache's real state: silent when
    everything loads, once per process when something compiles (a fresh cache, an edited
    kernel module, another Numba or CPU), whichever process does it.
    """

    def __init__(self):
        self.printed = False
        self.seconds = 0.0
        self._depth = 0  # kernels compiling their callees: only the outermost one is timed
        self._started = 0.0
        self._lock = threading.Lock()

    def on_start(self, event):
        if not _is_ours(event.data):
            return
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._started = time.perf_counter()
            if self.printed:
                return
            self.printed = True
        print(_NOTICE, file=sys.stderr, flush=True)
        while _first_compile_hooks:
            _first_compile_hooks.pop(0)()

    def on_end(self, event):
        if not _is_ours(event.data):
            return
        with self._lock:
            self._depth = max(self._depth - 1, 0)
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._started


def _is_ours(data) -> bool:
    """Whether a compile event is about a cached kernel defined in ikrig."""
    dispatcher: Any = data.get("dispatcher") if isinstance(data, dict) else None
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    if not is_ikrig_module(module):
        return False
    try:  # kernels without cache=True (helpers inlined into cached ones) compile every run
        return dispatcher.stats.cache_path is not None
    except AttributeError:
        return False


_listener: _CompileNotice | None = None
_install_lock = threading.Lock()
_first_compile_hooks: list[Callable[[], None]] = []


def on_first_compile(hook: Callable[[], None]) -> None:
    """Call ``hook()`` when this process starts compiling one of ikrig's cached kernels for
    the first time (at once if it already has); never on a warm cache. The hook runs inside
    Numba's compile event: keep it short (``ikrig.cli.ahead`` starts a process there)."""
    if _listener is not None and _listener.printed:
        hook()
    else:
        _first_compile_hooks.append(hook)


def notify_compiling() -> None:
    """Make sure the "compiling" notice is armed (it is from the import of this module on).

    The notice itself is printed by a Numba compile-event listener, at most once per
    process, and only when a kernel really compiles; this call costs one test.
    """
    global _listener
    if _listener is not None:
        return
    with _install_lock:
        if _listener is None:
            listener = _CompileNotice()
            numba.core.event.register("numba:compile", listener)
            _listener = listener


notify_compiling()


def compile_seconds() -> float:
    """Seconds this process has spent compiling ikrig's cached kernels so far (0 when
    everything loaded from the cache): subtract it from a timing to report the work alone."""
    return _listener.seconds if _listener is not None else 0.0
