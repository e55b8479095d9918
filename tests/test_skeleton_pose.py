"""Skeleton validation, chain look-ups, FK against a matrix reference, FK/to_local round trips."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_quat_close, batch_shapes, dtypes, random_quats, seeds
from hypothesis import given, settings
from scipy.spatial.transform import Rotation

from ikrig.errors import HierarchyError, InputError
from ikrig.pose import Motion, bone_length_change, end_site_positions, fk, to_local
from ikrig.skeleton import Skeleton


def random_skeleton(rng, J=7) -> Skeleton:
    parents = [-1] + [int(rng.integers(0, j)) for j in range(1, J)]
    return Skeleton(
        tuple(f"j{j}" for j in range(J)),
        parents,
        rng.normal(size=(J, 3)),
        end_site_parents=[J - 1],
        end_site_offsets=[[0.0, 0.1, 0.0]],
    )


def fk_reference(parents, rl, pl):
    """FK with 4x4 matrices from SciPy, one pose at a time (slow, obviously right)."""
    J = len(parents)
    world = [None] * J
    for j in range(J):
        m = np.eye(4)
        m[:3, :3] = Rotation.from_quat(rl[j]).as_matrix()
        m[:3, 3] = pl[j]
        world[j] = m if parents[j] < 0 else world[parents[j]] @ m
    return np.array([w[:3, 3] for w in world]), np.array([w[:3, :3] for w in world])


@given(shape=batch_shapes, dtype=dtypes, seed=seeds)
@settings(max_examples=30, deadline=None)
def test_fk_matches_matrix_reference_and_round_trips(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    sk = random_skeleton(rng)
    rl = random_quats(rng, shape + (sk.num_joints,), dtype)
    pl = rng.normal(size=shape + (sk.num_joints, 3)).astype(dtype)
    motion = Motion(sk, rl, pl)
    rw, pw = motion.fk()
    assert rw.dtype == dtype and pw.dtype == dtype
    assert rw.shape == rl.shape and pw.shape == pl.shape
    atol = 1e-4 if dtype == np.float32 else 1e-12
    for idx in np.ndindex(*shape):
        ref_p, ref_m = fk_reference(sk.parents, rl[idx].astype(float), pl[idx].astype(float))
        np.testing.assert_allclose(pw[idx], ref_p, atol=atol)
        np.testing.assert_allclose(
            Rotation.from_quat(rw[idx].astype(float)).as_matrix(), ref_m, atol=atol
        )
    rl2, pl2 = to_local(sk.parents, rw, pw)
    assert_quat_close(rl2, rl, atol)
    np.testing.assert_allclose(pl2, pl, atol=atol)
    back = Motion.from_world(sk, rw, pw)
    np.testing.assert_allclose(back.positions_world(), pw, atol=atol)


def test_fk_broadcasts_rest_offsets_and_end_sites():
    sk = Skeleton(("a", "b", "c"), [-1, 0, 1], [[0, 1, 0], [1, 0, 0], [1, 0, 0]], [2], [[0, 0, 2]])
    rot = np.tile([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)], (3, 1))  # 90 deg about z each
    rw, pw = fk(sk.parents, rot, sk.offsets)
    np.testing.assert_allclose(pw, [[0, 1, 0], [0, 2, 0], [-1, 2, 0]], atol=1e-12)
    np.testing.assert_allclose(end_site_positions(sk, rw, pw), [[-1, 2, 2]], atol=1e-12)


def test_skeleton_validation_errors():
    with pytest.raises(HierarchyError, match="parents must come before"):
        Skeleton(("a", "b"), [1, -1], np.zeros((2, 3)))
    with pytest.raises(HierarchyError, match="appears twice"):
        Skeleton(("a", "a"), [-1, 0], np.zeros((2, 3)))
    with pytest.raises(HierarchyError, match="offsets"):
        Skeleton(("a", "b"), [-1, 0], np.zeros((3, 3)))
    with pytest.raises(HierarchyError, match="NaN"):
        Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [np.nan, 0, 0]])
    with pytest.raises(HierarchyError, match="end_site_parents"):
        Skeleton(("a",), [-1], np.zeros((1, 3)), [3], [[0, 0, 0]])


def test_skeleton_lookups():
    sk = Skeleton(
        ("Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg"),
        [-1, 0, 1, 2, 0],
        np.ones((5, 3)),
    )
    assert sk.index("LeftLeg") == 2 and sk.index(-1) == 4
    assert sk.chain("LeftUpLeg", "LeftFoot") == (1, 2, 3)
    assert sk.chain("Hips", "Hips") == (0,)
    assert sk.children("Hips") == (1, 4)
    assert sk.ancestors("LeftFoot") == (2, 1, 0)
    with pytest.raises(HierarchyError, match="not below"):
        sk.chain("RightUpLeg", "LeftFoot")
    with pytest.raises(InputError, match="did you mean 'LeftLeg'"):
        sk.index("LeftLegg")
    with pytest.raises(InputError, match="out of range"):
        sk.index(9)
    np.testing.assert_allclose(sk.bone_lengths(), [0] + [np.sqrt(3)] * 4)
    assert not sk.offsets.flags.writeable


def test_motion_validation_names_frame_and_joint():
    sk = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [1, 0, 0]])
    m = Motion.rest(sk, (4,), dtype=np.float32, frame_time=1 / 30)
    assert m.dtype == np.float32 and m.num_frames == 4 and m.batch_shape == (4,)
    pos = m.positions_local.copy()
    pos[2, 1, 0] = np.nan
    with pytest.raises(InputError, match="frame 2, joint 'b'"):
        Motion(sk, m.rotations_local, pos)
    with pytest.raises(InputError, match=r"\(\.\.\., 2, 4\)"):
        Motion(sk, np.zeros((4, 3, 4)), pos)
    with pytest.raises(InputError, match="batch shapes differ"):
        Motion(sk, m.rotations_local[:3], m.positions_local)
    with pytest.raises(InputError, match="frame_time"):
        m.replace(frame_time=0.0)
    one = m[1]
    assert one.batch_shape == () and one.frame_time is None
    assert m[1:3].num_frames == 2 and m[1:3].frame_time == pytest.approx(1 / 30)


def test_fk_of_real_clips_keeps_bone_lengths(bvh_files):
    from ikrig.io import read_bvh

    for path in bvh_files:
        motion = read_bvh(path).motion
        pw = motion.positions_world()
        parents = motion.skeleton.parents
        child = np.flatnonzero(parents >= 0)
        lengths = np.linalg.norm(pw[:, child] - pw[:, parents[child]], axis=-1)
        # a child's bone length is its (possibly animated) local translation's length
        expect = np.linalg.norm(motion.positions_local[:, child], axis=-1)
        np.testing.assert_allclose(lengths, expect, rtol=1e-9, atol=1e-9, err_msg=path.name)
        animated = np.ptp(motion.positions_local[:, child], axis=0).max(axis=-1) > 0
        fixed = lengths[:, ~animated]
        np.testing.assert_allclose(fixed, fixed[:1].repeat(len(fixed), 0), rtol=1e-9, atol=1e-9)


@given(shape=batch_shapes, dtype=dtypes, seed=seeds)
@settings(max_examples=30, deadline=None)
def test_motion_scales_rotations_to_unit_length(shape, dtype, seed):
    """A quaternion of any non-zero length is its rotation (as SciPy reads it): Motion keeps
    the unit ones (float rounding included) bit for bit and scales the others, so FK
    matches the matrix reference of the rotations meant."""
    rng = np.random.default_rng(seed)
    sk = random_skeleton(rng)
    unit = random_quats(rng, shape + (sk.num_joints,), dtype)
    scale = rng.choice([1.0, 1.0 + 1e-9, 0.5, 3.0, 1e-30, 1e30], size=unit.shape[:-1] + (1,))
    given_ = (unit * scale).astype(dtype)
    pl = rng.normal(size=shape + (sk.num_joints, 3)).astype(dtype)
    motion = Motion(sk, given_, pl)
    rl = motion.rotations_local
    assert rl.dtype == dtype
    kept = np.abs(scale[..., 0] - 1.0) < 1e-6  # within UNIT_TOLERANCE
    np.testing.assert_array_equal(rl[kept], given_[kept])
    atol = 1e-5 if dtype == np.float32 else 1e-12
    norms = np.linalg.norm(rl.astype(float), axis=-1)
    np.testing.assert_allclose(norms[~kept], 1.0, atol=atol)
    assert_quat_close(rl[~kept], unit[~kept], 10 * atol)
    atol = 1e-4 if dtype == np.float32 else 1e-7
    for idx in np.ndindex(*shape):  # SciPy scales the given quaternions itself
        ref_p, _ = fk_reference(sk.parents, given_[idx].astype(float), pl[idx].astype(float))
        np.testing.assert_allclose(motion.positions_world()[idx], ref_p, atol=atol)


def test_motion_refuses_a_zero_quaternion_in_one_line():
    sk = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [1, 0, 0]])
    rot = np.tile([0.0, 0.0, 0.0, 1.0], (4, 2, 1))
    rot[3, 1] = 0.0
    with pytest.raises(InputError, match=r"^rotations_local: zero quaternion .* at frame 3, "
                       r"joint 'b'$"):  # fmt: skip
        Motion(sk, rot, np.zeros((4, 2, 3)))
    rot[3, 1] = [0.0, np.inf, 0.0, 1.0]
    with pytest.raises(InputError, match=r"^rotations_local: NaN or infinite value at frame 3"):
        Motion(sk, rot, np.zeros((4, 2, 3)))


@given(shape=batch_shapes, dtype=dtypes, seed=seeds)
@settings(max_examples=30, deadline=None)
def test_bone_length_change_matches_numpy(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    sk = random_skeleton(rng)
    a = rng.normal(size=shape + (7, 3)).astype(dtype)
    b = (a + rng.normal(scale=0.1, size=a.shape)).astype(dtype)
    got = bone_length_change(sk.parents, a, b)
    child = np.flatnonzero(sk.parents >= 0)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)

    def length(p):
        return np.linalg.norm(p[..., child, :] - p[..., sk.parents[child], :], axis=-1)

    expect = np.zeros(7)
    if a.size:
        expect[child] = np.abs(length(a64) - length(b64)).reshape(-1, len(child)).max(axis=0)
    assert got.shape == (7,) and got.dtype == np.float64 and got[0] == 0.0
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-15)
    assert not bone_length_change(sk.parents, a, a).any()  # a clip against itself: exactly 0
    with pytest.raises(InputError, match="expected one shape"):
        bone_length_change(sk.parents, a, b[..., :6, :])
    b[..., 3, 1] = np.nan
    with pytest.raises(InputError, match="NaN or infinite"):
        bone_length_change(sk.parents, a, b)
