"""Files a glTF document names by URI: where they may be, and how much of them is read.

A ``.gltf`` names its buffers (and images) by relative URI. A downloaded file is not to be
trusted with the user's disk, so by default a URI must name a file inside the glTF's own
folder tree: no absolute path, no drive letter, no scheme (``http:``, ``file:``), no ``..``
segment, no NUL byte (``%00``), and, once symbolic links are resolved, still inside the
folder. ``allow_outside=True`` (``--allow-outside`` on the command line) lifts the folder
rule for a file the user trusts; the other rules stay.

Only regular files are read (no devices, FIFOs or sockets), and at most as many bytes as the
buffer's ``byteLength`` says. Messages never tell the size of a file they refuse.
"""

from __future__ import annotations

import base64
import os
import re
import stat
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from ...errors import FileFormatError

__all__ = [
    "external_path", "file_uri", "files_outside_allowed", "outside_allowed", "read_external",
    "short_text", "stat_external", "data_uri_bytes",
]  # fmt: skip

_ALLOW_OUTSIDE: ContextVar[bool] = ContextVar("ikrig_gltf_allow_outside", default=False)
"""The default of ``allow_outside`` (set by ``ikrig --allow-outside``)."""

_DRIVE = re.compile(r"^[A-Za-z]:")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def short_text(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def outside_allowed(allow_outside: bool | None) -> bool:
    """``allow_outside``, or (``None``) the default :func:`files_outside_allowed` set."""
    return _ALLOW_OUTSIDE.get() if allow_outside is None else bool(allow_outside)


@contextmanager
def files_outside_allowed(allow: bool = True) -> Iterator[None]:
    """Inside the ``with`` block, glTF readers read buffer files outside the glTF's folder
    by default (what ``ikrig --allow-outside`` does for a whole command)."""
    token = _ALLOW_OUTSIDE.set(allow)
    try:
        yield
    finally:
        _ALLOW_OUTSIDE.reset(token)


def file_uri(uri: object) -> bool:
    """Whether ``uri`` names a file (a string that is not a data URI)."""
    return isinstance(uri, str) and not uri.startswith("data:")


def external_path(
    folder: Path, uri: str, where: str, what: str, allow_outside: bool = False
) -> Path:
    """The file a relative ``uri`` names from ``folder``, checked.

    Args:
        folder: the glTF's folder.
        uri: the URI as in the file (percent-encoded).
        where: the glTF's path, for messages.
        what: ``"buffer 0"``, ``"image 3"``, for messages.
        allow_outside: accept files outside ``folder`` (still no scheme, no NUL).

    Raises:
        FileFormatError: the URI is malformed or points outside the glTF's folder.
    """
    name = urllib.parse.unquote(uri)
    if "\x00" in name or _SCHEME.match(name) and not _DRIVE.match(name):
        raise FileFormatError(where, None, f"{what}: uri {short_text(uri)} is not a file name")
    parts = name.replace("\\", "/").split("/")
    outside = name.startswith(("/", "\\")) or bool(_DRIVE.match(name)) or ".." in parts
    file = folder / name
    if not outside and not allow_outside:
        try:
            inside = file.resolve().is_relative_to(folder.resolve())
        except (OSError, RuntimeError, ValueError):  # a symlink loop, a bad name
            inside = False
        outside = not inside
    if outside and not allow_outside:
        raise FileFormatError(
            where,
            None,
            f"{what}: uri {short_text(uri)} points outside the glTF's folder; not read"
            " (allow_outside=True, or --allow-outside, reads it)",
        )
    return file


def _open(file: Path, where: str, what: str) -> int:
    """A descriptor of the regular file ``file``, opened without blocking (a FIFO)."""
    label = short_text(file.name)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(file, flags)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "unreadable"
        raise FileFormatError(where, None, f"{what}: cannot read {label} ({reason})") from None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(fd)
        raise FileFormatError(where, None, f"{what}: {label} is not a regular file")
    return fd


def _too_short(file: Path, length: int, where: str, what: str) -> FileFormatError:
    return FileFormatError(
        where,
        None,
        f"{what}: {short_text(file.name)} is shorter than the buffer's byteLength"
        f" {short_text(length)}",
    )


def stat_external(file: Path, length: int, where: str, what: str) -> None:
    """Check, without reading it, that ``file`` is a regular file of ``length`` bytes or
    more (raises :class:`~ikrig.errors.FileFormatError` as :func:`read_external`)."""
    fd = _open(file, where, what)
    try:
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if size < length:
        raise _too_short(file, length, where, what)


def data_uri_bytes(uri: str, length: int, where: str, what: str) -> bytes:
    """The bytes of a base64 ``data:`` URI, at least ``length`` of them.

    Raises:
        FileFormatError: no comma, not base64, or fewer than ``length`` bytes.
    """
    head, comma, payload = uri.partition(",")
    try:
        if not comma or not head.endswith(";base64"):
            raise ValueError
        data = base64.b64decode(payload, validate=False)
    except ValueError:
        raise FileFormatError(where, None, f"{what}: malformed base64 data URI") from None
    if len(data) < length:
        raise FileFormatError(
            where,
            None,
            f"{what}: data URI holds {len(data)} bytes, byteLength says {short_text(length)}",
        )
    return data


def read_external(file: Path, length: int, where: str, what: str) -> bytes:
    """The first ``length`` bytes of the regular file ``file``.

    Raises:
        FileFormatError: the file cannot be opened, is not a regular file, or holds fewer
            than ``length`` bytes (its size is not told).
    """
    fd = _open(file, where, what)
    try:
        chunks, left = [], length
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        reason = f"{what}: cannot read {short_text(file.name)} ({exc.strerror})"
        raise FileFormatError(where, None, reason) from None
    finally:
        os.close(fd)
    if left > 0:
        raise _too_short(file, length, where, what)
    return b"".join(chunks)
