"""Whole-body IK (issue 38) against mink, on the same skeletons and targets, in one run.

For each clip (the shared BVH clips by default, Y up), two target sets are made by forward
kinematics of the clip itself (``ikrig.io.targets.targets_from_motion``):

- ``all``: every joint's position, every frame (joint positions turned into rotations);
- ``six``: six trackers with positions and rotations: the pelvis, the head, both wrists and
  both ankles (``ikrig.character``: ``find_legs``, ``pelvis_joint``, ``head_or_top`` on
  the rest pose, ``find_hands``). A clip whose hands are not found has fewer trackers (the
  table says how many); every shared clip has all six.

Both solvers start from the same preferred pose, the skeleton's rest pose (identity local
rotations, rest offsets), which is also their prior, and solve the frames in order,
warm-started frame to frame: mink as set up in ``_mink_peer.py`` (a free root and a ball joint
per joint on MuJoCo, FrameTasks and a PostureTask), ikrig with ``ikrig.solvers.body``'s
``solve_body`` on the goals ``ikrig fit`` makes (``ikrig.app.body.fit_goals``: the
targets' goals and, tracking from one pose, the knee hints of ``ikrig.app.tracking``; if
the package cannot be imported, "ikrig body solver not available" is printed and only mink
runs).

Reported per clip and target set, lengths in % of a leg (the mean hip-to-ankle rest length,
``find_legs``), the errors over every frame:

- ``joint err``: mean over frames and joints of the distance to the true clip's joint;
- ``site err``: the same for the end sites (reported, not a goal: a leaf's twist is not
  determined by joint positions);
- ``goal pos p95``, ``goal rot p95``: the 95th percentile of the goals' position error
  (% leg) and rotation error (degrees);
- ``free acc``: pops in what the goals leave free: the largest acceleration (second
  difference over frames) of any joint without a goal, % leg per frame squared, beside the
  true clip's own (``clip's``; a clip's own glitch frame shows there too);
- ``ms/frame``: the solve of the clip's frames (warm-started, in order), divided by the frames,
  median over ``--repeat`` runs; mink's frames are solved one by one, ikrig's in one call;
- ``frames/s`` (batched throughput): ikrig solving all the frames as one batch of independent
  poses (``BodyOptions(warm_start=False)``), mink the same frames in its loop (it has no
  batch; its figure is ``1000 / ms/frame``).

A row ``ikrig/mink`` gives the ratios. Clips whose non-root joints translate (BVH position
channels below the root) are marked ``*``: with ball joints neither side can follow them.
The timing rows the issue asks for, a 31-joint and a 65-joint skeleton: the shared rigs have
at most 31 joints, so a 65-joint rig is made from the first 31-joint CMU clip by adding, to
each hand, a palm and five three-joint fingers (curling in time) and two eyes under the head
(``cmu...+fingers``).

The issue's timing rule for ``ikrig fit``: the wall time of the whole ``ikrig fit SKELETON
--targets T.npz -o OUT`` process on a whole clip (six trackers) minus that on its first 10
frames, divided by the frames between; SKELETON is the clip's skeleton in its rest pose (a
one-frame BVH), so the rest pose is the preferred pose as above. Start-up (the 10-frame run)
is reported separately. Skipped with a message while the command does not exist.

BLAS runs on one thread (set before NumPy loads, unless the environment says otherwise):
mink's small matrix products are fastest so, and ikrig's kernels do not use BLAS.

Every mink result passes a self-check: ikrig's FK of the pose read back from MuJoCo matches
MuJoCo's own site positions within 1e-9 (relative to the rig's size).

Usage::

    python benchmarks/bench_body.py [--clips A.bvh B.bvh ...] [--frames 120] [--repeat 3]
        [--save out.json] [--no-fit] [--no-rig65]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    # mink's per-step matrix products are small (a few hundred rows): threaded BLAS on a
    # busy machine made them 40 times slower (10 ms against 0.26 ms for 222 x 198 on the
    # shared 2-core machine); one thread is mink's best case. Set before NumPy loads.
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from ikrig.character import detect_up, find_legs, pelvis_joint, to_y_up  # noqa: E402
from ikrig.character.hands import find_hands  # noqa: E402
from ikrig.character.head import head_or_top  # noqa: E402
from ikrig.io import read_clip, to_bvh_clip, write_bvh  # noqa: E402
from ikrig.io.targets import Targets, targets_from_motion, write_targets  # noqa: E402
from ikrig.math.quat import quat_from_axis_angle  # noqa: E402
from ikrig.pose import Motion, end_site_positions, fk  # noqa: E402
from ikrig.skeleton import Skeleton  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
DEFAULT_CLIPS = ("bvh/*.bvh", "bvh_more/*.bvh")
FIT_HEAD = 10
"""Frames of the short ``ikrig fit`` run whose time is subtracted (the issue's rule)."""


# --------------------------------------------------------------------------------------
# Rigs, trackers, targets
# --------------------------------------------------------------------------------------


@dataclass
class Case:
    """One clip ready for both solvers."""

    name: str
    motion: Motion  # the true clip, Y up, batch (F,)
    leg: float  # a leg's length (data units)
    trackers: tuple[int, ...]  # pelvis, head, wrists, ankles
    translates: bool  # non-root joints move off their offsets
    path: Path  # the clip file
    fingers: bool = False  # the 65-joint rig made from it

    @property
    def skeleton(self) -> Skeleton:
        return self.motion.skeleton


def trackers(skeleton: Skeleton, motion: Motion) -> tuple[tuple[int, ...], float]:
    """Six trackers (pelvis, head, left and right wrist, left and right ankle) and the leg."""
    legs = find_legs(skeleton, pose_world=motion.positions_world())
    pelvis = pelvis_joint(skeleton, legs)
    _, rest = fk(skeleton.parents, np.tile([0.0, 0, 0, 1], (skeleton.num_joints, 1)),
                 skeleton.offsets)  # fmt: skip
    head = head_or_top(skeleton, rest)
    wrists = tuple(find_hands(skeleton, legs, head).values())
    ankles = tuple(leg.ankle for leg in legs.legs[:2])
    picked = tuple(dict.fromkeys((pelvis, head, *wrists, *ankles)))
    return picked, legs.leg_length


def load_case(path: Path, frames: int) -> Case:
    clip = read_clip(path)
    motion = to_y_up(clip.motion, detect_up(clip.motion))
    if frames:
        motion = motion[:frames]
    sk = motion.skeleton
    picked, leg = trackers(sk, motion)
    moved = np.abs(motion.positions_local[:, sk.parents >= 0] - sk.offsets[sk.parents >= 0])
    return Case(path.stem, motion, leg, picked, bool(moved.max(initial=0.0) > 1e-6 * leg), path)


def with_fingers(case: Case) -> Case:
    """``case`` with 34 joints more (65 for a 31-joint rig): per hand a palm and five fingers
    of three joints curling in time, two eyes under the head (module docstring)."""
    sk, m = case.skeleton, case.motion
    names, parents, offsets = list(sk.names), list(sk.parents), list(sk.offsets)
    F = m.batch_shape[0]
    t = np.arange(F) / max(F - 1, 1)
    extra_rot = []
    for side, hand in (("L", case.trackers[2]), ("R", case.trackers[3])):
        kids = sk.children(hand)
        along = sk.offsets[kids[0]] if kids else sk.offsets[hand]
        along = along / max(np.linalg.norm(along), 1e-12) * 0.25 * case.leg / 4
        side_axis = np.cross(along, [0.0, 1.0, 0.0])
        side_axis = side_axis / max(np.linalg.norm(side_axis), 1e-12)
        names.append(f"{side}Palm")
        parents.append(hand)
        offsets.append(along * 0.5)
        extra_rot.append(np.tile([0.0, 0, 0, 1], (F, 1)))
        palm = len(names) - 1
        for k in range(5):
            parent = palm
            for seg in range(3):
                names.append(f"{side}Finger{k}_{seg}")
                parents.append(parent)
                spread = (k - 2) * 0.2 * np.linalg.norm(along) * side_axis
                offsets.append(along * (0.6 if seg else 1.0) + (spread if seg == 0 else 0.0))
                parent = len(names) - 1
                angle = 0.4 * (1 + np.sin(2 * np.pi * (t * (1 + k) + 0.1 * seg)))
                extra_rot.append(quat_from_axis_angle(side_axis, angle))
    head = case.trackers[1]
    for side, x in (("L", 1.0), ("R", -1.0)):
        names.append(f"{side}Eye")
        parents.append(head)
        offsets.append(np.array([0.03 * x, 0.05, 0.06]) * case.leg)
        yaw = 0.3 * np.sin(2 * np.pi * t * 2)
        extra_rot.append(quat_from_axis_angle([0.0, 1.0, 0.0], yaw))
    big = Skeleton(tuple(names), np.array(parents), np.array(offsets))
    rot = np.concatenate([m.rotations_local, np.stack(extra_rot, axis=1)], axis=1)
    n_new = len(names) - sk.num_joints
    pos = np.concatenate(
        [m.positions_local, np.broadcast_to(big.offsets[sk.num_joints :], (F, n_new, 3))], 1
    )
    motion = Motion(big, rot, pos, m.frame_time)
    return Case(f"{case.name}+fingers", motion, case.leg, case.trackers, case.translates,
                case.path, fingers=True)  # fmt: skip


def target_sets(case: Case) -> dict[str, Targets]:
    fps = 1.0 / (case.motion.frame_time or 1 / 30)
    six = targets_from_motion(case.motion, joints=case.trackers, rotations_for=case.trackers,
                              fps=fps)  # fmt: skip
    return {"all": targets_from_motion(case.motion, fps=fps), "six": six}


def rest_pose(skeleton: Skeleton) -> tuple[np.ndarray, np.ndarray]:
    return np.tile([0.0, 0, 0, 1], (skeleton.num_joints, 1)), skeleton.offsets.copy()


# --------------------------------------------------------------------------------------
# Measures
# --------------------------------------------------------------------------------------


@dataclass
class Row:
    clip: str
    joints: int
    frames: int
    case: str
    solver: str
    joint_err: float = float("nan")  # % leg, mean
    site_err: float = float("nan")  # % leg, mean
    goal_pos_p95: float = float("nan")  # % leg
    goal_rot_p95: float = float("nan")  # degrees
    free_acc: float = float("nan")  # % leg per frame^2: joints without a goal, largest
    free_acc_clip: float = float("nan")  # the same of the true clip
    steps: float = float("nan")
    ms_per_frame: float = float("nan")
    frames_per_s: float = float("nan")
    extra: dict = field(default_factory=dict)


def measure(case: Case, targets: Targets, rot_local, pos_local, row: Row) -> Row:
    """Fill ``row``'s errors for a solved pose sequence (local rotations and translations)."""
    sk = case.skeleton
    rot_w, pos_w = fk(sk.parents, np.asarray(rot_local, np.float64),
                      np.asarray(pos_local, np.float64))  # fmt: skip
    true_rot, true_pos = case.motion.fk()
    unit = case.leg / 100.0
    row.joint_err = float(np.linalg.norm(pos_w - true_pos, axis=-1).mean() / unit)
    if len(sk.end_site_parents):
        sites = end_site_positions(sk, rot_w, pos_w)
        true_sites = end_site_positions(sk, true_rot, true_pos)
        row.site_err = float(np.linalg.norm(sites - true_sites, axis=-1).mean() / unit)
    has_p, has_r = targets.has_position, targets.has_rotation
    free = ~(has_p | has_r).any(axis=0)
    free[sk.parents < 0] = False
    if len(pos_w) > 2 and free.any():
        row.free_acc = _largest_acceleration(pos_w[:, free]) / unit
        row.free_acc_clip = _largest_acceleration(true_pos[:, free]) / unit
    d = np.linalg.norm(pos_w - targets.positions_world, axis=-1)[has_p] / unit
    row.goal_pos_p95 = float(np.percentile(d, 95)) if d.size else 0.0
    if has_r.any():
        dot = np.abs(np.einsum("...i,...i->...", rot_w[has_r], targets.rotations_world[has_r]))
        row.goal_rot_p95 = float(np.degrees(np.percentile(2 * np.arccos(np.clip(dot, 0, 1)), 95)))
    else:
        row.goal_rot_p95 = 0.0
    return row


def _largest_acceleration(p: np.ndarray) -> float:
    """The largest second difference of ``(F, K, 3)`` positions over frames and joints."""
    return float(np.linalg.norm(p[2:] - 2 * p[1:-1] + p[:-2], axis=-1).max())


def run_mink(case: Case, targets: Targets, repeat: int) -> Row:
    from _mink_peer import MinkPeer

    peer = MinkPeer(case.skeleton, case.leg)
    per_frame, result = [], None
    for _ in range(repeat):
        result = peer.solve(targets.positions_world, targets.rotations_world,
                            rest_pose(case.skeleton))  # fmt: skip
        per_frame.append(float(result.seconds.sum()) / len(result.seconds))
    assert result is not None
    check = peer.check_conversion(result.qpos[:: max(1, len(result.qpos) // 20)])
    row = Row(case.name, case.skeleton.num_joints, targets.num_frames, "", "mink")
    measure(case, targets, result.rotations_local, result.positions_local, row)
    row.steps = float(result.steps.mean())
    row.ms_per_frame = 1e3 * statistics.median(per_frame)
    row.frames_per_s = 1e3 / row.ms_per_frame
    row.extra = {"conversion_check": check, "max_steps_frames": int((result.steps >= 50).sum())}
    return row


def body_api():
    """The agreed API of ``ikrig.solvers.body``, or None (with the reason printed once)."""
    try:
        from ikrig.solvers import body
    except Exception as exc:  # the package is being written elsewhere
        print(f"ikrig body solver not available ({type(exc).__name__}: {exc})")
        return None
    return body


def run_ikrig(body, case: Case, targets: Targets, repeat: int) -> Row:
    sk = case.skeleton
    F = targets.num_frames
    prior, goals = fit_problem(case, targets, slice(None))
    body.solve_body(*fit_problem(case, targets, slice(0, 2)))  # compile, warm up
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = body.solve_body(prior, goals)
        times.append(time.perf_counter() - t0)
    assert result is not None
    row = Row(case.name, sk.num_joints, F, "", "ikrig")
    measure(case, targets, result.motion.rotations_local, result.motion.positions_local, row)
    row.steps = float(np.mean(result.iterations))
    row.ms_per_frame = 1e3 * statistics.median(times) / F
    cold = body.BodyOptions(warm_start=False)
    batched = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        body.solve_body(prior, goals, cold)
        batched.append(time.perf_counter() - t0)
    row.frames_per_s = F / statistics.median(batched)
    return row


def fit_problem(case: Case, targets: Targets, frames: slice) -> tuple[Motion, list]:
    """The preferred clip and the goals ``ikrig fit`` solves for ``frames`` of the targets
    from the rest pose (``ikrig.app.body.fit_goals``: the targets' goals and the knee hints
    of tracking), so that the table measures what the command does."""
    from ikrig.app.body import fit_goals

    pos, rot = targets.positions_world[frames], targets.rotations_world[frames]
    rest = Motion.rest(case.skeleton)
    clip, goals, _ = fit_goals(rest, pos, rot, case.motion.frame_time or 1 / 30)
    return clip, goals


# --------------------------------------------------------------------------------------
# ikrig fit, timed as the issue says
# --------------------------------------------------------------------------------------

CLI = "import sys; from ikrig.cli import main; sys.exit(main())"


def _cli(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True,
                          env=env)  # fmt: skip


def fit_timing(case: Case, repeat: int) -> dict | None:
    """Wall time of whole ``ikrig fit`` processes (module docstring), or None (printed)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    if _cli(["fit", "--help"], env).returncode != 0:
        print(f"ikrig fit: the command does not exist yet; its timing is skipped ({case.name})")
        return None
    sk, F = case.skeleton, case.motion.batch_shape[0]
    if F <= FIT_HEAD:
        return None
    six = target_sets(case)["six"]
    with tempfile.TemporaryDirectory() as tmp:
        skel = Path(tmp) / "skeleton.bvh"
        write_bvh(skel, to_bvh_clip(Motion.rest(sk, (1,), frame_time=case.motion.frame_time)))
        head = Targets(six.names, six.positions_world[:FIT_HEAD],
                       six.rotations_world[:FIT_HEAD], six.fps)  # fmt: skip
        paths = {"whole": write_targets(Path(tmp) / "whole.npz", six),
                 "head": write_targets(Path(tmp) / "head.npz", head)}  # fmt: skip
        seconds: dict[str, list[float]] = {"whole": [], "head": []}
        _cli(["fit", str(skel), "--targets", str(paths["head"]), "-o", f"{tmp}/w.bvh"], env)
        for _ in range(repeat):
            for key, t in paths.items():
                t0 = time.perf_counter()
                r = _cli(["fit", str(skel), "--targets", str(t), "-o", f"{tmp}/{key}.bvh"], env)
                seconds[key].append(time.perf_counter() - t0)
                if r.returncode != 0:
                    print(f"ikrig fit failed on {case.name}: {r.stderr.strip()[-300:]}")
                    return None
    whole, head_s = (statistics.median(seconds[k]) for k in ("whole", "head"))
    return {"clip": case.name, "joints": sk.num_joints, "frames": F,
            "ms_per_frame": 1e3 * (whole - head_s) / (F - FIT_HEAD), "startup_s": head_s,
            "whole_s": whole}  # fmt: skip


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------

COLUMNS = (("joint err %", "joint_err", "{:.4f}"), ("site err %", "site_err", "{:.3f}"),
           ("goal pos p95 %", "goal_pos_p95", "{:.4f}"), ("goal rot p95 °", "goal_rot_p95",
           "{:.4f}"), ("free acc %", "free_acc", "{:.2f}"), ("clip's", "free_acc_clip",
           "{:.2f}"), ("steps", "steps", "{:.1f}"), ("ms/frame", "ms_per_frame", "{:.3f}"),
           ("frames/s", "frames_per_s", "{:.0f}"))  # fmt: skip


def _cell(value: float, fmt: str) -> str:
    return "-" if value is None or not np.isfinite(value) else fmt.format(value)


def table(rows: list[Row], marked: set[str]) -> str:
    head = ["clip", "J", "F", "goals", "solver", *(c[0] for c in COLUMNS)]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by_key: dict[tuple[str, str], dict[str, Row]] = {}
    for r in rows:
        by_key.setdefault((r.clip, r.case), {})[r.solver] = r
    for (clip, case), pair in by_key.items():
        name = clip + (" *" if clip in marked else "")
        for r in pair.values():
            cells = [_cell(getattr(r, key), fmt) for _, key, fmt in COLUMNS]
            out.append(f"| {name} | {r.joints} | {r.frames} | {case} | {r.solver} | "
                       + " | ".join(cells) + " |")  # fmt: skip
        if len(pair) == 2:
            a, b = pair["ikrig"], pair["mink"]
            ratios = []
            for _, key, _ in COLUMNS:
                x, y = getattr(a, key), getattr(b, key)
                ok = np.isfinite(x) and np.isfinite(y) and y != 0
                ratios.append(f"{x / y:.3g}" if ok else "-")
            out.append(f"| {name} | | | {case} | ikrig/mink | " + " | ".join(ratios) + " |")
    return "\n".join(out)


def cpu_model() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return platform.processor() or "unknown CPU"
    for line in out.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def clip_paths(patterns: list[str] | None) -> list[Path]:
    if patterns:
        return [Path(p) for pat in patterns for p in sorted(glob.glob(pat))]
    return [Path(p) for pat in DEFAULT_CLIPS for p in sorted(glob.glob(str(SHARED / pat)))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", nargs="+", help="clip files or globs (default: shared BVH)")
    ap.add_argument("--frames", type=int, default=120, help="frames per clip (0: all)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (median)")
    ap.add_argument("--save", help="write the rows as JSON here")
    ap.add_argument("--no-fit", action="store_true", help="skip the ikrig fit timing")
    ap.add_argument("--no-rig65", action="store_true", help="skip the 65-joint rig")
    args = ap.parse_args(argv)
    from importlib.metadata import version

    import mujoco

    print(f"# bench_body: {cpu_model()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, NumPy {np.__version__}, mink "
          f"{version('mink')}, MuJoCo {mujoco.__version__}")  # fmt: skip
    paths = clip_paths(args.clips)
    if not paths:
        sys.exit("no clips found (is ../shared/data present?)")
    print(f"frames per clip: {args.frames or 'all'}, repeats: {args.repeat}")
    body = body_api()
    cases = [load_case(p, args.frames) for p in paths]
    if not args.no_rig65:
        cmu = [c for c in cases if c.name.startswith("cmu") and c.skeleton.num_joints == 31]
        if cmu:
            cases.append(with_fingers(cmu[0]))
    rows: list[Row] = []
    for case in cases:
        for kind, targets in target_sets(case).items():
            if kind == "six" and len(case.trackers) != 6:
                kind = f"{len(case.trackers)} trackers"  # hands or head not found: say so
            row = run_mink(case, targets, args.repeat)
            row.case = kind
            rows.append(row)
            if body is not None:
                try:
                    mine = run_ikrig(body, case, targets, args.repeat)
                except Exception as exc:  # a solver still being written: report, go on
                    print(f"ikrig body solver failed on {case.name}/{kind}: {exc!r}")
                else:
                    mine.case = kind
                    rows.append(mine)
            print(f"  {case.name} {kind}: mink {row.ms_per_frame:.2f} ms/frame", flush=True)
    marked = {c.name for c in cases if c.translates}
    print()
    print(table(rows, marked))
    if marked:
        print("\n`*`: non-root joints translate in this clip; ball joints cannot follow them.")
    fits = []
    if not args.no_fit:
        timed = [c for c in cases if c.skeleton.num_joints == 31][:1]
        timed += [max(cases, key=lambda c: c.skeleton.num_joints)]
        for case in timed:  # the whole clip, as the rule says
            whole = load_case(case.path, 0)
            fit = fit_timing(with_fingers(whole) if case.fingers else whole, args.repeat)
            if fit is None:
                break
            peer = [r for r in rows if (r.clip, r.case, r.solver) == (case.name, "six", "mink")]
            line = (
                f"ikrig fit {fit['clip']} (J={fit['joints']}, F={fit['frames']}, six trackers):"
                f" {fit['ms_per_frame']:.3f} ms/frame, start-up {fit['startup_s']:.2f} s"
            )
            if peer:
                fit["mink_ms_per_frame"] = peer[0].ms_per_frame
                fit["ratio"] = fit["ms_per_frame"] / peer[0].ms_per_frame
                line += f"; mink {peer[0].ms_per_frame:.3f} ms/frame, ratio {fit['ratio']:.3g}"
            fits.append(fit)
            print(line)
    if args.save:
        Path(args.save).write_text(json.dumps(
            {"cpu": cpu_model(), "frames": args.frames, "repeat": args.repeat,
             "rows": [asdict(r) for r in rows], "fit": fits}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
