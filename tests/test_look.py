"""Look-at spread over a chain (:func:`ikrig.solvers.look.look_at`), the head finder
(:mod:`ikrig.character.head`) and ``ikrig look`` on the shared clips.

On a small made-up skeleton: the eyes end on the target, the turn is shared (each chain
joint takes a part, none all of it), frames without a target or with weight 0 stay bit for
bit, dtypes and batch shapes hold, bad input fails in one line. Through the command line, on
the shared BVH clips and the Fox (glTF): the head's forward axis points at the target within
1 degree on every frame of the span, frames outside the span and its blend come back
exactly as they were read, and nothing is NaN.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from helpers import SHARED, SHARED_GLTF, invoke, one_error_line, shared_bvh_files
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from ikrig.character.head import axis_local, find_head
from ikrig.errors import HierarchyError, InputError
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.aim import AimAxes
from ikrig.solvers.look import LOOK_TOLERANCE, look_at, look_chain

NAMES = ("hips", "foot", "spine", "chest", "neck", "head", "arm")
PARENTS = [-1, 0, 0, 2, 3, 4, 3]
OFFSETS = [[0, 1, 0], [0, -1, 0], [0, 0.2, 0], [0, 0.2, 0], [0, 0.2, 0], [0, 0.1, 0], [0.2, 0.1, 0]]
SKELETON = Skeleton(NAMES, PARENTS, OFFSETS)
EYES = (0.0, 0.08, 0.06)


def _clip(frames=6, seed=0, dtype=np.float64):
    """A clip of the small skeleton with gently turned joints (a few degrees each)."""
    rng = np.random.default_rng(seed)
    rv = rng.normal(scale=0.15, size=(frames, len(NAMES), 3))
    rl = Rotation.from_rotvec(rv.reshape(-1, 3)).as_quat().reshape(frames, len(NAMES), 4)
    pl = np.broadcast_to(SKELETON.offsets, (frames, len(NAMES), 3))
    return Motion(SKELETON, rl.astype(dtype), np.array(pl, dtype), 1 / 30)


def _eye_ray(motion, axes):
    rw, pw = motion.fk()
    turn = Rotation.from_quat(rw[..., 5, :].reshape(-1, 4).astype(float))
    off = np.zeros(3) if axes.offset_local is None else np.asarray(axes.offset_local, float)
    origin = pw[..., 5, :].reshape(-1, 3) + turn.apply(off)
    return origin, turn.apply(np.asarray(axes.forward_local, float))


def _angle(a, b):
    return np.arctan2(np.linalg.norm(np.cross(a, b), axis=-1), np.sum(a * b, axis=-1))


def _turns(before, after, joints):
    """Each joint's local turn (radians) from ``before`` to ``after``, ``(..., k)``."""
    out = []
    for j in joints:
        a = Rotation.from_quat(before.rotations_local[..., j, :].reshape(-1, 4).astype(float))
        b = Rotation.from_quat(after.rotations_local[..., j, :].reshape(-1, 4).astype(float))
        out.append((a.inv() * b).magnitude())
    return np.stack(out, axis=-1)


def test_default_chain_is_the_head_and_ancestors_above_the_pelvis():
    assert look_chain(Motion.rest(SKELETON), "head") == (5, 4, 3, 2)
    assert look_chain(Motion.rest(SKELETON), "head", 2) == (5, 4)
    assert look_chain(_clip(), "neck") == (4, 3, 2)


def test_the_eyes_end_on_the_target_and_the_turn_is_shared():
    clip = _clip(8)
    axes = AimAxes((0, 0, 1.0), None, EYES)
    targets = np.array([[1.5, 1.8, 1.0], [-2, 1.2, 0.5]] * 4)
    r = look_at(clip, "head", targets, axes=axes)
    assert r.chain == (5, 4, 3, 2) and r.reached.all()
    assert np.all(r.error_angle <= 1e-9)
    origin, ray = _eye_ray(r.motion, axes)
    assert np.all(_angle(ray, targets - origin) <= 1e-9)  # independently, with SciPy
    turns = _turns(clip, r.motion, r.chain)
    total = _angle(_eye_ray(clip, axes)[1], targets - _eye_ray(clip, axes)[0])
    assert np.all(turns > 0.05 * total[:, None])  # every joint takes a part...
    assert np.all(turns.max(axis=-1) < 0.8 * total)  # ...none all of it
    assert np.all(turns[:, 0] > turns[:, 1])  # the head the most (weight 0.5, first)
    others = [j for j in range(len(NAMES)) if j not in r.chain]
    assert np.array_equal(r.motion.rotations_local[:, others], clip.rotations_local[:, others])


def test_frames_without_a_target_or_weight_stay_bit_for_bit():
    clip = _clip(6)
    targets = np.tile([1.0, 1.6, 1.0], (6, 1))
    targets[[1, 4]] = np.nan
    weight = np.array([1.0, 1.0, 0.0, 0.5, 1.0, 1.0])
    r = look_at(clip, "head", targets, weight, axes=AimAxes(offset_local=EYES))
    same = [1, 2, 4]
    assert np.array_equal(r.motion.rotations_local[same], clip.rotations_local[same])
    assert np.array_equal(r.motion.positions_local, clip.positions_local)
    assert r.reached.tolist() == [True, True, False, False, True, True]
    assert (r.error_angle[[1, 4]] == 0).all() and r.error_angle[2] > 0.01
    assert 0.01 < r.error_angle[3] < r.error_angle[2]  # half way there at weight 0.5
    assert np.isfinite(r.motion.rotations_local).all()


@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([np.float32, np.float64]),
       shape=st.sampled_from([(), (1,), (3,), (2, 3)]))  # fmt: skip
def test_targets_around_the_head_are_reached_in_any_batch_and_dtype(seed, dtype, shape):
    rng = np.random.default_rng(seed)
    clip = _clip(max(1, int(np.prod(shape))), seed, dtype)
    clip = Motion(SKELETON, clip.rotations_local.reshape(shape + (7, 4)),
                  clip.positions_local.reshape(shape + (7, 3)))  # fmt: skip
    head = clip.positions_world()[..., 5, :]
    way = rng.normal(size=shape + (3,))
    way[..., 2] = np.abs(way[..., 2]) + 0.5  # in front, up to about 120 degrees aside
    target = head + 2 * way / np.linalg.norm(way, axis=-1, keepdims=True)
    r = look_at(clip, "head", target)
    assert r.motion.dtype == dtype and r.motion.batch_shape == shape
    assert r.reached.shape == shape and r.reached.all()
    tol = 1e-3 if dtype == np.float32 else 1e-9
    assert np.all(r.error_angle <= tol) and LOOK_TOLERANCE >= tol / 10


def test_a_pose_looks_at_several_targets_at_once():
    r = look_at(Motion.rest(SKELETON), "head", [[1, 2, 1.0], [0, 1, 3.0], [np.nan] * 3])
    assert r.motion.batch_shape == (3,) and r.reached.tolist() == [True, True, True]
    assert r.error_angle[2] == 0 and np.isfinite(r.error_angle).all()


def test_chain_and_weights_can_be_given():
    clip = _clip(3)
    r = look_at(clip, "head", [1, 1.6, 1.0], chain=["chest", "head"], chain_weights=[0.3, 1.0])
    assert r.chain == (5, 3) and r.reached.all()
    short = look_at(clip, "head", [1, 1.6, 1.0], chain=["neck"], chain_weights=[0.5, 0.5])
    assert not short.reached.any()  # the farthest joint below 1: short of the target


@pytest.mark.parametrize(
    "kwargs, error, needle",
    [
        ({"joint": "nose"}, InputError, "no joint named 'nose'"),
        ({"chain": ["arm"]}, HierarchyError, "'arm' is not an ancestor of 'head'"),
        ({"chain": "neck"}, InputError, "chain: expected a sequence"),
        ({"chain_weights": [1.0, 1.0]}, InputError, "chain_weights: expected 4 weights"),
        ({"chain_weights": [0.5, 0.5, 2.0, 1.0]}, InputError, "chain_weights[2]"),
        ({"target_world": [1.0, np.nan, 0.0]}, InputError, "target_world: each row"),
        ({"target_world": [1.0, np.inf, 0.0]}, InputError, "target_world: each row"),
        ({"target_world": [[1.0, 1, 1]] * 4}, InputError, "batch shapes do not broadcast"),
        ({"weight": np.nan}, InputError, "weight: contains NaN"),
        ({"axes": AimAxes(forward_local=[1.0, 0])}, InputError, "forward_local: expected shape"),
    ],
)
def test_bad_input_fails_in_one_line(kwargs, error, needle):
    args = {"joint": "head", "target_world": [1.0, 1.0, 1.0]}
    with pytest.raises(error) as info:
        look_at(_clip(3), **{**args, **kwargs})
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_head_finder_reads_names():
    def sk(*names):
        return Skeleton(names, [-1] + list(range(len(names) - 1)), np.ones((len(names), 3)))

    assert find_head(sk("Hips", "Neck", "Head", "HeadTop_End")) == 2
    assert find_head(sk("root", "mixamorig:Spine", "mixamorig:Head")) == 2
    assert find_head(sk("b_Root_00", "b_Neck_04", "b_Head_05")) == 2
    godot = Skeleton(("MASTER", "neck", "headtracker", "head", "HEAD"), [-1, 0, 1, 2, 0],
                     np.ones((5, 3)))  # fmt: skip
    assert find_head(godot) == 3  # the deep one, not the control under the root
    with pytest.raises(InputError, match="no head joint found; pass --joint NAME"):
        find_head(sk("pelvis", "spine", "neck", "face"))
    with pytest.raises(InputError, match="no head joint found"):
        find_head(sk("Hips", "LeftHeadLight", "head_nub"))


def test_axis_local_sees_a_world_way_from_a_joint():
    clip = _clip(5)
    rw = clip.fk()[0][:, 5]
    local = np.array([0.3, 0.2, 0.9]) / np.linalg.norm([0.3, 0.2, 0.9])
    world = Rotation.from_quat(rw).apply(local)  # the same local axis each frame
    got = axis_local(clip, "head", world[2], frames=slice(2, 3))
    assert np.allclose(got, local)


# --------------------------------------------------------------------------------------
# ikrig look, on the shared clips
# --------------------------------------------------------------------------------------

BLEND = 0.2
CLIPS = shared_bvh_files() + ([SHARED_GLTF / "Fox.glb"] if SHARED_GLTF.is_dir() else [])


def _read(path):
    from ikrig.io import read_clip

    return read_clip(path).motion


def _forward(motion, head):
    """The axis ``ikrig look`` finds (the way the clip faces over its first second, seen
    from the head), through the public functions."""
    from ikrig.character import find_legs
    from ikrig.foot.travel import FACING_WINDOW, facing

    legs = find_legs(motion.skeleton, pose_world=motion.positions_world())
    h = facing(motion, legs)
    n = max(1, round(FACING_WINDOW / motion.frame_time))
    return axis_local(motion, head, [math.sin(h), 0, math.cos(h)], frames=slice(0, n))


@pytest.mark.parametrize("path", CLIPS, ids=[p.stem for p in CLIPS])
def test_ikrig_look_turns_the_head_onto_the_point_and_nothing_else(path, tmp_path):
    pytest.importorskip("pygltflib") if path.suffix == ".glb" else None
    from ikrig.character import detect_up, to_y_up
    from ikrig.math.axes import points_from_y_up

    source = _read(path)
    up = detect_up(source)
    motion = to_y_up(source, up)
    head = find_head(motion.skeleton)
    F = motion.num_frames
    a, b = F // 3, F // 3 + max(2, F // 4)
    pos = motion.positions_world()
    height = float(np.ptp(pos[0, :, 1]))
    forward = _forward(motion, head)
    rw = motion.fk()[0][:, head]
    ahead = Rotation.from_quat(rw[a]).apply(forward) * [1.0, 0.0, 1.0]
    ahead /= np.linalg.norm(ahead)  # where the head looks at the span's start, level
    side = np.cross([0.0, 1.0, 0.0], ahead)
    target_y = pos[a, head] + height * (0.6 * ahead + 0.8 * side + [0.0, 0.2, 0.0])
    target = points_from_y_up(target_y, up)
    out = tmp_path / f"looked{path.suffix}"
    r = invoke("look", path, "--at", ",".join(f"{v:.9g}" for v in target),
               "--frames", f"{a}:{b}", "--blend", BLEND, "-o", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert f"on target in {b - a} of {b - a} frames" in r.output

    result = _read(out)
    written = source  # a BVH comes back as read; glTF keys as a plain write stores them
    if path.suffix == ".glb":
        from ikrig.io import read_clip, write_clip

        write_clip(tmp_path / "same.glb", read_clip(path))
        written = _read(tmp_path / "same.glb")
    assert np.isfinite(result.rotations_local).all() and np.isfinite(result.positions_local).all()
    blend = math.ceil(BLEND / source.frame_time)
    outside = np.r_[0 : max(0, a - blend), min(F, b + blend) : F]
    assert len(outside) > 0
    assert np.array_equal(result.rotations_local[outside], written.rotations_local[outside])
    assert np.array_equal(result.positions_local[outside], written.positions_local[outside])

    looked = to_y_up(result, up)
    rw2, pw2 = looked.fk()
    ray = Rotation.from_quat(rw2[a:b, head]).apply(forward)
    error = np.degrees(_angle(ray, target_y - pw2[a:b, head]))
    assert error.max() <= 1.0, error.max()
    before = np.degrees(
        _angle(Rotation.from_quat(rw[a:b]).apply(forward), target_y - pos[a:b, head])
    )
    assert before.min() > 5.0  # it had to turn

    chain = [motion.skeleton.names.index(n) for n in re.search(r"chain (.*) \(", r.output)
             .group(1).split(", ")]  # fmt: skip
    assert chain[0] == head and len(chain) >= 3
    turns = _turns(written[a:b], result[a:b], chain)
    assert np.all(turns.max(axis=-1) < 0.8 * np.radians(before))  # no joint takes it all
    assert np.all(turns > 0.02 * np.radians(before)[:, None])  # every joint takes a part
    others = [j for j in range(motion.num_joints) if j not in chain]
    assert np.array_equal(result.rotations_local[:, others], written.rotations_local[:, others])


def test_ikrig_look_reports_bad_input_in_one_line(tmp_path):
    files = shared_bvh_files()
    if not files:
        pytest.skip("../shared/data/bvh is not present")
    clip, out = files[0], tmp_path / "out.bvh"
    one_error_line(invoke("look", clip, "--at", "1,2", "-o", out), "--at", "X,Y,Z")
    one_error_line(invoke("look", clip, "--at", "1,2,nan", "-o", out), "finite")
    one_error_line(invoke("look", clip, "--at", "1,2,3", "--joint", "Nose", "-o", out),
                   "no joint named 'Nose'")  # fmt: skip
    one_error_line(invoke("look", clip, "--at", "1,2,3", "--frames", "99999:", "-o", out),
                   "--frames 99999:", "holds none")  # fmt: skip
    one_error_line(invoke("look", clip, "--at", "1,2,3", "--frames", "a-b", "-o", out),
                   "--frames: expected A:B")  # fmt: skip
    one_error_line(invoke("look", clip, "--at", "1,2,3", "-o", clip), "input")
    headless = SHARED / "data" / "bvh_more" / "reactidle_idle_metres.bvh"
    if headless.exists():
        one_error_line(invoke("look", headless, "--at", "1,2,3", "-o", out),
                       "no head joint found; pass --joint NAME")  # fmt: skip
        r = invoke("look", headless, "--at", "1,2,3", "--joint", "face", "-o", out)
        assert r.exit_code == 0, r.output
    assert not out.exists() or out.stat().st_size > 0
