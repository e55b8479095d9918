"""The batch under hostile inputs (issue 35): ``.gltf`` clips with their files in
subfolders (B1), corrupted manifest lines (B2), a full disk at the final compaction (B3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import invoke

pytest.importorskip("pygltflib")

from ikrig.batch.job import ClipOutcome, clip_sha256  # noqa: E402
from ikrig.batch.manifest import MANIFEST_NAME, Manifest  # noqa: E402
from ikrig.errors import InputError  # noqa: E402


@pytest.fixture(scope="module")
def walk_glb(tmp_path_factory) -> bytes:
    from ikrig.data import walk_clip
    from ikrig.io.gltf.build import motion_to_gltf
    from ikrig.io.gltf.write import write_gltf

    path = tmp_path_factory.mktemp("walk") / "walk.glb"
    write_gltf(path, motion_to_gltf(walk_clip(seconds=1.0, fps=30.0)))
    return path.read_bytes()


def split_gltf(glb: bytes, folder: Path, bin_uri: str = "buffers/c.bin") -> Path:
    """``glb`` as ``folder/c.gltf`` with its buffer at ``folder/bin_uri``."""
    import struct

    length = struct.unpack("<I", glb[12:16])[0]
    data = json.loads(glb[20 : 20 + length])
    blob = glb[28 + length :]
    (folder / bin_uri).parent.mkdir(parents=True, exist_ok=True)
    (folder / bin_uri).write_bytes(blob)
    data["buffers"][0]["uri"] = bin_uri
    data["images"] = [{"uri": "textures/skin%20a.png"}]
    (folder / "textures").mkdir(exist_ok=True)
    (folder / "textures" / "skin a.png").write_bytes(b"png")
    path = folder / "c.gltf"
    path.write_text(json.dumps(data))
    return path


def test_clip_hash_follows_files_in_subfolders(walk_glb, tmp_path):
    path = split_gltf(walk_glb, tmp_path)
    first = clip_sha256(path)
    (tmp_path / "textures" / "skin a.png").write_bytes(b"png2")
    second = clip_sha256(path)
    assert second != first
    (tmp_path / "buffers" / "c.bin").write_bytes(b"x")
    assert clip_sha256(path) not in (first, second)


def test_clip_hash_never_reads_outside_or_devices(tmp_path):
    import hashlib

    doc = json.dumps({"buffers": [{"uri": u} for u in ("../x", "/dev/zero", "a%00b", "sub")]})
    (tmp_path / "sub").mkdir()
    (tmp_path / "c.gltf").write_text(doc)
    assert clip_sha256(tmp_path / "c.gltf") == hashlib.sha256(doc.encode()).hexdigest()


def test_a_batch_of_gltf_clips_with_subfolders_resumes(walk_glb, tmp_path):
    lib = tmp_path / "lib"
    (lib / "one").mkdir(parents=True)
    split_gltf(walk_glb, lib / "one")
    out = tmp_path / "out"
    args = ("batch", lib, "-g", "flat", "-o", out, "--jobs", 1, "-q")
    r = invoke(*args)
    assert r.exit_code == 0, r.output
    entries = [json.loads(line) for line in (out / MANIFEST_NAME).read_text().splitlines()]
    assert [e["status"] for e in entries] == ["ok"]
    stamp = (out / "one" / "c.gltf").stat().st_mtime_ns
    r = invoke(*args)  # before issue 35: a traceback in _plan
    assert r.exit_code == 0, r.output
    assert (out / "one" / "c.gltf").stat().st_mtime_ns == stamp  # skipped: done already


def _outcome(relative: str) -> ClipOutcome:
    return ClipOutcome(relative, "ok", None, {"m": 1.0}, 3, 0.1, "abc", [])


CORRUPT = [
    b"\xff\xfe\x00 not utf-8 {",
    json.dumps({"relative": ["a"], "status": "ok"}).encode(),
    json.dumps({"relative": {"a": 1}, "status": "ok"}).encode(),
    b"[1, 2]",
    b"null",
]


@pytest.mark.parametrize("output", [None, 5, ["x"], True])
def test_corrupted_manifest_lines_are_skipped(output, tmp_path):
    out_file = tmp_path / "a.out"
    out_file.write_text("x")
    manifest = Manifest(tmp_path)
    manifest.record(_outcome("a"), ("a.in", str(out_file)), "opts")
    manifest.compact()
    bad = dict(manifest.entries["a"], relative="b", output=output)
    with open(tmp_path / MANIFEST_NAME, "ab") as f:
        f.write(b"\n".join([*CORRUPT, json.dumps(bad).encode()]) + b"\n")
    again = Manifest(tmp_path)
    assert again.is_done("a", "abc", "opts")
    assert not again.is_done("b", "abc", "opts")  # the corrupt newest entry: redone
    assert set(again.entries) <= {"a", "b"}


def test_a_full_disk_at_compaction_leaves_no_duplicates(tmp_path, monkeypatch):
    import ikrig.batch.manifest as module

    manifest = Manifest(tmp_path)
    manifest.open()
    for _ in range(3):  # the same clip done three times: three journal lines
        manifest.record(_outcome("a"), ("a.in", "a.out"), "opts")
    manifest._journal.close()
    manifest._journal = None

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(module, "write_text", full)
    manifest.close()  # compacts in place
    lines = (tmp_path / MANIFEST_NAME).read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["relative"] == "a"
    monkeypatch.setattr(module, "_rewrite_in_place", full)
    with pytest.raises(InputError) as info:
        manifest.compact()
    message = str(info.value)
    assert message.startswith(str(tmp_path / MANIFEST_NAME)) and "No space left" in message
    assert "\n" not in message
