"""A procedural humanoid and walk cycle: demo data made by code, no file needed.

Space and units: metres, seconds, radians; Y up, the character faces +Z at time 0 (its left
is +X), the floor is the plane ``y = 0``. The skeleton has the 31 joints of the CMU
MotionBuilder conversions (the shared ``xia_*.bvh`` clips), in the same order and hierarchy,
with its own human proportions: hips at 0.95 m, leg length (thigh plus shin) 0.85 m, ankle
0.08 m and toe joint 0.02 m above the floor at rest, about 1.73 m tall. The rest pose is a
T-pose with straight legs.

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

from .._checks import positive
from ..errors import InputError
from ..io import BvhClip
from ..math.quat import quat_conj, quat_from_axis_angle, quat_mul, quat_rotate
from ..pose import Motion
from ..skeleton import Skeleton
from ..solvers.two_bone import solve_two_bone

__all__ = ["humanoid_skeleton", "to_bvh_clip", "walk_clip", "walk_contacts"]

_X = np.array([1.0, 0.0, 0.0])
_Y = np.array([0.0, 1.0, 0.0])
_Z = np.array([0.0, 0.0, 1.0])

# (name, parent, offset in metres); the left side is +X.
_JOINTS = (
    ("Hips", None, (0.0, 0.95, 0.0)),
    ("LHipJoint", "Hips", (0.0, 0.0, 0.0)),
    ("LeftUpLeg", "LHipJoint", (0.09, -0.02, 0.0)),
    ("LeftLeg", "LeftUpLeg", (0.0, -0.43, 0.0)),
    ("LeftFoot", "LeftLeg", (0.0, -0.42, 0.0)),
    ("LeftToeBase", "LeftFoot", (0.0, -0.06, 0.13)),
    ("RHipJoint", "Hips", (0.0, 0.0, 0.0)),
    ("RightUpLeg", "RHipJoint", (-0.09, -0.02, 0.0)),
    ("RightLeg", "RightUpLeg", (0.0, -0.43, 0.0)),
    ("RightFoot", "RightLeg", (0.0, -0.42, 0.0)),
    ("RightToeBase", "RightFoot", (0.0, -0.06, 0.13)),
    ("LowerBack", "Hips", (0.0, 0.0, 0.0)),
    ("Spine", "LowerBack", (0.0, 0.12, -0.01)),
    ("Spine1", "Spine", (0.0, 0.14, 0.0)),
    ("Neck", "Spine1", (0.0, 0.20, -0.01)),
    ("Neck1", "Neck", (0.0, 0.06, 0.01)),
    ("Head", "Neck1", (0.0, 0.08, 0.02)),
    ("LeftShoulder", "Spine1", (0.03, 0.15, 0.0)),
    ("LeftArm", "LeftShoulder", (0.16, 0.04, 0.0)),
    ("LeftForeArm", "LeftArm", (0.28, 0.0, 0.0)),
    ("LeftHand", "LeftForeArm", (0.25, 0.0, 0.0)),
    ("LeftFingerBase", "LeftHand", (0.05, 0.0, 0.0)),
    ("LeftHandIndex1", "LeftFingerBase", (0.04, 0.0, 0.0)),
    ("LThumb", "LeftHand", (0.02, 0.0, 0.03)),
    ("RightShoulder", "Spine1", (-0.03, 0.15, 0.0)),
    ("RightArm", "RightShoulder", (-0.16, 0.04, 0.0)),
    ("RightForeArm", "RightArm", (-0.28, 0.0, 0.0)),
    ("RightHand", "RightForeArm", (-0.25, 0.0, 0.0)),
    ("RightFingerBase", "RightHand", (-0.05, 0.0, 0.0)),
    ("RightHandIndex1", "RightFingerBase", (-0.04, 0.0, 0.0)),
    ("RThumb", "RightHand", (-0.02, 0.0, 0.03)),
)
_END_SITES = (
    ("LeftToeBase", (0.0, 0.0, 0.06)),
    ("RightToeBase", (0.0, 0.0, 0.06)),
    ("Head", (0.0, 0.18, 0.0)),
    ("LeftHandIndex1", (0.03, 0.0, 0.0)),
    ("LThumb", (0.02, 0.0, 0.02)),
    ("RightHandIndex1", (-0.03, 0.0, 0.0)),
    ("RThumb", (-0.02, 0.0, 0.02)),
)

_NAMES = tuple(name for name, _, _ in _JOINTS)
_J = {name: j for j, name in enumerate(_NAMES)}
_LEGS = (  # (hip, knee, ankle, toe, side sign: +1 left, -1 right)
    ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase", 1.0),
    ("RightUpLeg", "RightLeg", "RightFoot", "RightToeBase", -1.0),
)

ANKLE_HEIGHT = 0.08
"""Height (m) of the ankle joint above the floor when the foot is flat."""
TOE_HEIGHT = 0.02
"""Height (m) of the toe joint above the floor when the foot is flat."""
_TOE_OFFSET = np.array(_JOINTS[_J["LeftToeBase"]][2])  # ankle -> toe joint, foot frame
_THIGH, _SHIN = 0.43, 0.42

# Gait shape (fractions of the stance phase, radians, metres).
_HEEL_ROCKER = 0.12  # stance share rotating toes-down about the ankle
_HEEL_OFF = 0.70  # stance share at which the heel starts to rise
_PITCH_STRIKE = 0.25  # foot pitch (toes up) at heel strike
_PITCH_OFF = 0.85  # foot pitch (heel up) at toe-off
_TOE_BEND_SPAN = 0.4  # swing share over which the bent toes straighten
_PITCH_LEVEL_AT = 0.45  # swing share at which the foot pitch is ...
_PITCH_LEVEL = 0.1  # ... this much (toes slightly up)
_SWING_LIFT = 0.05  # extra ankle height early in the swing
_LIFT_SHAPE = (3, 5)  # the lift is w^a (1 - w)^b over the swing share w: peak at a / (a + b)
_TUCK = 0.08  # early in the swing the ankle is pulled this share of the way to the hip
_TUCK_SHAPE = (3, 6)  # ... with the profile w^a (1 - w)^b over the swing share w
_STEP_HALF_WIDTH = 0.075  # ankle distance from the path, sideways
_TOE_OUT = 0.1  # foot yaw outward
_REACH = 0.997  # the legs reach at most this share of their length (knee >= ~9 degrees)
_LOADING_DIP = 0.004  # ... less this around heel strike (the knee yields under load)
_LOADING_PHASE = 0.0  # gait-cycle phase of the deepest knee yield
_LOADING_WIDTH = 0.06  # its width (standard deviation, gait cycles)
_PUSH_DIP = 0.015  # ... and less this at toe-off (the knee bends in pre-swing)
_PUSH_WIDTH = 0.04  # its width (standard deviation, gait cycles)
_PLANT_LAG = 0.12  # stance share by which the pelvis passes the planted ankle after mid-stance

_DROP_ROUNDS = 6  # pelvis-lowering rounds (the tuck follows the lowered hips)
_MAX_SPEED = 2.0
_MAX_TURN = 1.5


def humanoid_skeleton() -> Skeleton:
    """The built-in 31-joint humanoid (CMU MotionBuilder names and hierarchy), in metres.

    Joints, parents first: Hips; LHipJoint, LeftUpLeg, LeftLeg, LeftFoot, LeftToeBase; the
    same on the right (RHipJoint, RightUpLeg, ...); LowerBack, Spine, Spine1, Neck, Neck1,
    Head; LeftShoulder, LeftArm, LeftForeArm, LeftHand, LeftFingerBase, LeftHandIndex1,
    LThumb; the same on the right (RThumb). End sites hang from the seven leaves (toe tips,
    head top, finger and thumb tips). Y up, facing +Z, T-pose at rest with the feet flat on
    ``y = 0``; leg length 0.85 m.
    """
    parents = [-1 if p is None else _J[p] for _, p, _ in _JOINTS]
    offsets = [o for _, _, o in _JOINTS]
    return Skeleton(
        _NAMES,
        np.array(parents),
        np.array(offsets, dtype=np.float64),
        np.array([_J[n] for n, _ in _END_SITES]),
        np.array([o for _, o in _END_SITES], dtype=np.float64),
    )


def to_bvh_clip(motion: Motion):
    """Wrap a motion of :func:`humanoid_skeleton` as a :class:`~ikrig.io.BvhClip`.

    The root gets ``Xposition Yposition Zposition Zrotation Yrotation Xrotation`` channels,
    every other joint ``Zrotation Yrotation Xrotation`` (the CMU layout), so
    ``ikrig.io.write_bvh(path, to_bvh_clip(walk_clip()))`` writes a BVH file in metres.

    Raises:
        InputError: the motion is not a clip ``(F,)`` or a pose.
    """
    rot = ("Zrotation", "Yrotation", "Xrotation")
    channels = tuple(
        ("Xposition", "Yposition", "Zposition") + rot if p < 0 else rot
        for p in motion.skeleton.parents
    )
    if len(motion.batch_shape) > 1:
        raise InputError(f"motion: expected a clip (F,) or a pose, got {motion.batch_shape}")
    return BvhClip(motion, channels)


# --------------------------------------------------------------------------------------------
# Gait timing and the path
# --------------------------------------------------------------------------------------------


def _check_args(seconds, fps, speed, turn) -> tuple[int, float, float, float]:
    seconds = positive(seconds, "seconds")
    fps = positive(fps, "fps")
    speed = positive(speed, "speed")
    turn = float(turn)
    if speed > _MAX_SPEED:
        raise InputError(f"speed: a walk needs speed <= {_MAX_SPEED} m/s, got {speed!r}")
    if not abs(turn) <= _MAX_TURN:
        raise InputError(f"turn: must be within +-{_MAX_TURN} rad/s, got {turn!r}")
    frames = max(2, int(round(seconds * fps)))
    return frames, fps, speed, turn


class _Gait:
    """Gait timing: stride period ``T`` (s), the feet's heel-strike phases, the speed and turn."""

    def __init__(self, speed: float, turn: float):
        cadence = 1.95 * (speed / 1.2) ** 0.58  # steps per second
        self.period = 2.0 / cadence
        # stance share of the gait cycle: 62 % at 1.2 m/s, less when walking faster
        self.duty = float(np.clip(0.62 - 0.06 * (speed - 1.2), 0.56, 0.66))
        self.speed = speed
        self.turn = turn
        # time of a heel strike of each foot (left, right): the left foot strikes at 0.1 T
        self.strike = (0.1 * self.period, 0.6 * self.period)
        self.stance = self.duty * self.period
        self.swing = self.period - self.stance

    def path(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Path positions ``(..., 3)`` (y = 0) and headings ``(...)`` (rad about +Y) at ``t``."""
        heading = self.turn * t
        if abs(self.turn) < 1e-12:
            x, z = np.zeros_like(t), self.speed * t
        else:
            r = self.speed / self.turn
            x, z = r * (1.0 - np.cos(heading)), r * np.sin(heading)
        return np.stack([x, np.zeros_like(t), z], axis=-1), heading

    def cycle(self, t: np.ndarray, foot: int) -> tuple[np.ndarray, np.ndarray]:
        """Step index ``n`` (int) and phase ``u`` in [0, 1) of ``foot`` at times ``t``.

        Step ``n`` starts with a heel strike at ``strike[foot] + n T``; ``u < duty`` is stance.
        """
        x = (t - self.strike[foot]) / self.period
        n = np.floor(x)
        return n.astype(np.int64), x - n

    def plant(self, n: np.ndarray, foot: int) -> tuple[np.ndarray, np.ndarray]:
        """Planted ankle position ``(..., 3)`` and foot yaw ``(...)`` of step ``n`` of ``foot``."""
        side = _LEGS[foot][4]
        # the pelvis passes over the plant a little after mid-stance: the heel strikes
        # closer to the pelvis than the toe leaves it (the raised heel then makes up)
        t_mid = self.strike[foot] + n * self.period + (0.5 - _PLANT_LAG) * self.stance
        p, heading = self.path(t_mid)
        left = np.stack([np.cos(heading), np.zeros_like(heading), -np.sin(heading)], axis=-1)
        ankle = p + side * _STEP_HALF_WIDTH * left
        ankle[..., 1] = ANKLE_HEIGHT
        return ankle, heading + side * _TOE_OUT


def walk_contacts(seconds=4.0, fps=60.0, speed=1.2, turn=0.0) -> np.ndarray:
    """Ground-truth stance flags of :func:`walk_clip` with the same arguments.

    Returns:
        ``(F, 2)`` bool, columns left and right foot: True while the foot is planted
        (heel strike to toe-off, during which its planted sole point does not move).

    Raises:
        InputError: as :func:`walk_clip`.
    """
    frames, fps, speed, turn = _check_args(seconds, fps, speed, turn)
    gait = _Gait(speed, turn)
    t = np.arange(frames) / fps
    return np.stack([gait.cycle(t, k)[1] < gait.duty for k in range(2)], axis=-1)


# --------------------------------------------------------------------------------------------
# Foot trajectories
# --------------------------------------------------------------------------------------------


def _smootherstep(x):
    """0 -> 1 with zero slope and curvature at both ends (C2)."""
    x = np.clip(x, 0.0, 1.0)
    return x * x * x * (x * (6.0 * x - 15.0) + 10.0)


def _quintic(p0, v0, a0, p1, v1, a1, w):
    """Quintic Hermite curve at ``w`` in [0, 1] matching value, first and second derivative
    (per unit ``w``) at both ends. Values may carry a trailing axis that ``w`` lacks."""
    w = np.asarray(w)
    w2 = w * w
    w3 = w2 * w
    w4 = w3 * w
    w5 = w4 * w
    h = (
        1 - 10 * w3 + 15 * w4 - 6 * w5,  # p0
        w - 6 * w3 + 8 * w4 - 3 * w5,  # v0
        0.5 * (w2 - 3 * w3 + 3 * w4 - w5),  # a0
        10 * w3 - 15 * w4 + 6 * w5,  # p1
        -4 * w3 + 7 * w4 - 3 * w5,  # v1
        0.5 * (w3 - 2 * w4 + w5),  # a1
    )
    if np.ndim(p0) > np.ndim(w) or np.ndim(p1) > np.ndim(w):
        h = tuple(c[..., None] for c in h)
    return sum(c * v for c, v in zip(h, (p0, v0, a0, p1, v1, a1)))


def _heel_off_ease(x):
    """``2 x^3 - x^4``: 0 -> 1 with zero slope and curvature at 0, slope 2 and curvature 0
    at 1 (the heel rises fastest at toe-off). Returns value, slope and curvature."""
    x = np.clip(x, 0.0, 1.0)
    return 2 * x**3 - x**4, 6 * x**2 - 4 * x**3, 12 * x - 12 * x**2


def _stance_pitch(s):
    """Foot pitch (rad, toes up positive) over the stance share ``s`` in [0, 1]."""
    rocker = _PITCH_STRIKE * (1.0 - _smootherstep(s / _HEEL_ROCKER))
    heel_off = -_PITCH_OFF * _heel_off_ease((s - _HEEL_OFF) / (1.0 - _HEEL_OFF))[0]
    return np.where(s < _HEEL_ROCKER, rocker, np.where(s < _HEEL_OFF, 0.0, heel_off))


def _foot_rotation(yaw, pitch):
    """World rotation ``(..., 4)`` of a foot: yaw about +Y, then pitch (toes up) about its X."""
    return quat_mul(quat_from_axis_angle(_Y, yaw), quat_from_axis_angle(_X, -pitch))


def _stance_ankle(plant, yaw, pitch):
    """Ankle position during stance: at the plant while the heel is down, else the foot
    rotates heel-up about its planted toe joint."""
    flat = _foot_rotation(yaw, np.zeros_like(pitch))
    toe = plant + quat_rotate(flat, _TOE_OFFSET)
    rolled = toe - quat_rotate(_foot_rotation(yaw, pitch), _TOE_OFFSET)
    return np.where((pitch < 0)[..., None], rolled, plant)


def _toe_off(gait: _Gait, plant, yaw):
    """Ankle position, velocity and acceleration ``(..., 3)`` and pitch, pitch rate and pitch
    acceleration at toe-off (the end of the heel-off roll about the planted toe joint)."""
    span = (1.0 - _HEEL_OFF) * gait.stance  # seconds of heel-off
    _, e1, e2 = _heel_off_ease(1.0)
    pitch, rate, acc = -_PITCH_OFF, -_PITCH_OFF * e1 / span, -_PITCH_OFF * e2 / span**2
    # ankle = toe - Ry(yaw) Rx(a) r with a = -pitch: d/dt = -Ry (e_x x g) a',
    # d2/dt2 = -Ry (e_x x (e_x x g) a'^2 + (e_x x g) a'')
    g = quat_rotate(quat_from_axis_angle(_X, -pitch), _TOE_OFFSET)
    g1 = np.cross(_X, g)
    g2 = np.cross(_X, g1)
    heading = quat_from_axis_angle(_Y, yaw)
    ankle = _stance_ankle(plant, yaw, np.full(np.shape(yaw), pitch))
    vel = -quat_rotate(heading, np.broadcast_to(g1 * -rate, np.shape(plant)))
    accel = -quat_rotate(heading, np.broadcast_to(g2 * rate**2 + g1 * -acc, np.shape(plant)))
    return ankle, vel, accel, (pitch, rate, acc)


def _foot_tracks(gait: _Gait, t: np.ndarray, foot: int):
    """Ankle target ``(F, 3)``, foot rotation ``(F, 4)``, toe bend ``(F,)``, stance flags
    ``(F,)`` and the swing share ``(F,)`` (0 during stance)."""
    n, u = gait.cycle(t, foot)
    duty = gait.duty
    stance = u < duty
    plant0, yaw0 = gait.plant(n, foot)
    plant1, yaw1 = gait.plant(n + 1, foot)

    # stance of step n
    s = np.clip(u / duty, 0.0, 1.0)
    pitch_st = _stance_pitch(s)
    ankle_st = _stance_ankle(plant0, yaw0, pitch_st)

    # swing from toe-off of step n to heel strike of step n + 1, C2 at both ends
    w = np.clip((u - duty) / (1.0 - duty), 0.0, 1.0)
    ts = gait.swing
    ankle0, vel0, acc0, (pitch0, rate0, pacc0) = _toe_off(gait, plant0, yaw0)
    zero = np.zeros(3)
    ankle_sw = _quintic(ankle0, vel0 * ts, acc0 * ts**2, plant1, zero, zero, w)
    a, b = _LIFT_SHAPE
    peak = a / (a + b)
    ankle_sw[:, 1] += _SWING_LIFT * (w / peak) ** a * ((1.0 - w) / (1.0 - peak)) ** b
    # the foot pitch levels out by mid-swing, then turns toes-up for the heel strike
    wa = np.clip(w / _PITCH_LEVEL_AT, 0.0, 1.0)
    wb = np.clip((w - _PITCH_LEVEL_AT) / (1.0 - _PITCH_LEVEL_AT), 0.0, 1.0)
    ta = ts * _PITCH_LEVEL_AT
    pitch_sw = np.where(
        w < _PITCH_LEVEL_AT,
        _quintic(pitch0, rate0 * ta, pacc0 * ta**2, _PITCH_LEVEL, 0.0, 0.0, wa),
        _quintic(_PITCH_LEVEL, 0.0, 0.0, _PITCH_STRIKE, 0.0, 0.0, wb),
    )
    yaw_sw = yaw0 + (yaw1 - yaw0) * _smootherstep(w)

    ankle = np.where(stance[:, None], ankle_st, ankle_sw)
    pitch = np.where(stance, pitch_st, pitch_sw)
    yaw = np.where(stance, yaw0, yaw_sw)
    # toes: flat on the floor during heel-off, straightening early in swing
    wb = np.clip(w / _TOE_BEND_SPAN, 0.0, 1.0)
    tb = ts * _TOE_BEND_SPAN
    bend_sw = _quintic(-pitch0, -rate0 * tb, -pacc0 * tb**2, 0.0, 0.0, 0.0, wb)
    bend = np.where(stance, np.maximum(0.0, -pitch_st), bend_sw)
    return ankle, _foot_rotation(yaw, pitch), bend, stance, w


# --------------------------------------------------------------------------------------------
# Pelvis, legs, upper body
# --------------------------------------------------------------------------------------------


def _upper_envelope(x: np.ndarray, radius: int) -> np.ndarray:
    """A smooth curve ``>= x``: a running maximum over ``+-radius`` frames, then a Hann
    average over the same window (each average only sees values >= the centre's own)."""
    if radius < 1:
        return x.copy()
    F = len(x)
    pad = np.concatenate([np.full(radius, x[0]), x, np.full(radius, x[-1])])
    windows = np.lib.stride_tricks.sliding_window_view(pad, 2 * radius + 1)
    dilated = windows.max(axis=-1)
    pad = np.concatenate([np.full(radius, dilated[0]), dilated, np.full(radius, dilated[-1])])
    kernel = np.hanning(2 * radius + 3)[1:-1]
    kernel /= kernel.sum()
    return np.convolve(pad, kernel, mode="valid")[:F]


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
    return (_REACH - loading - push) * (_THIGH + _SHIN)


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


def walk_clip(seconds=4.0, fps=60.0, speed=1.2, turn=0.0) -> Motion:
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
    frames, fps, speed, turn = _check_args(seconds, fps, speed, turn)
    gait = _Gait(speed, turn)
    sk = humanoid_skeleton()
    t = np.arange(frames) / fps
    T = gait.period

    feet = [_foot_tracks(gait, t, k) for k in range(2)]
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
        _axis_angle(_Y, heading + yaw),
        quat_mul(_axis_angle(_X, tilt), _axis_angle(_Z, roll)),
    )

    rot = np.tile(np.array([0.0, 0.0, 0.0, 1.0]), (frames, sk.num_joints, 1))
    pos = np.broadcast_to(sk.offsets, (frames, sk.num_joints, 3)).copy()
    rot[:, 0] = root_rot
    pos[:, 0] = root_pos

    # lower the pelvis where a leg could not reach its ankle target; swing ankles are
    # pulled toward the hips first (knee flexion in early swing)
    hip_idx = [_J[leg[0]] for leg in _LEGS]
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
        pos[:, 0, 1] -= _upper_envelope(drop + 1e-4 * (drop > 0), int(round(0.04 * fps)))

    # legs: a slight initial bend fixes each knee's hinge axis (local X), then IK
    for hip, knee, _, _, _ in _LEGS:
        rot[:, _J[hip]] = _axis_angle(_X, np.full(frames, -0.15))
        rot[:, _J[knee]] = _axis_angle(_X, np.full(frames, 0.3))
    motion = Motion(sk, rot, pos, 1.0 / fps)
    hips = motion.fk()[1][:, hip_idx]
    for k, (hip, knee, ankle, _, _) in enumerate(_LEGS):
        foot_fwd = quat_rotate(feet[k][1], _Z)
        foot_fwd[:, 1] = 0.0
        pole = 0.5 * (hips[:, k] + ankles[:, k]) + 0.5 * foot_fwd
        solved = solve_two_bone(
            motion, (_J[hip], _J[knee], _J[ankle]), ankles[:, k], pole_world=pole
        )
        motion = solved.motion
    rot = motion.rotations_local.copy()
    rot_w = motion.fk()[0]
    for k, (_, knee, ankle, toe, _) in enumerate(_LEGS):
        rot[:, _J[ankle]] = quat_mul(quat_conj(rot_w[:, _J[knee]]), feet[k][1])
        rot[:, _J[toe]] = _axis_angle(_X, -feet[k][2])

    # upper body: keep the chest upright, counter-rotate it, steady the head
    rot[:, _J["LowerBack"]] = quat_mul(_axis_angle(_Z, -0.6 * roll), _axis_angle(_X, -tilt))
    rot[:, _J["Spine"]] = _axis_angle(_Y, -0.9 * yaw)
    rot[:, _J["Spine1"]] = quat_mul(
        _axis_angle(_Y, -0.9 * yaw), _axis_angle(_X, np.full(frames, 0.03))
    )
    rot[:, _J["Neck"]] = _axis_angle(_Y, 0.5 * yaw)
    rot[:, _J["Neck1"]] = _axis_angle(_Y, 0.3 * yaw)
    rot[:, _J["Head"]] = _axis_angle(_X, -0.03 + 0.015 * np.cos(2.0 * gamma))
    # arms swing opposite to the legs: the left arm is forward at the right heel strike
    for side, sign in (("Left", 1.0), ("Right", -1.0)):
        strike = gait.strike[1] if sign > 0 else gait.strike[0]
        forward = np.cos(2.0 * np.pi * (t - strike) / T)  # 1 when this arm is forward
        swing = -0.28 * forward + 0.06  # negative swings the hanging arm forward
        rot[:, _J[f"{side}Shoulder"]] = _axis_angle(_Z, -sign * 0.03 * np.cos(2.0 * gamma))
        rot[:, _J[f"{side}Arm"]] = quat_mul(
            _axis_angle(_X, swing), _axis_angle(_Z, np.full(frames, -sign * 1.45))
        )
        elbow = 0.3 + 0.15 * (1.0 + forward)
        rot[:, _J[f"{side}ForeArm"]] = _axis_angle(_Y, -sign * elbow)
        rot[:, _J[f"{side}Hand"]] = _axis_angle(_Y, np.full(frames, -sign * 0.1))
    return Motion(sk, rot, motion.positions_local, 1.0 / fps)
