"""The README's picture: a clip on stairs in Blender, before and after foot placement,
rendered headless with Workbench (``python -m ikrig.blender render CLIP -o OUT.png``).

It imports the clip with Blender's own BVH importer, lays stairs rising along its path
(a step every 0.6 of a leg, 0.12 of a leg high), runs ``bpy.ops.ikrig.foot_placement`` on
them, gives the armature a body (a box per bone, deformed by the armature), and renders
one frame from the side twice, with the original action and with the new one, side by
side in one PNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["render_before_after", "stairs_along"]

RISE, TREAD = 0.12, 0.6
"""The stairs' step height and depth, in legs."""


def stairs_along(path_xz: np.ndarray, leg: float) -> tuple[np.ndarray, np.ndarray]:
    """Stairs (vertices ``(V, 3)`` Y up, quads ``(Q, 4)``) rising along a path's way (its
    first to last point), a flat landing of two legs first, 3 legs to each side.

    Example:
        >>> v, q = stairs_along(np.array([[0.0, 0.0], [2.0, 0.0]]), 1.0)
        >>> float(v[:, 1].max()) > 0, q.shape[1]
        (True, 4)
    """
    p = np.asarray(path_xz, dtype=np.float64)
    way = p[-1] - p[0]
    norm = float(np.linalg.norm(way))
    way = way / norm if norm > 1e-9 else np.array([1.0, 0.0])
    side = np.array([-way[1], way[0]])
    along = (p - p[0]) @ way
    edges = [along.min() - 2 * leg, along.min() + 0.5 * leg]
    while edges[-1] < along.max() + 2 * leg:
        edges.append(edges[-1] + TREAD * leg)
    verts: list[np.ndarray] = []
    quads = []

    def point(s: float, w: float, y: float) -> np.ndarray:
        xz = p[0] + s * way + w * leg * side
        return np.array([xz[0], y, xz[1]])

    for k in range(len(edges) - 1):
        y = k * RISE * leg
        rows = [(edges[k], edges[k + 1], y, y)]  # the tread
        if k:
            rows.append((edges[k], edges[k], y - RISE * leg, y))  # the riser below it
        for s0, s1, y0, y1 in rows:
            quads.append(tuple(range(len(verts), len(verts) + 4)))
            verts += [point(s0, -3, y0), point(s1, -3, y1), point(s1, 3, y1), point(s0, 3, y0)]
    return np.array(verts), np.array(quads)


def _body(bpy: Any, arm: Any) -> Any:
    """A mesh of one box per bone, weighted to it, deformed by the armature."""
    verts: list[list[float]] = []
    faces: list[tuple[int, ...]] = []
    groups: list[tuple[str, list[int]]] = []
    box = np.array([[x, y, z] for x in (-1, 1) for y in (0, 1) for z in (-1, 1)], float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    for bone in arm.data.bones:
        m = np.array(bone.matrix_local)
        w = 0.12 * bone.length
        local = box * [w, bone.length, w]
        base = len(verts)
        verts += (local @ m[:3, :3].T + m[:3, 3]).tolist()
        faces += [tuple(base + i for i in q) for q in quads]
        groups.append((bone.name, list(range(base, base + 8))))
    mesh = bpy.data.meshes.new("body")
    mesh.from_pydata(verts, [], faces)
    body = bpy.data.objects.new("body", mesh)
    bpy.context.scene.collection.objects.link(body)
    body.parent = arm
    for name, ids in groups:
        body.vertex_groups.new(name=name).add(ids, 1.0, "REPLACE")
    body.modifiers.new("armature", "ARMATURE").object = arm
    return body


def _camera(bpy: Any, scene: Any, target_y_up: np.ndarray, way: np.ndarray, leg: float) -> None:
    cam = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(cam)
    cam.data.type, cam.data.ortho_scale = "ORTHO", 3.2 * leg
    side = np.array([-way[1], 0.0, way[0]])  # Y up
    eye = target_y_up + 6 * leg * side + [0.0, 0.3 * leg, 0.0]
    to = target_y_up - eye
    z_up = lambda v: (v[0], -v[2], v[1])  # noqa: E731
    cam.location = z_up(eye)
    from mathutils import Vector  # type: ignore[import-not-found,import-untyped,unused-ignore]

    cam.rotation_euler = Vector(z_up(to)).to_track_quat("-Z", "Y").to_euler()
    scene.camera = cam


def render_before_after(clip: str | Path, output: str | Path, frame: int | None = None) -> Path:
    """Render ``clip`` (a BVH file) on stairs before and after foot placement, side by
    side, into the PNG ``output``; its path. ``frame``: the frame shown (default: the
    middle of the clip)."""
    import bpy  # type: ignore[import-not-found,import-untyped,unused-ignore]

    from . import register
    from .armature import read_motion

    register()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    bpy.ops.import_anim.bvh(filepath=str(clip), update_scene_fps=True, update_scene_duration=True)
    arm = bpy.context.view_layer.objects.active
    _, sampled, motion = read_motion(arm, scene)
    from ..character import find_legs, pelvis_joint

    legs = find_legs(motion.skeleton, None, motion.positions_world())
    pelvis = motion.positions_world()[:, pelvis_joint(motion.skeleton, legs)]
    v, quads = stairs_along(pelvis[:, [0, 2]], legs.leg_length)
    unit = float(scene.unit_settings.scale_length)
    mesh = bpy.data.meshes.new("stairs")
    mesh.from_pydata((np.stack([v[:, 0], -v[:, 2], v[:, 1]], -1) / unit).tolist(), [],
                     quads.tolist())  # fmt: skip
    scene.collection.objects.link(bpy.data.objects.new("Stairs", mesh))
    before = arm.animation_data.action
    bpy.context.view_layer.objects.active = arm
    bpy.ops.ikrig.foot_placement(ground="Stairs")
    after = arm.animation_data.action
    _body(bpy, arm)
    k = len(sampled.frames) // 2 if frame is None else int(frame) - int(sampled.frames[0])
    scene.frame_set(int(sampled.frames[k]))
    way = pelvis[-1, [0, 2]] - pelvis[0, [0, 2]]
    way = way / max(float(np.linalg.norm(way)), 1e-9)
    _camera(bpy, scene, pelvis[k] / unit, way, legs.leg_length / unit)
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x, scene.render.resolution_y = 480, 480
    out = Path(output)
    halves = []
    for name, action in (("before", before), ("after", after)):
        arm.animation_data.action = action
        scene.frame_set(int(sampled.frames[k]))
        scene.render.filepath = str(out.with_name(f"{out.stem}_{name}.png"))
        bpy.ops.render.render(write_still=True)
        image = bpy.data.images.load(scene.render.filepath)
        px = np.empty(len(image.pixels), dtype=np.float32)
        image.pixels.foreach_get(px)
        halves.append(px.reshape(image.size[1], image.size[0], 4))
    both = np.concatenate(halves, axis=1)
    joined = bpy.data.images.new("before_after", both.shape[1], both.shape[0], alpha=True)
    joined.pixels.foreach_set(both.ravel())
    joined.filepath_raw, joined.file_format = str(out), "PNG"
    joined.save()
    return out
