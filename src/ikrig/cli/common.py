"""What the command modules (:mod:`ikrig.cli`, :mod:`ikrig.cli.viz`) share: output checks
before any work, ground specs, ikrig's warnings shown as one line each, the clip turned
into ikrig's Y-up world, and the datum line."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click
import numpy as np

from .._files import check_output
from ..errors import InputError
from ..foot.options import MODES

# Options the commands share (ikrig foot, batch, plot and view; one definition each).
GROUND_HELP = "Built-in ground (flat, stairs, slope, bumps, blocks) or a mesh file."


def ground_option(default: str | None = None):
    """``-g/--ground``: required without a ``default`` (foot, batch), else defaulted (the
    pictures and the viewer, which show the built-in stairs)."""
    if default is None:
        return click.option("-g", "--ground", "ground_spec", required=True, help=GROUND_HELP)
    return click.option(
        "-g", "--ground", "ground_spec", default=default, show_default=True, help=GROUND_HELP
    )


GROUND_OPTION = ground_option()
MODE_OPTION = click.option(
    "--mode",
    type=click.Choice(list(MODES)),
    default="full",
    show_default=True,
    help="Foot-placement recipe.",
)
LEGS_OPTION = click.option(
    "--legs", default=None, help="Leg joints: 'hip,knee,ankle[,toe];hip,knee,ankle[,toe]'."
)
SEED_OPTION = click.option(
    "--seed", default=0, show_default=True, help="Seed of random built-in grounds."
)
DATUM_OPTION = click.option(
    "--datum",
    type=click.Choice(["clip", "absolute"]),
    default="clip",
    show_default=True,
    help="clip: the ground's y = 0 is the clip's recorded floor; absolute: clip and ground "
    "share coordinates (the lowest sole point is planted on the ground).",
)


def up_option(then: str):
    """The ``--up`` option; ``then`` says what becomes of the result."""
    return click.option(
        "--up",
        type=click.Choice(["auto", "y", "z", "x"]),
        default="auto",
        show_default=True,
        help=f"The clip's (and a mesh file's) up axis; auto reads it off the poses. {then}",
    )


UP_OPTION = up_option("The result is written in the same convention.")
_ANIMATION = click.option(
    "--animation",
    default=None,
    metavar="NAME",
    help="glTF: the animation to use, by name or index (default: the first).",
)
_SKIN = click.option(
    "--skin",
    default=None,
    metavar="NAME",
    help="glTF: the skin (skeleton) to use, by name or index (default: the one with the most"
    " joints; ikrig info lists them).",
)


def ANIMATION_OPTION(command):  # noqa: N802 (used as the options' one definition)
    """The glTF clip options every command reading a clip takes: ``--animation`` and
    ``--skin`` (:func:`clip_choice` reads them)."""
    return _ANIMATION(_SKIN(command))


class ClipChoice(NamedTuple):
    """Which clip of a file a command reads: a glTF ``animation`` (name or index), the rate
    ``fps`` it is sampled at (None: the first, at its keys' own rate) and the ``skin`` (name
    or index; None: the one with the most joints)."""

    animation: str | None = None
    fps: float | None = None
    skin: str | None = None

    def given(self) -> list[str]:
        """The options given, as ``--name`` (for messages)."""
        return [f"--{name}" for name, value in self._asdict().items() if value is not None]


def clip_choice(options: dict) -> ClipChoice:
    """The :class:`ClipChoice` of a command's ``--animation``, ``--fps`` and ``--skin``,
    taken out of ``options``."""
    return ClipChoice(options.pop("animation", None), options.pop("fps", None),
                      options.pop("skin", None))  # fmt: skip


ANY_CLIP = ClipChoice()
"""No ``--animation`` or ``--fps``: a glTF's first animation at its keys' rate."""


def read_source(path, choice: ClipChoice = ANY_CLIP):
    """The clip a file holds (:func:`ikrig.io.read_clip`: a BVH or glTF clip, the glTF's
    animation and rate as ``choice`` says), or the built-in 4 s walk (a Motion) when
    ``path`` is None."""
    if path is None:
        if choice != ANY_CLIP:
            from ..errors import InputError

            given = choice.given()
            verb = "needs" if len(given) == 1 else "need"
            raise InputError(f"{' and '.join(given)} {verb} a glTF CLIP file")
        from ..data.walk import walk_clip

        return walk_clip(seconds=4.0)
    from ..io import read_clip

    return read_clip(path, animation=choice.animation, fps=choice.fps, skin=choice.skin)


def load_clip(path, choice: ClipChoice = ANY_CLIP, up="auto"):
    """``(up axis, the clip's Motion in ikrig's Y-up world)`` (see :func:`read_source`;
    ``up`` as ``--up`` says, ``auto`` detects it, as ``ikrig foot`` does)."""
    clip = read_source(path, choice)
    return y_up_motion(clip if path is None else clip.motion, up)


clip_argument = click.argument(
    "clip", metavar="[CLIP]", required=False, type=click.Path(dir_okay=False, exists=True)
)
"""The optional CLIP argument of the picture and browser commands (none: the built-in walk)."""


FPS_OPTION = click.option(
    "--fps",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    help="glTF: sample the animation at this rate (default: the keys' own).",
)


def _finite(value):
    if value is not None and not np.isfinite(value):
        raise click.BadParameter(f"expected a finite number, got {value!r}")
    return value


def _xz(ctx, param, value):
    """``--at X,Z`` as ``(x, z)`` floats."""
    if value is None:
        return None
    try:
        x, z = (float(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(f"expected X,Z (two numbers), got {value!r}") from None
    if not (np.isfinite(x) and np.isfinite(z)):
        raise click.BadParameter(f"expected two finite numbers, got {value!r}")
    return (x, z)


_STANDING = (
    click.option(
        "--at", callback=_xz, metavar="X,Z", help="Stand the pelvis here at frame 0 (Y-up world)."
    ),
    click.option(
        "--heading",
        type=float,
        callback=lambda ctx, param, v: _finite(v),
        metavar="DEG",
        help="Face this way: 0 is +Z, 90 is +X (default: as recorded).",
    ),
    click.option(
        "--path",
        type=click.Path(dir_okay=False),
        default=None,
        help="Move the clip along this CSV path: time,x,z[,heading] (s, clip units, degrees).",
    ),
    click.option(
        "--walk",
        is_flag=True,
        help="A cycle that walks in place walks: from --at, facing --heading, at its feet's speed.",
    ),
    click.option(
        "--cycles",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Play a cycle this many times in a row first (a closed cycle's seam frame once).",
    ),
)


def standing_options(command):
    """Where the clip stands (``ikrig foot``'s ``--at``, ``--heading``, ``--path``,
    ``--walk``, ``--cycles``); :func:`placement_from` reads them."""
    for option in reversed(_STANDING):
        command = option(command)
    return command


def placement_from(options: dict) -> FootPlacement:
    """The :class:`~ikrig.app.placement.FootPlacement` of a command's options, taken out of
    ``options``: ``seed``, ``datum``, ``up`` and :func:`standing_options` (``--heading`` in
    degrees, handed on in radians); the defaults for those a command does not take.

    Raises:
        click.UsageError: ``--at`` or ``--walk`` with ``--path``.
    """
    from ..app.placement import FootPlacement

    keys = ("seed", "datum", "up", "at", "heading", "path", "walk", "cycles")
    defaults = FootPlacement()._asdict()
    seed, datum, up, at, heading, path, walk, cycles = (options.pop(k, defaults[k]) for k in keys)
    if path is not None and (at is not None or walk):
        given = "--at and --path" if at is not None else "--walk and --path"
        raise click.UsageError(f"{given}: give one (the path says where the clip is)")
    turn = None if heading is None else float(np.radians(heading))
    return FootPlacement(seed, datum, up, at, turn, path, walk, cycles)


if TYPE_CHECKING:
    from ..app.placement import FootPlacement
    from ..pose import Motion

StrPath = str | os.PathLike[str] | Path


def check_outputs(
    outputs: Iterable[tuple[StrPath | None, tuple[str, ...] | None, str]],
    inputs: Iterable[StrPath | None] = (),
) -> None:
    """Check every output before any work (:func:`ikrig._files.check_output`: not an input,
    a known suffix, a writable folder, created if needed) and that no two are the same file.

    Args:
        outputs: ``(path, suffixes, what)`` triples; a None path is skipped.
        inputs: the paths read (None skipped).
    """
    read = [p for p in inputs if p is not None]
    seen: dict[str, str] = {}
    for path, suffixes, what in outputs:
        if path is None:
            continue
        out = check_output(path, inputs=read, suffixes=suffixes, what=what)
        key = os.path.normcase(os.path.realpath(out))
        if key in seen:
            raise InputError(f"{what} {out} is also the {seen[key]}; give each its own name")
        seen[key] = what


def ground_input(spec: str) -> str | None:
    """The mesh file a ground spec names (None for a built-in ground); an error, before any
    work, when it is neither."""
    from ..ground import ground_file

    return ground_file(spec)


@contextmanager
def echo_warnings() -> Iterator[None]:
    """Show ikrig's warnings (ground coverage, a far floor, limbs left unplaced) once each
    as ``ikrig: warning: ...`` lines; other warnings are shown as usual, after the block
    (showing one inside the recording block would record it again)."""
    from ..character.limbs import UnplacedLimbWarning
    from ..foot.offline import DatumWarning
    from ..ground.coverage import GroundCoverageWarning

    ours = (GroundCoverageWarning, DatumWarning, UnplacedLimbWarning)
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            for category in ours:  # (said once per run below, not once per process)
                warnings.simplefilter("always", category)
            yield
    finally:
        shown = set()
        for w in caught:
            if issubclass(w.category, ours):
                if str(w.message) not in shown:
                    shown.add(str(w.message))
                    click.echo(f"ikrig: warning: {w.message}", err=True)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def y_up_motion(motion: Motion, up: str) -> tuple[str, Motion]:
    """``(up axis, the clip in ikrig's Y-up world)``; ``up == "auto"`` detects it. Prints
    the up axis when it is not Y."""
    from ..character.up import detect_up, to_y_up

    given = up != "auto"
    up = up if given else detect_up(motion)
    if up != "y" or given:
        click.echo(f"up axis: {up} ({'given' if given else 'detected'})")
    return up, to_y_up(motion, up)


def datum_line(datum: dict) -> str:
    """The printed line saying how the ground met the clip."""
    if datum["kind"] == "clip":
        return (
            f"datum: clip (the ground's y = 0 is put at the clip's floor, y = {datum['floor']:.6g})"
        )
    return f"datum: absolute (the ground as given; the clip's floor is at y = {datum['floor']:.6g})"


CLIP_OUTPUT_OPTION = click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    required=True,
    help="Where to write the result (.bvh, .glb, .gltf; the input's layout; never the input).",
)
"""The ``-o/--output`` clip file of every command that writes a clip in its input's layout."""


def frame_span(spec: str | None, frames: int) -> tuple[int, int]:
    """``(start, stop)`` of ``--frames A:B`` over ``frames`` frames, as a Python slice
    (``A`` included, ``B`` not; either may be left out or negative); all frames for None.

    Raises:
        InputError: not ``A:B`` with integers, or a span holding no frame.
    """
    if spec is None:
        return 0, frames
    parts = spec.split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        a, b = (int(p) if p.strip() else None for p in parts)
    except ValueError:
        raise InputError(
            f"--frames: expected A:B (frame numbers, B not included), got {spec!r}"
        ) from None
    start, stop, _ = slice(a, b).indices(frames)
    if stop <= start:
        raise InputError(f"--frames {spec}: holds none of the clip's {frames} frames")
    return start, stop


def parse_numbers(text: str, count: int) -> tuple[float, ...] | None:
    """``count`` comma-separated finite numbers read from ``text``, or None when it holds
    anything else."""
    try:
        out = tuple(float(v) for v in text.split(","))
    except ValueError:
        return None
    return out if len(out) == count and all(math.isfinite(v) for v in out) else None


def numbers(count: int, what: str):
    """A click callback reading ``count`` comma-separated finite numbers (None stays)."""

    def read(ctx, param, value):
        if value is None:
            return None
        out = parse_numbers(value, count)
        if out is None:
            raise click.BadParameter(f"expected {what} ({count} finite numbers), got {value!r}")
        return out

    return read


FRAMES_OPTION = click.option(
    "--frames",
    default=None,
    metavar="A:B",
    help="Frames: A included, B not, as a Python slice (default: all).",
)
"""``--frames A:B`` of the commands that act on a span of a clip (read by :func:`frame_span`)."""

BLEND_OPTION = click.option(
    "--blend",
    type=click.FloatRange(min=0.0),
    default=0.2,
    show_default=True,
    help="Seconds over which the change eases in before the span and out after it.",
)
"""``--blend SECONDS`` of the same commands."""
