"""Where ``read_bvh`` and ``write_bvh`` spend a file's time, for ``bench_bvh.py --peers``:
issue 40 asks for both at 10x the fastest Python peer, and the parts say what bounds that.

Each part is timed by wrapping the function that does it, where the reader and the writer
look it up, over ``repeats`` calls (medians):

* read: the file's bytes (``Path.read_bytes``), the HIERARCHY header (parsed in Python), the
  frame rows (scanned into numbers), the rotations (Euler channels composed into
  quaternions), and the rest (checks, FK-free set-up of the clip);
* write: the Euler angles (the rotations turned back into each joint's channel order),
  the frame rows as text, the file (a temporary file written, flushed to disk and renamed
  over the output: :func:`ikrig._files.write_parts`), and the rest (the header, checks).
"""

from __future__ import annotations

import time
from pathlib import Path

from _parts import median_parts

READ = (  # (module, name, part)
    ("ikrig.io.bvh._motion", "_parse_hierarchy", "header"),
    ("ikrig.io.bvh._motion", "_scan", "rows"),
    ("ikrig.io.bvh._compose", "compose_rotations", "rotations"),
    ("ikrig.io.bvh._motion", "_compose_numpy", "rotations"),
)
WRITE = (
    ("ikrig.io.bvh._write", "_channel_values", "Euler angles"),
    ("ikrig.io.bvh._write", "format_rows_buffer", "rows as text"),
    ("ikrig.io.bvh", "write_parts", "file (write, flush, rename)"),
)


def file_parts(path: Path, out: Path, repeats: int) -> tuple[dict, dict]:
    """Median seconds of each part of reading ``path`` and of writing it to ``out``."""
    from ikrig.io.bvh import _parse_bytes, read_bvh, write_bvh

    clip = read_bvh(path)
    write_bvh(out, clip)  # warm

    def read() -> None:
        data = time.perf_counter()
        raw = path.read_bytes()
        read_parts["bytes"] = read_parts.get("bytes", 0.0) + time.perf_counter() - data
        _parse_bytes(raw, str(path))

    read_parts: dict[str, float] = {}
    got = median_parts(read, READ, repeats)
    got["bytes"] = read_parts["bytes"] / repeats
    return got, median_parts(lambda: write_bvh(out, clip), WRITE, repeats)


def _line(kind: str, parts: dict, names: list[str], peer: float | None) -> str:
    total = parts["total"]
    cells = [f"{n} {1e3 * parts.get(n, 0.0):.2f}" for n in names]
    rest = total - sum(parts.get(n, 0.0) for n in names)
    text = f"  {kind} {1e3 * total:.2f} ms: " + ", ".join(cells) + f", rest {1e3 * rest:.2f}"
    if peer:
        text += f"; fastest peer {1e3 * peer:.2f} ms, its tenth {1e2 * peer:.2f}"
    return text


def report(path: Path, out: Path, repeats: int, row: dict) -> str:
    """Two lines for one file: the read's and the write's parts (ms), beside a tenth of the
    fastest peer's time (the goal's budget), from ``row`` (:func:`_bvh_peers.compare`)."""
    read, write = file_parts(path, out, repeats)
    peers = row.get("peers", {}).values()
    best = {k: min((p[k] for p in peers if p.get(k)), default=None) for k in ("read", "write")}
    return "\n".join([
        f"{path.name} ({path.stat().st_size / 1e6:.2f} MB)",
        _line("read ", read, ["bytes", "header", "rows", "rotations"], best["read"]),
        _line("write", write, [n for _, _, n in WRITE], best["write"]),
    ])  # fmt: skip
