"""Fuzz the glTF reader and writer with mutated real and generated characters (issue 35).

Every case must either read, write back and read again with the same frames and the same
world joint positions (to float32 precision), or raise an ``ikrig`` error whose one-line
message starts with the file's path and holds under 300 characters; either within 2 s and
200 MB, with no warning printed on the way. No case may copy ``secret.txt`` (a file beside
the case's folder that a buffer URI names) into an output, nor tell its size in a message.
Cases are :mod:`_gltf_fuzz_cases` mutations of the shared ``.glb`` characters
(``../shared/data/gltf``) and of a generated walk: the container, accessors, bufferViews and
buffers, indices, key times, node transforms, extensions, URIs, names, sizes, animations,
skins and root motion on the armature.

Cases run one at a time in a worker process (its address space is capped at 2 GiB beyond
its start, a case that takes longer than ``--timeout`` seconds is killed). The output is one
count line::

    tried 3000  ok 1012  clear error 1988  other 0

followed by a few examples of "other" (anything else: another exception type, too slow,
too much memory, a long message, a message not naming the file, a warning, a round-trip
mismatch, the secret leaked).

Usage::

    python benchmarks/fuzz_gltf.py [--cases 3000] [--seed 0] [--examples 8]
    PYTHONPATH=/tmp/before/src python benchmarks/fuzz_gltf.py   # another checkout

:func:`check_case` is also used by ``tests/test_gltf_fuzz.py``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _gltf_fuzz_cases  # noqa: E402
from _fuzz_driver import Fuzzer, Peak, run_fuzz  # noqa: E402
from _fuzz_driver import short as _short  # noqa: E402
from _gltf_fuzz_cases import (  # noqa: E402
    FAMILIES,
    MUTATIONS,
    SECRET,
    SHARED,
    join_glb,
    mutate,
    random_steps,
    seed_corpus,
    split_glb,
)

__all__ = [
    "FAMILIES", "MUTATIONS", "SECRET", "SHARED", "case_folder", "check_case", "join_glb",
    "mutate", "random_steps", "seed_corpus", "split_glb",
]  # fmt: skip

MAX_SECONDS = 2.0
MAX_MEGABYTES = 200.0
MAX_MESSAGE = 300
SECRET_SIZE = 7919
"""Bytes of ``secret.txt``: no message may hold this number."""


def case_folder(base: Path) -> Path:
    """Make ``base/secret.txt`` and the case folder ``base/case`` (with a FIFO, a symbolic
    link loop and a link to the secret in it); return the case folder."""
    secret = base / "secret.txt"
    secret.write_bytes((SECRET * (SECRET_SIZE // len(SECRET) + 1))[:SECRET_SIZE])
    folder = base / "case"
    folder.mkdir(exist_ok=True)
    for name, make in (
        ("fifo", lambda p: os.mkfifo(p)),
        ("loop.bin", lambda p: os.symlink(p, p)),
        ("link.bin", lambda p: os.symlink(secret, p)),
    ):
        path = folder / name
        if not os.path.lexists(path) and hasattr(os, "mkfifo"):
            make(path)
    return folder


def _world(clip):
    import numpy as np

    return np.asarray(clip.motion.positions_world(), dtype=np.float64)


def round_trip_mismatch(clip, again) -> str | None:
    """What differs between a clip and the clip read back from its written file, or None."""
    import numpy as np

    if clip.motion.skeleton.names != again.motion.skeleton.names:
        return "joint names"
    if clip.motion.num_frames != again.motion.num_frames:
        return f"frames {clip.motion.num_frames} came back {again.motion.num_frames}"
    a, b = _world(clip), _world(again)
    scale = max(1.0, float(np.abs(a).max(initial=0.0)))
    err = float(np.abs(a - b).max(initial=0.0))
    if not err <= 2e-5 * scale:
        return f"world positions moved by {err:.3g} (extent {scale:.3g})"
    return None


def error_problem(error: Exception, path: Path) -> str | None:
    """Why an ikrig error is not a clear one (not starting with the file, long, several
    lines, telling the secret's size), or None."""
    message = str(error)
    if not message.startswith(f"{path}: "):
        return "file not named: " + _short(message)
    if len(message) >= MAX_MESSAGE or "\n" in message:
        return f"message of {len(message)} characters: " + _short(message)
    if str(SECRET_SIZE) in message:
        return "the secret's size told: " + _short(message)
    return None


def _judge(path: Path, out: Path) -> tuple[str, str]:
    from ikrig.errors import IkrigError
    from ikrig.io import read_gltf
    from ikrig.io.gltf.write import write_gltf

    try:
        clip = read_gltf(path)
    except IkrigError as error:
        problem = error_problem(error, path)
        return ("clear", "") if problem is None else ("other", problem)
    except Exception as error:  # noqa: BLE001 - every other failure is counted
        return "other", f"{type(error).__name__}: {_short(str(error))}"
    try:
        write_gltf(out, clip)
        again = read_gltf(out)
    except Exception as error:  # noqa: BLE001
        return "other", f"written back: {type(error).__name__}: {_short(str(error))}"
    if SECRET in out.read_bytes():
        return "other", "the secret was copied into the output"
    mismatch = round_trip_mismatch(clip, again)
    return ("ok", "") if mismatch is None else ("other", f"round trip: {mismatch}")


def check_case(data: bytes, folder: Path, use_tracemalloc: bool = True) -> tuple[str, str]:
    """Write ``data`` as ``case.glb`` in ``folder`` (made by :func:`case_folder`), read,
    write back and read again, and judge it: ``("ok" | "clear" | "other", detail)``."""
    path, out = folder / "case.glb", folder / "back.glb"
    path.write_bytes(data)
    out.unlink(missing_ok=True)
    with Peak(use_tracemalloc) as peak, warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        start = time.perf_counter()
        outcome = _judge(path, out)
        seconds = time.perf_counter() - start
    loud = [w for w in said if not issubclass(w.category, DeprecationWarning)]
    if loud and outcome[0] == "clear":
        w = loud[0]
        return "other", f"{w.category.__name__} before the error: {_short(str(w.message), 80)}"
    if seconds > MAX_SECONDS:
        return "other", f"took {seconds:.1f} s ({outcome[0]}: {outcome[1]})"
    if peak.megabytes > MAX_MEGABYTES:
        return "other", f"used {peak.megabytes:.0f} MB ({outcome[0]}: {outcome[1]})"
    return outcome


def _worker_setup():
    """The worker's judge, its folder and the cases it judges first (the seed files:
    loading the modules and kernels)."""
    folder = case_folder(Path(tempfile.mkdtemp(prefix="fuzz_gltf_")))
    return check_case, folder, seed_corpus(SHARED if SHARED.is_dir() else None)


FUZZER = Fuzzer(__doc__, __file__, 3000, _worker_setup, _gltf_fuzz_cases)


def main(argv: list[str] | None = None) -> int:
    return run_fuzz(FUZZER, argv)


if __name__ == "__main__":
    sys.exit(main())
