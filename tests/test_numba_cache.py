"""The Numba compile cache works when HOME is not writable, and the first run says it compiles."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

KERNEL_MODULE = textwrap.dedent(
    """
    import sys
    from ikrig._numba import CACHE_DIR, njit, notify_compiling

    @njit(cache=True)
    def twice(x):
        return 2.0 * x

    notify_compiling()
    assert twice(2.0) == 4.0
    print("CACHE_DIR=" + str(CACHE_DIR))
    print("HITS=" + str(sum(twice.stats.cache_hits.values())))
    """
)


def run(tmp_path, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "IKRIG_", "XDG_"))}
    env.update(env_extra)
    (tmp_path / "probe_kernel.py").write_text(KERNEL_MODULE)
    out = subprocess.run(
        [sys.executable, "probe_kernel.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    fields = dict(line.split("=", 1) for line in out.stdout.split())
    return fields, out.stderr


def test_cache_dir_falls_back_when_home_is_not_writable(tmp_path):
    # /proc refuses new directories even to root, so HOME and XDG_CACHE_HOME are unusable.
    cache = tmp_path / "cache"
    env = {"HOME": "/proc/ikrig-no-home", "XDG_CACHE_HOME": "/proc/ikrig-no-xdg"}
    env["IKRIG_CACHE_DIR"] = str(cache)
    first, err1 = run(tmp_path, env)
    assert first["CACHE_DIR"] == str(cache)
    assert "compiling" in err1
    second, err2 = run(tmp_path, env)
    assert int(second["HITS"]) >= 1, "the second process should load the kernel from the cache"
    assert "compiling" not in err2
    assert any(cache.rglob("*.nbi")), "no cache index written"


def test_cache_dir_uses_tempdir_as_last_resort(tmp_path):
    env = {"HOME": "/proc/ikrig-no-home", "XDG_CACHE_HOME": "/proc/ikrig-no-xdg"}
    env["TMPDIR"] = str(tmp_path)
    fields, _ = run(tmp_path, env)
    assert fields["CACHE_DIR"].startswith(str(tmp_path))
    assert "ikrig-numba-" in fields["CACHE_DIR"]
