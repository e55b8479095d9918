"""Start-up of the command line (issue 40): ``ikrig --help`` lists every command without
importing it, NumPy, Numba or the solvers; each command is loaded when it runs; the listed
summaries are the commands' own; ``ikrig info`` on a BVH or glTF file imports neither Numba
nor SciPy (``tests/test_info_fast.py`` checks it prints what the compiled path prints). The
times are measured by ``benchmarks/bench_speed.py --only startup``, not here."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import click
import pytest
from helpers import SHARED_GLTF, shared_bvh_files

import ikrig.cli
from ikrig.cli.main import COMMANDS, SUMMARIES, main


def _every_command() -> dict[str, click.Command]:
    """Every click command defined in a module of ikrig.cli that is not a group's
    subcommand (``plot chain``)."""
    found = []
    for info in pkgutil.iter_modules(ikrig.cli.__path__):
        module = importlib.import_module(f"ikrig.cli.{info.name}")
        for value in vars(module).values():
            if isinstance(value, click.Command) and value.callback is not None:
                if value.callback.__module__ == module.__name__ and value is not main:
                    found.append(value)
    inner = {id(c) for g in found if isinstance(g, click.Group) for c in g.commands.values()}
    return {c.name: c for c in found if id(c) not in inner and c.name}


def test_every_command_is_listed_with_its_own_summary():
    commands = _every_command()
    assert set(COMMANDS) == set(commands) == set(SUMMARIES)
    for name, cmd in commands.items():
        assert cmd.callback.__module__ == f"ikrig.cli.{COMMANDS[name]}"
        own = " ".join((cmd.help or "").split("\n\n")[0].split())
        assert SUMMARIES[name] == own, name
        for limit in (30, 45, 60, 200):
            listed = click.utils.make_default_short_help(SUMMARIES[name], limit)
            assert listed == cmd.get_short_help_str(limit), (name, limit)


def _modules_after(args: list[str]) -> set[str]:
    code = (
        "import sys\nfrom ikrig.cli import main\ntry:\n"
        f"    main({args!r})\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_help_imports_no_command_numpy_or_numba():
    loaded = _modules_after(["--help"])
    assert "ikrig.cli.main" in loaded
    heavy = {m for m in loaded if m.split(".")[0] in ("numpy", "numba", "scipy")}
    assert not heavy, sorted(heavy)[:5]
    commands = {m for m in loaded if m.startswith("ikrig.") and m.split(".")[1] not in
                ("cli", "errors", "_version")}  # fmt: skip
    assert not commands, sorted(commands)
    assert not {f"ikrig.cli.{m}" for m in set(COMMANDS.values())} & loaded


@pytest.mark.parametrize("name", ["info", "fit", "playground"])
def test_a_command_loads_only_its_own_module(name):
    loaded = _modules_after([name, "--help"])
    others = {f"ikrig.cli.{m}" for m in set(COMMANDS.values()) if m != COMMANDS[name]}
    assert f"ikrig.cli.{COMMANDS[name]}" in loaded
    assert not others & loaded, sorted(others & loaded)


def test_the_help_lists_every_command():
    from click.testing import CliRunner

    text = CliRunner().invoke(main, ["--help"]).output
    listed = [line.split()[0] for line in text.split("Commands:")[1].splitlines() if line.strip()]
    assert listed == sorted(COMMANDS)
    r = CliRunner().invoke(main, ["no-such-command"])
    assert r.exit_code == 2 and "No such command" in r.output


def _info_files(tmp_path) -> list[str]:
    """A small BVH (the built-in walk), and the shared CMU walk and Fox when present."""
    from ikrig.data import walk_clip
    from ikrig.io import to_bvh_clip, write_bvh

    walk = tmp_path / "walk.bvh"
    write_bvh(walk, to_bvh_clip(walk_clip(seconds=2.0)))
    files = [walk] + [p for p in shared_bvh_files() if p.name == "cmu_131_02_walk.bvh"]
    files += [p for p in [SHARED_GLTF / "Fox.glb"] if p.is_file()]
    return [str(p) for p in files]


def test_info_imports_neither_numba_nor_scipy(tmp_path):
    for path in _info_files(tmp_path):
        for extra in ([], ["--json"]):
            loaded = _modules_after(["info", path, *extra])
            assert "ikrig.cli.clips" in loaded and "ikrig.io.bvh._motion" in loaded
            heavy = {m for m in loaded if m.split(".")[0] in ("numba", "scipy")}
            assert not heavy, (path, sorted(heavy)[:5])
            assert "ikrig._jit.setup" not in loaded, path


def test_a_big_bvh_may_start_numba_and_prints_the_same(tmp_path):
    """Over the NumPy scanner's limit the compiled reader runs: the same summary."""
    path = _info_files(tmp_path)[0]
    small = subprocess.run([sys.executable, "-c", _INFO, path], capture_output=True,
                           text=True, check=True)  # fmt: skip
    code = "import ikrig.io.bvh._motion as m\nm.NUMPY_ROW_BYTES = 0\n" + _INFO
    big = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert small.stdout == big.stdout
    assert big.stderr.endswith("numba: True\n") and small.stderr.endswith("numba: False\n")


_INFO = (
    "import sys\nfrom ikrig.cli import main\ntry:\n    main(['info', sys.argv[1]])\n"
    "except SystemExit:\n    pass\nprint('numba:', 'numba' in sys.modules, file=sys.stderr)"
)
