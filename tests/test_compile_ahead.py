"""Compiling ahead on the second core (``ikrig.cli.ahead``, ``ikrig.app.warmup.place_ahead``):
the helper's made-up walk, when the helper starts (once, only on a compile, never when
switched off) and that its job covers every kernel the demo calls after making its own
walk."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ikrig._jit import setup as _numba
from ikrig.app import warmup
from ikrig.character.legs import find_legs
from ikrig.character.sole import estimate_sole
from ikrig.cli import ahead as cli_ahead
from ikrig.foot import FootOptions, detect_foot_contacts
from ikrig.kernels.pose import fk_kernel
from ikrig.signal.spans import spans


def test_the_stepping_clip_walks():
    """Feet planted in turn (each stance ankle still, level feet), every foot off the
    ground half the time, the body moving forward: a walk the pipeline can place."""
    clip = warmup.stepping_clip(seconds=2.0, fps=60.0)
    legs = find_legs(clip.skeleton)
    p = clip.positions_world()
    contacts, _ = detect_foot_contacts(
        clip, legs, estimate_sole(clip, legs), FootOptions().contacts
    )
    assert 0.4 <= contacts.mean() <= 0.6
    assert not (contacts[:, 0] & contacts[:, 1]).all()
    for k, leg in enumerate(legs.legs):
        runs = spans(contacts[:, k])
        assert len(runs) >= 2
        for a, b in runs:
            ankle = p[a:b, leg.ankle]
            assert np.ptp(ankle, axis=0).max() < 1e-3 * legs.leg_length  # planted
        toe_above = p[:, leg.toe, 1] - p[:, leg.ankle, 1]
        assert np.ptp(toe_above) < 1e-9  # the feet stay level
    assert p[-1, 0, 2] - p[0, 0, 2] > 1.5 * legs.leg_length  # forward along +Z


class _Proc:
    def __init__(self):
        self.terminated = False

    def poll(self):
        return None

    def terminate(self):
        self.terminated = True

    def wait(self, timeout=None):
        return 0


@pytest.fixture
def spawn(monkeypatch):
    """The helper's ``Popen`` calls and exit handlers, recorded instead of run; the
    process as if it had not compiled anything yet."""
    calls, handlers = [], []
    monkeypatch.setattr(cli_ahead, "ahead_wanted", lambda: True)
    monkeypatch.setattr(cli_ahead, "_started", [])
    monkeypatch.setattr(cli_ahead, "cache_is_cold", lambda: False)  # an edited source
    monkeypatch.setattr(_numba, "_first_compile_hooks", [])
    monkeypatch.setattr(_numba._listener, "printed", False)
    monkeypatch.setattr(
        cli_ahead.subprocess, "Popen", lambda args, **kw: calls.append((args, kw)) or _Proc()
    )
    monkeypatch.setattr(cli_ahead.atexit, "register", lambda f, *a: handlers.append((f, a)))
    return calls, handlers


def _compile_event():
    """What Numba tells listeners when one of ikrig's cached kernels starts compiling."""
    listener = _numba._listener
    listener.on_start(type("Event", (), {"data": {"dispatcher": fk_kernel}})())
    listener.on_end(type("Event", (), {"data": {"dispatcher": fk_kernel}})())


def test_the_helper_starts_once_when_a_kernel_first_compiles(spawn, capsys):
    calls, handlers = spawn
    cli_ahead.compile_ahead(["full", "trace-offset"])
    assert calls == []  # a warm cache: nothing compiles, nothing starts
    _compile_event()
    assert "compiling numerical kernels" in capsys.readouterr().err
    ((args, kw),) = calls
    assert args[-2:] == ["full", "trace-offset"]
    assert kw["env"][cli_ahead.ENV] == "0"  # the helper starts no helper
    assert kw["env"]["NUMBA_CACHE_DIR"] == str(_numba.CACHE_DIR)  # the same cache
    assert kw["stdout"] == kw["stderr"] == subprocess.DEVNULL
    cli_ahead.compile_ahead(["full"])  # already compiling: at once, but only once
    _compile_event()
    assert len(calls) == 1
    ((stop, (proc,)),) = handlers  # stopped when the command exits
    stop(proc)
    assert proc.terminated


def test_on_a_cold_cache_the_helper_starts_at_once(spawn, monkeypatch):
    """With no leg IK kernel in the cache, the command is bound to compile: the helper
    starts before its first compile, once."""
    calls, _ = spawn
    monkeypatch.setattr(cli_ahead, "cache_is_cold", lambda: True)
    cli_ahead.compile_ahead(["goal-blend"])
    ((args, _),) = calls
    assert args[-1] == "goal-blend"
    _compile_event()
    cli_ahead.compile_ahead(["goal-blend"])
    assert len(calls) == 1


def test_a_cache_is_cold_until_it_holds_the_leg_ik(tmp_path):
    """``cache_is_cold`` reads the leg IK kernel's index in Numba's cache directory (the one
    ikrig set up): cold when it is empty, warm once that index is there."""
    code = (
        "import os\n"
        "from ikrig.app.warmup import cache_is_cold\n"
        "from ikrig.foot.stages.legs_ik import legs_run\n"
        "print(cache_is_cold())\n"
        "index = legs_run._cache._cache_file._index_path\n"
        "assert index.startswith(os.environ['NUMBA_CACHE_DIR']), index\n"
        "os.makedirs(os.path.dirname(index), exist_ok=True)\n"
        "open(index, 'wb').close()\n"
        "print(cache_is_cold())\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.split() == ["True", "False"], out.stderr[-2000:]


@pytest.mark.parametrize("why", ["switched off", "one cpu"])
def test_no_helper_when_switched_off_or_on_one_cpu(monkeypatch, why):
    calls = []
    monkeypatch.setattr(cli_ahead, "_started", [])
    monkeypatch.setattr(cli_ahead, "cache_is_cold", lambda: True)
    monkeypatch.setattr(cli_ahead.subprocess, "Popen", lambda args, **kw: calls.append(args))
    monkeypatch.setenv(warmup.AHEAD_ENV, "0" if why == "switched off" else "1")
    cpus = {0, 1} if why == "switched off" else {0}
    monkeypatch.setattr(warmup.os, "sched_getaffinity", lambda pid: cpus, raising=False)
    assert not warmup.ahead_wanted()
    cli_ahead.compile_ahead(["full"])
    assert calls == []
    monkeypatch.setenv(warmup.AHEAD_ENV, "1")
    monkeypatch.setattr(warmup.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert warmup.ahead_wanted()


_SIGNATURES = """
import gc, json, sys
from numba.core.registry import CPUDispatcher
def signatures():
    return sorted({f"{d.py_func.__module__}.{d.py_func.__qualname__}{s}"
                   for d in gc.get_objects() if isinstance(d, CPUDispatcher)
                   and d.py_func.__module__.startswith("ikrig") for s in d.signatures})
"""


def _run(code: str, tmp_path) -> list[str]:
    env = dict(os.environ, **{cli_ahead.ENV: "0"})
    out = subprocess.run(
        [sys.executable, "-c", _SIGNATURES + code], capture_output=True, text=True, env=env,
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.compile
def test_the_helper_job_covers_what_the_demo_calls_after_its_walk(tmp_path):
    """Every kernel specialisation the demo dispatches once its walk is made (placement in
    both modes, the report, the BVH writer) is one the helper's job dispatches too, so a
    first demo finds each of them compiled by the helper when it is done in time; but the
    ground's own, which the command needs first and the helper leaves to it (no race)."""
    helper = _run(
        "from ikrig.cli.ahead import run_ahead\n"
        "run_ahead(['full', 'trace-offset'])\n"
        "print(json.dumps(signatures()))",
        tmp_path,
    )
    walk, demo = _run(
        "from ikrig.data.walk import walk_clip\n"
        "from ikrig.cli import main\n"
        "walk_clip(seconds=6.0, fps=60.0)\n"
        "before = signatures()\n"
        "try:\n"
        "    main(['demo', '--no-gif', '-o', 'demo.bvh'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(json.dumps([before, signatures()]))",
        tmp_path,
    )
    after_walk = set(demo) - set(walk)
    ground = {s for s in after_walk if s.startswith("ikrig.ground.")}
    assert ground, "the stairs run kernels of their own"
    assert not any(s.startswith("ikrig.ground.") for s in helper), helper
    assert after_walk - ground, "the demo dispatches kernels after its walk"
    assert after_walk - ground <= set(helper), sorted(after_walk - ground - set(helper))
