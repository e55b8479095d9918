"""Thread settings read at import: IKRIG_THREADS and the passive OpenMP wait policy."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = (
    "import os, warnings\n"
    "warnings.simplefilter('always')\n"
    "import ikrig._jit.setup, numba\n"
    "print(numba.get_num_threads(), numba.config.NUMBA_NUM_THREADS,"
    " os.environ.get('OMP_WAIT_POLICY'))\n"
)


def _probe(**env: str) -> tuple[list[str], str]:
    full = {k: v for k, v in os.environ.items() if k not in ("IKRIG_THREADS", "OMP_WAIT_POLICY")}
    full.update(env)
    out = subprocess.run([sys.executable, "-c", PROBE], env=full, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.split(), out.stderr


def test_threads_wait_passively_unless_the_user_says_otherwise():
    assert _probe()[0][2] == "PASSIVE"
    assert _probe(OMP_WAIT_POLICY="ACTIVE")[0][2] == "ACTIVE"


def test_ikrig_threads_sets_the_count_within_the_pool():
    assert _probe(IKRIG_THREADS="1")[0][0] == "1"
    out, _ = _probe(IKRIG_THREADS="64")  # more than the pool: the pool
    assert out[0] == out[1]
    out, err = _probe(IKRIG_THREADS="two")
    assert out[0] == out[1] and "IKRIG_THREADS='two' is not a whole number" in err
