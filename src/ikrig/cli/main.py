"""The ``ikrig`` group: its options, its one-line errors, and its commands loaded when run.

Start-up is the first thing a user waits for. ``ikrig --help`` imports click and this
module only: each command lives in the module :data:`COMMANDS` names, imported when that
command runs (``ikrig info`` loads the clip readers, not the batch runner, Numba or the
pictures), and the help lists the commands from :data:`SUMMARIES`, their help's first
paragraph (``tests/test_cli_startup.py`` checks they are the commands' own).
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from .._version import __version__
from ..errors import IkrigError
from .text import printable

__all__ = ["COMMANDS", "SUMMARIES", "main"]

COMMANDS = {
    "batch": "batch",
    "convert": "clips",
    "demo": "commands",
    "fit": "body",
    "foot": "commands",
    "info": "clips",
    "look": "look",
    "pin": "body",
    "playground": "playground",
    "plot": "viz",
    "view": "viz",
    "warmup": "warmup",
}
"""Each command's module in :mod:`ikrig.cli` (the command object has the command's name)."""

SUMMARIES = {
    "batch": "Place the feet of every clip of a library, as ikrig foot does each.",
    "convert": "Convert a clip between BVH and glTF (.glb, .gltf), by suffix.",
    "demo": "The main job on built-in data: a humanoid walks over stairs with its feet planted.",
    "fit": "Solve a whole skeleton to per-frame targets: a few joints (tracking) or every"
    " joint's position (positions to rotations).",
    "foot": "Plant the feet of a clip (.bvh, .glb, .gltf) on uneven ground and write the result.",
    "info": "Summarise a clip file (.bvh, .glb, .gltf): joints, frames, fps, duration, channel"
    " layout or animations and skins.",
    "look": "Turn a clip's head (or --joint) to look at a point (--at X,Y,Z) over --frames, the"
    " turn shared with its ancestors and blended in and out over --blend seconds.",
    "pin": "Hold a joint on a point over a span of frames; the rest of the body follows and"
    " planted feet stay planted. Frames outside the spans and their blends are unchanged.",
    "playground": "Drag a target and watch a chain solve live in the browser; with --body"
    " (or a CLIP), drag a character's hands, feet and look target and watch the whole body follow."
    " Needs the [viewer] extra.",
    "plot": "Pictures and movies (PNG/SVG/PDF, GIF/MP4); needs the [plot] extra.",
    "view": "Play a clip on a ground in the browser with live foot IK; needs the [viewer] extra."
    " --at, --heading, --path, --walk and --cycles stand the clip as ikrig foot does.",
    "warmup": "Compile ikrig's numerical kernels for this machine, once, ahead of time.",
}
"""The first paragraph of each command's help, for ``ikrig --help`` without importing it."""


def fail(message: str):
    """Print ``ikrig: error: MESSAGE`` (one line, control characters escaped) and exit 2."""
    click.echo(f"ikrig: error: {printable(message)}", err=True)
    sys.exit(2)


#: ``ikrig`` or ``ikrig plot`` with nothing after it: click shows the help (click >= 8.2).
_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _usage_line(exc: click.UsageError) -> str:
    """A click usage error as one line, with where to find help."""
    msg = " ".join(exc.format_message().split())
    ctx = exc.ctx
    return msg + (f" (see '{ctx.command_path} --help')" if ctx is not None else "")


class Group(click.Group):
    """A click group that turns ikrig errors (and usage errors) into one clear line unless
    --debug is given."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except _HELP:
            raise
        except click.UsageError as exc:
            fail(_usage_line(exc))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # the reader went away (``ikrig info x.bvh | head``)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except _HELP:
            raise
        except click.UsageError as exc:
            fail(_usage_line(exc))
        except (IkrigError, OSError) as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            if isinstance(exc, IkrigError) or not exc.strerror:
                msg = " ".join(str(exc).split()) or type(exc).__name__
            else:
                msg = exc.strerror + (f": {exc.filename}" if exc.filename else "")
            fail(msg)


class _LazyGroup(Group):
    """The top group: :data:`COMMANDS` imported on first use, listed from
    :data:`SUMMARIES`."""

    def list_commands(self, ctx) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module = importlib.import_module(f"{__package__}.{COMMANDS[cmd_name]}")
            self.add_command(getattr(module, cmd_name.replace("-", "_")), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx, formatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            cmd = self.commands.get(name)
            if cmd is None:
                rows.append((name, click.utils.make_default_short_help(SUMMARIES[name], limit)))
            elif not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup)
@click.version_option(__version__, prog_name="ikrig")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.option(
    "--allow-outside",
    is_flag=True,
    help="Let a .gltf read buffer files outside its own folder (off: a downloaded file"
    " cannot read your other files).",
)
@click.pass_context
def main(ctx, debug, allow_outside):
    """Inverse kinematics for character animation."""
    ctx.obj = {"debug": debug}
    if allow_outside:
        from ..io.gltf.uri import files_outside_allowed

        ctx.with_resource(files_outside_allowed())
