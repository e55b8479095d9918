"""Fuzz the BVH reader and writer with mutated real and synthetic files.

Every case must either read and round-trip exactly (read, write with the default 6 decimals,
read again: same hierarchy, channels, frame count and frame time, offsets and channel values
equal to the printed precision), or raise an ``ikrig`` error whose message names the file and
the line (``path:line: ...``) in under 300 characters; either within 2 s and 200 MB. Cases
are mutations of the shared clips (``../shared/data/bvh`` and ``bvh_more``, cut to a few
frames) and of files made by code: byte flips, inserted separators and braces, deleted or
repeated spans, truncation, extreme numbers, huge frame counts, odd frame times, random
``CHANNELS`` lines, random hierarchies and deep nesting.

Cases run one at a time in a worker process (its address space is capped, a case that takes
longer than ``--timeout`` seconds is killed), so a reader that hangs or asks for hundreds of
gigabytes is counted instead of taking the machine down. The output is one count line::

    tried 6000  ok 4012  clear error 1988  other 0

followed by a few examples of "other" (anything else: another exception type, too slow, too
much memory, a long message, a message without file and line, a round-trip mismatch).

Usage::

    python benchmarks/fuzz_bvh.py [--cases 6000] [--seed 0] [--examples 8]
    PYTHONPATH=/tmp/before/src python benchmarks/fuzz_bvh.py   # another checkout

:func:`mutate`, :data:`MUTATIONS`, :func:`seed_corpus` and :func:`check_case` are also used
by ``tests/test_bvh_fuzz.py``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import select
import struct
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bvh_fuzz_cases import (  # noqa: E402
    BASE,
    GENERATED_SEEDS,
    MUTATIONS,
    NO_CHANNELS,
    PARTIAL,
    SHARED,
    deep_file,
    generated_file,
    mutate,
    random_steps,
    seed_corpus,
)

__all__ = [
    "BASE",
    "GENERATED_SEEDS",
    "MUTATIONS",
    "NO_CHANNELS",
    "PARTIAL",
    "check_case",
    "deep_file",
    "generated_file",
    "mutate",
    "random_steps",
    "seed_corpus",
]

MAX_SECONDS = 2.0
MAX_MEGABYTES = 200.0
MAX_MESSAGE = 300
PRECISION = 6


# --------------------------------------------------------------------------------------------
# Judging one case
# --------------------------------------------------------------------------------------------


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _close(a, b) -> bool:
    """Equal to the printed precision: ``%.6f`` is off by at most half a unit of the last
    decimal (and the float read back by one rounding of the value)."""
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    tolerance = 0.5 * 10.0**-PRECISION * (1 + 1e-9) + 4e-16 * np.abs(a)
    return bool(np.all(np.abs(a - b) <= tolerance))


def round_trip_mismatch(clip, again) -> str | None:
    """What differs between a clip and the clip read back from its written file, or None."""
    import numpy as np

    a, b = clip.motion.skeleton, again.motion.skeleton
    checks = [
        ("joint names", a.names == b.names),
        ("parents", np.array_equal(a.parents, b.parents)),
        ("channels", clip.channels == again.channels),
        ("frame count", clip.num_frames == again.num_frames),
        ("frame time", clip.frame_time == again.frame_time),
        ("end sites", np.array_equal(a.end_site_parents, b.end_site_parents)),
    ]
    for what, ok in checks:
        if not ok:
            return what
    if not (_close(a.offsets, b.offsets) and _close(a.end_site_offsets, b.end_site_offsets)):
        return "offsets"
    if not _close(clip.source_values, again.source_values):
        diff = np.abs(clip.source_values - again.source_values)
        f, c = np.unravel_index(np.argmax(diff), diff.shape)
        return (
            f"channel values: frame {f} column {c}: {clip.source_values[f, c]!r} came back as"
            f" {again.source_values[f, c]!r}"
        )
    return None


def error_problem(error: Exception, path: Path) -> str | None:
    """Why an ikrig error is not a clear one (no ``path:line:`` start, too long), or None."""
    message = str(error)
    if not re.match(re.escape(str(path)) + r":\d+: ", message):
        return "no file and line: " + _short(message)
    if len(message) >= MAX_MESSAGE or "\n" in message:
        return f"message of {len(message)} characters: " + _short(message)
    return None


class _Peak:
    """Peak memory growth during a case: the kernel's peak RSS (Linux), else tracemalloc."""

    def __init__(self, use_tracemalloc: bool):
        self.tracemalloc = use_tracemalloc or not os.path.exists("/proc/self/clear_refs")

    def __enter__(self):
        if self.tracemalloc:
            tracemalloc.start()
        else:
            self.start = _rss_kib("VmRSS")
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset VmHWM, the peak RSS
        return self

    def __exit__(self, *exc):
        if self.tracemalloc:
            self.megabytes = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        else:
            self.megabytes = (_rss_kib("VmHWM") - self.start) / 1024


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def check_case(data: bytes, folder: Path, use_tracemalloc: bool = True) -> tuple[str, str]:
    """Read ``data`` from a file in ``folder`` and judge it: ``("ok" | "clear" | "other",
    detail)``."""
    from ikrig.errors import IkrigError
    from ikrig.io import read_bvh, write_bvh

    path, out = folder / "case.bvh", folder / "back.bvh"
    path.write_bytes(data)
    with _Peak(use_tracemalloc) as peak:
        start = time.perf_counter()
        try:
            clip = read_bvh(path)
        except IkrigError as error:
            problem = error_problem(error, path)
            outcome = ("clear", "") if problem is None else ("other", problem)
        except Exception as error:  # noqa: BLE001 - every other failure is counted
            outcome = ("other", f"{type(error).__name__}: {_short(str(error))}")
        else:
            try:
                write_bvh(out, clip)
                again = read_bvh(out)
            except Exception as error:  # noqa: BLE001
                outcome = ("other", f"written back: {type(error).__name__}: {_short(str(error))}")
            else:
                mismatch = round_trip_mismatch(clip, again)
                outcome = ("ok", "") if mismatch is None else ("other", f"round trip: {mismatch}")
        seconds = time.perf_counter() - start
    if seconds > MAX_SECONDS:
        return "other", f"took {seconds:.1f} s ({outcome[0]}: {outcome[1]})"
    if peak.megabytes > MAX_MEGABYTES:
        return "other", f"used {peak.megabytes:.0f} MB ({outcome[0]}: {outcome[1]})"
    return outcome


# --------------------------------------------------------------------------------------------
# The worker process and the driver
# --------------------------------------------------------------------------------------------


def _worker() -> None:
    """Judge cases read from stdin (length-prefixed), one JSON line each on stdout."""
    import resource

    folder = Path(tempfile.mkdtemp(prefix="fuzz_bvh_"))
    check_case(BASE, folder, use_tracemalloc=False)  # compile or load the kernels first
    check_case(PARTIAL, folder, use_tracemalloc=False)
    limit = _rss_kib("VmSize") * 1024 + 2 * 2**30  # 2 GiB of address space beyond now
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    stdin, stdout = sys.stdin.buffer, sys.stdout
    stdout.write("ready\n")
    stdout.flush()
    while header := stdin.read(4):
        data = stdin.read(struct.unpack("<I", header)[0])
        category, detail = check_case(data, folder, use_tracemalloc=False)
        stdout.write(json.dumps([category, detail]) + "\n")
        stdout.flush()


class _Worker:
    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        if self.process.stdout.readline() != b"ready\n":
            raise RuntimeError("the fuzz worker did not start")

    def run(self, data: bytes, timeout: float) -> tuple[str, str]:
        self.process.stdin.write(struct.pack("<I", len(data)) + data)
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else b""
        if not line:
            self.process.kill()
            self.process.wait()
            what = f"killed after {timeout:.0f} s" if not ready else "worker died"
            raise TimeoutError(what)
        return tuple(json.loads(line))

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=10.0, help="kill a case after this")
    parser.add_argument("--examples", type=int, default=8, help="examples of 'other' shown")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker()
        return 0
    import ikrig

    corpus = seed_corpus(SHARED if SHARED.is_dir() else None)
    rng = random.Random(args.seed)
    counts = collections.Counter()
    kinds: dict[str, list] = {}  # kind of "other" (its detail without numbers) -> [count, example]
    worker = _Worker()
    started = time.perf_counter()
    for case in range(args.cases):
        seed_index = rng.randrange(len(corpus))
        steps = random_steps(rng)
        data = mutate(corpus[seed_index], steps)
        try:
            category, detail = worker.run(data, args.timeout)
        except TimeoutError as error:
            category, detail = "other", str(error)
            worker = _Worker()
        counts[category] += 1
        if category == "other":
            kind = re.sub(r"[0-9]+|'[^']*'", "#", detail)[:60]
            entry = kinds.setdefault(
                kind, [0, f"case {case} (seed {seed_index}, {steps}): {detail}"]
            )
            entry[0] += 1
    worker.close()
    print(
        f"tried {args.cases}  ok {counts['ok']}  clear error {counts['clear']}"
        f"  other {counts['other']}  ({time.perf_counter() - started:.0f} s,"
        f" ikrig from {Path(ikrig.__file__).parent})"
    )
    if kinds:
        print("examples of other (count, first case of each kind):")
        for count, example in sorted(kinds.values(), key=lambda e: -e[0])[: args.examples]:
            print(f"  {count:5d}  {_short(example, 300)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
