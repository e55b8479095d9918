"""The ``startup`` section of ``bench_speed.py`` (issue 40): every command's start-up, from
the process's start to its output, on a warm cache.

Each command runs as ``python -c 'from ikrig.cli import main; main()' ARGS`` (what the
``ikrig`` script does) in a fresh process, ``--repeats`` times interleaved; the figure is the
median wall time. Measured: ``ikrig --help``, ``ikrig info`` on a BVH and a glTF file (the
shared CMU walk and Fox when ``../shared/data`` is there, else the built-in walk written to a
temporary BVH), on a BVH file over 1 MiB (the CMU jump, reported: it reads in NumPy below
4 MiB), and each command's ``--help``. Goals (issue 40): ``ikrig --help`` and ``ikrig info``
within 0.3 s; the others are reported. The notes of the ``info`` rows say whether the
command imported Numba or SciPy (it should not). With ``--baseline SRC`` (another
checkout's ``src`` folder) each command is also timed with that ikrig first on
``PYTHONPATH``, interleaved, and the row gives both and their ratio.

Warm means every cache filled by the warm-up run: Numba's and Python's bytecode, as in an
installed package. The runs write their bytecode under a temporary ``PYTHONPYCACHEPREFIX``
even when ``PYTHONDONTWRITEBYTECODE`` is set (without it every run compiles ikrig's sources
again: about 0.07 s more for ``ikrig info``).
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


HEAVY = (
    "import sys; from ikrig.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
    "print('\\nimported:', *sorted({m.split('.')[0] for m in sys.modules} & {'numba', 'scipy'}))"
)


def _env(src: Path, pycache: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(pycache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(args: list[str], src: Path, pycache: Path) -> float:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CLI, *args], env=_env(src, pycache),
                       capture_output=True)  # fmt: skip
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"ikrig {' '.join(args)}: {p.stderr.decode()[-300:]}")
    return wall


def _heavy(args: list[str], src: Path, pycache: Path) -> str:
    """The heavy packages (Numba, SciPy) ``ikrig ARGS`` imported, or "none"."""
    p = subprocess.run([sys.executable, "-c", HEAVY, *args], env=_env(src, pycache),
                       capture_output=True, text=True)  # fmt: skip
    return p.stdout.rsplit("imported:", 1)[-1].strip() or "none"


def _cases(tmp: Path) -> list[tuple[str, list[str], bool]]:
    """``(label, args, has a goal)`` of every measured command."""
    bvh = SHARED / "bvh" / "cmu_131_02_walk.bvh"
    if not bvh.is_file():
        sys.path.insert(0, str(REPO / "src"))
        from ikrig.data import walk_clip
        from ikrig.io import to_bvh_clip, write_bvh

        bvh = tmp / "walk.bvh"
        write_bvh(bvh, to_bvh_clip(walk_clip(seconds=4.0)))
    cases = [("ikrig --help", ["--help"], True)]
    cases.append((f"ikrig info {bvh.name}", ["info", str(bvh)], True))
    glb = SHARED / "gltf" / "Fox.glb"
    if glb.is_file():
        cases.append((f"ikrig info {glb.name}", ["info", str(glb)], True))
    big = SHARED / "bvh" / "cmu_01_01_jumps.bvh"  # 2 MiB: over the 1 MiB of the goal
    if big.is_file():
        cases.append((f"ikrig info {big.name}", ["info", str(big)], False))
    cases += [(f"ikrig {c} --help", [c, "--help"], False) for c in COMMANDS]
    return cases


def startup_rows(repeats: int, baseline: Path | None, row) -> list[dict]:
    """The section's table rows (``row`` is ``bench_speed.row``)."""
    src = REPO / "src"
    rows = []
    with tempfile.TemporaryDirectory(prefix="ikrig_startup_") as tmp:
        cases = _cases(Path(tmp))
        pycache = Path(tmp) / "pycache"
        for _, args, _ in cases:  # warm the caches (Numba's, bytecode, the files') once
            _run(args, src, pycache)
            if baseline is not None:
                _run(args, baseline, pycache)
        for label, args, goal in cases:
            now, before = [], []
            for _ in range(repeats):
                now.append(_run(args, src, pycache))
                if baseline is not None:
                    before.append(_run(args, baseline, pycache))
            t = statistics.median(now)
            ratio, note = None, f"min {min(now):.3f} s"
            if args[0] == "info":
                note += f"; imports {_heavy(args, src, pycache)}"
            if before:
                b = statistics.median(before)
                ratio, note = f"{t / b:.2f} x before", f"before {b:.3f} s (baseline); " + note
            rows.append(row(f"start-up: {label}"[:35], f"<= {GOAL} s" if goal else "-",
                            f"{t:.3f} s", ratio, (t <= GOAL) if goal else None, note))  # fmt: skip
    return rows
