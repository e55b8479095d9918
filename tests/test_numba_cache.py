"""The Numba compile cache works when HOME is not writable, and the "compiling" notice follows
the cache's real state (printed when a kernel compiles, silent when everything loads)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import ikrig

NOTICE = "ikrig: compiling"

# Calls one small kernel of the ikrig found on sys.path (the test's private copy).
PROBE = textwrap.dedent(
    """
    import numpy as np
    import ikrig
    from ikrig._jit.setup import CACHE_DIR
    from ikrig.kernels.pose import fk_kernel

    parents = np.array([-1, 0], dtype=np.int64)
    rl = np.zeros((1, 2, 4)); rl[..., 3] = 1.0
    pl = np.zeros((1, 2, 3)); pl[0, 1, 0] = 1.0
    rw, pw = np.empty_like(rl), np.empty_like(pl)
    fk_kernel(parents, rl, pl, rw, pw)
    assert pw[0, 1, 0] == 1.0
    print("PACKAGE=" + ikrig.__file__)
    print("CACHE_DIR=" + str(CACHE_DIR))
    print("HITS=" + str(sum(fk_kernel.stats.cache_hits.values())))
    """
)


def private_copy(tmp_path) -> Path:
    """A copy of the ikrig package under ``tmp_path/src`` (its own kernels' cache entries)."""
    src = tmp_path / "src"
    shutil.copytree(
        Path(ikrig.__file__).parent,
        src / "ikrig",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    (tmp_path / "probe_kernel.py").write_text(PROBE)
    return src


def run(tmp_path, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "IKRIG_", "XDG_"))}
    env["PYTHONPATH"] = str(tmp_path / "src")
    env.update(env_extra)
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
    assert fields["PACKAGE"].startswith(str(tmp_path)), fields
    return fields, out.stderr


def test_cache_dir_falls_back_when_home_is_not_writable(tmp_path):
    private_copy(tmp_path)
    # /proc refuses new directories even to root, so HOME and XDG_CACHE_HOME are unusable.
    cache = tmp_path / "cache"
    env = {"HOME": "/proc/ikrig-no-home", "XDG_CACHE_HOME": "/proc/ikrig-no-xdg"}
    env["IKRIG_CACHE_DIR"] = str(cache)
    first, _ = run(tmp_path, env)
    assert first["CACHE_DIR"] == str(cache)
    second, _ = run(tmp_path, env)
    assert int(second["HITS"]) >= 1, "the second process should load the kernel from the cache"
    assert any(cache.rglob("*.nbi")), "no cache index written"


def test_cache_dir_uses_tempdir_as_last_resort(tmp_path):
    private_copy(tmp_path)
    env = {"HOME": "/proc/ikrig-no-home", "XDG_CACHE_HOME": "/proc/ikrig-no-xdg"}
    env["TMPDIR"] = str(tmp_path)
    fields, _ = run(tmp_path, env)
    assert fields["CACHE_DIR"].startswith(str(tmp_path))
    assert "ikrig-numba-" in fields["CACHE_DIR"]


def test_compiling_notice_follows_the_cache(tmp_path):
    src = private_copy(tmp_path)
    cache = tmp_path / "cache"
    env = {"IKRIG_CACHE_DIR": str(cache)}

    # a fresh, empty cache: the kernel compiles, and says so once
    first, err = run(tmp_path, env)
    assert first["HITS"] == "0"
    assert err.count(NOTICE) == 1, err

    # the cache is filled: everything loads, nothing is said
    second, err = run(tmp_path, env)
    assert int(second["HITS"]) >= 1
    assert NOTICE not in err, err

    # a process killed mid-compile or a concurrent one leaves no "compiled" marker behind:
    # the notice reads no file of its own
    assert not [p for p in cache.rglob("*") if p.suffix == ".compiled"]

    # an edited kernel module (same version number) recompiles, and says so again
    kernels = src / "ikrig" / "kernels" / "pose.py"
    kernels.write_text(kernels.read_text() + "\n# edited\n")
    third, err = run(tmp_path, env)
    assert third["HITS"] == "0"
    assert err.count(NOTICE) == 1, err

    fourth, err = run(tmp_path, env)
    assert int(fourth["HITS"]) >= 1
    assert NOTICE not in err, err


def test_notice_ignores_kernels_that_are_not_ikrigs(tmp_path):
    """A user's own kernel compiling is not announced as ikrig's."""
    private_copy(tmp_path)
    (tmp_path / "probe_kernel.py").write_text(
        textwrap.dedent(
            """
            import ikrig._jit.setup
            from numba import njit

            @njit(cache=True)
            def twice(x):
                return 2.0 * x

            ikrig._jit.setup.notify_compiling()
            assert twice(2.0) == 4.0
            print("PACKAGE=" + ikrig.__file__)
            """
        )
    )
    _, err = run(tmp_path, {"IKRIG_CACHE_DIR": str(tmp_path / "cache")})
    assert NOTICE not in err, err


def test_every_process_that_compiles_says_so(tmp_path):
    """Processes started together on an empty cache: each one that misses the cache (and
    compiles) prints the notice, each one that loads from it prints nothing."""
    private_copy(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "IKRIG_", "XDG_"))}
    env.update(PYTHONPATH=str(tmp_path / "src"), IKRIG_CACHE_DIR=str(tmp_path / "cache"))
    procs = [
        subprocess.Popen(
            [sys.executable, "probe_kernel.py"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        fields = dict(line.split("=", 1) for line in out.split())
        assert (NOTICE in err) == (fields["HITS"] == "0"), (fields, err)
        assert err.count(NOTICE) <= 1, err


def test_compile_time_is_added_up_for_our_cached_kernels_only():
    from types import SimpleNamespace

    from ikrig._jit import setup as _numba

    listener = _numba._CompileNotice()
    listener.printed = True  # no notice in the test output
    ours = SimpleNamespace(
        py_func=SimpleNamespace(__module__="ikrig.solvers.x"),
        stats=SimpleNamespace(cache_path="/tmp/x"),
    )
    theirs = SimpleNamespace(py_func=SimpleNamespace(__module__="other"), stats=ours.stats)

    def event(dispatcher):
        return SimpleNamespace(data={"dispatcher": dispatcher})

    listener.on_start(event(ours))
    listener.on_start(event(ours))  # a callee compiling inside: not counted twice
    listener.on_start(event(theirs))
    listener.on_end(event(theirs))
    listener.on_end(event(ours))
    assert listener.seconds == 0.0
    listener.on_end(event(ours))
    assert listener.seconds > 0.0
    assert _numba.compile_seconds() >= 0.0


HELPER = "from ._jit.setup import njit\n\n\n@njit\ndef value():\n    return {}\n"
KERNEL = (
    "from ._jit.setup import njit\nfrom ._probe_helper import value\n\n\n"
    "@njit(cache=True)\ndef kernel():\n    return value()\n"
)
CALLER = textwrap.dedent(
    """
    import ikrig
    from ikrig._probe_kernel import kernel

    print("VALUE=" + str(kernel()))
    print("HITS=" + str(sum(kernel.stats.cache_hits.values())))
    print("PACKAGE=" + ikrig.__file__)
    """
)


def test_a_cached_kernel_recompiles_when_a_helper_it_calls_changes(tmp_path):
    """Numba alone checks only the file defining a kernel; ikrig's cache locator also checks
    the ikrig modules the kernel compiles in, so an edited helper is never served stale, and
    an edit elsewhere leaves the cache alone."""
    src = private_copy(tmp_path)
    package = src / "ikrig"
    (package / "_probe_helper.py").write_text(HELPER.format(1))
    (package / "_probe_kernel.py").write_text(KERNEL)
    (tmp_path / "probe_kernel.py").write_text(CALLER)
    env = {"IKRIG_CACHE_DIR": str(tmp_path / "cache")}

    first, _ = run(tmp_path, env)
    assert (first["VALUE"], first["HITS"]) == ("1", "0")
    second, _ = run(tmp_path, env)
    assert (second["VALUE"], second["HITS"]) == ("1", "1")  # loaded from the cache

    (package / "_probe_helper.py").write_text(HELPER.format(2))  # only the helper changes
    third, _ = run(tmp_path, env)
    assert (third["VALUE"], third["HITS"]) == ("2", "0")  # recompiled, not served stale

    errors = package / "errors.py"  # a module the kernel does not compile in
    errors.write_text(errors.read_text() + "\n# edited\n")
    fourth, _ = run(tmp_path, env)
    assert (fourth["VALUE"], fourth["HITS"]) == ("2", "1")


RECORD = "from typing import NamedTuple\n\n\nclass Pair(NamedTuple):\n    a: float\n    b: float\n"
RECORD_KERNEL = (
    "from ._jit.setup import njit\n\n\n@njit(cache=True)\ndef kernel(pair):\n    return pair.a\n"
)
RECORD_CALLER = textwrap.dedent(
    """
    import ikrig
    from ikrig._probe_kernel import kernel
    from ikrig.{0} import Pair

    print("VALUE=" + str(int(kernel(Pair(1.0, 2.0)))))
    print("HITS=" + str(sum(kernel.stats.cache_hits.values())))
    print("PACKAGE=" + ikrig.__file__)
    """
)


def test_a_cached_kernel_whose_helper_moved_recompiles(tmp_path):
    """Numba unpickles a cache index before it compares stamps, and an index names the
    records its kernels take by module (a named tuple's class): after that module moved (an
    upgrade in place, a pull that reorganises the package) the first call raised
    ``ModuleNotFoundError``. An index that cannot be read is stale: the kernel recompiles."""
    src = private_copy(tmp_path)
    package = src / "ikrig"
    (package / "_probe_record.py").write_text(RECORD)
    (package / "_probe_kernel.py").write_text(RECORD_KERNEL.format("_probe_record"))
    (tmp_path / "probe_kernel.py").write_text(RECORD_CALLER.format("_probe_record"))
    env = {"IKRIG_CACHE_DIR": str(tmp_path / "cache")}
    first, _ = run(tmp_path, env)
    assert (first["VALUE"], first["HITS"]) == ("1", "0")

    (package / "_probe_record.py").rename(package / "_probe_moved.py")
    (package / "_probe_kernel.py").write_text(RECORD_KERNEL.format("_probe_moved"))
    (tmp_path / "probe_kernel.py").write_text(RECORD_CALLER.format("_probe_moved"))
    second, _ = run(tmp_path, env)
    assert (second["VALUE"], second["HITS"]) == ("1", "0")  # recompiled
    third, _ = run(tmp_path, env)
    assert (third["VALUE"], third["HITS"]) == ("1", "1")  # and cached again


def test_every_cached_kernel_is_stamped_with_all_it_compiles_in():
    """A kernel's sources are gathered when it is decorated: a helper imported further down
    its module would be missed. Every cached kernel's stamped sources equal what its
    module refers to once fully imported."""
    import importlib
    import pkgutil

    from ikrig._jit.cache import kernel_sources

    for info in pkgutil.walk_packages(ikrig.__path__, "ikrig."):
        if not info.name.startswith(("ikrig.viz", "ikrig.cli")):
            try:
                importlib.import_module(info.name)
            except ImportError:  # an optional extra that is not installed
                continue
    checked = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("ikrig."):
            continue
        for value in list(vars(module).values()):
            cache = getattr(value, "_cache", None)
            locator = getattr(getattr(cache, "_impl", None), "locator", None)
            if getattr(locator, "_sources", None) is None:
                continue
            checked += 1
            assert kernel_sources(value.py_func) == locator._sources, (name, value)
    assert checked >= 50, checked  # the package's cached kernels went through the locator
