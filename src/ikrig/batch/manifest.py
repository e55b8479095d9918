"""The batch manifest: one JSON line per finished clip in ``OUTDIR/ikrig_batch.jsonl``.

Each entry records the clip's input path, input SHA-256, options hash, status (``ok`` or
``failed``), one-line error, metrics and output path. A result is appended as one line in a
single ``write`` and flushed to disk, so a batch killed at any moment loses at most the
clip in flight; a torn last line (the file system gave up mid-write) is ignored when read.
At the start and end of a run the manifest is rewritten compactly, atomically (a temporary
file, then a rename): the newest entry of each clip only.

A clip is skipped when its entry is ``ok`` for the same input hash and options hash and its
output file exists; anything else is done (again).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._files import write_text
from ..errors import InputError
from .job import ClipOutcome

__all__ = ["MANIFEST_NAME", "Manifest"]

MANIFEST_NAME = "ikrig_batch.jsonl"


_TYPES: dict[str, tuple[type, ...]] = {
    "relative": (str,),
    "input": (str,),
    "output": (str,),
    "status": (str,),
    "input_sha256": (str, type(None)),
    "options_hash": (str,),
    "error": (str, type(None)),
    "frames": (int,),
    "metrics": (dict,),
}
"""The fields every entry has, and their JSON types (an entry written by :meth:`record`)."""


def _well_formed(entry: Any) -> bool:
    """Whether ``entry`` is an entry as :meth:`Manifest.record` writes it: other lines
    (edited, corrupted) are ignored, so their clips are done again."""
    if not isinstance(entry, dict):
        return False
    for key, types in _TYPES.items():
        value = entry.get(key)
        if not isinstance(value, types) or isinstance(value, bool):
            return False
    metrics = entry["metrics"].values()
    return all(v is None or isinstance(v, (int, float)) for v in metrics)


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """Overwrite ``path`` with ``data`` (no longer than it) in place, then flush."""
    with open(path, "r+b") as f:
        if len(data) > os.fstat(f.fileno()).st_size:
            raise OSError(28, "the compact manifest is longer than the file")
        f.write(data)
        f.truncate()
        f.flush()
        os.fsync(f.fileno())


class Manifest:
    """The manifest of one output folder: the newest entry per clip (keyed by its path
    relative to the inputs' common folder), and an open journal to append results to."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.path = Path(out_dir) / MANIFEST_NAME
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for raw in self.path.read_bytes().splitlines():
                try:
                    entry = json.loads(raw.decode("utf-8"))
                except ValueError:
                    continue  # a line torn by a crash, or garbage: that clip is done again
                if _well_formed(entry):
                    self.entries[entry["relative"]] = entry
        self._journal: Any = None

    def is_done(self, relative: str, input_sha256: str, options: str) -> bool:
        """True when the clip's entry is ``ok`` for these hashes and its output exists."""
        e = self.entries.get(relative)
        return (
            e is not None
            and e.get("status") == "ok"
            and e.get("input_sha256") == input_sha256
            and e.get("options_hash") == options
            and isinstance(e.get("output"), str)
            and Path(e["output"]).is_file()
        )

    def compact(self) -> None:
        """Rewrite the file with the newest entry of each clip, atomically.

        When the disk has no room for the new copy, the file is rewritten in place instead
        (the compact text is never longer than the file, whose blocks are reused); a batch
        killed during that loses at most some entries, whose clips are then done again.

        Raises:
            InputError: neither works (the message names the file and says why).
        """
        text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in self.entries.values())
        try:
            write_text(self.path, text)
        except OSError as exc:
            try:
                _rewrite_in_place(self.path, text.encode("utf-8"))
            except OSError:
                reason = exc.strerror or type(exc).__name__
                raise InputError(f"{self.path}: cannot rewrite the manifest ({reason})") from None

    def open(self) -> None:
        """Compact, then open the journal for appending."""
        self.compact()
        self._journal = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def fileno(self) -> int | None:
        """The open journal's file descriptor (None when closed)."""
        return None if self._journal is None else self._journal.fileno()

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        self.compact()

    def record(self, outcome: ClipOutcome, paths: tuple[str, str], options: str) -> dict:
        """Append one clip's result (``paths = (input, output)``) and return its entry."""
        entry = {
            "relative": outcome.relative,
            "input": paths[0],
            "output": paths[1],
            "input_sha256": outcome.input_sha256,
            "options_hash": options,
            "status": outcome.status,
            "error": outcome.error,
            "frames": outcome.frames,
            "seconds": round(outcome.seconds, 4),
            "metrics": outcome.metrics,
            "warnings": outcome.warnings,
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self.entries[outcome.relative] = entry
        if self._journal is not None:
            self._journal.write(json.dumps(entry, sort_keys=True) + "\n")
            self._journal.flush()
            os.fsync(self._journal.fileno())
        return entry

    def select(self, relatives: Iterable[str]) -> list[dict[str, Any]]:
        """The entries of these clips (those that have one), in this order."""
        return [self.entries[r] for r in relatives if r in self.entries]
