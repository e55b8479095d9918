"""Reading glTF characters (issue 14): the real files against independent evaluations, and
small hand-made files for each thing real exports carry.

The reference here shares no code with the reader: it decodes float accessors with NumPy,
interpolates with SciPy (``Slerp``, ``np.interp``) and multiplies 4x4 node matrices down the
node tree; at rest it is checked against trimesh's scene graph as well.
"""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pygltflib = pytest.importorskip("pygltflib")
Rotation = pytest.importorskip("scipy.spatial.transform").Rotation
Slerp = pytest.importorskip("scipy.spatial.transform").Slerp

from ikrig.errors import FileFormatError, InputError  # noqa: E402
from ikrig.io.gltf.document import WIDTHS, GltfDocument, load_document  # noqa: E402
from ikrig.io.gltf.read import (  # noqa: E402
    clip_from_document,
    list_animations,
    read_gltf,
    skin_matrices,
    skin_vertices,
    skinned_meshes,
)

GLTF_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "gltf"
FILES = ["CesiumMan.glb", "Fox.glb", "GodotPlatformerPlayer.glb"]


@pytest.fixture(params=FILES)
def real_file(request) -> Path:
    path = GLTF_DIR / request.param
    if not path.is_file():
        pytest.skip("../shared/data/gltf is not present")
    return path


def _real(name: str) -> Path:
    path = GLTF_DIR / name
    if not path.is_file():
        pytest.skip("../shared/data/gltf is not present")
    return path


# ---------------------------------------------------------------- independent reference


def _ref_accessor(doc, blob: bytes, i: int) -> np.ndarray:
    acc = doc.accessors[i]
    assert acc.componentType == 5126 and acc.sparse is None
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[acc.type]
    bv = doc.bufferViews[acc.bufferView]
    start = (bv.byteOffset or 0) + (acc.byteOffset or 0)
    stride = bv.byteStride or 4 * width
    rows = [np.frombuffer(blob, "<f4", width, start + k * stride) for k in range(acc.count)]
    return np.array(rows, dtype=np.float64).reshape(acc.count, width)


def _ref_local(doc, blob, anim, t: float) -> list[np.ndarray]:
    """Every node's local 4x4 matrix at time ``t`` of animation ``anim`` (None: rest)."""
    trs = []
    for node in doc.nodes:
        if node.matrix is not None:
            trs.append(("m", np.array(node.matrix, dtype=np.float64).reshape(4, 4).T))
            continue
        trs.append(
            (
                "trs",
                {
                    "translation": np.array(node.translation or [0, 0, 0], dtype=np.float64),
                    "rotation": np.array(node.rotation or [0, 0, 0, 1], dtype=np.float64),
                    "scale": np.array(node.scale or [1, 1, 1], dtype=np.float64),
                },
            )
        )
    if anim is not None:
        for ch in anim.channels:
            sampler = anim.samplers[ch.sampler]
            keys = _ref_accessor(doc, blob, sampler.input)[:, 0]
            values = _ref_accessor(doc, blob, sampler.output)
            tc = float(np.clip(t, keys[0], keys[-1]))
            if sampler.interpolation == "STEP":
                value = values[max(np.searchsorted(keys, tc, side="right") - 1, 0)]
            elif ch.target.path == "rotation":
                value = (
                    values[0]
                    if len(keys) == 1
                    else Slerp(keys, Rotation.from_quat(values))([tc]).as_quat()[0]
                )
            else:
                value = np.array([np.interp(tc, keys, values[:, c]) for c in range(3)])
            kind, parts = trs[ch.target.node]
            assert kind == "trs"
            parts[ch.target.path] = value
    out = []
    for kind, parts in trs:
        if kind == "m":
            out.append(parts)
            continue
        m = np.eye(4)
        m[:3, :3] = Rotation.from_quat(parts["rotation"]).as_matrix() * parts["scale"]
        m[:3, 3] = parts["translation"]
        out.append(m)
    return out


def _ref_world(doc, local: list[np.ndarray]) -> list[np.ndarray]:
    world: list = [None] * len(doc.nodes)
    parent = {c: k for k, n in enumerate(doc.nodes) for c in n.children or []}
    for k in range(len(doc.nodes)):
        chain = [k]
        while chain[-1] in parent:
            chain.append(parent[chain[-1]])
        m = np.eye(4)
        for j in reversed(chain):
            m = m @ local[j]
        world[k] = m
    return world


def _size(positions: np.ndarray) -> float:
    return float(np.ptp(positions.reshape(-1, 3), axis=0).max())


def _check_against_reference(clip, blob) -> None:
    doc = clip.document
    anim = None if clip.animation is None else doc.animations[clip.animation]
    rot_w, pos_w = clip.motion.fk()
    tol = 1e-5 * _size(pos_w)
    for f, t in enumerate(clip.times):
        world = _ref_world(doc, _ref_local(doc, blob, anim, float(t)))
        ref = np.array([world[k] for k in clip.joint_nodes])
        np.testing.assert_allclose(pos_w[f], ref[:, :3, 3], rtol=0, atol=tol)
        lin = ref[:, :3, :3] / np.cbrt(np.linalg.det(ref[:, :3, :3]))[:, None, None]
        got = Rotation.from_quat(rot_w[f]).as_matrix()
        np.testing.assert_allclose(got, lin, rtol=0, atol=1e-4)


# ---------------------------------------------------------------- the real files


def test_real_file_reads(real_file):
    anims = list_animations(real_file)
    clip = read_gltf(real_file)
    doc = clip.document
    skin_joints = set(doc.skins[clip.skin].joints)
    assert set(clip.joint_nodes) == skin_joints  # no extra nodes in these three
    assert clip.skeleton.names == tuple(doc.nodes[k].name for k in clip.joint_nodes)
    assert clip.motion.rotations_local.shape == (len(clip.times), len(skin_joints), 4)
    assert clip.animation == 0 and clip.times[0] == pytest.approx(anims[0][2])
    assert clip.times[-1] == pytest.approx(anims[0][3])
    assert clip.frame_time == pytest.approx(np.diff(clip.times).mean())
    names = [a[1] for a in anims]
    expected = {
        "CesiumMan.glb": (19, ["animation0"]),
        "Fox.glb": (24, ["Survey", "Walk", "Run"]),
        "GodotPlatformerPlayer.glb": (27, ["idle", "walk", "run", "jump", "RESET"]),
    }[real_file.name]
    assert len(skin_joints) == expected[0]
    assert set(expected[1]) <= set(names)


def test_real_file_document_records(real_file):
    """The document object the readers share holds each table's fields as the file has
    them (read here from the file's own JSON, not through pygltflib), defaults filled in."""
    raw = load_document(real_file)
    doc = GltfDocument(raw, real_file)
    data = json.loads(raw.to_json())
    assert len(doc.nodes) == len(data["nodes"])
    for k, node in enumerate(data["nodes"]):
        rec = doc.nodes[k]
        assert rec.index == k and rec.name == node.get("name")
        assert rec.children == tuple(node.get("children", []))
        for key in ("translation", "rotation", "scale", "matrix", "mesh", "skin", "camera"):
            assert getattr(rec, key) == node.get(key), (k, key)
    for i, skin in enumerate(data["skins"]):
        assert doc.skins[i].joints == tuple(skin["joints"])
        assert doc.skins[i].inverse_bind_matrices == skin.get("inverseBindMatrices")
    for a, anim in enumerate(data.get("animations", [])):
        rec = doc.animations[a]
        assert [(s.input, s.output, s.interpolation) for s in rec.samplers] == [
            (s["input"], s["output"], s.get("interpolation", "LINEAR")) for s in anim["samplers"]
        ]
        assert [(c.sampler, c.node, c.path) for c in rec.channels] == [
            (c["sampler"], c["target"].get("node"), c["target"]["path"]) for c in anim["channels"]
        ]
    for i, acc in enumerate(data["accessors"]):
        rec = doc.accessors[i]
        assert (rec.component_type, rec.type, rec.count) == (
            acc["componentType"],
            acc["type"],
            acc["count"],
        )
        assert rec.buffer_view == acc.get("bufferView")
        assert (rec.sparse is None) == ("sparse" not in acc)
        assert doc.accessor(i).shape[0] == acc["count"] or acc["type"] not in WIDTHS


def test_real_file_world_positions(real_file):
    """Every animation at its own keys, and one at 37 fps (times between keys), against the
    independent node-matrix evaluation: positions to 1e-5 of the body size."""
    blob = pygltflib.GLTF2.load(real_file).binary_blob()
    for index, name, start, end in list_animations(real_file):
        clip = read_gltf(real_file, animation=name)
        assert clip.animation == index
        assert clip.times[0] == pytest.approx(start) and clip.times[-1] == pytest.approx(end)
        _check_against_reference(clip, blob)
    clip = read_gltf(real_file, animation=0, fps=37)
    keys = _ref_accessor(clip.document, blob, clip.document.animations[0].samplers[0].input)
    between = [t for t in clip.times if np.abs(keys - t).min() > 1e-3]
    assert len(between) > len(clip.times) // 2
    assert clip.frame_time == pytest.approx(1 / 37)
    _check_against_reference(clip, blob)


def test_real_file_rest_pose_matches_trimesh(real_file):
    trimesh = pytest.importorskip("trimesh")
    doc = pygltflib.GLTF2.load(real_file)
    doc.animations = []
    clip = clip_from_document(doc, path=real_file)
    assert clip.animation is None and clip.frame_time is None and clip.times.tolist() == [0]
    scene = trimesh.load(real_file, force="scene")
    ref = np.array([scene.graph.get(frame_to=n)[0][:3, 3] for n in clip.skeleton.names])
    got = clip.motion.positions_world()[0]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-5 * _size(ref))
    np.testing.assert_allclose(clip.skeleton.offsets, clip.motion.positions_local[0], atol=1e-12)
    assert clip.root_world.shape == (4, 4)


@pytest.mark.parametrize("animation", [0, 1])
def test_real_file_skinned_mesh(real_file, animation):
    """Skinning matrices (the motion's world joints, the folded scales put back) against
    the reference node matrices times the inverse bind matrices; skinned vertices too."""
    if animation >= len(list_animations(real_file)):
        pytest.skip("one animation only")
    _check_skin(read_gltf(real_file, animation=animation))


def _check_skin(clip) -> None:
    doc = clip.document
    blob = doc.binary_blob()
    skin = doc.skins[clip.skin]
    ibm = _ref_accessor(doc, blob, skin.inverseBindMatrices).reshape(-1, 4, 4).transpose(0, 2, 1)
    got = skin_matrices(clip)
    meshes = skinned_meshes(clip)
    assert meshes and all(len(m.faces) > 100 for m in meshes)
    anim = doc.animations[clip.animation]
    for f in (0, len(clip.times) // 2, len(clip.times) - 1):
        world = _ref_world(doc, _ref_local(doc, blob, anim, float(clip.times[f])))
        ref = np.array([world[k] for k in skin.joints]) @ ibm
        np.testing.assert_allclose(got[f], ref, rtol=0, atol=1e-5 * np.abs(ref).max())
        for mesh in meshes:
            v = skin_vertices(mesh, got[f : f + 1])[0]
            m = np.einsum("vk,vkij->vij", mesh.weights, ref[mesh.joints])
            v_ref = np.einsum("vij,vj->vi", m[:, :3, :3], mesh.positions) + m[:, :3, 3]
            np.testing.assert_allclose(v, v_ref, rtol=0, atol=1e-5 * _size(v_ref))


def test_cesium_man_quirks():
    clip = read_gltf(_real("CesiumMan.glb"))
    text = " ".join(clip.quirks)
    assert "starts at 0.0416" in text and "matrices" in text and "Z_UP" in text
    assert clip.times[0] == pytest.approx(1 / 24, abs=1e-6)
    # the baked -90 deg X and 90 deg Z armature matrices: the character stands up in Y
    pos = clip.motion.positions_world()
    assert np.ptp(pos[..., 1]) > 1.0 > np.ptp(pos[..., 0])


def test_godot_scale_and_control_bones():
    clip = read_gltf(_real("GodotPlatformerPlayer.glb"), animation="walk")
    assert "scale it by 0.3" in " ".join(clip.quirks)
    assert {"r-LEGCONTROL", "l-ARMCONTROL"} <= set(clip.skeleton.names)
    np.testing.assert_allclose(clip.root_world[:3, :3], 0.3 * np.eye(3), atol=1e-7)
    shooting = read_gltf(_real("GodotPlatformerPlayer.glb"), animation="shooting")
    assert any("folded" in q and "l-forearm" in q for q in shooting.quirks)
    _check_skin(shooting)  # the 1.3 forearm scale is put back for skinning
    reset = read_gltf(_real("GodotPlatformerPlayer.glb"), animation="RESET")
    assert len(reset.times) == 1 and reset.frame_time == pytest.approx(1 / 30)


# ---------------------------------------------------------------- hand-made files


class Builder:
    """A small glTF document written with pygltflib: nodes, float data, skins, animations."""

    def __init__(self):
        self.doc = pygltflib.GLTF2(
            scene=0, scenes=[pygltflib.Scene(nodes=[])], nodes=[], accessors=[],
            bufferViews=[], buffers=[], skins=[], animations=[],
        )  # fmt: skip
        self.blob = bytearray()

    def node(self, name, parent=None, **trs) -> int:
        self.doc.nodes.append(pygltflib.Node(name=name, **trs))
        k = len(self.doc.nodes) - 1
        if parent is None:
            self.doc.scenes[0].nodes.append(k)
        else:
            self.doc.nodes[parent].children.append(k)
        return k

    def data(self, values, type_, ctype=5126, normalized=None) -> int:
        dtype = {5126: "<f4", 5122: "<i2", 5125: "<u4", 5121: "<u1"}[ctype]
        a = np.asarray(values).astype(dtype)
        while len(self.blob) % 4:
            self.blob.append(0)
        self.doc.bufferViews.append(
            pygltflib.BufferView(buffer=0, byteOffset=len(self.blob), byteLength=a.nbytes)
        )
        self.blob += a.tobytes()
        count = len(a) if a.ndim > 1 or type_ == "SCALAR" else 1
        self.doc.accessors.append(
            pygltflib.Accessor(
                bufferView=len(self.doc.bufferViews) - 1,
                componentType=ctype,
                count=count,
                type=type_,
                normalized=normalized,
            )  # fmt: skip
        )
        return len(self.doc.accessors) - 1

    def skin(self, joints) -> None:
        self.doc.skins.append(pygltflib.Skin(joints=list(joints)))

    def anim(self, name, channels) -> None:
        """channels: (node, path, keys, values, interpolation[, output accessor])."""
        a = pygltflib.Animation(name=name, channels=[], samplers=[])
        for node, path, keys, values, interp, *out in channels:
            width = 4 if path == "rotation" else 3
            output = out[0] if out else self.data(values, f"VEC{width}")
            a.samplers.append(
                pygltflib.AnimationSampler(
                    input=self.data(keys, "SCALAR"), output=output, interpolation=interp
                )
            )
            a.channels.append(
                pygltflib.AnimationChannel(
                    sampler=len(a.samplers) - 1,
                    target=pygltflib.AnimationChannelTarget(node=node, path=path),
                )
            )
        self.doc.animations.append(a)

    def save(self, path: Path) -> Path:
        self.doc.buffers = [pygltflib.Buffer(byteLength=len(self.blob))]
        if path.suffix == ".gltf":
            path.with_suffix(".bin").write_bytes(bytes(self.blob))
            self.doc.buffers[0].uri = path.with_suffix(".bin").name
        else:
            self.doc.set_binary_blob(bytes(self.blob))
        self.doc.save(str(path))
        return path


def _rot(axis: str, degrees: float) -> list[float]:
    return Rotation.from_euler(axis, degrees, degrees=True).as_quat().tolist()


def _chain(b: Builder, n: int = 3, skin: bool = True) -> list[int]:
    """``n`` joints in a chain going down Y by 1 (the first at y = 2), a skin of them."""
    nodes = [b.node("j0", translation=[0.0, 2.0, 0.0])]
    for i in range(1, n):
        nodes.append(b.node(f"j{i}", nodes[-1], translation=[0.0, -1.0, 0.0]))
    if skin:
        b.skin(nodes)
    return nodes


def _angle_y(q: np.ndarray) -> float:
    return float(Rotation.from_quat(q).as_rotvec(degrees=True)[1])


def test_step_interpolation(tmp_path):
    b = Builder()
    j = _chain(b)
    keys = [0.0, 1.0, 2.0]
    b.anim("step", [
        (j[1], "rotation", keys, [_rot("y", 0), _rot("y", 30), _rot("y", 60)], "STEP"),
        (j[0], "translation", keys, [[0, 2, 0], [1, 2, 0], [2, 2, 0]], "STEP"),
    ])  # fmt: skip
    clip = read_gltf(b.save(tmp_path / "step.glb"), fps=4)
    assert clip.times.tolist() == pytest.approx(np.arange(9) / 4)
    angles = [_angle_y(q) for q in clip.motion.rotations_local[:, 1]]
    np.testing.assert_allclose(angles, [0, 0, 0, 0, 30, 30, 30, 30, 60], atol=1e-5)
    x = clip.motion.positions_local[:, 0, 0]
    np.testing.assert_allclose(x, [0, 0, 0, 0, 1, 1, 1, 1, 2], atol=1e-6)
    assert any("STEP" in q for q in clip.quirks)


def test_cubicspline_interpolation(tmp_path):
    b = Builder()
    j = _chain(b)
    # per key: in-tangent, value, out-tangent; x goes 0 -> 1 over 2 s, out-tangent 1 /s
    trans = [[0, 0, 0], [0, 2, 0], [1, 0, 0], [0, 0, 0], [1, 2, 0], [0, 0, 0]]
    rot = [[0, 0, 0, 0], _rot("y", 0), [0, 0, 0, 0], [0, 0, 0, 0], _rot("y", 90), [0] * 4]
    b.anim("cubic", [
        (j[0], "translation", [0.0, 2.0], trans, "CUBICSPLINE"),
        (j[1], "rotation", [0.0, 2.0], rot, "CUBICSPLINE"),
    ])  # fmt: skip
    clip = read_gltf(b.save(tmp_path / "cubic.glb"), fps=4)
    x = clip.motion.positions_local[:, 0, 0]
    u = clip.times / 2
    expected = (3 * u**2 - 2 * u**3) + (u**3 - 2 * u**2 + u) * 2 * 1.0
    np.testing.assert_allclose(x, expected, atol=1e-6)
    assert x[2] == pytest.approx(0.4375, abs=1e-6)  # t = 0.5 s
    # zero tangents: the value at u is nlerp(q0, q1, 3u^2 - 2u^3); at u = 1/2 half way
    assert _angle_y(clip.motion.rotations_local[4, 1]) == pytest.approx(45, abs=1e-4)
    np.testing.assert_allclose(np.linalg.norm(clip.motion.rotations_local, axis=-1), 1)


def test_matrix_nodes(tmp_path):
    b = Builder()
    m0 = np.eye(4)
    m0[:3, :3] = Rotation.from_euler("z", 90, degrees=True).as_matrix()
    m0[:3, 3] = [1, 2, 3]
    m1 = np.eye(4)
    m1[:3, 3] = [1, 0, 0]
    root = b.node("root", matrix=m0.T.ravel().tolist())  # column-major in the file
    child = b.node("child", root, matrix=m1.T.ravel().tolist())
    b.skin([root, child])
    clip = read_gltf(b.save(tmp_path / "matrix.glb"))
    assert clip.animation is None and clip.frame_time is None
    np.testing.assert_allclose(clip.motion.positions_world()[0], [[1, 2, 3], [1, 3, 3]], atol=1e-9)
    assert any("matrices" in q for q in clip.quirks)


def test_scaled_rotated_armature(tmp_path):
    """FBX conversions: a 0.01 scale and a -90 deg X rotation above a Z-up skeleton in cm."""
    b = Builder()
    arm = b.node("Armature", rotation=_rot("x", -90), scale=[0.01] * 3)
    hips = b.node("Hips", arm, translation=[0.0, 0.0, 100.0])
    knee = b.node("Knee", hips, translation=[0.0, 0.0, -50.0], rotation=_rot("x", 10))
    b.skin([hips, knee])
    b.anim("walk", [
        (hips, "translation", [0.0, 1.0], [[0, 0, 100], [20, 0, 100]], "LINEAR"),
        (knee, "rotation", [0.0, 1.0], [_rot("x", 10), _rot("x", 40)], "LINEAR"),
    ])  # fmt: skip
    path = b.save(tmp_path / "fbx.glb")
    clip = read_gltf(path, fps=10)
    np.testing.assert_allclose(clip.skeleton.offsets, [[0, 1, 0], [0, 0, -0.5]], atol=1e-7)
    np.testing.assert_allclose(clip.root_world[:3, :3] / 0.01, Rotation.from_euler(
        "x", -90, degrees=True).as_matrix(), atol=1e-7)  # fmt: skip
    np.testing.assert_allclose(clip.motion.positions_world()[0, 0], [0, 1, 0], atol=1e-7)
    np.testing.assert_allclose(clip.motion.positions_world()[-1, 0], [0.2, 1, 0], atol=1e-7)
    assert any("scale it by 0.01" in q for q in clip.quirks)
    _check_against_reference(clip, pygltflib.GLTF2.load(path).binary_blob())


def test_animated_node_above_the_skeleton(tmp_path):
    b = Builder()
    arm = b.node("Armature", scale=[0.5] * 3)
    j = _chain(b, 3, skin=True)
    b.doc.scenes[0].nodes.remove(j[0])
    b.doc.nodes[arm].children.append(j[0])
    b.anim("spin", [(arm, "rotation", [0.0, 1.0], [_rot("y", 0), _rot("z", 90)], "LINEAR")])
    path = b.save(tmp_path / "spin.glb")
    clip = read_gltf(path, fps=4)
    assert any("moves nodes above the skeleton" in q for q in clip.quirks)
    np.testing.assert_allclose(clip.motion.positions_world()[-1, 2], [0, 0, 0], atol=1e-7)
    np.testing.assert_allclose(clip.motion.positions_world()[-1, 0], [-1, 0, 0], atol=1e-7)
    _check_against_reference(clip, pygltflib.GLTF2.load(path).binary_blob())


def test_import_without_pygltflib():
    code = (
        "import sys; sys.modules['pygltflib'] = None; import ikrig, ikrig.io;"
        " print(ikrig.io.read_gltf.__name__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "read_gltf"


def test_animation_not_starting_at_zero(tmp_path):
    b = Builder()
    j = _chain(b)
    keys = [1.5, 2.0, 2.5]
    b.anim("late", [(j[1], "rotation", keys, [_rot("y", a) for a in (0, 10, 20)], "LINEAR")])
    path = b.save(tmp_path / "late.glb")
    clip = read_gltf(path)
    np.testing.assert_allclose(clip.times, keys, atol=1e-7)
    assert clip.frame_time == pytest.approx(0.5)
    assert any("starts at 1.5" in q for q in clip.quirks)
    clip = read_gltf(path, fps=10)
    np.testing.assert_allclose(clip.times, 1.5 + np.arange(11) / 10, atol=1e-9)
    np.testing.assert_allclose(_angle_y(clip.motion.rotations_local[5, 1]), 10, atol=1e-4)
    assert list_animations(path) == [(0, "late", 1.5, 2.5)]


def test_channels_on_some_joints(tmp_path):
    b = Builder()
    j = _chain(b, 3)
    b.doc.nodes[j[2]].rotation = _rot("z", 20)
    b.anim("some", [(j[1], "rotation", [0.0, 1.0], [_rot("y", 0), _rot("y", 50)], "LINEAR")])
    path = b.save(tmp_path / "some.glb")
    clip = read_gltf(path, fps=2)
    rl = clip.motion.rotations_local
    assert [_angle_y(q) for q in rl[:, 1]] == pytest.approx([0, 25, 50], abs=1e-5)
    for q in rl[:, 2]:
        assert Rotation.from_quat(q).as_rotvec(degrees=True)[2] == pytest.approx(20)
    np.testing.assert_allclose(rl[:, 0], [[0, 0, 0, 1]] * 3, atol=1e-12)
    assert any("channels on 1 of 3" in q for q in clip.quirks)
    _check_against_reference(clip, pygltflib.GLTF2.load(path).binary_blob())


def test_non_joint_node_between_joints_and_gltf_with_bin(tmp_path):
    b = Builder()
    hips = b.node("hips", translation=[0.0, 1.0, 0.0])
    helper = b.node("", hips, translation=[0.1, 0.0, 0.0], rotation=_rot("y", 90))
    knee = b.node("knee", helper, translation=[0.0, -0.5, 0.0])
    b.skin([hips, knee])
    b.anim("turn", [(helper, "rotation", [0.0, 1.0], [_rot("y", 90), _rot("x", 90)], "LINEAR")])
    path = b.save(tmp_path / "helper.gltf")
    assert path.with_suffix(".bin").is_file()
    clip = read_gltf(path, fps=1)
    assert clip.joint_nodes == (hips, helper, knee)
    assert clip.skeleton.names == ("hips", f"node{helper}", "knee")
    assert any("non-joint" in q for q in clip.quirks)
    np.testing.assert_allclose(clip.motion.positions_world()[0, 2], [0.1, 0.5, 0], atol=1e-7)
    np.testing.assert_allclose(clip.motion.positions_world()[1, 2], [0.1, 1, -0.5], atol=1e-7)
    path.with_suffix(".bin").unlink()
    with pytest.raises(FileFormatError, match="helper.gltf.*helper.bin"):
        read_gltf(path)
    # the same data as a data URI inside the JSON
    b.doc.buffers[0].uri = "data:application/octet-stream;base64," + base64.b64encode(
        bytes(b.blob)
    ).decode("ascii")
    b.doc.save(str(tmp_path / "inline.gltf"))
    inline = read_gltf(tmp_path / "inline.gltf", fps=1)
    np.testing.assert_allclose(inline.motion.positions_local, clip.motion.positions_local)


def test_two_skins(tmp_path):
    b = Builder()
    small = _chain(b, 2)
    big = _chain(b, 4)
    path = b.save(tmp_path / "two.glb")
    clip = read_gltf(path)
    assert clip.skin == 1 and clip.joint_nodes == tuple(big)
    assert any("2 skins; using skin 1" in q for q in clip.quirks)
    assert read_gltf(path, skin=0).joint_nodes == tuple(small)
    with pytest.raises(InputError, match="no skin 5"):
        read_gltf(path, skin=5)


def test_errors(tmp_path):
    b = Builder()
    j = _chain(b, 2, skin=False)
    path = b.save(tmp_path / "noskin.glb")
    with pytest.raises(InputError, match="noskin.glb: the file has no skins"):
        read_gltf(path)
    b.skin(j)
    b.anim("idle", [(j[1], "rotation", [0.0, 1.0], [_rot("y", 0), _rot("y", 5)], "LINEAR")])
    b.anim("walk", [(j[1], "rotation", [0.0, 1.0], [_rot("y", 0), _rot("y", 5)], "LINEAR")])
    path = b.save(tmp_path / "two_anims.glb")
    listed = "no animation 'run'; the file's animations: 0 'idle', 1 'walk'"
    with pytest.raises(InputError, match=listed):
        read_gltf(path, animation="run")
    with pytest.raises(InputError, match="no animation 7"):
        read_gltf(path, animation=7)
    assert read_gltf(path, animation="walk").animation == 1
    assert read_gltf(path, animation="1").animation == 1
    with pytest.raises(InputError, match="fps"):
        read_gltf(path, fps=0)
    with pytest.raises(FileFormatError, match="missing.glb: no such file"):
        read_gltf(tmp_path / "missing.glb")
    bad = tmp_path / "bad.glb"
    bad.write_bytes(b"glTF" + struct.pack("<II", 2, 40) + b"garbage")
    with pytest.raises(FileFormatError, match="bad.glb: not a readable glTF"):
        read_gltf(bad)
    bad = tmp_path / "bad.gltf"
    bad.write_text('{"asset": {"version": "2.0"}, "nodes": [')
    with pytest.raises(FileFormatError, match="bad.gltf: not a readable glTF"):
        list_animations(bad)


def test_no_animation_asked_for(tmp_path):
    b = Builder()
    _chain(b, 2)
    path = b.save(tmp_path / "still.glb")
    assert read_gltf(path).animation is None
    with pytest.raises(InputError, match="still.glb: the file has no animations"):
        read_gltf(path, animation="walk")


def test_non_uniform_scale(tmp_path):
    b = Builder()
    j = _chain(b, 3)
    b.doc.nodes[j[1]].scale = [1.0, 2.0, 1.0]
    clip = read_gltf(b.save(tmp_path / "stretch.glb"))  # read (issue 36): positions exact
    assert any(q.startswith("non-uniform scale on 1 'j1'") for q in clip.quirks)
    local = _ref_local(clip.document, clip.document.binary_blob(), None, 0.0)
    ref = np.array([_ref_world(clip.document, local)[k][:3, 3] for k in clip.joint_nodes])
    np.testing.assert_allclose(clip.motion.positions_world()[0], ref, atol=1e-12)
    b.doc.nodes[j[1]].scale = [1.0, -1.0, 1.0]
    with pytest.raises(InputError, match="negative scale"):
        read_gltf(b.save(tmp_path / "mirror.glb"))


def test_uniform_joint_scale_folded(tmp_path):
    b = Builder()
    j = _chain(b, 3)
    b.anim("grow", [(j[1], "scale", [0.0, 1.0], [[1, 1, 1], [2, 2, 2]], "LINEAR")])
    path = b.save(tmp_path / "grow.glb")
    clip = read_gltf(path, fps=1)
    np.testing.assert_allclose(clip.motion.positions_world()[:, 2], [[0, 0, 0], [0, -1, 0]])
    assert any("folded" in q for q in clip.quirks)
    _check_against_reference(clip, pygltflib.GLTF2.load(path).binary_blob())


def test_leaf_nodes_under_joints_are_end_sites(tmp_path):
    """A leaf node that only marks a point under a joint (a BVH End Site as ikrig writes it,
    a leaf-bone tip of other exporters) is read as an end site, under an FBX-style armature
    and a scaled, rotated joint, so it follows its joint in every frame; leaves with a mesh,
    an animation or a skin of their own, and nodes with children, are not."""
    b = Builder()
    arm = b.node("Armature", rotation=_rot("x", -90), scale=[0.01] * 3)
    hips = b.node("Hips", arm, translation=[0.0, 0.0, 100.0])
    knee = b.node("Knee", hips, translation=[0.0, 0.0, -50.0], rotation=_rot("x", 10),
                  scale=[2.0] * 3)  # fmt: skip
    tip = b.node("Knee_end", knee, translation=[0.0, 5.0, -40.0], rotation=_rot("y", 30))
    b.doc.meshes = [pygltflib.Mesh(primitives=[])]
    b.node("Socket", hips, translation=[1.0, 0.0, 0.0], mesh=0)
    prop = b.node("Prop", hips, translation=[0.0, 1.0, 0.0])
    b.node("Inner", b.node("Holder", hips))
    other = b.node("Other", hips, translation=[0.0, 0.0, 1.0])
    b.skin([hips, knee])
    b.skin([other])
    b.anim("walk", [
        (hips, "translation", [0.0, 1.0], [[0, 0, 100], [20, 0, 100]], "LINEAR"),
        (knee, "rotation", [0.0, 1.0], [_rot("x", 10), _rot("x", 40)], "LINEAR"),
        (prop, "translation", [0.0, 1.0], [[0, 1, 0], [0, 2, 0]], "LINEAR"),
    ])  # fmt: skip
    path = b.save(tmp_path / "sites.glb")
    clip = read_gltf(path, fps=10)
    sk = clip.skeleton
    assert sk.names == ("Hips", "Knee")
    np.testing.assert_array_equal(sk.end_site_parents, [1])
    assert any("1 leaf node(s) under joints read as end sites" in q for q in clip.quirks)
    doc = pygltflib.GLTF2.load(path)
    blob = doc.binary_blob()
    rot_w, pos_w = clip.motion.fk()
    for f, t in enumerate(clip.times):
        want = _ref_world(doc, _ref_local(doc, blob, doc.animations[0], t))[tip][:3, 3]
        got = pos_w[f, 1] + Rotation.from_quat(rot_w[f, 1]).apply(np.array(sk.end_site_offsets[0]))
        np.testing.assert_allclose(got, want, atol=1e-7)


def test_quaternion_sign_flip_takes_the_short_way(tmp_path):
    b = Builder()
    j = _chain(b)
    flipped = [-c for c in _rot("y", 40)]
    b.anim("flip", [(j[1], "rotation", [0.0, 1.0, 2.0],
                     [_rot("y", 0), flipped, _rot("y", 80)], "LINEAR")])  # fmt: skip
    clip = read_gltf(b.save(tmp_path / "flip.glb"), fps=4)
    angles = [_angle_y(q) for q in clip.motion.rotations_local[:, 1]]
    np.testing.assert_allclose(angles, np.arange(9) * 10, atol=1e-4)
    q = clip.motion.rotations_local[:, 1]
    assert (np.sum(q[1:] * q[:-1], axis=-1) > 0).all()  # signs continuous over frames


def test_normalized_and_sparse_accessors(tmp_path):
    b = Builder()
    j = _chain(b)
    shorts = np.round(np.array([_rot("y", 0), _rot("y", 60)]) * 32767)
    out = b.data(shorts, "VEC4", ctype=5122, normalized=True)
    b.anim("short", [(j[1], "rotation", [0.0, 1.0], None, "LINEAR", out)])
    # translation keys all zero except key 1, given by a sparse substitution
    base = b.data(np.zeros((3, 3)), "VEC3")
    b.doc.accessors[base].sparse = pygltflib.Sparse(
        count=1,
        indices=pygltflib.AccessorSparseIndices(
            bufferView=b.doc.accessors[b.data([1], "SCALAR", ctype=5121)].bufferView,
            componentType=5121,
        ),
        values=pygltflib.AccessorSparseValues(
            bufferView=b.doc.accessors[b.data([[0.0, 3.0, 0.0]], "VEC3")].bufferView
        ),
    )
    b.anim("sparse", [(j[0], "translation", [0.0, 1.0, 2.0], None, "LINEAR", base)])
    path = b.save(tmp_path / "packed.glb")
    clip = read_gltf(path, animation="short", fps=2)
    assert _angle_y(clip.motion.rotations_local[1, 1]) == pytest.approx(30, abs=1e-3)
    clip = read_gltf(path, animation="sparse")
    np.testing.assert_allclose(clip.motion.positions_local[:, 0], [[0, 0, 0], [0, 3, 0], [0] * 3])
    # KHR_mesh_quantization: plain (not normalised) integer translations
    ints = b.data(np.array([[0, 2, 0], [0, 4, 0]]), "VEC3", ctype=5122)
    b.anim("ints", [(j[0], "translation", [0.0, 1.0], None, "LINEAR", ints)])
    clip = read_gltf(b.save(tmp_path / "ints.glb"), animation="ints", fps=2)
    np.testing.assert_allclose(clip.motion.positions_local[:, 0, 1], [2, 3, 4])
    bad = b.data(np.zeros((2, 4)), "VEC4", ctype=5125)
    b.anim("uint", [(j[1], "rotation", [0.0, 1.0], None, "LINEAR", bad)])
    with pytest.raises(InputError, match=f"accessor {bad} .*not a supported rotation output"):
        read_gltf(b.save(tmp_path / "uint.glb"), animation="uint")


def test_missing_pygltflib(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pygltflib", None)
    with pytest.raises(InputError, match=r"pip install 'ikrig\[gltf\]'"):
        read_gltf(tmp_path / "any.glb")


def test_samplers_with_different_keys_are_sampled_at_the_densest_rate():
    """Issue 36: a 60 fps walk whose constant channels keep only 2 keys (as Mixamo writes
    them) was sampled at about 30 fps (58 keys became 29 frames at 29.47 fps). The grid now
    takes the densest sampler's rate, the first and last keys on a frame."""
    from ikrig.io.gltf._sample import time_grid

    walk = np.arange(58) / 60.0
    times, frame_time, own = time_grid([np.array([0.0, walk[-1]]), walk], None)
    assert len(times) == 58 and frame_time == pytest.approx(1 / 60) and not own
    np.testing.assert_allclose(times, walk, atol=1e-12)
    # a sampler keyed at 24 fps beside one at 60: 60 wins; a clip of single keys: 30
    times, frame_time, _ = time_grid([np.arange(25) / 24.0, np.arange(61) / 60.0], None)
    assert frame_time == pytest.approx(1 / 60) and times[-1] == pytest.approx(1.0)
    times, frame_time, _ = time_grid([np.array([0.0]), np.array([1.0])], None)
    assert frame_time == pytest.approx(1 / 30) and len(times) == 31


def test_the_grid_bound_reckons_with_the_densest_rate():
    """Sampling at the densest sampler's rate, the bound on the grid must use that rate:
    a 1000 fps sampler beside a key at 1e6 s would ask for 1e9 frames (the fuzzer found it
    as a 358 GiB allocation)."""
    from ikrig.io.gltf._sample import MAX_FRAMES, grid_problem

    dense = np.arange(1000) / 1000.0
    assert grid_problem([dense], None, 10) is None
    problem = grid_problem([dense, np.array([0.0, 1e6])], None, 10)
    assert problem is not None and str(MAX_FRAMES) in problem
