"""The house layout (issue 10): small modules, short signatures, imports that point down.

These read the source, so they fail the moment a change breaks a rule, with the offender
named: a module over :data:`MAX_LINES`, a Python function over :data:`MAX_PARAMS` parameters
(compiled kernels are exempt: they take named records instead), an import that points up a
layer or closes a cycle, a foot step that compares a mode, or a public function of
:data:`HINTED` without full type hints.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "ikrig"
MODULES = sorted(SRC.rglob("*.py"))
MAX_LINES = 500
MAX_PARAMS = 8
MAX_LOOSE = 8
SHARED_PRIVATE = ("kernels", "_jit")
"""Packages whose modules any package may import, private or not: they exist to be shared."""
HINTED = ("solvers", "constraints", "ground")
"""Packages whose public functions and methods are fully annotated (issue 37)."""

LAYERS = (
    ("errors", "_checks", "_jit", "_files", "_version"),
    ("math",),
    ("kernels", "skeleton", "pose"),
    ("constraints",),
    ("solvers",),
    ("ground",),
    ("signal",),
    ("character",),
    ("metrics",),
    ("foot",),
    ("io", "data"),
    ("app", "batch"),
    ("viz",),
    ("cli", "__main__", "__init__"),
    ("blender",),
)
"""Bottom to top: a module may import its own layer and the layers below it."""


def _name(path: Path) -> str:
    return ".".join(("ikrig",) + path.relative_to(SRC).with_suffix("").parts).removesuffix(
        ".__init__"
    )


def _part(module: str) -> str:
    """The top-level part (package or module) of ``ikrig.part...``."""
    return module.split(".")[1] if module.count(".") else "__init__"


def _layer(module: str) -> int:
    part = _part(module)
    for i, names in enumerate(LAYERS):
        if part in names:
            return i
    raise AssertionError(f"{module}: its part {part!r} is in no layer of tests/test_layout.py")


def _import_statements(path: Path):
    """``(module, names)`` of every ``ikrig`` import in ``path``, anywhere in it (lazy and
    type-only imports too), relative ones made absolute (``names`` empty for ``import``)."""
    name = _name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod.startswith("ikrig"):
                yield mod, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            yield from ((a.name, []) for a in node.names if a.name.startswith("ikrig"))


def _imports(path: Path) -> set[str]:
    """The ``ikrig`` modules or packages ``path`` imports from, as written."""
    return {mod for mod, _ in _import_statements(path)}


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _params(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return len([n for n in names if n not in ("self", "cls")])


def _compiled_by_call(path: Path) -> set[str]:
    """Names of functions compiled by a call (``njit(...)(fn)``, ``named(fn, ...)``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name):
            callee = ast.unparse(node.func)
            if "jit" in callee or callee.endswith("named"):
                out.add(node.args[0].id)
    return out


def _compiled(node: ast.FunctionDef | ast.AsyncFunctionDef, by_call: set[str]) -> bool:
    return node.name in by_call or any("jit" in ast.unparse(d) for d in node.decorator_list)


def _public_module(path: Path) -> bool:
    return not any(part.startswith("_") for part in _name(path).split("."))


def _public(name: str) -> bool:
    """Public names: no leading underscore, or a dunder (``__init__`` takes public arguments)."""
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _api_defs(body: list[ast.stmt], names: set[str] | None = None, prefix: str = ""):
    """``(qualified name, node)`` of the public functions and the public methods of the public
    classes among ``body``'s statements (only those called ``names``, if given)."""
    for node in body:
        if names is not None and getattr(node, "name", None) not in names:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
            yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield from _api_defs(node.body, prefix=f"{prefix}{node.name}.")


def _exported(tree: ast.Module) -> set[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(x, ast.Name) and x.id == "__all__" for x in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def _api(path: Path):
    """``(where, qualified name, node, names compiled by a call there)`` of the public API of a
    public module: its own public definitions, and the ones its ``__all__`` re-exports from a
    private sibling module (``two_bone_positions`` lives in ``_two_bone_positions``)."""
    tree = ast.parse(path.read_text())
    for qual, node in _api_defs(tree.body):
        yield _name(path), qual, node, _compiled_by_call(path)
    exported = _exported(tree)
    for imp in tree.body:
        if not (isinstance(imp, ast.ImportFrom) and imp.level == 1 and imp.module):
            continue
        if not imp.module.split(".")[-1].startswith("_"):
            continue
        names = {a.name for a in imp.names if (a.asname or a.name) in exported}
        src = path.parent.joinpath(*imp.module.split(".")).with_suffix(".py")
        if names and src.exists():
            by_call = _compiled_by_call(src)
            for qual, node in _api_defs(ast.parse(src.read_text()).body, names):
                yield _name(src), qual, node, by_call


def _unannotated(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = node.args
    params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]
    out = [p.arg for p in params if p.annotation is None and p.arg not in ("self", "cls")]
    return out + (["return"] if node.returns is None else [])


API_MODULES = [p for p in MODULES if _public_module(p) and _part(_name(p)) in HINTED]


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_module_is_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{_name(path)}: {lines} lines (at most {MAX_LINES})"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_python_functions_take_at_most_eight_parameters(path):
    by_call = _compiled_by_call(path)
    long = [
        f"{n.name} ({_params(n)})"
        for n in _functions(path)
        if not _compiled(n, by_call) and _params(n) > MAX_PARAMS
    ]
    assert not long, f"{_name(path)}: {', '.join(long)}"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_imports_point_down(path):
    here = _layer(_name(path))
    up = sorted(m for m in _imports(path) if _layer(m) > here)
    assert not up, f"{_name(path)} (layer {here}) imports from above: {', '.join(up)}"


def test_no_import_cycle_between_packages():
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        part = _part(_name(path))
        graph.setdefault(part, set()).update(
            _part(m) for m in _imports(path) if _part(m) not in (part, "__init__")
        )

    def cycle_from(start, node, seen):
        for nxt in graph.get(node, ()):
            if nxt == start:
                return seen + [nxt]
            if nxt not in seen:
                found = cycle_from(start, nxt, seen + [nxt])
                if found:
                    return found
        return None

    for part in graph:
        found = cycle_from(part, part, [part])
        assert found is None, "import cycle: " + " -> ".join(found)


NAMES = {_name(p) for p in MODULES}


def _module_imports(path: Path) -> set[str]:
    """The ``ikrig`` modules ``path`` imports, each resolved to a module: ``from . import
    x`` names the submodule ``x`` when there is one."""
    out = set()
    for mod, names in _import_statements(path):
        subs = {f"{mod}.{n}" for n in names} & NAMES
        out |= subs or {mod}
    return out & NAMES


def test_no_import_cycle_between_modules():
    """Not even a type-only one: a record both sides need belongs in a leaf module."""
    graph = {_name(p): _module_imports(p) - {_name(p)} for p in MODULES}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, path + [node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        assert found is None, "import cycle: " + " -> ".join(found)


def _is_private(module: str) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in module.split(".")[1:])


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_no_private_module_of_another_package(path):
    here = _part(_name(path))
    reached = sorted(
        m
        for m in _module_imports(path)
        if _is_private(m) and _part(m) not in (here, *SHARED_PRIVATE) and m.count(".") > 1
    )
    assert not reached, f"{_name(path)} imports private modules of other packages: {reached}"


def test_few_modules_loose_at_the_top():
    loose = sorted(p.name for p in SRC.glob("*.py"))
    assert len(loose) <= MAX_LOOSE, f"{len(loose)} modules loose at src/ikrig/: {loose}"


def test_metrics_does_not_import_the_foot_pipeline():
    allowed = {"errors", "_checks", "signal", "character", "pose", "skeleton", "math", "metrics"}
    for path in sorted((SRC / "metrics").glob("*.py")):
        parts = {_part(m) for m in _imports(path)}
        assert parts <= allowed, (_name(path), sorted(parts - allowed))


def test_no_foot_step_compares_a_mode():
    for path in sorted((SRC / "foot" / "stages").glob("*.py")):
        text = path.read_text()
        for word in ("mode", '"full"', '"trace-offset"', '"goal-blend"'):
            assert word not in text, f"{_name(path)} mentions {word}: a recipe decides that"


@pytest.mark.parametrize("path", API_MODULES, ids=_name)
def test_public_functions_have_full_type_hints(path):
    bare = [
        f"{where}.{qual} ({', '.join(_unannotated(node))})"
        for where, qual, node, by_call in _api(path)
        if not _compiled(node, by_call) and _unannotated(node)
    ]
    assert not bare, "no type hints on: " + "; ".join(bare)


def test_type_hint_check_sees_the_public_api():
    seen = {qual for path in API_MODULES for _, qual, _, _ in _api(path)}
    for qual in ("ccd", "dls", "two_bone_positions", "two_bone_positions_soa", "Chain.between",
                 "Constraint.project", "Cone.params", "Ground.raycast", "Plane.__init__",
                 "Heightfield.height_at", "make_ground", "check_coverage"):  # fmt: skip
        assert qual in seen, qual


NUMBA_FREE = ("ikrig.cli.clips", "ikrig.io", "ikrig.pose", "ikrig.character", "ikrig.skeleton")
"""Modules that import without Numba or SciPy (issue 40: ``ikrig info`` starts in 0.3 s, and
importing Numba alone takes 0.2 s): what they reach imports its kernels where they first run
(``from .kernels.pose import fk_kernel`` inside :func:`ikrig.pose.fk`)."""
HEAVY = ("numba", "scipy")


def _is_type_checking(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _eager_statements(body: list[ast.stmt]):
    """The import statements that run when a module is imported: those of its body and of
    its top-level ``if``/``try``/``with`` blocks, not of functions or ``TYPE_CHECKING``."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.If, ast.Try, ast.With)) and not _is_type_checking(node):
            for field in ("body", "orelse", "finalbody"):
                yield from _eager_statements(getattr(node, field, []))
            for handler in getattr(node, "handlers", []):
                yield from _eager_statements(handler.body)


def _eager_imports(path: Path) -> set[str]:
    """What importing ``path`` imports at once: ``ikrig`` modules (resolved, with their
    packages) and the top-level names of other packages."""
    name = _name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in _eager_statements(ast.parse(path.read_text()).body):
        if isinstance(node, ast.Import):
            mods = [(a.name, []) for a in node.names]
        elif node.level:
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            mods = [
                (f"{base}.{node.module}" if node.module else base, [a.name for a in node.names])
            ]
        else:
            mods = [(node.module or "", [a.name for a in node.names])]
        for mod, names in mods:
            if not mod.startswith("ikrig"):
                out.add(mod.split(".")[0])
                continue
            subs = {f"{mod}.{n}" for n in names} & NAMES
            for m in subs | {mod}:
                parts = m.split(".")
                out |= {".".join(parts[:k]) for k in range(2, len(parts) + 1)} & NAMES
    return out


def test_the_info_path_imports_no_numba():
    """Follows the imports that run at import time from each of :data:`NUMBA_FREE` and
    names the chain that reaches Numba or SciPy."""
    paths = {_name(p): p for p in MODULES}
    eager = {name: _eager_imports(path) for name, path in paths.items()}
    for start in NUMBA_FREE:
        chain = {start: [start]}
        todo = [start]
        while todo:
            here = todo.pop()
            for nxt in sorted(eager.get(here, ())):
                if nxt in HEAVY:
                    raise AssertionError(" -> ".join(chain[here] + [nxt]))
                if nxt in paths and nxt not in chain:
                    chain[nxt] = chain[here] + [nxt]
                    todo.append(nxt)
