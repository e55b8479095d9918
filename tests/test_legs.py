"""Issue 11, legs on every rig: found by name in the common conventions among distractors,
refused when a bone sits inside the two-bone chain, any number of legs through the override,
the topology fallback without joint 0 as the pelvis, every shared clip, and BVH files with
position channels on every joint kept through read, write and ``ikrig foot``."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import SHARED_BVH

from ikrig.character import find_legs, pelvis_joint
from ikrig.character.legs import _by_topology
from ikrig.errors import InputError
from ikrig.io import read_bvh, write_bvh
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton

SIDES = (("l", "Left", "L", 0.1), ("r", "Right", "R", -0.1))
CONVENTIONS = {  # (pelvis, hip, knee, ankle, toe); {s} l/r, {S} Left/Right, {s1} L/R
    "mixamo": ("mixamorig:Hips", "mixamorig:{S}UpLeg", "mixamorig:{S}Leg", "mixamorig:{S}Foot",
               "mixamorig:{S}ToeBase"),
    "mixamo1": ("mixamorig1:Hips", "mixamorig1:{S}UpLeg", "mixamorig1:{S}Leg",
                "mixamorig1:{S}Foot", "mixamorig1:{S}ToeBase"),
    "mixamo12": ("mixamorig12:Hips", "mixamorig12:{S}UpLeg", "mixamorig12:{S}Leg",
                 "mixamorig12:{S}Foot", "mixamorig12:{S}ToeBase"),
    "blender": ("pelvis", "thigh.{s1}", "shin.{s1}", "foot.{s1}", "toe.{s1}"),
    "blender_lower": ("pelvis", "thigh.{s}", "shin.{s}", "foot.{s}", "toe.{s}"),
    "blender_underscore": ("pelvis", "thigh_{s1}", "shin_{s1}", "foot_{s1}", "toe_{s1}"),
    "blender_dash": ("pelvis", "thigh-{s1}", "shin-{s1}", "foot-{s1}", "toe-{s1}"),
    "blender_armature": ("Armature|pelvis", "Armature|thigh.{s1}", "Armature|shin.{s1}",
                         "Armature|foot.{s1}", "Armature|toe.{s1}"),
    "bandai": ("Hips", "UpperLeg_{s1}", "LowerLeg_{s1}", "Foot_{s1}", "Toes_{s1}"),
    "biped": ("Bip01 Pelvis", "Bip01 {s1} Thigh", "Bip01 {s1} Calf", "Bip01 {s1} Foot",
              "Bip01 {s1} Toe0"),
    "biped_": ("Bip01_Pelvis", "Bip01_{s1}_Thigh", "Bip01_{s1}_Calf", "Bip01_{s1}_Foot",
               "Bip01_{s1}_Toe0"),
    "unreal": ("pelvis", "thigh_{s}", "calf_{s}", "foot_{s}", "ball_{s}"),
    "cmu": ("Hips", "{S}UpLeg", "{S}Leg", "{S}Foot", "{S}ToeBase"),
    "cmu_hip": ("Hips", "{S}Hip", "{S}Knee", "{S}Ankle", "{S}Toe"),
}  # fmt: skip


class Rig:
    """A skeleton built joint by joint: ``add(name, parent, offset)`` returns the index."""

    def __init__(self):
        self.names, self.parents, self.offsets = [], [], []

    def add(self, name, parent, offset) -> int:
        self.names.append(name)
        self.parents.append(-1 if parent is None else self.names.index(parent))
        self.offsets.append(offset)
        return len(self.names) - 1

    def skeleton(self) -> Skeleton:
        return Skeleton(tuple(self.names), self.parents, self.offsets)


def _rig(names, ground_root=False) -> Skeleton:
    """A pelvis with two legs named by ``names`` among distractors: a spine, arms with hands
    and fingers, CMU pelvis helpers above the hips, twist and roll bones beside thigh and
    shin, Unreal IK bones from the root, a toe digit and a toe end joint."""
    pelvis, hip, knee, ankle, toe = names
    r = Rig()
    if ground_root:
        r.add("joint_Root", None, [0, 0, 0])
    r.add(pelvis, "joint_Root" if ground_root else None, [0, 1.0, 0])
    r.add("Spine", pelvis, [0, 0.2, 0])
    r.add("ik_foot_root", pelvis, [0, -1.0, 0])
    for s, S, s1, x in SIDES:
        f = {"s": s, "S": S, "s1": s1}
        h, k, a, t = (n.format(**f) for n in (hip, knee, ankle, toe))
        r.add(f"{S}Arm", "Spine", [3 * x, 0.3, 0])
        r.add(f"{S}Hand", f"{S}Arm", [5 * x, 0, 0])
        r.add(f"{S}HandIndex1", f"{S}Hand", [x, 0, 0])
        r.add(f"{S[0]}HipJoint", pelvis, [x, 0, 0])
        r.add(h, f"{S[0]}HipJoint", [0, -0.05, 0])
        r.add(f"thigh_twist_01_{s}", h, [0, -0.2, 0])
        r.add(f"{S}UpLegRoll", h, [0, 0, 0])
        r.add(k, h, [0, -0.45, 0])
        r.add(f"calf_twist_01_{s}", k, [0, -0.2, 0])
        r.add(f"{S}LegRoll", k, [0, 0, 0])
        r.add(a, k, [0, -0.42, 0])
        r.add(t, a, [0, -0.05, 0.1])
        r.add(f"{S}Toe_End", t, [0, 0, 0.05])
        r.add(f"{S}FootIndex1", a, [0.02, -0.05, 0.1])
        r.add(f"ik_foot_{s}", "ik_foot_root", [x, 0.08, 0])
    return r.skeleton()


def _expected(names):
    out = []
    for s, S, s1, _ in SIDES:
        out.append([n.format(s=s, S=S, s1=s1) for n in names[1:]])
    return out


@pytest.mark.parametrize("convention", sorted(CONVENTIONS))
@pytest.mark.parametrize("ground_root", [False, True])
def test_legs_are_found_by_name(convention, ground_root):
    names = CONVENTIONS[convention]
    sk = _rig(names, ground_root)
    legs = find_legs(sk)
    assert [leg.side for leg in legs.legs] == ["left", "right"]
    for leg, expected in zip(legs.legs, _expected(names)):
        assert [sk.names[j] for j in (leg.hip, leg.knee, leg.ankle, leg.toe)] == expected
        assert sk.parents[leg.knee] == leg.hip and sk.parents[leg.ankle] == leg.knee
    assert sk.names[pelvis_joint(sk, legs)] == names[0]
    assert legs.leg_length == pytest.approx(0.87)


def _chain_rig(thigh, shin, extra_thigh=None, extra_shin=None) -> Skeleton:
    """Two legs whose thigh (or shin) holds a bone inside the chain: ``extra_thigh = (name,
    offset of the extra bone below the hip)``, the knee then hangs from it."""
    r = Rig()
    r.add("pelvis", None, [0, 1.0, 0])
    for s, _, s1, x in SIDES:
        f = {"s": s, "s1": s1}
        hip = r.add(thigh.format(**f), "pelvis", [x, -0.05, 0])
        above_knee = r.names[hip]
        if extra_thigh:
            name, y = extra_thigh
            r.add(name.format(**f), above_knee, [0, y, 0])
            above_knee = name.format(**f)
        r.add(shin.format(**f), above_knee, [0, -0.45 - (extra_thigh[1] if extra_thigh else 0), 0])
        above_ankle = shin.format(**f)
        if extra_shin:
            name, y = extra_shin
            r.add(name.format(**f), above_ankle, [0, y, 0])
            above_ankle = name.format(**f)
        r.add(f"foot_{s}", above_ankle, [0, -0.42 - (extra_shin[1] if extra_shin else 0), 0])
    return r.skeleton()


def test_a_roll_bone_at_the_hip_inside_the_chain_is_solved_from():
    """hip > roll (zero length) > knee: the roll turns about the hip, so it is the chain's
    top; the knee and ankle are still the real ones and the leg length is unchanged."""
    sk = _chain_rig("thigh_{s}", "calf_{s}", extra_thigh=("thigh_roll_{s}", 0.0))
    legs = find_legs(sk)
    left = legs.legs[0]
    assert [sk.names[j] for j in left.joints] == ["thigh_roll_l", "calf_l", "foot_l"]
    assert legs.leg_length == pytest.approx(0.87)
    assert sk.names[pelvis_joint(sk, legs)] == "pelvis"


@pytest.mark.parametrize(
    "extra, between",
    [
        (dict(extra_thigh=("thigh_twist_01_{s}", -0.2)), "'thigh_twist_01_l' sits between the hip"),
        (dict(extra_shin=("calf_twist_01_{s}", -0.2)), "'calf_twist_01_l' sits between the knee"),
    ],
)
def test_a_twist_bone_half_way_down_the_chain_is_refused(extra, between):
    sk = _chain_rig("thigh_{s}", "calf_{s}", **extra)
    with pytest.raises(InputError, match="--legs") as err:
        find_legs(sk)
    assert between in str(err.value) and "\n" not in str(err.value)
    name = extra.get("extra_thigh", extra.get("extra_shin"))[0].format(s="l")
    chain = f"{name},calf_l,foot_l" if "thigh" in name else f"thigh_l,calf_l,{name}"
    if "thigh" in name:  # the user may bend the leg from the twist bone instead
        assert find_legs(sk, chain).legs[0].hip == sk.index(name)


def test_a_thigh_split_in_segments_is_refused_not_halved():
    """Rigify-style deform bones ("DEF-thigh.L" > "DEF-thigh.L.001" > "DEF-shin.L"): the
    hip is the top segment, and the chain is not a parent chain."""
    sk = _chain_rig("DEF-thigh.{s1}", "DEF-shin.{s1}", extra_thigh=("DEF-thigh.{s1}.001", -0.2))
    with pytest.raises(InputError, match="'DEF-thigh.L.001' sits between the hip 'DEF-thigh.L'"):
        find_legs(sk)


# ----------------------------------------------------------------------------- override
def test_override_any_number_of_legs_and_their_sides():
    sk = _rig(CONVENTIONS["unreal"])
    two = "thigh_l,calf_l,foot_l;thigh_r,calf_r,foot_r,ball_r"
    legs = find_legs(sk, two)
    assert [leg.side for leg in legs.legs] == ["left", "right"]
    assert legs.legs[0].toe == -1 and sk.names[legs.legs[1].toe] == "ball_r"
    # the sides come from the names when they say so, whatever the order
    swapped = find_legs(sk, "thigh_r,calf_r,foot_r;thigh_l,calf_l,foot_l")
    assert [leg.side for leg in swapped.legs] == ["right", "left"]
    assert sk.names[swapped.legs[0].hip] == "thigh_r"
    # labels given by the user; a toe below the ankle but not its child is fine
    labelled = find_legs(sk, "front=thigh_l,calf_l,foot_l,LeftToe_End;back=thigh_r,calf_r,foot_r")
    assert [leg.side for leg in labelled.legs] == ["front", "back"]
    assert sk.names[labelled.legs[0].toe] == "LeftToe_End"


def test_override_sides_without_side_names():
    r = Rig()
    r.add("body", None, [0, 1, 0])
    for k in range(5):
        r.add(f"a{k}", "body", [0.1 * k, 0, 0])
        r.add(f"b{k}", f"a{k}", [0, -0.45, 0])
        r.add(f"c{k}", f"b{k}", [0, -0.42, 0])
    sk = r.skeleton()
    spec = ";".join(f"a{k},b{k},c{k}" for k in range(5))
    legs = find_legs(sk, spec)
    assert [leg.side for leg in legs.legs] == ["left", "right", "leg2", "leg3", "leg4"]
    assert pelvis_joint(sk, legs) == 0 and len({j for g in legs.legs for j in g.joints}) == 15
    with pytest.raises(InputError, match="label 'x' is taken"):
        find_legs(sk, "x=a0,b0,c0;x=a1,b1,c1")
    with pytest.raises(InputError, match="not a label"):
        find_legs(sk, "two words=a0,b0,c0")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("LeftUpLeg,LeftLeg,LeftFoot;LeftUpLeg,LeftLeg,LeftFoot",
         "'LeftUpLeg' is in leg 1 and leg 2"),
        ("LHipJoint,LeftUpLeg,LeftLeg;LeftUpLeg,LeftLeg,LeftFoot",
         "'LeftUpLeg' is in leg 1 and leg 2"),
        ("LeftUpLeg,LeftLeg,LeftFoot,LeftToeBase;LeftFoot,LeftToeBase,LeftToe_End",
         "'LeftFoot' is in leg 1 and leg 2"),
        ("LeftUpLeg,LeftLeg,LeftFut", "no joint named 'LeftFut'; did you mean 'LeftFoot'"),
        ("LeftUpLeg,LeftLeg,Zzzz", "no joint named 'Zzzz'; `ikrig info` lists them"),
        ("LeftUpLeg,LeftFoot,LeftLeg", "'LeftFoot' is not a child of 'LeftUpLeg' \\(bones"),
        ("LeftUpLeg,RightLeg,RightFoot", "'RightLeg' is not a child of 'LeftUpLeg'$"),
        ("LeftUpLeg,LeftLeg,LeftFoot,RightToeBase", "toe 'RightToeBase' is not below"),
        ("LeftUpLeg,LeftLeg", "3 or 4 joint names"),
        ("LeftUpLeg,,LeftLeg", "3 or 4 joint names"),
        (" ; ;", "no leg in"),
    ],
)  # fmt: skip
def test_override_errors_are_one_line_naming_the_joint(spec, message):
    sk = _rig(CONVENTIONS["cmu"])
    with pytest.raises(InputError, match=message) as err:
        find_legs(sk, spec)
    assert "\n" not in str(err.value) and str(err.value).startswith("--legs: ")


def test_override_names_may_leave_out_an_unambiguous_namespace():
    sk = _rig(CONVENTIONS["mixamo"])
    legs = find_legs(sk, "LeftUpLeg,LeftLeg,LeftFoot;mixamorig:RightUpLeg,RightLeg,RightFoot")
    assert [sk.names[j] for j in legs.legs[0].joints] == [
        "mixamorig:LeftUpLeg", "mixamorig:LeftLeg", "mixamorig:LeftFoot"]  # fmt: skip
    r = Rig()
    r.add("a:Hips", None, [0, 1, 0])
    r.add("b:Hips", "a:Hips", [0, 0, 0])
    with pytest.raises(InputError, match="'Hips' could be 'a:Hips' and 'b:Hips'"):
        find_legs(r.skeleton(), "Hips,x,y")


# ----------------------------------------------------------------------------- topology
def _anonymous(sk: Skeleton) -> Skeleton:
    return Skeleton(tuple(f"j{j}" for j in range(sk.num_joints)), sk.parents, sk.offsets)


def test_topology_finds_the_legs_under_a_ground_level_root():
    """Joint 0 is a static root at the feet's level with the pelvis under it (the Bandai
    layout), names say nothing, each foot has toe digits as extra leaves: the legs are found
    from where the two lowest branches split, not from joint 0."""
    named = _rig(CONVENTIONS["bandai"], ground_root=True)
    sk = _anonymous(named)
    legs = find_legs(sk)
    want = find_legs(named)
    got = [(g.side, g.hip, g.knee, g.ankle, g.toe) for g in legs.legs]
    assert got == [(g.side, g.hip, g.knee, g.ankle, g.toe) for g in want.legs]
    assert pelvis_joint(sk, legs) == 1 and sk.parents[1] == 0


def test_topology_gives_up_without_hanging_legs():
    r = Rig()
    r.add("root", None, [0, 0, 0])
    r.add("a", "root", [0.5, 0, 0])
    r.add("b", "a", [0.5, 0, 0])
    r.add("c", "root", [-0.5, 0, 0])
    r.add("d", "c", [-0.5, 0, 0])
    sk = r.skeleton()  # a lying star: no joint above the feet
    assert _by_topology(sk) == []
    with pytest.raises(InputError, match="no legs found.*--legs"):
        find_legs(sk)


# ----------------------------------------------------------------------------- shared clips
SHARED_CLIPS = [
    p
    for folder in (SHARED_BVH, SHARED_BVH.parent / "bvh_more")
    for p in (sorted(folder.glob("*.bvh")) if folder.is_dir() else [])
]
KNOWN = {  # the legs found in the shared clips when this was written: keep them
    "cmu_01_01_jumps.bvh": ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"),
    "xia_neutral_walk.bvh": ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"),
    "xia_old_run.bvh": ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"),
    "pybvh_zup_mixed_orders.bvh": ("LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"),
    "cmu_131_02_walk.bvh": ("LeftHip", "LeftKnee", "LeftAnkle", "LeftToe"),
    "mocapbank_19joint.bvh": ("LeftHip", "LeftKnee", "LeftAnkle", None),
    "aalto_walk_slow.bvh": ("LeftHip", "LeftKnee", "LeftAnkle", None),
    "bandai1_sidestep_left.bvh": ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"),
    "bandai1_walk_back_short.bvh": ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"),
    "bandai2_run_normal.bvh": ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"),
    "bandai2_walk_normal.bvh": ("UpperLeg_L", "LowerLeg_L", "Foot_L", "Toes_L"),
    "reactidle_idle_metres.bvh": ("thigh.L", "shin.L", "foot.L", None),
}


def _mirror(name: str | None) -> str | None:
    if name is None:
        return None
    return name.replace("Left", "Right").replace("_L", "_R").replace(".L", ".R")


@pytest.fixture(scope="module")
def shared_skeletons():
    if not SHARED_CLIPS:
        pytest.skip("../shared/data/bvh is not present")
    return {p.name: read_bvh(p).motion.skeleton for p in SHARED_CLIPS}


def test_every_shared_clip_keeps_its_legs(shared_skeletons):
    for name, sk in shared_skeletons.items():
        legs = find_legs(sk)
        assert [g.side for g in legs.legs] == ["left", "right"], name
        for g in legs.legs:
            assert sk.parents[g.knee] == g.hip and sk.parents[g.ankle] == g.knee, name
        if name in KNOWN:  # a clip added later gets the checks above only
            for g, want in zip(legs.legs, (KNOWN[name], tuple(map(_mirror, KNOWN[name])))):
                toe = sk.names[g.toe] if g.toe >= 0 else None
                assert (*(sk.names[j] for j in g.joints), toe) == want, name


def test_topology_agrees_with_the_names_on_every_standing_shared_rig(shared_skeletons):
    """Without names, the rest pose alone finds the same legs in every shared rig whose rest
    pose stands (Y up, hip over knee over ankle); the Bandai rest pose lies along X and the
    pybvh one is Z-up, so those two need names."""
    standing = 0
    for name, sk in shared_skeletons.items():
        legs = find_legs(sk)
        y = Motion.rest(sk).positions_world()[:, 1]
        tall = np.ptp(y)
        hang = [min(y[g.hip] - y[g.knee], y[g.knee] - y[g.ankle]) for g in legs.legs]
        if min(hang) < 0.1 * tall:
            continue
        standing += 1
        topo = _by_topology(_anonymous(sk))
        got = [(g.side, g.hip, g.knee, g.ankle, g.toe) for g in topo]
        assert got == [(g.side, g.hip, g.knee, g.ankle, g.toe) for g in legs.legs], name
    assert standing >= min(6, len(shared_skeletons) // 2)


# ------------------------------------------------------------ position channels on every joint
SIX = SHARED_BVH.parent / "bvh_more" / "bandai2_walk_normal.bvh"


@pytest.fixture(scope="module")
def six_channels():
    if not SIX.is_file():
        pytest.skip(f"{SIX} is not present")
    clip = read_bvh(SIX)
    assert all(len(c) == 6 for c in clip.channels)  # every joint has position channels
    return clip


def _position_columns(clip) -> dict[int, list[int]]:
    """Per joint, the columns of its position channels in the MOTION rows."""
    out, k = {}, 0
    for j, chans in enumerate(clip.channels):
        out[j] = [k + i for i, c in enumerate(chans) if c.endswith("position")]
        k += len(chans)
    return out


def test_six_channels_on_every_joint_survive_read_and_write(six_channels, tmp_path):
    clip = six_channels
    pl = clip.motion.positions_local
    assert np.ptp(pl[:, 2:], axis=0).max() == 0  # joints past the pelvis: constant channels
    for j, c in _position_columns(clip).items():  # the channels, not the OFFSETs, are read
        np.testing.assert_array_equal(pl[:, j], clip.source_values[:, c])
    assert not np.array_equal(pl[0], clip.motion.skeleton.offsets)
    write_bvh(tmp_path / "again.bvh", clip)
    back = read_bvh(tmp_path / "again.bvh")
    assert back.channels == clip.channels
    np.testing.assert_allclose(back.motion.positions_local, pl, atol=1e-6)
    np.testing.assert_allclose(back.source_values, clip.source_values, atol=1e-6)
    np.testing.assert_allclose(
        back.motion.skeleton.offsets, clip.motion.skeleton.offsets, atol=1e-6
    )


def test_ikrig_foot_keeps_every_joints_position_channels(six_channels, tmp_path):
    """``ikrig foot FILE --ground slope -o out.bvh``: 6 channels on every joint still; the
    position channels of every joint but the pelvis unchanged (foot placement moves the
    body by the pelvis, here ``Hips`` under the static ``joint_Root``), and the pelvis's
    horizontal path unchanged. (On flat ground the pelvis stays as recorded, issue 34.)"""
    from ikrig.cli import main

    out = tmp_path / "out.bvh"
    r = CliRunner().invoke(main, ["foot", str(SIX), "--ground", "slope", "-o", str(out)])
    assert r.exit_code == 0, r.output
    src, res = six_channels, read_bvh(out)
    assert res.channels == src.channels and res.num_frames == src.num_frames
    sk = src.motion.skeleton
    pelvis = pelvis_joint(sk, find_legs(sk))
    assert sk.names[pelvis] == "Hips"
    cols = _position_columns(src)
    for j, c in cols.items():
        if j != pelvis:
            np.testing.assert_allclose(
                res.source_values[:, c], src.source_values[:, c], atol=1e-6, err_msg=sk.names[j]
            )
    moved = res.motion.positions_world()[:, pelvis] - src.motion.positions_world()[:, pelvis]
    assert np.abs(moved[:, [0, 2]]).max() < 1e-4
    assert np.abs(moved[:, 1]).max() > 0  # the pelvis did move: the test can tell
