"""A procedural humanoid walk: demo data made by code, no file needed.

Space and units: metres, seconds, radians; Y up, the character (:func:`~ikrig.data.humanoid.
humanoid_skeleton`) faces +Z at time 0 (its left is +X), the floor is the plane ``y = 0``.

How the walk is made (:func:`walk_clip`):

1. Gait timing from the speed: cadence ``1.95 * (speed / 1.2) ** 0.58`` steps per second,
   stance 62 % of the gait cycle at 1.2 m/s (less when faster), the feet half a cycle apart.
2. Footsteps along the path (a straight line along +Z, or an arc turning at ``turn`` rad/s):
   each stance has one planted ankle position beside the path and one yaw (slight toe-out).
3. Foot trajectories, exact during stance: a heel rocker (the foot rotates toes-down about the
   ankle, which stays put), foot flat, then heel-off (the foot rotates heel-up about the toe
   joint, which stays put, while the toes bend to stay flat on the floor). The swing is a
   quintic Hermite curve matching position, velocity and acceleration at toe-off and heel
   strike (so the feet move C2-smoothly), lifted by a smooth bump early in the swing; the
   foot pitch levels out by mid-swing and turns toes-up for the next heel strike.
4. The pelvis follows the path with vertical bob, lateral sway toward the stance foot, list,
   forward tilt and transverse rotation. Swing ankles are pulled part of the way toward the
   hip early in the swing (knee flexion). Wherever a leg could not reach its ankle target
   with at most 0.997 of its length (less around heel strike and toe-off, where knees bend
   under load and in pre-swing), the pelvis is lowered by a smooth upper envelope of the
   needed drop, so every target is reachable with a bent knee.
5. The legs are solved with :func:`ikrig.solvers.two_bone.solve_two_bone` (knees toward the
   feet's forward direction), then the ankles get the foot orientation and the toes the
   push-off bend.
6. The chest counter-rotates against the pelvis, the head stays steady, and the arms swing
   opposite to the legs with the elbows bending as the arm comes forward; these are set
   directly as local rotations.

Everything is deterministic and vectorised over frames.
"""

from __future__ import annotations

import numpy as np

from ..math.quat import quat_conj, quat_from_axis_angle, quat_mul, quat_rotate
from ..pose import Motion
from ..signal.filters import upper_envelope
from ..solvers.two_bone import solve_two_bone
from .gait import Gait, check_args, foot_tracks
from .humanoid import JOINT_INDEX, LEGS, SHIN, THIGH, X_AXIS, Y_AXIS, Z_AXIS, humanoid_skeleton

__all__ = ["walk_clip", "walk_contacts"]

_TUCK = 0.08  # early in the swing the ankle is pulled this share of the way to the hip
_TUCK_SHAPE = (3, 6)  # ... with the profile w^a (1 - w)^b over the swing share w
_REACH = 0.997  # the legs reach at most this share of their length (knee >= ~9 degrees)
_LOADING_DIP = 0.004  # ... less this around heel strike (the knee yields under load)
_LOADING_PHASE = 0.0  # gait-cycle phase of the deepest knee yield
_LOADING_WIDTH = 0.06  # its width (standard deviation, gait cycles)
_PUSH_DIP = 0.015  # ... and less this at toe-off (the knee bends in pre-swing)
_PUSH_WIDTH = 0.04  # its width (standard deviation, gait cycles)
_DROP_ROUNDS = 6  # pelvis-lowering rounds (the tuck follows the lowered hips)


def walk_contacts(
    seconds: float = 4.0, fps: float = 60.0, speed: float = 1.2, turn: float = 0.0
) -> np.ndarray:
    """Ground-truth stance flags of :func:`walk_clip` with the same arguments.

    Returns:
        ``(F, 2)`` bool, columns left and right foot: True while the foot is planted
        (heel strike to toe-off, during which its planted sole point does not move).

    Raises:
        InputError: as :func:`walk_clip`.
    """
    frames, fps, speed, turn = check_args(seconds, fps, speed, turn)
    gait = Gait(speed, turn)
    t = np.arange(frames) / fps
    return np.stack([gait.cycle(t, k)[1] < gait.duty for k in range(2)], axis=-1)


# --------------------------------------------------------------------------------------------
# Pelvis, legs, upper body
# --------------------------------------------------------------------------------------------


def _dip(u, phase, width):
    """A Gaussian bump of height 1 over the gait cycle (periodic in ``u``)."""
    du = np.mod(u - phase + 0.5, 1.0) - 0.5
    return np.exp(-0.5 * (du / width) ** 2)


def _reach(u, duty: float):
    """Longest hip-ankle distance allowed (m) at gait-cycle phase ``u`` (0 = heel strike):
    ``_REACH`` leg lengths, less a dip around heel strike (the knee yields under load) and
    one around toe-off (the knee bends in pre-swing)."""
    loading = _LOADING_DIP * _dip(u, _LOADING_PHASE, _LOADING_WIDTH)
    push = _PUSH_DIP * _dip(u, duty, _PUSH_WIDTH)
    return (_REACH - loading - push) * (THIGH + SHIN)


def _tuck(hips, ankles, w):
    """Swing ankles ``(F, 3)`` pulled toward the hips ``(F, 3)`` by a share that rises and
    falls over the swing share ``w`` (0 at toe-off and heel strike): the knee flexes in
    early swing and the foot clears the floor."""
    a, b = _TUCK_SHAPE
    peak = a / (a + b)
    share = _TUCK * (w / peak) ** a * ((1.0 - w) / (1.0 - peak)) ** b
    return ankles + (hips - ankles) * share[:, None]


def _needed_drop(hips: np.ndarray, ankles: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """How far ``(F,)`` the hips ``(F, legs, 3)`` must come down for every ankle
    ``(F, legs, 3)`` to be within ``reach (F, legs)``."""
    horiz = np.linalg.norm((hips - ankles)[..., [0, 2]], axis=-1)
    vert = hips[..., 1] - ankles[..., 1]
    allowed = np.sqrt(np.maximum(reach * reach - horiz * horiz, 0.0))
    return np.maximum(vert - allowed, 0.0).max(axis=-1)


def _axis_angle(axis, angle):
    return quat_from_axis_angle(axis, np.asarray(angle, dtype=np.float64))


def walk_clip(
    seconds: float = 4.0, fps: float = 60.0, speed: float = 1.2, turn: float = 0.0
) -> Motion:
    """A natural walk on :func:`humanoid_skeleton`, made by code.

    Args:
        seconds: clip length (s); the clip has ``max(2, round(seconds * fps))`` frames.
        fps: frames per second; ``frame_time = 1 / fps``.
        speed: walking speed along the path, m/s, in ``(0, 2]``.
        turn: rate of turning, rad/s in ``[-1.5, 1.5]``; positive turns left (toward +X),
            the path is then an arc of radius ``speed / turn``. 0 walks straight along +Z.

    Returns:
        A :class:`~ikrig.pose.Motion` ``(F,)`` in metres with ``frame_time`` set, starting at
        the origin facing +Z in mid-cycle (the left foot strikes at 0.1 of a gait cycle).
        The feet stand on ``y = 0``: ankles 0.08 m and toe joints 0.02 m above it when flat;
        during stance (:func:`walk_contacts`) the heel (ankle) or the toe joint, whichever is
        down, does not move.

    Raises:
        InputError: ``seconds`` or ``fps`` not > 0, ``speed`` outside ``(0, 2]``, ``turn``
            outside ``[-1.5, 1.5]``.
    """
    frames, fps, speed, turn = check_args(seconds, fps, speed, turn)
    gait = Gait(speed, turn)
    sk = humanoid_skeleton()
    t = np.arange(frames) / fps
    T = gait.period

    feet = [foot_tracks(gait, t, k) for k in range(2)]
    ankles = np.stack([f[0] for f in feet], axis=1)  # (F, 2, 3)
    reach = np.stack([_reach(gait.cycle(t, k)[1], gait.duty) for k in range(2)], axis=1)  # (F, 2)

    # pelvis: phase 0 at left mid-stance, pi at right mid-stance
    gamma = 2.0 * np.pi * (t - gait.strike[0] - 0.5 * gait.stance) / T
    strike_l = 2.0 * np.pi * (t - gait.strike[0]) / T  # 0 at left heel strike
    path, heading = gait.path(t)
    left = np.stack([np.cos(heading), 0.0 * t, -np.sin(heading)], axis=-1)
    fwd = np.stack([np.sin(heading), 0.0 * t, np.cos(heading)], axis=-1)
    bob = 0.012 * np.cos(2.0 * gamma)
    sway = 0.022 * np.cos(gamma)
    surge = -0.008 * np.sin(2.0 * gamma)
    root_pos = path + sway[:, None] * left + surge[:, None] * fwd
    root_pos[:, 1] = 0.935 + bob
    yaw = -0.07 * np.cos(strike_l)  # the hip of the leading leg forward
    roll = 0.05 * np.cos(gamma)  # the swing side drops
    tilt = 0.05 + 0.015 * np.cos(2.0 * gamma)  # forward pelvic tilt
    root_rot = quat_mul(
        _axis_angle(Y_AXIS, heading + yaw),
        quat_mul(_axis_angle(X_AXIS, tilt), _axis_angle(Z_AXIS, roll)),
    )

    rot = np.tile(np.array([0.0, 0.0, 0.0, 1.0]), (frames, sk.num_joints, 1))
    pos = np.broadcast_to(sk.offsets, (frames, sk.num_joints, 3)).copy()
    rot[:, 0] = root_rot
    pos[:, 0] = root_pos

    # lower the pelvis where a leg could not reach its ankle target; swing ankles are
    # pulled toward the hips first (knee flexion in early swing)
    hip_idx = [JOINT_INDEX[leg[0]] for leg in LEGS]
    swing_share = np.stack([f[4] for f in feet], axis=1)  # (F, 2), 0 in stance
    free_ankles = ankles
    for _ in range(_DROP_ROUNDS):
        hips = Motion(sk, rot, pos).fk()[1][:, hip_idx]
        ankles = np.stack(
            [_tuck(hips[:, k], free_ankles[:, k], swing_share[:, k]) for k in range(2)], axis=1
        )
        drop = _needed_drop(hips, ankles, reach)
        if not drop.any():
            break
        pos[:, 0, 1] -= upper_envelope(drop + 1e-4 * (drop > 0), int(round(0.04 * fps)))

    # legs: a slight initial bend fixes each knee's hinge axis (local X), then IK
    for hip, knee, _, _, _ in LEGS:
        rot[:, JOINT_INDEX[hip]] = _axis_angle(X_AXIS, np.full(frames, -0.15))
        rot[:, JOINT_INDEX[knee]] = _axis_angle(X_AXIS, np.full(frames, 0.3))
    motion = Motion(sk, rot, pos, 1.0 / fps)
    hips = motion.fk()[1][:, hip_idx]
    for k, (hip, knee, ankle, _, _) in enumerate(LEGS):
        foot_fwd = quat_rotate(feet[k][1], Z_AXIS)
        foot_fwd[:, 1] = 0.0
        pole = 0.5 * (hips[:, k] + ankles[:, k]) + 0.5 * foot_fwd
        solved = solve_two_bone(
            motion,
            (JOINT_INDEX[hip], JOINT_INDEX[knee], JOINT_INDEX[ankle]),
            ankles[:, k],
            pole_world=pole,
        )
        motion = solved.motion
    rot = motion.rotations_local.copy()
    rot_w = motion.fk()[0]
    for k, (_, knee, ankle, toe, _) in enumerate(LEGS):
        rot[:, JOINT_INDEX[ankle]] = quat_mul(quat_conj(rot_w[:, JOINT_INDEX[knee]]), feet[k][1])
        rot[:, JOINT_INDEX[toe]] = _axis_angle(X_AXIS, -feet[k][2])

    # upper body: keep the chest upright, counter-rotate it, steady the head
    rot[:, JOINT_INDEX["LowerBack"]] = quat_mul(
        _axis_angle(Z_AXIS, -0.6 * roll), _axis_angle(X_AXIS, -tilt)
    )
    rot[:, JOINT_INDEX["Spine"]] = _axis_angle(Y_AXIS, -0.9 * yaw)
    rot[:, JOINT_INDEX["Spine1"]] = quat_mul(
        _axis_angle(Y_AXIS, -0.9 * yaw), _axis_angle(X_AXIS, np.full(frames, 0.03))
    )
    rot[:, JOINT_INDEX["Neck"]] = _axis_angle(Y_AXIS, 0.5 * yaw)
    rot[:, JOINT_INDEX["Neck1"]] = _axis_angle(Y_AXIS, 0.3 * yaw)
    rot[:, JOINT_INDEX["Head"]] = _axis_angle(X_AXIS, -0.03 + 0.015 * np.cos(2.0 * gamma))
    # arms swing opposite to the legs: the left arm is forward at the right heel strike
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        strike = gait.strike[1] if sign > 0 else gait.strike[0]
        forward = np.cos(2.0 * np.pi * (t - strike) / T)  # 1 when this arm is forward
        swing = -0.28 * forward + 0.06  # negative swings the hanging arm forward
        rot[:, JOINT_INDEX[f"{side}Shoulder"]] = _axis_angle(
            Z_AXIS, -sign * 0.03 * np.cos(2.0 * gamma)
        )
        rot[:, JOINT_INDEX[f"{side}Arm"]] = quat_mul(
            _axis_angle(X_AXIS, swing), _axis_angle(Z_AXIS, np.full(frames, -sign * 1.45))
        )
        elbow = 0.3 + 0.15 * (1.0 + forward)
        rot[:, JOINT_INDEX[f"{side}ForeArm"]] = _axis_angle(Y_AXIS, -sign * elbow)
        rot[:, JOINT_INDEX[f"{side}Hand"]] = _axis_angle(Y_AXIS, np.full(frames, -sign * 0.1))
    return Motion(sk, rot, motion.positions_local, 1.0 / fps)
