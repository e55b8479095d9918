"""Legs found by name in the common rig conventions, with distractors around them."""

from __future__ import annotations

import pytest

from ikrig.character import find_legs, pelvis_joint
from ikrig.errors import InputError
from ikrig.skeleton import Skeleton

CONVENTIONS = {  # (pelvis, hip, knee, ankle, toe) with {s} the side token
    "mixamo": ("mixamorig:Hips", "mixamorig:{S}UpLeg", "mixamorig:{S}Leg", "mixamorig:{S}Foot",
               "mixamorig:{S}ToeBase"),
    "mixamo12": ("mixamorig12:Hips", "mixamorig12:{S}UpLeg", "mixamorig12:{S}Leg",
                 "mixamorig12:{S}Foot", "mixamorig12:{S}ToeBase"),
    "blender": ("pelvis", "thigh.{s1}", "shin.{s1}", "foot.{s1}", "toe.{s1}"),
    "bandai": ("Hips", "UpperLeg_{s1}", "LowerLeg_{s1}", "Foot_{s1}", "Toes_{s1}"),
    "biped": ("Bip01 Pelvis", "Bip01 {s1} Thigh", "Bip01 {s1} Calf", "Bip01 {s1} Foot",
              "Bip01 {s1} Toe0"),
    "biped_": ("Bip01_Pelvis", "Bip01_{s1}_Thigh", "Bip01_{s1}_Calf", "Bip01_{s1}_Foot",
               "Bip01_{s1}_Toe0"),
    "unreal": ("pelvis", "thigh_{s}", "calf_{s}", "foot_{s}", "ball_{s}"),
    "cmu": ("Hips", "{S}UpLeg", "{S}Leg", "{S}Foot", "{S}ToeBase"),
    "cmu_hip": ("Hips", "{S}Hip", "{S}Knee", "{S}Ankle", "{S}Toe"),
}  # fmt: skip


def _rig(names) -> Skeleton:
    """A pelvis with two legs named by ``names`` plus distractors: a spine and arms,
    CMU-style pelvis helpers, a twist bone beside each thigh, an end-site-like leaf."""
    pelvis, hip, knee, ankle, toe = names
    out, parents, offsets = [pelvis, "Spine", "LeftArm", "RightArm"], [-1, 0, 1, 1], [
        [0, 1.0, 0], [0, 0.2, 0], [0.2, 0.3, 0], [-0.2, 0.3, 0]
    ]  # fmt: skip
    for s, S, s1, x in (("l", "Left", "L", 0.1), ("r", "Right", "R", -0.1)):
        fill = {"s": s, "S": S, "s1": s1}
        n = len(out)
        out += [f"{S[0]}HipJoint", hip.format(**fill), f"thigh_twist_01_{s}",
                knee.format(**fill), ankle.format(**fill), toe.format(**fill)]  # fmt: skip
        parents += [0, n, n + 1, n + 1, n + 3, n + 4]
        offsets += [[x, 0, 0], [0, -0.05, 0], [0, -0.2, 0], [0, -0.45, 0], [0, -0.42, 0],
                    [0, -0.05, 0.1]]  # fmt: skip
    return Skeleton(tuple(out), parents, offsets)


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
def test_legs_are_found_by_name(convention):
    names = CONVENTIONS[convention]
    sk = _rig(names)
    legs = find_legs(sk)
    assert [leg.side for leg in legs.legs] == ["left", "right"]
    for leg, (s, S, s1) in zip(legs.legs, (("l", "Left", "L"), ("r", "Right", "R"))):
        fill = {"s": s, "S": S, "s1": s1}
        expected = [n.format(**fill) for n in names[1:]]
        assert [sk.names[j] for j in (leg.hip, leg.knee, leg.ankle, leg.toe)] == expected
    assert sk.names[pelvis_joint(sk, legs)] == names[0]
    assert legs.leg_length == pytest.approx(0.87)


def test_override_legs_any_number_and_no_joint_twice():
    sk = _rig(CONVENTIONS["cmu"])
    legs = find_legs(sk, "LeftUpLeg,LeftLeg,LeftFoot;RightUpLeg,RightLeg,RightFoot,RightToeBase")
    assert [leg.toe for leg in legs.legs][0] == -1 and legs.legs[1].toe >= 0
    with pytest.raises(InputError, match="'LeftLeg' is in leg 1 and leg 2"):
        find_legs(sk, "LeftUpLeg,LeftLeg,LeftFoot;LeftLeg,LeftFoot,LeftToeBase")
    with pytest.raises(InputError, match="not a child"):
        find_legs(sk, "LeftUpLeg,LeftFoot,LeftLeg")
    with pytest.raises(InputError, match="3 or 4 joint names"):
        find_legs(sk, "LeftUpLeg,LeftLeg")
