"""Writing files without losing the user's data: atomic outputs and output-path checks.

Every file ikrig writes (BVH, JSON reports, images, GIFs, movies) goes through
:func:`atomic_path`: the writer fills a temporary file in the destination's own folder, which
is flushed to disk and then renamed over the destination in one step. A writer that fails or
is killed leaves the previous file untouched (and at worst a hidden ``.NAME.*.part`` file
beside it); a reader never sees half a file. Inside :func:`deferred_sync` the flushes to disk
are left to the caller (:func:`sync_files`), who does them elsewhere, before relying on the
files: a batch's worker goes on with its next clip while the batch process waits for the
disk.

:func:`check_output` runs before any work: it refuses an output that is one of the inputs,
makes the output's folder (folders are created for every output, everywhere), and checks the
folder is writable, so a long solve never ends in "no such directory".
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from .errors import InputError

__all__ = [
    "atomic_path", "check_output", "deferred_sync", "sync_files", "write_bytes", "write_text",
]  # fmt: skip

StrPath = str | os.PathLike

_UNSYNCED: ContextVar[list[str] | None] = ContextVar("ikrig_unsynced", default=None)
"""Inside :func:`deferred_sync`: the files written and not yet flushed to disk."""


def _new_file_mode(path: Path) -> int:
    """The permission bits the output should get: the old file's, else what umask allows."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        pass
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_path(path: StrPath) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` atomically.

    The temporary file ends with ``path``'s suffix, so writers that pick the format from the
    name (matplotlib, Pillow, ffmpeg) work unchanged. If the ``with`` body raises, the
    temporary file is removed and ``path`` is left as it was; an ``OSError`` about the
    temporary file is raised again naming ``path`` (the name the user knows).

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> with atomic_path(out) as tmp:
    ...     _ = tmp.write_text("hello")
    >>> out.read_text()
    'hello'
    """
    path = Path(os.fspath(path))
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(
        dir=parent, prefix=f".{path.name}.", suffix=f".part{path.suffix}"
    )
    os.close(fd)
    tmp = Path(tmp_name)
    unsynced = _UNSYNCED.get()
    try:
        yield tmp
        if unsynced is None:
            with open(tmp, "rb+") as f:  # the writer may have closed (or replaced) the file
                os.fsync(f.fileno())
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        if isinstance(exc, OSError) and exc.filename is not None:
            if os.fspath(exc.filename) == os.fspath(tmp):  # name the file the user gave
                raise OSError(exc.errno, exc.strerror, os.fspath(path)) from exc
        raise
    if unsynced is None:
        _sync_folder(parent)
    else:
        unsynced.append(os.path.abspath(path))


@contextmanager
def deferred_sync() -> Iterator[list[str]]:
    """Within this block, :func:`atomic_path` writes and renames but does not flush to disk;
    yields the list of the absolute paths written so far, for :func:`sync_files`.

    The files are whole and atomic to every reader at once; only a crash of the operating
    system (not of the process) before :func:`sync_files` could lose them. So a caller that
    records them as done (a batch's manifest) syncs them first."""
    written: list[str] = []
    token = _UNSYNCED.set(written)
    try:
        yield written
    finally:
        _UNSYNCED.reset(token)


def sync_files(paths: Iterable[StrPath]) -> None:
    """Flush files written in :func:`deferred_sync` to disk, and their folders (each once),
    so that their contents and names survive a crash of the operating system. A file that
    is gone (replaced or removed since) is skipped."""
    folders: dict[Path, None] = {}
    for p in paths:
        path = Path(os.fspath(p))
        try:
            with open(path, "rb") as f:
                os.fsync(f.fileno())
        except FileNotFoundError:
            continue
        folders.setdefault(path.absolute().parent, None)
    for folder in folders:
        _sync_folder(folder)


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes(path: StrPath, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_path`); return the path."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(os.fspath(path))


def write_parts(path: StrPath, parts: Iterable) -> Path:
    """Write ``parts`` (bytes or other buffers, in order) to ``path`` atomically (see
    :func:`atomic_path`), without joining them first; return the path."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        for part in parts:
            f.write(part)
    return Path(os.fspath(path))


def write_text(path: StrPath, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_path`); return the path."""
    return write_bytes(path, text.encode(encoding))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(
    path: StrPath,
    *,
    inputs: Iterable[StrPath] = (),
    suffixes: Iterable[str] | None = None,
    what: str = "output",
) -> Path:
    """Check, before any work, that ``path`` can be written; create its folder; return it.

    Raises :class:`~ikrig.errors.InputError` (one line) when ``path`` is one of ``inputs``
    (ikrig never overwrites its input), when its suffix is not one of ``suffixes`` (compared
    in lower case, with the dot: ``".png"``), when it is a folder, or when its folder cannot
    be created or written.
    """
    out = Path(os.fspath(path))
    if suffixes is not None:
        allowed = sorted({s.lower() for s in suffixes})
        if out.suffix.lower() not in allowed:
            raise InputError(
                f"{what} {_short(out)}: unsupported file type {out.suffix or '(none)'!r};"
                f" use one of {', '.join(allowed)}"
            )
    for src in inputs:
        src = Path(os.fspath(src))
        if _same_file(out, src) or out.resolve() == src.resolve():
            raise InputError(
                f"{what} {_short(out)} is the input file; ikrig never overwrites its input,"
                " choose another -o"
            )
    if out.is_dir():
        raise InputError(f"{what} {_short(out)} is a folder; give a file name")
    parent = out.parent if str(out.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in (parent, *parent.parents) if p.is_file()), None)
        reason = f"a file named {_short(blocker)} is in the way" if blocker else exc.strerror
        raise InputError(
            f"{what} {_short(out)}: cannot create folder {_short(parent)} ({reason})"
        ) from None
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{out.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(
            f"{what} {_short(out)}: folder {_short(parent)} is not writable ({exc.strerror})"
        ) from None
    return out


def _short(path: Path, limit: int = 80) -> str:
    """A path for a one-line message, cut in the middle when long."""
    s = os.fspath(path)
    return s if len(s) <= limit else s[: limit // 2 - 2] + "..." + s[-(limit // 2 - 1) :]
