"""ikrig's decoding of glTF JSON (:mod:`ikrig.io.gltf._json`) gives what pygltflib's own
``GLTF2.from_json`` gives, value for value and type for type: on every shared file, on a
file ikrig wrote, and on hand-made edge cases."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pygltflib = pytest.importorskip("pygltflib")

from helpers import SHARED_GLTF  # noqa: E402

from ikrig.errors import FileFormatError  # noqa: E402
from ikrig.io import motion_to_gltf, read_gltf, write_gltf  # noqa: E402
from ikrig.io.gltf._json import decode_document, gltf2_class  # noqa: E402
from ikrig.io.gltf.document import load_document  # noqa: E402
from ikrig.pose import Motion  # noqa: E402
from ikrig.skeleton import Skeleton  # noqa: E402


def assert_same(a: Any, b: Any, where: str = "document") -> None:
    """Equal values of the same types, all the way down (``1 == 1.0`` is not enough)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, pygltflib.Attributes):
        assert_same(vars(a), vars(b), f"{where}.attributes")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert a == b, (where, a, b)


def pygltflib_decode(text: str) -> Any:
    return pygltflib.GLTF2.from_json(text, infer_missing=True)


SHARED_FILES = sorted(SHARED_GLTF.glob("*.gl*")) if SHARED_GLTF.is_dir() else []


@pytest.mark.skipif(not SHARED_FILES, reason=f"no glTF files in {SHARED_GLTF}")
@pytest.mark.parametrize("path", SHARED_FILES, ids=lambda p: p.name)
def test_shared_files_decode_as_pygltflib_decodes_them(path: Path):
    theirs = pygltflib.GLTF2.load(path)
    ours = load_document(path)
    assert type(ours) is pygltflib.GLTF2
    assert_same(theirs, ours)
    assert ours.binary_blob() == theirs.binary_blob()
    assert (ours._path, ours._name) == (theirs._path, theirs._name)


def test_a_file_ikrig_wrote_decodes_as_pygltflib_decodes_it(tmp_path):
    offsets = np.array([[0, 1, 0], [0, -0.5, 0], [0, -0.5, 0]], float)
    skeleton = Skeleton(["hips", "knee", "foot"], [-1, 0, 1], offsets)
    q = np.zeros((4, 3, 4))
    q[..., 3] = 1.0
    motion = Motion(skeleton, q, np.broadcast_to(skeleton.offsets, (4, 3, 3)).copy(), 1 / 30)
    for suffix in (".glb", ".gltf"):
        out = tmp_path / f"walk{suffix}"
        write_gltf(out, motion_to_gltf(motion, "walk"))
        assert_same(gltf2_class(pygltflib).load(out), pygltflib.GLTF2.load(out))
        read_gltf(out)  # and it reads


EDGES = {
    "asset": {"version": "2.0", "generator": "hand", "extras": {"k": [1, 2]}, "unknown": 5},
    "scene": 0,
    "scenes": [{"nodes": [0]}],
    "nodes": [
        {"name": "a", "rotation": [0, 0, 0, 1], "translation": [1, 2.5, 3], "children": [1]},
        {"matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], "mesh": 0, "skin": None},
    ],
    "meshes": [{"primitives": [
        {"attributes": {"POSITION": 0, "_CUSTOM": 1}, "targets": [{"POSITION": 2}], "mode": 4},
        {"attributes": {}},
    ], "weights": [0, 1]}],
    "accessors": [
        {"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3", "max": [1, 1, 1],
         "min": [0, 0, 0], "normalized": False},
        {"componentType": 5126, "count": 1, "type": "SCALAR", "sparse": {
            "count": 1, "indices": {"bufferView": 0, "componentType": 5125},
            "values": {"bufferView": 0, "byteOffset": 4}}},
        {"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3"},
    ],
    "bufferViews": [{"buffer": 0, "byteLength": 12, "extensions": {"EXT_x": {"a": None}}}],
    "buffers": [{"byteLength": 12, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAA"}],
    "cameras": [{"type": "perspective", "perspective": {"yfov": 1, "znear": 0}}],
    "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "metallicFactor": 0},
                   "doubleSided": True, "emissiveFactor": [0, 0, 0]}],
    "animations": [{"channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
                    "samplers": [{"input": 0, "output": 1}]}],
    "skins": [{"joints": [0, 1]}],
    "extensionsUsed": ["EXT_x"],
    "not_gltf": {"ignored": True},
}  # fmt: skip


@pytest.mark.parametrize("drop", [None, "asset", "nodes", "meshes", "scene"])
def test_edge_cases_decode_as_pygltflib_decodes_them(drop):
    """Ints in float fields, unknown keys, explicit nulls, missing fields and lists, custom
    attributes, morph targets, sparse accessors, extensions and extras."""
    doc = {k: v for k, v in EDGES.items() if k != drop}
    text = json.dumps(doc)
    assert_same(pygltflib_decode(text), decode_document(pygltflib, text))


@pytest.mark.parametrize(
    "text", ["[]", '{"nodes": {"a": {}}}', '{"asset": 5}', '{"nodes": [{"children": 3}]}', "{"]
)
def test_malformed_json_raises(text):
    with pytest.raises(Exception):  # noqa: B017  (pygltflib raises what it meets, too)
        pygltflib_decode(text)
    with pytest.raises(Exception):  # noqa: B017
        decode_document(pygltflib, text)


def test_a_malformed_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.gltf"
    bad.write_text('{"asset": {"version": "2.0"}, "nodes": 7}')
    with pytest.raises(FileFormatError, match="bad.gltf"):
        load_document(bad)
