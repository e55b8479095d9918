"""Gait timing, footsteps and foot trajectories of the procedural walk (steps 1 to 3 of
:mod:`ikrig.data.walk`).

Space and units: metres, seconds, radians; Y up, the floor is ``y = 0``, the walker starts at
the origin facing +Z.
"""

from __future__ import annotations

import numpy as np

from .._checks import positive
from ..errors import InputError
from ..math.quat import quat_from_axis_angle, quat_mul, quat_rotate
from ..signal.easing import smootherstep
from .humanoid import ANKLE_HEIGHT, LEGS, TOE_OFFSET, X_AXIS, Y_AXIS

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
_STEP_HALF_WIDTH = 0.075  # ankle distance from the path, sideways
_TOE_OUT = 0.1  # foot yaw outward
_PLANT_LAG = 0.12  # stance share by which the pelvis passes the planted ankle after mid-stance

_MAX_SPEED = 2.0
_MAX_TURN = 1.5

# ------------------------------------------------------------------------------------------
# Gait timing and the path
# ------------------------------------------------------------------------------------------

#: :func:`ikrig.signal.easing.smootherstep` over arrays: 0 -> 1 with zero slope and
#: curvature at both ends (C2), the input clipped to [0, 1].
_smootherstep = np.vectorize(smootherstep, otypes=[np.float64])


def check_args(
    seconds: float, fps: float, speed: float, turn: float
) -> tuple[int, float, float, float]:
    """``(frames, fps, speed, turn)`` of a walk, checked; see :func:`ikrig.data.walk_clip`."""
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


class Gait:
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
        side = LEGS[foot][4]
        # the pelvis passes over the plant a little after mid-stance: the heel strikes
        # closer to the pelvis than the toe leaves it (the raised heel then makes up)
        t_mid = self.strike[foot] + n * self.period + (0.5 - _PLANT_LAG) * self.stance
        p, heading = self.path(t_mid)
        left = np.stack([np.cos(heading), np.zeros_like(heading), -np.sin(heading)], axis=-1)
        ankle = p + side * _STEP_HALF_WIDTH * left
        ankle[..., 1] = ANKLE_HEIGHT
        return ankle, heading + side * _TOE_OUT


# ------------------------------------------------------------------------------------------
# Foot trajectories
# ------------------------------------------------------------------------------------------


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
    return quat_mul(quat_from_axis_angle(Y_AXIS, yaw), quat_from_axis_angle(X_AXIS, -pitch))


def _stance_ankle(plant, yaw, pitch):
    """Ankle position during stance: at the plant while the heel is down, else the foot
    rotates heel-up about its planted toe joint."""
    flat = _foot_rotation(yaw, np.zeros_like(pitch))
    toe = plant + quat_rotate(flat, TOE_OFFSET)
    rolled = toe - quat_rotate(_foot_rotation(yaw, pitch), TOE_OFFSET)
    return np.where((pitch < 0)[..., None], rolled, plant)


def _toe_off(gait: Gait, plant, yaw):
    """Ankle position, velocity and acceleration ``(..., 3)`` and pitch, pitch rate and pitch
    acceleration at toe-off (the end of the heel-off roll about the planted toe joint)."""
    span = (1.0 - _HEEL_OFF) * gait.stance  # seconds of heel-off
    _, e1, e2 = _heel_off_ease(1.0)
    pitch, rate, acc = -_PITCH_OFF, -_PITCH_OFF * e1 / span, -_PITCH_OFF * e2 / span**2
    # ankle = toe - Ry(yaw) Rx(a) r with a = -pitch: d/dt = -Ry (e_x x g) a',
    # d2/dt2 = -Ry (e_x x (e_x x g) a'^2 + (e_x x g) a'')
    g = quat_rotate(quat_from_axis_angle(X_AXIS, -pitch), TOE_OFFSET)
    g1 = np.cross(X_AXIS, g)
    g2 = np.cross(X_AXIS, g1)
    heading = quat_from_axis_angle(Y_AXIS, yaw)
    ankle = _stance_ankle(plant, yaw, np.full(np.shape(yaw), pitch))
    vel = -quat_rotate(heading, np.broadcast_to(g1 * -rate, np.shape(plant)))
    accel = -quat_rotate(heading, np.broadcast_to(g2 * rate**2 + g1 * -acc, np.shape(plant)))
    return ankle, vel, accel, (pitch, rate, acc)


def foot_tracks(gait: Gait, t: np.ndarray, foot: int):
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
