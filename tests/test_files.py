"""Atomic outputs and output-path checks (ikrig._files)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ikrig._files import atomic_path, check_output, write_text
from ikrig.errors import IkrigError, InputError


def test_write_text_replaces_and_leaves_no_temporary(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    write_text(out, "new")
    assert out.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_failing_writer_keeps_the_old_file(tmp_path):
    out = tmp_path / "a.bvh"
    out.write_text("precious")
    with pytest.raises(RuntimeError), atomic_path(out) as tmp:
        tmp.write_text("half of it")
        raise RuntimeError("writer died")
    assert out.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bvh"]


def test_temporary_keeps_the_suffix_and_folder(tmp_path):
    with atomic_path(tmp_path / "movie.gif") as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".gif"
        tmp.write_bytes(b"GIF89a")
    assert (tmp_path / "movie.gif").read_bytes() == b"GIF89a"


def test_existing_permissions_are_kept(tmp_path):
    out = tmp_path / "x.txt"
    out.write_text("a")
    os.chmod(out, 0o640)
    write_text(out, "b")
    assert out.stat().st_mode & 0o777 == 0o640


def test_killed_writer_leaves_the_old_file_whole(tmp_path):
    """SIGKILL in the middle of a large write: the previous output survives unchanged."""
    out = tmp_path / "big.bvh"
    out.write_text("the previous result\n")
    started = tmp_path / "started"
    script = textwrap.dedent(
        f"""
        import pathlib, time
        from ikrig._files import atomic_path
        with atomic_path({str(out)!r}) as tmp:
            with open(tmp, "w") as f:
                f.write("partial " * 1000)
                f.flush()
                pathlib.Path({str(started)!r}).write_text("1")
                while True:
                    f.write("more " * 1000)
                    time.sleep(0.01)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert proc.poll() is None, "writer exited early"
            assert time.monotonic() < deadline, "writer never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert out.read_text() == "the previous result\n"


def test_check_output_refuses_the_input(tmp_path):
    src = tmp_path / "walk.bvh"
    src.write_text("x")
    with pytest.raises(InputError, match="never overwrites its input"):
        check_output(src, inputs=[src])
    # the same file by another spelling
    with pytest.raises(InputError, match="never overwrites"):
        check_output(tmp_path / "." / "walk.bvh", inputs=[str(src)])


def test_check_output_suffixes_and_folders(tmp_path):
    with pytest.raises(InputError, match=r"\.png.*\.svg|use one of"):
        check_output(tmp_path / "c.xyz", suffixes=[".png", ".svg"])
    out = check_output(tmp_path / "new" / "deeper" / "c.PNG", suffixes=[".png"])
    assert out.parent.is_dir()
    with pytest.raises(InputError, match="is a folder"):
        check_output(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(IkrigError, match="cannot create folder"):
        check_output(blocker / "x.bvh")
    msg = ""
    try:
        check_output(blocker / "x.bvh")
    except IkrigError as exc:
        msg = str(exc)
    assert "\n" not in msg and len(msg) < 300


def test_errors_about_the_temporary_file_name_the_destination(tmp_path):
    out = tmp_path / "report.json"

    def failing_writer(tmp):
        raise OSError(28, "No space left on device", str(tmp))

    with pytest.raises(OSError) as info, atomic_path(out) as tmp:
        failing_writer(tmp)
    assert info.value.filename == str(out) and info.value.errno == 28
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_file_in_the_way_of_a_folder_is_named(tmp_path):
    (tmp_path / "results").write_text("")
    with pytest.raises(InputError, match="a file named .*results is in the way"):
        check_output(tmp_path / "results" / "deeper" / "x.bvh")


def test_deferred_writes_are_atomic_and_synced_later_by_the_caller(tmp_path, monkeypatch):
    """Inside ``deferred_sync`` nothing waits for the disk; the files are whole at once and
    listed, and ``sync_files`` then flushes each file and each folder once."""
    import ikrig._files as files

    synced: list[str] = []

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists("/proc") else "?")

    monkeypatch.setattr(files.os, "fsync", fsync)
    (tmp_path / "sub").mkdir()
    outs = [tmp_path / "a.bvh", tmp_path / "b.bvh", tmp_path / "sub" / "c.bvh"]
    with files.deferred_sync() as written:
        for out in outs:
            write_text(out, out.name)
        assert synced == []  # nothing flushed yet
    assert written == [str(p) for p in outs]
    assert [p.read_text() for p in outs] == ["a.bvh", "b.bvh", "c.bvh"]
    assert not [p for p in tmp_path.rglob("*.part*")]
    write_text(tmp_path / "d.txt", "d")  # outside the block: flushed at once again
    assert len(synced) == 2
    synced.clear()
    (tmp_path / "b.bvh").unlink()  # gone since: skipped
    files.sync_files(written)
    if os.path.exists("/proc"):
        assert synced == [str(outs[0]), str(outs[2]), str(tmp_path), str(tmp_path / "sub")]
    else:
        assert len(synced) == 4
