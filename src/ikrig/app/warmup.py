"""Compile ikrig's kernels ahead of time: ``ikrig warmup``.

Numba compiles each kernel the first time it runs on a machine and keeps the machine code
in its disk cache (see :mod:`ikrig._jit.setup`). On a fresh install that first run costs about
a minute of CPU. :func:`warm_up` pays it once, knowingly: it runs small, real workloads
(:data:`TASKS`) that reach every kernel the command line and the common library calls use,
spread over worker processes so that every core compiles. Run it after installing, in a
Docker image build, or before a test suite.

Each task is a plain function running public API on small built-in data; the workers
share Numba's cache directory, so what one compiled the others (and every later process)
load. A task that fails says so and the others go on.

Example (a warm cache takes a few seconds: everything loads)::

    from ikrig.app.warmup import warm_up
    seconds = warm_up(["two-bone"], jobs=1, progress=False)

Without a warm-up, a first run compiles as it goes; :func:`place_ahead` is the job another
core runs beside it meanwhile (``ikrig foot``'s helper process, ``ikrig batch``'s first
worker), and :func:`cache_is_cold` tells when that is.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from .._jit.setup import CACHE_DIR, compile_seconds
from ..errors import InputError
from ..math.quat import quat_from_axis_angle
from ..pose import Motion

GROUNDS = ("flat", "stairs", "slope", "bumps", "blocks")


def _two_bone() -> None:
    """Two-bone solver: positions (serial and parallel kernels, both rotation modes, the
    weighted and the common-case kernels), the positions-only and component-first paths,
    float64 and float32; and the aim job (one kernel, float64 inside)."""
    from ..solvers.aim import aim
    from ..solvers.two_bone import (
        TwoBoneOptions,
        two_bone_positions,
        two_bone_positions_only,
        two_bone_positions_soa,
    )

    aim([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0])

    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        for n in (1, 1024):
            root, target = rng.normal(size=(2, n, 3)).astype(dtype)
            mid = root + np.array([0.0, -0.45, 0.05], dtype)
            end = mid + np.array([0.0, -0.42, -0.05], dtype)
            for arc in ("bend_plane", "shortest_arc"):
                options = TwoBoneOptions(root_rotation=arc)
                two_bone_positions(root, mid, end, target, options=options)
            two_bone_positions(root, mid, end, target, weight=0.5)  # the general kernel
            r, m, e, t = (a.T.copy() for a in (root, mid, end, target))
            for soften in (1.0, 0.9):
                two_bone_positions_soa(r, m, e, t, options=TwoBoneOptions(soften=soften))
                two_bone_positions_only(root, mid, end, target,
                                        options=TwoBoneOptions(soften=soften))  # fmt: skip


def _chains() -> None:
    """The iterative chain solvers (CCD, 2D CCD, FABRIK, follow, DLS), float64 and
    float32, one problem (the one-problem kernels) and a batch (the batch kernels; any
    other call of them runs the same specialisation, ``tests/test_kernel_types.py``)."""
    from ..solvers import ccd, ccd_2d, dls, fabrik, follow

    for dtype in (np.float64, np.float32):
        chain = np.array([[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]], dtype)
        target = np.array([1.0, 2.0, 0.5], dtype)
        joints, goal = np.broadcast_to(chain, (4,) + chain.shape), np.broadcast_to(target, (4, 3))
        cases = [(chain, target), (chain[:, :2].copy(), target[:2].copy()), (joints, goal),
                 (joints[..., :2], goal[..., :2])]  # fmt: skip
        for joints, goal in cases:
            if joints.shape[-1] == 3:
                for solve in (ccd, fabrik, follow, dls):
                    solve(joints, goal)
            ccd_2d(joints, goal)


def _body() -> None:
    """The whole-body solver (position, orientation, keep, aim and look-at goals; one pose,
    a clip with its warm start, a crowd), float64 and float32; and look-at."""
    from ..solvers.aim import AimAxes
    from ..solvers.body import (
        AimGoal,
        KeepGoal,
        LookAtGoal,
        OrientationGoal,
        PositionGoal,
        goals_from_targets,
        solve_body,
    )
    from ..solvers.look import look_at

    clip = _walk(0.25)
    sk = clip.skeleton
    rot_w, pos_w = clip.fk()
    goals = [
        PositionGoal("LeftHand", pos_w[:, sk.index("LeftHand")] + [0.0, 0.1, 0.0]),
        OrientationGoal("Head", rot_w[:, sk.index("Head")]),
        KeepGoal("LeftFoot"),
        AimGoal("RightHand", [0.0, 1.0, 2.0], [1.0, 0.0, 0.0]),
        LookAtGoal("Head", [0.0, 1.6, 2.0], [0.0, 0.0, 1.0], chain=("Neck", "Spine1")),
    ]
    for dtype in (np.float64, np.float32):
        motion = Motion(sk, clip.rotations_local.astype(dtype), clip.positions_local.astype(dtype),
                        clip.frame_time)  # fmt: skip
        for m in (motion, motion[0], motion[None]):
            solve_body(m, goals if m.batch_shape == motion.batch_shape else goals[2:3])
        solve_body(motion, goals_from_targets(sk, pos_w, rot_w))
        look_at(motion, "Head", [0.0, 1.6, 2.0], axes=AimAxes(forward_local=[0.0, 0.0, 1.0]))


def _walk(seconds: float = 2.0):
    from ..data.walk import walk_clip

    return walk_clip(seconds=seconds, fps=60.0)


def _foot(mode: str) -> Callable[[], None]:
    def run() -> None:
        """Offline foot placement in ``mode`` on every built-in ground, with the report's
        metrics."""
        from ..character.legs import find_legs, pelvis_joint
        from ..foot import FootOptions, place_feet
        from ..ground import load_ground
        from .report import foot_report

        clip = _walk()
        legs = find_legs(clip.skeleton)
        path = clip.positions_world()[:, pelvis_joint(clip.skeleton, legs)][:, [0, 2]]
        for name in GROUNDS:
            ground = load_ground(name, path, legs.leg_length)
            result = place_feet(clip, ground, FootOptions(mode=mode), legs=legs)
            foot_report({mode: result}, clip, ground)

    run.__doc__ = f"Offline foot placement, mode {mode}, on every built-in ground."
    return run


def _live() -> None:
    """Live foot placement, frame by frame, with and without the offline plan."""
    from ..foot import FootPlacer, place_feet
    from ..ground import load_ground

    clip = _walk(1.0)
    ground = load_ground("stairs", clip.positions_world()[:, 0, [0, 2]], 0.85)
    placer = FootPlacer.from_clip(clip, ground)
    offline = place_feet(clip, ground)
    for f in range(8):
        placer.update(clip[f], dt=clip.frame_time)
        placer.update(clip[f], dt=clip.frame_time, plan=offline.plan(f))


def _files() -> None:
    """BVH writing and reading (a small file, and one big enough to be read on every
    thread: over 1 MiB of rows, 20,000 joint-frames), and a mesh ground's queries."""
    from ..ground import MeshGround
    from ..io.bvh import read_bvh, to_bvh_clip, write_bvh

    with tempfile.TemporaryDirectory(prefix="ikrig-warmup-") as tmp:
        for seconds in (0.5, 25.0):
            path = Path(tmp) / "walk.bvh"
            write_bvh(path, to_bvh_clip(_walk(seconds)))
            read_bvh(path)
    vertices = np.array([[-9, 0, -9], [9, 0, -9], [9, 0.2, 9], [-9, 0.2, 9]], float)
    ground = MeshGround(vertices, np.array([[0, 1, 2], [0, 2, 3]]))
    ground.height_at(np.zeros((4, 2)))
    ground.raycast(np.ones((4, 3)), np.array([0.0, -1.0, 0.0]))


TASKS: dict[str, Callable[[], None]] = {
    "body": _body,
    "chains": _chains,
    "two-bone": _two_bone,
    "foot full": _foot("full"),
    "foot goal-blend": _foot("goal-blend"),
    "files": _files,
    "live": _live,
    "foot trace-offset": _foot("trace-offset"),
}
"""Warm-up tasks by name, biggest first (the order they are handed to the workers)."""


@dataclass(frozen=True)
class TaskReport:
    """What one task did: ``seconds`` of wall time, of which ``compiling`` spent compiling
    (0 when everything loaded from the cache); ``error`` a one-line message, or None."""

    name: str
    seconds: float
    compiling: float
    error: str | None = None


def run_task(name: str) -> TaskReport:
    """Run the warm-up task ``name`` in this process."""
    t0, c0 = time.perf_counter(), compile_seconds()
    error = None
    try:
        TASKS[name]()
    except Exception as exc:  # a broken task must not stop the others
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return TaskReport(name, time.perf_counter() - t0, compile_seconds() - c0, error)


def _check_names(names: Iterable[str] | None) -> list[str]:
    if names is None:
        return list(TASKS)
    names = list(names)
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        raise InputError(f"warm-up task {unknown[0]!r}: expected one of {', '.join(TASKS)}")
    return [n for n in TASKS if n in names]


def warm_up(
    names: Iterable[str] | None = None, jobs: int | None = None, progress: bool = True
) -> list[TaskReport]:
    """Compile the kernels the tasks ``names`` (default: all of :data:`TASKS`) reach.

    Args:
        names: task names, or None for all.
        jobs: worker processes (default: one per core, at most one per task); 1 runs the
            tasks in this process.
        progress: show a progress bar (tqdm) over the tasks.

    Returns:
        One :class:`TaskReport` per task, in the order of :data:`TASKS`.
    """
    todo = _check_names(names)
    jobs = min(jobs or os.cpu_count() or 1, len(todo))
    if jobs < 1:
        raise InputError(f"jobs: expected at least 1, got {jobs}")
    from tqdm.auto import tqdm

    bar = tqdm(total=len(todo), desc="compiling kernels", unit="task", disable=not progress)
    reports: dict[str, TaskReport] = {}
    try:
        if jobs == 1:
            for name in todo:
                bar.set_postfix_str(name)
                reports[name] = run_task(name)
                bar.update()
        else:
            # spawn: a fresh interpreter per worker (no forked Numba or OpenMP state)
            with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
                futures = {pool.submit(run_task, n): n for n in todo}
                for done in as_completed(futures):
                    report = done.result()
                    reports[report.name] = report
                    bar.set_postfix_str(report.name)
                    bar.update()
    finally:
        bar.close()
    return [reports[n] for n in todo]


def cache_dir() -> str | None:
    """Numba's cache directory, where the compiled kernels are kept (None: no cache)."""
    return CACHE_DIR


# ------------------------------------------------------------ compiling ahead of a first run
AHEAD_ENV = "IKRIG_COMPILE_AHEAD"
"""Set to ``0``: a first run starts no compile-ahead helper (:func:`place_ahead`)."""

FIRST = "trace-offset"
""":func:`place_ahead`'s first mode: the fewest steps before the leg IK."""

AHEAD_GROUND = "flat"
""":func:`place_ahead`'s ground: a plane, which runs no kernel of its own."""


def ahead_wanted() -> bool:
    """Whether a first run may compile ahead on another core: a second CPU is there and
    ``IKRIG_COMPILE_AHEAD`` is not ``0``."""
    if os.environ.get(AHEAD_ENV, "1").strip() == "0":
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return cpus >= 2


def cache_is_cold() -> bool:
    """Whether the cache holds no leg IK kernel, which every placement runs: a placement
    in this process would compile. False when this Numba keeps its cache otherwise."""
    from ..foot.stages.legs_ik import legs_run

    try:
        index = legs_run._cache._cache_file._index_path
    except AttributeError:
        return False
    return not os.path.exists(index)


def place_ahead(modes: Iterable[str] = ()) -> None:
    """Compile, beside a first run busy with its own clip, the kernels it will need last:
    place the feet of :func:`stepping_clip` as ``ikrig foot`` does, then write and report.

    Both cores are busy from the start to the end of a first run, so the order is chosen
    for the two processes to compile different kernels (``benchmarks/bench_speed.py
    --only cold``; a log of both processes' compiles showed where they overlapped):

    1. the shortest recipe (:data:`FIRST`), which reaches the leg IK, the biggest kernel,
       soonest. Its clip stands on a flat plane, which compiles nothing: the run needs its
       ground's kernels first and compiles them itself, so the two never race on them;
    2. the BVH writer, its row formatter first: the run reaches the writer last and
       converts rotations to Euler angles before it formats, so the two end apart;
    3. the report's metrics, then ``modes`` other than :data:`FIRST`.
    """
    from ..io.bvh import to_bvh_clip
    from ..io.clips import write_clip
    from ..kernels.text import format_rows
    from .placement import place_clip
    from .report import foot_report

    clip = stepping_clip()
    placed = place_clip(clip, AHEAD_GROUND, [FIRST], progress=False)
    format_rows(np.ones((1, 1)), 6)  # the run's writer: float64 rows, an int precision
    with tempfile.TemporaryDirectory(prefix="ikrig-ahead-") as tmp:
        write_clip(Path(tmp, "ahead.bvh"), to_bvh_clip(clip))
    foot_report(placed.results, placed.source, placed.world())
    rest = [m for m in modes if m != FIRST]
    if rest:
        placed = place_clip(clip, AHEAD_GROUND, rest, progress=False)
        foot_report(placed.results, placed.source, placed.world())


def stepping_clip(seconds: float = 2.0, fps: float = 60.0) -> Motion:
    """A made-up walk of the built-in humanoid without IK (so without the two-bone solver
    the built-in walk compiles first): a compass gait along +Z at 1.2 m/s. Each stance leg
    is straight, its ankle planted while the hip vaults over it; the swing leg's hip turns
    forward on a smootherstep with its knee bent; the feet stay level."""
    from ..data.humanoid import JOINT_INDEX, LEGS, X_AXIS, humanoid_skeleton

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
