"""The ``ikrig`` command line: ``demo``, ``foot`` (and ``info``, ``convert`` from
:mod:`ikrig.cli.clips`, ``plot``, ``view`` from :mod:`ikrig.cli.viz`, ``playground`` from
:mod:`ikrig.cli.playground`, ``warmup``, ``batch``, ``look`` from :mod:`ikrig.cli.look`,
``fit`` and ``pin`` from :mod:`ikrig.cli.body`).

Every output is checked before any work (:func:`check_outputs`: never an input, a known
suffix, a writable folder, created if needed) and written atomically.

Errors print one line (``ikrig: error: ...``) and exit with status 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from pathlib import Path
from typing import NamedTuple

import click
import numpy as np

from .._files import write_text
from ..app.placement import DEFAULT_PLACEMENT, FootPlacement, clip_with_time
from ..errors import IkrigError, InputError
from .ahead import compile_ahead
from .common import (
    ANIMATION_OPTION,
    CLIP_OUTPUT_OPTION,
    DATUM_OPTION,
    FPS_OPTION,
    GROUND_HELP,
    GROUND_OPTION,
    LEGS_OPTION,
    MODE_OPTION,
    MODES,
    SEED_OPTION,
    UP_OPTION,
    ClipChoice,
    check_outputs,
    clip_choice,
    datum_line,
    echo_warnings,
    ground_input,
    placement_from,
    standing_options,
    y_up_motion,
)

BVH, CLIPS, JSON = (".bvh",), (".bvh", ".glb", ".gltf"), (".json",)


REPORT_OPTION = click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the metrics (result, baseline, comparisons) as JSON here.",
)


@click.command()
@click.option(
    "--clip",
    "clip_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Use this clip (.bvh, .glb, .gltf) instead of the built-in walk.",
)
@click.option(
    "-g",
    "--ground",
    "ground_spec",
    default="stairs",
    show_default=True,
    help=GROUND_HELP + " The demo lays built-in stairs unless told otherwise.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default="ikrig_demo.bvh",
    show_default=True,
    help="Where to write the result (BVH).",
)
@REPORT_OPTION
@UP_OPTION
@click.option(
    "--gif/--no-gif",
    default=True,
    show_default=True,
    help="Write a before/after GIF beside the output when the [plot] extra is there.",
)
def demo(clip_path, ground_spec, output, report_path, up, gif):
    """The main job on built-in data: a humanoid walks over stairs with its feet planted.

    Generates a 31-joint humanoid and a walk cycle by code (or reads --clip), lays the ground
    (built-in stairs unless -g says otherwise) along its path, places the feet (mode full),
    writes the result as BVH (in the clip's own up axis) and prints the metrics against the
    do-nothing baseline (root on the ground, no IK) and trace-offset. The built-in walk is
    also written beside the result as walk.bvh (unless a file of that name is there), to
    try the other commands on.
    """
    gif_path = Path(output).with_suffix(".gif") if gif else None
    check_outputs(
        [(output, BVH, "output"), (report_path, JSON, "report"), (gif_path, None, "GIF")],
        inputs=[clip_path, ground_input(ground_spec)],
    )
    compile_ahead(["full", "trace-offset"])  # a first run: on the second core
    if clip_path:
        clip = clip_with_time(clip_path)
        source = str(clip_path)
    else:
        from ..data.walk import walk_clip
        from ..io.bvh import to_bvh_clip

        clip = to_bvh_clip(walk_clip(seconds=6.0, fps=60.0))
        source = "built-in walk (31 joints, 6 s at 60 fps)"
    click.echo(f"clip: {source}; ground: {ground_spec}")
    from .._jit.setup import compile_seconds

    up, motion = y_up_motion(clip.motion, up)
    t0, compiled = time.perf_counter(), compile_seconds()
    with echo_warnings():
        report, table = run_foot(
            motion,
            ground_spec,
            ["full", "trace-offset"],
            extra={"input": source, "ground": ground_spec},
            placement=FootPlacement(up=up),
        )
    compiled = compile_seconds() - compiled
    elapsed = time.perf_counter() - t0 - compiled
    first = f" (after {compiled:.1f} s compiling kernels, first run only)" if compiled else ""
    click.echo(
        f"legs: {report['legs']}; solved {report['frames']} frames (and the"
        f" comparisons) in {elapsed:.2f} s{first}"
    )
    result, ground = _write_results(clip, report, table, ("full", up), output, report_path)
    if not clip_path:
        _write_demo_source(clip, Path(output).with_name(DEMO_SOURCE))
    if gif_path is not None:
        _maybe_gif(result, motion, ground, gif_path)


DEMO_SOURCE = "walk.bvh"
"""Where ``ikrig demo`` leaves the built-in walk it started from (beside its output), for
the README's next commands (``ikrig foot walk.bvh ...``)."""


def _write_demo_source(clip, path: Path) -> None:
    """Write the demo's built-in walk to ``path``, unless a file is there already (never
    overwritten: it may be the user's own)."""
    from ..io.bvh import write_bvh

    if path.exists():
        click.echo(f"kept {path} (a file of that name was there; the built-in walk not written)")
        return
    write_bvh(path, clip)
    click.echo(f"wrote {path} (the built-in walk it started from: try 'ikrig foot {path.name}')")


def _write_results(clip, report, table, mode_up, output, report_path):
    """Write the clip of ``mode_up = (mode, up axis)`` in the format ``output``'s suffix
    names, in the file's own up axis (and the report as JSON, atomically), print the
    metrics table; return that mode's result (Y-up) and the ground."""
    from ..character.up import from_y_up
    from ..io.clips import write_clip

    mode, up = mode_up
    result, ground = report.pop("_results")[mode], report.pop("_ground")
    report.pop("_source", None)
    write_clip(output, clip, from_y_up(result.motion, up))
    click.echo(table)
    if report_path:
        write_text(report_path, json.dumps(report, indent=2))
    click.echo(f"wrote {output}" + (f" and {report_path}" if report_path else ""))
    return result, ground


def _maybe_gif(result, source, ground, path):
    """Write a before/after GIF if the [plot] extra is installed; say where, or why not."""
    try:
        from ..viz.movie import write_before_after_gif

        write_before_after_gif(result, source, ground, path)  # with a progress bar
    except (ImportError, IkrigError) as exc:
        click.echo(f"(no before/after GIF: {exc}; the [plot] extra makes one)")
        return
    click.echo(f"wrote {path} (before/after)")


class FootOutputs(NamedTuple):
    """The files ``ikrig foot`` writes: the clip (``-o``), and optionally the JSON report
    (``--report``) and the before/after movie (``--gif``)."""

    output: str
    report_path: str | None
    gif_path: str | None


def _outputs_as_record(command):
    """Hand the ``-o``, ``--report`` and ``--gif`` values to ``command`` as one
    :class:`FootOutputs`, ``--animation`` and ``--fps`` as one
    :class:`~ikrig.cli.common.ClipChoice`, and ``--seed``, ``--datum``, ``--up``, ``--at``,
    ``--heading`` (degrees, handed on in radians), ``--path``, ``--walk`` and ``--cycles``
    as one :class:`FootPlacement` (click passes every option by name)."""

    @functools.wraps(command)
    def run(**options):
        outputs = FootOutputs(*(options.pop(k) for k in ("output", "report_path", "gif_path")))
        choice = clip_choice(options)
        return command(outputs=outputs, placement=placement_from(options), choice=choice, **options)

    return run


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@GROUND_OPTION
@CLIP_OUTPUT_OPTION
@MODE_OPTION
@REPORT_OPTION
@click.option("--compare", is_flag=True, help="Also run the other modes and report them.")
@LEGS_OPTION
@ANIMATION_OPTION
@FPS_OPTION
@SEED_OPTION
@DATUM_OPTION
@UP_OPTION
@click.option(
    "--gif",
    "gif_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write a before/after movie (GIF, or MP4) here ([plot] extra).",
)
@standing_options
@_outputs_as_record
def foot(
    input_path, ground_spec, mode, compare, legs,
    choice: ClipChoice, placement: FootPlacement, outputs: FootOutputs,
):  # fmt: skip
    """Plant the feet of a clip (.bvh, .glb, .gltf) on uneven ground and write the result.

    An in-place clip (a game walk cycle) walks on the spot given by --at and --heading, or
    along --path; with --walk it walks forward from there."""
    output, report_path, gif_path = outputs
    inputs = [p for p in (input_path, ground_input(ground_spec), placement.path) if p is not None]
    check_outputs(
        [(output, CLIPS, "output"), (report_path, JSON, "report"), (gif_path, None, "movie")],
        inputs=inputs,
    )
    if gif_path:
        from ..viz.movie import check_movie_path

        check_movie_path(gif_path, inputs=inputs)
    modes = [mode] + ([m for m in MODES if m != mode] if compare else [])
    compile_ahead(modes)  # a first run: on the second core
    clip = clip_with_time(input_path, choice.animation, fps=choice.fps, skin=choice.skin)
    up, motion = y_up_motion(clip.motion, placement.up)
    with echo_warnings(), _naming(input_path, ground_spec):
        report, table = run_foot(
            motion,
            ground_spec,
            modes,
            legs,
            extra={"input": str(input_path), "ground": ground_spec},
            placement=placement._replace(up=up),
        )
    click.echo(datum_line(report["datum"]))
    if report["placed"]["walks_in_place"]:
        click.echo("walks in place: contacts found relative to its sliding feet, no foot lock")
    if report["placed"]["slides_over_steps"]:
        click.echo(
            "  facing up or down the stairs, each stance foot slides over a step's edge while"
            " down and floats there: --walk walks the cycle up them, --heading along the"
            " treads keeps it on one"
        )
    source = report.pop("_source")
    result, ground = _write_results(clip, report, table, (mode, up), output, report_path)
    if gif_path:
        from ..viz.movie import write_before_after_gif

        write_before_after_gif(result, source, ground, gif_path)
        click.echo(f"wrote {gif_path} (before/after)")


@contextlib.contextmanager
def _naming(input_path: str, ground_spec: str):
    """Errors about the clip found while placing it (no legs, a zero leg length) name its
    file, unless they name one of the command's files already."""
    try:
        yield
    except InputError as exc:
        msg = str(exc)
        if any(Path(p).name in msg for p in (input_path, ground_spec)):
            raise
        raise InputError(f"{input_path}: {msg}") from None


def run_foot(
    motion, ground_spec, modes, legs=None, extra=None, progress=True,
    placement: FootPlacement = DEFAULT_PLACEMENT,
):  # fmt: skip
    """Load the ground for a clip (in ikrig's Y-up world), run foot placement in each mode
    (:func:`ikrig.app.placement.place_clip`), and build the report."""
    from ..app.placement import place_clip, slides_over_steps
    from ..app.report import foot_report

    placed = place_clip(motion, ground_spec, modes, legs, placement, progress)
    results, world = placed.results, placed.world()
    first = results[modes[0]]
    report, table = foot_report(results, placed.source, world, extra)  # against the moved clip
    report["datum"] = {
        "kind": placement.datum,
        "offset": first.datum,
        "floor": float(first.sole.floor),
    }
    report["up"] = placement.up
    heading = placement.heading
    report["placed"] = {
        "at": None if placement.at is None else list(placement.at),
        "heading": None if heading is None else float(np.degrees(heading)),
        "path": placement.path,
        "walk": placement.walk,
        "cycles": placement.cycles,
        "walks_in_place": placed.walks_in_place,
        "slides_over_steps": slides_over_steps(placed, ground_spec),
    }
    report["_results"], report["_ground"] = results, world
    report["_source"] = placed.source
    return report, table
