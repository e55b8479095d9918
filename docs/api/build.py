"""Build the API reference (HTML) of ikrig from its docstrings with pdoc.

    python docs/api/build.py [OUTPUT_DIR]

Without OUTPUT_DIR the pages go to a new temporary folder, whose path is printed. Every
public module (no part of its name starts with ``_``) is named to pdoc explicitly, so a
module that fails to import fails the build (exit status 1) instead of being left out.
"""

from __future__ import annotations

import importlib
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


def resolve_lazy_names(names: list[str]) -> None:
    """Put each module's lazily imported public names (``ikrig.foot``, ``ikrig.viz``: a
    module ``__getattr__`` that reads them from their defining module at every lookup) into
    its namespace, in this process only: pdoc documents what a module's namespace holds,
    and left the pipeline's and the viewers' names out. A name whose extra is missing stays
    out."""
    for name in names:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            if attr in vars(module):
                continue
            try:
                setattr(module, attr, getattr(module, attr))
            except ImportError:
                continue


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="ikrig-api-"))
    # annotations naming types imported only for type checkers cannot be resolved at run
    # time; pdoc then shows them as written, which is fine
    warnings.filterwarnings("ignore", message="Error parsing type annotation")
    # every public module is named, packages and their submodules alike (so that one that
    # fails to import fails the build); pdoc then meets some of them twice and says so
    warnings.filterwarnings("ignore", message="The module specification .* adds a module named")
    pdoc.render.configure(docformat="google", show_source=False)
    modules = public_modules()
    resolve_lazy_names(modules)
    pdoc.pdoc(*modules, output_directory=out)
    print(f"API reference: {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
