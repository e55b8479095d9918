"""The Blender add-on's arithmetic without Blender (issue 39): rotation modes against SciPy,
the spelling nearest a reference, and armature channels <-> Motion as exact inverses."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_quat_close, random_quats, seeds
from hypothesis import given
from scipy.spatial.transform import Rotation

from ikrig.blender.rig import (
    Channels,
    RestRig,
    channels_from_motion,
    motion_from_channels,
    world_frame,
)
from ikrig.blender.rotation import EULER_MODES, MODES, mode_from_quat, quat_from_mode
from ikrig.errors import InputError
from ikrig.math.quat import quat_to_matrix


def _values(rng, mode, n):
    if mode == "QUATERNION":
        q = random_quats(rng, (n,))
        return q[:, [3, 0, 1, 2]]
    if mode == "AXIS_ANGLE":
        axis = rng.normal(size=(n, 3))
        axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
        return np.concatenate([rng.uniform(-7, 7, (n, 1)), axis], axis=-1)
    return rng.uniform(-4, 4, (n, 3))


@pytest.mark.parametrize("mode", EULER_MODES)
def test_euler_modes_turn_about_the_fixed_axes_in_order(mode):
    """Blender's mode "XYZ" turns about X, then Y, then Z (fixed axes): SciPy's extrinsic
    "xyz" with the angles in that order."""
    rng = np.random.default_rng(1)
    v = rng.uniform(-3, 3, (20, 3))
    order = ["XYZ".index(c) for c in mode]
    ref = Rotation.from_euler(mode.lower(), v[:, order]).as_quat()
    assert_quat_close(quat_from_mode(v, mode), ref, 1e-12)


def test_quaternion_and_axis_angle_modes_are_blenders_layouts():
    q = quat_from_mode([[0.0, 1.0, 0.0, 0.0]], "QUATERNION")  # w x y z: 180 deg about X
    assert_quat_close(q, [[1.0, 0, 0, 0]], 1e-12)
    aa = quat_from_mode([[np.pi / 2, 0, 0, 2.0]], "AXIS_ANGLE")  # an axis of length 2
    assert_quat_close(aa, Rotation.from_rotvec([0, 0, np.pi / 2]).as_quat()[None], 1e-12)
    assert_quat_close(quat_from_mode([[1.0, 0, 0, 0]], "AXIS_ANGLE"), [[0, 0, 0, 1.0]], 0)


@given(seeds)
def test_a_rotation_written_back_is_spelled_as_its_reference(seed):
    """quat -> values with the original values as reference gives the original values, in
    every mode (the round trip of an unchanged action)."""
    rng = np.random.default_rng(seed)
    for mode in MODES:
        v = _values(rng, mode, 30)
        back = mode_from_quat(quat_from_mode(v, mode), mode, v)
        np.testing.assert_allclose(back, v, atol=1e-9, err_msg=mode)


@given(seeds)
def test_without_a_reference_each_frame_follows_the_previous(seed):
    """No reference (NaN rows): values stay continuous (no 2 pi jump, no sign flip) along a
    smooth path, and still give the same rotations."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.05, 1, 60)[:, None]  # from a turn, not the identity (no axis)
    for mode in MODES:
        a, b = _values(rng, mode, 2)
        v = a + t * (b - a) if mode not in ("QUATERNION", "AXIS_ANGLE") else None
        q = quat_from_mode(v, mode) if v is not None else None
        if q is None:  # a slow turn about one axis, past a half turn
            axis = rng.normal(size=3)
            q = Rotation.from_rotvec(np.outer(t[:, 0] * 5.0, axis / np.linalg.norm(axis)))
            q = q.as_quat()
        ref = np.full((len(q), 4 if mode in ("QUATERNION", "AXIS_ANGLE") else 3), np.nan)
        out = mode_from_quat(q, mode, ref)
        assert_quat_close(quat_from_mode(out, mode), q, 1e-9)
        assert np.abs(np.diff(out, axis=0)).max() < 0.5, mode


def test_bad_modes_and_shapes_are_input_errors():
    with pytest.raises(InputError, match="rotation_mode"):
        quat_from_mode([0, 0, 0], "XXY")
    with pytest.raises(InputError, match="values"):
        quat_from_mode([0, 0, 0], "QUATERNION")
    with pytest.raises(InputError, match="reference"):
        mode_from_quat([[0, 0, 0, 1.0]], "XYZ", np.zeros((2, 3)))


def _rig(rng, J=6):
    """A random tree of bones with rolled rest frames; some connected."""
    parents = np.array([-1] + [int(rng.integers(0, j)) for j in range(1, J)])
    rest = np.tile(np.eye(4), (J, 1, 1))
    rest[:, :3, :3] = quat_to_matrix(random_quats(rng, (J,)))
    rest[:, :3, 3] = rng.normal(size=(J, 3))
    connected = np.array([p >= 0 and j % 2 == 0 for j, p in enumerate(parents)])
    names = tuple(f"b{j}" for j in range(J))
    return RestRig(names, parents, rest, np.ones(J), connected)


def _pose_matrices(rig, ch):
    """Blender's pose matrices, the textbook way: P_j = P_p B_p^-1 B_j T R S."""
    F, J = ch.locations.shape[:2]
    out = np.zeros((F, J, 4, 4))
    for f in range(F):
        for j, p in enumerate(rig.parents):
            basis = np.eye(4)
            basis[:3, :3] = quat_to_matrix(ch.rotations[f, j]) * ch.scales[f, j]
            basis[:3, 3] = 0 if rig.connected[j] else ch.locations[f, j]
            local = rig.rest_matrices[j] @ basis
            if p >= 0:
                local = out[f, p] @ np.linalg.inv(rig.rest_matrices[p]) @ local
            out[f, j] = local
    return out


@given(seeds)
def test_channels_to_motion_match_blenders_pose_and_invert(seed):
    """The motion read from channels puts every joint at its bone's head, as Blender's pose
    matrices place it (object transform, unit scale and the turn to Y up included); writing
    it back gives the channels again."""
    rng = np.random.default_rng(seed)
    rig = _rig(rng)
    F, J = 4, len(rig.names)
    scale = np.repeat(rng.uniform(0.5, 2.0, (F, J, 1)), 3, axis=-1)
    ch = Channels(rng.normal(size=(F, J, 3)), random_quats(rng, (F, J)), scale)
    obj = np.eye(4)
    obj[:3, :3] = quat_to_matrix(random_quats(rng, ())) * 1.7
    obj[:3, 3] = rng.normal(size=3)
    frame = world_frame(obj, unit_scale=0.01)
    motion = motion_from_channels(rig, ch, frame, 1 / 30)
    heads = (obj @ _pose_matrices(rig, ch))[..., :3, 3]
    expected = 0.01 * np.stack([heads[..., 0], heads[..., 2], -heads[..., 1]], -1)
    np.testing.assert_allclose(motion.positions_world(), expected, atol=1e-9)
    loc, rot = channels_from_motion(rig, motion, frame, scale)
    keep = ~rig.connected
    np.testing.assert_allclose(loc[:, keep], ch.locations[:, keep], atol=1e-9)
    assert np.all(loc[:, rig.connected] == 0)
    assert_quat_close(rot, ch.rotations, 1e-9)


def test_a_non_uniform_object_scale_is_an_input_error():
    with pytest.raises(InputError, match="uniform"):
        world_frame(np.diag([1.0, 2.0, 1.0, 1.0]))
    with pytest.raises(InputError, match="unit_scale"):
        world_frame(np.eye(4), 0.0)
