"""``ikrig warmup``: the tasks run, failures are reported, and after it the main job
compiles nothing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ikrig.app import warmup
from ikrig.cli import main
from ikrig.errors import InputError

NOTICE = "compiling numerical kernels"


def test_task_runs_and_reports():
    (report,) = warmup.warm_up(["files"], jobs=1, progress=False)
    assert report.name == "files" and report.error is None
    assert report.seconds >= report.compiling >= 0.0


def test_unknown_task_and_bad_jobs():
    with pytest.raises(InputError, match="warm-up task 'nope'"):
        warmup.warm_up(["nope"])
    with pytest.raises(InputError, match="jobs"):
        warmup.warm_up(["files"], jobs=-1, progress=False)


def test_a_failing_task_does_not_stop_the_others(monkeypatch):
    def broken():
        raise ValueError("no luck\nsecond line")

    monkeypatch.setitem(warmup.TASKS, "broken", broken)
    reports = warmup.warm_up(["broken", "files"], jobs=1, progress=False)
    assert [r.name for r in reports] == ["files", "broken"]  # in the order of TASKS
    assert reports[0].error is None
    assert reports[1].error == "ValueError: no luck"


def test_cli_reports_and_fails_on_a_broken_task(monkeypatch):
    r = CliRunner().invoke(main, ["warmup", "--only", "files", "-q", "-j", "1"])
    assert r.exit_code == 0, r.output
    assert "warmup: 1 of 1 tasks" in r.output and "cache:" in r.output
    monkeypatch.setitem(warmup.TASKS, "files", lambda: 1 / 0)
    r = CliRunner().invoke(main, ["warmup", "--only", "files", "-q", "-j", "1"])
    assert r.exit_code == 1
    assert "warmup task 'files' failed: ZeroDivisionError" in r.output


@pytest.mark.compile
def test_after_warmup_the_demo_compiles_nothing(tmp_path):
    """The whole point: after ``ikrig warmup`` (both cores, the suite's own cache), the
    main job loads every kernel from the cache. On a cold cache this test pays the
    package's compile time, which the rest of the suite then saves."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    run = [sys.executable, "-c", "from ikrig.cli import main; main()"]
    warm = subprocess.run(
        run + ["warmup", "-q", "-j", "2"], capture_output=True, text=True, env=env
    )
    assert warm.returncode == 0, warm.stderr
    demo = subprocess.run(
        run + ["demo", "--no-gif", "-o", str(tmp_path / "demo.bvh")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert demo.returncode == 0, demo.stderr
    assert NOTICE not in demo.stderr
    assert "compiling kernels" not in demo.stdout
