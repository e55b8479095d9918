"""The cases of the glTF fuzzer (``benchmarks/fuzz_gltf.py``): seed files and mutations.

Seeds are the shared ``.glb`` characters (``../shared/data/gltf``: CesiumMan, Fox, the Godot
robot) and a walk made by code (so the fuzzer runs without them). A case is a seed's JSON
and BIN chunk edited by one to three mutations of the families of issue 35: the container,
accessors, bufferViews and buffers, indices, key times, node transforms, extensions, URIs,
names and sizes. :func:`mutate`, :data:`MUTATIONS`, :func:`seed_corpus`, :func:`split_glb`
and :func:`join_glb` are also used by ``tests/test_gltf_fuzz.py``.
"""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "gltf"
SECRET = b"IKRIG-SECRET-7f3a9c-do-not-copy"
"""What ``secret.txt`` beside each case's folder holds: no output may contain it."""

# --------------------------------------------------------------------------------------------
# The GLB container
# --------------------------------------------------------------------------------------------


def split_glb(raw: bytes) -> tuple[dict, bytearray]:
    """``(JSON dict, BIN chunk bytes)`` of a well-formed GLB."""
    length = struct.unpack("<I", raw[12:16])[0]
    data = json.loads(raw[20 : 20 + length])
    return data, bytearray(raw[28 + length :])


def join_glb(data: dict, blob: bytes | bytearray) -> bytes:
    """A GLB of ``data`` (JSON, NaN allowed as in Python's json) and ``blob``."""
    text = json.dumps(data).encode()
    text += b" " * (-len(text) % 4)
    blob = bytes(blob) + bytes(-len(blob) % 4)
    body = struct.pack("<II", len(text), 0x4E4F534A) + text
    if blob:
        body += struct.pack("<II", len(blob), 0x004E4942) + blob
    return b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body


def generated_seed() -> bytes:
    """A walk on ikrig's own skeleton as a GLB (needs pygltflib)."""
    import tempfile

    from ikrig.data import walk_clip
    from ikrig.io.gltf.build import motion_to_gltf
    from ikrig.io.gltf.write import write_gltf

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "walk.glb"
        write_gltf(path, motion_to_gltf(walk_clip(seconds=0.5, fps=24.0)))
        return path.read_bytes()


def seed_corpus(shared: Path | None = SHARED) -> list[bytes]:
    """The shared characters (when present) and the generated walk."""
    seeds = []
    if shared is not None and shared.is_dir():
        seeds += [p.read_bytes() for p in sorted(shared.glob("*.glb"))]
    seeds.append(generated_seed())
    return seeds


# --------------------------------------------------------------------------------------------
# Mutations: each edits (json, bin) in place with a random generator
# --------------------------------------------------------------------------------------------

Doc = tuple[dict, bytearray]
BAD_INDICES = [True, False, -1, 10**9, 10**300, 1.5, "0", None, [0], {"a": 1}, 2**31, 2**64]
BAD_COUNTS = [0, -1, 400_000_000, 10**12, 10**300, True, 1.5, "3", None, 2**32 + 1]
BAD_NUMBERS = [1e300, -1e300, 1e-300, 0.0, -0.0, 1e30, 5e-324, 1e9, -1e9, 2**64, True, "1"]
URIS = [
    "../secret.txt", "%2e%2e/secret.txt", "/etc/passwd", "/dev/zero", "/dev/urandom",
    "a%00b.bin", "file:///etc/passwd", "http://example.com/a.bin", "C:/windows/x.bin",
    "..\\secret.txt", "sub/../../secret.txt", "missing.bin", "", ".", "/proc/self/mem",
    "data:application/octet-stream;base64,AAAA", "data:", "data:x,!!!", "loop.bin", "fifo",
]  # fmt: skip
NAMES = ["\x1b]0;owned\x07", "\x1b[2J", "a\nb", "", " ", "x" * 5000, "é\u202e", 5, None, "\x00"]


def _pick(rng: random.Random, items: list):
    return items[rng.randrange(len(items))] if items else None


def _table(doc: Doc, key: str) -> list:
    return doc[0].get(key) or []


def container(raw: bytes, rng: random.Random) -> bytes:
    """Byte flips, truncation or a changed length field of the whole file."""
    data = bytearray(raw)
    roll = rng.random()
    if roll < 0.3:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif roll < 0.5:
        data = data[: rng.randrange(len(data))]
    elif roll < 0.8:
        at = _pick(rng, [8, 12, 16, 20 + struct.unpack("<I", raw[12:16])[0]])
        value = _pick(rng, [0, 1, 2**31, 2**32 - 1, len(data) * 2, rng.randrange(2**32)])
        if at + 4 <= len(data):
            data[at : at + 4] = struct.pack("<I", value)
    else:
        data[4:8] = struct.pack("<I", _pick(rng, [1, 3, 0, 2**32 - 1]))
    return bytes(data)


def accessor(doc: Doc, rng: random.Random) -> None:
    acc = _pick(rng, _table(doc, "accessors"))
    if acc is None:
        return
    roll = rng.random()
    if roll < 0.3:
        acc["count"] = _pick(rng, BAD_COUNTS)
    elif roll < 0.45:
        acc.pop("bufferView", None)
        acc["count"] = _pick(rng, [acc.get("count", 1), 400_000_000, 10**7, 10**5])
    elif roll < 0.6:
        acc["componentType"] = _pick(rng, [5120, 5121, 5122, 5123, 5125, 5126, 5124, 0, True])
    elif roll < 0.7:
        acc["type"] = _pick(rng, ["SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4", "X"])
    elif roll < 0.8:
        acc["byteOffset"] = _pick(rng, [1, 2, 3, 4, -4, 10**9, True, 2**63])
    elif roll < 0.9:
        acc["normalized"] = _pick(rng, [True, False, 1, "yes"])
    else:
        acc["sparse"] = {
            "count": _pick(rng, [-1, 0, 1, 2, True, 10**6]),
            "indices": {"bufferView": _pick(rng, [0, 1, -1, True]), "componentType": 5125},
            "values": {"bufferView": _pick(rng, [0, 1, 99]), "byteOffset": _pick(rng, [0, -4])},
        }


def buffer_view(doc: Doc, rng: random.Random) -> None:
    view = _pick(rng, _table(doc, "bufferViews"))
    if view is None:
        return
    key = _pick(rng, ["buffer", "byteOffset", "byteLength", "byteStride", "delete"])
    if key == "delete":
        view.pop(_pick(rng, ["buffer", "byteLength", "byteOffset"]), None)
    elif key == "byteStride":
        view[key] = _pick(rng, [0, 1, 2, 3, 4, 12, 252, 256, -4, -12, True, 10**9])
    else:
        view[key] = _pick(rng, BAD_COUNTS + [1, 4, 8, len(doc[1]), len(doc[1]) + 4])


def buffer(doc: Doc, rng: random.Random) -> None:
    """A buffer's URI (outside files, devices, NUL, schemes), or its byteLength; or a
    buffer added for an image."""
    buffers = doc[0].setdefault("buffers", [{"byteLength": 0}])
    roll = rng.random()
    if roll < 0.6:
        uri = _pick(rng, URIS)
        if rng.random() < 0.5 or not buffers:
            buffers.append({"uri": uri, "byteLength": _pick(rng, [31, 1221, 462572, 2**40])})
            doc[0].setdefault("bufferViews", []).append(
                {"buffer": len(buffers) - 1, "byteLength": 31}
            )
            doc[0].setdefault("images", []).append(
                {"bufferView": len(doc[0]["bufferViews"]) - 1, "mimeType": "image/png"}
            )
        else:
            buffers[0]["uri"] = uri
    elif roll < 0.8:
        _pick(rng, buffers)["byteLength"] = _pick(rng, BAD_COUNTS + [len(doc[1]) + 1])
    else:
        doc[0].setdefault("images", []).append({"uri": _pick(rng, URIS)})


def indices(doc: Doc, rng: random.Random) -> None:
    """One index anywhere (children, joints, samplers, targets, skins, scenes) made bad."""
    data = doc[0]
    slots = []
    for node in data.get("nodes", []):
        for i in range(len(node.get("children", []))):
            slots.append((node["children"], i))
        for key in ("mesh", "skin"):
            if key in node:
                slots.append((node, key))
    for skin in data.get("skins", []):
        slots += [(skin["joints"], i) for i in range(len(skin.get("joints", [])))]
        slots.append((skin, "inverseBindMatrices"))
    for anim in data.get("animations", []):
        for ch in anim.get("channels", []):
            slots += [(ch, "sampler"), (ch["target"], "node")]
        for sampler in anim.get("samplers", []):
            slots += [(sampler, "input"), (sampler, "output")]
    for scene in data.get("scenes", []):
        slots += [(scene["nodes"], i) for i in range(len(scene.get("nodes", [])))]
    slot = _pick(rng, slots)
    if slot is not None:
        container_, key = slot
        container_[key] = _pick(rng, BAD_INDICES + [0, 1, len(data.get("nodes", []))])


def _input_accessors(doc: Doc) -> list[dict]:
    accessors = doc[0].get("accessors", [])
    found = []
    for anim in doc[0].get("animations", []):
        for sampler in anim.get("samplers", []):
            i = sampler.get("input")
            if isinstance(i, int) and 0 <= i < len(accessors):
                found.append(accessors[i])
    return found


def key_times(doc: Doc, rng: random.Random) -> None:
    """Key times scaled, shifted, made huge, infinite, NaN or out of order."""
    acc = _pick(rng, _input_accessors(doc))
    if acc is None or "bufferView" not in acc:
        return
    view = doc[0]["bufferViews"][acc["bufferView"]]
    start = view.get("byteOffset", 0) + acc.get("byteOffset", 0)
    count = acc["count"]
    times = list(struct.unpack_from(f"<{count}f", doc[1], start))
    roll = rng.random()
    if roll < 0.4:
        factor = _pick(rng, [1e30, 1e9, 3e4, 100.0, 10.0, 1e-9, 1e-30, -1.0, 0.0])
        times = [t * factor for t in times]
    elif roll < 0.6:
        times[rng.randrange(count)] = _pick(rng, [1e9, 3e4, float("inf"), float("nan"), -1.0])
    elif roll < 0.8:
        shift = _pick(rng, [-10.0, -1e-3, 1e6, 1e9])
        times = [t + shift for t in times]
    else:
        times = times[::-1]
    try:
        struct.pack_into(f"<{count}f", doc[1], start, *times)
    except (OverflowError, struct.error):
        pass
    acc["min"], acc["max"] = [min(times)], [max(times)]


def node_transform(doc: Doc, rng: random.Random) -> None:
    node = _pick(rng, _table(doc, "nodes"))
    if node is None:
        return
    roll = rng.random()
    v = _pick(rng, BAD_NUMBERS)
    if roll < 0.3:
        node["scale"] = [v, v, v] if rng.random() < 0.7 else [1.0, v, 1.0]
        node.pop("matrix", None)
    elif roll < 0.5:
        node["translation"] = [v, 0.0, 0.0]
        node.pop("matrix", None)
    elif roll < 0.7:
        node["rotation"] = _pick(rng, [[0, 0, 0, 0], [0, 0, 0, 1e-30], [1, 1, 1, 1], [v, 0, 0, 1]])
        node.pop("matrix", None)
    elif roll < 0.85:
        node["matrix"] = [v if i in (0, 5, 10) else float(i == 15) for i in range(16)]
        for key in ("translation", "rotation", "scale"):
            node.pop(key, None)
    else:
        node["matrix"] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
        node["matrix"][_pick(rng, [3, 7, 12, 1])] = _pick(rng, [1.0, 1e9, 1e-300])


def extension(doc: Doc, rng: random.Random) -> None:
    data = doc[0]
    name = _pick(rng, ["EXT_meshopt_compression", "KHR_meshopt_compression", "X_unknown",
                       "KHR_animation_pointer", "KHR_draco_mesh_compression"])  # fmt: skip
    data.setdefault("extensionsUsed", []).append(name)
    if rng.random() < 0.5:
        data["extensionsRequired"] = [name]
    target = _pick(rng, data.get("nodes", []) + data.get("accessors", []) + [data])
    target.setdefault("extensions", {})[name] = _pick(rng, [{}, {"a": None}, {"x": [1, None]}])
    target.setdefault("extras", {})["k"] = _pick(rng, [None, [None, 1], {"n": None}, "", []])


def names(doc: Doc, rng: random.Random) -> None:
    """Control characters, long names, non-strings on nodes and animations."""
    table = _pick(rng, [_table(doc, "nodes"), _table(doc, "animations"), _table(doc, "skins")])
    item = _pick(rng, table)
    if item is not None:
        item["name"] = _pick(rng, NAMES)


def sizes(doc: Doc, rng: random.Random) -> None:
    """A deep chain of nodes above the scene's root, many top nodes or many animations."""
    data = doc[0]
    nodes = data.setdefault("nodes", [])
    roll = rng.random()
    if roll < 0.4:
        depth = _pick(rng, [50, 500, 2000])
        tops = set(range(len(nodes))) - {c for n in nodes for c in n.get("children", [])}
        first = len(nodes)
        nodes += [{"children": [first + i + 1]} for i in range(depth)]
        nodes[-1]["children"] = sorted(tops)[:1]
        data["scenes"] = [{"nodes": [first]}]
        data["scene"] = 0
    elif roll < 0.7:
        nodes += [{"name": f"top{i}"} for i in range(_pick(rng, [100, 2000, 10000]))]
    else:
        anims = data.get("animations", [])
        if anims:
            data["animations"] = anims + [anims[0]] * _pick(rng, [10, 50, 100])


def animation(doc: Doc, rng: random.Random) -> None:
    """Samplers without input, unknown interpolations, odd paths, missing targets."""
    anim = _pick(rng, _table(doc, "animations"))
    if anim is None:
        return
    sampler = _pick(rng, anim.get("samplers", []))
    channel = _pick(rng, anim.get("channels", []))
    roll = rng.random()
    if roll < 0.3 and sampler is not None:
        sampler.pop(_pick(rng, ["input", "output"]))
    elif roll < 0.5 and sampler is not None:
        sampler["interpolation"] = _pick(rng, ["STEP", "CUBICSPLINE", "linear", "X", 1])
    elif roll < 0.7 and channel is not None:
        channel["target"]["path"] = _pick(rng, ["weights", "pointer", "scale", 5, None])
    elif roll < 0.85 and channel is not None:
        channel.pop(_pick(rng, ["target", "sampler"]))
    else:
        anim["channels"] = []


def skin(doc: Doc, rng: random.Random) -> None:
    item = _pick(rng, _table(doc, "skins"))
    if item is None:
        return
    joints = item.get("joints", [])
    roll = rng.random()
    if roll < 0.3 and joints:
        joints.append(joints[0])
    elif roll < 0.6:
        item["inverseBindMatrices"] = _pick(rng, [10**6, -1, True, 0])
    else:
        item["joints"] = _pick(rng, [[], [True], joints[:1], joints[::-1]])


def root_motion(doc: Doc, rng: random.Random) -> None:
    """A legitimate file: the skeleton root's parent (made TRS) gets a drifting translation
    channel in the first animation (an armature carrying root motion)."""
    data, blob = doc
    anims, skins = data.get("animations", []), data.get("skins", [])
    if not anims or not skins or not anims[0].get("samplers"):
        return
    parents = {c: i for i, n in enumerate(data["nodes"]) for c in n.get("children", [])}
    joints, top = set(skins[0]["joints"]), skins[0]["joints"][0]
    for _ in range(len(parents) + 1):  # an earlier edit may have made a cycle
        if parents.get(top) not in joints:
            break
        top = parents[top]
    armature = parents.get(top)
    if armature is None:
        armature = len(data["nodes"])
        data["nodes"].append({"name": "Armature", "children": [top]})
        for scene in data.get("scenes", []):
            scene["nodes"] = [armature if n == top else n for n in scene.get("nodes", [])]
    node = data["nodes"][armature]
    if "matrix" in node:
        node.pop("matrix")  # the shared seeds' armature matrices are replaced by TRS
    node["translation"] = [rng.uniform(-1, 1), 0.0, rng.uniform(-1, 1)]
    source = anims[0]["samplers"][0]["input"]
    count = data["accessors"][source]["count"]
    drift = rng.choice([50.0, 0.5, 1e3])
    values = [
        (node["translation"][0] + drift * k / max(count - 1, 1), 0.0, 0.0) for k in range(count)
    ]
    blob += bytes(-len(blob) % 4)
    offset = len(blob)
    blob += struct.pack(f"<{3 * count}f", *[v for row in values for v in row])
    data["bufferViews"].append({"buffer": 0, "byteOffset": offset, "byteLength": 12 * count})
    data["accessors"].append({"bufferView": len(data["bufferViews"]) - 1, "componentType": 5126,
                              "count": count, "type": "VEC3"})  # fmt: skip
    data["buffers"][0]["byteLength"] = len(blob)
    anims[0]["samplers"].append({"input": source, "output": len(data["accessors"]) - 1})
    anims[0]["channels"].append(
        {
            "sampler": len(anims[0]["samplers"]) - 1,
            "target": {"node": armature, "path": "translation"},
        }
    )


MUTATIONS: dict[str, Callable[[Doc, random.Random], None]] = {
    f.__name__: f
    for f in (
        accessor, buffer_view, buffer, indices, key_times, node_transform, extension, names,
        sizes, animation, skin, root_motion,
    )
}  # fmt: skip
"""The JSON/BIN mutation families (besides :func:`container`, on the raw bytes)."""

FAMILIES = sorted([*MUTATIONS, "container"])


def mutate(raw: bytes, steps: list[tuple[str, int]]) -> bytes:
    """Apply the named mutations in turn, each with its own seed; ``container`` works on the
    bytes and ends the edits (the file may no longer parse)."""
    doc = split_glb(raw)
    for name, seed in steps:
        rng = random.Random(seed)
        if name == "container":
            return container(join_glb(*doc), rng)
        try:
            MUTATIONS[name](doc, rng)
        except (LookupError, TypeError, ValueError, AttributeError, struct.error):
            pass  # an earlier edit left nothing this family can edit
    return join_glb(*doc)


def random_steps(rng: random.Random) -> list[tuple[str, int]]:
    count = rng.choice([1, 1, 1, 2, 2, 3])
    return [(rng.choice(FAMILIES), rng.randrange(2**32)) for _ in range(count)]
