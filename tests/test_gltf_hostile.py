"""Hostile glTF files (issue 35): one regression test per problem the fuzzer found.

No file outside the glTF's folder is read (R1), devices and long files are read no further
than ``byteLength`` (R2), JSON cannot ask for gigabytes (R3, R4), what the reader accepts the
writer writes (R5), type confusion gives a one-line error (R6), root motion on an armature
node is written once (R7). Cases are built with the fuzzer's own GLB editing
(``benchmarks/_gltf_fuzz_cases.py``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from helpers import REPO, SHARED_GLTF

pytest.importorskip("pygltflib")

from click.testing import CliRunner  # noqa: E402

from ikrig.cli import main  # noqa: E402
from ikrig.errors import FileFormatError, IkrigError, InputError  # noqa: E402
from ikrig.io import read_gltf  # noqa: E402
from ikrig.io.gltf.write import write_gltf  # noqa: E402

_spec = importlib.util.spec_from_file_location("fuzz_gltf", REPO / "benchmarks" / "fuzz_gltf.py")
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)


@pytest.fixture(scope="module")
def seed() -> bytes:
    """CesiumMan when the shared data is present, else the generated walk."""
    cesium = SHARED_GLTF / "CesiumMan.glb"
    return cesium.read_bytes() if cesium.is_file() else fuzz.seed_corpus(None)[0]


@pytest.fixture
def folder(tmp_path) -> Path:
    return fuzz.case_folder(tmp_path)


def edited(seed: bytes, folder: Path, edit, name: str = "case.glb") -> Path:
    """``seed`` with ``edit(json, bin)`` applied, written to ``folder/name``."""
    data, blob = fuzz.split_glb(seed)
    edit(data, blob)
    path = folder / name
    path.write_bytes(fuzz.join_glb(data, blob))
    return path


def clear_error(path: Path, error_type=IkrigError, **kwargs) -> str:
    """The message of reading ``path``: an ikrig error naming the file, one short line."""
    with pytest.raises(error_type) as info:
        read_gltf(path, **kwargs)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and len(message) < 300
    return message


def image_buffer(uri: str, length: int = 31):
    """An edit adding a buffer ``uri`` read through an image's bufferView (issue 35's
    evil.glb)."""

    def edit(data: dict, blob: bytearray) -> None:
        data["buffers"].append({"uri": uri, "byteLength": length})
        data["bufferViews"].append({"buffer": len(data["buffers"]) - 1, "byteLength": length})
        data.setdefault("images", []).append(
            {"bufferView": len(data["bufferViews"]) - 1, "mimeType": "image/png"}
        )

    return edit


# --------------------------------------------------------------------------------------------
# R1: no file outside the glTF's folder; R2: only regular files, only byteLength bytes
# --------------------------------------------------------------------------------------------

OUTSIDE = ["../secret.txt", "%2e%2e/secret.txt", "sub/../../secret.txt", "..\\secret.txt",
           "link.bin", "SECRET_ABSOLUTE", "C:/Windows/win.ini", "file:///etc/passwd"]  # fmt: skip


@pytest.mark.parametrize("uri", OUTSIDE)
def test_buffer_uris_outside_the_folder_are_not_read(uri, seed, folder, capfd):
    uri = str(folder.parent / "secret.txt") if uri == "SECRET_ABSOLUTE" else uri
    path = edited(seed, folder, image_buffer(uri, fuzz.SECRET_SIZE))
    message = clear_error(path, FileFormatError)
    assert str(fuzz.SECRET_SIZE) not in message and fuzz.SECRET.decode() not in message
    result = CliRunner().invoke(
        main, ["foot", str(path), "-g", "flat", "-o", str(folder / "o.glb")]
    )
    assert result.exit_code != 0 and not (folder / "o.glb").exists()
    said = result.output + capfd.readouterr().out
    assert fuzz.SECRET.decode() not in said and str(fuzz.SECRET_SIZE) not in said


def test_a_short_outside_file_does_not_tell_its_size(seed, folder):
    """Before issue 35: 'buffer 0 holds 1221 bytes, byteLength says 462572' for /etc/passwd."""
    path = edited(seed, folder, image_buffer("../secret.txt", 10**6))
    assert str(fuzz.SECRET_SIZE) not in clear_error(path, allow_outside=True)


def test_allow_outside_reads_a_trusted_file(seed, folder):
    path = edited(seed, folder, image_buffer("../secret.txt", 31))
    clip = read_gltf(path, allow_outside=True)
    assert clip.allow_outside
    write_gltf(folder / "out.glb", clip)  # the writer reads the buffer again, allowed
    assert fuzz.SECRET in (folder / "out.glb").read_bytes()
    result = CliRunner().invoke(main, ["--allow-outside", "info", str(path)])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code != 0 and "allow-outside" in result.output


def test_files_inside_the_folder_tree_read(seed, folder):
    data, blob = fuzz.split_glb(seed)
    (folder / "sub").mkdir()
    (folder / "sub" / "body.bin").write_bytes(bytes(blob))
    data["buffers"][0]["uri"] = "sub/body%2Ebin"
    path = folder / "split.gltf"
    path.write_text(json.dumps(data))
    assert read_gltf(path).motion.num_frames > 1


@pytest.mark.parametrize("uri", ["/dev/zero", "fifo", "loop.bin", "a%00b.bin", "."])
def test_devices_fifos_and_bad_names_are_refused_quickly(uri, seed, folder):
    path = edited(seed, folder, image_buffer(uri, 2**40))
    start = time.perf_counter()
    message = clear_error(path, FileFormatError, allow_outside=True)
    assert time.perf_counter() - start < 2
    assert re.search("not a regular file|cannot read|not a file name", message), message


def test_at_most_byte_length_bytes_are_read(seed, folder):
    data, blob = fuzz.split_glb(seed)
    (folder / "big.bin").write_bytes(bytes(blob) + bytes(50_000_000))
    data["buffers"][0]["uri"] = "big.bin"
    path = folder / "big.gltf"
    path.write_text(json.dumps(data))
    tracemalloc.start()
    try:
        read_gltf(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40_000_000


# --------------------------------------------------------------------------------------------
# R3: an accessor without bufferView cannot ask for gigabytes; R4: nor can key times
# --------------------------------------------------------------------------------------------


def _input_accessor(data: dict) -> dict:
    return data["accessors"][data["animations"][0]["samplers"][0]["input"]]


def test_accessor_without_buffer_view_is_bounded(seed, folder):
    def edit(data, blob):
        acc = _input_accessor(data)
        del acc["bufferView"]
        acc["count"] = 400_000_000

    tracemalloc.start()
    try:
        message = clear_error(edited(seed, folder, edit), FileFormatError)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "without bufferView" in message and peak < 50_000_000


# --------------------------------------------------------------------------------------------
# R5: the writer never fails on what the reader accepted; R6: type confusion
# --------------------------------------------------------------------------------------------


def _other_animation(data: dict) -> dict:
    anim = json.loads(json.dumps(data["animations"][0]))
    data["animations"].append(anim)
    return anim


WRITER_TRAPS = {
    "inverse bind matrices out of range": lambda d, b: d["skins"][0].update(
        inverseBindMatrices=len(d["accessors"]) + 5
    ),
    "bufferView without buffer": lambda d, b: d["bufferViews"][0].pop("buffer"),
    "other sampler without input": lambda d, b: _other_animation(d)["samplers"][0].pop("input"),
    "unknown componentType": lambda d, b: d["accessors"][-1].update(componentType=5124),
    "NaN in a node matrix": lambda d, b: d["nodes"].append({"matrix": [float("nan")] + [0.0] * 15}),
    "true as a child": lambda d, b: d["nodes"][0].setdefault("children", []).append(True),
    "true as a joint": lambda d, b: d["skins"][0]["joints"].__setitem__(0, True),
    "negative sparse count": lambda d, b: d["accessors"][0].update(
        sparse={
            "count": -1,
            "indices": {"bufferView": 0, "componentType": 5125},
            "values": {"bufferView": 0},
        }  # fmt: skip
    ),
    "a 300-digit index": lambda d, b: d["accessors"][0].update(bufferView=10**300),
    "%00 in a uri": image_buffer("a%00b.bin"),
    "meshopt": lambda d, b: d.update(extensionsUsed=["EXT_meshopt_compression"]),
}


@pytest.mark.parametrize("trap", sorted(WRITER_TRAPS))
def test_documents_the_writer_cannot_write_are_refused_on_reading(trap, seed, folder):
    path = edited(seed, folder, WRITER_TRAPS[trap])
    with _no_warnings():
        clear_error(path)


class _no_warnings:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings(record=True)
        self.said = self._catch.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)
        assert not [w for w in self.said if not issubclass(w.category, DeprecationWarning)]


def test_negative_key_times_are_refused_on_reading(seed, folder):
    def edit(data, blob):
        acc = _input_accessor(data)
        view = data["bufferViews"][acc["bufferView"]]
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        times = np.frombuffer(blob, "<f4", acc["count"], start) - 10.0
        blob[start : start + times.nbytes] = times.astype("<f4").tobytes()
        acc["min"], acc["max"] = [float(times.min())], [float(times.max())]

    assert "negative" in clear_error(edited(seed, folder, edit), FileFormatError)


# --------------------------------------------------------------------------------------------
# R7: root motion on a node above the skeleton is written once
# --------------------------------------------------------------------------------------------


def _armature(data: dict) -> dict:
    """The node the ``root_motion`` mutation animates (the last translation channel's)."""
    return data["nodes"][data["animations"][0]["channels"][-1]["target"]["node"]]


@pytest.mark.parametrize("drift", [0, 1, 2])
@pytest.mark.parametrize("rest_rotation", [None, [1.0, 1.0, 1.0, 1.0]])
def test_root_motion_on_the_armature_is_written_once(drift, rest_rotation, seed, folder):
    """A non-unit rest rotation on the armature (fuzz seed 4, case 337) is read normalised;
    the writer solves joint 0 against the same normalised rotation."""
    import random

    data, blob = fuzz.split_glb(seed)
    fuzz.MUTATIONS["root_motion"]((data, blob), random.Random(drift))
    if rest_rotation is not None:
        _armature(data)["rotation"] = rest_rotation
    path = folder / "armature.glb"
    path.write_bytes(fuzz.join_glb(data, blob))
    clip = read_gltf(path)
    assert any("animation moves nodes above the skeleton" in q for q in clip.quirks)
    write_gltf(folder / "out.glb", clip)
    again = read_gltf(folder / "out.glb")
    a, b = clip.motion.positions_world(), again.motion.positions_world()
    assert np.ptp(a[:, 0, 0]) > 0.4  # the drift is there...
    np.testing.assert_allclose(b, a, atol=2e-5 * np.abs(a).max())  # ...once


def test_absurd_scale_on_a_top_node_is_refused(seed, folder):
    def edit(data, blob):
        top = data["scenes"][data.get("scene", 0)]["nodes"][0]
        data["nodes"][top].pop("matrix", None)
        data["nodes"][top]["scale"] = [1e-300] * 3

    assert "scale" in clear_error(edited(seed, folder, edit), InputError)


def test_long_and_control_character_names_stay_short(seed, folder):
    def edit(data, blob):
        for node in data["nodes"]:
            node["name"] = "\x1b]0;owned\x07" + "x" * 5000
            node["scale"] = [1.0, 0.0, 1.0]  # refused, naming the node
            node.pop("matrix", None)

    message = clear_error(edited(seed, folder, edit), InputError)
    assert "\x1b" not in message and "\x07" not in message


def test_no_file_is_left_open(seed, folder):
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    for uri in ("fifo", "/dev/zero", "missing.bin"):
        with pytest.raises(IkrigError):
            read_gltf(edited(seed, folder, image_buffer(uri, 10)), allow_outside=True)
    after = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    assert after <= before


# --------------------------------------------------------------------------------------------
# R4: the sampling grid is bounded; R9: reading is linear in the document
# --------------------------------------------------------------------------------------------


def _scale_times(factor: float, one: float | None = None):
    def edit(data, blob):
        acc = _input_accessor(data)
        view = data["bufferViews"][acc["bufferView"]]
        start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        times = np.frombuffer(blob, "<f4", acc["count"], start).astype(np.float64) * factor
        if one is not None:
            times[-1] = one
        blob[start : start + 4 * len(times)] = times.astype("<f4").tobytes()
        acc["min"], acc["max"] = [float(times.min())], [float(times.max())]

    return edit


@pytest.mark.parametrize(("factor", "one"), [(1.0, 1e9), (1.0, 3e4), (1e30, None), (1e9, None)])
def test_huge_key_times_are_refused_before_sampling(factor, one, seed, folder):
    path = edited(seed, folder, _scale_times(factor, one))
    start = time.perf_counter()
    message = clear_error(path, FileFormatError)
    assert time.perf_counter() - start < 1 and "frames" in message


def test_a_long_clip_within_the_bound_reads(seed, folder):
    """Key times 20x as far apart (within the bound) read, over the whole stretched span
    (CesiumMan, or the generated walk without the shared data)."""

    def span(m):
        return (m.num_frames - 1) * m.frame_time

    original = read_gltf(edited(seed, folder, _scale_times(1.0), "same.glb")).motion
    clip = read_gltf(edited(seed, folder, _scale_times(20.0)))
    assert span(clip.motion) > 10 * span(original) > 0


def _deep(depth: int, joints: bool):
    def edit(data, blob):
        nodes, first = data["nodes"], len(data["nodes"])
        nodes += [{"children": [first + i + 1], "translation": [0, 0.01, 0]} for i in range(depth)]
        if joints:  # a chain of joints under the skeleton's first joint
            nodes[-1].pop("children")
            skin = data["skins"][0]
            nodes[skin["joints"][0]].setdefault("children", []).append(first)
            skin["joints"] += list(range(first, first + depth))
            skin.pop("inverseBindMatrices", None)
        else:  # a chain above every top node
            tops = set(range(first)) - {c for n in nodes for c in n.get("children", [])}
            nodes[-1]["children"] = sorted(tops)
            data["scenes"] = [{"nodes": [first]}]
            data["scene"] = 0

    return edit


@pytest.mark.parametrize("joints", [False, True], ids=["above", "joints"])
def test_reading_deep_chains_is_linear(joints, seed, folder):
    seconds = []
    for depth in (500, 4000):
        path = edited(seed, folder, _deep(depth, joints), f"deep{depth}.glb")
        start = time.perf_counter()
        clip = read_gltf(path)
        seconds.append(time.perf_counter() - start)
        assert len(clip.joint_nodes) >= (depth if joints else 1)
    assert seconds[1] < 8 * seconds[0] + 0.5  # 8 x the nodes: no more than 8 x the time


# --------------------------------------------------------------------------------------------
# Mild: data URIs, strides, nulls in extras
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("uri", ["data:", "data:x,!!!", "data:application/octet-stream;base64,AA"])
def test_bad_data_uris_of_unused_buffers_are_refused_on_reading(uri, seed, folder):
    assert "data URI" in clear_error(edited(seed, folder, image_buffer(uri)), FileFormatError)


def test_a_stride_shorter_than_the_elements_is_refused(seed, folder):
    def edit(data, blob):
        acc = data["accessors"][data["animations"][0]["samplers"][0]["output"]]
        data["bufferViews"][acc["bufferView"]]["byteStride"] = 4

    assert "byteStride" in clear_error(edited(seed, folder, edit), FileFormatError)


def test_null_inside_extras_survives_a_round_trip(seed, folder):
    extras = {"keep": None, "list": [None, 1], "nested": {"n": None}, "empty": []}

    def edit(data, blob):
        data["nodes"][0]["extras"] = extras
        data["extras"] = {"top": None}

    clip = read_gltf(edited(seed, folder, edit))
    write_gltf(folder / "out.gltf", clip)
    written = json.loads((folder / "out.gltf").read_text())
    assert written["nodes"][0]["extras"] == extras and written["extras"] == {"top": None}


# --------------------------------------------------------------------------------------------
# Mild: names printed escaped, short messages naming the file
# --------------------------------------------------------------------------------------------


def test_info_escapes_control_characters_in_names(seed, folder):
    def edit(data, blob):
        for node in data["nodes"]:
            node["name"] = "\x1b]0;owned\x07" + str(node.get("name"))
        data["animations"][0]["name"] = "\x1b[2Jwalk\u202e"

    path = edited(seed, folder, edit)
    result = CliRunner().invoke(main, ["info", str(path)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\u202e" not in result.output and "\\x1b]0;owned\\x07" in result.output


def test_no_legs_message_stays_short():
    from ikrig.character.legs import find_legs
    from ikrig.skeleton import Skeleton

    n = 400
    skeleton = Skeleton(tuple(f"bone_{i:04d}" for i in range(n)), [-1, *range(n - 1)],
                        np.tile([0.0, 0.0, 0.01], (n, 1)))  # fmt: skip
    with pytest.raises(InputError) as info:
        find_legs(skeleton)
    assert len(str(info.value)) < 300 and "and 392 more" in str(info.value)


def test_convert_names_the_files_when_bvh_cannot_hold_a_name(seed, folder):
    def edit(data, blob):
        for node in data["nodes"]:
            node["name"] = "a b{" + str(node.get("name"))

    path = edited(seed, folder, edit)
    result = CliRunner().invoke(main, ["convert", str(path), str(folder / "o.bvh")])
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert line.startswith(f"ikrig: error: {path} -> {folder / 'o.bvh'}: "), line
    assert len(line) - len(str(path)) - len(str(folder / "o.bvh")) < 300


def test_check_gltf_bounds_accessors_without_buffer_view(seed, folder):
    from ikrig.io import check_gltf

    def edit(data, blob):
        acc = _input_accessor(data)
        del acc["bufferView"]
        acc["count"] = 400_000_000

    start = time.perf_counter()
    problems = check_gltf(edited(seed, folder, edit))
    assert any("without bufferView" in p for p in problems) and time.perf_counter() - start < 2
