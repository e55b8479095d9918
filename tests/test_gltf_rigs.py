"""glTF as rigs export it (issue 36): non-uniform and animated scales, samplers with
differing keys, several skins, sparse accessors, quantized outputs, extensions.

A Mannequiny-like rig is built here as plain JSON and bytes: an FBX-style armature node
(rotated, scaled by 0.01), a thigh stretched by an animated non-uniform scale (7 % and 31 %,
on keys of its own), a constant non-uniform scale on the other thigh, a toe-tip leaf that
those scales move, a second skin (a sword), sparse accessors (animation input and output),
``KHR_mesh_quantization`` outputs (normalized shorts for rotations, plain shorts for a
translation). World positions are checked against an independent evaluation written here
(NumPy only: its own accessor decoding, slerp and TRS matrices multiplied down the node
tree), which is itself checked against trimesh's scene graph at rest.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers import SHARED_GLTF

pytest.importorskip("pygltflib")

from click.testing import CliRunner  # noqa: E402

from ikrig.cli import main  # noqa: E402
from ikrig.errors import InputError  # noqa: E402
from ikrig.io import check_gltf, list_animations, read_gltf  # noqa: E402
from ikrig.io.gltf.write import write_gltf  # noqa: E402

TOL = 1e-5

# ------------------------------------------------------------------------ the test rig


def _quat(axis: str, degrees) -> np.ndarray:
    """``(..., 4)`` xyzw rotations about one axis."""
    half = np.radians(np.asarray(degrees, dtype=np.float64)) / 2
    q = np.zeros(half.shape + (4,))
    q[..., "xyz".index(axis)] = np.sin(half)
    q[..., 3] = np.cos(half)
    return q


class Doc:
    """A glTF document as JSON plus one binary buffer, written as a ``.glb``."""

    def __init__(self):
        self.j: dict = {
            "asset": {"version": "2.0"},
            "scene": 0,
            "scenes": [{"nodes": []}],
            "nodes": [],
            "accessors": [],
            "bufferViews": [],
            "skins": [],
            "animations": [],
        }
        self.blob = bytearray()

    def node(self, name: str, parent: int | None = None, **trs) -> int:
        self.j["nodes"].append({"name": name, **{k: list(map(float, v)) for k, v in trs.items()}})
        k = len(self.j["nodes"]) - 1
        if parent is None:
            self.j["scenes"][0]["nodes"].append(k)
        else:
            self.j["nodes"][parent].setdefault("children", []).append(k)
        return k

    def view(self, raw: bytes) -> int:
        self.blob += bytes(-len(self.blob) % 4)
        self.j["bufferViews"].append(
            {"buffer": 0, "byteOffset": len(self.blob), "byteLength": len(raw)}
        )
        self.blob += raw
        return len(self.j["bufferViews"]) - 1

    def data(self, values, kind: str, ctype: int = 5126, normalized: bool = False) -> int:
        dtype = {5126: "<f4", 5122: "<i2", 5123: "<u2", 5121: "<u1", 5120: "<i1"}[ctype]
        a = np.asarray(values).astype(dtype)
        acc = {"bufferView": self.view(a.tobytes()), "componentType": ctype, "type": kind,
               "count": len(a)}  # fmt: skip
        if normalized:
            acc["normalized"] = True
        if kind == "SCALAR":
            acc["min"], acc["max"] = [float(a.min())], [float(a.max())]
        self.j["accessors"].append(acc)
        return len(self.j["accessors"]) - 1

    def sparse(self, base, values, kind: str, where) -> int:
        """An accessor whose elements ``where`` are stored sparse on top of ``base`` (None:
        zeros, no bufferView)."""
        width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}[kind]
        values = np.asarray(values, dtype="<f4").reshape(len(where), width)
        count = len(base) if base is not None else int(max(where)) + 1
        acc = {"componentType": 5126, "type": kind, "count": count}
        if base is not None:
            acc["bufferView"] = self.view(np.asarray(base, dtype="<f4").tobytes())
        acc["sparse"] = {
            "count": len(where),
            "indices": {"bufferView": self.view(np.asarray(where, "<u2").tobytes()),
                        "componentType": 5123},
            "values": {"bufferView": self.view(values.tobytes())},
        }  # fmt: skip
        if kind == "SCALAR":
            full = np.zeros(count) if base is None else np.array(base, dtype=np.float64)
            full[list(where)] = values[:, 0]
            acc["min"], acc["max"] = [float(full.min())], [float(full.max())]
        self.j["accessors"].append(acc)
        return len(self.j["accessors"]) - 1

    def channel(self, anim: dict, node: int, path: str, keys: int, values: int,
                interpolation: str = "LINEAR") -> None:  # fmt: skip
        anim["samplers"].append({"input": keys, "output": values, "interpolation": interpolation})
        anim["channels"].append(
            {"sampler": len(anim["samplers"]) - 1, "target": {"node": node, "path": path}}
        )

    def glb(self, path: Path) -> Path:
        self.blob += bytes(-len(self.blob) % 4)
        self.j["buffers"] = [{"byteLength": len(self.blob)}]
        text = json.dumps(self.j).encode()
        text += b" " * (-len(text) % 4)
        body = struct.pack("<II", len(text), 0x4E4F534A) + text
        body += struct.pack("<II", len(self.blob), 0x004E4942) + bytes(self.blob)
        path.write_bytes(b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body)
        return path


def rig(stretch=(1.07, 1.31), stage=None) -> Doc:
    """The Mannequiny-like rig: two animations ("run": a walk cycle whose left thigh
    stretches by ``stretch[0]``, "jump": ``stretch[1]``), two skins ("body" 11 joints,
    "sword" 2); with ``stage``, a node scaled so (and, in the jump, animated) above a node
    turning the armature by 40 degrees about y (a sheared world frame above the
    skeleton)."""
    d = Doc()
    top = None if stage is None else d.node("Turn", d.node("Stage", scale=stage),
                                            rotation=_quat("y", 40))  # fmt: skip
    stage_node = None if stage is None else top - 1
    arm = d.node("Armature", top, rotation=_quat("x", -90), scale=[0.01] * 3)
    hips = d.node("hips", arm, translation=[0, 0, 95])
    spine = d.node("spine", hips, translation=[0, 0, 20])
    d.node("head", spine, translation=[0, 0, 40])
    legs = {}
    for side, x in (("L", 10.0), ("R", -10.0)):
        thigh = d.node(f"thigh.{side}", hips, translation=[x, 0, -5])
        shin = d.node(f"shin.{side}", thigh, translation=[0, 0, -44])
        foot = d.node(f"foot.{side}", shin, translation=[0, 0, -40])
        toe = d.node(f"toe.{side}", foot, translation=[0, -12, -5])
        d.node(f"toe_end.{side}", toe, translation=[0, -6, 0])  # a leaf-bone tip
        legs[side] = (thigh, shin, foot, toe)
    d.j["nodes"][legs["R"][0]]["scale"] = [1.0, 1.02, 1.05]  # still, non-uniform
    sword = d.node("sword", translation=[0.5, 1.0, 0.0])
    d.node("sword_tip", sword, translation=[0.0, 0.8, 0.0])
    body = [hips, spine, hips + 2] + [k for side in "LR" for k in legs[side]]
    d.j["skins"] = [{"name": "body", "joints": body},
                    {"name": "sword", "joints": [sword, sword + 1]}]  # fmt: skip
    d.j["extensionsUsed"] = ["KHR_mesh_quantization"]
    d.j["extensionsRequired"] = ["KHR_mesh_quantization"]
    for name, amount, speed in (("run", stretch[0], 120.0), ("jump", stretch[1], 60.0)):
        anim: dict = {"name": name, "channels": [], "samplers": []}
        t = np.arange(31) / 30.0
        keys = d.data(t, "SCALAR")
        phase = 2 * np.pi * t
        hips_t = np.stack([0 * t, -speed * t, 95 + 3 * np.cos(2 * phase)], axis=-1)
        d.channel(anim, hips, "translation", keys, d.data(np.round(hips_t), "VEC3", 5122))
        for side, shift in (("L", 0.0), ("R", np.pi)):
            thigh, shin, foot, _ = legs[side]
            swing = _quat("x", 25 * np.sin(phase + shift))
            d.channel(anim, thigh, "rotation", keys,
                      d.data(np.round(swing * 32767), "VEC4", 5122, normalized=True))  # fmt: skip
            bend = _quat("x", -20 - 20 * np.cos(phase + shift))
            if side == "L":  # sparse on a base: every 5th key stored apart
                where = list(range(0, 31, 5))
                base = bend.copy()
                base[where] = [0, 0, 0, 1]
                out = d.sparse(base, bend[where], "VEC4", where)
            else:
                out = d.data(bend, "VEC4")
            d.channel(anim, shin, "rotation", keys, out)
            ankle = _quat("x", 10 * np.sin(phase))
            if side == "R":  # KHR_mesh_quantization: normalized bytes
                out = d.data(np.round(ankle * 127), "VEC4", 5120, normalized=True)
            else:
                out = d.data(ankle, "VEC4")
            d.channel(anim, foot, "rotation", keys, out)
        # the stretch: keys of its own (5 keys, 0 to 1 s), non-uniform along the bone
        s_keys = d.data([0.0, 0.25, 0.5, 0.75, 1.0], "SCALAR")
        grow = [[1, 1, 1], [1.0, 1.0, amount], [1, 1, 1], [0.98, 0.99, 1 + (amount - 1) / 2],
                [1, 1, 1]]  # fmt: skip
        if name == "jump":  # sparse: the keys that differ from 1 on a base of ones
            out = d.sparse(np.ones((5, 3)), grow[1:4], "VEC3", [1, 2, 3])
        else:
            out = d.data(grow, "VEC3")
        d.channel(anim, legs["L"][0], "scale", s_keys, out)
        if stage_node is not None and name == "jump":  # animated, above the skeleton
            pulse = np.asarray(stage) * [[1, 1, 1], [1, 1.1, 0.95], [1, 1, 1]]
            d.channel(anim, stage_node, "scale", d.data([0.0, 0.5, 1.0], "SCALAR"),
                      d.data(pulse, "VEC3"))  # fmt: skip
        # a constant channel of two keys, its input sparse without bufferView: (0, 1) s
        two = d.sparse(None, [1.0], "SCALAR", [1])
        d.channel(anim, spine, "rotation", two, d.data(_quat("y", [5, 5]), "VEC4"))
        d.j["animations"].append(anim)
    return d


# ------------------------------------------------------------------- independent evaluation


def _decode(j: dict, blob: bytes, i: int) -> np.ndarray:
    """Accessor ``i`` as float64 ``(count, width)``: its own code, sparse and normalized
    integers included (no byteStride in the files checked here but the shared ones)."""
    acc = j["accessors"][i]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc["type"]]
    dtype = np.dtype({5126: "<f4", 5122: "<i2", 5123: "<u2", 5121: "<u1", 5120: "<i1",
                      5125: "<u4"}[acc["componentType"]])  # fmt: skip

    def rows(view: int, offset: int, count: int, dt, w) -> np.ndarray:
        bv = j["bufferViews"][view]
        start = bv.get("byteOffset", 0) + offset
        stride = bv.get("byteStride") or dt.itemsize * w
        out = [np.frombuffer(blob, dt, w, start + k * stride) for k in range(count)]
        return np.array(out).reshape(count, w)

    if acc.get("bufferView") is None:
        out = np.zeros((acc["count"], width), dtype=dtype)
    else:
        out = rows(acc["bufferView"], acc.get("byteOffset", 0), acc["count"], dtype, width)
    sp = acc.get("sparse")
    if sp:
        ind, val = sp["indices"], sp["values"]
        idt = np.dtype({5121: "<u1", 5123: "<u2", 5125: "<u4"}[ind["componentType"]])
        where = rows(ind["bufferView"], ind.get("byteOffset", 0), sp["count"], idt, 1)[:, 0]
        out[where] = rows(val["bufferView"], val.get("byteOffset", 0), sp["count"], dtype, width)
    if acc.get("normalized"):
        return np.maximum(out / float(np.iinfo(dtype).max), -1.0)
    return out.astype(np.float64)


def _slerp(a: np.ndarray, b: np.ndarray, u: float) -> np.ndarray:
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    if np.dot(a, b) < 0:
        b = -b
    angle = np.arccos(np.clip(np.dot(a, b), -1.0, 1.0))
    if angle < 1e-9:
        return a
    return (np.sin((1 - u) * angle) * a + np.sin(u * angle) * b) / np.sin(angle)


def _at(keys: np.ndarray, values: np.ndarray, t: float, interp: str, rotation: bool):
    if t <= keys[0] or len(keys) == 1:
        return values[0]
    if t >= keys[-1]:
        return values[-1]
    i = int(np.searchsorted(keys, t, side="right") - 1)
    if interp == "STEP":
        return values[i]
    u = (t - keys[i]) / (keys[i + 1] - keys[i])
    if rotation:
        return _slerp(values[i], values[i + 1], u)
    return values[i] + u * (values[i + 1] - values[i])


def _matrix(t, q, s) -> np.ndarray:
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    r = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip
    m = np.eye(4)
    m[:3, :3] = r * np.asarray(s, dtype=np.float64)
    m[:3, 3] = t
    return m


def world_matrices(j: dict, blob: bytes, anim: int | None, t: float) -> list[np.ndarray]:
    """Every node's world matrix at time ``t`` of animation ``anim`` (None: rest)."""
    local = []
    for node in j["nodes"]:
        if "matrix" in node:
            local.append(np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T)
        else:
            local.append({"translation": node.get("translation", [0, 0, 0]),
                          "rotation": node.get("rotation", [0, 0, 0, 1]),
                          "scale": node.get("scale", [1, 1, 1])})  # fmt: skip
    if anim is not None:
        a = j["animations"][anim]
        for ch in a["channels"]:
            node, path = ch["target"].get("node"), ch["target"]["path"]
            if node is None or path == "weights":
                continue
            s = a["samplers"][ch["sampler"]]
            keys = _decode(j, blob, s["input"])[:, 0]
            values = _decode(j, blob, s["output"])
            interp = s.get("interpolation", "LINEAR")
            assert interp != "CUBICSPLINE"
            local[node][path] = _at(keys, values, t, interp, path == "rotation")
    local = [m if isinstance(m, np.ndarray) else _matrix(**_trs(m)) for m in local]
    parent = {c: k for k, n in enumerate(j["nodes"]) for c in n.get("children", [])}
    world: list = [None] * len(local)

    def of(k: int) -> np.ndarray:
        if world[k] is None:
            world[k] = local[k] if k not in parent else of(parent[k]) @ local[k]
        return world[k]

    return [of(k) for k in range(len(local))]


def _trs(parts: dict) -> dict:
    return {"t": parts["translation"], "q": parts["rotation"], "s": parts["scale"]}


def split_glb(path: Path) -> tuple[dict, bytes]:
    raw = path.read_bytes()
    n = struct.unpack("<I", raw[12:16])[0]
    return json.loads(raw[20 : 20 + n]), raw[28 + n :]


def check_clip(clip, j: dict, blob: bytes, times=None, motion=None) -> float:
    """The largest distance between the clip's (or ``motion``'s) world joint positions and
    the independent evaluation's, at ``times`` (default: every 7th of the clip's, and its
    last)."""
    motion = clip.motion if motion is None else motion
    pos = motion.positions_world()
    frames = sorted(set(range(0, len(clip.times), 7)) | {len(clip.times) - 1})
    worst = 0.0
    for f in frames if times is None else times:
        world = world_matrices(j, blob, clip.animation, float(clip.times[f]))
        ref = np.array([world[k][:3, 3] for k in clip.joint_nodes])
        worst = max(worst, float(np.abs(pos[f] - ref).max()))
    return worst


# --------------------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def rig_file(tmp_path_factory) -> Path:
    return rig().glb(tmp_path_factory.mktemp("rig") / "mannequin.glb")


def test_the_evaluator_agrees_with_trimesh_at_rest(rig_file):
    """The independent evaluation is trimesh's scene graph at rest (non-uniform scales,
    the armature's rotation and scale, a second tree)."""
    assert check_gltf(rig_file) == []  # a valid file (ikrig's subset of the validator)
    trimesh = pytest.importorskip("trimesh")
    scene = trimesh.load(rig_file, force="scene")
    j, blob = split_glb(rig_file)
    ours = world_matrices(j, blob, None, 0.0)
    for k, node in enumerate(j["nodes"]):
        theirs = scene.graph.get(node["name"])[0]
        np.testing.assert_allclose(ours[k], theirs, atol=1e-9)


def test_every_animation_reads_with_the_scene_graph_positions(rig_file):
    j, blob = split_glb(rig_file)
    assert [a[1] for a in list_animations(rig_file)] == ["run", "jump"]
    for name in ("run", "jump"):
        clip = read_gltf(rig_file, animation=name)
        assert clip.skin == 0 and len(clip.times) == 31  # the densest sampler's 30 fps
        assert check_clip(clip, j, blob, times=range(len(clip.times))) < TOL
        quirks = "\n".join(clip.quirks)
        assert "animated non-uniform scale on 4 'thigh.L', 9 'thigh.R'" in quirks
        assert "2 skins; using skin 0 'body' (11 joints)" in quirks
        # the toe tips move in their joints' frames: leaf joints, exact in every frame
        assert "2 leaf node(s) under joints moved by scales" in quirks
        names = clip.skeleton.names
        assert {"toe_end.L", "toe_end.R"} <= set(names)
        tip = names.index("toe_end.L")
        assert np.ptp(np.linalg.norm(clip.motion.positions_local[:, tip], axis=-1)) > 1e-4
    # 31 % in the jump: thigh plus shin grow by about that much at 0.25 s
    jump = read_gltf(rig_file, animation="jump", fps=40)  # 0.25 s on a frame
    sk = jump.skeleton
    knee = sk.index("shin.L")
    length = np.linalg.norm(jump.motion.positions_local[:, knee], axis=-1)
    assert length.max() / length.min() == pytest.approx(1.31 * 1.0, rel=1e-3)
    assert jump.motion.rotations_local.shape[1] == sk.num_joints


def test_rotations_are_the_node_rotations_as_authored(rig_file):
    j, blob = split_glb(rig_file)
    clip = read_gltf(rig_file, animation="run")
    f = 9
    t = float(clip.times[f])
    a = j["animations"][0]
    for ch in a["channels"]:
        node, path = ch["target"]["node"], ch["target"]["path"]
        if path != "rotation" or node == clip.joint_nodes[0]:
            continue
        s = a["samplers"][ch["sampler"]]
        q = _at(_decode(j, blob, s["input"])[:, 0], _decode(j, blob, s["output"]), t,
                "LINEAR", True)  # fmt: skip
        got = clip.motion.rotations_local[f, clip.joint_nodes.index(node)]
        assert min(np.abs(got - q).max(), np.abs(got + q).max()) < 1e-6


def test_skins_are_listed_and_chosen(rig_file):
    sword = read_gltf(rig_file, skin="sword")
    assert sword.skin == 1 and sword.skeleton.names == ("sword", "sword_tip")
    assert read_gltf(rig_file, skin=1).joint_nodes == sword.joint_nodes
    with pytest.raises(InputError, match="no skin 'cape'; the file's skins: 0 'body', 1 'sword'"):
        read_gltf(rig_file, skin="cape")
    r = CliRunner().invoke(main, ["info", str(rig_file), "--skin", "sword", "--json"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)
    assert s["skins"] == [
        {"index": 0, "name": "body", "joints": 11, "used": False},
        {"index": 1, "name": "sword", "joints": 2, "used": True},
    ]
    r = CliRunner().invoke(main, ["info", str(rig_file)])
    assert r.exit_code == 0, r.output
    assert "   * 0 body  11 joints" in r.output and "     1 sword  2 joints" in r.output
    r = CliRunner().invoke(main, ["info", str(rig_file), "--skin", "9"])
    assert r.exit_code != 0 and "no skin '9'" in r.output and "Traceback" not in r.output


def _scale_tracks(j: dict, blob: bytes) -> dict:
    """``{(animation name, node): (keys, values)}`` of every scale channel."""
    out = {}
    for a in j["animations"]:
        for ch in a["channels"]:
            if ch["target"]["path"] == "scale":
                s = a["samplers"][ch["sampler"]]
                out[a["name"], ch["target"]["node"]] = (
                    _decode(j, blob, s["input"]).tobytes(),
                    _decode(j, blob, s["output"]).tobytes(),
                )
    return out


STAGE = (1, 1.2, 0.9)


@pytest.mark.parametrize(
    "ground, stage, name",
    [("flat", None, "jump"), ("stairs", None, "jump"), ("stairs", STAGE, "jump"),
     ("flat", STAGE, "run")],  # the stage still in the run, its scale keyed in the jump
)  # fmt: skip
def test_placed_written_and_read_back(ground, stage, name, tmp_path):
    """Foot placement on the stretching rig (also under a non-uniformly scaled stage):
    written with its scale keys as they were; the file read back (and evaluated
    independently) gives the placed motion's positions."""
    from ikrig.app.placement import FootPlacement, place_clip
    from ikrig.character.up import from_y_up, to_y_up

    rig_file = rig(stage=stage).glb(tmp_path / "rig.glb")
    clip = read_gltf(rig_file, animation=name)
    motion = to_y_up(clip.motion, "y")
    placed = place_clip(motion, ground, ["full"], None, FootPlacement())
    result = from_y_up(placed.results["full"].motion, "y")
    assert np.abs(result.positions_world() - clip.motion.positions_world()).max() > 1e-3
    out = tmp_path / "placed.glb"
    write_gltf(out, clip, result)
    j0, b0 = split_glb(rig_file)
    j1, b1 = split_glb(out)
    assert _scale_tracks(j1, b1) == _scale_tracks(j0, b0)
    assert check_gltf(read_gltf(out).document) == []
    back = read_gltf(out, animation=name)
    assert back.joint_nodes == clip.joint_nodes
    np.testing.assert_allclose(back.times, clip.times, atol=1e-6)
    # the written file's scene graph gives the placed positions of every skin joint
    skin = [i for i, k in enumerate(clip.joint_nodes) if k in j0["skins"][0]["joints"]]
    for f in range(0, len(clip.times), 5):
        world = world_matrices(j1, b1, back.animation, float(clip.times[f]))
        ref = np.array([world[k][:3, 3] for k in clip.joint_nodes])
        assert np.abs(ref[skin] - result.positions_world()[f, skin]).max() < TOL
    assert check_clip(back, j1, b1) < TOL
    np.testing.assert_allclose(
        back.motion.positions_world()[:, skin], result.positions_world()[:, skin], atol=TOL
    )
    # and the rotations read back are the placed ones (the node rotations as authored)
    got, want = back.motion.fk()[0][:, skin], result.fk()[0][:, skin]
    assert np.minimum(np.abs(got - want).max(-1), np.abs(got + want).max(-1)).max() < TOL


def test_foot_command_on_the_stretching_rig(rig_file, tmp_path):
    out = tmp_path / "out.glb"
    report = tmp_path / "report.json"
    r = CliRunner().invoke(main, ["foot", str(rig_file), "-g", "stairs", "-o", str(out),
                                  "--animation", "run", "--report", str(report)])  # fmt: skip
    assert r.exit_code == 0, r.output
    back = read_gltf(out, animation="run")
    j, blob = split_glb(out)
    assert check_clip(back, j, blob) < TOL
    assert len(back.skeleton.names) == 13


# ------------------------------------------------------------------ extensions


def _with(d: Doc, required: str, where: str) -> Doc:
    d.j["extensionsUsed"].append(required)
    d.j["extensionsRequired"].append(required)
    if where == "accessor":
        d.j["accessors"][0]["extensions"] = {required: {"scheme": 1}}
    elif where == "material":
        d.j["materials"] = [{"name": "skin", "extensions": {required: {"look": [1, 2]}}}]
    return d


def test_an_unknown_required_extension_on_read_data_is_refused(tmp_path):
    path = _with(rig(), "EXT_made_up", "accessor").glb(tmp_path / "made_up.glb")
    with pytest.raises(InputError) as info:
        read_gltf(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "EXT_made_up" in message and "\n" not in message
    r = CliRunner().invoke(main, ["info", str(path)])
    assert r.exit_code != 0 and "EXT_made_up" in r.output and "Traceback" not in r.output


def test_meshopt_is_refused_in_one_line(tmp_path):
    d = rig()
    d.j["extensionsUsed"].append("EXT_meshopt_compression")
    d.j["extensionsRequired"].append("EXT_meshopt_compression")
    d.j["bufferViews"][0]["extensions"] = {"EXT_meshopt_compression": {"buffer": 0}}
    path = d.glb(tmp_path / "meshopt.glb")
    with pytest.raises(InputError) as info:
        read_gltf(path)
    assert "EXT_meshopt_compression" in str(info.value) and "\n" not in str(info.value)


def test_an_unknown_required_extension_elsewhere_is_kept(tmp_path):
    path = _with(rig(), "EXT_made_up", "material").glb(tmp_path / "look.glb")
    clip = read_gltf(path)
    assert any("EXT_made_up" in q and "kept" in q for q in clip.quirks)
    out = tmp_path / "out.glb"
    write_gltf(out, clip)
    j, _ = split_glb(out)
    assert j["materials"][0]["extensions"] == {"EXT_made_up": {"look": [1, 2]}}
    assert "EXT_made_up" in j["extensionsRequired"]


# ------------------------------------------------------------------ the shared files


def _shared() -> list[Path]:
    return sorted(SHARED_GLTF.glob("*.gl*")) if SHARED_GLTF.is_dir() else []


@pytest.mark.parametrize("path", _shared() or [None], ids=lambda p: p.name if p else "absent")
def test_every_shared_animation_matches_the_scene_graph(path):
    if path is None:
        pytest.skip("../shared/data/gltf is not present")
    j, blob = split_glb(path)
    if path.suffix == ".glb":
        trimesh = pytest.importorskip("trimesh")
        scene = trimesh.load(path, force="scene")
        rest = world_matrices(j, blob, None, 0.0)
        names = [n.get("name") for n in j["nodes"]]
        for k, name in enumerate(names):
            if name and names.count(name) == 1 and name in scene.graph.nodes:
                np.testing.assert_allclose(rest[k], scene.graph.get(name)[0], atol=1e-5)
    for index, *_ in list_animations(path):
        clip = read_gltf(path, animation=index)
        size = float(np.ptp(clip.motion.positions_world().reshape(-1, 3), axis=0).max())
        assert check_clip(clip, j, blob) < TOL * max(size, 1.0)


# ------------------------------------------------------------------ --skin everywhere


def test_every_command_taking_animation_takes_skin():
    """One definition of the clip options: every command with ``--animation`` has
    ``--skin``."""
    import click

    def commands(group, prefix=()):
        ctx = click.Context(group)
        for name in group.list_commands(ctx):  # the top group loads its commands on demand
            cmd = group.get_command(ctx, name)
            if isinstance(cmd, click.Group):
                yield from commands(cmd, prefix + (name,))
            else:
                yield prefix + (name,), cmd

    found = {" ".join(path): {p.name for p in cmd.params} for path, cmd in commands(main)}
    with_animation = [name for name, params in found.items() if "animation" in params]
    assert {"info", "convert", "foot", "batch", "view"} <= set(with_animation)
    assert [name for name in with_animation if "skin" not in found[name]] == []


def test_convert_and_batch_read_the_chosen_skin(rig_file, tmp_path):
    out = tmp_path / "sword.bvh"
    r = CliRunner().invoke(main, ["convert", str(rig_file), str(out), "--skin", "sword"])
    assert r.exit_code == 0, r.output
    assert "(2 joints" in r.output
    r = CliRunner().invoke(main, ["convert", str(tmp_path / "sword.bvh"), str(tmp_path / "b.glb"),
                                  "--skin", "sword"])  # fmt: skip
    assert r.exit_code != 0 and "--skin applies to glTF files" in r.output
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "rig.glb").write_bytes(rig_file.read_bytes())
    args = ["batch", str(lib), "-g", "flat", "--jobs", "1", "-q", "--animation", "run"]
    r = CliRunner().invoke(main, args + ["-o", str(tmp_path / "a"), "--skin", "body"])
    assert r.exit_code == 0, r.output
    placed = read_gltf(tmp_path / "a" / "rig.glb", animation="run")
    assert placed.skin == 0 and len(placed.skeleton.names) == 13


def test_the_batch_hashes_the_skin_only_when_given(monkeypatch):
    """Outputs of batches run before ``--skin`` existed keep their options hash: the skin
    is in the hashed options only when given."""
    import ikrig.batch.job as job_module

    hashed: list[dict] = []
    dumps = json.dumps
    monkeypatch.setattr(job_module.json, "dumps", lambda d, **k: hashed.append(d) or dumps(d, **k))
    job = job_module.FootJob(ground="flat")
    plain, given = (job_module.options_hash(j, None) for j in (job, job._replace(skin="body")))
    assert plain != given
    assert "skin" not in hashed[0] and hashed[1]["skin"] == "body"
    assert set(hashed[1]) - set(hashed[0]) == {"skin"}


@pytest.mark.parametrize("stage", [None, (1, 1.2, 0.9)])
def test_skinning_matrices_are_the_scene_graphs(stage, tmp_path):
    """A viewer's skinned meshes follow the stretch: each skin joint's skinning matrix is its
    world matrix in the scene graph (scale and shear included; no inverse bind matrices
    here, so they are the identity)."""
    from ikrig.io.gltf.read import skin_matrices

    path = rig(stage=stage).glb(tmp_path / "rig.glb")
    j, blob = split_glb(path)
    for name in ("run", "jump"):
        clip = read_gltf(path, animation=name)
        got = skin_matrices(clip)
        for f in (0, 7, 15, 30):
            world = world_matrices(j, blob, clip.animation, float(clip.times[f]))
            want = np.array([world[k] for k in j["skins"][0]["joints"]])
            np.testing.assert_allclose(got[f], want, atol=TOL * 1e-2)
