"""With Numba's JIT switched off (``NUMBA_DISABLE_JIT=1``) ikrig still imports, so that a
user can step through its Python layers. The two-bone kernels' own compile of the shared
quaternion product read ``py_func`` off what is then a plain function and broke the import
of ``ikrig.solvers``. (The kernels that take named records need the JIT to run.)"""

from __future__ import annotations

import os
import subprocess
import sys

PACKAGES = ("ikrig", "ikrig.solvers", "ikrig.foot", "ikrig.app.placement", "ikrig.io", "ikrig.cli")


def test_ikrig_imports_with_the_jit_off():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    program = f"import importlib\nfor name in {PACKAGES!r}:\n    importlib.import_module(name)\n"
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr.strip().splitlines()[-1:]
