"""The peer of ``bench_body.py``: whole-body IK with mink (differential IK on MuJoCo).

mink is a benchmark peer only (``pip install mink mujoco``), never an ikrig dependency: this
module is imported by the benchmark alone.

The model. :func:`skeleton_mjcf` turns an ikrig :class:`~ikrig.skeleton.Skeleton` into an
MJCF model: one body per joint at its rest offset in its parent body (no body rotation), a
free joint on every root and a ball joint on every other joint, a site at each joint's origin,
and an explicit inertial (mass 1) per body so MuJoCo accepts the moving bodies; no geoms, so
no collisions. A MuJoCo body's frame is then the ikrig joint's frame: a ball joint's
quaternion is the joint's local rotation, a free joint's position and quaternion are the
root's local translation and rotation (MuJoCo stores quaternions ``w, x, y, z``, ikrig
``x, y, z, w``; :meth:`MinkPeer.motion_from_qpos` and :meth:`MinkPeer.qpos_from_motion`
convert). The positions of non-root joints are the rest offsets: a clip that animates them
(BVH position channels below the root) cannot be followed exactly by either side of the
benchmark, and is flagged there.

The solve. One :class:`mink.FrameTask` per joint that has a goal in the clip (position cost
``1 / unit`` so that the residual is in units of a leg, orientation cost 1 per radian, both 0
on the frames where that goal is absent; Levenberg-Marquardt damping
:data:`FRAME_LM_DAMPING`) and one :class:`mink.PostureTask` toward the preferred pose with
cost :data:`POSTURE_COST` (the prior, as ikrig's stiffness). mink's frame error is the SE(3)
logarithm, whose translation part mixes in the rotation error: a position-only goal gets the
frame's current rotation as its target rotation before every step, so that its error is the
position error alone. Each frame iterates ``solve_ik`` (the DAQP solver, no limits, global
damping :data:`DAMPING`) then ``integrate_inplace``, gain 1: one damped Gauss-Newton step of
the weighted least squares per iteration. ``dt`` only scales the velocity that
``integrate_inplace`` multiplies by it again, so it is 1 s. A frame stops when every goal is
met within :data:`GOAL_TOL` (1e-5 of a leg, 1e-5 rad: mink's own examples stop on the goal
error), when its last step moved nothing by more than :data:`STEP_TOL` of a leg (a
translation divided by the leg, an angle in radians), or after :data:`MAX_STEPS` steps.
Frames are solved in order, each warm-started from the previous frame's result; the first
starts from the preferred pose with the roots moved onto their goals (:meth:`MinkPeer._seeded`:
a help ikrig's side does not get).

:meth:`MinkPeer.check_conversion` is the benchmark's self-check: ikrig's FK of the pose read
back from MuJoCo's ``qpos`` must give MuJoCo's site positions within 1e-9 (of the data's
units, relative to the model's size).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import mink
import mujoco
import numpy as np

from ikrig.pose import fk
from ikrig.skeleton import Skeleton

POSTURE_COST = 1e-4
"""Cost of the prior per radian of a joint's deviation from the preferred pose (goals cost
1 per leg of position error and 1 per radian of rotation error). 1e-3 and 1e-2 left mink in
local minima on cmu_01_01 (tracker goals missed by 0.2 to 1.5 % of a leg); 1e-4 and 1e-5
reach them."""
FRAME_LM_DAMPING = 1.0
"""The frame tasks' Levenberg-Marquardt damping (mink's examples use 1.0): the step is damped
by the squared weighted error, so far from a goal it is short and near one it is a
Gauss-Newton step. Without it mink missed goals on cmu_01_01 by 1 to 2 % of a leg."""
MAX_STEPS = 50
"""Gauss-Newton steps per frame at most."""
STEP_TOL = 1e-6
"""A frame has converged when its last step moved nothing by more than this, in legs."""
GOAL_TOL = 1e-5
"""... or when every goal is met within this (legs for positions, radians for rotations)."""
DAMPING = 1e-9
"""Levenberg-Marquardt damping of ``solve_ik`` (on every degree of freedom)."""
CHECK_TOL = 1e-9
"""How far ikrig's FK of a converted pose may be from MuJoCo's sites, relative to the
skeleton's size (largest joint distance from the root in the rest pose, at least 1)."""


def _num(x: float) -> str:
    return repr(float(x))


def skeleton_mjcf(skeleton: Skeleton) -> str:
    """The MJCF text of ``skeleton`` (module docstring): bodies ``b{j}``, joints ``j{j}``
    and sites ``s{j}`` named by joint index, so that any joint name is safe (the ikrig name
    is in a comment)."""
    children: list[list[int]] = [[] for _ in skeleton.names]
    roots = []
    for j, p in enumerate(skeleton.parents):
        (roots if p < 0 else children[p]).append(j)
    lines = [
        '<mujoco model="ikrig_skeleton">',
        '  <compiler angle="radian"/>',
        '  <option gravity="0 0 0"/>',
        "  <worldbody>",
    ]

    def body(j: int, depth: int) -> None:
        pad = "  " * depth
        pos = " ".join(_num(v) for v in skeleton.offsets[j])
        lines.append(f'{pad}<body name="b{j}" pos="{pos}">')
        lines.append(f"{pad}  <!-- {quoteattr(skeleton.names[j])[1:-1].replace('--', '- -')} -->")
        if skeleton.parents[j] < 0:
            lines.append(f'{pad}  <freejoint name="j{j}"/>')
        else:
            lines.append(f'{pad}  <joint name="j{j}" type="ball"/>')
        lines.append(f'{pad}  <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>')
        lines.append(f'{pad}  <site name="s{j}" pos="0 0 0"/>')
        for c in children[j]:
            body(c, depth + 1)
        lines.append(f"{pad}</body>")

    for r in roots:
        body(r, 2)
    lines += ["  </worldbody>", "</mujoco>"]
    return "\n".join(lines) + "\n"


def wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    return np.concatenate([q[..., 1:], q[..., :1]], axis=-1)


def xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    return np.concatenate([q[..., 3:], q[..., :3]], axis=-1)


@dataclass
class PeerResult:
    """mink's solve of a clip.

    Attributes:
        rotations_local: ``(F, J, 4)`` xyzw local rotations.
        positions_local: ``(F, J, 3)`` local translations (roots moved, others the offsets).
        steps: ``(F,)`` Gauss-Newton steps per frame.
        seconds: ``(F,)`` wall time per frame (the steps and the goal updates).
        qpos: ``(F, nq)`` MuJoCo configurations.
    """

    rotations_local: np.ndarray
    positions_local: np.ndarray
    steps: np.ndarray
    seconds: np.ndarray
    qpos: np.ndarray


@dataclass
class _FrameGoals:
    """One frame's goals of the tasks, to measure how far MuJoCo's sites are from them."""

    positions: np.ndarray  # (G, 3) world, NaN rows: none
    rotations: np.ndarray  # (G, 3, 3) world rotation matrices, NaN: none
    unit: float

    @classmethod
    def of(cls, positions_world: np.ndarray, rotations_world: np.ndarray, unit: float):
        x, y, z, w = np.moveaxis(rotations_world, -1, 0)
        m = np.stack(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
            ]
        )
        return cls(positions_world, np.moveaxis(m, (0, 1), (-2, -1)), unit)

    def reached(self, data, sites: np.ndarray, tol: float) -> bool:
        """Every goal within ``tol`` (legs; radians)."""
        with np.errstate(invalid="ignore"):
            d = np.linalg.norm(data.site_xpos[sites] - self.positions, axis=-1) / self.unit
            if np.any(d > tol):
                return False
            now = data.site_xmat[sites].reshape(-1, 3, 3)
            cos = (np.einsum("gij,gij->g", now, self.rotations) - 1.0) / 2.0
            angle = np.arccos(np.clip(cos, -1.0, 1.0))
            return not np.any(angle > tol)


class MinkPeer:
    """mink set up for one skeleton (module docstring).

    Args:
        skeleton: the skeleton.
        unit: a leg's length (the benchmark's length unit), in the data's units.
        posture_cost, max_steps, step_tol: see the module's constants.
    """

    def __init__(
        self,
        skeleton: Skeleton,
        unit: float,
        posture_cost: float = POSTURE_COST,
        max_steps: int = MAX_STEPS,
        step_tol: float = STEP_TOL,
        goal_tol: float = GOAL_TOL,
    ):
        self.skeleton = skeleton
        self.unit = float(unit)
        self.max_steps = int(max_steps)
        self.step_tol = float(step_tol)
        self.goal_tol = float(goal_tol)
        self.model = mujoco.MjModel.from_xml_string(skeleton_mjcf(skeleton))
        self.configuration = mink.Configuration(self.model)
        J = skeleton.num_joints
        self.joint_ids = [self._id(mujoco.mjtObj.mjOBJ_JOINT, f"j{j}") for j in range(J)]
        self.site_ids = [self._id(mujoco.mjtObj.mjOBJ_SITE, f"s{j}") for j in range(J)]
        self.qpos_adr = np.array([self.model.jnt_qposadr[i] for i in self.joint_ids])
        self.roots = np.flatnonzero(skeleton.parents < 0)
        self.posture = mink.PostureTask(self.model, cost=posture_cost)
        # the translational velocity dofs (free joints' first three): steps in legs
        free = self.model.jnt_dofadr[[self.joint_ids[r] for r in self.roots]]
        self._trans_dofs = (free[:, None] + np.arange(3)).ravel()
        self._step_scale = np.ones(self.model.nv)
        self._step_scale[self._trans_dofs] = 1.0 / self.unit

    def _id(self, kind, name: str) -> int:
        i = mujoco.mj_name2id(self.model, kind, name)
        if i < 0:
            raise RuntimeError(f"MuJoCo model lost {name}")
        return int(i)

    # ----------------------------------------------------------------------------------
    # Conversions
    # ----------------------------------------------------------------------------------

    def qpos_from_motion(self, rotations_local: np.ndarray, positions_local: np.ndarray):
        """MuJoCo ``qpos (nq,)`` of one pose given by ikrig ``(J, 4)`` xyzw local rotations
        and ``(J, 3)`` local translations (only the roots' are used: the others are the
        model's rest offsets)."""
        q = np.array(self.model.qpos0, dtype=np.float64)
        rot = xyzw_to_wxyz(np.asarray(rotations_local, dtype=np.float64))
        rot = rot / np.linalg.norm(rot, axis=-1, keepdims=True)
        for j, adr in enumerate(self.qpos_adr):
            if self.skeleton.parents[j] < 0:
                q[adr : adr + 3] = positions_local[j]
                q[adr + 3 : adr + 7] = rot[j]
            else:
                q[adr : adr + 4] = rot[j]
        return q

    def motion_from_qpos(self, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """ikrig ``(..., J, 4)`` xyzw local rotations and ``(..., J, 3)`` local translations of
        MuJoCo configurations ``(..., nq)`` (quaternions normalised)."""
        qpos = np.asarray(qpos, dtype=np.float64)
        batch = qpos.shape[:-1]
        J = self.skeleton.num_joints
        rot = np.empty(batch + (J, 4))
        pos = np.broadcast_to(self.skeleton.offsets, batch + (J, 3)).copy()
        for j, adr in enumerate(self.qpos_adr):
            if self.skeleton.parents[j] < 0:
                pos[..., j, :] = qpos[..., adr : adr + 3]
                adr += 3
            rot[..., j, :] = wxyz_to_xyzw(qpos[..., adr : adr + 4])
        rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
        return rot, pos

    def site_positions(self, qpos: np.ndarray) -> np.ndarray:
        """MuJoCo's world positions ``(J, 3)`` of the joint sites for one ``qpos``."""
        data = mujoco.MjData(self.model)
        data.qpos[:] = qpos
        mujoco.mj_kinematics(self.model, data)
        return np.array(data.site_xpos[self.site_ids])

    def check_conversion(self, qpos: np.ndarray) -> float:
        """The largest distance between ikrig's FK of :meth:`motion_from_qpos` and MuJoCo's
        site positions over the configurations ``qpos (F, nq)``, relative to the skeleton's
        size; raises AssertionError above :data:`CHECK_TOL`."""
        rot, pos = self.motion_from_qpos(qpos)
        _, ours = fk(self.skeleton.parents, rot, pos)
        theirs = np.stack([self.site_positions(q) for q in qpos])
        _, rest = fk(self.skeleton.parents, np.tile([0.0, 0, 0, 1], (len(pos[0]), 1)), pos[0])
        size = max(1.0, float(np.linalg.norm(rest - rest[self.roots[0]], axis=-1).max()))
        worst = float(np.abs(ours - theirs).max()) / size
        if not worst <= CHECK_TOL:
            raise AssertionError(f"qpos -> ikrig conversion off by {worst:.3g} > {CHECK_TOL}")
        return worst

    # ----------------------------------------------------------------------------------
    # Solve
    # ----------------------------------------------------------------------------------

    def solve(
        self,
        positions_world: np.ndarray,
        rotations_world: np.ndarray,
        preferred: tuple[np.ndarray, np.ndarray],
    ) -> PeerResult:
        """Solve the frames of ``positions_world (F, J, 3)`` and ``rotations_world (F, J, 4)``
        (xyzw; NaN rows: no goal), toward the preferred pose ``(rotations_local (J, 4),
        positions_local (J, 3))`` (the prior, and the first frame's start), in order, each
        frame warm-started from the previous one."""
        pos_goal = np.asarray(positions_world, dtype=np.float64)
        rot_goal = np.asarray(rotations_world, dtype=np.float64)
        F, J = pos_goal.shape[:2]
        has_pos = ~np.isnan(pos_goal[..., 0])
        has_rot = ~np.isnan(rot_goal[..., 0])
        goal_joints = np.flatnonzero((has_pos | has_rot).any(axis=0))
        tasks = {
            int(j): mink.FrameTask(
                f"s{j}",
                "site",
                position_cost=0.0,
                orientation_cost=0.0,
                lm_damping=FRAME_LM_DAMPING,
            )
            for j in goal_joints
        }
        q_pref = self.qpos_from_motion(*preferred)
        self.posture.set_target(q_pref)
        cfg = self.configuration
        cfg.update(self._seeded(q_pref, pos_goal[0], rot_goal[0]) if F else q_pref)
        all_tasks = [*tasks.values(), self.posture]
        sites = np.array([self.site_ids[j] for j in tasks], dtype=np.int64)
        qpos = np.empty((F, self.model.nq))
        steps = np.zeros(F, dtype=np.int64)
        seconds = np.zeros(F)
        for f in range(F):
            t0 = time.perf_counter()
            for j, task in tasks.items():
                self._set_goal(task, pos_goal[f, j], rot_goal[f, j], has_pos[f, j], has_rot[f, j])
            loose = [(task, pos_goal[f, j]) for j, task in tasks.items() if not has_rot[f, j]]
            goals = _FrameGoals.of(pos_goal[f, list(tasks)], rot_goal[f, list(tasks)], self.unit)
            for step in range(1, self.max_steps + 1):  # noqa: B007 (read after the loop)
                for task, target in loose:
                    self._turn_with_frame(task, target)
                v = mink.solve_ik(cfg, all_tasks, 1.0, "daqp", damping=DAMPING, limits=[])
                cfg.integrate_inplace(v, 1.0)
                if np.abs(v * self._step_scale).max() < self.step_tol:
                    break
                if goals.reached(cfg.data, sites, self.goal_tol):
                    break
            seconds[f] = time.perf_counter() - t0
            steps[f] = step
            qpos[f] = cfg.q
        rot, pos = self.motion_from_qpos(qpos)
        return PeerResult(rot, pos, steps, seconds, qpos)

    def _seeded(self, qpos: np.ndarray, positions_world, rotations_world) -> np.ndarray:
        """``qpos`` with each root moved onto its own goal of the first frame, if it has
        one: the first frame's start. Started from the rest pose, a root whose goal faces
        the other way leaves the differential IK in a local minimum (a neck twisted round
        to turn the head, the body left behind), and warm starts carry it on."""
        q = qpos.copy()
        for r in self.roots:
            adr = self.qpos_adr[r]
            if not np.isnan(positions_world[r, 0]):
                q[adr : adr + 3] = positions_world[r]
            if not np.isnan(rotations_world[r, 0]):
                q[adr + 3 : adr + 7] = xyzw_to_wxyz(rotations_world[r])
        return q

    def _turn_with_frame(self, task, position: np.ndarray) -> None:
        """A position-only goal's target rotation set to the frame's current one: mink's
        error is the SE(3) logarithm, whose translation part mixes in the rotation error
        unless the target rotation is the frame's own (then it is the position error)."""
        now = self.configuration.get_transform_frame_to_world(task.frame_name, "site")
        task.set_target(mink.SE3.from_rotation_and_translation(now.rotation(), position))

    def _set_goal(self, task, position, rotation, has_position, has_rotation) -> None:
        """Point ``task`` at one frame's goal; an absent part costs 0 (its target is then
        any value: mink multiplies its error by the cost)."""
        wxyz = xyzw_to_wxyz(rotation) if has_rotation else np.array([1.0, 0, 0, 0])
        xyz = position if has_position else np.zeros(3)
        task.set_target(mink.SE3.from_rotation_and_translation(mink.SO3(wxyz), xyz))
        task.set_position_cost(1.0 / self.unit if has_position else 0.0)
        task.set_orientation_cost(1.0 if has_rotation else 0.0)
