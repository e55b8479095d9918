"""``python -m ikrig.blender build -o DIR [--wheels FOLDER]``: the Blender extension zip
(:func:`ikrig.blender.build.build_extension`); ``python -m ikrig.blender render ...``: the
README's before/after picture (:mod:`ikrig.blender.render`)."""

from __future__ import annotations

import argparse
import sys

from ..errors import IkrigError


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m ikrig.blender")
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="write the installable extension zip")
    build.add_argument("-o", "--output", required=True, help="folder for the zip")
    build.add_argument("--wheels", default=None, help="bundle the wheels of this folder")
    render = sub.add_parser("render", help="render a clip on stairs, before and after")
    render.add_argument("clip", help="a BVH file")
    render.add_argument("-o", "--output", required=True, help="the PNG to write")
    render.add_argument("--frame", type=int, default=None, help="the frame (default: middle)")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            from .build import build_extension

            print(build_extension(args.output, args.wheels))
        else:
            from .render import render_before_after

            print(render_before_after(args.clip, args.output, args.frame))
    except IkrigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
