"""glTF writing (issue 14): write_gltf, check_gltf, motion_to_gltf.

Round trips through the reader (ikrig.io.gltf.read.read_gltf): the shared glTF characters
written back unchanged and edited, the shared BVH clips to glTF and back to BVH. Every
written file passes check_gltf and loads in pygltflib and trimesh; check_gltf itself is
shown to fail on hand-broken documents, one rule at a time.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest

pygltflib = pytest.importorskip("pygltflib", reason="glTF needs the [gltf] extra")

from ikrig.character.legs import find_legs  # noqa: E402
from ikrig.data import walk_clip  # noqa: E402
from ikrig.errors import IkrigError, InputError  # noqa: E402
from ikrig.io.bvh import read_bvh, to_bvh_clip, write_bvh  # noqa: E402
from ikrig.io.gltf.build import motion_to_gltf  # noqa: E402
from ikrig.io.gltf.check import check_gltf  # noqa: E402
from ikrig.io.gltf.read import read_gltf  # noqa: E402
from ikrig.io.gltf.write import write_gltf  # noqa: E402
from ikrig.math import quat_from_axis_angle, quat_mul  # noqa: E402
from ikrig.pose import Motion  # noqa: E402
from ikrig.skeleton import Skeleton  # noqa: E402

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
GLTF_FILES = sorted((SHARED / "gltf").glob("*.glb")) if (SHARED / "gltf").is_dir() else []
BVH_FILES = sorted((SHARED / "bvh").glob("*.bvh")) if (SHARED / "bvh").is_dir() else []
MORE_BVH = sorted((SHARED / "bvh_more").glob("*.bvh")) if (SHARED / "bvh_more").is_dir() else []
TOL = 1e-5  # of the leg length (or of the skeleton's height without legs)


def _needs(files, what):
    if not files:
        pytest.skip(f"../shared/data/{what} is not present")


def _unit(skeleton) -> float:
    """Leg length, or the rest skeleton's height when no legs are found."""
    try:
        return find_legs(skeleton).leg_length
    except IkrigError:
        rest = Motion.rest(skeleton).positions_world()
        return float(np.ptp(rest[:, 1]) or np.ptp(rest, axis=0).max())


def _loads_elsewhere(path: Path) -> None:
    trimesh = pytest.importorskip("trimesh", reason="trimesh (the [mesh] extra)")
    doc = pygltflib.GLTF2().load(str(path))
    assert doc is not None and doc.skins and doc.animations
    scene = trimesh.load(str(path), force="scene")
    assert len(scene.geometry) >= 1


def _same_world(got: Motion, want: Motion, unit: float, what: str) -> None:
    """World positions to TOL of ``unit``, world rotations to 1e-5 (up to sign)."""
    rw_got, pw_got = got.fk()
    rw_want, pw_want = want.fk()
    err = np.abs(pw_got - pw_want).max()
    assert err <= TOL * unit, f"{what}: positions off by {err / unit:.3g} leg lengths"
    q_err = np.minimum(np.abs(rw_got - rw_want).max(-1), np.abs(rw_got + rw_want).max(-1))
    assert q_err.max() <= 1e-5, f"{what}: world rotations off by {q_err.max():.3g}"


def _written_ok(path: Path) -> None:
    assert check_gltf(path) == []
    _loads_elsewhere(path)


# --- the document's meaning, independent of accessor and bufferView numbering -----------


def _data(path: Path, pygltflib_json: bool = False) -> tuple[dict, list[bytes]]:
    """The JSON and buffer bytes of a .glb or .gltf file, parsed here (pygltflib is slow);
    ``pygltflib_json``: the JSON as pygltflib gives it (defaults filled in), as written."""
    raw = path.read_bytes()
    blob = b""
    if pygltflib_json:
        text, blob = _pygltflib_json(path)
        data = json.loads(text)
    elif raw[:4] == b"glTF":
        n = int.from_bytes(raw[12:16], "little")
        data = json.loads(raw[20 : 20 + n])
        if len(raw) > 20 + n:
            m = int.from_bytes(raw[20 + n : 24 + n], "little")
            blob = raw[28 + n : 28 + n + m]
    else:
        data = json.loads(raw)
    blobs = []
    for buf in data.get("buffers", []):
        uri = buf.get("uri")
        if uri is None:
            blobs.append(blob)
        elif uri.startswith("data:"):
            blobs.append(base64.b64decode(uri.split(",", 1)[1]))
        else:
            blobs.append((path.parent / unquote(uri)).read_bytes())
    return data, blobs


def _accessor_key(data: dict, blobs: list[bytes], i: int) -> str:
    """An accessor by content: its JSON (minus where it lies) and the hash of its bytes."""
    acc = {k: v for k, v in data["accessors"][i].items() if k not in ("bufferView", "byteOffset")}
    acc.pop("name", None)
    view = data["bufferViews"][data["accessors"][i]["bufferView"]]
    comp = np.dtype({5126: "<f4", 5125: "<u4", 5123: "<u2", 5121: "u1"}[acc["componentType"]])
    n = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc["type"]]
    stride = view.get("byteStride") or comp.itemsize * n
    start = view.get("byteOffset", 0) + data["accessors"][i].get("byteOffset", 0)
    count = acc["count"]
    raw = np.frombuffer(blobs[view["buffer"]], np.uint8)
    rows = np.lib.stride_tricks.as_strided(raw[start:], (count, comp.itemsize * n), (stride, 1))
    return json.dumps(acc, sort_keys=True) + hashlib.sha1(rows.tobytes()).hexdigest()


@lru_cache(maxsize=4)
def _pygltflib_json(path: Path) -> tuple[str, bytes]:
    doc = _document(path)
    return doc.to_json(), bytes(doc.binary_blob() or b"")


@lru_cache(maxsize=4)
def _document(path: Path):
    """An input file's pygltflib document, read once (never modified by the tests)."""
    return pygltflib.GLTF2().load(str(path))


@lru_cache(maxsize=16)
def _meaning_json(path: Path, replaced: int | None) -> str:
    """The meaning of an input file (cached: pygltflib reads it slowly)."""
    return json.dumps(_meaning(path, replaced, pygltflib_json=True), sort_keys=True)


def _meaning(path: Path, replaced: int | None, pygltflib_json: bool = False) -> dict:
    """The document JSON with accessors and image bufferViews replaced by their content,
    without accessors/bufferViews/buffers and without the replaced animation's channels
    and samplers."""
    data, blobs = _data(path, pygltflib_json)

    def key(i):
        return _accessor_key(data, blobs, i)

    for mesh in data.get("meshes", []):
        for prim in mesh["primitives"]:
            prim["attributes"] = {k: key(v) for k, v in prim["attributes"].items()}
            if "indices" in prim:
                prim["indices"] = key(prim["indices"])
            prim["targets"] = [{k: key(v) for k, v in t.items()} for t in prim.get("targets", [])]
    for skin in data.get("skins", []):
        if "inverseBindMatrices" in skin:
            skin["inverseBindMatrices"] = key(skin["inverseBindMatrices"])
    for a, anim in enumerate(data.get("animations", [])):
        if a == replaced:
            anim.pop("channels")
            anim.pop("samplers")
            continue
        for s in anim["samplers"]:
            s["input"], s["output"] = key(s["input"]), key(s["output"])
    for image in data.get("images", []):
        if "bufferView" in image:
            v = data["bufferViews"][image["bufferView"]]
            chunk = blobs[v["buffer"]][
                v.get("byteOffset", 0) : v.get("byteOffset", 0) + v["byteLength"]
            ]
            image["bufferView"] = hashlib.sha1(chunk).hexdigest()
    for k in ("accessors", "bufferViews", "buffers"):
        data.pop(k, None)
    return data


def _unused_bytes(data: dict) -> int:
    """Bytes of the buffers no accessor, sparse part or image reads (padding included)."""
    size = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}
    comp = {5126: 4, 5125: 4, 5123: 2, 5122: 2, 5121: 1, 5120: 1}
    covered: dict[int, list[tuple[int, int]]] = {}
    for image in data.get("images", []):
        if "bufferView" in image:
            covered.setdefault(image["bufferView"], []).append((0, 1 << 62))
    for acc in data["accessors"]:
        item = size[acc["type"]] * comp[acc["componentType"]]
        parts = [(acc.get("bufferView"), acc.get("byteOffset", 0), acc["count"], item)]
        if "sparse" in acc:
            sp = acc["sparse"]
            parts.append((sp["indices"]["bufferView"], sp["indices"].get("byteOffset", 0),
                          sp["count"], comp[sp["indices"]["componentType"]]))  # fmt: skip
            parts.append((sp["values"]["bufferView"], sp["values"].get("byteOffset", 0),
                          sp["count"], item))  # fmt: skip
        for v, off, count, width in parts:
            if v is not None:
                stride = data["bufferViews"][v].get("byteStride") or width
                covered.setdefault(v, []).append((off, off + stride * (count - 1) + width))
    used = 0
    for v, view in enumerate(data["bufferViews"]):
        mask = np.zeros(view["byteLength"], dtype=bool)
        for lo, hi in covered.get(v, []):
            mask[lo:hi] = True
        used += int(mask.sum())
    return sum(b["byteLength"] for b in data["buffers"]) - used


def _referenced_accessors(data: dict) -> set[int]:
    out = set()
    for mesh in data.get("meshes", []):
        for prim in mesh["primitives"]:
            out |= set(prim["attributes"].values()) | {prim.get("indices")}
            for t in prim.get("targets", []):
                out |= set(t.values())
    out |= {s.get("inverseBindMatrices") for s in data.get("skins", [])}
    for anim in data.get("animations", []):
        out |= {s["input"] for s in anim["samplers"]} | {s["output"] for s in anim["samplers"]}
    return out - {None}


# --- check_gltf ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", GLTF_FILES, ids=lambda p: p.name)
def test_check_passes_on_the_shared_files(path):
    assert check_gltf(path) == []
    assert check_gltf(pygltflib.GLTF2().load(str(path))) == []


@pytest.fixture(scope="module")
def small_doc():
    """JSON and bytes of a written walk: 1 s at 30 fps."""
    clip = motion_to_gltf(walk_clip(seconds=1.0, fps=30.0))
    data = json.loads(clip.document.to_json())
    return data, bytes(clip.document.binary_blob())


def _time_accessor(data):
    return data["animations"][0]["samplers"][0]["input"]


def _swap_two_times(data, blob):
    acc = data["accessors"][_time_accessor(data)]
    start = data["bufferViews"][acc["bufferView"]]["byteOffset"] + acc.get("byteOffset", 0)
    times = np.frombuffer(blob, "<f4", count=acc["count"], offset=start).copy()
    times[[3, 4]] = times[[4, 3]]
    blob[start : start + times.nbytes] = times.tobytes()


def _position(data):
    return data["accessors"][data["meshes"][0]["primitives"][0]["attributes"]["POSITION"]]


BREAKS = {
    "misaligned bufferView": (
        lambda d, b: d["bufferViews"][1].update(byteOffset=d["bufferViews"][1]["byteOffset"] + 2),
        "not a multiple of 4",
    ),
    "bufferView past its buffer": (
        lambda d, b: d["bufferViews"][-1].update(byteLength=d["bufferViews"][-1]["byteLength"] + 8),
        "do not fit buffer",
    ),
    "bad byteStride": (lambda d, b: d["bufferViews"][1].update(byteStride=6), "byteStride"),
    "accessor count too big": (
        lambda d, b: _position(d).update(count=_position(d)["count"] + 1),
        "past bufferView",
    ),
    "accessor offset not a component multiple": (
        lambda d, b: _position(d).update(byteOffset=2),
        "multiple of its component size",
    ),
    "zero count": (lambda d, b: _position(d).update(count=0), "count 0"),
    "POSITION without min": (lambda d, b: _position(d).pop("min"), "min is missing"),
    "POSITION with a wrong max": (
        lambda d, b: _position(d).update(max=[9.0, 9.0, 9.0]),
        "differs from the data",
    ),
    "time input without max": (
        lambda d, b: d["accessors"][_time_accessor(d)].pop("max"),
        "max is missing",
    ),
    "times not increasing": (_swap_two_times, "not strictly increasing"),
    "output count differs": (
        lambda d, b: d["accessors"][d["animations"][0]["samplers"][0]["output"]].update(
            count=d["accessors"][d["animations"][0]["samplers"][0]["output"]]["count"] - 1
        ),
        "expected from input",
    ),
    "output type wrong for path": (
        lambda d, b: d["animations"][0]["channels"][0]["target"].update(path="translation"),
        "is not VEC3",
    ),
    "channel on a missing node": (
        lambda d, b: d["animations"][0]["channels"][0]["target"].update(node=999),
        "node 999 does not exist",
    ),
    "missing sampler": (
        lambda d, b: d["animations"][0]["channels"][0].update(sampler=999),
        "sampler 999 does not exist",
    ),
    "animated node with a matrix": (
        lambda d, b: d["nodes"][d["animations"][0]["channels"][0]["target"]["node"]].update(
            matrix=np.eye(4).ravel().tolist()
        ),
        "has a matrix",
    ),
    "skin joint missing": (lambda d, b: d["skins"][0]["joints"].append(999), "joints [999]"),
    "too few inverse bind matrices": (
        lambda d, b: d["skins"][0]["joints"].extend([0, 0]),
        "MAT4 matrices",
    ),
    "child missing": (
        lambda d, b: d["nodes"][0].setdefault("children", []).append(999),
        "child 999",
    ),
    "two parents": (lambda d, b: d["nodes"][5].setdefault("children", []).append(1), "two parents"),
    "cycle": (lambda d, b: d["nodes"][1].setdefault("children", []).append(0), "cycle"),
    "scene node missing": (lambda d, b: d["scenes"][0]["nodes"].append(999), "scene 0"),
    "mesh accessor missing": (
        lambda d, b: d["meshes"][0]["primitives"][0]["attributes"].update(NORMAL=999),
        "accessor index does not exist",
    ),
    "buffer too short": (lambda d, b: d["buffers"][0].update(byteLength=len(b) + 4), "fewer than"),
}


def test_check_passes_on_a_written_document(small_doc):
    from ikrig.io.gltf._wdata import document_from_json

    data, blob = small_doc
    assert check_gltf(document_from_json(data, blob)) == []


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_check_finds_a_broken_rule(small_doc, name):
    from ikrig.io.gltf._wdata import document_from_json

    data = json.loads(json.dumps(small_doc[0]))
    blob = bytearray(small_doc[1])
    edit, message = BREAKS[name]
    edit(data, blob)
    problems = check_gltf(document_from_json(data, bytes(blob)))
    assert any(message in p for p in problems), problems


# --- shared glTF characters: read, write back, re-read ------------------------------------


@pytest.fixture(scope="module")
def read_clips():
    return {p.name: read_gltf(p) for p in GLTF_FILES}


def _round_trip(tmp_path: Path, path: Path, clip, elsewhere: bool) -> None:
    from ikrig.io.gltf.read import clip_from_document

    out = tmp_path / path.name
    write_gltf(out, clip)
    written = pygltflib.GLTF2().load(str(out))  # read once: pygltflib is slow on big files
    assert check_gltf(written) == []
    if elsewhere:
        _loads_elsewhere(out)
    again = clip_from_document(written, animation=clip.animation, path=out)
    what = f"{path.name} animation {clip.animation}"
    assert again.skeleton.names == clip.skeleton.names
    assert again.joint_nodes == clip.joint_nodes
    np.testing.assert_array_equal(again.skeleton.parents, clip.skeleton.parents)
    assert len(again.document.animations) == len(clip.document.animations)
    assert again.animation == clip.animation
    np.testing.assert_allclose(again.times, clip.times, atol=1e-6)
    _same_world(again.motion, clip.motion, _unit(clip.skeleton), what)
    assert _meaning(out, clip.animation) == json.loads(_meaning_json(path, clip.animation)), what
    data, _ = _data(out)
    before, _ = _data(path)
    joints = set(before["skins"][clip.skin]["joints"])

    def moved(d):
        channels = d["animations"][clip.animation]["channels"]
        return {c["target"]["node"] for c in channels if c["target"]["path"] == "translation"}

    root = clip.joint_nodes[0]
    assert moved(data) & joints == (moved(before) & joints) | ({root} & joints), what
    assert _referenced_accessors(data) == set(range(len(data["accessors"])))
    assert all(v["byteOffset"] % 4 == 0 for v in data["bufferViews"])
    assert len(data["buffers"]) == 1
    # compacted: no more dead bytes than the input had, but for the 4-byte alignment
    assert _unused_bytes(data) <= _unused_bytes(before) + 3 * len(data["bufferViews"])


def _animation_cases() -> list[tuple[Path, int]]:
    """(file, animation index) for every animation of every shared glTF file."""
    return [(p, i) for p in GLTF_FILES for i in range(len(_data(p)[0].get("animations", [])))]


@pytest.mark.parametrize(
    "path, index", _animation_cases(), ids=lambda v: str(getattr(v, "name", v))
)
def test_shared_gltf_round_trip(tmp_path, read_clips, path, index):
    """Each animation of each file read, written back unchanged and read again."""
    from ikrig.io.gltf.read import clip_from_document

    clip = read_clips[path.name]
    if index != clip.animation:
        clip = clip_from_document(_document(path), animation=index, path=path)
    _round_trip(tmp_path, path, clip, elsewhere=index == 0)


@pytest.mark.parametrize("path", GLTF_FILES, ids=lambda p: p.name)
def test_shared_gltf_edited_motion(tmp_path, read_clips, path):
    """A knee (or any mid joint) turned and the root moved: the file gives the new pose."""
    clip = read_clips[path.name]
    m = clip.motion
    sk = m.skeleton
    try:
        j = find_legs(sk).legs[0].knee
    except IkrigError:
        j = next(k for k in range(sk.num_joints) if sk.parents[k] >= 0 and sk.children(k))
    unit = _unit(sk)
    turn = quat_from_axis_angle([1.0, 0.0, 0.0], 0.6)
    rl = m.rotations_local.copy()
    rl[:, j] = quat_mul(rl[:, j], turn)
    pl = m.positions_local.copy()
    pl[:, 0] += [0.2 * unit, 0.05 * unit, -0.1 * unit]
    edited = m.replace(rotations_local=rl, positions_local=pl)
    out = tmp_path / path.name
    write_gltf(out, clip, edited)
    _written_ok(out)
    assert np.abs(edited.positions_world() - m.positions_world()).max() > 0.05 * unit
    _same_world(read_gltf(out).motion, edited, unit, path.name)


@pytest.mark.parametrize("path", GLTF_FILES[:1], ids=lambda p: p.name)
def test_other_times_and_gltf_output(tmp_path, read_clips, path):
    """Every other frame at its own times, written as .gltf + .bin."""
    clip = read_clips[path.name]
    out = tmp_path / "half.gltf"
    write_gltf(out, clip, clip.motion[::2], clip.times[::2])
    assert (tmp_path / "half.bin").is_file()
    _written_ok(out)
    data, blobs = _data(out)
    anim = data["animations"][clip.animation]
    ours = [c for c in anim["channels"] if c["target"]["path"] == "rotation"]
    acc = data["accessors"][anim["samplers"][ours[0]["sampler"]]["input"]]
    view = data["bufferViews"][acc["bufferView"]]
    keys = np.frombuffer(blobs[0], "<f4", acc["count"], view["byteOffset"] + acc["byteOffset"])
    np.testing.assert_allclose(keys, clip.times[::2], atol=1e-6)
    # other channels (kept scale channels) keep their own keys: sample at the new rate
    again = read_gltf(out, fps=0.5 / clip.frame_time)
    np.testing.assert_allclose(again.times, clip.times[::2], atol=1e-6)
    _same_world(again.motion, clip.motion[::2], _unit(clip.skeleton), path.name)


# --- BVH -> glTF -> BVH ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def bvh_motions():
    return {p.name: read_bvh(p).motion for p in BVH_FILES + MORE_BVH}


@pytest.mark.parametrize("path", BVH_FILES + MORE_BVH, ids=lambda p: p.name)
def test_bvh_to_glb_and_back(tmp_path, bvh_motions, path):
    motion = bvh_motions[path.name]
    unit = _unit(motion.skeleton)
    want = motion.positions_world()
    clip = motion_to_gltf(motion)
    assert check_gltf(clip.document) == []
    out = tmp_path / (path.stem + ".glb")
    write_gltf(out, clip)
    _written_ok(out)
    back = read_gltf(out)
    assert back.skeleton.names == motion.skeleton.names
    np.testing.assert_array_equal(back.skeleton.parents, motion.skeleton.parents)
    assert back.motion.num_frames == motion.num_frames
    np.testing.assert_allclose(back.frame_time, motion.frame_time, rtol=1e-5)
    _same_world(back.motion, motion, unit, f"{path.name} glTF")
    bvh = tmp_path / (path.stem + ".bvh")
    write_bvh(bvh, to_bvh_clip(back.motion))
    err = np.abs(read_bvh(bvh).motion.positions_world() - want).max()
    assert err <= TOL * unit, f"{path.name} BVH again: {err / unit:.3g} leg lengths"
    np.testing.assert_allclose(
        read_bvh(bvh).motion.skeleton.offsets, motion.skeleton.offsets, atol=1e-5 * unit
    )
    for sk in (back.skeleton, read_bvh(bvh).motion.skeleton):  # end sites kept both ways
        np.testing.assert_array_equal(sk.end_site_parents, motion.skeleton.end_site_parents)
        np.testing.assert_allclose(
            sk.end_site_offsets, motion.skeleton.end_site_offsets, atol=1e-5 * unit
        )


@pytest.mark.parametrize("path", BVH_FILES[:1], ids=lambda p: p.name)
def test_bvh_to_gltf_with_bin(tmp_path, bvh_motions, path):
    motion = bvh_motions[path.name]
    out = tmp_path / "sub" / "clip.gltf"
    out.parent.mkdir()
    write_gltf(out, motion_to_gltf(motion))
    assert (out.parent / "clip.bin").is_file()
    assert json.loads(out.read_text())["buffers"][0]["uri"] == "clip.bin"
    _written_ok(out)
    back = read_gltf(out)
    _same_world(back.motion, motion, _unit(motion.skeleton), "clip.gltf")
    glb = tmp_path / "again.glb"  # from a .gltf with its .bin beside it
    write_gltf(glb, back)
    _written_ok(glb)
    _same_world(read_gltf(glb).motion, motion, _unit(motion.skeleton), "again.glb")


def test_shared_bvh_present_or_skipped():
    _needs(BVH_FILES, "bvh")
    _needs(MORE_BVH, "bvh_more")
    _needs(GLTF_FILES, "gltf")


# --- documents made here: no shared data needed -------------------------------------------


@pytest.fixture(scope="module")
def walk():
    return walk_clip(seconds=1.0, fps=30.0)


def _rest_only(tmp_path: Path, walk, edit=None) -> Path:
    """A .glb of the walk's skeleton and capsules without any animation."""
    from ikrig.io.gltf._wdata import document_json
    from ikrig.io.gltf.write import save_document

    doc = motion_to_gltf(walk).document
    data = document_json(doc)
    data.pop("animations")
    if edit is not None:
        edit(data)
    path = tmp_path / "rest.glb"
    save_document(path, data, bytes(doc.binary_blob()), data_uri=False)
    return path


def test_rest_only_clip_gets_a_new_animation(tmp_path, walk):
    clip = read_gltf(_rest_only(tmp_path, walk))
    assert clip.animation is None
    out = tmp_path / "walk.glb"
    times = 0.5 + np.arange(walk.num_frames) * walk.frame_time
    write_gltf(out, clip, walk, times)
    _written_ok(out)
    again = read_gltf(out)
    assert again.animation == 0 and len(again.document.animations) == 1
    assert again.document.animations[0].name == "ikrig"
    np.testing.assert_allclose(again.times, times, atol=1e-6)
    _same_world(again.motion, walk, _unit(walk.skeleton), "walk")


def test_a_joint_matrix_becomes_trs(tmp_path, walk):
    knee = find_legs(walk.skeleton).legs[0].knee

    def to_matrix(data):
        node = data["nodes"][knee]
        m = np.eye(4)
        m[:3, 3] = node.pop("translation")
        node["matrix"] = m.T.ravel().tolist()

    clip = read_gltf(_rest_only(tmp_path, walk, to_matrix))
    out = tmp_path / "walk.glb"
    write_gltf(out, clip, walk, np.arange(walk.num_frames) * walk.frame_time)
    _written_ok(out)
    data, _ = _data(out)
    assert "matrix" not in data["nodes"][knee] and "rotation" in data["nodes"][knee]
    _same_world(read_gltf(out).motion, walk, _unit(walk.skeleton), "walk")


def test_capsules_follow_their_bones(tmp_path, walk):
    out = tmp_path / "walk.glb"
    write_gltf(out, motion_to_gltf(walk))
    data, blobs = _data(out)

    def values(i, dtype, width):
        acc = data["accessors"][i]
        view = data["bufferViews"][acc["bufferView"]]
        start = view["byteOffset"] + acc.get("byteOffset", 0)
        return np.frombuffer(blobs[0], dtype, acc["count"] * width, start).reshape(-1, width)

    attrs = data["meshes"][0]["primitives"][0]["attributes"]
    vertices = values(attrs["POSITION"], "<f4", 3).astype(np.float64)
    joint = values(attrs["JOINTS_0"], "<u2", 4)[:, 0]
    weights = values(attrs["WEIGHTS_0"], "<f4", 4)
    np.testing.assert_array_equal(weights, np.repeat([[1.0, 0, 0, 0]], len(weights), 0))
    ibm = values(data["skins"][0]["inverseBindMatrices"], "<f4", 16).reshape(-1, 4, 4)
    ibm = ibm.transpose(0, 2, 1)  # column-major in the file
    rot_w, pos_w = walk.fk()
    sk = walk.skeleton
    child = np.flatnonzero((sk.parents >= 0) & (np.linalg.norm(sk.offsets, axis=-1) > 0))
    n_sites = int((np.linalg.norm(sk.end_site_offsets, axis=-1) > 0).sum())
    per = len(vertices) // (len(child) + n_sites)
    assert per * (len(child) + n_sites) == len(vertices)
    from ikrig.math import quat_to_matrix

    for f in (0, walk.num_frames // 2):
        world = np.tile(np.eye(4), (sk.num_joints, 1, 1))
        world[:, :3, :3] = quat_to_matrix(rot_w[f])
        world[:, :3, 3] = pos_w[f]
        skinned = np.einsum(
            "vij,vj->vi", (world @ ibm)[joint], np.c_[vertices, np.ones(len(vertices))]
        )
        centres = skinned[:, :3].reshape(-1, per, 3).mean(axis=1)
        mid = (pos_w[f, child] + pos_w[f, sk.parents[child]]) / 2
        np.testing.assert_allclose(centres[: len(child)], mid, atol=1e-5)


def test_data_uri_input_writes_a_data_uri(tmp_path, walk):
    from ikrig.io.gltf._wdata import document_json
    from ikrig.io.gltf.write import save_document

    doc = motion_to_gltf(walk).document
    src = tmp_path / "in.gltf"
    save_document(src, document_json(doc), bytes(doc.binary_blob()), data_uri=True)
    assert not (tmp_path / "in.bin").exists()
    clip = read_gltf(src)
    out = tmp_path / "out.gltf"
    write_gltf(out, clip)
    assert json.loads(out.read_text())["buffers"][0]["uri"].startswith("data:")
    assert not (tmp_path / "out.bin").exists()
    assert check_gltf(out) == []
    _same_world(read_gltf(out).motion, walk, _unit(walk.skeleton), "walk")


def test_unknown_extension_keeps_every_accessor(tmp_path, walk):
    from ikrig.io.gltf._wdata import document_json
    from ikrig.io.gltf.write import animated_document, save_document

    doc = motion_to_gltf(walk).document
    data = document_json(doc)
    data["extensionsUsed"] = ["EXT_ikrig_unknown"]
    src = tmp_path / "in.glb"
    save_document(src, data, bytes(doc.binary_blob()), data_uri=False)
    clip = read_gltf(src)
    new, _, notes = animated_document(clip)
    assert any("kept" in n for n in notes)
    n_new = 1 + len(new["animations"][0]["samplers"])
    assert len(new["accessors"]) == len(data["accessors"]) + n_new
    out = tmp_path / "out.glb"
    write_gltf(out, clip)
    assert check_gltf(out) == []
    _same_world(read_gltf(out).motion, walk, _unit(walk.skeleton), "walk")
    plain = tmp_path / "plain.glb"
    write_gltf(plain, motion_to_gltf(walk))
    assert any("dropped" in n for n in animated_document(read_gltf(plain))[2])


def test_errors(tmp_path, walk):
    from ikrig.io.gltf._wdata import document_json
    from ikrig.io.gltf.write import save_document

    clip = motion_to_gltf(walk)
    with pytest.raises(InputError, match="unsupported glTF file type"):
        write_gltf(tmp_path / "a.fbx", clip)
    with pytest.raises(InputError, match="strictly"):
        write_gltf(tmp_path / "a.glb", clip, walk, np.zeros(walk.num_frames))
    with pytest.raises(InputError, match="times"):
        write_gltf(tmp_path / "a.glb", clip, walk, np.arange(3.0))
    with pytest.raises(InputError, match=">= 0"):
        write_gltf(tmp_path / "a.glb", clip, walk, np.arange(walk.num_frames) - 1.0)
    short = Motion(Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [0, 1, 0]]),
                   np.tile([0, 0, 0, 1.0], (3, 2, 1)), np.zeros((3, 2, 3)))  # fmt: skip
    with pytest.raises(InputError, match="skeleton"):
        write_gltf(tmp_path / "a.glb", clip, short)
    with pytest.raises(InputError, match="Motion"):
        motion_to_gltf("walk")  # type: ignore[arg-type]
    data = document_json(clip.document)
    data["extensionsUsed"] = ["EXT_meshopt_compression"]
    src = tmp_path / "meshopt.glb"
    save_document(src, data, bytes(clip.document.binary_blob()), data_uri=False)
    with pytest.raises(InputError, match=f"^{re.escape(str(src))}: uses EXT_meshopt_"):
        read_gltf(src)  # refused on reading, before any work (issue 35)
    assert not (tmp_path / "a.glb").exists() and not (tmp_path / "b.glb").exists()


def test_non_joint_node_between_joints(tmp_path, walk):
    """A node between two skin joints that is not a joint itself: its channels are kept as
    they were when the motion leaves it alone, and replaced when the motion turns it."""
    from ikrig.io.gltf._wdata import document_json
    from ikrig.io.gltf.write import save_document

    doc = motion_to_gltf(walk).document
    data = document_json(doc)
    knee = find_legs(walk.skeleton).legs[0].knee
    dummy = len(data["nodes"])
    data["nodes"].append({"name": "knee stand-in"})
    data["nodes"][knee].setdefault("children", []).append(dummy)
    data["skins"][0]["joints"][knee] = dummy
    src = tmp_path / "in.glb"
    save_document(src, data, bytes(doc.binary_blob()), data_uri=False)
    clip = read_gltf(src)
    j = clip.joint_nodes.index(knee)
    assert any("non-joint" in q for q in clip.quirks)

    def knee_channels(path):
        d, blobs = _data(path)
        anim = d["animations"][0]
        return sorted(
            (c["target"]["path"], _accessor_key(d, blobs, anim["samplers"][c["sampler"]]["output"]))
            for c in anim["channels"]
            if c["target"]["node"] == knee
        )

    same = tmp_path / "same.glb"
    write_gltf(same, clip)
    _written_ok(same)
    assert knee_channels(same) == knee_channels(src)
    _same_world(read_gltf(same).motion, clip.motion, _unit(walk.skeleton), "same")

    rl = clip.motion.rotations_local.copy()
    rl[:, j] = quat_mul(rl[:, j], quat_from_axis_angle([1.0, 0.0, 0.0], 0.5))
    edited = clip.motion.replace(rotations_local=rl)
    turned = tmp_path / "turned.glb"
    write_gltf(turned, clip, edited)
    _written_ok(turned)
    assert knee_channels(turned) != knee_channels(src)
    _same_world(read_gltf(turned).motion, edited, _unit(walk.skeleton), "turned")


def test_convert_helpers(tmp_path, walk):
    from ikrig.io.gltf.build import bvh_to_gltf, gltf_to_bvh

    src = tmp_path / "walk.bvh"
    write_bvh(src, to_bvh_clip(walk))
    clip = bvh_to_gltf(src, tmp_path / "walk.glb")
    assert clip.document.animations[0].name == "walk"
    _written_ok(tmp_path / "walk.glb")
    back = gltf_to_bvh(tmp_path / "walk.glb", tmp_path / "back.bvh")
    assert back.motion.num_frames == walk.num_frames
    err = np.abs(read_bvh(tmp_path / "back.bvh").motion.positions_world() - walk.positions_world())
    assert err.max() <= TOL * _unit(walk.skeleton)


def test_external_files_of_a_gltf_input(tmp_path, walk):
    """Image URIs still point at the image from another folder; the .bin never replaces a
    buffer or image the input uses (unless the input itself is rewritten)."""
    from ikrig.io.gltf._wdata import document_json
    from ikrig.io.gltf.write import save_document

    doc = motion_to_gltf(walk).document
    data = document_json(doc)
    data["images"] = [{"uri": "tex/skin%201.png"}, {"uri": "tex/pic.bin"}]
    src_dir = tmp_path / "in"
    (src_dir / "tex").mkdir(parents=True)
    (src_dir / "tex" / "skin 1.png").write_bytes(b"not really a png")
    (src_dir / "tex" / "pic.bin").write_bytes(b"an image")
    src = src_dir / "a.gltf"
    save_document(src, data, bytes(doc.binary_blob()), data_uri=False)
    (src_dir / "a.bin").rename(src_dir / "data.bin")
    text = json.loads(src.read_text())
    text["buffers"][0]["uri"] = "data.bin"
    src.write_text(json.dumps(text))
    clip = read_gltf(src)

    out = tmp_path / "elsewhere" / "b.gltf"
    out.parent.mkdir()
    write_gltf(out, clip)
    uri = json.loads(out.read_text())["images"][0]["uri"]
    assert uri == "../in/tex/skin%201.png"
    assert check_gltf(out) == []
    with pytest.raises(InputError, match="would replace"):
        write_gltf(src_dir / "data.gltf", clip)
    with pytest.raises(InputError, match="would replace"):
        write_gltf(src_dir / "tex" / "pic.gltf", clip)
    assert (src_dir / "tex" / "pic.bin").read_bytes() == b"an image"
    write_gltf(src_dir / "a.gltf", clip)  # the input rewritten in place: its own .bin
    assert json.loads(src.read_text())["images"][0]["uri"] == "tex/skin%201.png"
    _same_world(read_gltf(src).motion, walk, _unit(walk.skeleton), "a.gltf")


def test_pack_trims_shared_views_and_leaves_sparse_ones():
    """Accessors 0 and 1 share view 0, 2 is sparse with its indices and values in view 1
    beside accessor 3's data; 1 and 3 are dropped."""
    from ikrig.io.gltf._wpack import pack

    f32 = np.arange(16, dtype="<f4")
    idx = np.array([1, 2], dtype="<u2").tobytes()
    blob = f32.tobytes() + idx + np.array([7, 8], dtype="<f4").tobytes() + f32[:4].tobytes()
    scalar = {"componentType": 5126, "type": "SCALAR"}
    data = {
        "buffers": [{"byteLength": len(blob)}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 64},
            {"buffer": 0, "byteOffset": 64, "byteLength": 28},
        ],
        "accessors": [
            dict(scalar, bufferView=0, byteOffset=32, count=8, min=[8.0], max=[15.0]),
            dict(scalar, bufferView=0, byteOffset=0, count=8, min=[0.0], max=[7.0]),
            dict(scalar, count=4, sparse={
                "count": 2,
                "indices": {"bufferView": 1, "byteOffset": 0, "componentType": 5123},
                "values": {"bufferView": 1, "byteOffset": 4},
            }),
            dict(scalar, bufferView=1, byteOffset=12, count=4),
        ],
        "animations": [{"channels": [], "samplers": [
            {"input": 0, "output": 2}, {"input": 1, "output": 3},
        ]}],
    }  # fmt: skip
    data["animations"][0]["samplers"].pop()
    out, new_blob, notes = pack(data, [blob], [], {1, 3})
    assert len(out["accessors"]) == 2 and "dropped 2 accessors" in notes[0]
    acc0 = out["accessors"][0]
    view0 = out["bufferViews"][acc0["bufferView"]]
    assert view0["byteLength"] == 32  # trimmed to accessor 0's bytes
    start = view0["byteOffset"] + acc0["byteOffset"]
    np.testing.assert_array_equal(np.frombuffer(new_blob, "<f4", 8, start), f32[8:])
    sparse_view = out["bufferViews"][out["accessors"][1]["sparse"]["values"]["bufferView"]]
    assert sparse_view["byteLength"] == 28  # read by a sparse part: left whole
    from ikrig.io.gltf.document import GltfDocument

    np.testing.assert_array_equal(
        GltfDocument(out, buffers=[new_blob]).stored(1)[:, 0], [0, 7, 8, 0]
    )
    np.testing.assert_array_equal(GltfDocument(out, buffers=[new_blob]).stored(0)[:, 0], f32[8:])


def test_a_single_pose(tmp_path, walk):
    pose = walk[5]
    assert pose.batch_shape == ()
    out = tmp_path / "pose.glb"
    write_gltf(out, motion_to_gltf(pose))
    _written_ok(out)
    back = read_gltf(out)
    assert back.motion.num_frames == 1
    _same_world(back.motion, walk[5:6], _unit(walk.skeleton), "pose")
