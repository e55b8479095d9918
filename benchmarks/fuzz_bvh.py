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

import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _bvh_fuzz_cases  # noqa: E402
from _bvh_fuzz_cases import (  # noqa: E402
    BASE,
    GENERATED_SEEDS,
    MUTATIONS,
    NO_CHANNELS,
    PARTIAL,
    deep_file,
    generated_file,
    mutate,
    random_steps,
    seed_corpus,
)
from _fuzz_driver import Fuzzer, Peak, run_fuzz  # noqa: E402
from _fuzz_driver import short as _short  # noqa: E402

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


def check_case(data: bytes, folder: Path, use_tracemalloc: bool = True) -> tuple[str, str]:
    """Read ``data`` from a file in ``folder`` and judge it: ``("ok" | "clear" | "other",
    detail)``."""
    from ikrig.errors import IkrigError
    from ikrig.io import read_bvh, write_bvh

    path, out = folder / "case.bvh", folder / "back.bvh"
    path.write_bytes(data)
    with Peak(use_tracemalloc) as peak:
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


def _worker_setup():
    """The worker's judge, its folder and the cases it judges first (compiling or loading
    the kernels)."""
    return check_case, Path(tempfile.mkdtemp(prefix="fuzz_bvh_")), (BASE, PARTIAL)


FUZZER = Fuzzer(__doc__, __file__, 6000, _worker_setup, _bvh_fuzz_cases)


def main(argv: list[str] | None = None) -> int:
    return run_fuzz(FUZZER, argv)


if __name__ == "__main__":
    sys.exit(main())
