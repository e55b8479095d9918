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
from .job import ClipOutcome

__all__ = ["MANIFEST_NAME", "Manifest"]

MANIFEST_NAME = "ikrig_batch.jsonl"


class Manifest:
    """The manifest of one output folder: the newest entry per clip (keyed by its path
    relative to the inputs' common folder), and an open journal to append results to."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.path = Path(out_dir) / MANIFEST_NAME
        self.entries: dict[str, dict[str, Any]] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by a crash
                if isinstance(entry, dict) and "relative" in entry:
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
            and Path(e.get("output", "")).is_file()
        )

    def compact(self) -> None:
        """Rewrite the file with the newest entry of each clip, atomically."""
        lines = [json.dumps(e, sort_keys=True) + "\n" for e in self.entries.values()]
        write_text(self.path, "".join(lines))

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
