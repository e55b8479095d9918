"""BVH reading and writing: real clips round-trip, hand-made files, malformed files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from ikrig.errors import FileFormatError, InputError
from ikrig.io import BvhClip, format_bvh, parse_bvh, read_bvh, write_bvh
from ikrig.math import quat_from_euler
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

SHARED_BVH = Path(__file__).parents[1].parent / "shared" / "data" / "bvh"
PRINTED_ATOL = 1.5e-6  # values are printed with 6 decimals
TAIT_BRYAN = ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"]


def shared_files() -> list[Path]:
    return sorted(SHARED_BVH.glob("*.bvh")) if SHARED_BVH.is_dir() else []


def shared_file(name: str) -> Path:
    path = SHARED_BVH / name
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    return path


def quat_error(a, b) -> float:
    """Largest difference between unit quaternions, up to sign."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1)).max())


def rotation_channels(order: str) -> str:
    return " ".join(f"{axis}rotation" for axis in order)


def assert_same_layout(a: BvhClip, b: BvhClip, offset_atol: float = 1e-9) -> None:
    sa, sb = a.motion.skeleton, b.motion.skeleton
    assert sa.names == sb.names
    np.testing.assert_array_equal(sa.parents, sb.parents)
    np.testing.assert_allclose(sa.offsets, sb.offsets, rtol=0, atol=offset_atol)
    np.testing.assert_array_equal(sa.end_site_parents, sb.end_site_parents)
    np.testing.assert_allclose(sa.end_site_offsets, sb.end_site_offsets, rtol=0, atol=offset_atol)
    assert a.channels == b.channels
    assert a.num_frames == b.num_frames


# --------------------------------------------------------------------------------------------
# Real clips
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", shared_files(), ids=lambda p: p.name)
def test_shared_clip_round_trip(path, tmp_path):
    clip = read_bvh(path)
    out = tmp_path / path.name
    write_bvh(out, clip)
    again = read_bvh(out)
    assert_same_layout(clip, again, offset_atol=PRINTED_ATOL)
    assert again.frame_time == pytest.approx(clip.frame_time, rel=1e-12)
    assert again.path == str(out)
    # the written angles are the file's own values, not merely equivalent ones
    np.testing.assert_allclose(again.source_values, clip.source_values, rtol=0, atol=PRINTED_ATOL)
    assert quat_error(again.motion.rotations_local, clip.motion.rotations_local) < 1e-7


@pytest.mark.parametrize("path", shared_files(), ids=lambda p: p.name)
def test_shared_clip_rotations_match_scipy(path):
    clip = read_bvh(path)
    column = 0
    for j, channels in enumerate(clip.channels):
        rotations = [i for i, name in enumerate(channels) if name.lower().endswith("rotation")]
        order = "".join(channels[i][0].upper() for i in rotations)
        angles = clip.source_values[:, [column + i for i in rotations]]
        expected = Rotation.from_euler(order, angles, degrees=True).as_quat()
        assert quat_error(clip.motion.rotations_local[:, j], expected) < 1e-12
        column += len(channels)


def test_shared_clip_without_source_values_round_trips(bvh_files):
    """Frame-to-frame continuity alone (no source values) also gives the file's angles back."""
    clip = read_bvh(bvh_files[0])
    text = format_bvh(BvhClip(clip.motion, clip.channels))
    again = parse_bvh(text)
    assert quat_error(again.motion.rotations_local, clip.motion.rotations_local) < 1e-7
    jumps = np.abs(np.diff(again.source_values, axis=0))
    assert jumps.max() < 180  # continuous curves: no wrap-around jumps


def test_cmu_jumps_clip():
    clip = read_bvh(shared_file("cmu_01_01_jumps.bvh"))
    assert clip.motion.num_joints == 31
    assert clip.num_frames == 2752
    assert clip.motion.rotations_local.shape == (2752, 31, 4)
    assert clip.frame_time == pytest.approx(1 / 120, rel=1e-4)
    assert clip.fps == pytest.approx(120, rel=1e-4)
    assert clip.duration == pytest.approx(2752 / 120, rel=1e-4)
    assert clip.motion.skeleton.names[0] == "Hips"
    assert len(clip.channels[0]) == 6 and all(len(c) == 3 for c in clip.channels[1:])


def test_mocapbank_clip():
    clip = read_bvh(shared_file("mocapbank_19joint.bvh"))
    assert clip.motion.num_joints == 19
    assert clip.frame_time == pytest.approx(0.033333)
    root = clip.source_values[:, :3]
    np.testing.assert_array_equal(clip.motion.positions_local[:, 0], root)


def test_edited_clip_stays_close_to_the_source_curves(bvh_files):
    clip = read_bvh(bvh_files[0])
    nudge = quat_from_euler(np.radians([0.5, -0.3, 0.2]), "ZYX")
    from ikrig.math import quat_mul

    edited = clip.with_motion(
        clip.motion.replace(rotations_local=quat_mul(clip.motion.rotations_local, nudge))
    )
    again = parse_bvh(format_bvh(edited))
    assert quat_error(again.motion.rotations_local, edited.motion.rotations_local) < 1e-7
    rotation_columns = [
        i for i, name in enumerate(n for c in clip.channels for n in c) if "rotation" in name
    ]
    change = np.abs(again.source_values - clip.source_values)[:, rotation_columns]
    assert np.median(change) < 1.0  # degrees; no branch flips or 360 jumps
    assert np.percentile(change, 99.9) < 10.0


# --------------------------------------------------------------------------------------------
# Hand-made files
# --------------------------------------------------------------------------------------------

# Lines are numbered in the comments: the malformed-file tests point at them.
BASE = """\
HIERARCHY
ROOT Hips
{
  OFFSET 1.0 2.0 3.0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT Spine
  {
    OFFSET 0 5 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 4 0
    }
  }
  JOINT Leg
  {
    OFFSET 2 -5 0
    CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation
    End Site
    {
      OFFSET 0 -4 0
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.04
10 20 30 1 2 3 4 5 6 7 8 9 10 11 12
11 21 31 2 3 4 5 6 7 8 9 10 11 12 13
12 22 32 3 4 5 6 7 8 9 10 11 12 13 14
"""
BASE_ROWS = np.array([[10 + f, 20 + f, 30 + f] + list(range(1 + f, 13 + f)) for f in range(3)])


def replace_line(text: str, number: int, new: str) -> str:
    lines = text.split("\n")
    lines[number - 1] = new
    return "\n".join(lines)


def test_base_file():
    clip = parse_bvh(BASE)
    sk = clip.motion.skeleton
    assert sk.names == ("Hips", "Spine", "Leg")
    np.testing.assert_array_equal(sk.parents, [-1, 0, 0])
    np.testing.assert_array_equal(sk.offsets, [[1, 2, 3], [0, 5, 0], [2, -5, 0]])
    np.testing.assert_array_equal(sk.end_site_parents, [1, 2])
    np.testing.assert_array_equal(sk.end_site_offsets, [[0, 4, 0], [0, -4, 0]])
    np.testing.assert_array_equal(clip.source_values, BASE_ROWS)
    assert clip.frame_time == 0.04 and clip.num_frames == 3 and clip.path is None
    assert clip.channels[1] == ("Zrotation", "Xrotation", "Yrotation")
    m = clip.motion
    assert m.rotations_local.shape == (3, 3, 4) and m.positions_local.shape == (3, 3, 3)
    assert m.rotations_local.dtype == np.float64


def test_non_zero_root_offset_with_position_channels():
    """Position channels replace the OFFSET (they are not added to it)."""
    clip = parse_bvh(BASE)
    np.testing.assert_array_equal(clip.motion.positions_local[:, 0], BASE_ROWS[:, :3])
    np.testing.assert_array_equal(clip.motion.skeleton.offsets[0], [1, 2, 3])
    again = parse_bvh(format_bvh(clip))
    np.testing.assert_array_equal(again.motion.skeleton.offsets[0], [1, 2, 3])
    np.testing.assert_allclose(again.source_values, BASE_ROWS, atol=PRINTED_ATOL)


def test_six_channels_on_a_non_root_joint():
    clip = parse_bvh(BASE)
    np.testing.assert_array_equal(clip.motion.positions_local[:, 2], BASE_ROWS[:, 9:12])
    np.testing.assert_array_equal(clip.motion.positions_local[:, 1], [[0, 5, 0]] * 3)
    expected = Rotation.from_euler("YXZ", BASE_ROWS[:, 12:15], degrees=True).as_quat()
    assert quat_error(clip.motion.rotations_local[:, 2], expected) < 1e-12


def two_joint_file(order: str, rows, frame_time: str = "0.0333333") -> str:
    body = "\n".join(" ".join(f"{v:.6f}" for v in row) for row in rows)
    return f"""HIERARCHY
ROOT root
{{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition {rotation_channels(order)}
\tJOINT child
\t{{
\t\tOFFSET 0 1 0
\t\tCHANNELS 3 {rotation_channels(order)}
\t\tEnd Site
\t\t{{
\t\t\tOFFSET 0 1 0
\t\t}}
\t}}
}}
MOTION
Frames: {len(rows)}
Frame Time: {frame_time}
{body}
"""


@pytest.mark.parametrize("order", TAIT_BRYAN + ["ZXZ", "YXY"])
def test_rotation_orders_match_scipy(order):
    rng = np.random.default_rng(len(order) + sum(map(ord, order)))
    angles = rng.uniform(-180, 180, (20, 2, 3))
    angles[:, :, 1] /= 2  # keep the middle angle in the principal range, for variety
    angles = np.round(angles, 6)  # as printed in the file
    rows = np.concatenate([rng.normal(size=(20, 3)), angles.reshape(20, 6)], axis=1)
    clip = parse_bvh(two_joint_file(order, rows))
    for j in range(2):
        expected = Rotation.from_euler(order, angles[:, j], degrees=True).as_quat()
        assert quat_error(clip.motion.rotations_local[:, j], expected) < 1e-12
    again = parse_bvh(format_bvh(clip))
    np.testing.assert_allclose(again.source_values, clip.source_values, atol=PRINTED_ATOL)


@pytest.mark.parametrize("order", TAIT_BRYAN + ["ZXZ"])
def test_gimbal_lock_and_large_angles_round_trip(order):
    """Middle angle at its lock, outer angles past 180 or -360: the file's values come back."""
    middle = [0.0, 180.0] if order[0] == order[2] else [90.0, -90.0]
    triples = [[a, b, c] for b in middle for a, c in [(30, 50), (-170, 400), (250, -10)]]
    triples += [[720.5, 10, -300], [-181, -179, 181]]
    rows = [[0, 0, 0, *t, *t[::-1]] for t in triples]
    clip = parse_bvh(two_joint_file(order, rows))
    again = parse_bvh(format_bvh(clip))
    np.testing.assert_allclose(again.source_values, clip.source_values, atol=PRINTED_ATOL)
    # without the source values the result is equivalent (same rotations), though not equal
    alone = parse_bvh(format_bvh(BvhClip(clip.motion, clip.channels)))
    assert quat_error(alone.motion.rotations_local, clip.motion.rotations_local) < 1e-9


def test_frame_to_frame_continuity_through_gimbal_lock():
    """A joint pitching through 90 degrees and spinning: no jumps between written frames."""
    t = np.linspace(0, 1, 200)
    angles = np.stack([400 * t - 100, 120 * np.sin(3 * t), 30 * np.cos(5 * t)], axis=1)
    q = Rotation.from_euler("ZYX", angles, degrees=True).as_quat()
    skeleton = Skeleton(("a",), [-1], [[0, 0, 0]])
    motion = Motion(skeleton, q[:, None], np.zeros((200, 1, 3)), 1 / 30)
    clip = BvhClip(motion, (("Zrotation", "Yrotation", "Xrotation"),))
    again = parse_bvh(format_bvh(clip))
    assert quat_error(again.motion.rotations_local[:, 0], q) < 1e-7  # 6 printed decimals
    assert np.abs(np.diff(again.source_values, axis=0)).max() < 15


def test_crlf_cr_and_tabs_give_the_same_clip():
    base = parse_bvh(BASE)
    crlf = parse_bvh(BASE.replace("\n", "\r\n"))
    cr = parse_bvh(BASE.replace("\n", "\r"))
    tabs = parse_bvh(BASE.replace("  ", "\t").replace(" ", " \t "))
    for clip in (crlf, cr, tabs):
        assert_same_layout(base, clip)
        np.testing.assert_array_equal(clip.source_values, base.source_values)


def test_irregular_whitespace():
    text = BASE.replace("End Site", "End \t Site  ").replace("{", "{   ")
    text = text.replace("MOTION\n", "\n\nMOTION  \n\n").replace(
        "Frame Time: 0.04", "Frame Time:\t0.04"
    )
    text = text.replace("Frames: 3", "Frames:\t3 ")
    lines = text.split("\n")
    rows = lines[-4:-1]
    text = "\n".join(lines[:-4] + ["", rows[0] + "   ", "", "\t" + rows[1], rows[2] + "\t", "", ""])
    clip = parse_bvh(text)
    np.testing.assert_array_equal(clip.source_values, BASE_ROWS)
    assert clip.motion.skeleton.names == ("Hips", "Spine", "Leg")


def test_compact_braces_and_keyword_case():
    text = (
        "HIERARCHY\nROOT Hips {\n OFFSET 0 0 0\n CHANNELS 3 XROTATION yrotation Zrotation\n"
        " End Site { OFFSET 0 1 0 }\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n1 2 3\n"
    )
    clip = parse_bvh(text)
    assert clip.channels == (("XROTATION", "yrotation", "Zrotation"),)
    expected = Rotation.from_euler("XYZ", [1, 2, 3], degrees=True).as_quat()
    assert quat_error(clip.motion.rotations_local[0, 0], expected) < 1e-12
    np.testing.assert_array_equal(clip.motion.skeleton.end_site_offsets, [[0, 1, 0]])


PARTIAL = """\
HIERARCHY
ROOT root
{
  OFFSET 5 6 7
  CHANNELS 2 Yposition Yrotation
  JOINT a
  {
    OFFSET 0 1 0
    CHANNELS 2 Zrotation Xrotation
    JOINT b
    {
      OFFSET 0 1 0
      CHANNELS 0
      JOINT c
      {
        OFFSET 1 0 0
        CHANNELS 2 Xposition Xrotation
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
1.5 30 10 -20 0.25 45
2.5 -60 -15 95 0.5 -30
"""


def test_subsets_of_channels():
    clip = parse_bvh(PARTIAL)
    m = clip.motion
    np.testing.assert_array_equal(m.positions_local[:, 0], [[5, 1.5, 7], [5, 2.5, 7]])
    np.testing.assert_array_equal(m.positions_local[:, 2], [[0, 1, 0]] * 2)
    np.testing.assert_array_equal(m.positions_local[:, 3], [[0.25, 0, 0], [0.5, 0, 0]])
    np.testing.assert_array_equal(m.rotations_local[:, 2], [[0, 0, 0, 1]] * 2)
    expected = {
        0: Rotation.from_euler("Y", [[30], [-60]], degrees=True),
        1: Rotation.from_euler("ZX", [[10, -20], [-15, 95]], degrees=True),
        3: Rotation.from_euler("X", [[45], [-30]], degrees=True),
    }
    for j, rotation in expected.items():
        assert quat_error(m.rotations_local[:, j], rotation.as_quat()) < 1e-12
    again = parse_bvh(format_bvh(clip))
    assert_same_layout(clip, again)
    np.testing.assert_allclose(again.source_values, clip.source_values, atol=PRINTED_ATOL)
    alone = parse_bvh(format_bvh(BvhClip(m, clip.channels)))
    np.testing.assert_allclose(alone.source_values, clip.source_values, atol=PRINTED_ATOL)


def test_two_rotation_channels_at_gimbal_lock_are_exact():
    """Zrotation Xrotation with X at 90: the dropped third angle stays 0."""
    text = PARTIAL.replace("10 -20", "10 90").replace("-15 95", "-15 -90")
    clip = parse_bvh(text)
    for reference in (clip, BvhClip(clip.motion, clip.channels)):
        again = parse_bvh(format_bvh(reference))
        assert quat_error(again.motion.rotations_local, clip.motion.rotations_local) < 1e-9


def test_zero_frames():
    text = BASE.split("Frames:")[0] + "Frames: 0\nFrame Time: 0.04\n"
    clip = parse_bvh(text)
    assert clip.num_frames == 0
    assert clip.motion.rotations_local.shape == (0, 3, 4)
    assert clip.source_values.shape == (0, 15)
    again = parse_bvh(format_bvh(clip))
    assert again.num_frames == 0
    assert_same_layout(clip, again)


def test_zero_frame_time_reads_as_none():
    clip = parse_bvh(BASE.replace("Frame Time: 0.04", "Frame Time: 0"))
    assert clip.frame_time is None and clip.fps is None and clip.duration is None
    assert "Frame Time: 0.0\n" in format_bvh(clip)


def test_numbers_in_every_notation():
    values = ["1e2", "-1.5E-3", "+.5", "7.", "-0", "0.1000000000000000055511151231257827"]
    values += ["123456789012345678901234", "1e-30", "3.14159265358979323846264338327950288"]
    values += ["00042", "-2.5e+1", "1" + "0" * 30 + ".5"]
    header = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n}\n"
    rows = "\n".join(" ".join(values[i : i + 3]) for i in range(0, len(values), 3))
    text = f"{header}MOTION\nFrames: {len(values) // 3}\nFrame Time: 1\n{rows}\n"
    clip = parse_bvh(text)
    np.testing.assert_array_equal(clip.source_values.ravel(), [float(v) for v in values])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e30, 1e30), min_size=3, max_size=30))  # positions: |x| <= 1e30
def test_number_parsing_is_exact(numbers):
    numbers = numbers[: len(numbers) // 3 * 3]
    header = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Xposition Yposition Zposition\n}\n"
    rows = "\n".join(
        " ".join(repr(v) for v in numbers[i : i + 3]) for i in range(0, len(numbers), 3)
    )
    text = f"{header}MOTION\nFrames: {len(numbers) // 3}\nFrame Time: 1\n{rows}\n"
    parsed = parse_bvh(text).source_values.ravel()
    np.testing.assert_array_equal(parsed, np.array(numbers, dtype=np.float64))


def test_writing_matches_percent_formatting_and_precision():
    clip = parse_bvh(two_joint_file("ZYX", [[0.1234565, -1.0000005, 2.5, 0, 0, 0] + [0] * 3]))
    text3 = format_bvh(clip, precision=3)
    assert "\n0.123 -1.000 2.500 " in text3
    assert "OFFSET 0.000 1.000 0.000" in text3
    row = format_bvh(clip, precision=6).rstrip("\n").split("\n")[-1].split()
    assert row[:3] == [f"{v:.6f}" for v in (0.1234565, -1.0000005, 2.5)]
    for bad in (-1, 18, 2.5, "6"):
        with pytest.raises(InputError, match="precision"):
            format_bvh(clip, precision=bad)


def test_write_and_read_a_file(tmp_path):
    clip = parse_bvh(BASE, path="in-memory.bvh")
    assert clip.path == "in-memory.bvh"
    out = tmp_path / "out.bvh"
    write_bvh(out, clip)
    again = read_bvh(out)
    assert out.read_bytes().startswith(b"HIERARCHY\nROOT Hips\n{\n\tOFFSET 1.000000 2.000000")
    assert_same_layout(clip, again)
    np.testing.assert_allclose(again.source_values, BASE_ROWS, atol=PRINTED_ATOL)


def test_skeleton_not_in_depth_first_order_is_written_depth_first():
    skeleton = Skeleton(("hips", "l_thigh", "r_thigh", "l_knee"), [-1, 0, 0, 1], np.eye(4, 3))
    rng = np.random.default_rng(3)
    q = Rotation.random(4 * 5, random_state=rng).as_quat().reshape(5, 4, 4)
    positions = np.repeat(skeleton.offsets[None], 5, axis=0)
    positions[:, 0] = rng.normal(size=(5, 3))
    channels = (("Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"),)
    channels += (("Zrotation", "Xrotation", "Yrotation"),) * 3
    clip = BvhClip(Motion(skeleton, q, positions, 0.1), channels)
    again = parse_bvh(format_bvh(clip))
    assert again.motion.skeleton.names == ("hips", "l_thigh", "l_knee", "r_thigh")
    order = [0, 1, 3, 2]
    assert quat_error(again.motion.rotations_local, q[:, order]) < 1e-7
    np.testing.assert_allclose(again.motion.positions_local, positions[:, order], atol=1e-6)


def test_single_pose_is_written_as_one_frame():
    clip = parse_bvh(BASE)
    pose = BvhClip(clip.motion[1], clip.channels)
    again = parse_bvh(format_bvh(pose))
    assert again.num_frames == 1
    assert quat_error(again.motion.rotations_local[0], clip.motion.rotations_local[1]) < 1e-7


def test_bad_clips_are_rejected():
    clip = parse_bvh(BASE)
    with pytest.raises(InputError, match="one entry per joint"):
        BvhClip(clip.motion, clip.channels[:2])
    with pytest.raises(InputError, match="unknown channel"):
        BvhClip(clip.motion, (("Xposition",), ("Wrotation",), ()))
    with pytest.raises(InputError, match="source_values"):
        BvhClip(clip.motion, clip.channels, np.zeros((3, 14)))
    other = Skeleton(("a", "b", "c"), [-1, 0, 1], np.zeros((3, 3)))
    with pytest.raises(InputError, match="parents"):
        clip.with_motion(Motion.rest(other, (3,)))
    four = (("Xrotation", "Yrotation", "Zrotation", "Xrotation"), (), ())
    with pytest.raises(InputError, match="cannot be written as Euler"):
        format_bvh(BvhClip(clip.motion, four))
    crowd = Motion.rest(clip.motion.skeleton, (2, 3))
    with pytest.raises(InputError, match="batch shape"):
        format_bvh(BvhClip(crowd, clip.channels))


# --------------------------------------------------------------------------------------------
# Malformed files: every error names the file and the line
# --------------------------------------------------------------------------------------------

MALFORMED = {
    # name: (line to replace, new text, line reported, words in the message)
    "short row": (29, "11 21 31 2 3 4 5 6 7 8 9 10 11 12", 29, "14 values, expected 15"),
    "long row": (30, "12 22 32 3 4 5 6 7 8 9 10 11 12 13 14 15", 30, "16 values"),
    "missing open brace": (7, "", 8, "expected '{' after JOINT Spine"),
    "extra close brace": (24, "} }", 24, "unexpected '}'"),
    "early close brace": (13, "} }", 15, "extra '}' at line 14"),
    "missing close brace": (24, "", 25, "'}' closing joint 'Hips' (opened at line 3)"),
    "unknown channel": (9, "CHANNELS 3 Zrotation Wrotation Yrotation", 9, "'Wrotation'"),
    "non-numeric offset": (8, "OFFSET 0 five 0", 8, "found 'five'"),
    "short offset": (8, "OFFSET 0 5", 8, "3 numbers after OFFSET"),
    "non-numeric value": (
        29,
        "11 21 31 2 3 x 5 6 7 8 9 10 11 12 13",
        29,
        "column 6 (Hips Xrotation)",
    ),
    "half-numeric value": (28, "10 20 30 1 2 3 4 5 6 7 8 9 10 11 1.2.3", 28, "found '1.2.3'"),
    "nan value": (30, "12 22 32 3 4 5 6 7 8 9 nan 11 12 13 14", 30, "found 'nan'"),
    "fewer rows": (26, "Frames: 4", 30, "expected 4 frame rows"),
    "more rows": (26, "Frames: 2", 30, "more frame rows than the 2"),
    "missing MOTION": (25, "", 26, "expected ROOT or MOTION"),
    "missing Frames": (26, "", 27, "expected 'Frames: <count>'"),
    "bad frame count": (26, "Frames: 3.5", 26, "expected a frame count"),
    "missing Frame Time": (27, "", 28, "expected 'Frame Time: <seconds>'"),
    "bad frame time": (27, "Frame Time: -0.1", 27, "frame time >= 0"),
    "duplicate joint": (15, "JOINT Spine", 15, "'Spine' (first defined at line 6)"),
    "channel count": (9, "CHANNELS 2 Zrotation Xrotation Yrotation", 9, "2 channels but lists 3"),
    "no channel count": (9, "CHANNELS Zrotation Xrotation Yrotation", 9, "channel count"),
    "missing HIERARCHY": (1, "", 2, "'HIERARCHY'"),
    "missing joint name": (6, "JOINT", 6, "joint name"),
    "unknown keyword": (8, "OFFSETS 0 5 0", 8, "unexpected 'OFFSETS'"),
    "bad end site": (10, "End Sight", 10, "'End Site'"),
    "no offset": (8, "", 7, "no OFFSET"),
    "root inside joint": (14, "ROOT Other", 14, "before ROOT"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_names_file_and_line(case, tmp_path):
    number, new, line, words = MALFORMED[case]
    path = tmp_path / "broken.bvh"
    path.write_text(replace_line(BASE, number, new))
    with pytest.raises(FileFormatError) as info:
        read_bvh(path)
    error = info.value
    assert error.line == line, str(error)
    assert str(error).startswith(f"{path}:{line}: "), str(error)
    assert words in error.reason
    assert error.path == str(path)


def test_malformed_text_names_string_and_crlf_keeps_line_numbers():
    text = replace_line(BASE, 29, "1 2 3").replace("\n", "\r\n")
    with pytest.raises(FileFormatError, match=r"^<string>:29: frame 1 has 3 values"):
        parse_bvh(text)
    with pytest.raises(FileFormatError, match=r"^clip\.bvh:29: "):
        parse_bvh(text, path="clip.bvh")


def test_missing_motion_at_the_end():
    text = BASE.split("MOTION")[0]
    with pytest.raises(FileFormatError, match=r"^<string>:25: expected a MOTION line"):
        parse_bvh(text)


def test_empty_and_truncated_files():
    with pytest.raises(FileFormatError, match=r"^<string>:1: expected 'HIERARCHY'"):
        parse_bvh("")
    with pytest.raises(FileFormatError, match=r"^<string>:26: expected 'Frames"):
        parse_bvh(BASE.split("Frames")[0])
    with pytest.raises(FileFormatError, match=r"^<string>:28: expected 4 frame rows"):
        parse_bvh(replace_line(BASE, 26, "Frames: 4").split("11 21")[0])


def test_first_problem_in_file_order_is_reported():
    """A short row before a non-numeric value is reported first, and vice versa."""
    text = replace_line(replace_line(BASE, 28, "1 2"), 30, "x")
    with pytest.raises(FileFormatError, match=r":28: frame 0 has 2 values"):
        parse_bvh(text)
    text = replace_line(replace_line(BASE, 28, "x"), 30, "1 2")
    with pytest.raises(FileFormatError, match=r":28: expected a number"):
        parse_bvh(text)


def test_out_of_range_number():
    text = replace_line(BASE, 29, "11 21 31 2 3 4 5 6 7 8 9 10 11 12 1e999")
    with pytest.raises(FileFormatError, match=r":29: number out of range"):
        parse_bvh(text)


def test_reading_a_missing_file_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        read_bvh(tmp_path / "nope.bvh")
