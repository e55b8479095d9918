"""Start-up of the command line (issue 40): ``ikrig --help`` lists every command without
importing it, NumPy, Numba or the solvers; each command is loaded when it runs; the listed
summaries are the commands' own. The times are measured by ``benchmarks/bench_speed.py
--only startup``, not here."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import click
import pytest

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
