"""The ``ikrig`` command line: ``info``, ``demo``.

Errors print one line (``ikrig: error: ...``) and exit with status 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click
import numpy as np

from ._version import __version__
from .errors import IkrigError


class _Group(click.Group):
    """A click group that turns ikrig errors into one clear line unless --debug is given."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (IkrigError, OSError) as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            msg = str(exc) if isinstance(exc, IkrigError) else f"{exc.strerror}: {exc.filename}"
            click.echo(f"ikrig: error: {msg}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="ikrig")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def main(ctx, debug):
    """Inverse kinematics for character animation."""
    ctx.obj = {"debug": debug}


def clip_summary(path) -> dict:
    """A JSON-ready summary of a BVH file: joints, frames, timing and channel layout."""
    from .io.bvh import read_bvh

    clip = read_bvh(path)
    sk = clip.motion.skeleton
    layouts: dict[str, int] = {}
    for ch in clip.channels:
        key = " ".join(ch) if ch else "(none)"
        layouts[key] = layouts.get(key, 0) + 1
    positions_world = clip.motion.positions_world()
    rest_height = float(np.ptp(_rest_positions(sk)[:, 1])) if sk.num_joints > 1 else 0.0
    return {
        "path": str(path),
        "joints": sk.num_joints,
        "root": sk.names[int(np.flatnonzero(sk.parents < 0)[0])],
        "end_sites": int(len(sk.end_site_parents)),
        "frames": clip.num_frames,
        "frame_time": clip.frame_time,
        "fps": clip.fps,
        "duration": clip.duration,
        "channels": int(sum(len(c) for c in clip.channels)),
        "channel_layout": layouts,
        "rest_height": rest_height,
        "bounds_min": positions_world.reshape(-1, 3).min(axis=0).tolist()
        if clip.num_frames
        else None,
        "bounds_max": positions_world.reshape(-1, 3).max(axis=0).tolist()
        if clip.num_frames
        else None,
        "joint_names": list(sk.names),
    }


def _rest_positions(skeleton):
    from .pose import Motion

    return Motion.rest(skeleton).positions_world()


@main.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def info(path, as_json):
    """Summarise a BVH file: joints, frames, fps, duration, channel layout."""
    s = clip_summary(path)
    if as_json:
        click.echo(json.dumps(s, indent=2))
        return
    click.echo(f"{s['path']}")
    click.echo(f"  joints      {s['joints']} (root {s['root']}, {s['end_sites']} end sites)")
    click.echo(
        f"  frames      {s['frames']} at {s['fps']:.4g} fps"
        f" (frame time {s['frame_time']:.6g} s, duration {s['duration']:.3f} s)"
    )
    click.echo(f"  channels    {s['channels']} per frame")
    for layout, count in s["channel_layout"].items():
        click.echo(f"    {count:3d} x {layout}")
    click.echo(f"  rest height {s['rest_height']:.4g} (file units)")
    if s["bounds_min"] is not None:
        lo = ", ".join(f"{v:.4g}" for v in s["bounds_min"])
        hi = ", ".join(f"{v:.4g}" for v in s["bounds_max"])
        click.echo(f"  bounds      ({lo}) .. ({hi})")
    click.echo("  joint names " + " ".join(s["joint_names"]))


@main.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default="ikrig_demo_leg.bvh",
    show_default=True,
    help="Where to write the solved clip.",
)
@click.option("--frames", type=click.IntRange(2, 100000), default=120, show_default=True)
def demo(output, frames):
    """Solve a built-in leg stepping through targets (two-bone IK) and write the clip as BVH."""
    from .demo import LEG_JOINTS, run_leg_demo
    from .io.bvh import BvhClip, write_bvh

    t0 = time.perf_counter()
    r = run_leg_demo(frames)
    elapsed = time.perf_counter() - t0
    click.echo("frame  target (x, y, z)            reached  error      knee")
    for f in range(0, frames, max(1, frames // 12)):
        tx, ty, tz = r.targets_world[f]
        click.echo(
            f"{f:5d}  ({tx:6.3f}, {ty:6.3f}, {tz:6.3f})   {'yes' if r.reached[f] else 'no ':3s}"
            f"      {r.error[f]:.2e}   {r.knee_deg[f]:5.1f} deg"
        )
    channels = tuple(
        ("Xposition", "Yposition", "Zposition", "Zrotation", "Xrotation", "Yrotation")
        if j == 0
        else ("Zrotation", "Xrotation", "Yrotation")
        for j in range(r.motion.num_joints)
    )
    write_bvh(output, BvhClip(r.motion, channels, None, None))
    click.echo(
        f"{frames} frames of {'/'.join(LEG_JOINTS)} solved in {elapsed * 1e3:.1f} ms;"
        f" reached {int(r.reached.sum())}/{frames} (the rest are out of reach and straighten"
        f" toward the target); wrote {Path(output)}"
    )


if __name__ == "__main__":
    main()
