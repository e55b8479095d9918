"""What the file fuzzers share (``fuzz_bvh.py``, ``fuzz_gltf.py``): a worker process that
judges cases under a memory cap, its driver with a timeout, the peak-memory meter, and the
run over mutated cases with its printed counts.

A fuzzer script describes itself as a :class:`Fuzzer` (its own ``check_case(data, folder,
use_tracemalloc)`` judge, ``("ok" | "clear" | "other", detail)``, and the module of its
seed files and mutations) and hands it to :func:`run_fuzz`.
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
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

Judge = Callable[..., tuple[str, str]]


class Peak:
    """Peak memory growth during a case: the kernel's peak RSS (Linux), else tracemalloc."""

    def __init__(self, use_tracemalloc: bool):
        self.tracemalloc = use_tracemalloc or not os.path.exists("/proc/self/clear_refs")

    def __enter__(self):
        if self.tracemalloc:
            tracemalloc.start()
        else:
            self.start = rss_kib("VmRSS")
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset VmHWM, the peak RSS
        return self

    def __exit__(self, *exc):
        if self.tracemalloc:
            self.megabytes = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        else:
            self.megabytes = (rss_kib("VmHWM") - self.start) / 1024


def rss_kib(field: str) -> int:
    """A ``/proc/self/status`` field in KiB (0 where there is none)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def serve(check_case: Judge, folder: Path, warm: Iterable[bytes]) -> None:
    """The worker: judge the ``warm`` cases first (loading modules and kernels), cap the
    address space at 2 GiB beyond that, then judge cases read from stdin (length-prefixed),
    one JSON line each on stdout."""
    import resource

    for data in warm:
        check_case(data, folder, use_tracemalloc=False)
    limit = rss_kib("VmSize") * 1024 + 2 * 2**30  # 2 GiB of address space beyond now
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    stdin, stdout = sys.stdin.buffer, sys.stdout
    stdout.write("ready\n")
    stdout.flush()
    while header := stdin.read(4):
        data = stdin.read(struct.unpack("<I", header)[0])
        category, detail = check_case(data, folder, use_tracemalloc=False)
        stdout.write(json.dumps([category, detail]) + "\n")
        stdout.flush()


class Worker:
    """A ``script --worker`` process (:func:`serve`) that judges one case at a time."""

    def __init__(self, script: str):
        self.script = script
        self.process = subprocess.Popen(
            [sys.executable, script, "--worker"],
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


def short(text: str, limit: int = 160) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class Fuzzer(NamedTuple):
    """One file format's fuzzer.

    Attributes:
        doc: the script's docstring (its first paragraph is the command line's help).
        script: the fuzzer script's path (its ``--worker`` serves).
        cases: how many cases by default.
        worker_setup: ``() -> (judge, folder, warm cases)`` for :func:`serve`.
        family: the module of its mutations: ``SHARED`` (the shared data folder),
            ``seed_corpus(folder or None) -> [bytes]``, ``mutate(data, steps) -> bytes``,
            ``random_steps(rng) -> [(family, seed)]``.
    """

    doc: str | None
    script: str
    cases: int
    worker_setup: Callable[[], tuple[Judge, Path, Iterable[bytes]]]
    family: Any

    def corpus(self) -> list[bytes]:
        """The seed files: the shared ones when the folder is there, else generated."""
        shared = self.family.SHARED
        return self.family.seed_corpus(shared if shared.is_dir() else None)


def run_fuzz(fuzzer: Fuzzer, argv: list[str] | None = None) -> int:
    """The fuzzer's command: as ``--worker`` serve (:func:`serve`); else judge ``--cases``
    mutated cases (``--seed``) in a worker, a case killed after ``--timeout`` seconds, and
    print tried / ok / clear / other, the families of the other cases and an example of
    each kind of other."""
    parser = argparse.ArgumentParser(description=(fuzzer.doc or "").split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=fuzzer.cases)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=10.0, help="kill a case after this")
    parser.add_argument("--examples", type=int, default=8, help="examples of 'other' shown")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        serve(*fuzzer.worker_setup())
        return 0
    import ikrig

    seeds = fuzzer.corpus()
    families: collections.Counter = collections.Counter()
    counts: collections.Counter = collections.Counter()
    rng = random.Random(args.seed)
    kinds: dict[str, list] = {}  # kind of "other" (its detail without numbers) -> [count, example]
    worker = Worker(fuzzer.script)
    started = time.perf_counter()
    for case in range(args.cases):
        seed_index = rng.randrange(len(seeds))
        steps = fuzzer.family.random_steps(rng)
        data = fuzzer.family.mutate(seeds[seed_index], steps)
        try:
            category, detail = worker.run(data, args.timeout)
        except TimeoutError as error:
            category, detail = "other", str(error)
            worker = Worker(fuzzer.script)
        counts[category] += 1
        if category == "other":
            families.update({name for name, _ in steps})
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
    if families:
        print(
            "families of the other cases: "
            + ", ".join(f"{n} {c}" for n, c in families.most_common())
        )
    if kinds:
        print("examples of other (count, first case of each kind):")
        for count, example in sorted(kinds.values(), key=lambda e: -e[0])[: args.examples]:
            print(f"  {count:5d}  {short(example, 300)}")
    return 0
