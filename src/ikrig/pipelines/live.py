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
from . import foot_steps as steps
from .foot import FootOptions, FootSetup, FootState, _check_clip, apply_feet, foot_goals
from .legs import Legs, find_legs
from .sole import estimate_sole


class FootPlacer:
    """Live foot placement: one pose per :meth:`update`, with its own state.

    Runs the same step functions as :func:`place_feet`. Given the same frames, frame time and
    pinning values (for example the curve of the clip being played, as engines store it),
    it returns the same frames as the offline pipeline. Without pinning values it detects
    contacts causally from the pose (height and speed with hysteresis; ramps start when a
    contact starts, not before), which the offline pipeline, seeing the whole clip, does
    better.

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
        self.state = FootState()
        self._contact = np.zeros(len(setup.legs.legs), dtype=bool)
        self._pin = np.zeros(len(setup.legs.legs))
        self._last_points = None

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

    def _detect(self, pose: Motion, dt: float):
        o = self.options.contacts
        L = self.setup.legs.leg_length
        rot_w, pos_w = pose.fk()
        pts = self.setup.sole.points_world(rot_w, pos_w)
        h = (pts[..., 1] - self.setup.sole.floor - self.setup.sole.heights) / L
        if self._last_points is None:
            speed = np.zeros(h.shape)
        else:
            speed = np.linalg.norm((pts - self._last_points)[..., [0, 2]], axis=-1) / dt / L
        self._last_points = pts
        enter = ((h < o.height_on) & (speed < o.speed_on)).any(axis=-1)
        stay = ((h < o.height_off) & (speed < o.speed_off)).any(axis=-1)
        self._contact = np.where(self._contact, stay, enter)
        rate_in = dt / o.blend_in if o.blend_in > 0 else 1.0
        rate_out = dt / o.blend_out if o.blend_out > 0 else 1.0
        self._pin = np.where(
            self._contact,
            np.minimum(self._pin + rate_in, 1.0),
            np.maximum(self._pin - rate_out, 0.0),
        )
        return self._pin.copy(), self._contact.copy()

    def update(self, pose: Motion, dt: float, pin=None, contact=None, offset=None) -> Motion:
        """Place the feet of one pose.

        Args:
            pose: a single pose (batch shape ``()``) of the character.
            dt: seconds since the previous update.
            pin: ``(feet,)`` pinning weights for this frame, or None to detect them.
            contact: ``(feet,)`` bool contact flags (default ``pin > 0.5``).
            offset: ``(feet,)`` planned vertical foot offsets for this frame (the offline
                plan, :func:`plan_offsets`), or None to estimate them causally.

        Returns:
            The new pose (batch shape ``()``).
        """
        if pose.batch_shape != ():
            raise InputError(f"pose: expected a single pose, got batch shape {pose.batch_shape}")
        positive(dt, "dt")
        frame = Motion._trusted(
            pose.skeleton, pose.rotations_local[None], pose.positions_local[None], dt
        )
        if pin is None:
            pins, flags = self._detect(pose, dt)
        else:
            pins = np.clip(np.asarray(pin, dtype=np.float64).reshape(-1), 0.0, 1.0)
            flags = pins > 0.5 if contact is None else np.asarray(contact, dtype=bool).reshape(-1)
        pins, flags = pins[None], flags[None]
        goals = foot_goals(self.setup, self.ground, self.options, frame, pins, flags, self.state)
        if offset is None:
            offsets, self.state.swing = steps.live_foot_offsets(
                goals.planted,
                goals.stance,
                flags,
                dt,
                self.options.swing_halflife,
                self.state.swing,
            )
        else:
            offsets = np.asarray(offset, dtype=np.float64).reshape(1, -1)
        out, self.last_info = apply_feet(
            self.setup, self.ground, self.options, frame, goals, offsets, pins, flags, self.state
        )
        return out[0]
