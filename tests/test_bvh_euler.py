"""The BVH writer's Euler angles (issue 40): two compiled loops around NumPy's ``arctan2``
and ``hypot`` give, bit for bit, what the plain NumPy composition gives:
``quat_to_euler(quat_normalize(q), order)``, then the equivalent triple nearest the
reference (the file's values, else the previous frame). The text a clip is written as is
therefore the same as before the loops, on every channel order, with and without the
file's values, on non-unit and near-zero quaternions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from ikrig.io.bvh import BvhClip
from ikrig.io.bvh import _euler as E
from ikrig.io.bvh._channels import _channel_layout
from ikrig.io.bvh._write import _clip_arrays, _depth_first_order
from ikrig.math import quat_normalize, quat_to_euler
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

ORDERS = ["".join(p) for p in itertools.permutations("XYZ")] + ["ZXZ", "XYX", "YZY"]


def _reference_angles(clip, layout, plan, num_frames):
    """``(reference (F or 1, G, 3) radians, sequential)``: the file's values when their
    shape matches the clip, else zeros for frame 0 and the previous frame after it."""
    source = clip.source_values
    if source is None or source.shape != (num_frames, layout.num_channels):
        return np.zeros((1, len(plan.joints), 3)), True
    reference = np.zeros((num_frames, len(plan.joints), 3))
    slot_of_joint = np.full(len(layout.rotation_axes), -1)
    slot_of_joint[plan.joints] = np.arange(len(plan.joints))
    for k, slot in enumerate(layout.rotation_slots):
        reference[:, slot_of_joint[slot.joints], k] = np.radians(source[:, slot.columns])
    return reference, False


def _reference(clip, rotations, layout, plan) -> np.ndarray:
    """The plain NumPy composition (the writer before its compiled loops)."""
    principal = np.empty((len(rotations), len(plan.joints), 3))
    for order in sorted(set(plan.orders)):
        group = [g for g, o in enumerate(plan.orders) if o == order]
        q = quat_normalize(rotations[:, plan.joints[group]])
        principal[:, group] = quat_to_euler(q, order)
    reference, sequential = _reference_angles(clip, layout, plan, len(rotations))
    out = np.empty_like(principal)
    for f in range(len(principal)):
        for g in range(principal.shape[1]):
            ref = out[f - 1, g] if sequential and f > 0 else reference[0 if sequential else f, g]
            a, b, c = principal[f, g]
            if plan.proper[g]:
                alt_b, locked = -b, abs(np.sin(b)) < E._GIMBAL_TOLERANCE
                s = 1.0 if np.cos(b) > 0 else -1.0
            else:
                alt_b, locked = np.pi - b, abs(np.cos(b)) < E._GIMBAL_TOLERANCE
                s = float(plan.parity[g]) if np.sin(b) > 0 else -float(plan.parity[g])
            pair = E._EulerPair(a, b, c, alt_b, s)
            if locked:
                out[f, g] = E._closest_locked.py_func(pair, plan.keep_first[g], ref)
            else:
                out[f, g] = E._closest_regular.py_func(pair, ref)
    return np.degrees(out)


def _clip(seed: int, frames: int, orders: list[str], with_values: bool) -> BvhClip:
    rng = np.random.default_rng(seed)
    J = len(orders)
    sk = Skeleton(tuple(f"j{k}" for k in range(J)), np.arange(-1, J - 1),
                  rng.normal(size=(J, 3)))  # fmt: skip
    q = Rotation.random(frames * J, random_state=seed).as_quat().reshape(frames, J, 4)
    q[:, ::3] *= rng.uniform(0.5, 3.0, (frames, 1, 1))[:, :1]  # not unit
    q[0, 0] = [0.0, 0.0, 0.0, 1e-7]  # nearly zero
    q[1, :] = Rotation.from_euler("XYZ", [[0.3, np.pi / 2, 0.1]] * J).as_quat()  # locked
    motion = Motion(sk, q, np.broadcast_to(sk.offsets, (frames, J, 3)).copy(), 1 / 30)
    channels = tuple(
        (("Xposition", "Yposition", "Zposition") if k == 0 else ())
        + tuple(f"{axis}rotation" for axis in order)
        for k, order in enumerate(orders)
    )
    values = None
    if with_values:
        values = rng.uniform(-400, 400, (frames, 3 + 3 * J))
    return BvhClip(motion, channels, values)


@pytest.mark.parametrize("with_values", [False, True])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), frames=st.integers(2, 40),
       orders=st.lists(st.sampled_from(ORDERS), min_size=1, max_size=6))  # fmt: skip
def test_writer_angles_are_the_numpy_compositions_bit_for_bit(seed, frames, orders, with_values):
    clip = _clip(seed, frames, orders, with_values)
    sk = clip.motion.skeleton
    layout = _channel_layout(clip.channels, sk.names, _depth_first_order(sk.parents))
    plan = E._euler_plan(layout, sk.names)
    rotations, _ = _clip_arrays(clip.motion)
    got = np.full((frames, layout.num_channels), np.nan)
    E.write_euler(clip, rotations, layout, plan, got)
    want = np.full_like(got, np.nan)
    degrees = _reference(clip, rotations, layout, plan)
    slot_of_joint = np.full(len(layout.rotation_axes), -1)
    slot_of_joint[plan.joints] = np.arange(len(plan.joints))
    for k, slot in enumerate(layout.rotation_slots):
        want[:, slot.columns] = degrees[:, slot_of_joint[slot.joints], k]
    np.testing.assert_array_equal(got, want)
