"""The house layout (issue 10): small modules, short signatures, imports that point down.

These read the source, so they fail the moment a change breaks a rule, with the offender
named: a module over :data:`MAX_LINES`, a Python function over :data:`MAX_PARAMS` parameters
(compiled kernels are exempt: they take named records instead), an import that points up a
layer or closes a cycle, or a foot step that compares a mode.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "ikrig"
MODULES = sorted(SRC.rglob("*.py"))
MAX_LINES = 500
MAX_PARAMS = 8

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


def _imports(path: Path) -> set[str]:
    """The ``ikrig`` modules ``path`` imports, anywhere in it (lazy imports too)."""
    name = _name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            if mod.startswith("ikrig"):
                out.add(mod)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("ikrig")}
    return out


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
