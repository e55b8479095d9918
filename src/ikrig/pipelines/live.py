"""Live foot placement: :class:`FootPlacer`, one pose per update, with its own state.

It runs the same step functions as the offline :func:`~ikrig.pipelines.foot.place_feet`
(goals, then the foot offsets, then root, pelvis, leg IK, alignment and locking), carrying
the springs and locks from frame to frame.
"""

from __future__ import annotations

import numpy as np

from .._checks import positive
from ..errors import InputError
from ..pose import Motion
from . import _foot_kernels as kernels
from . import foot_steps as steps
from .foot import FootOptions, FootSetup, FootState, _check_clip, apply_feet, foot_goals
from .legs import Legs, find_legs
from .sole import estimate_sole


class FootPlacer:
    """Live foot placement: one pose per :meth:`update`, with its own state.

    Runs the same step functions as :func:`place_feet`. Given the same frames, frame time and
    the offline plan of the clip being played (pins, contacts, foot offsets and pelvis drop
    per frame, as an engine would store them with the clip), it returns the same frames as
    the offline pipeline. Without them it works causally: contacts from the pose (height and
    speed with hysteresis; ramps start when a contact starts, not before), swing heights
    from the ground under the foot, the pelvis coming down when a leg needs it and back on
    a spring; the offline pipeline, seeing the whole clip, does better.

    Example:
        >>> from ikrig.data.walk import walk_clip
        >>> from ikrig.ground import load_ground
        >>> clip = walk_clip(seconds=1.0)
        >>> ground = load_ground("flat", clip.positions_world()[:, 0, [0, 2]], 0.85)
        >>> placer = FootPlacer.from_clip(clip, ground)
        >>> pose = placer.update(clip[0], dt=clip.frame_time)
    """

    def __init__(self, setup: FootSetup, ground, options: FootOptions | None = None):
        self.setup = setup
        self.ground = ground
        self.options = options or FootOptions()
        o = self.options.contacts
        self._thresholds = np.array(
            [o.height_on, o.height_off, o.speed_on, o.speed_off, o.blend_in, o.blend_out]
        )
        self.reset()

    def reset(self) -> None:
        """Forget the past: springs start on their next goals, nothing is locked, contact
        detection starts afresh (after a teleport or a cut)."""
        feet = len(self.setup.legs.legs)
        self.state = FootState(feet)
        self._contact = np.zeros(feet, dtype=bool)
        self._pin = np.zeros(feet)
        self._last_points = np.full((feet, 2, 3), np.nan)

    @classmethod
    def from_clip(cls, reference: Motion, ground, options=None, legs=None) -> FootPlacer:
        """A placer for the character of ``reference`` (a clip of it), whose legs, sole
        points and floor are measured on that clip."""
        options = options or FootOptions()
        _check_clip(reference)
        if not isinstance(legs, Legs):
            legs = find_legs(reference.skeleton, legs)
        sole = estimate_sole(reference, legs, options.contacts.floor_percentile)
        return cls(FootSetup.create(reference.skeleton, legs, sole), ground, options)

    def _detect(self, points, dt: float):
        """Contacts and pins ``(1, feet)`` of one frame's sole points ``(1, feet, 2, 3)``."""
        sole = self.setup.sole
        pins = np.empty(points.shape[:2])
        flags = np.empty(points.shape[:2], dtype=np.bool_)
        kernels.detect_run(
            points,
            sole.heights,
            sole.floor,
            self.setup.legs.leg_length,
            dt,
            self._thresholds,
            self._last_points,
            self._contact,
            self._pin,
            pins,
            flags,
        )
        return pins, flags

    def update(self, pose: Motion, dt: float, pin=None, contact=None, plan=None) -> Motion:
        """Place the feet of one pose.

        Args:
            pose: a single pose (batch shape ``()``) of the character.
            dt: seconds since the previous update.
            pin: ``(feet,)`` pinning weights for this frame, or None to detect them.
            contact: ``(feet,)`` bool contact flags (default ``pin > 0.5``).
            plan: a :class:`~ikrig.pipelines.foot.FramePlan` of this frame from an offline
                result (``result.plan(frame)``): its pins, contacts, root offset and ankle
                targets replace the causal estimates, and the frame equals the offline one.

        Returns:
            The new pose (batch shape ``()``).
        """
        if pose.batch_shape != ():
            raise InputError(f"pose: expected a single pose, got batch shape {pose.batch_shape}")
        positive(dt, "dt")
        frame = Motion._trusted(
            pose.skeleton, pose.rotations_local[None], pose.positions_local[None], dt
        )
        fk = frame.fk()
        feet = len(self.setup.legs.legs)
        if plan is not None:
            _check_plan(plan, feet)
            pin, contact = plan.pins, plan.contacts
        if pin is None:
            pins, flags = self._detect(self.setup.sole.points_world(*fk), float(dt))
        else:
            pins = np.clip(_per_foot(pin, "pin", feet, np.float64), 0.0, 1.0)
            flags = pins > 0.5 if contact is None else _per_foot(contact, "contact", feet, bool)
        goals = foot_goals(
            self.setup, self.ground, self.options, frame, pins, flags, self.state, fk=fk
        )
        offsets = None
        if plan is None:
            offsets = steps.live_foot_offsets(
                goals.planted,
                goals.stance,
                flags,
                dt,
                self.options.swing_halflife,
                self.state.swing_held,
                self.state.swing,
            )
        out, self.last_info = apply_feet(
            self.setup,
            self.ground,
            self.options,
            frame,
            goals,
            offsets,
            pins,
            self.state,
            plan=plan,
        )
        return out[0]


def _per_foot(value, name: str, feet: int, dtype) -> np.ndarray:
    """A per-frame argument of ``feet`` values as a ``(1, feet)`` array (raises on a wrong
    size or NaN)."""
    a = np.asarray(value, dtype=dtype)
    if a.size != feet:
        raise InputError(f"{name}: expected {feet} value(s), got shape {a.shape}")
    if dtype is not bool and not np.isfinite(a).all():
        raise InputError(f"{name}: contains NaN or infinite values")
    return a.reshape(1, feet)


def _check_plan(plan, feet: int) -> None:
    t = np.asarray(plan.targets_world)
    if t.shape != (feet, 3) or not np.isfinite(t).all():
        raise InputError(f"plan.targets_world: expected finite ({feet}, 3), got {t.shape}")
    _per_foot(plan.ground_found, "plan.ground_found", feet, bool)
    for name in ("root_offset", "pelvis_drop"):
        _per_foot(getattr(plan, name), f"plan.{name}", 1, np.float64)
