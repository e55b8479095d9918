"""Every subpackage imports on its own, first, in a fresh process (no import cycles), and
the core never loads the plotting or viewer libraries."""

from __future__ import annotations

import subprocess
import sys

import pytest

MODULES = [
    "ikrig.math",
    "ikrig.skeleton",
    "ikrig.pose",
    "ikrig.constraints",
    "ikrig.solvers",
    "ikrig.ground",
    "ikrig.io",
    "ikrig.foot",
    "ikrig.foot.live",
    "ikrig.metrics",
    "ikrig.data.humanoid",
    "ikrig.data.gait",
    "ikrig.data.walk",
    "ikrig.cli",
]


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_first_in_a_fresh_process(module):
    code = (
        f"import sys, {module}\n"
        "heavy = [m for m in ('matplotlib', 'viser', 'trimesh') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_demo_data_does_not_load_the_file_formats():
    code = "import sys, ikrig.data\nassert 'ikrig.io' not in sys.modules\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
