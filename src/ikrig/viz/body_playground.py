"""The whole-body playground in the browser (viser, ``[viewer]`` extra).

``ikrig playground --body [CLIP]`` serves a page with a character (a clip's frame, or the
built-in walk's) and a draggable handle for each of its hands, each of its feet and the
point its head looks at. Dragging one solves the whole skeleton at once
(:func:`ikrig.solvers.body.solve_body`): the hands and feet are
:class:`~ikrig.solvers.body.PositionGoal` s on the wrists and ankles, the look target a
:class:`~ikrig.solvers.body.LookAtGoal` on the head whose turn its ancestors share
(:func:`ikrig.solvers.look.look_chain`). The panel turns each goal on and off, picks the
root's freedom (free, translate, pinned), how many joints share the head's turn, and the
frame whose pose is the preferred pose, and puts the handles back on the pose. Drawn: the
solved skeleton, the preferred pose as a grey ghost, a red line from each joint to its goal
when it falls short, and the head's eye ray. The info lists each goal's error and whether
it is reached.

Every solve starts from the frame's own pose (the preferred pose), so the result depends
only on the handles and the settings. :meth:`BodyPlayground.move` moves a handle from Python
(as a drag does) and returns the solve. Only the page it serves may connect to it (see
:mod:`ikrig.viz._viser`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..app.head import head_forward
from ..character.hands import find_hands
from ..character.head import head_or_top
from ..character.legs import Legs, find_legs
from ..errors import IkrigError, InputError
from ..math.quat import quat_rotate
from ..pose import Motion
from ..skeleton import Skeleton
from ..solvers.body import (
    ROOT_MODES,
    BodyOptions,
    BodyResult,
    Goal,
    LookAtGoal,
    PositionGoal,
    solve_body,
)
from ..solvers.look import DEFAULT_CHAIN_LENGTH, look_chain
from . import _viser as V
from .geometry import body_joint, bone_segments

__all__ = ["BodyPlayground", "Effector", "body_effectors", "run_body_playground"]

LOOK = "look"
ITERATIONS = 400
"""Iterations per solve at most: one pose at a time, a few milliseconds each, so more than
a clip's frames get (``BodyOptions`` default 100): a handle dragged far from the pose
converges in one solve."""
HAND, FOOT, HEAD = "#f77f00", "#2a9d8f", "#8338ec"
HELP = (
    "Drag a handle: orange the hands, teal the feet, purple what the head looks at. The "
    "whole body follows; the grey ghost is the preferred pose (the frame as recorded), red "
    "lines join a joint to a goal it cannot reach."
)


@dataclass(frozen=True)
class Effector:
    """A draggable goal of the body playground: its ``name`` ("left hand", "right foot",
    "look"), the ``joint`` (index) it moves, its handle's ``color``, and ``offset_local``,
    the point of the joint's frame the goal holds (a leaf hand's end site, where the hand
    is; ``None``: the joint itself)."""

    name: str
    joint: int
    color: str
    offset_local: tuple[float, float, float] | None = None


def _tip(skeleton: Skeleton, joint: int) -> tuple[float, float, float] | None:
    """The end site of a leaf joint that has exactly one, else None."""
    if skeleton.children(joint):
        return None
    sites = np.flatnonzero(np.asarray(skeleton.end_site_parents) == joint)
    if len(sites) != 1:
        return None
    x, y, z = (float(v) for v in skeleton.end_site_offsets[sites[0]])
    return (x, y, z)


def body_effectors(motion: Motion, legs: Legs | None) -> tuple[Effector, ...]:
    """The handles of a character (a single pose, Y up): a hand per side
    (:func:`~ikrig.character.hands.find_hands`), a foot per leg (``legs``' ankles; a
    quadruped's four), and the head's look target (the head by name, else the top of the
    spine: :func:`~ikrig.character.head.head_or_top`).

    Raises:
        InputError: none of them found.

    Example:
        >>> from ikrig.data import walk_clip
        >>> from ikrig.character.legs import find_legs
        >>> pose = walk_clip(seconds=0.5)[0]
        >>> [e.name for e in body_effectors(pose, find_legs(pose.skeleton))]
        ['left hand', 'right hand', 'left foot', 'right foot', 'look']
    """
    sk = motion.skeleton
    head = head_or_top(sk, motion.positions_world())
    hands = find_hands(sk, legs, head)
    out = [Effector(f"{side} hand", j, HAND, _tip(sk, j)) for side, j in hands.items()]
    for leg in legs.legs if legs is not None else ():
        out.append(Effector(f"{leg.side} foot", leg.ankle, FOOT))
    if head >= 0:
        out.append(Effector(LOOK, head, HEAD))
    if not out:
        raise InputError("playground: no hands, feet or head found on the skeleton")
    return tuple(out)


def look_joints(pose: Motion, head: int, legs: Legs | None) -> tuple[int, ...]:
    """The joints that may share the head's turn toward its look target, head first: its
    look chain (:func:`~ikrig.solvers.look.look_chain`, at most 8 joints) up to the first
    joint that carries a leg (a quadruped's front legs hang from its chest: turning the
    chest to look would lift the front feet off their goals)."""
    sk = pose.skeleton
    carriers = set()
    for leg in legs.legs if legs is not None else ():
        carriers |= {leg.hip, *sk.ancestors(leg.hip)}
    out: list[int] = []
    for j in look_chain(pose, head, 8):
        if j in carriers and out:
            break
        out.append(j)
    return tuple(out)


class BodyPlayground:
    """The whole-body playground server.

    Args:
        motion: the character: a clip ``(F,)`` or a single pose, Y up (``ikrig.character.up``
            turns a clip into Y up).
        frame: the clip's frame shown first (its pose is the preferred pose).
        host, port: where to serve (``port=0``: any free port).
        server: an existing ``viser.ViserServer`` to use instead.

    Attributes:
        server, url: the viser server and its address.
        effectors: the :class:`Effector` s, in the panel's order.
        targets: ``{name: (3,)}`` each handle's world position.
        pose: the preferred pose (the frame's, a single-pose :class:`~ikrig.pose.Motion`).
        result: the last :class:`~ikrig.solvers.body.BodyResult`, over :attr:`goals`.
        goals: the goals of the last solve (the effectors turned on).
        positions_world: ``(J, 3)`` the solved pose's joints.
    """

    def __init__(
        self,
        motion: Motion,
        *,
        frame: int = 0,
        host: str = "127.0.0.1",
        port: int = 8080,
        server=None,
    ):
        if not isinstance(motion, Motion) or len(motion.batch_shape) > 1:
            raise InputError("motion: expected a Motion, one pose or a clip (F,)")
        frames = motion.num_frames if motion.batch_shape else 1
        if frames == 0:
            raise InputError("motion: the clip has no frames")
        if not 0 <= frame < frames:
            raise InputError(f"frame: expected 0 .. {frames - 1}, got {frame}")
        self.motion = motion
        self._lock = threading.RLock()
        first = motion[0] if motion.batch_shape else motion
        sk = motion.skeleton
        try:
            poses = motion.positions_world().reshape(-1, sk.num_joints, 3)
            legs: Legs | None = find_legs(sk, pose_world=poses)
        except IkrigError:
            legs = None
        self.effectors = body_effectors(first, legs)
        self.unit = legs.leg_length if legs is not None else _height(first.positions_world())
        head = next((e.joint for e in self.effectors if e.name == LOOK), -1)
        self._look: tuple[int, ...] = ()
        self._forward = np.array([0.0, 0.0, 1.0])
        if head >= 0:
            self._look = look_joints(first, head, legs)
            self._forward = head_forward(motion, head)[0]
        self._pelvis = body_joint(sk, legs)

        self.server = server if server is not None else V.start_server(host, port)
        self.url = V.url(self.server)
        g, s = self.server.gui, self.server.scene
        self.gui_frame = g.add_slider("frame", 0, max(frames - 1, 1), 1, frame,
                                      disabled=frames == 1)  # fmt: skip
        self.gui_root = g.add_dropdown("root", ROOT_MODES, initial_value="free")
        most = max(len(self._look), 1)
        first_chain = min(DEFAULT_CHAIN_LENGTH, most)
        self.gui_chain = g.add_slider("look chain", 1, max(most, 2), 1, first_chain,
                                      disabled=most < 2)  # fmt: skip
        self.gui_on = {e.name: g.add_checkbox(e.name, True) for e in self.effectors}
        self.gui_reset = g.add_button("handles back on the pose")
        self.gui_help = g.add_markdown(HELP)
        self.gui_info = g.add_markdown("")
        size = 0.35 * self.unit
        self.handles = {}
        for e in self.effectors:
            h = s.add_transform_controls(
                f"/goal/{_slug(e.name)}", scale=size, disable_rotations=True
            )
            s.add_icosphere(f"/goal/{_slug(e.name)}/marker", radius=0.05 * self.unit,
                            color=V.rgb(e.color))  # fmt: skip
            self.handles[e.name] = h
        self.bones = V.Lines(s, "/body/bones", V.rgb("#1d3557"), 0.03 * self.unit)
        self.joints = V.Points(s, "/body/joints", V.rgb("#457b9d"), 0.06 * self.unit)
        self.ghost = V.Lines(s, "/body/ghost", V.rgb("#adb5bd"), 0.012 * self.unit)
        self.misses = V.Lines(s, "/body/misses", V.rgb("#d62828"), 0.01 * self.unit)
        self.eye = V.Lines(s, "/body/eye", V.rgb(HEAD), 0.008 * self.unit)
        self.targets: dict[str, np.ndarray] = {}
        self.result: BodyResult | None = None
        self.goals: tuple[Goal, ...] = ()
        self._quiet = False
        self._show_frame(frame)
        for name, h in self.handles.items():
            h.on_update(lambda _e, name=name: self._dragged(name))
        self.gui_frame.on_update(lambda _: self._show_frame(int(self.gui_frame.value)))
        self.gui_reset.on_click(lambda _: self.reset())
        self.gui_root.on_update(lambda _: self.solve())
        self.gui_chain.on_update(lambda _: self.solve())
        for box in self.gui_on.values():
            box.on_update(lambda _: self.solve())

    # ------------------------------------------------------------------ the user's moves
    def _dragged(self, name: str) -> None:
        if self._quiet:
            return
        with self._lock:
            self.targets[name] = np.asarray(self.handles[name].position, dtype=np.float64)
            self.solve()

    def move(self, name: str, at_world: ArrayLike) -> BodyResult:
        """Move handle ``name`` to ``at_world`` ``(3,)`` (world, Y up) as a drag does, solve
        and return the result.

        Raises:
            InputError: an unknown handle name.
        """
        if name not in self.handles:
            raise InputError(f"handle: expected one of {', '.join(self.handles)}, got {name!r}")
        with self._lock:
            at = np.asarray(at_world, dtype=np.float64).reshape(3)
            self.targets[name] = at
            self._place(name, at)
            return self.solve()

    def reset(self) -> BodyResult:
        """Put every handle back where the preferred pose has its joint (the look target
        ahead of the head, along its forward axis), solve and return the result."""
        with self._lock:
            rot, p = self.pose.fk()
            for e in self.effectors:
                at = _point(e, rot, p)
                if e.name == LOOK:
                    at = at + quat_rotate(rot[e.joint], self._forward) * self.unit
                self.targets[e.name] = np.asarray(at, dtype=np.float64)
                self._place(e.name, self.targets[e.name])
            return self.solve()

    def _show_frame(self, frame: int) -> None:
        with self._lock:
            self.pose = self.motion[frame] if self.motion.batch_shape else self.motion
            p = self.pose.positions_world()
            self.ghost.set(bone_segments(self.motion.skeleton.parents, p))
            centre = p[self._pelvis]
            self.server.initial_camera.look_at = tuple(float(x) for x in centre)
            self.server.initial_camera.position = tuple(
                float(x) for x in centre + np.array([0.6, 0.4, 3.0]) * self.unit
            )
            self.reset()

    def _place(self, name: str, at: np.ndarray) -> None:
        self._quiet = True  # setting a handle's position from here is not a drag
        try:
            self.handles[name].position = tuple(float(x) for x in at)
        finally:
            self._quiet = False

    # ----------------------------------------------------------------------- the solve
    def _goals(self, on: tuple[Effector, ...]) -> list[Goal]:
        names = self.motion.skeleton.names
        out: list[Goal] = []
        for e in on:
            at = self.targets[e.name]
            if e.name == LOOK:
                n = int(self.gui_chain.value)
                chain = tuple(names[j] for j in reversed(self._look[1:n]))
                out.append(LookAtGoal(names[e.joint], at, self._forward, chain=chain))
            else:
                out.append(PositionGoal(names[e.joint], at, offset_local=e.offset_local))
        return out

    def solve(self) -> BodyResult:
        """Solve the body to the handles turned on, redraw, and return the result."""
        with self._lock:
            # the effectors turned on, read once: the goals and the drawing follow them
            on = tuple(e for e in self.effectors if bool(self.gui_on[e.name].value))
            goals = self._goals(on)
            opts = BodyOptions(max_iterations=ITERATIONS, root=str(self.gui_root.value))
            r = solve_body(self.pose, goals, opts)
            self.result, self.goals = r, tuple(goals)
            self._draw(r, on)
            return r

    @property
    def positions_world(self) -> np.ndarray:
        if self.result is None:
            raise IkrigError("playground: nothing solved yet")
        return self.result.motion.positions_world()

    def _draw(self, r: BodyResult, on: tuple[Effector, ...]) -> None:
        sk = self.motion.skeleton
        rot, p = r.motion.fk()
        misses, eye, lines = [], np.zeros((0, 2, 3)), []
        for k, (e, goal) in enumerate(zip(on, self.goals)):
            j, name = e.joint, e.name
            ok = bool(r.reached[k])
            if isinstance(goal, LookAtGoal):
                reach = float(np.linalg.norm(self.targets[name] - p[j]))
                eye = np.stack([p[j], p[j] + quat_rotate(rot[j], self._forward) * reach])[None]
                err = f"{np.degrees(float(r.rotation_error[k])):.3g}°"
            else:
                if not ok:
                    misses.append(np.stack([_point(e, rot, p), self.targets[name]]))
                err = f"{100.0 * float(r.position_error[k]) / self.unit:.3g} % of a leg"
            lines.append(f"- {name}: {err}, {'reached' if ok else '**not reached**'}")
        with self.server.atomic():
            self.bones.set(bone_segments(sk.parents, p))
            self.joints.set(p)
            self.misses.set(np.asarray(misses).reshape(-1, 2, 3))
            self.eye.set(eye)
            for e in self.effectors:
                self.handles[e.name].visible = e in on
            its = int(np.asarray(r.iterations))
            self.gui_info.content = (
                f"**{len(self.goals)} goals**, {its} iterations  \n" + "\n".join(lines)
                if lines
                else "no goal on: the preferred pose, as recorded"
            )

    def close(self) -> None:
        self.server.stop()


def _point(e: Effector, rot_world: np.ndarray, p_world: np.ndarray) -> np.ndarray:
    """``(3,)`` the point effector ``e`` holds in a pose's world transforms."""
    at = p_world[e.joint]
    if e.offset_local is None:
        return at
    return at + quat_rotate(rot_world[e.joint], np.asarray(e.offset_local))


def _height(p: np.ndarray) -> float:
    span = float(np.ptp(p[:, 1])) if len(p) else 0.0
    return span / 2.0 if span > 0 else 1.0


def _slug(name: str) -> str:
    return name.replace(" ", "_")


def run_body_playground(
    motion: Motion, *, frame: int = 0, host="127.0.0.1", port=8080, block=True, echo=print
) -> BodyPlayground:
    """Start the body playground on ``motion`` (Y up); with ``block`` serve until Ctrl-C."""
    app = BodyPlayground(motion, frame=frame, host=host, port=port)
    if block:
        V.serve_forever(app, echo)
    return app
