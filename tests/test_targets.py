"""The targets file of ``ikrig fit`` (issue 38): ``ikrig.io.targets``.

Round trips over frame counts, joint counts, goal masks and dtypes; names mapped onto a
skeleton's joint order; the targets of a clip by forward kinematics; and every broken rule
of the format, each one line naming the file (or the field) and the key.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SHARED_BVH, random_quats
from hypothesis import given
from hypothesis import strategies as st

from ikrig.errors import FileFormatError, InputError
from ikrig.io import read_bvh
from ikrig.io.targets import (
    UNIT_TOLERANCE,
    Targets,
    read_targets,
    targets_from_motion,
    write_targets,
)
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton


def _targets(seed, F, J, dtype=np.float64, fps=30.0, names=None) -> Targets:
    """Random targets: each row a goal or NaN, rotations unit."""
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(F, J, 3)).astype(dtype)
    rot = random_quats(rng, (F, J), dtype)
    pos[rng.random((F, J)) < 0.4] = np.nan
    rot[rng.random((F, J)) < 0.6] = np.nan
    names = names or tuple(f"joint {j}" for j in range(J))
    return Targets(names, pos, rot, fps)


def _same(a: Targets, b: Targets) -> None:
    assert a.names == b.names
    assert a.fps == b.fps
    for x, y in ((a.positions_world, b.positions_world), (a.rotations_world, b.rotations_world)):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)  # NaN where NaN, else bit for bit


def _save(path, **arrays):
    base = {
        "names": np.array(["a", "b"]),
        "positions": np.zeros((3, 2, 3)),
        "rotations": np.tile([0.0, 0, 0, 1], (3, 2, 1)),
        "fps": np.float64(30),
    }
    base.update(arrays)
    np.savez(path, **{k: v for k, v in base.items() if v is not None})
    return path


def _one_line(exc_info, *words):
    msg = str(exc_info.value)
    assert "\n" not in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


# --------------------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------------------


@given(
    seed=st.integers(0, 2**32 - 1),
    F=st.integers(0, 6),
    J=st.integers(1, 7),
    dtype=st.sampled_from([np.float32, np.float64]),
    fps=st.floats(0.5, 240.0),
)
def test_round_trip_keeps_every_value_nan_and_dtype(tmp_path_factory, seed, F, J, dtype, fps):
    t = _targets(seed, F, J, dtype, fps)
    path = write_targets(tmp_path_factory.mktemp("t") / "t.npz", t)
    back = read_targets(path)
    _same(t, back)
    assert back.has_position.tolist() == (~np.isnan(t.positions_world[..., 0])).tolist()


@given(seed=st.integers(0, 2**32 - 1), F=st.integers(1, 5), J=st.integers(1, 8))
def test_named_subset_in_any_order_maps_onto_the_skeleton(tmp_path_factory, seed, F, J):
    rng = np.random.default_rng(seed)
    sk = Skeleton(tuple(f"j{k}" for k in range(J)), np.arange(-1, J - 1), rng.normal(size=(J, 3)))
    picked = rng.permutation(J)[: rng.integers(1, J + 1)]
    t = _targets(seed, F, len(picked), names=tuple(sk.names[k] for k in picked))
    path = write_targets(tmp_path_factory.mktemp("t") / "t.npz", t)
    mapped = read_targets(path, sk)
    assert mapped.names == sk.names
    assert mapped.positions_world.shape == (F, J, 3)
    assert mapped.rotations_world.shape == (F, J, 4)
    np.testing.assert_array_equal(mapped.positions_world[:, picked], t.positions_world)
    np.testing.assert_array_equal(mapped.rotations_world[:, picked], t.rotations_world)
    others = np.setdiff1d(np.arange(J), picked)
    assert np.isnan(mapped.positions_world[:, others]).all()
    assert np.isnan(mapped.rotations_world[:, others]).all()


def test_a_file_written_by_numpy_alone_reads(tmp_path):
    """The fixed format: what another tool writes with ``np.savez`` (float32, bytes names,
    a Python float for fps, extra keys) is read."""
    pos = np.full((2, 2, 3), np.nan, np.float32)
    pos[1, 0] = (1, 2, 3)
    path = tmp_path / "other.npz"
    rot = np.full((2, 2, 4), np.nan, np.float32)
    names = np.array([b"Hips", b"Head"])
    np.savez(path, names=names, positions=pos, rotations=rot, fps=24, note=np.arange(3))
    t = read_targets(path)
    assert t.names == ("Hips", "Head") and t.fps == 24.0 and t.frame_time == 1 / 24
    assert t.positions_world.dtype == np.float32
    assert t.has_position.tolist() == [[False, False], [True, False]]


def test_rotations_within_the_tolerance_are_kept_as_given(tmp_path):
    q = np.array([0.0, 0.0, 0.0, 1.0 + 0.9 * UNIT_TOLERANCE])
    path = _save(tmp_path / "t.npz", rotations=np.broadcast_to(q, (3, 2, 4)))
    assert (read_targets(path).rotations_world[..., 3] == q[3]).all()


def test_write_is_atomic_and_uses_the_name_as_given(tmp_path):
    t = _targets(1, 3, 2)
    out = tmp_path / "goals.targets"
    write_targets(out, t)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goals.targets"]  # no .npz added
    _same(read_targets(out), t)
    with pytest.raises(OSError):
        write_targets(tmp_path / "no such folder" / "t.npz", t)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goals.targets"]
    with pytest.raises(InputError, match="targets: expected Targets"):
        write_targets(out, {"names": ("a",)})  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------
# The targets of a clip
# --------------------------------------------------------------------------------------


def _chain_clip(F=4, dtype=np.float64, frame_time=1 / 60):
    sk = Skeleton(("root", "mid", "tip"), [-1, 0, 1], [[0, 1, 0], [0, 1, 0], [1, 0, 0]])
    rng = np.random.default_rng(5)
    rot = random_quats(rng, (F, 3), dtype)
    pos = np.broadcast_to(sk.offsets, (F, 3, 3)).astype(dtype)
    return Motion(sk, rot, pos, frame_time)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_targets_from_motion_are_the_clips_fk(dtype):
    clip = _chain_clip(dtype=dtype)
    rot_w, pos_w = clip.fk()
    t = targets_from_motion(clip, joints=("tip", 0), rotations_for=("mid",))
    assert t.names == clip.skeleton.names and t.fps == pytest.approx(60)
    assert t.positions_world.dtype == dtype
    np.testing.assert_array_equal(t.positions_world[:, [0, 2]], pos_w[:, [0, 2]])
    np.testing.assert_array_equal(t.rotations_world[:, 1], rot_w[:, 1])
    assert t.has_position.tolist() == [[True, False, True]] * 4
    assert t.has_rotation.tolist() == [[False, True, False]] * 4
    every = targets_from_motion(clip)
    np.testing.assert_array_equal(every.positions_world, pos_w)
    assert not every.has_rotation.any()
    assert targets_from_motion(clip[0], fps=25).positions_world.shape == (1, 3, 3)


def test_targets_from_motion_refuses_what_it_cannot_make():
    clip = _chain_clip()
    with pytest.raises(InputError, match="batch shape"):
        targets_from_motion(Motion.rest(clip.skeleton, (2, 3), frame_time=0.1))
    with pytest.raises(InputError, match="fps"):
        targets_from_motion(clip.replace(frame_time=None))
    with pytest.raises(InputError, match="no joint named 'toe'"):
        targets_from_motion(clip, joints=("toe",))
    with pytest.raises(InputError, match="motion"):
        targets_from_motion(clip.fk())  # type: ignore[arg-type]


def test_a_shared_clip_round_trips_onto_its_skeleton(tmp_path):
    files = sorted(SHARED_BVH.glob("*.bvh")) if SHARED_BVH.is_dir() else []
    if not files:
        pytest.skip("../shared/data/bvh is not present")
    clip = read_bvh(files[0])
    motion = clip.motion[:50]
    sk = motion.skeleton
    trackers = (0, sk.num_joints // 2, sk.num_joints - 1)
    t = targets_from_motion(motion, joints=trackers, rotations_for=trackers)
    back = read_targets(write_targets(tmp_path / "t.npz", t), sk)
    _same(back, t)
    assert back.fps == pytest.approx(1 / clip.frame_time)
    assert back.has_position.sum() == 50 * len(trackers)


# --------------------------------------------------------------------------------------
# Every broken rule: one line naming the file and the key
# --------------------------------------------------------------------------------------

F3 = np.zeros((3, 2, 3))
Q = np.tile([0.0, 0, 0, 1], (3, 2, 1))


def _nan_at(a, index, value=np.nan):
    a = a.copy()
    a[index] = value
    return a


BROKEN = {
    "positions shape": ({"positions": np.zeros((3, 2, 2))}, "positions", "(F, 2, 3)"),
    "positions joints": ({"positions": np.zeros((3, 3, 3))}, "positions", "for 2 names"),
    "positions 2-d": ({"positions": np.zeros((2, 3))}, "positions", "(F, 2, 3)"),
    "rotations shape": ({"rotations": np.zeros((3, 2, 3))}, "rotations", "(F, 2, 4)"),
    "frame counts": ({"rotations": Q[:2]}, "frame counts differ", "(3 and 2)"),
    "positions partly nan": ({"positions": _nan_at(F3, (1, 0, 1))}, "positions", "partly NaN"),
    "rotations partly nan": ({"rotations": _nan_at(Q, (2, 1, 3))}, "rotations", "partly NaN"),
    "infinite position": ({"positions": _nan_at(F3, (0, 1, 2), np.inf)}, "positions", "infinite"),
    "infinite rotation": ({"rotations": _nan_at(Q, (0, 1, 2), -np.inf)}, "rotations", "infinite"),
    "non-unit": ({"rotations": _nan_at(Q, (2, 0, 3), 1.01)}, "rotations", "not a unit"),
    "zero quaternion": ({"rotations": _nan_at(Q, (2, 0, 3), 0.0)}, "rotations", "length 0"),
    "text positions": ({"positions": np.full((3, 2, 3), "x")}, "positions", "dtype"),
    "fps zero": ({"fps": np.float64(0)}, "fps", "(0.0, inf)"),
    "fps negative": ({"fps": np.float64(-24)}, "fps", "(0.0, inf)"),
    "fps nan": ({"fps": np.float64(np.nan)}, "fps", "nan"),
    "fps array": ({"fps": np.array([30.0, 30.0])}, "fps", "scalar"),
    "fps bool": ({"fps": np.bool_(True)}, "fps", "number"),
    "names twice": ({"names": np.array(["a", "a"])}, "names", "'a' appears twice"),
    "names empty": ({"names": np.array(["a", " "])}, "names", "name 1 is empty"),
    "names numbers": ({"names": np.array([1, 2])}, "names", "strings"),
    "names 2-d": ({"names": np.array([["a", "b"]])}, "names", "(J,)"),
    "names none": ({"names": np.array([], dtype=str)}, "names", "J >= 1"),
}


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_a_broken_file_is_one_line_naming_the_file_and_key(tmp_path, case):
    arrays, *words = BROKEN[case]
    path = _save(tmp_path / "bad.npz", **arrays)
    with pytest.raises(FileFormatError) as e:
        read_targets(path)
    assert _one_line(e, str(path), *words).startswith(f"{path}: ")


@pytest.mark.parametrize("case", ["positions partly nan", "non-unit", "fps zero"])
def test_the_same_rules_hold_for_targets_made_in_python(case):
    arrays, *words = BROKEN[case]
    field = {"positions": "positions_world", "rotations": "rotations_world", "fps": "fps"}
    key = next(iter(arrays))
    values = {"names": ("a", "b"), "positions": F3, "rotations": Q, "fps": 30.0, **arrays}
    with pytest.raises(InputError) as e:
        Targets(values["names"], values["positions"], values["rotations"], values["fps"])
    assert _one_line(e, words[1]).startswith(field[key] + ":")


@pytest.mark.parametrize("missing", ["names", "positions", "rotations", "fps"])
def test_a_missing_key_is_named(tmp_path, missing):
    path = _save(tmp_path / "t.npz", **{missing: None})
    with pytest.raises(FileFormatError) as e:
        read_targets(path)
    _one_line(e, str(path), f"{missing}: missing", "the archive has:")


def test_not_an_archive_is_one_line(tmp_path):
    text = tmp_path / "t.npz"
    text.write_text("names,positions\n")
    single = tmp_path / "one.npz"
    with open(single, "wb") as f:
        np.save(f, np.zeros(3))
    for path, words in ((text, "not an .npz archive"), (single, "single .npy array")):
        with pytest.raises(FileFormatError) as e:
            read_targets(path)
        _one_line(e, str(path), words)
    with pytest.raises(FileNotFoundError):
        read_targets(tmp_path / "absent.npz")


def test_object_arrays_are_refused_without_unpickling(tmp_path):
    path = tmp_path / "t.npz"
    np.savez(path, names=np.array(["a", "b"], dtype=object), positions=F3, rotations=Q, fps=30.0)
    with pytest.raises(FileFormatError) as e:
        read_targets(path)
    _one_line(e, str(path), "names: cannot be read", "pickle")


def test_unknown_names_are_all_listed(tmp_path):
    sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1], np.eye(3))
    path = _save(tmp_path / "t.npz", names=np.array(["Knee", "ankle"]))
    _save(tmp_path / "u.npz", names=np.array(["x", "y"]))
    with pytest.raises(FileFormatError) as e:
        read_targets(path, sk)
    _one_line(e, str(path), "names: 1 not joints of the skeleton", "'Knee'")
    with pytest.raises(FileFormatError) as e:
        read_targets(tmp_path / "u.npz", sk)
    _one_line(e, "2 not joints", "'x', 'y'")
