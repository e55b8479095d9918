"""The IK playground in the browser (viser, ``[viewer]`` extra).

``ikrig playground`` serves a page with a chain, a target and a pole, each draggable with a
transform gizmo; the chain follows live. The panel chooses the solver (two-bone, CCD,
FABRIK, follow, DLS), the number of bones and the joint constraints (cones, hinges, 2D
limits, with their angle), and has sliders for iterations, tolerance, soften and weight.
The constraints are drawn at each joint (cone rims, hinge arcs), and the current error,
iteration count and whether the target was reached are shown. Only the page it serves may
connect to it (see :mod:`ikrig.viz._viser`).

Every solve starts from the chain's rest pose (the position-level solvers' convention: the
input pose is the rest pose the constraints refer to), so the result depends only on the
target and the settings. :meth:`Playground.set_target` moves the target from Python (as a
drag does) and returns the solve.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..constraints import AngleLimit2D, Cone, Hinge
from ..math.quat import quat_mul, quat_rotate
from ..solvers.result import SolveResult
from . import _viser as V
from ._solve import solve_chain, two_bone_available
from .geometry import arc_points, cone_rim
from .options import SolveLimits

__all__ = ["Playground", "rest_chain", "run_playground"]

SOLVER_CHOICES = ("two-bone", "CCD", "FABRIK", "follow", "DLS")
SOLVER_NAMES = {
    "two-bone": "two-bone",
    "CCD": "ccd",
    "FABRIK": "fabrik",
    "follow": "follow",
    "DLS": "dls",
}
CONSTRAINT_CHOICES = ("none", "cone", "hinge (z)", "2D limits")
TIP, POLE = "#f77f00", "#8338ec"  # the chain's tip (orange; it hides the target it reaches)
HELP = (
    "Drag the target with its arrows: the chain's orange tip follows it "
    "(for two-bone, drag the purple pole too)."
)


def rest_chain(bones: int) -> np.ndarray:
    """``(bones + 1, 3)`` the playground's rest chain: bones of 1.0, 0.85, 0.72, ... in the
    XY plane, starting at the origin and bending gently down (so it is never straight)."""
    lengths = 0.85 ** np.arange(bones)
    if bones == 2:
        lengths = np.array([1.0, 0.95])
    angles = np.radians(15.0) - np.radians(25.0) * np.arange(bones) / max(bones - 1, 1)
    d = np.stack([np.cos(angles), np.sin(angles), np.zeros(bones)], axis=-1) * lengths[:, None]
    return np.concatenate([np.zeros((1, 3)), np.cumsum(d, axis=0)])


def make_constraints(kind: str, bones: int, limit_deg: float):
    """``bones`` constraints of one kind (``None`` for ``"none"``)."""
    if kind == "cone":
        return [Cone.degrees(limit_deg) for _ in range(bones)]
    if kind == "hinge (z)":
        return [Hinge.degrees((0.0, 0.0, 1.0), -limit_deg, limit_deg) for _ in range(bones)]
    if kind == "2D limits":
        return [AngleLimit2D.degrees(-limit_deg, limit_deg) for _ in range(bones)]
    return None


def world_rotations(rotations_local) -> np.ndarray:
    """``(n, 4)`` world rotations of the solved joints from their local ones (root first,
    the root's parent frame being the identity)."""
    rl = np.asarray(rotations_local, dtype=np.float64)
    out = np.empty_like(rl)
    acc = np.array([0.0, 0.0, 0.0, 1.0])
    for i in range(len(rl)):
        acc = quat_mul(acc, rl[i])
        out[i] = acc
    return out


def constraint_curves(constraints, rest, solved, rotations_local, size: float = 0.35):
    """Polylines drawing each joint's constraint on the solved chain.

    Cones: the rim and four lines from the apex; hinges and 2D limits: the allowed arc of the
    bone direction about the (turned) axis, with its two end spokes. Returns a list of
    ``(k, 3)`` polylines.
    """
    if constraints is None or rotations_local is None:
        return []
    rest = np.asarray(rest, dtype=np.float64)
    p = np.asarray(solved, dtype=np.float64)
    rw = world_rotations(rotations_local)
    ident = np.array([0.0, 0.0, 0.0, 1.0])
    curves = []
    for i, c in enumerate(constraints):
        if c is None:
            continue
        parent_rot = rw[i - 1] if i > 0 else ident
        bone_rest = rest[i + 1] - rest[i]
        length = float(np.linalg.norm(bone_rest))
        r = size * length
        if i == 0:
            ref = bone_rest / max(length, 1e-12)
        else:
            d = p[i] - p[i - 1]
            ref = d / max(float(np.linalg.norm(d)), 1e-12)
        if isinstance(c, Cone):
            axis = quat_rotate(parent_rot, np.asarray(c.axis)) if c.axis is not None else ref
            rim = cone_rim(p[i], axis, c.limit, r)
            curves.append(np.vstack([rim, rim[:1]]))
            for k in range(0, len(rim), max(len(rim) // 4, 1)):
                curves.append(np.stack([p[i], rim[k]]))
            continue
        if isinstance(c, Hinge):
            axis = quat_rotate(parent_rot, np.asarray(c.axis))
            zero = quat_rotate(parent_rot, bone_rest / max(length, 1e-12))
            lo, hi = (c.min_angle, c.max_angle) if c.min_angle is not None else (-math.pi, math.pi)
        elif isinstance(c, AngleLimit2D):
            axis = quat_rotate(parent_rot, np.asarray(c.normal))
            zero, lo, hi = ref, c.min_angle, c.max_angle
        else:
            continue
        axis = axis / np.linalg.norm(axis)
        u = zero - axis * float(zero @ axis)
        if np.linalg.norm(u) < 1e-9:
            continue
        u /= np.linalg.norm(u)
        v = np.cross(axis, u)
        arc = arc_points(p[i], u, v, lo, hi, r, 40)
        curves.append(np.vstack([p[i], arc, p[i]]))
    return curves


class Playground:
    """The IK playground server.

    Args:
        host, port: where to serve (``port=0``: any free port).
        server: an existing ``viser.ViserServer`` to use instead.
        solver: initial solver: a label of :data:`SOLVER_CHOICES`, or its name as ``ikrig
            plot chain`` takes it (``"fabrik"``), in any case.
        bones: initial chain length (two-bone always uses 2).

    Attributes:
        server, url: the viser server and its address.
        result: the last :class:`~ikrig.solvers.result.SolveResult`; ``positions_world`` its
            chain ``(n + 1, 3)``; ``target`` the target ``(3,)``.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        server=None,
        solver: str = "FABRIK",
        bones: int = 4,
    ):
        self.server = server if server is not None else V.start_server(host, port)
        self.url = V.url(self.server)
        self._lock = threading.RLock()
        choices = SOLVER_CHOICES if two_bone_available() else SOLVER_CHOICES[1:]
        by_name = {name: label for label, name in SOLVER_NAMES.items()}
        solver = by_name.get(solver.lower(), solver)  # "fabrik" as plot chain names it
        if solver not in choices:
            solver = "FABRIK"
        g, s = self.server.gui, self.server.scene
        self.gui_solver = g.add_dropdown("solver", choices, initial_value=solver)
        self.gui_bones = g.add_slider("bones", 2, 8, 1, int(bones))
        self.gui_constraint = g.add_dropdown(
            "constraints", CONSTRAINT_CHOICES, initial_value="none"
        )
        self.gui_limit = g.add_slider("limit (deg)", 5.0, 170.0, 5.0, 60.0)
        self.gui_iters = g.add_slider("iterations", 1, 200, 1, 50)
        self.gui_tol = g.add_slider("tolerance (log10)", -5.0, -1.0, 0.25, -3.0)
        self.gui_soften = g.add_slider("soften (two-bone)", 0.5, 1.0, 0.01, 1.0)
        self.gui_weight = g.add_slider("weight", 0.0, 1.0, 0.01, 1.0)
        self.gui_help = g.add_markdown(HELP)
        self.gui_info = g.add_markdown("")
        self.target = np.array([1.3, 1.2, 0.4])
        self.pole = np.array([1.0, 0.0, 1.5])
        self.gizmo_target = s.add_transform_controls(
            "/target", scale=0.6, disable_rotations=True, position=tuple(self.target)
        )
        s.add_icosphere("/target/marker", radius=0.06, color=V.rgb("#d62828"))
        self.gizmo_pole = s.add_transform_controls(
            "/pole", scale=0.3, disable_rotations=True, position=tuple(self.pole)
        )
        s.add_icosphere("/pole/marker", radius=0.045, color=V.rgb(POLE))
        s.add_grid(
            "/grid",
            width=6.0,
            height=6.0,
            plane="xz",
            cell_size=0.25,
            section_size=1.0,
            position=(0.5, -1.0, 0.0),
        )
        self.bones = V.Lines(s, "/chain/bones", V.rgb("#1d3557"), 0.035)
        self.joints = V.Points(s, "/chain/joints", V.rgb("#457b9d"), 0.1)
        self.rest_lines = V.Lines(s, "/chain/rest", V.rgb("#adb5bd"), 0.012)
        self.effector = V.Points(s, "/chain/effector", V.rgb(TIP), 0.13)
        self.residual = V.Lines(s, "/chain/residual", V.rgb("#d62828"), 0.008)
        self.pole_line = V.Lines(s, "/chain/pole", V.rgb(POLE), 0.008)
        self.limits = V.Lines(s, "/chain/limits", V.rgb("#2a9d8f"), 0.012)
        s.add_icosphere("/chain/root", radius=0.07, color=V.rgb("#1d3557"))
        self.server.initial_camera.position = (1.2, 1.3, 4.2)
        self.server.initial_camera.look_at = (1.0, 0.5, 0.0)
        self.gizmo_target.on_update(lambda e: self._moved())
        self.gizmo_pole.on_update(lambda e: self._moved())
        for h in (
            self.gui_solver,
            self.gui_bones,
            self.gui_constraint,
            self.gui_limit,
            self.gui_iters,
            self.gui_tol,
            self.gui_soften,
            self.gui_weight,
        ):
            h.on_update(lambda _: self.solve())
        self.result: SolveResult | None = None
        self.solve()

    def _moved(self):
        self.target = np.asarray(self.gizmo_target.position, dtype=np.float64)
        self.pole = np.asarray(self.gizmo_pole.position, dtype=np.float64)
        self.solve()

    def set_target(self, target, pole=None):
        """Move the target (and the pole) as a drag would, solve, and return the result."""
        with self._lock:
            self.gizmo_target.position = tuple(float(x) for x in target)
            if pole is not None:
                self.gizmo_pole.position = tuple(float(x) for x in pole)
            self.target = np.asarray(target, dtype=np.float64)
            if pole is not None:
                self.pole = np.asarray(pole, dtype=np.float64)
            return self.solve()

    @property
    def positions_world(self) -> np.ndarray:
        assert self.result is not None  # solved in __init__
        return np.asarray(self.result.positions_world)

    def solve(self):
        """Solve with the current settings and redraw; returns the SolveResult."""
        with self._lock:
            label = str(self.gui_solver.value)
            name = SOLVER_NAMES[label]
            bones = 2 if name == "two-bone" else int(self.gui_bones.value)
            rest = rest_chain(bones)
            cons = None
            if name != "two-bone":
                cons = make_constraints(
                    str(self.gui_constraint.value), bones, float(self.gui_limit.value)
                )
            tol = 10.0 ** float(self.gui_tol.value)
            r = solve_chain(
                name,
                rest,
                self.target,
                cons,
                limits=SolveLimits(int(self.gui_iters.value), tol),
                pole_world=self.pole,
                weight=float(self.gui_weight.value),
                soften=float(self.gui_soften.value),
            )
            self.result = r
            p = np.asarray(r.positions_world, dtype=np.float64)
            curves = constraint_curves(cons, rest, p, r.rotations_local)
            with self.server.atomic():
                self.bones.set(np.stack([p[:-1], p[1:]], axis=1))
                self.joints.set(p[:-1])
                self.rest_lines.set(np.stack([rest[:-1], rest[1:]], axis=1))
                self.effector.set(p[-1:])
                self.residual.set(np.stack([p[-1], self.target])[None])
                self.pole_line.enabled = name == "two-bone"
                self.pole_line.set(np.stack([p[1], self.pole])[None])
                self.gizmo_pole.visible = name == "two-bone"
                self.limits.set(
                    np.concatenate([np.stack([c[:-1], c[1:]], 1) for c in curves])
                    if curves
                    else np.zeros((0, 2, 3))
                )
                err = float(np.asarray(r.error))
                its = int(np.asarray(r.iterations))
                ok = bool(np.asarray(r.reached))
                self.gui_info.content = (
                    f"**{label}**, {bones} bones  \nerror **{err:.4g}**, iterations **{its}**, "
                    f"{'reached' if ok else 'not reached'}"
                )
            return r

    def close(self) -> None:
        self.server.stop()


def run_playground(
    *, host="127.0.0.1", port=8080, solver="FABRIK", bones=4, block=True, echo=print
) -> Playground:
    """Start the playground; with ``block`` serve until Ctrl-C."""
    app = Playground(host=host, port=port, solver=solver, bones=bones)
    if block:
        V.serve_forever(app, echo)
    return app
