"""Numba set-up: a writable compile cache, and a one-time "compiling" notice.

Import this module (not ``numba``) first in every module that defines kernels::

    from ._numba import njit, notify_compiling

Why: ``@njit(cache=True)`` needs a writable directory. When ikrig sits in a read-only
site-packages and HOME is not writable, Numba finds no cache locator and fails at import
("no locator available"). Unless the user set ``NUMBA_CACHE_DIR`` themselves, we point it at
the first writable directory among ``$IKRIG_CACHE_DIR``, ``$XDG_CACHE_HOME/ikrig/numba``,
``~/.cache/ikrig/numba`` and ``<tempdir>/ikrig-numba-<user>``.

The first call of a kernel in a fresh cache compiles it (tens of seconds for the whole
package); :func:`notify_compiling` prints one line to stderr before that happens, once per
cache directory and ikrig version, instead of sitting silent.
"""

from __future__ import annotations

import getpass
import os
import sys
import tempfile
from pathlib import Path

from ._version import __version__


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

import numba  # noqa: E402  (must follow the environment set-up above)
from numba import njit, prange  # noqa: E402,F401

if os.environ.get("NUMBA_CACHE_DIR") and not numba.config.CACHE_DIR:
    # numba was imported before us: its config already read the environment.
    numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]

CACHE_DIR = numba.config.CACHE_DIR or None
_MARKER = f"ikrig-{__version__}-numba-{numba.__version__}.compiled"
_notified = False


def notify_compiling() -> None:
    """Print once to stderr that kernels are being compiled, if this cache has not seen them.

    Call it right before the first call of a kernel; it costs one boolean test afterwards.
    """
    global _notified
    if _notified:
        return
    _notified = True
    marker = Path(CACHE_DIR) / _MARKER if CACHE_DIR else None
    if marker is not None and marker.exists():
        return
    print(
        "ikrig: compiling numerical kernels for this machine (first run only, may take a"
        " minute)...",
        file=sys.stderr,
        flush=True,
    )
    if marker is not None:
        try:
            marker.write_text(f"ikrig {__version__}, numba {numba.__version__}\n")
        except OSError:
            pass
