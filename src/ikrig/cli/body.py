"""``ikrig fit`` and ``ikrig pin``: the whole-body solver on files (:mod:`ikrig.app.body`).

Positions on the command line and in targets files are in the clip's own units and axes;
``--frames A:B`` is a Python slice of 0-based frame indices (``B`` not included), as
``ikrig look`` takes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from ..errors import InputError
from .common import (
    ANIMATION_OPTION,
    BLEND_OPTION,
    CLIP_OUTPUT_OPTION,
    FRAMES_OPTION,
    check_outputs,
    frame_span,
    numbers,
    parse_numbers,
)

_AT_HELP = "The point, X,Y,Z in the clip's own units and axes."


def _point(text: str, what: str) -> np.ndarray:
    values = parse_numbers(text, 3)
    if values is None:
        raise InputError(f"{what}: expected X,Y,Z (three finite numbers), got {text!r}")
    return np.array(values)


def _stats(values: np.ndarray, scale: float) -> str:
    v = values[np.isfinite(values)] * scale
    if not v.size:
        return "none"
    return f"mean {v.mean():.4g}, p95 {np.percentile(v, 95):.4g}, max {v.max():.4g}"


def _residual_lines(result, kinds: list[str], unit: str) -> list[str]:
    """One line per goal kind: position residuals (data units) and rotation residuals
    (degrees) over the frames where a goal of that kind was active, and the share of them
    reached."""
    kinds_arr = np.array(kinds)
    lines = []
    for kind in dict.fromkeys(kinds):
        cols = kinds_arr == kind
        on = np.asarray(result.active)[..., cols]
        pos = np.where(on, result.position_error[..., cols], np.nan)
        rot = np.where(on, result.rotation_error[..., cols], np.nan)
        reached = np.asarray(result.reached)[..., cols][on]
        share = 100.0 * reached.mean() if reached.size else 100.0
        parts = [] if kind == "orientation" else [f"position {_stats(pos, 1.0)} {unit}"]
        if kind not in ("position", "keep", "knee hint"):
            parts.append(f"rotation {_stats(rot, 180 / np.pi)} deg")
        met = f"reached {share:.1f} %" if kind != "knee hint" else "a hint, gives way"
        lines.append(f"  {kind:<12} " + "; ".join(parts) + f"; {met}")
    return lines


@click.command()
@click.argument("skeleton_path", metavar="SKELETON", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--targets",
    "targets_path",
    required=True,
    type=click.Path(dir_okay=False, exists=True),
    help="An .npz of per-frame targets: names (J,), positions (F,J,3) and rotations (F,J,4)"
    " xyzw, NaN where a joint has no goal, fps.",
)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The fitted clip (.bvh, .glb or .gltf), in SKELETON's layout.")  # fmt: skip
@ANIMATION_OPTION
def fit(skeleton_path, targets_path, output, animation, skin):
    """Solve a whole skeleton to per-frame targets: a few joints (tracking) or every
    joint's position (positions to rotations).

    If SKELETON holds as many frames as the targets, they are the preferred pose;
    otherwise its first frame (or rest pose) is, warm-started frame to frame. OUTPUT keeps
    SKELETON's hierarchy and channel layout. Prints each goal kind's residuals."""
    from ..app.body import fit_motion
    from ..io import read_clip
    from ..io.clips import CLIP_SUFFIXES
    from ..io.targets import read_targets

    check_outputs([(output, CLIP_SUFFIXES, "output")], inputs=[skeleton_path, targets_path])
    clip = read_clip(skeleton_path, animation=animation, skin=skin)
    targets = read_targets(targets_path, clip.motion.skeleton)
    frame_time = 1.0 / float(targets.fps)
    outcome = fit_motion(clip.motion, targets.positions_world, targets.rotations_world, frame_time)
    _write(output, clip, outcome.motion, frame_time)
    kinds = _goal_kinds(outcome.goals)
    if outcome.hints:  # the job's own weak goals, reported apart from the user's targets
        kinds[-outcome.hints :] = ["knee hint"] * outcome.hints
    click.echo(
        f"wrote {output} ({outcome.motion.num_joints} joints, {outcome.motion.num_frames}"
        " frames); residuals per goal kind:"
    )
    for line in _residual_lines(outcome.result, kinds, "units"):
        click.echo(line)


def _goal_kinds(goals) -> list[str]:
    """``"position"``, ``"orientation"``, ... of each goal (its class name, less ``Goal``)."""
    return [type(g).__name__.removesuffix("Goal").lower() for g in goals]


def _write(output: str, clip, motion, frame_time: float) -> None:
    """Write ``motion`` in ``clip``'s layout: on the clip's own times when it has the clip's
    frames, else ``frame_time`` apart from the clip's first time (a glTF animation keeps its
    clock, so that the channels the fit leaves alone stay in step)."""
    from ..io import write_clip
    from ..io.clips import clip_format
    from ..io.gltf.clip import GltfClip

    same_frames = motion.num_frames == clip.motion.num_frames
    if same_frames or not (clip_format(output) == "gltf" and isinstance(clip, GltfClip)):
        write_clip(output, clip, motion)
        return
    from ..io.gltf.write import write_gltf

    times = float(clip.times[0]) + np.arange(motion.num_frames) * frame_time
    write_gltf(output, clip, motion, times)


def _pins_from_file(path: str, num_frames: int) -> list:
    """Pins from a JSON file: a list of ``{"joint": NAME, "at": [x, y, z], "frames": "A:B"}``."""
    from ..app.body import Pin

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, list) or not data:
        raise InputError(f"{path}: expected a JSON list of pins")
    pins = []
    for k, item in enumerate(data):
        what = f"{path}: pin {k}"
        if not isinstance(item, dict) or set(item) - {"joint", "at", "frames"}:
            raise InputError(f"{what}: expected {{'joint', 'at', 'frames'}}")
        at = item.get("at")
        if not isinstance(at, list):
            raise InputError(f"{what}: 'at' must be a list [x, y, z]")
        point = _point(",".join(str(v) for v in at), f"{what} at")
        try:
            start, stop = frame_span(str(item.get("frames", ":")), num_frames)
        except InputError as exc:
            raise InputError(f"{what}: {exc}") from None
        pins.append(Pin(str(item.get("joint")), point, start, stop))
    return pins


@click.command()
@click.argument("clip_path", metavar="CLIP", type=click.Path(dir_okay=False, exists=True))
@click.option("--joint", default=None, help="The joint to pin, by name.")
@click.option("--at", default=None, metavar="X,Y,Z", callback=numbers(3, "X,Y,Z"), help=_AT_HELP)
@FRAMES_OPTION
@click.option("--pins", "pins_path", default=None, type=click.Path(dir_okay=False, exists=True),
              help='Several pins from a JSON file: [{"joint": ..., "at": [x, y, z],'
              ' "frames": "A:B"}, ...].')  # fmt: skip
@BLEND_OPTION
@CLIP_OUTPUT_OPTION
@ANIMATION_OPTION
def pin(clip_path, output, pins_path, **options):
    """Hold a joint on a point over a span of frames; the rest of the body follows and
    planted feet stay planted. Frames outside the spans and their blends are unchanged."""
    from ..app.body import Pin, pin_motion
    from ..io import read_clip, write_clip
    from ..io.clips import CLIP_SUFFIXES

    joint, at, frames_text = options["joint"], options["at"], options["frames"]
    check_outputs([(output, CLIP_SUFFIXES, "output")], inputs=[clip_path, pins_path])
    clip = read_clip(clip_path, animation=options["animation"], skin=options["skin"])
    motion = clip.motion
    F = motion.num_frames
    if pins_path is not None:
        if joint or at or frames_text:
            raise InputError("--pins: give either --pins or --joint/--at/--frames, not both")
        pins = _pins_from_file(pins_path, F)
    else:
        if not joint or at is None:
            raise InputError("pin: give --joint NAME and --at X,Y,Z (or --pins FILE)")
        start, stop = frame_span(frames_text, F)
        pins = [Pin(joint, np.array(at), start, stop)]
    outcome = pin_motion(motion, pins, blend_seconds=options["blend"])
    write_clip(output, clip, outcome.motion)  # the clip's own frames (glTF: its own times)
    joints = [motion.skeleton.index(p.joint) for p in pins]
    got = outcome.motion.positions_world()
    worst = max(
        float(np.linalg.norm(got[p.start : p.stop, j] - np.asarray(p.at_world), axis=-1).max())
        for p, j in zip(pins, joints)
    )
    click.echo(
        f"wrote {output} ({len(pins)} pin(s), {len(outcome.frames)} of {F} frames solved);"
        f" largest distance to a pin within its span: {worst:.4g} units"
    )
