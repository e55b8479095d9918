"""Foot placement of an armature's action on a mesh object of the scene, as ``ikrig foot``
does it on a clip file and a mesh file.

The ground is the mesh object as the scene shows it: evaluated with its modifiers, in its
world transform, in the scene's units, turned Y up (:func:`mesh_ground`). The clip is the
armature's action (:func:`~ikrig.blender.armature.read_motion`). Then, as
:func:`~ikrig.app.placement.place_clip` does: the up axis (``"auto"``:
:func:`~ikrig.character.detect_up`), the legs (by name and topology, or named), a clip that
walks in place gets its contacts relative to its belt and no foot lock, and
:func:`~ikrig.foot.place_feet` runs the mode asked for, with the datum asked for. The report
is :func:`~ikrig.app.report.foot_report`'s, the one ``ikrig foot --report`` writes.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError
from ..math.axes import check_up, points_to_y_up
from ..pose import Motion
from .rig import world_frame

__all__ = ["FootJob", "Placement", "mesh_ground", "place_motion", "summary_lines"]


class FootJob(NamedTuple):
    """What the operator asks for, as ``ikrig foot`` takes it: ``mode`` (``full``,
    ``goal-blend``, ``trace-offset``), ``legs`` (``"hip,knee,ankle[,toe];..."`` or empty:
    found by name and topology), ``datum`` (``clip``: the ground's zero meets the clip's
    floor; ``absolute``: the ground as it stands), ``up`` (``auto`` or an axis of the
    clip's world after Blender's Z-up is turned into Y-up: ``y`` for a character that
    stands in Blender)."""

    mode: str = "full"
    legs: str = ""
    datum: str = "clip"
    up: str = "auto"


class Placement(NamedTuple):
    """A placed clip: ``motion`` (in the world it was read in, ready to be written back),
    ``report`` and ``table`` (:func:`~ikrig.app.report.foot_report`), ``warnings`` (the
    pipeline's warnings as one-line texts), ``result`` (the
    :class:`~ikrig.foot.offline.FootResult`, Y up) and ``source`` (the clip it was measured
    against, Y up)."""

    motion: Motion
    report: dict
    table: str
    warnings: list[str]
    result: Any
    source: Motion


def mesh_ground(obj: Any, depsgraph: Any, unit_scale: float = 1.0) -> Any:
    """A :class:`~ikrig.ground.MeshGround` of a mesh object as evaluated (modifiers, world
    transform), in metres, Y up.

    Raises:
        InputError: not a mesh object, or a mesh without faces.
    """
    from ..ground import MeshGround

    if obj is None or getattr(obj, "type", None) != "MESH":
        raise InputError(f"ground: {getattr(obj, 'name', obj)!r} is not a mesh object")
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        mesh.calc_loop_triangles()
        verts = np.empty(3 * len(mesh.vertices), dtype=np.float64)
        mesh.vertices.foreach_get("co", verts)
        tris = np.empty(3 * len(mesh.loop_triangles), dtype=np.int64)
        mesh.loop_triangles.foreach_get("vertices", tris)
    finally:
        evaluated.to_mesh_clear()
    if not len(tris):
        raise InputError(f"ground: mesh {obj.name!r} has no faces")
    m = np.array([list(row) for row in evaluated.matrix_world], dtype=np.float64)
    world = verts.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]
    frame = world_frame(np.eye(4), unit_scale)
    return MeshGround(frame.apply(world), tris.reshape(-1, 3))


DEFAULT_JOB = FootJob()


def place_motion(motion: Motion, ground: Any, job: FootJob = DEFAULT_JOB) -> Placement:
    """Place the feet of ``motion`` (read from Blender: Y up, metres) on ``ground`` (same
    world) as ``ikrig foot`` would (module docstring).

    Raises:
        InputError: legs not found, a ground under no foot in any frame, a bad mode, datum
            or up axis (the messages are the pipeline's).
    """
    from ..app.report import foot_report
    from ..character import detect_up, find_legs, from_y_up, to_y_up
    from ..foot import FootOptions, LockOptions, place_feet
    from ..foot.travel import treadmill_contacts
    from ..ground.views import RaisedGround

    up = detect_up(motion) if job.up == "auto" else check_up(job.up)
    source = to_y_up(motion, up)
    ground = _turned_ground(ground, up)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fk = source.fk()
        legs = find_legs(source.skeleton, job.legs or None, fk[1])
        options = FootOptions(mode=job.mode, datum=job.datum)
        contacts = treadmill_contacts(source, legs, options.contacts, fk=fk)
        if contacts is not None:
            options = options.replace(lock=LockOptions(enabled=False))
        result = place_feet(source, ground, options, legs, contacts, fk=fk)
    world = RaisedGround(ground, result.datum) if result.datum else ground
    report, table = foot_report({job.mode: result}, source, world)
    said = [" ".join(str(w.message).split()) for w in caught]
    return Placement(from_y_up(result.motion, up), report, table, said, result, source)


def _turned_ground(ground: Any, up: str) -> Any:
    """``ground`` (a MeshGround) turned as the clip is by ``to_y_up(.., up)``."""
    if up == "y":
        return ground
    from ..ground import MeshGround

    return MeshGround(points_to_y_up(ground.vertices, up), ground.faces)


def summary_lines(placement: Placement) -> list[str]:
    """A few lines for the panel and the info log: legs, contacts, and the result beside
    the baseline (penetration, float and skate, in % of a leg)."""
    rep = placement.report
    rows = rep["rows"]
    lines = [f"legs: {rep['legs']}", f"leg length {rep['leg_length']:.4g}, {rep['frames']} frames"]
    for label, row in rows.items():
        values = [row.get(k) for k in ("pen_p95", "float_p95", "skate")]
        text = ", ".join("-" if v is None else f"{v:.2f}" for v in values)
        lines.append(f"{label}: pen p95, float p95, skate = {text} (% leg)")
    return lines
