"""ikrig batch (issue 13): a clip library on a local pool and on a Dask cluster, exactly
once, resumable after a kill, bad clips recorded and the batch going on."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import invoke

from ikrig.cli import main

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
#: short clips: (file in ../shared/data, where it goes in the library)
CLIPS = (
    ("bvh_more/bandai1_walk_back_short.bvh", "walk_back.bvh"),
    ("bvh_more/bandai2_run_normal.bvh", "sub/run.bvh"),
    ("bvh_more/pybvh_zup_mixed_orders.bvh", "sub/deeper/zup.bvh"),
)
BAD = ("arms.bvh", "sub/corrupt.bvh")
ARMS_ONLY = """HIERARCHY
ROOT Chest
{
  OFFSET 0 100 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT LeftArm
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    End Site
    {
      OFFSET 25 0 0
    }
  }
  JOINT RightArm
  {
    OFFSET -10 0 0
    CHANNELS 3 Zrotation Yrotation Xrotation
    End Site
    {
      OFFSET -25 0 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 100 0 0 0 0 0 0 0 0 0 0
1 100 0 0 0 0 0 0 0 0 0 0
"""
ARGS = ("-g", "slope", "--mode", "full")
#: the "full" row of ikrig foot's report for each good clip (filled by ``reference``)
REFERENCE_ROWS: dict[str, dict] = {}


def make_library(folder: Path) -> Path:
    """The good clips, an arm-only rig and a corrupt file, in a small tree."""
    for src, rel in CLIPS:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / src, folder / rel)
    (folder / "arms.bvh").write_text(ARMS_ONLY)
    (folder / "sub" / "corrupt.bvh").write_text("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n")
    return folder


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """What ``ikrig foot`` writes for each good clip: relative path -> bytes."""
    if not all((SHARED / src).is_file() for src, _ in CLIPS):
        pytest.skip("../shared/data/bvh_more is not present")
    lib = make_library(tmp_path_factory.mktemp("lib"))
    out = tmp_path_factory.mktemp("ref")
    refs, rows = {}, {}
    for _, rel in CLIPS:
        r = invoke("foot", lib / rel, *ARGS, "-o", out / "x.bvh", "--report", out / "r.json")
        assert r.exit_code == 0, r.output
        refs[rel] = (out / "x.bvh").read_bytes()
        rows[rel] = json.loads((out / "r.json").read_text())["rows"]["full"]
    REFERENCE_ROWS.update(rows)
    return refs


def manifest(out: Path) -> list[dict]:
    path = out / "ikrig_batch.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.endswith("}")]


def check_complete(out: Path, reference) -> None:
    """Every good clip's output is exactly ``ikrig foot``'s, each clip has one manifest
    entry, the bad ones failed with one line, and no temporary file is left."""
    for rel, data in reference.items():
        assert (out / rel).read_bytes() == data, rel
    entries = manifest(out)
    assert sorted(e["relative"] for e in entries) == sorted([*reference, *BAD])
    for e in entries:
        assert (e["status"] == "ok") == (e["relative"] in reference), e
        assert e["status"] == "ok" or "\n" not in e["error"]
    assert not [p for p in out.rglob("*") if ".part" in p.name]
    for rel in BAD:
        assert not (out / rel).exists()


@pytest.mark.compile  # worker processes load the compiled kernels
def test_local_pool_writes_what_foot_writes(reference, tmp_path):
    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    report = tmp_path / "summary.json"
    r = invoke("batch", lib, *ARGS, "-o", out, "--jobs", 2, "--report", report)
    assert r.exit_code == 1, r.output
    assert "2 of 5 clips failed" in r.stderr
    assert "done: 3" in r.output and "failed: 2" in r.output and "pen_p95" in r.output
    assert "FAILED arms.bvh: no legs found" in r.output
    assert "FAILED sub/corrupt.bvh: " in r.output
    check_complete(out, reference)
    data = json.loads(report.read_text())
    assert (data["clips"], data["done"], data["failed"]) == (5, 3, 2)
    assert data["metrics"]["pen_p95"]["clips"] == 3
    for e in data["entries"]:  # the metrics are ikrig foot's
        for name, value in e["metrics"].items():
            if name in REFERENCE_ROWS.get(e["relative"], {}):
                assert value == pytest.approx(REFERENCE_ROWS[e["relative"]][name]), name
    rows = list(csv.DictReader(report.with_suffix(".csv").open()))
    assert sorted(r["clip"] for r in rows) == sorted([*reference, *BAD])
    assert all(float(r["pen_p95"]) >= 0 for r in rows if r["status"] == "ok")
    if importlib.util.find_spec("matplotlib"):  # the [plot] extra draws the distributions
        r = invoke("plot", "batch", report, "-o", tmp_path / "s.png")
        assert r.exit_code == 0, r.output
        assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    # again: the finished clips are skipped, the failed ones tried again
    before = {e["relative"]: e["finished"] for e in manifest(out)}
    time.sleep(1.1)
    r = invoke("batch", lib, *ARGS, "-o", out, "--jobs", 2, "-q")
    assert r.exit_code == 1 and "skipped (already done): 3" in r.output
    after = {e["relative"]: e["finished"] for e in manifest(out)}
    assert all(after[rel] == before[rel] for rel in reference)
    assert all(after[rel] != before[rel] for rel in BAD)
    r = invoke("batch", lib, *ARGS, "-o", out, "--jobs", 1, "-q", "--force")
    assert "done: 3" in r.output
    check_complete(out, reference)


def _recorded_pools(monkeypatch, local) -> list[str]:
    """The names of the functions the batch's pools are handed, in order."""
    submitted: list[str] = []
    real = local._new_pool

    def recording(jobs, inherited):
        pool = real(jobs, inherited)
        submit = pool.submit
        pool.submit = lambda fn, *a, **k: submitted.append(fn.__name__) or submit(fn, *a, **k)
        return pool

    monkeypatch.setattr(local, "_new_pool", recording)
    return submitted


@pytest.mark.compile  # worker processes load the compiled kernels
@pytest.mark.parametrize("jobs, first_run", [(2, True), (2, False), (1, True)])
def test_a_first_batch_compiles_ahead_in_one_worker(reference, tmp_path, monkeypatch, jobs,
                                                    first_run):  # fmt: skip
    """On a cold cache with two workers or more, the first compiles ahead
    (``ikrig.app.warmup.place_ahead``) before any clip, the others take the clips; the
    outputs are ``ikrig foot``'s all the same. Never on a warm cache or with one worker."""
    import ikrig.batch.local as local

    monkeypatch.setattr(local, "_first_run", lambda: first_run)
    submitted = _recorded_pools(monkeypatch, local)
    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    r = invoke("batch", lib, *ARGS, "-o", out, "--jobs", jobs, "-q")
    assert r.exit_code == 1 and "done: 3" in r.output, r.output
    check_complete(out, reference)
    ahead = jobs >= 2 and first_run
    assert submitted == ["_compile_ahead"] * ahead + ["_run_guarded"] * 5, submitted


def test_first_run_needs_a_cold_cache_and_compiling_ahead_wanted(monkeypatch):
    import ikrig.app.warmup as warmup
    import ikrig.batch.local as local

    for wanted, cold in [(True, True), (True, False), (False, True)]:
        monkeypatch.setattr(warmup, "ahead_wanted", lambda w=wanted: w)
        monkeypatch.setattr(warmup, "cache_is_cold", lambda c=cold: c)
        assert local._first_run() == (wanted and cold)


@pytest.mark.compile  # a spawned worker loads the compiled kernels
def test_spawned_workers_write_the_same(reference, tmp_path, monkeypatch):
    """Where forking is unsafe (another OS, threads, Numba's pool running) workers are
    spawned; the result is the same."""
    import ikrig.batch.local as local

    monkeypatch.setattr(local, "start_method", lambda: "spawn")
    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    r = invoke("batch", lib, *ARGS, "-o", out, "--jobs", 1, "-q")
    assert r.exit_code == 1 and "done: 3" in r.output, r.output
    check_complete(out, reference)


def test_workers_fork_only_where_it_is_safe(monkeypatch):
    import threading

    import ikrig.batch.local as local
    from ikrig._jit.setup import numba

    def no_pool() -> str:
        raise ValueError("Threading layer is not initialized.")

    monkeypatch.setattr(local.sys, "platform", "linux")
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(numba, "threading_layer", no_pool)
    assert local.start_method() == "fork"
    monkeypatch.setattr(threading, "active_count", lambda: 2)  # a thread may hold a lock
    assert local.start_method() == "spawn"
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(numba, "threading_layer", lambda: "omp")  # OpenMP's pool runs
    assert local.start_method() == "spawn"
    monkeypatch.setattr(numba, "threading_layer", no_pool)
    monkeypatch.setattr(local.sys, "platform", "darwin")
    assert local.start_method() == "spawn"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return env


def _batch_process(lib: Path, out: Path, *more: str) -> subprocess.Popen:
    code = "import sys; from ikrig.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "batch", str(lib), *ARGS, "-o", str(out), "-q", *more]
    return subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _wait_for_ok(out: Path, proc: subprocess.Popen, timeout: float = 300.0) -> None:
    t0 = time.monotonic()
    while not any(e["status"] == "ok" for e in manifest(out)):
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        assert time.monotonic() - t0 < timeout, "no clip finished"
        time.sleep(0.005)


@pytest.mark.compile  # worker processes load the compiled kernels
def test_killed_batch_resumes_and_does_each_clip_once(reference, tmp_path):
    psutil = pytest.importorskip("psutil")
    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    reference = dict(reference)
    for i in range(6):  # more clips than a worker finishes between the first one and the kill
        (lib / "more").mkdir(exist_ok=True)
        shutil.copyfile(lib / "walk_back.bvh", lib / "more" / f"walk_back_{i}.bvh")
        reference[f"more/walk_back_{i}.bvh"] = reference["walk_back.bvh"]
    proc = _batch_process(lib, out, "--jobs", "1")
    _wait_for_ok(out, proc)
    os.kill(proc.pid, signal.SIGSTOP)  # it records no more clips from here
    workers = psutil.Process(proc.pid).children(recursive=True)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    fcntl = pytest.importorskip("fcntl")
    with open(out / ".ikrig_batch.lock", "w") as f:  # the orphans finishing a clip let go
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _, alive = psutil.wait_procs(workers, timeout=120)  # orphans finish their clip and exit
    assert not alive, "worker processes outlived the killed batch"
    first = {e["relative"]: e["finished"] for e in manifest(out) if e["status"] == "ok"}
    assert 0 < len(first) < len(reference), "the batch was not killed midway"
    r = invoke("batch", lib, *ARGS, "-o", out, "--jobs", 2, "-q")
    assert r.exit_code == 1, r.output
    assert f"skipped (already done): {len(first)}" in r.output
    assert f"done: {len(reference) - len(first)} " in r.output
    check_complete(out, reference)
    ok = {e["relative"]: e["finished"] for e in manifest(out) if e["status"] == "ok"}
    assert all(ok[rel] == when for rel, when in first.items())  # not done a second time


@pytest.mark.compile  # worker processes load the compiled kernels
def test_ctrl_c_says_how_far_it_got_and_a_rerun_resumes(reference, tmp_path):
    """Issue 36: Ctrl-C (SIGINT to the terminal's process group) ends the batch with one
    line, how many clips it did and how to go on (exit 130), no lock file is left behind,
    and the same command does the rest."""
    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    reference = dict(reference)
    (lib / "more").mkdir()
    for i in range(400):  # more clips than two workers finish before the interrupt, even
        # on a fast machine (40 were all done within the poll's reach there)
        shutil.copyfile(lib / "walk_back.bvh", lib / "more" / f"walk_back_{i}.bvh")
        reference[f"more/walk_back_{i}.bvh"] = reference["walk_back.bvh"]
    code = "import sys; from ikrig.cli import main; sys.exit(main())"
    cmd = [sys.executable, "-c", code, "batch", str(lib), *ARGS, "-o", str(out), "-q"]
    proc = subprocess.Popen(
        cmd + ["--jobs", "2"], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True, text=True,
        # a terminal's Ctrl-C: an xdist worker may ignore SIGINT, and a child inherits that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.default_int_handler),
    )  # fmt: skip
    _wait_for_ok(out, proc)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip()]
    assert proc.returncode == 130, err
    assert len(lines) == 1 and "run the same command to resume" in lines[0], err
    assert "interrupted: " in lines[0] and f"of {len(reference) + len(BAD)} clips" in lines[0]
    assert not (out / ".ikrig_batch.lock").exists()
    first = {e["relative"] for e in manifest(out) if e["status"] == "ok"}
    assert 0 < len(first) < len(reference), "the batch was not interrupted midway"
    r = invoke("batch", lib, *ARGS, "-o", out, "--jobs", 2, "-q")
    assert f"skipped (already done): {len(first)}" in r.output
    check_complete(out, reference)
    assert not (out / ".ikrig_batch.lock").exists()


@pytest.mark.compile  # worker processes load the compiled kernels
def test_dask_cluster_survives_a_killed_worker(reference, tmp_path):
    distributed = pytest.importorskip("distributed")
    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        pids = client.run(os.getpid)
        proc = _batch_process(lib, out, "--scheduler", cluster.scheduler_address)
        _wait_for_ok(out, proc)
        os.kill(next(iter(pids.values())), signal.SIGKILL)  # the nanny starts a new one
        text = proc.communicate(timeout=600)[0].decode()
    assert proc.returncode == 1, text
    assert "2 of 5 clips failed" in text and "done: 3" in text
    check_complete(out, reference)


@pytest.mark.compile  # worker processes load the compiled kernels
def test_local_pool_survives_a_killed_worker(reference, tmp_path):
    psutil = pytest.importorskip("psutil")
    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    proc = _batch_process(lib, out, "--jobs", "2")
    _wait_for_ok(out, proc)
    os.kill(proc.pid, signal.SIGSTOP)  # hold the batch while its pool is up
    children = psutil.Process(proc.pid).children()
    workers = [p for p in children if "resource_tracker" not in " ".join(p.cmdline())]
    assert workers  # forked (the batch process is single-threaded) or spawned
    workers[0].kill()  # the pool breaks: a new one takes the unfinished clips
    os.kill(proc.pid, signal.SIGCONT)
    text = proc.communicate(timeout=600)[0].decode()
    assert proc.returncode == 1, text
    assert "done: 3" in text and "2 of 5 clips failed" in text
    check_complete(out, reference)


@pytest.mark.compile  # a worker process loads the compiled kernels
def test_the_batch_process_flushes_each_output_before_recording_it(
    reference, tmp_path, monkeypatch
):
    """Local workers do not wait for the disk: the batch process flushes each output (and
    its folder) before the clip's manifest line, and a clip whose output cannot be flushed
    is failed with the reason."""
    import ikrig.batch.run as run
    from ikrig.batch import BatchSettings, FootJob, expand_inputs, run_batch

    lib, out = make_library(tmp_path / "lib"), tmp_path / "out"
    flushed: list[tuple[list[str], int]] = []

    def sync_files(paths):
        flushed.append((list(paths), len(manifest(out))))
        if any(p.endswith("run.bvh") for p in paths):
            raise OSError(5, "Input/output error", paths[0])

    monkeypatch.setattr(run, "sync_files", sync_files)
    clips = expand_inputs([str(lib)], out)
    summary = run_batch(clips, FootJob("slope"), BatchSettings(str(out), jobs=1, progress=False))
    assert sorted(Path(p).relative_to(out).as_posix() for ps, _ in flushed for p in ps) == sorted(
        rel for _, rel in CLIPS
    )
    entries = {e["relative"]: e for e in manifest(out)}
    for paths, recorded in flushed:  # flushed before the entry was recorded
        rel = Path(paths[0]).relative_to(out).as_posix()
        assert all(e != rel for e in list(entries)[:recorded])
    assert entries["sub/run.bvh"]["status"] == "failed"
    assert entries["sub/run.bvh"]["error"].startswith("cannot flush the output to disk: ")
    assert entries["walk_back.bvh"]["status"] == "ok" and summary["failed"] == 3


# ------------------------------------------------------------------ inputs, legs map, errors
def test_inputs_mirror_the_tree_and_never_read_the_outputs(tmp_path):
    from ikrig.batch import expand_inputs
    from ikrig.errors import InputError

    lib = tmp_path / "lib"
    for rel in ("a.bvh", "x/b.BVH", "x/y/c.bvh", "x/notes.txt", "out/old.bvh"):
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text("")
    out = lib / "out"
    clips = expand_inputs([str(lib)], out)
    assert [c.relative for c in clips] == ["a.bvh", "x/b.BVH", "x/y/c.bvh"]
    assert clips[2].output == out.resolve() / "x" / "y" / "c.bvh"
    clips = expand_inputs([str(lib / "x" / "**" / "*.bvh"), str(lib / "a.bvh")], out)
    assert [c.relative for c in clips] == ["a.bvh", "x/y/c.bvh"]  # the glob is case-exact
    assert [c.relative for c in expand_inputs([str(lib / "x")], out)] == ["b.BVH", "y/c.bvh"]
    with pytest.raises(InputError, match="no such file"):
        expand_inputs([str(lib / "missing")], out)
    with pytest.raises(InputError, match="matches no clip file"):
        expand_inputs([str(lib / "*.fbx")], out)
    with pytest.raises(InputError, match="every clip of the inputs lies in the output folder"):
        expand_inputs([str(lib / "out")], out)  # its own results only
    with pytest.raises(InputError, match="every clip of the inputs lies in the output folder"):
        expand_inputs([str(lib)], lib)  # -o the input folder
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"^no clip file \(.bvh, .glb, .gltf\) in the inputs$"):
        expand_inputs([str(tmp_path / "empty")], out)


def test_a_gltf_clip_is_hashed_with_the_files_beside_it(tmp_path):
    """A re-run redoes a ``.gltf`` clip whose ``.bin`` (or image) changed, not only its JSON."""
    import hashlib

    from ikrig.batch.job import clip_sha256

    embedded = {"uri": "data:application/octet-stream;base64,AA=="}
    doc = {"buffers": [{"uri": "walk%20data.bin"}, embedded],
           "images": [{"uri": "skin.png"}, {"bufferView": 0}]}  # fmt: skip
    gltf = tmp_path / "walk.gltf"
    gltf.write_text(json.dumps(doc))
    (tmp_path / "walk data.bin").write_bytes(b"\x00" * 16)
    first = clip_sha256(gltf)  # skin.png is missing: it counts as empty
    assert clip_sha256(gltf, gltf.read_bytes()) == first
    (tmp_path / "other.bin").write_bytes(b"x")  # a file the document does not name
    assert clip_sha256(gltf) == first
    (tmp_path / "walk data.bin").write_bytes(b"\x01" + b"\x00" * 15)
    second = clip_sha256(gltf)
    assert second != first
    (tmp_path / "skin.png").write_bytes(b"png")
    assert clip_sha256(gltf) not in (first, second)
    bvh = tmp_path / "a.bvh"
    bvh.write_bytes(b"HIERARCHY")
    assert clip_sha256(bvh) == hashlib.sha256(b"HIERARCHY").hexdigest()
    gltf.write_text("{not json")  # malformed: its bytes alone (reading it reports the error)
    assert clip_sha256(gltf) == hashlib.sha256(b"{not json").hexdigest()


def test_legs_map_picks_a_spec_per_clip(tmp_path):
    from ikrig.batch import legs_map
    from ikrig.batch.run import _legs_for
    from ikrig.errors import InputError

    spec = "LeftUpLeg,LeftLeg,LeftFoot;RightUpLeg,RightLeg,RightFoot"
    path = tmp_path / "legs.json"
    path.write_text(json.dumps({"cmu/*": "A,B,C;D,E,F", "walk*.bvh": spec}))
    legs = legs_map(str(path))
    assert _legs_for(legs, "cmu/01.bvh") == "A,B,C;D,E,F"
    assert _legs_for(legs, "other/walk_2.bvh") == spec
    assert _legs_for(legs, "other/run.bvh") is None  # found by name or topology
    assert legs_map(spec) == spec and _legs_for(spec, "any.bvh") == spec
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="pattern -> legs spec"):
        legs_map(str(path))


def test_batch_errors_before_any_work(tmp_path):
    r = CliRunner().invoke(main, ["batch", str(tmp_path / "none"), "-g", "flat", "-o", "o"])
    assert r.exit_code == 2 and "no such file, folder or matching pattern" in r.output
    r = CliRunner().invoke(main, ["batch", str(tmp_path), "-g", "nowhere", "-o", "o"])
    assert r.exit_code == 2 and "no built-in ground" in r.output


@pytest.mark.compile  # a worker process loads the compiled kernels
def test_a_mesh_ground_is_hashed_and_placed_as_foot_places_it(tmp_path):
    """A mesh file as the ground: the output equals ``ikrig foot``'s, and editing the mesh
    (same path) makes the next run redo the clip instead of skipping it."""
    pytest.importorskip("trimesh")
    src, rel = CLIPS[0]
    if not (SHARED / src).is_file():
        pytest.skip("../shared/data is not present")
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copyfile(SHARED / src, lib / "clip.bvh")
    mesh = tmp_path / "ground.obj"
    quad = "v -500 {y} -500\nv 500 {y} -500\nv 500 {y} 500\nv -500 {y} 500\nf 1 2 3\nf 1 3 4\n"
    mesh.write_text(quad.format(y=0.0))
    r = invoke("foot", lib / "clip.bvh", "-g", mesh, "-o", tmp_path / "ref.bvh")
    assert r.exit_code == 0, r.output
    out = tmp_path / "out"
    r = invoke("batch", lib, "-g", mesh, "-o", out, "--jobs", 1, "-q")
    assert r.exit_code == 0, r.output
    assert (out / "clip.bvh").read_bytes() == (tmp_path / "ref.bvh").read_bytes()
    r = invoke("batch", lib, "-g", mesh, "-o", out, "--jobs", 1, "-q")
    assert "skipped (already done): 1" in r.output
    mesh.write_text(quad.format(y=0.5))  # another ground under the same name
    r = invoke("batch", lib, "-g", mesh, "-o", out, "--jobs", 1, "-q", "--datum", "absolute")
    assert r.exit_code == 0 and "done: 1" in r.output, r.output
    r = invoke("foot", lib / "clip.bvh", "-g", mesh, "-o", tmp_path / "ref2.bvh", "--datum",
               "absolute")  # fmt: skip
    assert (out / "clip.bvh").read_bytes() == (tmp_path / "ref2.bvh").read_bytes()
    # the same options again, the mesh moved back: its hash alone makes the clip redone
    mesh.write_text(quad.format(y=0.0))
    r = invoke("batch", lib, "-g", mesh, "-o", out, "--jobs", 1, "-q", "--datum", "absolute")
    assert r.exit_code == 0 and "done: 1" in r.output, r.output
    assert (out / "clip.bvh").read_bytes() != (tmp_path / "ref2.bvh").read_bytes()


def test_summary_table_keeps_wide_numbers_apart():
    """Each metric row reads as four fields even where a number fills its column
    (-0.0009359 is ten characters)."""
    from ikrig.batch.summary import batch_summary, summary_table

    entries = [
        {"status": "ok", "relative": name, "frames": 10,
         "metrics": {"pelvis_rise": rise, "pen_max": 1.234e-15}}
        for name, rise in (("a.bvh", -0.02637), ("b.bvh", -0.0009359))
    ]  # fmt: skip
    rows = summary_table(batch_summary(entries, 0, 1.0)).splitlines()
    fields = {row.split()[0]: row.split() for row in rows[2:]}
    assert fields["pelvis_rise"][1:] == ["-0.01365", "-0.0009359", "b.bvh"]
    assert fields["pen_max"][1:] == ["1.234e-15", "1.234e-15", "b.bvh"]


@pytest.mark.compile  # worker processes load the compiled kernels
def test_batch_places_gltf_clips_as_foot_does_with_its_options(tmp_path):
    """Issue 36: ``ikrig batch`` takes ``foot``'s clip and placement options (--animation,
    --fps, --walk, --at, --heading, --cycles, --path) with the same meaning: over the shared
    glTF files, each output is byte for byte what ``ikrig foot`` writes with them; a BVH
    clip in the same library ignores --animation and --fps (it has one clip)."""
    gltf = SHARED / "gltf"
    if not gltf.is_dir():
        pytest.skip("../shared/data/gltf is not present")
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("CesiumMan.glb", "GodotPlatformerPlayer.glb"):
        shutil.copyfile(gltf / name, lib / name)
    shutil.copyfile(SHARED / CLIPS[0][0], lib / "walk_back.bvh")
    options = ["-g", "slope", "--animation", "0", "--fps", "20", "--walk", "--at", "1,2"]
    options += ["--heading", "30", "--cycles", "2"]
    r = invoke("batch", lib, *options, "-o", tmp_path / "out", "--jobs", 1, "-q")
    assert r.exit_code == 0, r.output
    for name in ("CesiumMan.glb", "GodotPlatformerPlayer.glb", "walk_back.bvh"):
        mine = options
        if name.endswith(".bvh"):  # foot refuses --animation and --fps for a BVH file
            mine = ["-g", "slope", "--walk", "--at", "1,2", "--heading", "30", "--cycles", "2"]
        out = tmp_path / f"foot_{name}"
        r = invoke("foot", lib / name, *mine, "-o", out)
        assert r.exit_code == 0, r.output
        assert (tmp_path / "out" / name).read_bytes() == out.read_bytes(), name
    again = invoke("batch", lib, *options, "-o", tmp_path / "out", "--jobs", 1, "-q")
    assert "skipped (already done): 3" in again.output
    other = invoke("batch", lib, *options[:-1], "3", "-o", tmp_path / "out", "--jobs", 1, "-q")
    assert "skipped (already done): 0" in other.output  # another option: done again


def _glb_with_animations(path: Path, names: list[str | None]) -> Path:
    """The built-in walk as a ``.glb`` whose one animation is repeated under ``names``
    (``None``: unnamed)."""
    import struct

    pytest.importorskip("pygltflib")
    from ikrig.data import walk_clip
    from ikrig.io import motion_to_gltf, write_gltf

    write_gltf(path, motion_to_gltf(walk_clip(seconds=0.2, fps=30.0)))
    raw = path.read_bytes()
    size = struct.unpack_from("<I", raw, 12)[0]
    data = json.loads(raw[20 : 20 + size])
    anim = data["animations"][0]
    anim.pop("name", None)
    data["animations"] = [{**anim, **({"name": n} if n else {})} for n in names]
    text = json.dumps(data).encode()
    text += b" " * (-len(text) % 4)
    rest = raw[20 + size :]
    body = struct.pack("<II", len(text), 0x4E4F534A) + text + rest
    path.write_bytes(raw[:8] + struct.pack("<I", 12 + len(body)) + body)
    return path


def test_each_animation_names_one_clip_per_animation(tmp_path):
    """``--animation all``: a glTF file gives one clip per animation, named
    ``NAME@INDEX-ANIMATION``; repeated names are picked by index, unnamed ones by their
    listed name, odd characters are left out of the file name; a BVH file stays one clip."""
    from ikrig.batch import each_animation, expand_inputs

    lib = tmp_path / "lib"
    (lib / "sub").mkdir(parents=True)
    _glb_with_animations(lib / "sub" / "char.glb", ["walk", "walk", None, "a/b c*"])
    (lib / "arms.bvh").write_text(ARMS_ONLY)
    (lib / "broken.glb").write_bytes(b"glTF not really")
    clips = each_animation(expand_inputs([str(lib)], tmp_path / "out"))
    got = {c.relative: c.animation for c in clips}
    assert got == {
        "arms.bvh": None,
        "broken.glb": None,  # reading it records the error
        "sub/char@0-walk.glb": "0",
        "sub/char@1-walk.glb": "1",
        "sub/char@2-animation2.glb": "animation2",
        "sub/char@3-a_b_c.glb": "a/b c*",
    }
    outputs = {c.relative: c.output for c in clips}
    assert outputs["sub/char@3-a_b_c.glb"] == tmp_path / "out" / "sub" / "char@3-a_b_c.glb"


@pytest.mark.compile  # worker processes load the compiled kernels
def test_batch_animation_all_places_every_animation_as_foot_does(tmp_path):
    """Issue 36: ``ikrig batch --animation all`` places every animation of each glTF file,
    each output byte for byte what ``ikrig foot --animation NAME`` writes; a second run
    skips them all."""
    gltf = SHARED / "gltf" / "GodotPlatformerPlayer.glb"
    if not gltf.is_file():
        pytest.skip("../shared/data/gltf is not present")
    from ikrig.io import list_animations

    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copyfile(gltf, lib / "robot.glb")
    names = [name for _, name, _, _ in list_animations(gltf)]
    options = ["-g", "stairs", "--animation", "all", "--walk"]
    r = invoke("batch", lib, *options, "-o", tmp_path / "out", "--jobs", 2, "-q")
    assert r.exit_code == 0, r.output
    written = sorted(p.name for p in (tmp_path / "out").glob("*.glb"))
    assert written == sorted(f"robot@{i}-{n}.glb" for i, n in enumerate(names))
    for i in (names.index("walk"), names.index("idle")):
        out = tmp_path / f"foot_{i}.glb"
        r = invoke("foot", lib / "robot.glb", "-g", "stairs", "--animation", names[i], "--walk",
                   "-o", out)  # fmt: skip
        assert r.exit_code == 0, r.output
        assert (tmp_path / "out" / f"robot@{i}-{names[i]}.glb").read_bytes() == out.read_bytes()
    again = invoke("batch", lib, *options, "-o", tmp_path / "out", "--jobs", 1, "-q")
    assert f"skipped (already done): {len(names)}" in again.output


def test_the_summary_names_clips_placed_worse_than_doing_nothing(tmp_path):
    """Issue 36: each clip records its baseline's measures beside its own (``baseline_``
    columns in the CSV), and the summary names, per measure, the clips placed worse than
    doing nothing."""
    from ikrig.batch.summary import batch_summary, summary_table, write_report

    def entry(rel, **m):
        return {"relative": rel, "status": "ok", "metrics": m, "frames": 10, "input": rel,
                "output": rel, "seconds": 0.1}  # fmt: skip

    entries = [
        entry("a.bvh", pen_max=0.5, baseline_pen_max=1.0, pops=0, baseline_pops=0),
        entry("b.bvh", pen_max=2.0, baseline_pen_max=1.0, pops=3, baseline_pops=0),
    ]
    summary = batch_summary(entries, 0, 1.0)
    assert summary["worse_than_baseline"] == {"pen_max": ["b.bvh"], "pops": ["b.bvh"]}
    text = summary_table(summary)
    assert "worse than doing nothing" in text and "b.bvh" in text.split("worse than")[1]
    _, csv_path = write_report(tmp_path / "s.json", summary)
    head = csv_path.read_text().splitlines()[0].split(",")
    assert "baseline_pen_max" in head and "pen_max" in head
