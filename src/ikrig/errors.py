"""The exception types ikrig raises.

Every error ikrig raises on purpose derives from :class:`IkrigError`, so callers can catch
one type. Structural problems (wrong shapes, NaN input, broken hierarchies, malformed files)
raise; per-element numeric trouble (an unreachable target, a zero-length bone) never does:
solvers return a documented fallback and a per-element flag instead.
"""

from __future__ import annotations

import os


class IkrigError(Exception):
    """Base class of every error raised by ikrig."""


class InputError(IkrigError, ValueError):
    """An argument has the wrong shape, dtype or value (for example NaN)."""


class HierarchyError(IkrigError, ValueError):
    """A skeleton's hierarchy is broken (parent after child, unknown joint, cycle)."""


class FileFormatError(IkrigError, ValueError):
    """A file could not be parsed. The message names the file, the line and what was expected.

    Attributes:
        path: the file's path (or ``"<string>"`` for text parsed from memory).
        line: 1-based line number of the problem, or ``None`` when it concerns the whole file.
        reason: the problem, without the location.
    """

    def __init__(self, path: str | os.PathLike | None, line: int | None, reason: str):
        self.path = "<string>" if path is None else os.fspath(path)
        self.line = line
        self.reason = reason
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {reason}")
