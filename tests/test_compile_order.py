"""The same numbers whatever order a process compiles the kernels in.

A Numba function compiled while another is being compiled takes that caller's ``fastmath``
options, and Numba caches it so. The two-bone kernels (fused multiply-adds allowed) and the
BVH reader's rotation composition both called :func:`ikrig.kernels.qmath.q_mul`: whichever
compiled it first decided, for every later kernel and for the cache, whether it fused, and
results differed in the last bit between a fresh process and CI's warmed cache (5,106 of
10,600 two-bone delta components, 15 % of a clip's rotations). Each check compiles in two
orders in fresh processes, each with a cache of its own, and compares the results bit for
bit.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

PROGRAM = """
import sys
import numpy as np
first = sys.argv[1]
from ikrig.kernels.qmath import q_mul
from ikrig.io.bvh import _compose
from ikrig.solvers.two_bone import two_bone_positions

rng = np.random.default_rng(5)
root = rng.normal(size=(2000, 3))
legs = [root, root + [0, -0.45, 0.05], root + [0, -0.87, 0.0], root + rng.normal(size=(2000, 3)),
        root + rng.normal(size=(2000, 3))]
F, J = 400, 7
columns = np.tile(np.arange(3), (J, 1)) + 3 * np.arange(J)[:, None]
axes = np.tile([2, 1, 0], (J, 1))
values = rng.normal(0, 90, (F, 3 * J))
rotations = np.empty((F, J, 4))

def two_bone():
    r = two_bone_positions(*legs)
    return np.concatenate([r.root_rotation_world.ravel(), r.mid_rotation_world.ravel()])

if first == "two-bone":
    bone = two_bone()
    _compose.compose_rotations(values, columns, axes, rotations)
else:
    q_mul((0.1, 0.2, 0.3, 0.9), (0.3, 0.2, 0.1, 0.9))
    _compose.compose_rotations(values, columns, axes, rotations)
    bone = two_bone()
np.save(sys.argv[2], np.concatenate([bone, rotations.ravel()]))
"""


@pytest.mark.compile
def test_results_do_not_depend_on_which_kernel_compiled_first(tmp_path):
    results = []
    for first in ("two-bone", "quaternion product"):
        cache = tmp_path / f"cache-{len(results)}"
        out = tmp_path / f"{len(results)}.npy"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
        subprocess.run(
            [sys.executable, "-c", PROGRAM, first, str(out)], env=env, check=True, timeout=900
        )
        results.append(np.load(out))
    np.testing.assert_array_equal(results[0], results[1])
