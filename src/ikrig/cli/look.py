"""``ikrig look``: a clip's head (or a named joint) looks at a point over a span of frames,
the turn shared with its ancestors (:func:`ikrig.solvers.look.look_at`) and blended in and
out with a smoothstep; every frame outside the span and its blend is written as it was."""

from __future__ import annotations

from typing import NamedTuple

import click
import numpy as np

from ..errors import InputError
from ..io.clips import CLIP_SUFFIXES
from ..signal.spans import span_weights
from .common import (
    ANIMATION_OPTION,
    BLEND_OPTION,
    CLIP_OUTPUT_OPTION,
    FPS_OPTION,
    FRAMES_OPTION,
    UP_OPTION,
    check_outputs,
    frame_span,
    numbers,
    y_up_motion,
)
from .text import printable

__all__ = ["look"]


class _Look(NamedTuple):
    """The command's options, as click hands them over."""

    at: tuple[float, float, float]
    joint: str | None
    frames: str | None
    blend: float
    chain: int
    forward: tuple[float, float, float] | None
    animation: str | None
    skin: str | None
    fps: float | None
    up: str


@click.command()
@click.argument("input_path", metavar="CLIP", type=click.Path(dir_okay=False))
@click.option(
    "--at",
    required=True,
    metavar="X,Y,Z",
    callback=numbers(3, "X,Y,Z"),
    help="The point to look at, in the clip's own units and axes.",
)
@click.option(
    "--joint", default=None, metavar="NAME", help="The joint that looks (default: the head)."
)
@FRAMES_OPTION
@BLEND_OPTION
@click.option(
    "--chain",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Joints that share the turn: the head and its nearest ancestors (never the pelvis).",
)
@click.option(
    "--forward",
    default=None,
    metavar="X,Y,Z",
    callback=numbers(3, "X,Y,Z"),
    help="The joint's forward axis in its own frame (default: read off the clip).",
)
@CLIP_OUTPUT_OPTION
@ANIMATION_OPTION
@FPS_OPTION
@UP_OPTION
def look(input_path: str, output: str, **options) -> None:
    """Turn a clip's head (or --joint) to look at a point (--at X,Y,Z) over --frames, the
    turn shared with its ancestors and blended in and out over --blend seconds."""
    from ..io.clips import read_clip, write_clip

    opts = _Look(**options)
    check_outputs([(output, CLIP_SUFFIXES, "output")], inputs=[input_path])
    clip = read_clip(input_path, animation=opts.animation, fps=opts.fps, skin=opts.skin)
    source = clip.motion
    if source.batch_shape == (0,):
        raise InputError(f"{input_path}: the clip has no frames")
    up, motion = y_up_motion(source, opts.up)
    out, lines = _looked(source, motion, up, opts)
    write_clip(output, clip, out)
    for line in lines:
        click.echo(printable(line))
    click.echo(f"wrote {output}")


def _looked(source, motion, up: str, opts: _Look):
    """``(the clip's motion with the look, summary lines)``: solved in the Y-up world,
    written back in the clip's own, every untouched frame and joint copied from
    ``source``."""
    from ..app.head import head_forward
    from ..character.head import find_head
    from ..character.up import from_y_up
    from ..math.axes import points_to_y_up
    from ..pose import Motion
    from ..solvers.aim import AimAxes
    from ..solvers.look import look_at, look_chain

    sk = motion.skeleton
    head = find_head(sk) if opts.joint is None else sk.index(opts.joint)
    single = not motion.batch_shape
    frames = 1 if single else motion.num_frames
    start, stop = frame_span(opts.frames, frames)
    ft = motion.frame_time
    blend = 0.0 if ft is None else opts.blend / ft
    weights = span_weights(frames, start, stop, blend)
    forward, said = head_forward(motion, head, opts.forward)
    chain = look_chain(motion, head, opts.chain)
    target = points_to_y_up(np.asarray(opts.at), up)
    r = look_at(motion, head, target, weights[0] if single else weights, chain=chain,
                axes=AimAxes(forward_local=forward))  # fmt: skip
    back = from_y_up(r.motion, up)
    rl = np.array(source.rotations_local)  # the chain's joints on the frames that moved
    turned, cols = back.rotations_local, list(chain)
    if single:
        if weights[0] > 0:
            rl[cols] = turned[cols]
    else:
        rows = np.ix_(np.flatnonzero(weights > 0), np.array(cols, dtype=np.intp))
        rl[rows] = turned[rows]
    out = Motion(source.skeleton, rl, source.positions_local, source.frame_time)
    inside = np.zeros(frames, dtype=bool)
    inside[start:stop] = True
    error = np.degrees(np.atleast_1d(r.error_angle)[inside])
    reached = np.atleast_1d(r.reached)[inside]
    names = ", ".join(sk.names[j] for j in chain)
    lines = [
        f"look: {sk.names[head]} at {', '.join(f'{v:g}' for v in opts.at)}; forward {said}",
        f"  chain {names} (weights {', '.join(f'{w:g}' for w in _weights(len(chain)))})",
        f"  frames {start}..{stop - 1} ({stop - start}), blended over {blend:.3g} frames each side",
        f"  on target in {int(reached.sum())} of {len(reached)} frames; eye-ray error"
        f" median {np.median(error):.3g} deg, max {error.max():.3g} deg",
    ]
    return out, lines


def _weights(k: int) -> list[float]:
    from ..solvers.look import DEFAULT_JOINT_WEIGHT

    return [DEFAULT_JOINT_WEIGHT] * (k - 1) + [1.0]
