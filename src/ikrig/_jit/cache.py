"""Numba's disk cache, kept fresh when the code a cached kernel compiles in changes.

Numba tells a cached kernel's staleness by the source of the one file that defines it. A
kernel also compiles in the jitted helpers it calls (``kernels/_two_bone_math.py``,
``constraints/_kernels.py``, ...) and the records and constants it reads from other
modules. So after an edit or a ``git pull`` that changes only a helper, an editable install
kept running the old machine code, silently (a wheel install rewrites every file, which
refreshes everything).

:func:`install` puts a cache locator in front of Numba's own for kernels defined in ikrig.
It stores and finds the cache files exactly where Numba's ``NUMBA_CACHE_DIR`` locator does,
and stamps them with the source of the defining file *and* of every ikrig module its code
may compile in (:func:`kernel_sources`); a change to any of them recompiles the kernel, a
change elsewhere does not. Other packages' kernels are left to Numba's locators. With a
Numba whose cache machinery differs from the one this was written for (a ``CacheImpl``
with a list of locator classes, as in 0.59-0.68), or with ``NUMBA_CACHE_LOCATOR_CLASSES``
set, Numba's own behaviour stays. An ikrig index that no longer unpickles (it names a
module that moved) counts as stale (:func:`_tolerate_moved_code`). Scanning the modules
costs about 12 ms when every kernel of the package is imported.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pickle
import sys
from functools import cache
from types import ModuleType
from typing import Any

__all__ = ["install", "is_ikrig_module", "kernel_sources"]

_PACKAGE = __name__.partition(".")[0] or "ikrig"


def is_ikrig_module(name: str) -> bool:
    """Whether a module name is ikrig or one of its modules."""
    return name == _PACKAGE or name.startswith(_PACKAGE + ".")


def _module_of(value: Any) -> str:
    """The module a value comes from: a module's own name, a jitted function's, an
    object's or its type's."""
    if isinstance(value, ModuleType):
        return value.__name__
    func = getattr(value, "py_func", None)  # a Numba dispatcher
    if func is not None:
        return getattr(func, "__module__", "") or ""
    name = getattr(value, "__module__", None)
    if not isinstance(name, str):
        name = getattr(type(value), "__module__", "") or ""
    return name


_OUR_CACHE_DIRS: set[str] = set()
"""The cache folders of ikrig's kernels (one per source folder), as the locator made them."""

_SCANNED: dict[str, tuple[int, frozenset[str], bool]] = {}
"""Per module: its namespace's size when scanned, the ikrig modules it refers to, and
whether it holds jitted code (a finished module is scanned once)."""


def _scan(name: str) -> tuple[frozenset[str], bool]:
    """The ikrig modules module ``name`` refers to, and whether it holds jitted code."""
    module = sys.modules.get(name)
    namespace = vars(module) if module is not None else {}
    seen = _SCANNED.get(name)
    if seen is not None and seen[0] == len(namespace):
        return seen[1], seen[2]
    values = list(namespace.values())
    refs = frozenset(m for m in map(_module_of, values) if is_ikrig_module(m))
    holds = any(getattr(v, "py_func", None) is not None for v in values)
    _SCANNED[name] = (len(namespace), refs, holds)
    return refs, holds


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018  (an empty cell raises)
    except ValueError:
        return False
    return True


def kernel_sources(py_func: Any) -> list[str]:
    """The source files of the ikrig modules a jitted function may compile in, its own
    first: the modules its namespace and closure refer to (through module objects,
    functions, jitted helpers, records, constants), and recursively theirs for modules
    holding jitted code (a module without any, such as ``errors``, counts by itself)."""
    own = py_func.__module__
    closure = [c.cell_contents for c in (py_func.__closure__ or ()) if _filled(c)]
    found = {own: None}
    todo = sorted(_scan(own)[0] | {m for m in map(_module_of, closure) if is_ikrig_module(m)})
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found[name] = None
        refs, holds = _scan(name)
        if holds:
            todo.extend(sorted(refs - found.keys()))
    names = [own, *sorted(n for n in found if n != own)]  # the same order in every process
    files = [getattr(sys.modules.get(n), "__file__", None) for n in names]
    return [f for f in files if isinstance(f, str)]


@cache
def _file_hash(path: str, mtime: float, size: int) -> bytes:
    """A file's SHA-256, once per process for each (mtime, size) it is seen with."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def _digest(files: list[str]) -> str:
    h = hashlib.sha256()
    for path in files:
        try:
            st = os.stat(path)
            h.update(path.encode() + _file_hash(path, st.st_mtime, st.st_size))
        except OSError:
            h.update(path.encode() + b"?")
    return h.hexdigest()


def install() -> bool:
    """Put the ikrig locator first among Numba's cache locators; False (and nothing
    changed) when this Numba's cache machinery is not the one expected."""
    try:
        caching = importlib.import_module("numba.core.caching")
    except ImportError:
        return False
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    base = getattr(caching, "UserProvidedCacheLocator", None) or getattr(
        caching, "_UserProvidedCacheLocator", None
    )
    classes = getattr(impl, "_locator_classes", None)
    if base is None or not isinstance(classes, list):
        return False
    if any(getattr(c, "_ikrig", False) for c in classes):
        return True

    class KernelSourcesLocator(base):  # type: ignore[misc,valid-type]
        """Numba's ``NUMBA_CACHE_DIR`` locator for ikrig's kernels, stamped with every
        source they compile in (module docstring)."""

        _ikrig = True

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if not is_ikrig_module(getattr(py_func, "__module__", "") or ""):
                return None
            return super().from_function(py_func, py_file)

        def __init__(self, py_func: Any, py_file: str) -> None:
            super().__init__(py_func, py_file)
            _OUR_CACHE_DIRS.add(self.get_cache_path())
            try:
                self._sources = kernel_sources(py_func)
            except Exception:  # an odd object in a namespace: never fail an import for it
                self._sources = [py_file]

        def get_source_stamp(self) -> Any:
            return (super().get_source_stamp(), _digest(self._sources))

    classes.insert(0, KernelSourcesLocator)
    _tolerate_moved_code(caching)
    return True


def _tolerate_moved_code(caching: ModuleType) -> None:
    """Numba unpickles a cache index before it compares its stamp, and an index names what
    its kernels' signatures hold by module (a named tuple's class): once that module moved
    or was renamed (an upgrade in place, a pull that reorganises the package) the first
    call raised ``ModuleNotFoundError`` or ``AttributeError``. An ikrig index that cannot
    be read is stale, as Numba takes one whose stamp differs: the kernel recompiles and the
    index is written again. Other packages' indexes are left to Numba."""
    index_file = getattr(caching, "IndexDataCacheFile", None)
    load = getattr(index_file, "_load_index", None)
    if load is None or getattr(load, "_ikrig", False):
        return

    def _load_index(self: Any) -> Any:
        try:
            return load(self)
        except (ImportError, AttributeError, pickle.UnpicklingError, EOFError, TypeError):
            if os.path.dirname(str(getattr(self, "_index_path", ""))) not in _OUR_CACHE_DIRS:
                raise
            return {}

    _load_index._ikrig = True  # type: ignore[attr-defined]
    index_file._load_index = _load_index  # type: ignore[union-attr]
