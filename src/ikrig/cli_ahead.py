"""Compiling ahead on the second core: the first ``ikrig demo`` or ``ikrig foot`` on a
fresh machine.

Numba compiles one kernel at a time in a process, so a first run compiles its kernels one
after the other on one core, in the order it reaches them: the clip (the built-in walk
solves its legs with two-bone IK; a file's parser), then every step of foot placement,
the report's metrics and the writer. On such a first run, :func:`compile_ahead` starts
one helper process that runs the rest of that job on a small
made-up clip (:func:`stepping_clip`) while the command itself is still busy with its clip.
The two share Numba's disk cache: a kernel the helper has compiled by the time the command
reaches it is loaded, not compiled again. Nothing the helper computes is kept but that
cache.

Both cores are busy from the start to the end of a first run, so the helper's order is
chosen for the two to compile different kernels (``benchmarks/bench_speed.py --only
cold``; a log of both processes' compiles showed where they overlapped):

1. the shortest recipe (:data:`FIRST`), which reaches the leg IK, the biggest kernel,
   soonest. Its clip stands on a flat plane, which compiles nothing: the command needs
   its ground's kernels first and compiles them itself, so the helper never races it on
   them;
2. the BVH writer, its row formatter first: the command reaches the writer last and
   converts rotations to Euler angles before it formats, so the two end on different
   kernels;
3. the report's metrics, then the command's other modes.

The helper starts only in a process that compiles, never on a warm cache: at once when the
cache has no leg IK kernel (the command's imports and clip are its head start), else when
the command first compiles (an edited source). It starts only where a second CPU is there,
and never when ``IKRIG_COMPILE_AHEAD=0``. It runs at a lower priority than the command
and is stopped when the command exits. ``ikrig warmup``
compiles everything ahead of time instead.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ._numba import CACHE_DIR, on_first_compile
from .math.quat import quat_from_axis_angle
from .pose import Motion

ENV = "IKRIG_COMPILE_AHEAD"
"""Set to ``0`` to never start the helper."""

FIRST = "trace-offset"
"""The helper's first mode: the fewest steps before the leg IK."""

HELPER_GROUND = "flat"
"""The helper's ground: a plane, which runs no kernel of its own."""

_started: list[subprocess.Popen] = []


def compile_ahead(modes: list[str], ground_spec: str) -> None:
    """Start the helper (see the module): foot placement in ``modes``, its metrics and a
    BVH writer. At once when the cache has no leg IK kernel, else when this process
    first compiles one of ikrig's kernels (an edited source)."""
    if os.environ.get(ENV, "1").strip() == "0" or _cpus() < 2:
        return
    if _cold_cache():
        _start(modes, ground_spec)
    else:
        on_first_compile(lambda: _start(modes, ground_spec))


def _cold_cache() -> bool:
    """Whether the cache holds no leg IK kernel, which every placement runs: then the
    command will compile, and the helper starts before its first compile. Otherwise
    (including when this Numba keeps its cache elsewhere) the first compile tells."""
    from .foot.stages.legs_ik import legs_run

    try:
        index = legs_run._cache._cache_file._index_path
    except AttributeError:
        return False
    return not os.path.exists(index)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _start(modes: list[str], ground_spec: str) -> None:
    if _started:
        return
    env = dict(os.environ, **{ENV: "0"})
    if CACHE_DIR:
        env["NUMBA_CACHE_DIR"] = str(CACHE_DIR)
    code = "import sys; from ikrig.cli_ahead import run_ahead; run_ahead(sys.argv[1:])"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, ground_spec, *modes],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except OSError:  # best effort: the command compiles everything itself
        return
    _started.append(proc)
    atexit.register(_stop, proc)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            proc.kill()


def run_ahead(args: list[str]) -> None:
    """The helper's job, ``args = [ground_spec, *modes]``, in the module's order: place the
    feet of :func:`stepping_clip` on a flat plane in :data:`FIRST` (as ``ikrig foot``
    does), write it as BVH, report, then place it in the other modes. ``ground_spec`` is
    the command's ground, which the helper leaves to the command."""
    if hasattr(os, "nice"):
        os.nice(10)
    from .io._bvh_write import format_rows
    from .io.bvh import to_bvh_clip
    from .io.clips import write_clip
    from .placement import place_clip
    from .report import foot_report

    modes = args[1:]
    clip = stepping_clip()
    placed = place_clip(clip, HELPER_GROUND, [FIRST], progress=False)
    format_rows(np.ones((1, 1)), 6)  # the command's writer: float64 rows, an int precision
    with tempfile.TemporaryDirectory(prefix="ikrig-ahead-") as tmp:
        write_clip(Path(tmp, "ahead.bvh"), to_bvh_clip(clip))
    foot_report(placed.results, placed.source, placed.world())
    rest = [m for m in modes if m != FIRST]
    if rest:
        placed = place_clip(clip, HELPER_GROUND, rest, progress=False)
        foot_report(placed.results, placed.source, placed.world())


def stepping_clip(seconds: float = 2.0, fps: float = 60.0) -> Motion:
    """A made-up walk of the built-in humanoid without IK (so without the two-bone solver
    the built-in walk compiles first): a compass gait along +Z at 1.2 m/s. Each stance leg
    is straight, its ankle planted while the hip vaults over it; the swing leg's hip turns
    forward on a smootherstep with its knee bent; the feet stay level."""
    from .data.humanoid import JOINT_INDEX, LEGS, X_AXIS, humanoid_skeleton

    sk = humanoid_skeleton()
    frames = max(int(round(seconds * fps)), 2)
    t = np.arange(frames) / fps
    step, period = 0.6, 1.0  # metres, seconds (a stance per leg and half-cycle)
    speed = 2.0 * step / period
    leg = float(sum(np.linalg.norm(sk.offsets[JOINT_INDEX[j]]) for j in (LEGS[0][1], LEGS[0][2])))
    rot = np.tile([0.0, 0.0, 0.0, 1.0], (frames, sk.num_joints, 1))
    pos = np.broadcast_to(sk.offsets, (frames, sk.num_joints, 3)).copy()
    pos[:, 0, 2] = speed * t
    lowest = np.zeros(frames)
    for k, (hip, knee, ankle, _, _) in enumerate(LEGS):
        u = (t / period + 0.5 * k) % 1.0  # stance for u < 0.5, then swing
        stance = u < 0.5
        reach = step * (0.5 - 2.0 * u)  # the planted ankle's lead over the hip, in stance
        w = np.clip(2.0 * u - 1.0, 0.0, 1.0)
        w = w * w * w * (w * (6.0 * w - 15.0) + 10.0)
        swing = np.arcsin(0.5 * step / leg) * (2.0 * w - 1.0)  # from behind to ahead
        a = np.where(stance, np.arcsin(np.clip(reach / leg, -1.0, 1.0)), swing)
        b = np.where(stance, 0.0, np.sin(np.pi * w))  # the knee bends up to 1 rad
        rot[:, JOINT_INDEX[hip]] = quat_from_axis_angle(X_AXIS, -a)
        rot[:, JOINT_INDEX[knee]] = quat_from_axis_angle(X_AXIS, b)
        rot[:, JOINT_INDEX[ankle]] = quat_from_axis_angle(X_AXIS, a - b)
        lowest = np.where(stance, leg * (1.0 - np.cos(a)), lowest)
    pos[:, 0, 1] -= lowest  # the hips vault over the stance ankle
    return Motion(sk, rot, pos, 1.0 / fps)
