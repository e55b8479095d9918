"""Issue 36: every leg, or a warning. A limb that reaches the floor in the clip but is no
placed leg (front legs named as arms, an override that leaves one out) is named in a
warning: by the API, by ``ikrig foot`` and in the batch summary."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from helpers import FOX_LEGS, SHARED, invoke, shared_bvh_files

from ikrig.app.placement import place_clip
from ikrig.character import detect_up, find_legs, to_y_up
from ikrig.character.hands import find_hands
from ikrig.character.head import head_or_top
from ikrig.character.limbs import UnplacedLimbWarning, unplaced_limbs
from ikrig.data.walk import walk_clip
from ikrig.io import read_bvh, read_clip
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

FOX = SHARED / "data" / "gltf" / "Fox.glb"
HIND = ";".join(FOX_LEGS.split(";")[:2])  # the Fox's hind legs only


def _fox():
    if not FOX.is_file():
        pytest.skip(f"{FOX} is not present")
    return read_clip(FOX, animation="Walk").motion


def test_a_biped_walks_with_no_limb_left():
    clip = walk_clip(seconds=2.0)
    assert unplaced_limbs(clip.skeleton, find_legs(clip.skeleton), clip.positions_world()) == []


def test_every_shared_biped_has_no_limb_left():
    """No hanging arm, static root or control bone of the shared rigs counts as a limb."""
    files = shared_bvh_files()
    if not files:
        pytest.skip("../shared/data is not present")
    for path in files:
        motion = read_bvh(path).motion
        motion = to_y_up(motion, detect_up(motion))
        legs = find_legs(motion.skeleton, None, motion.positions_world())
        assert unplaced_limbs(motion.skeleton, legs, motion.positions_world()) == [], path.name


def test_front_legs_left_out_are_named():
    motion = _fox()
    with pytest.warns(UnplacedLimbWarning, match="2 limb.*b_RightUpperArm_06.*b_LeftUpperArm_09"):
        place_clip(motion, "flat", ["full"], HIND)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnplacedLimbWarning)
        place_clip(motion, "flat", ["full"], FOX_LEGS)  # all four: no warning


def test_foot_and_batch_say_which_limbs_were_left(tmp_path):
    if not FOX.is_file():
        pytest.skip(f"{FOX} is not present")
    r = invoke("foot", FOX, "--animation", "Walk", "--legs", HIND, "-g", "flat", "-o",
               tmp_path / "fox.glb")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "ikrig: warning: 2 limb(s) reach the floor but are not placed" in r.stderr
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copyfile(FOX, lib / "Fox.glb")
    r = invoke("batch", lib, "--animation", "Walk", "--legs", HIND, "-g", "flat",
               "-o", tmp_path / "out", "--jobs", 1, "-q")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "warning Fox.glb: 2 limb(s) reach the floor" in r.output


def test_positions_are_read_per_frame():
    """A limb counts only when its end is down in enough frames (a hand touching the floor
    once does not)."""
    clip = walk_clip(seconds=2.0)
    legs = find_legs(clip.skeleton)
    pos = clip.positions_world().copy()
    hand = clip.skeleton.index("LeftHand")
    floor = np.percentile(pos[:, legs.legs[0].ankle, 1], 5.0)
    below = [j for j in range(clip.skeleton.num_joints) if hand in (j, *clip.skeleton.ancestors(j))]
    pos[:3, below, 1] = floor  # 3 of the frames
    assert unplaced_limbs(clip.skeleton, legs, pos) == []
    pos[:, below, 1] = floor  # every frame: the arm ends on the floor
    left = unplaced_limbs(clip.skeleton, legs, pos)
    assert len(left) == 1 and left[0] in (hand, *clip.skeleton.ancestors(hand))


# ------------------------------------------------------------------- hands and the head (issue 38)
def test_find_hands_by_name_by_wrist_and_by_tree():
    def sk(names, parents):
        offsets = [[0, 1, 0]] + [[0.2, 0.1, 0]] * (len(names) - 1)
        return Skeleton(tuple(names), parents, offsets)

    mixamo = sk(["Hips", "Spine", "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
                 "RightShoulder", "RightArm", "RightForeArm", "RightHand", "Head"],
                [-1, 0, 1, 2, 3, 4, 1, 6, 7, 8, 1])  # fmt: skip
    assert find_hands(mixamo) == {"left": 5, "right": 9}
    cmu = sk(["Hips", "Chest", "LeftCollar", "LeftShoulder", "LeftElbow", "LeftWrist",
              "LeftWristEnd", "Head"], [-1, 0, 1, 2, 3, 4, 5, 1])  # fmt: skip
    assert find_hands(cmu) == {"left": 5}
    rigify = sk(["pelvis", "spine", "face", "shoulder.L", "upper_arm.L", "forearm.L",
                 "shoulder.R", "upper_arm.R", "forearm.R"],
                [-1, 0, 1, 1, 3, 4, 1, 6, 7])  # fmt: skip
    assert find_hands(rigify) == {}  # no hand named, no head given: rule 3 is off
    assert find_hands(rigify, head=2) == {"left": 5, "right": 8}
    with_fingers = sk(["hip", "chest", "head", "arm_l", "elbow_part_l", "palm_l", "f1_l",
                       "f2_l"], [-1, 0, 1, 1, 3, 4, 5, 5])  # fmt: skip
    assert find_hands(with_fingers, head=2) == {"left": 5}  # where the chain branches


def test_head_or_top():
    sk = Skeleton(("hips", "spine", "neck_2", "arm.L"), [-1, 0, 1, 1],
                  [[0, 1, 0], [0, 0.5, 0], [0, 0.3, 0], [0.3, 0.6, 0]])  # fmt: skip
    pose = Motion.rest(sk).positions_world()
    assert head_or_top(sk, pose) == 2  # arm.L is higher, but has a side
