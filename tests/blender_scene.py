"""Helpers of the Blender tests (``tests/test_blender*.py``): a fresh scene, Blender's own
importers, and the pose read back through Blender's evaluation (never ikrig's FK)."""

from __future__ import annotations

import numpy as np
from helpers import SHARED

SHARED_BVH_ALL = [
    p
    for folder in ("bvh", "bvh_more")
    for p in (
        sorted((SHARED / "data" / folder).glob("*.bvh")) if (SHARED / "data").is_dir() else []
    )
]
SHARED_GLTF_ALL = sorted((SHARED / "data" / "gltf").glob("*.glb")) if SHARED.is_dir() else []


def fresh_scene(bpy):
    """An empty scene (factory settings), returned."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def armature_objects(bpy):
    return [o for o in bpy.data.objects if o.type == "ARMATURE"]


def import_bvh(bpy, path) -> object:
    """Import a BVH file with Blender's own importer (scene frame rate and range from the
    file); the armature object, made active."""
    bpy.ops.import_anim.bvh(filepath=str(path), update_scene_fps=True, update_scene_duration=True)
    obj = armature_objects(bpy)[-1]
    bpy.context.view_layer.objects.active = obj
    return obj


def import_gltf(bpy, path, frame_time: float) -> object:
    """Import a glTF file with Blender's own importer, the scene at the clip's frame rate (so
    its keys fall on whole frames); the armature object with the most bones, made active."""
    bpy.context.scene.render.fps = round(1.0 / frame_time)
    bpy.ops.import_scene.gltf(filepath=str(path))
    obj = max(armature_objects(bpy), key=lambda o: len(o.data.bones))
    bpy.context.view_layer.objects.active = obj
    return obj


def evaluated_heads(bpy, obj, names, frames) -> np.ndarray:
    """``(F, len(names), 3)`` world positions of the bones' heads as Blender evaluates the
    pose at ``frames`` (``pose.bones[...].head`` and the object's world matrix), turned from
    Blender's Z-up into ikrig's Y-up and scaled by the scene's unit scale."""
    scene = bpy.context.scene
    unit = scene.unit_settings.scale_length
    out = np.empty((len(frames), len(names), 3))
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        m = np.array(obj.matrix_world)
        heads = np.array([list(obj.pose.bones[n].head) for n in names])
        w = heads @ m[:3, :3].T + m[:3, 3]
        out[k] = unit * np.stack([w[:, 0], w[:, 2], -w[:, 1]], axis=-1)
    return out


def some_frames(frames, count: int = 24) -> np.ndarray:
    """Up to ``count`` frames spread evenly over ``frames`` (first and last included)."""
    frames = np.asarray(frames)
    return frames[np.unique(np.linspace(0, len(frames) - 1, count).round().astype(int))]


def leg_length(motion) -> float:
    from ikrig.character.legs import find_legs

    return float(find_legs(motion.skeleton, None, motion.positions_world()).leg_length)


def _path_axes(path_xz):
    """The clip's way (unit XZ from the first to the last pelvis position, +X if it stays)
    and its side, and its extent along the way."""
    way = path_xz[-1] - path_xz[0]
    way = way / np.linalg.norm(way) if np.linalg.norm(way) > 1e-6 else np.array([1.0, 0.0])
    side = np.array([-way[1], way[0]])
    along = (path_xz - path_xz[0]) @ way
    return way, side, along.min(), along.max()


def stairs_mesh(path_xz, leg, rise=0.12, tread=0.6):
    """Stairs (Y up, ikrig's world) rising along the clip's way: a landing, then steps
    ``rise`` high and ``tread`` deep (in legs), tops and risers, 3 legs to each side.
    ``(vertices (V, 3), faces (T, 3))``."""
    way, side, lo, hi = _path_axes(np.asarray(path_xz, dtype=np.float64))
    edges = [lo - 2 * leg, lo + 0.5 * leg]
    while edges[-1] < hi + 2 * leg:
        edges.append(edges[-1] + tread * leg)
    verts, faces = [], []
    o = np.asarray(path_xz[0], dtype=np.float64)
    for k in range(len(edges) - 1):
        y = k * rise * leg
        quad = []
        for s, w in ((edges[k], -3), (edges[k + 1], -3), (edges[k + 1], 3), (edges[k], 3)):
            xz = o + s * way + w * leg * side
            quad.append((xz[0], y, xz[1]))
        if k:  # the riser up to this step
            base = len(verts)
            verts += [quad[0], quad[3], (quad[3][0], y - rise * leg, quad[3][2]),
                      (quad[0][0], y - rise * leg, quad[0][2])]  # fmt: skip
            faces += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
        base = len(verts)
        verts += quad
        faces += [(base, base + 1, base + 2), (base, base + 2, base + 3)]
    return np.array(verts), np.array(faces)


def slope_mesh(path_xz, leg, degrees=8.0):
    """A plane (Y up) through the clip's start, rising ``degrees`` along its way, 3 legs
    to each side: two triangles."""
    way, side, lo, hi = _path_axes(np.asarray(path_xz, dtype=np.float64))
    o = np.asarray(path_xz[0], dtype=np.float64)
    t = np.tan(np.radians(degrees))
    verts = []
    for s, w in ((lo - 2 * leg, -3), (hi + 2 * leg, -3), (hi + 2 * leg, 3), (lo - 2 * leg, 3)):
        xz = o + s * way + w * leg * side
        verts.append((xz[0], s * t, xz[1]))
    return np.array(verts), np.array([(0, 1, 2), (0, 2, 3)])


def add_mesh_object(bpy, name, vertices_y_up, faces, offset=(0.3, -0.2, 0.1), subdivide=False):
    """A mesh object in the scene whose world surface is ``vertices_y_up`` (ikrig's world,
    metres) in Blender's Z-up world: the data moved by ``-offset`` and the object by
    ``+offset`` (so its world transform counts), with a simple subdivision modifier if
    asked (so its modifiers count)."""
    v = np.asarray(vertices_y_up, dtype=np.float64)
    z_up = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=-1) - offset
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(z_up.tolist(), [], np.asarray(faces).tolist())
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    obj.location = offset
    bpy.context.scene.collection.objects.link(obj)
    if subdivide:
        mod = obj.modifiers.new("subdivide", "SUBSURF")
        mod.subdivision_type, mod.levels = "SIMPLE", 2
    bpy.context.view_layer.update()
    return obj


def write_obj(path, vertices, faces):
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in vertices]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def _rotation(m):
    u, _, vt = np.linalg.svd(m)
    return u @ vt


def evaluated_pose(bpy, obj, names, frames):
    """World rotations ``(F, J, 4)`` xyzw and positions ``(F, J, 3)`` of the bones
    ``names`` as Blender evaluates them (``pose.bones[...].matrix``, the bone's rest
    ``matrix_local`` and the object's world matrix), Y up, in the scene's units. A rotation
    is the bone's turn from its rest, in world axes: a BVH joint's world rotation (its rest
    is the identity); a glTF joint's less its rest rotation."""
    from ikrig.math.quat import quat_from_matrix

    scene = bpy.context.scene
    unit = scene.unit_settings.scale_length
    bones = obj.pose.bones
    order = [bones.find(n) for n in names]
    rest = np.array([np.array(obj.data.bones[n].matrix_local)[:3, :3] for n in names])
    rest_inv = np.linalg.inv(rest)
    turn = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])  # Blender Z-up -> Y-up
    buf = np.empty(16 * len(bones), dtype=np.float32)
    rot, pos = np.empty((len(frames), len(names), 3, 3)), np.empty((len(frames), len(names), 3))
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        bones.foreach_get("matrix", buf)
        pose = buf.reshape(-1, 4, 4).transpose(0, 2, 1)[order].astype(np.float64)
        m = np.array(obj.matrix_world)
        pos[k] = unit * (pose[:, :3, 3] @ m[:3, :3].T + m[:3, 3]) @ turn.T
        axes = turn @ _rotation(m[:3, :3])
        rot[k] = axes @ _rotation(pose[:, :3, :3] @ rest_inv) @ axes.T
    return quat_from_matrix(rot), pos
