"""Built-in demo data made by code, so the demo needs no file: a leg that steps through targets.

1. Build a four-joint leg (pelvis, thigh, shin, foot) in metres, Y up, facing +Z.
2. Trace an ankle target path over one step cycle: a lifted, forward-swinging arc, a planted
   stretch, and a reach beyond the leg's length so the unreachable case shows.
3. Solve every frame in one batched two-bone call (pole in front of the knee).
4. Return the solved clip and a per-frame table of what happened.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..math.vec import angle_between
from ..pose import Motion
from ..skeleton import Skeleton
from ..solvers.two_bone import TwoBoneOptions, solve_two_bone

THIGH, SHIN = 0.45, 0.42
LEG_JOINTS = ("thigh", "shin", "foot")


def leg_skeleton() -> Skeleton:
    """A right leg: pelvis root at hip height, then thigh, shin, foot; a toe end site."""
    return Skeleton(
        names=("pelvis", "thigh", "shin", "foot"),
        parents=np.array([-1, 0, 1, 2]),
        offsets=np.array(
            [[0.0, 0.95, 0.0], [-0.1, -0.03, 0.0], [0.0, -THIGH, 0.0], [0.0, -SHIN, 0.0]]
        ),
        end_site_parents=np.array([3]),
        end_site_offsets=np.array([[0.0, -0.05, 0.14]]),
    )


def step_targets(frames: int = 120) -> np.ndarray:
    """``(frames, 3)`` world ankle targets over one step cycle; the last part is out of reach."""
    t = np.linspace(0.0, 1.0, frames, endpoint=False)
    hip = np.array([-0.1, 0.92, 0.0])
    phase = 2 * np.pi * t
    z = 0.25 * np.sin(phase)  # forward and back under the hip
    y = 0.13 + 0.12 * np.clip(np.cos(phase), 0, None)  # lift during the swing
    targets = np.stack([np.full_like(t, hip[0]), y, z], axis=-1)
    reach = t > 0.85  # a final kick past full extension
    targets[reach] = hip + (targets[reach] - hip) * 1.25
    return targets


@dataclass(frozen=True)
class DemoResult:
    """The solved clip, its targets ``(F, 3)``, per-frame ``reached``, ``error``, ``knee_deg``."""

    motion: Motion
    targets_world: np.ndarray
    reached: np.ndarray
    error: np.ndarray
    knee_deg: np.ndarray


def run_leg_demo(frames: int = 120, fps: float = 30.0) -> DemoResult:
    """Solve the built-in leg for every frame of :func:`step_targets` in one batched call."""
    skeleton = leg_skeleton()
    rest = Motion.rest(skeleton, (frames,), frame_time=1.0 / fps)
    # a slightly bent start pose so the knee has a plane to keep
    bend = np.array([np.sin(0.1), 0.0, 0.0, np.cos(0.1)])
    rotations = rest.rotations_local.copy()
    rotations[:, 2] = bend
    rotations[:, 1] = bend * [-1, 1, 1, 1]
    start = rest.replace(rotations_local=rotations)
    targets = step_targets(frames)
    hip_world = start.positions_world()[:, 1]
    poles = hip_world + np.array([0.0, -0.2, 0.5])  # in front of the knee
    result = solve_two_bone(
        start, LEG_JOINTS, targets, pole_world=poles, options=TwoBoneOptions(soften=0.97)
    )
    pos = result.motion.positions_world()
    error = np.linalg.norm(pos[:, 3] - targets, axis=-1)
    knee = np.degrees(np.pi - angle_between(pos[:, 1] - pos[:, 2], pos[:, 3] - pos[:, 2]))
    return DemoResult(result.motion, targets, np.asarray(result.reached), error, knee)
