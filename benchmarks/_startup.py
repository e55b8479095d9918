"""The ``startup`` section of ``bench_speed.py`` (issue 40): every command's start-up, from
the process's start to its output, on a warm cache.

Each command runs as ``python -c 'from ikrig.cli import main; main()' ARGS`` (what the
``ikrig`` script does) in a fresh process, ``--repeats`` times interleaved; the figure is the
median wall time. Measured: ``ikrig --help``, ``ikrig info`` on a BVH and a glTF file (the
shared CMU walk and Fox when ``../shared/data`` is there, else the built-in walk written to a
temporary BVH), and each command's ``--help``. Goals (issue 40): ``ikrig --help`` and
``ikrig info`` within 0.3 s; the others are reported. With ``--baseline SRC`` (another
checkout's ``src`` folder) each command is also timed with that ikrig first on
``PYTHONPATH``, interleaved, and the row gives both and their ratio.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
CLI = "import sys; from ikrig.cli import main; sys.exit(main())"
GOAL = 0.3  # seconds, ikrig --help and ikrig info
COMMANDS = ("demo", "foot", "info", "convert", "plot", "view", "playground", "warmup", "batch",
            "look", "fit", "pin")  # fmt: skip


def _run(args: list[str], src: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(src))
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CLI, *args], env=env, capture_output=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"ikrig {' '.join(args)}: {p.stderr.decode()[-300:]}")
    return wall


def _cases(tmp: Path) -> list[tuple[str, list[str], bool]]:
    """``(label, args, has a goal)`` of every measured command."""
    bvh = SHARED / "bvh" / "cmu_131_02_walk.bvh"
    if not bvh.is_file():
        sys.path.insert(0, str(REPO / "src"))
        from ikrig.data import walk_clip
        from ikrig.io import write_bvh

        bvh = tmp / "walk.bvh"
        write_bvh(bvh, walk_clip(seconds=4.0))
    cases = [("ikrig --help", ["--help"], True)]
    cases.append((f"ikrig info {bvh.name}", ["info", str(bvh)], True))
    glb = SHARED / "gltf" / "Fox.glb"
    if glb.is_file():
        cases.append((f"ikrig info {glb.name}", ["info", str(glb)], True))
    cases += [(f"ikrig {c} --help", [c, "--help"], False) for c in COMMANDS]
    return cases


def startup_rows(repeats: int, baseline: Path | None, row) -> list[dict]:
    """The section's table rows (``row`` is ``bench_speed.row``)."""
    src = REPO / "src"
    rows = []
    with tempfile.TemporaryDirectory(prefix="ikrig_startup_") as tmp:
        cases = _cases(Path(tmp))
        for _, args, _ in cases:  # warm the caches (Numba's, the file system's) once
            _run(args, src)
            if baseline is not None:
                _run(args, baseline)
        for label, args, goal in cases:
            now, before = [], []
            for _ in range(repeats):
                now.append(_run(args, src))
                if baseline is not None:
                    before.append(_run(args, baseline))
            t = statistics.median(now)
            ratio, note = None, f"min {min(now):.3f} s"
            if before:
                b = statistics.median(before)
                ratio, note = f"{t / b:.2f} x before", f"before {b:.3f} s (baseline); " + note
            rows.append(row(f"start-up: {label}"[:35], f"<= {GOAL} s" if goal else "-",
                            f"{t:.3f} s", ratio, (t <= GOAL) if goal else None, note))  # fmt: skip
    return rows
