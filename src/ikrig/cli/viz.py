"""Command-line pictures and the clip viewer: ``ikrig plot ...``, ``ikrig view`` (and the
helpers ``ikrig playground`` shares, :mod:`ikrig.cli.playground`).

Standalone click commands (``plot`` is a group), registered on the main group in
:mod:`ikrig.cli`. They need the ``[plot]`` extra (matplotlib, Pillow; MP4 also
imageio-ffmpeg) or the ``[viewer]`` extra (viser); a missing one is reported as a one-line
error naming the extra. Every CLIP argument is a clip file (``.bvh``, ``.glb``, ``.gltf``,
chosen by suffix; ``--animation`` and ``--fps`` pick a glTF animation and its rate) and may
be left out to use the built-in procedural walk (:func:`ikrig.data.walk.walk_clip`).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click
import numpy as np

from .common import (
    ANIMATION_OPTION,
    DATUM_OPTION,
    FPS_OPTION,
    LEGS_OPTION,
    MODE_OPTION,
    SEED_OPTION,
    ClipChoice,
    clip_argument,
    clip_choice,
    ground_option,
    load_clip,
    placement_from,
    read_source,
    standing_options,
    up_option,
    y_up_motion,
)

if TYPE_CHECKING:
    from ..app.placement import FootPlacement
    from ..character.legs import Legs
    from ..character.sole import FootSole


SHOWN_UP = up_option("It is shown turned Y-up.")


# ---------------------------------------------------------------------------------- helpers
def clip_ground(motion, spec, legs=None, seed=0, up="y"):
    """``(ground, legs, sole)`` for a Y-up clip: the ground laid out along its pelvis's path
    (:func:`~ikrig.viz.geometry.body_joint`; joint 0 without legs) at its floor, sized by its
    leg length (legs and sole are None for a clip without legs); a mesh file turned from
    ``up`` as the clip was."""
    from ..errors import IkrigError
    from ..ground import load_ground
    from ..viz.geometry import body_joint

    pos = motion.positions_world()
    found: Legs | None
    sole: FootSole | None
    try:
        from ..character.legs import find_legs
        from ..character.sole import estimate_sole

        found = find_legs(motion.skeleton, legs, pos)
        sole = estimate_sole(motion, found)
        length, floor = found.leg_length, sole.floor
    except IkrigError:
        found = sole = None
        floor = float(pos[..., 1].min())
        length = max(float(np.ptp(pos[0, :, 1])) / 2.0, 1e-6)
    path_xz = pos[:, body_joint(motion.skeleton, found)][:, [0, 2]]
    ground = load_ground(spec, path_xz, length, floor, seed=seed, up=up)
    return ground, found, sole


def stand(motion, legs, placement: FootPlacement):
    """A Y-up clip stood, moved or walked where ``placement`` says (``at``, ``heading``,
    ``path``, ``walk``, ``cycles``: :func:`~ikrig.foot.travel.travel`, as ``ikrig foot``
    does), or ``motion`` itself when it says nothing (then a clip without legs is fine)."""
    p = placement
    if p.at is None and p.heading is None and p.path is None and not p.walk and p.cycles == 1:
        return motion
    from ..character.legs import find_legs
    from ..foot.travel import travel

    found = find_legs(motion.skeleton, legs, motion.positions_world())
    return travel(motion, found, p.at, p.heading, p.path, p.walk, p.cycles)


def place(motion, given: ClipOnGround, up: str):
    """Foot placement of a Y-up clip (recorded with ``up``) as ``ikrig foot`` runs it
    (:func:`~ikrig.app.placement.place_clip` with the command's placement: the ground laid
    along its pelvis, a clip that walks in place found so, moved or walked where the
    options say): ``(result, the clip as placed, the ground the feet were stood on)``.
    Ground-coverage warnings are echoed as one line each."""
    from ..app.placement import place_clip
    from .common import echo_warnings

    placement = given.placement._replace(up=up)
    with echo_warnings():
        placed = place_clip(motion, given.ground_spec, [given.mode], given.legs, placement, True)
    return placed.results[given.mode], placed.source, placed.world()


def check_picture(output, clip=None, ground_spec=None, path=None):
    """Before any work: the output is a picture ikrig can write (a known suffix, a writable
    folder, not an input: the clip, a mesh ground or a ``--path`` file) and matplotlib is
    installed."""
    from ..viz import IMAGE_SUFFIXES, require
    from .common import check_outputs, ground_input

    ground = ground_input(ground_spec) if ground_spec is not None else None
    check_outputs([(output, IMAGE_SUFFIXES, "picture")], inputs=[clip, ground, path])
    require("matplotlib", "plot", "plotting")


def check_movie(output, clip=None, ground_spec=None, path=None):
    """Before any work: the output is a movie ikrig can write (.gif or .mp4 with its writer
    installed, a writable folder, not an input: the clip, a mesh ground or a ``--path``
    file)."""
    from ..viz.movie import check_movie_path
    from .common import ground_input

    inputs = [p for p in (clip, ground_input(ground_spec), path) if p]
    check_movie_path(output, inputs=inputs)


def ground_name(spec: str) -> str:
    """How a picture's title names the ground: a built-in's name, a mesh file's name."""
    return Path(spec).name


def _out(path) -> str:
    return str(Path(path))


def chain_problem(bones, limit, target):
    """The demo chain, its constraints (None when ``limit`` is 0) and a target."""
    from ..viz.chain2d import default_chain

    pos, cons = default_chain(bones, limit if limit > 0 else 60.0)
    if limit <= 0:
        cons = None
    if target is None:
        reach = float(np.linalg.norm(np.diff(pos, axis=0), axis=-1).sum())
        a = math.radians(115.0)
        target = (0.58 * reach * math.cos(a), 0.58 * reach * math.sin(a))
    return pos, cons, np.asarray(target, dtype=np.float64)


class ClipOnGround(NamedTuple):
    """What a clip command was given: the CLIP path (``None``: the built-in walk), the
    ``--ground`` spec, the foot-placement ``--mode``, the ``--legs`` override, the glTF
    ``--animation`` and ``--fps`` (:class:`~ikrig.cli.common.ClipChoice`), and how the clip
    meets the ground as ``ikrig foot`` takes it (``--seed``, ``--up``, and for the pictures
    ``--datum`` and where the clip stands)."""

    clip: str | None
    ground_spec: str
    mode: str
    legs: str | None
    choice: ClipChoice
    placement: FootPlacement


def clip_on_ground(command):
    """The options the clip commands share (after the CLIP argument), handed to
    ``command`` with the argument as one :class:`ClipOnGround` (click passes them by
    name; :func:`~ikrig.cli.common.placement_from` reads the placement's)."""

    @functools.wraps(command)
    def run(*, clip, ground_spec, mode, legs, **options):
        choice, placement = clip_choice(options), placement_from(options)
        return command(ClipOnGround(clip, ground_spec, mode, legs, choice, placement), **options)

    return run


# ---------------------------------------------------------------------------------- plot
@click.group()
def plot():
    """Pictures and movies (PNG/SVG/PDF, GIF/MP4); needs the [plot] extra."""


@plot.command("chain")
@click.option(
    "--solver",
    type=click.Choice(["ccd2d", "ccd", "fabrik", "follow", "dls"], case_sensitive=False),
    default="ccd2d",
    show_default=True,
)
@click.option("--bones", type=click.IntRange(1, 20), default=4, show_default=True)
@click.option(
    "--limit",
    type=float,
    default=60.0,
    show_default=True,
    help="Joint limit in degrees either side of the parent bone (0: free joints).",
)
@click.option("--target", type=(float, float), default=None, help="Target X Y.")
@click.option("--max-iterations", type=click.IntRange(0), default=100, show_default=True)
@click.option("--tolerance", type=float, default=1e-3, show_default=True)
@click.option(
    "--iterations/--no-iterations",
    default=True,
    show_default=True,
    help="Draw each iteration faded behind the final pose.",
)
@click.option(
    "-o", "--output", default="chain.png", show_default=True, type=click.Path(dir_okay=False)
)
def plot_chain(solver, bones, limit, target, max_iterations, tolerance, iterations, output):
    """A planar chain solved gizmo-style: bones, joint-limit fans, target, iterations."""
    check_picture(output)
    from ..viz.chain2d import plot_chain_2d
    from ..viz.options import ChainLook, SolveLimits

    pos, cons, tgt = chain_problem(bones, limit, target)
    limits = SolveLimits(max_iterations, tolerance)
    look = ChainLook(iterations=iterations)
    plot_chain_2d(pos, tgt, cons, solver=solver, limits=limits, path=output, look=look)
    click.echo(f"wrote {_out(output)}")


@plot.command("convergence")
@click.option("--bones", type=click.IntRange(1, 20), default=5, show_default=True)
@click.option(
    "--limit",
    type=float,
    default=0.0,
    show_default=True,
    help="Joint limit in degrees (0: free joints).",
)
@click.option("--target", type=(float, float), default=None, help="Target X Y.")
@click.option("--max-iterations", type=click.IntRange(1), default=40, show_default=True)
@click.option("--tolerance", type=float, default=1e-4, show_default=True)
@click.option(
    "-o", "--output", default="convergence.png", show_default=True, type=click.Path(dir_okay=False)
)
def plot_convergence(bones, limit, target, max_iterations, tolerance, output):
    """Error against iteration for CCD, FABRIK, follow and DLS on the same target."""
    check_picture(output)
    from ..viz.diagnostics import plot_convergence as draw
    from ..viz.options import SolveLimits

    pos, cons, tgt = chain_problem(bones, limit, target)
    draw(pos, tgt, cons, limits=SolveLimits(max_iterations, tolerance), path=output)
    click.echo(f"wrote {_out(output)}")


@plot.command("skeleton")
@clip_argument
@ground_option("stairs")
@click.option("--frame", type=int, default=None, help="Frame to draw (default: the middle).")
@click.option(
    "--ik/--no-ik",
    default=True,
    show_default=True,
    help="Run foot placement and draw the result (the source as a ghost).",
)
@MODE_OPTION
@LEGS_OPTION
@SEED_OPTION
@ANIMATION_OPTION
@FPS_OPTION
@SHOWN_UP
@DATUM_OPTION
@standing_options
@click.option("--no-rays", is_flag=True, help="Leave out the ray casts.")
@click.option(
    "-o", "--output", default="skeleton.png", show_default=True, type=click.Path(dir_okay=False)
)
@clip_on_ground
def plot_skeleton(given: ClipOnGround, frame, ik, no_rays, output):
    """One frame of a clip on a ground in 3D: bones, rays and hits, contacts, IK targets."""
    clip, ground_spec, mode, legs, choice, placement = given
    check_picture(output, clip, ground_spec, placement.path)
    from ..viz.options import View
    from ..viz.scene3d import plot_skeleton_3d

    up, motion = load_clip(clip, choice, placement.up)
    ground, found, _ = clip_ground(motion, ground_spec, legs, placement.seed, up)
    f = motion.num_frames // 2 if frame is None else frame
    result = None
    if ik and found is not None:
        result, motion, ground = place(motion, given, up)
    title = f"{ground_name(ground_spec)}, frame {f}" + (f", foot IK ({mode})" if result else "")
    view = View(rays=not no_rays, title=title)
    plot_skeleton_3d(motion, ground, frame=f, result=result, legs=legs, path=output, view=view)
    click.echo(f"wrote {_out(output)}")


@plot.command("diagnostics")
@clip_argument
@ground_option("stairs")
@MODE_OPTION
@LEGS_OPTION
@SEED_OPTION
@ANIMATION_OPTION
@FPS_OPTION
@SHOWN_UP
@DATUM_OPTION
@standing_options
@click.option(
    "-o", "--output", default="diagnostics.png", show_default=True, type=click.Path(dir_okay=False)
)
@clip_on_ground
def plot_diagnostics(given: ClipOnGround, output):
    """Per foot: clearance over the ground and pinning over time; knee flexion before/after."""
    clip, ground_spec, mode, legs, choice, placement = given
    check_picture(output, clip, ground_spec, placement.path)
    from ..viz.diagnostics import plot_foot_diagnostics

    up, motion = load_clip(clip, choice, placement.up)
    result, motion, ground = place(motion, given, up)
    title = f"{ground_name(ground_spec)}, mode {mode}"
    plot_foot_diagnostics(result, motion, ground, path=output, title=title)
    click.echo(f"wrote {_out(output)}")


@plot.command("movie")
@clip_argument
@ground_option("stairs")
@MODE_OPTION
@LEGS_OPTION
@SEED_OPTION
@ANIMATION_OPTION
@SHOWN_UP
@DATUM_OPTION
@standing_options
@click.option(
    "--max-frames",
    type=click.IntRange(1),
    default=150,
    show_default=True,
    help="Frames written at most (long clips are frame-skipped).",
)
@click.option(
    "--fps", "playback", type=float, default=None, help="Playback rate (default: real time)."
)
@click.option("--dpi", type=float, default=80, show_default=True)
@click.option(
    "-o",
    "--output",
    default="before_after.gif",
    show_default=True,
    type=click.Path(dir_okay=False),
    help="A .gif or .mp4 path (MP4 needs imageio-ffmpeg, in the [plot] extra).",
)
@clip_on_ground
def plot_movie(given: ClipOnGround, max_frames, playback, dpi, output):
    """Before/after movie: the baseline (root on the ground, no IK) beside the result."""
    clip, ground_spec, mode, legs, choice, placement = given
    check_movie(output, clip, ground_spec, placement.path)
    from ..viz.movie import write_before_after_movie
    from ..viz.options import MovieLook

    up, motion = load_clip(clip, choice, placement.up)
    result, motion, ground = place(motion, given, up)
    write_before_after_movie(
        result,
        motion,
        ground,
        output,
        max_frames=max_frames,
        fps=playback,
        look=MovieLook(
            dpi=dpi, labels=("before: root on the ground, no IK", f"after: foot IK ({mode})")
        ),
    )
    click.echo(f"wrote {_out(output)}")


@plot.command("batch")
@click.argument("summary", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "-o", "--output", default="batch.png", show_default=True, type=click.Path(dir_okay=False)
)
def plot_batch(summary, output):
    """Metric distributions of a batch, from its ikrig batch --report JSON."""
    import json

    check_picture(output, summary)
    from ..viz.batch import plot_batch_summary

    plot_batch_summary(json.loads(Path(summary).read_text(encoding="utf-8")), output)
    click.echo(f"wrote {_out(output)}")


# ---------------------------------------------------------------------------------- browser
@click.command()
@clip_argument
@ground_option("stairs")
@MODE_OPTION
@LEGS_OPTION
@SEED_OPTION
@ANIMATION_OPTION
@FPS_OPTION
@SHOWN_UP
@standing_options
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option("--play", is_flag=True, help="Start playing at once.")
@clip_on_ground
def view(given: ClipOnGround, host, port, play):
    """Play a clip on a ground in the browser with live foot IK; needs the [viewer] extra.
    --at, --heading, --path, --walk and --cycles stand the clip as ikrig foot does."""
    clip, ground_spec, mode, legs, choice, placement = given
    from ..viz import serve_forever
    from ..viz.viewer import ClipViewer

    source = read_source(clip, choice)
    up, motion = y_up_motion(source if clip is None else source.motion, placement.up)
    moved = stand(motion, legs, placement)
    if up != "y" or moved is not motion:  # the file's own frame (a glTF's mesh) is not shown
        source = motion = moved
    ground, _, _ = clip_ground(motion, ground_spec, legs, placement.seed, up)
    app = ClipViewer(source, ground, host=host, port=port, mode=mode, legs=legs, start_playing=play)
    serve_forever(app, click.echo)


__all__ = ["plot", "view"]
