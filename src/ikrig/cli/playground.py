"""``ikrig playground``: drag a chain's target, or (``--body``, or a CLIP) a whole
character's hands, feet and look target, and watch the solve live in the browser. Needs
the ``[viewer]`` extra (viser); a missing one is a one-line error naming it."""

from __future__ import annotations

from typing import NamedTuple

import click

from .common import ANIMATION_OPTION, ANY_CLIP, clip_argument, clip_choice, load_clip, up_option

__all__ = ["playground"]


class _Options(NamedTuple):
    """The command's options, as click hands them over (the glTF ones aside)."""

    body: bool
    frame: int
    up: str
    host: str
    port: int
    solver: str
    bones: int


@click.command()
@clip_argument
@click.option(
    "--body",
    is_flag=True,
    help="Drag the hands, feet and look target of a whole character (CLIP, or the built-in"
    " walk) instead of a chain's target.",
)
@click.option(
    "--frame",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="--body: the clip's frame shown first, its pose the preferred pose.",
)
@ANIMATION_OPTION
@up_option("It is shown turned Y-up.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True)
@click.option(
    "--solver",
    type=click.Choice(["two-bone", "ccd", "fabrik", "follow", "dls"], case_sensitive=False),
    default="fabrik",
    show_default=True,
    help="The chain's solver (without --body).",
)
@click.option(
    "--bones", type=click.IntRange(2, 8), default=4, show_default=True,
    help="The chain's bones (without --body).",
)  # fmt: skip
def playground(clip, **options):
    """Drag a target and watch a chain solve live in the browser; with --body (or a CLIP),
    drag a character's hands, feet and look target and watch the whole body follow. Needs
    the [viewer] extra."""
    from ..viz import serve_forever

    choice = clip_choice(options)
    opts = _Options(**options)
    if clip is None and not opts.body:
        if choice != ANY_CLIP or opts.frame:
            raise click.UsageError("--animation, --skin and --frame need --body or a CLIP")
        from ..viz.playground import Playground

        app = Playground(host=opts.host, port=opts.port, solver=opts.solver, bones=opts.bones)
        serve_forever(app, click.echo)
        return
    from ..viz.body_playground import BodyPlayground

    _, motion = load_clip(clip, choice, opts.up)
    frames = motion.num_frames if motion.batch_shape else 1
    if opts.frame >= frames:
        raise click.BadParameter(f"the clip has {frames} frames (0 .. {frames - 1})",
                                 param_hint="--frame")  # fmt: skip
    serve_forever(BodyPlayground(motion, frame=opts.frame, host=opts.host, port=opts.port),
                  click.echo)  # fmt: skip
