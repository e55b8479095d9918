"""``ikrig warmup``: compile the kernels ahead of time (see :mod:`ikrig.app.warmup`)."""

from __future__ import annotations

import time

import click

from ..app.warmup import TASKS, cache_dir, warm_up


@click.command()
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=None,
    help="Worker processes (default: one per core).",
)  # fmt: skip
@click.option(
    "--only", multiple=True, type=click.Choice(list(TASKS)),
    help="Run only this task (repeatable; default: all).",
)  # fmt: skip
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def warmup(jobs, only, quiet):
    """Compile ikrig's numerical kernels for this machine, once, ahead of time.

    The first run of each kernel compiles it (about a minute of CPU on a fresh install) and
    Numba keeps the result in its disk cache; later runs load it in milliseconds. This
    command runs small workloads that reach every kernel the commands use, on all cores.
    Run it after installing, in an image build or before a test suite. On a warm cache it
    takes a few seconds.
    """
    t0 = time.perf_counter()
    reports = warm_up(only or None, jobs=jobs, progress=not quiet)
    failed = [r for r in reports if r.error]
    compiling = sum(r.compiling for r in reports)
    click.echo(
        f"warmup: {len(reports) - len(failed)} of {len(reports)} tasks in "
        f"{time.perf_counter() - t0:.1f} s ({compiling:.1f} s of compiling across the "
        f"workers); cache: {cache_dir() or 'none (NUMBA_CACHE_DIR is not writable)'}"
    )
    for r in failed:
        click.echo(f"ikrig: warmup task {r.name!r} failed: {r.error}", err=True)
    if failed:
        raise SystemExit(1)
