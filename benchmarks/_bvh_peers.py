"""BVH files read and written by ikrig and by its Python peers, in one run (issue 40):
``bvhio`` (``readAsBvh`` / ``writeBvh``, 6 decimals) and ``upc-pymotion``
(``pymotion.io.bvh.BVH.load`` / ``save``), both from the package index. A peer that is
not installed is left out; one that fails on a file is marked so in the table, with its
error.

Per file: the median wall time of each read and write over ``repeats`` runs (the three
readers interleaved, then the three writers), ikrig's speed-up over the fastest peer that
did the job, ikrig's write speed in MB/s, and two checks of ikrig's own files: the round
trip (read, write, read) gives the channel values back to the printed precision (half a
unit of the 6th decimal), and writing what was read back gives the same text.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from ikrig.io import read_bvh, write_bvh

READ_GOAL = WRITE_GOAL = 10.0  # times the fastest peer
MB_PER_S_GOAL = 100.0


def _peers() -> dict:
    """``{name: (read(path) -> obj, write(path, obj))}`` of the installed peers."""
    peers = {}
    try:
        import bvhio

        peers["bvhio"] = (bvhio.readAsBvh, lambda p, b: bvhio.writeBvh(str(p), b, percision=6))
    except ImportError:
        pass
    try:
        from pymotion.io.bvh import BVH

        def load(path):
            b = BVH()
            b.load(str(path))
            return b

        peers["upc-pymotion"] = (load, lambda p, b: b.save(str(p)))
    except ImportError:
        pass
    return peers


def _median(function, repeats: int) -> float:
    function()  # warm-up: compiles, fills the caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def compare(path: Path, out_dir: Path, repeats: int) -> dict:
    """One file's row (see the module docstring)."""
    peers = _peers()
    row: dict = {"file": path.name, "MB": path.stat().st_size / 1e6, "peers": {}}
    row["ikrig_read"] = _median(lambda: read_bvh(path), repeats)
    clip = read_bvh(path)
    out = out_dir / "ikrig.bvh"
    row["ikrig_write"] = _median(lambda: write_bvh(out, clip), repeats)
    row["written_MB"] = out.stat().st_size / 1e6
    back = read_bvh(out)
    row["round_trip"] = float(np.abs(back.source_values - clip.source_values).max())
    again = out_dir / "again.bvh"
    write_bvh(again, back)
    row["same_text"] = again.read_bytes() == out.read_bytes()
    for name, (read, write) in peers.items():
        try:
            row["peers"][name] = {"read": _median(lambda read=read: read(path), repeats)}
            obj = read(path)
            target = out_dir / f"{name}.bvh"
            row["peers"][name]["write"] = _median(
                lambda write=write, target=target, obj=obj: write(target, obj), repeats
            )
        except Exception as exc:  # a peer that cannot do the job is reported, not fatal
            row["peers"][name] = {"error": f"{type(exc).__name__}: {str(exc)[:60]}"}
    return row


def table(rows: list[dict]) -> str:
    """The markdown table of :func:`compare`'s rows."""
    names = sorted({n for r in rows for n in r["peers"]})
    head = ["file", "MB", "ikrig read s", "ikrig write s", "write MB/s"]
    head += [f"{n} read / write s" for n in names]
    head += ["read x fastest peer", "write x fastest peer", "round trip", "same text"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["file"], f"{r['MB']:.2f}", f"{r['ikrig_read']:.4f}", f"{r['ikrig_write']:.4f}",
                 f"{r['written_MB'] / r['ikrig_write']:.0f}"]  # fmt: skip
        reads, writes = [], []
        for n in names:
            p = r["peers"].get(n, {"error": "not installed"})
            if "error" in p:
                cells.append(f"cannot: {p['error']}")
                continue
            cells.append(f"{p['read']:.3f} / {p.get('write', float('nan')):.3f}")
            reads.append(p["read"])
            if "write" in p:
                writes.append(p["write"])
        cells.append(f"{min(reads) / r['ikrig_read']:.1f}" if reads else "-")
        cells.append(f"{min(writes) / r['ikrig_write']:.1f}" if writes else "-")
        cells.append(f"{r['round_trip']:.1e}")
        cells.append("yes" if r["same_text"] else "NO")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
