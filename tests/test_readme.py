"""Every snippet of the README runs as written.

Each ```python block runs in a fresh interpreter in a temporary folder; each ``ikrig ...``
command of the ```bash blocks runs through the command line in a temporary folder. The
folder holds the input files the snippets name (``walk.bvh``: the built-in walk;
``terrain.obj``: a bumpy mesh under its path) and nothing else is changed for them. Usage
brackets (``[--json]``) run both ways. ``ikrig view`` and ``ikrig playground`` serve until
stopped: they must answer ``--help``, print their address, serve the page, and stop on
Ctrl-C. The quick start's ``pip install`` and ``python -m pytest`` parts are not run here.
Also checked: the quick start keeps two commands, and the extras the README lists are the
ones pyproject.toml declares, each used by the code.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import serve_then_stop

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
SERVERS = ("view", "playground")  # commands that serve until Ctrl-C
CLI = [sys.executable, "-c", "import sys; from ikrig.cli import main; sys.exit(main())"]


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.S | re.M)


def ikrig_commands() -> list[str]:
    """Every ``ikrig ...`` command of the bash blocks (comments dropped, ``a && b`` split,
    an optional ``[...]`` part both left out and put in)."""
    out = []
    for block in blocks("bash"):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            for part in line.split("&&"):
                part = part.strip()
                if not part.startswith("ikrig "):
                    continue
                optional = re.search(r"\[([^\]]*)\]", part)
                if optional is None:
                    out.append(part)
                    continue
                out.append(re.sub(r"\s*\[[^\]]*\]", "", part))
                out.append(part[: optional.start()] + optional.group(1) + part[optional.end() :])
    return out


def write_inputs(folder: Path) -> None:
    """The files the snippets read: ``walk.bvh`` (2 s of the built-in walk), ``walk.glb``
    (the same as glTF, as ``ikrig convert walk.bvh walk.glb`` writes it),
    ``trackers.npz`` (six trackers of the walk, a targets file of ``ikrig fit``) and
    ``terrain.obj`` (gentle bumps under its path, at its floor)."""
    from ikrig.data.walk import walk_clip
    from ikrig.io import read_bvh, to_bvh_clip, write_bvh, write_clip
    from ikrig.io.targets import targets_from_motion, write_targets

    motion = walk_clip(seconds=2.0, fps=30.0)
    write_bvh(folder / "walk.bvh", to_bvh_clip(motion))
    write_clip(folder / "walk.glb", read_bvh(folder / "walk.bvh"))
    six = ["Hips", "Head", "LeftHand", "RightHand", "LeftFoot", "RightFoot"]
    write_targets(folder / "trackers.npz", targets_from_motion(motion, six, rotations_for=six))
    p = motion.positions_world()
    x = np.linspace(p[..., 0].min() - 1.5, p[..., 0].max() + 1.5, 25)
    z = np.linspace(p[..., 2].min() - 1.5, p[..., 2].max() + 1.5, 61)
    xx, zz = np.meshgrid(x, z, indexing="ij")
    yy = 0.03 * np.sin(2.0 * zz) * np.cos(1.5 * xx)
    lines = [f"v {a:.5f} {b:.5f} {c:.5f}" for a, b, c in zip(xx.ravel(), yy.ravel(), zz.ravel())]
    nz = len(z)
    for i in range(len(x) - 1):
        for k in range(nz - 1):
            a, b = i * nz + k + 1, (i + 1) * nz + k + 1  # OBJ counts from 1
            lines += [f"f {a} {a + 1} {b + 1}", f"f {a} {b + 1} {b}"]
    (folder / "terrain.obj").write_text("\n".join(lines) + "\n")


@pytest.fixture
def folder(tmp_path):
    write_inputs(tmp_path)
    return tmp_path


def run(args, cwd, timeout=900):
    return subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


# ------------------------------------------------------------------------------ the snippets
def test_the_readme_has_snippets():
    assert len(blocks("python")) >= 2
    assert any(c.startswith("ikrig foot ") for c in ikrig_commands())
    assert {c.split()[1] for c in ikrig_commands()} >= {"demo", "foot", "info", "plot", *SERVERS}


def test_quick_start_keeps_two_commands():
    quick = README.split("## Quick start", 1)[1].split("##", 1)[0]
    (block,) = re.findall(r"^```bash\n(.*?)^```", quick, flags=re.S | re.M)
    assert len([line for line in block.splitlines() if line.strip()]) == 2


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_snippet_runs(folder, index):
    code = blocks("python")[index]
    script = folder / f"snippet_{index}.py"
    script.write_text(code)
    out = run([sys.executable, script.name], folder)
    assert out.returncode == 0, f"README snippet {index} failed:\n{code}\n{out.stderr[-3000:]}"


@pytest.mark.parametrize("command", [c for c in ikrig_commands() if c.split()[1] not in SERVERS])
def test_cli_command_runs(folder, command):
    args = shlex.split(command)[1:]
    before = set(os.listdir(folder))
    out = run(CLI + args, folder)
    assert out.returncode == 0, f"{command}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    named = [a for a in args if re.fullmatch(r"[\w.-]+\.(bvh|json|gif|png|mp4|npz)", a)]
    for name in named:  # every file the command names is there (inputs) or written (outputs)
        assert (folder / name).stat().st_size > 0, (command, name)
    if args[0] == "demo":
        assert "ikrig_demo.bvh" in set(os.listdir(folder)) - before


@pytest.mark.parametrize("command", [c for c in ikrig_commands() if c.split()[1] in SERVERS])
def test_cli_server_command_starts(folder, command):
    args = shlex.split(command)[1:]
    helped = run(CLI + [args[0], "--help"], folder, timeout=120)
    assert helped.returncode == 0 and "--host" in helped.stdout, helped.stderr

    _, returncode, out = serve_then_stop(CLI + args, cwd=folder, startup=300)
    assert returncode == 0, out


# ------------------------------------------------------------------------------ extras
def declared_extras() -> dict[str, list[str]]:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())
    return meta["project"]["optional-dependencies"]


IMPORT_NAMES = {"pillow": "PIL", "imageio-ffmpeg": "imageio_ffmpeg"}


def test_extras_are_the_ones_listed_and_used():
    extras = declared_extras()
    paragraph = README.split("Optional extras:", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"`\[(\w+)\]`", paragraph))
    user_extras = set(extras) - {"test", "bench"}
    assert listed == user_extras, (listed, user_extras)
    (everything,) = extras["all"]
    assert set(re.fullmatch(r"ikrig\[(.*)\]", everything).group(1).split(",")) == user_extras - {
        "all",
        "blender",  # bpy pins numpy < 2: never pulled in by [all]
    }
    assert any(r.startswith("imageio-ffmpeg") for r in extras["plot"])  # MP4 from plot movie
    sources = "\n".join(p.read_text() for p in (REPO / "src" / "ikrig").rglob("*.py"))
    for name in user_extras - {"all"}:
        for requirement in extras[name]:
            package = re.split(r"[<>=\[ ;]", requirement, maxsplit=1)[0].lower()
            module = IMPORT_NAMES.get(package, package.replace("-", "_"))
            assert re.search(rf"\b{module}\b", sources), f"[{name}]: {package} is not used"
