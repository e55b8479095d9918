"""Build the API reference (HTML) of ikrig from its docstrings with pdoc.

    python docs/api/build.py [OUTPUT_DIR]

Without OUTPUT_DIR the pages go to a new temporary folder, whose path is printed. Every
public module (no part of its name starts with ``_``) is named to pdoc explicitly, so a
module that fails to import fails the build (exit status 1) instead of being left out.
"""

from __future__ import annotations

import pkgutil
import sys
import tempfile
import warnings
from pathlib import Path

import pdoc

import ikrig


def public_modules() -> list[str]:
    """``ikrig`` and every public module under it, sorted."""
    names = ["ikrig"]
    for info in pkgutil.walk_packages(ikrig.__path__, prefix="ikrig."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="ikrig-api-"))
    # annotations naming types imported only for type checkers cannot be resolved at run
    # time; pdoc then shows them as written, which is fine
    warnings.filterwarnings("ignore", message="Error parsing type annotation")
    pdoc.render.configure(docformat="google", show_source=False)
    pdoc.pdoc(*public_modules(), output_directory=out)
    print(f"API reference: {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
