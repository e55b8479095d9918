"""``ikrig batch``: ``ikrig foot`` on a whole clip library (see :mod:`ikrig.batch`)."""

from __future__ import annotations

import os

import click

from ..batch import (
    ALL_ANIMATIONS,
    BatchInterrupted,
    BatchSettings,
    FootJob,
    default_jobs,
    each_animation,
    expand_inputs,
    legs_map,
    run_batch,
    summary_table,
    write_report,
)
from ..batch.cluster import SCHEDULER_ENV, scheduler_address
from ..batch.job import file_sha256
from ..errors import InputError
from .common import (
    ANIMATION_OPTION,
    DATUM_OPTION,
    FPS_OPTION,
    GROUND_OPTION,
    MODE_OPTION,
    SEED_OPTION,
    UP_OPTION,
    check_outputs,
    clip_choice,
    ground_input,
    placement_from,
    standing_options,
)


@click.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUTS...")
@GROUND_OPTION
@click.option(
    "-o",
    "--out-dir",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for the results; they mirror the inputs' tree. Holds the manifest.",
)
@MODE_OPTION
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Local worker processes (default: one per core).",
)
@click.option(
    "--scheduler",
    default=None,
    help=f"Dask scheduler address (tcp://host:8786; default ${SCHEDULER_ENV}); "
    "runs the batch on that cluster ([cluster] extra).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the per-clip metrics as JSON here, and as CSV beside it.",
)
@click.option(
    "--legs",
    default=None,
    help="Leg joints for every clip ('hip,knee,ankle[,toe];...'), or a .json "
    "file mapping clip patterns to such specs (mixed rigs).",
)
@ANIMATION_OPTION
@FPS_OPTION
@SEED_OPTION
@DATUM_OPTION
@UP_OPTION
@standing_options
@click.option("--force", is_flag=True, help="Redo every clip, done or not.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def batch(ctx, inputs, ground_spec, out_dir, mode, report_path, **rest):
    """Place the feet of every clip of a library, as ikrig foot does each.

    INPUTS are clip files (.bvh, .glb, .gltf), folders (searched recursively) or glob
    patterns. --animation, --skin and --fps apply to the glTF files (--animation all:
    every animation of each, written as NAME@INDEX-ANIMATION.glb), and the placement options
    (--at, --heading, --path, --walk, --cycles) to every clip, as in ikrig foot. Results
    mirror the inputs' tree under OUT_DIR, each written atomically; OUT_DIR/ikrig_batch.jsonl
    records every clip (input and options hashes, status, error,
    metrics). Running the same command again skips the clips already done and redoes
    failed or missing ones.
    A bad clip is recorded and the batch goes on; the exit status is 1 if any failed.
    """
    mesh = ground_input(ground_spec)
    choice = clip_choice(rest)
    placed = placement_from(rest)
    path = os.path.abspath(placed.path) if placed.path else None
    if path is not None and not os.path.isfile(path):
        raise InputError(f"--path: no such file {placed.path!r}")
    if report_path:
        check_outputs([(report_path, (".json",), "report")], inputs=[mesh, path])
    clips = expand_inputs(list(inputs), out_dir)
    if choice.animation == ALL_ANIMATIONS:
        clips, choice = each_animation(clips), choice._replace(animation=None)
    job = FootJob(
        ground=os.path.abspath(mesh) if mesh else ground_spec,
        mode=mode,
        seed=placed.seed,
        datum=placed.datum,
        up=placed.up,
        ground_sha256=file_sha256(mesh) if mesh else None,
        animation=choice.animation,
        fps=choice.fps,
        skin=choice.skin,
        at=placed.at,
        heading=placed.heading,
        path=path,
        path_sha256=file_sha256(path) if path else None,
        walk=placed.walk,
        cycles=placed.cycles,
    )
    address = scheduler_address(rest["scheduler"])
    settings = BatchSettings(
        out_dir=os.path.abspath(out_dir),
        jobs=rest["jobs"] or default_jobs(),
        scheduler=address,
        force=rest["force"],
        progress=not rest["quiet"],
        legs=legs_map(rest["legs"]),
    )
    where = (
        f"Dask cluster {address}"
        if address
        else f"{settings.jobs} local process" + "es" * (settings.jobs > 1)
    )
    click.echo(f"batch: {len(clips)} clips, ground {ground_spec}, mode {mode}, on {where}")
    try:
        summary = run_batch(clips, job, settings)
    except BatchInterrupted as exc:
        click.echo(f"ikrig: {exc}", err=True)
        ctx.exit(130)
    click.echo(summary_table(summary))
    if report_path:
        json_path, csv_path = write_report(report_path, summary)
        click.echo(f"wrote {json_path} and {csv_path}")
    if summary["failed"]:
        click.echo(
            f"ikrig: {summary['failed']} of {summary['clips']} clips failed (see above)",
            err=True,
        )
        ctx.exit(1)
