# mypy: disable-error-code="valid-type"
# (Blender declares properties as calls in class annotations, which mypy refuses)
"""The add-on's operators and its panel (3D view sidebar, tab "ikrig"), made when Blender
registers them (:func:`register`): this module imports without ``bpy``, its classes exist
only inside Blender.

- ``bpy.ops.ikrig.foot_placement(ground="Stairs", mode="full", legs="", datum="clip",
  up="auto")``: the active armature's feet planted on a mesh object;
- ``bpy.ops.ikrig.pin(bone="hand_L", target="Empty", frame_start=10, frame_end=40,
  blend=5)``: a bone follows an empty over a range of frames, the body following;
- ``bpy.ops.ikrig.look_at(bone="head", target="Empty", frame_start=..., frame_end=...,
  blend=...)``: the head (and the spine above the pelvis) turns to look at an empty.

Each reads the armature's action (:func:`~ikrig.blender.armature.read_motion`), writes the
result as a new action ``<action>_ikrig`` keyed on the bones that changed and assigns it
(the original is kept), has an undo step, shows progress, and reports what went wrong in
Blender's report area (an :class:`~ikrig.errors.IkrigError` as its one-line message, any
other error with its type), never as a traceback only in the console.
"""

# no "from __future__ import annotations": Blender reads the properties from the
# annotations of the classes, which must be the property objects themselves

import warnings
from typing import Any

import numpy as np

from ..errors import IkrigError, InputError

__all__ = ["classes", "register", "unregister"]

_REGISTERED: list = []
MODES = ("full", "goal-blend", "trace-offset")
END_SITES = (
    "Read the tail of every bone without children as an end site (a BVH End Site: a"
    " toeless foot's toe tip); off for glTF rigs, whose leaf tails the importer guesses"
)


def _armature(context: Any) -> Any:
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE":
        raise InputError("select an armature (the active object is not one)")
    return obj


def _object(name: str, what: str) -> Any:
    import bpy  # type: ignore[import-not-found,import-untyped,unused-ignore]

    obj = bpy.data.objects.get(name) if name else None
    if obj is None:
        raise InputError(f"{what}: no object named {name!r} in this file")
    return obj


def _world_points(obj: Any, scene: Any, frames: np.ndarray) -> np.ndarray:
    """``(F, 3)`` an object's world position at each frame, metres, Y up."""
    from .rig import world_frame

    frame = world_frame(np.eye(4), float(scene.unit_settings.scale_length))
    keep = scene.frame_current
    out = np.empty((len(frames), 3))
    for k, f in enumerate(frames):
        scene.frame_set(int(f))
        out[k] = list(obj.matrix_world.translation)
    scene.frame_set(keep)
    return frame.apply(out)


def _span(sampled: Any, start: int, end: int) -> tuple[int, int]:
    first = int(sampled.frames[0])
    return int(start) - first, int(end) - first + 1


def _run(op: Any, context: Any, job: Any) -> set[str]:
    """Run ``job(context, progress)`` with Blender's progress bar; report its lines, its
    warnings and any error in the report area."""
    wm = context.window_manager
    wm.progress_begin(0, 100)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lines = job(context, wm.progress_update)
    except IkrigError as e:
        op.report({"ERROR"}, " ".join(str(e).split()))
        return {"CANCELLED"}
    except Exception as e:  # never a traceback only in the console
        op.report({"ERROR"}, f"ikrig: {type(e).__name__}: {' '.join(str(e).split())}")
        return {"CANCELLED"}
    finally:
        wm.progress_end()
    for w in caught:
        op.report({"WARNING"}, " ".join(str(w.message).split()))
    context.scene.ikrig.report = "\n".join(lines)
    for line in lines:
        op.report({"INFO"}, line)
    return {"FINISHED"}


def _foot(op: Any, context: Any, progress: Any) -> list[str]:
    from .armature import read_motion
    from .keys import write_action
    from .placement import FootJob, mesh_ground, place_motion, summary_lines

    scene = context.scene
    obj = _armature(context)
    rig, sampled, motion = read_motion(obj, scene, end_sites=op.end_sites)
    progress(10)
    ground_obj = _object(op.ground, "ground")
    depsgraph = context.evaluated_depsgraph_get()
    ground = mesh_ground(ground_obj, depsgraph, float(scene.unit_settings.scale_length))
    progress(20)
    placed = place_motion(motion, ground, FootJob(op.mode, op.legs, op.datum, op.up))
    progress(80)
    action, changed = write_action(obj, rig, sampled, placed.motion, scene)
    for w in placed.warnings:
        op.report({"WARNING"}, w)
    return [f"{action.name}: {int(changed.sum())} bones keyed", *summary_lines(placed)]


def _span_job(op: Any, context: Any, progress: Any, solve: Any) -> list[str]:
    """What ``pin`` and ``look_at`` share: the active armature's clip and the target
    object's path, ``solve(motion, target, start, stop) -> (motion, lines)`` over the
    operator's frames, the result written as a new action."""
    from .armature import read_motion
    from .keys import write_action

    scene = context.scene
    obj = _armature(context)
    rig, sampled, motion = read_motion(obj, scene)
    target = _world_points(_object(op.target, "target"), scene, sampled.frames)
    progress(20)
    start, stop = _span(sampled, op.frame_start, op.frame_end)
    out, lines = solve(motion, target, start, stop)
    progress(80)
    action, changed = write_action(obj, rig, sampled, out, scene)
    return [f"{action.name}: {int(changed.sum())} bones keyed", *lines]


def _pin(op: Any, context: Any, progress: Any) -> list[str]:
    from .jobs import follow_point

    def solve(motion, target, start, stop):
        out = follow_point(motion, op.bone, target, start, stop, op.blend)
        j = out.skeleton.index(op.bone)
        miss = np.linalg.norm(out.positions_world()[start:stop, j] - target[start:stop], axis=-1)
        return out, [f"{op.bone} off its target by {miss.max():.4f} m at most"]

    return _span_job(op, context, progress, solve)


def _look(op: Any, context: Any, progress: Any) -> list[str]:
    from .jobs import look_at_point

    def solve(motion, target, start, stop):
        out, reached = look_at_point(motion, op.bone, target, start, stop, op.blend)
        return out, [f"{op.bone} looks at {op.target} in {int(reached[start:stop].sum())} of"
                     f" {stop - start} frames"]  # fmt: skip

    return _span_job(op, context, progress, solve)


def classes() -> tuple[type, ...]:
    """The operator, property group and panel classes (``bpy`` needed)."""
    import bpy  # type: ignore[import-not-found,import-untyped,unused-ignore]
    from bpy.props import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
        BoolProperty,
        EnumProperty,
        FloatProperty,
        IntProperty,
        PointerProperty,
        StringProperty,
    )

    def items(*names: str) -> list:
        return [(n, n, "") for n in names]

    class IKRIG_PG_settings(bpy.types.PropertyGroup):
        ground: PointerProperty(type=bpy.types.Object, name="Ground",
                                poll=lambda self, o: o.type == "MESH")  # fmt: skip
        mode: EnumProperty(name="Mode", items=items(*MODES), default="full")
        legs: StringProperty(name="Legs", description="hip,knee,ankle[,toe];... (empty: found)")
        datum: EnumProperty(name="Datum", items=items("clip", "absolute"), default="clip")
        up: EnumProperty(name="Up", items=items("auto", "y", "z", "x"), default="auto")
        end_sites: BoolProperty(name="Leaf tails are end sites", default=True,
                                description=END_SITES)  # fmt: skip
        bone: StringProperty(name="Bone")
        target: PointerProperty(type=bpy.types.Object, name="Target")
        frame_start: IntProperty(name="Start", default=1)
        frame_end: IntProperty(name="End", default=10)
        blend: FloatProperty(name="Blend (frames)", default=5.0, min=0.0)
        report: StringProperty(name="Report")

    class IKRIG_OT_foot_placement(bpy.types.Operator):
        """Plant the active armature's feet on a mesh object (a new action)"""

        bl_idname = "ikrig.foot_placement"
        bl_label = "Foot placement"
        bl_options = {"REGISTER", "UNDO"}
        ground: StringProperty(name="Ground", description="The mesh object to stand on")
        mode: EnumProperty(name="Mode", items=items(*MODES), default="full")
        legs: StringProperty(name="Legs", description="hip,knee,ankle[,toe];... (empty: found)")
        datum: EnumProperty(name="Datum", items=items("clip", "absolute"), default="clip")
        up: EnumProperty(name="Up", items=items("auto", "y", "z", "x"), default="auto")
        end_sites: BoolProperty(name="Leaf tails are end sites", default=True,
                                description=END_SITES)  # fmt: skip

        def execute(self, context):
            return _run(self, context, lambda c, p: _foot(self, c, p))

    class _Span:
        bone: StringProperty(name="Bone")
        target: StringProperty(name="Target", description="The object (an empty) to follow")
        frame_start: IntProperty(name="Start", default=1)
        frame_end: IntProperty(name="End", default=10)
        blend: FloatProperty(name="Blend (frames)", default=5.0, min=0.0)

    class IKRIG_OT_pin(_Span, bpy.types.Operator):
        """A bone follows an empty over a range of frames, the body following"""

        bl_idname = "ikrig.pin"
        bl_label = "Pin bone"
        bl_options = {"REGISTER", "UNDO"}

        def execute(self, context):
            return _run(self, context, lambda c, p: _pin(self, c, p))

    class IKRIG_OT_look_at(_Span, bpy.types.Operator):
        """The head looks at an empty over a range of frames"""

        bl_idname = "ikrig.look_at"
        bl_label = "Look at"
        bl_options = {"REGISTER", "UNDO"}

        def execute(self, context):
            return _run(self, context, lambda c, p: _look(self, c, p))

    class IKRIG_PT_panel(bpy.types.Panel):
        bl_label = "ikrig"
        bl_space_type = "VIEW_3D"
        bl_region_type = "UI"
        bl_category = "ikrig"

        def draw(self, context):
            s = context.scene.ikrig
            col = self.layout.column()
            col.label(text="Foot placement")
            for name in ("ground", "mode", "legs", "datum", "up", "end_sites"):
                col.prop(s, name)
            op = col.operator("ikrig.foot_placement")
            op.ground = s.ground.name if s.ground else ""
            op.mode, op.legs, op.datum, op.up = s.mode, s.legs, s.datum, s.up
            op.end_sites = s.end_sites
            col.separator()
            col.label(text="Pin / look at")
            for name in ("bone", "target", "frame_start", "frame_end", "blend"):
                col.prop(s, name)
            row = col.row()
            for idname in ("ikrig.pin", "ikrig.look_at"):
                op = row.operator(idname)
                op.bone, op.target = s.bone, s.target.name if s.target else ""
                op.frame_start, op.frame_end, op.blend = s.frame_start, s.frame_end, s.blend
            for line in s.report.splitlines():
                col.label(text=line)

    return (IKRIG_PG_settings, IKRIG_OT_foot_placement, IKRIG_OT_pin, IKRIG_OT_look_at,
            IKRIG_PT_panel)  # fmt: skip


def register() -> None:
    """Register the classes and ``Scene.ikrig`` (the panel's settings)."""
    import bpy  # type: ignore[import-not-found,import-untyped,unused-ignore]

    if _REGISTERED:
        return
    made = classes()
    for cls in made:
        bpy.utils.register_class(cls)
    bpy.types.Scene.ikrig = bpy.props.PointerProperty(type=made[0])
    _REGISTERED.extend(made)


def unregister() -> None:
    """Unregister what :func:`register` registered."""
    import bpy  # type: ignore[import-not-found,import-untyped,unused-ignore]

    if hasattr(bpy.types.Scene, "ikrig"):
        del bpy.types.Scene.ikrig
    for cls in reversed(_REGISTERED):
        bpy.utils.unregister_class(cls)
    _REGISTERED.clear()
