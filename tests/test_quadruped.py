"""Issue 11: any number of legs. A four-legged character made by code (front legs under the
chest, hind legs under the pelvis) trots forward, each foot planted still for half of its
cycle and lifted on an arc in the other half; foot placement, given the four legs with the
override string, keeps all four feet planted over flat, sloped, bumpy and blocky ground.

Issue 36: every leg found by name. The same trot named as a 3ds Max biped (front legs named
as arms) gets its four legs without ``--legs`` and plants them on the slope, the blocks and
the stairs; hexapods named in three conventions get their six, and a tripod gait keeps all
six planted.

Issue 34: on the stairs a paw that rests just short of a riser met it in the first frame of
its swing (the trot lifts its feet level with the floor, with no heel rise first), so the
plan lifted it ahead from 14 frames (0.23 s) before its contact ended: front left floated
1.46 % of a leg over its contacts (p95 6.5), hind right 0.53, against their own 0.00. The
footprint now slides back from the riser (:mod:`ikrig.foot.stages.footprints`): 0.07 and
0.40."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import float_goal

from ikrig.app.placement import place_clip, result_metrics
from ikrig.character import estimate_sole, find_legs, pelvis_joint
from ikrig.character.limbs import UnplacedLimbWarning
from ikrig.errors import InputError
from ikrig.foot import FootOptions, place_feet
from ikrig.ground import load_ground
from ikrig.metrics import foot_metrics
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.two_bone import solve_two_bone

TAGS = ("hl", "hr", "fl", "fr")  # hind left, hind right, front left, front right
ROLES = ("hip", "knee", "ankle", "toe")
LEGS = ";".join(f"hip_{t},knee_{t},ankle_{t},toe_{t}" for t in TAGS)
SIDES = ["left", "right", "leg2", "leg3"]  # the override's labels when names say no side
PAIR = {"hl": 0.0, "fr": 0.0, "hr": 0.5, "fl": 0.5}  # a trot: diagonal pairs in phase


def _plain(role: str, tag: str) -> str:
    """The trot's joint names: ``hip_hl``, ``knee_hl``, ..."""
    return f"{role}_{tag}"


def _skeleton(tags=TAGS, name=_plain) -> Skeleton:
    """Pelvis > spine > chest > neck > head, a tail, and a leg per tag of thigh 0.45 and
    shin 0.45 (plus a 0.05 drop to the toe): hind legs ("h") under the pelvis, middle ones
    ("m") under the spine half a body length ahead, front legs ("f") under the chest one
    body length (1.0) ahead along +Z; joints named ``name(role, tag)``."""
    names, parents = ["pelvis", "spine", "chest", "neck", "head", "tail"], [-1, 0, 1, 2, 3, 0]
    offsets = [[0, 1.0, 0], [0, 0.02, 0.5], [0, -0.02, 0.5], [0, 0.2, 0.2], [0, 0.1, 0.15],
               [0, 0.05, -0.4]]  # fmt: skip
    for tag in tags:
        n = len(names)
        names += [name(role, tag) for role in ROLES]
        parents += ["hmf".index(tag[0]), n, n + 1, n + 2]
        x = 0.2 if tag[1] == "l" else -0.2
        offsets += [[x, -0.05, 0], [0, -0.45, 0.02], [0, -0.45, -0.02], [0, -0.05, 0.12]]
    return Skeleton(tuple(names), parents, offsets)


def _trot(
    seconds=3.0, fps=60.0, speed=0.6, stride=0.5, tags=TAGS, pair=PAIR, name=_plain
) -> tuple[Motion, np.ndarray]:
    """The trot and its stance flags ``(F, legs)``: the body moves at ``speed`` along +Z
    with the legs a little bent; each foot lands half a stride ahead of its hip, stays still
    on the floor (ankle at 0.05, toe at 0) for half a cycle, then swings forward on an arc
    0.12 high, leg ``tag`` shifted in phase by ``pair[tag]``. Two-bone IK (the library's
    own) puts each ankle there."""
    sk = _skeleton(tags, name)
    F = int(seconds * fps)
    t = np.arange(F) / fps
    rest = Motion.rest(sk, batch_shape=(F,), frame_time=1.0 / fps)
    pos = rest.positions_local.copy()
    pos[:, 0, 1] = 0.93
    pos[:, 0, 2] = speed * t
    motion = rest.replace(positions_local=pos)
    period = stride / speed  # one step of each pair
    legs = find_legs(sk, _override(tags, name))
    stance = np.zeros((F, len(tags)), dtype=bool)
    for k, (leg, tag) in enumerate(zip(legs.legs, tags)):
        shift = pair[tag]
        phase = (t / period + shift) % 1.0
        cycle = np.floor(t / period + shift)
        land_z = (cycle - shift) * period * speed  # the pelvis's place at landing
        stance[:, k] = phase < 0.5
        swing = np.where(stance[:, k], 0.0, 2 * (phase - 0.5))
        hip = motion.positions_world()[:, leg.hip]
        z = land_z + 0.25 * stride + stride * swing + (hip[:, 2] - pos[:, 0, 2])
        y = 0.05 + 0.12 * np.sin(np.pi * swing)
        motion = solve_two_bone(motion, leg.joints, np.stack([hip[:, 0], y, z], -1)).motion
    return motion, stance


def _override(tags, name) -> str:
    """The ``--legs`` string of the legs ``tags`` named by ``name``."""
    return ";".join(",".join(name(role, tag) for role in ROLES) for tag in tags)


@pytest.fixture(scope="module")
def trot():
    return _trot()


def test_the_trot_made_by_code_is_a_trot(trot):
    """The generator does what it says: feet still in stance at the floor, lifted in swing,
    the body moving forward, diagonal pairs in phase."""
    clip, stance = trot
    pos = clip.positions_world()
    legs = find_legs(clip.skeleton, LEGS)
    for k, leg in enumerate(legs.legs):
        ankle = pos[:, leg.ankle]
        assert np.abs(ankle[stance[:, k], 1] - 0.05).max() < 1e-9
        still = stance[1:, k] & stance[:-1, k]
        assert np.linalg.norm(np.diff(ankle, axis=0)[still], axis=-1).max() < 1e-9
        assert ankle[~stance[:, k], 1].max() > 0.15
    assert 0.4 < stance.mean() < 0.6
    assert (stance[:, 0] == stance[:, 3]).all() and (stance[:, 1] == stance[:, 2]).all()
    assert pos[-1, 0, 2] - pos[0, 0, 2] > 1.5


def test_four_legs_are_named_and_a_leg_given_twice_is_refused():
    sk = _skeleton()
    legs = find_legs(sk, LEGS)
    assert [leg.side for leg in legs.legs] == SIDES
    assert pelvis_joint(sk, legs) == sk.index("pelvis")  # hips under pelvis and chest
    twice = LEGS + ";hip_hl,knee_hl,ankle_hl"
    with pytest.raises(InputError, match="'hip_hl' is in leg 1 and leg 5"):
        find_legs(sk, twice)
    labelled = ";".join(f"{t}=hip_{t},knee_{t},ankle_{t},toe_{t}" for t in TAGS)
    assert [leg.side for leg in find_legs(sk, labelled).legs] == list(TAGS)


def _ankle_errors(result, clip, ground, legs) -> np.ndarray:
    """``(F, 4)`` the result's ankle height over the ground (raised by the datum) minus the
    source's ankle height over the clip's floor, in percent of a leg."""
    out, src = result.motion.positions_world(), clip.positions_world()
    err = np.zeros((clip.num_frames, len(legs.legs)))
    for k, leg in enumerate(legs.legs):
        a = out[:, leg.ankle]
        h, _, found = ground.height_at(a[:, [0, 2]])
        assert found.all()
        over = a[:, 1] - (h + result.datum)
        err[:, k] = (over - (src[:, leg.ankle, 1] - result.sole.floor)) / legs.leg_length
    return 100 * err


def _core(contact: np.ndarray, edge: int) -> np.ndarray:
    """``(F,)`` the contact frames more than ``edge`` frames from either end of their span."""
    core = contact.copy()
    for shift in range(1, edge + 1):
        core[shift:] &= contact[:-shift]
        core[:-shift] &= contact[shift:]
    return core


@pytest.mark.parametrize("ground_name", ["flat", "slope", "bumps", "blocks", "stairs"])
def test_a_four_legged_trot_keeps_all_four_feet_planted(trot, ground_name):
    clip, stance = trot
    sk = clip.skeleton
    legs = find_legs(sk, LEGS)
    path = clip.positions_world()[:, pelvis_joint(sk, legs), [0, 2]]
    floor = estimate_sole(clip, legs).floor  # the clip's own floor (the toes at y = 0)
    assert abs(floor) < 1e-9
    ground = load_ground(ground_name, path, legs.leg_length, floor)
    options = FootOptions()
    r = place_feet(clip, ground, options, legs=LEGS)  # the override string, as the CLI gives
    assert [leg.side for leg in r.legs.legs] == SIDES
    # contacts: every foot plants, only in its stance (or the frame after it, where the
    # swing has not moved the foot yet), in nearly all of it
    c = r.contacts
    still = stance.copy()
    still[1:] |= stance[:-1]
    assert c.any(axis=0).all() and not (c & ~still).any()
    assert (c.sum(axis=0) >= 0.9 * stance.sum(axis=0)).all(), (c.sum(0), stance.sum(0))
    # every ankle at its recorded height over the floor, now over the ground: within 1 % of
    # a leg wherever the contact is more than the plan's smoothing window from its ends (the
    # zero-lag smoothing of the plan, 0.12 s, starts the next swing a little early)
    err = np.abs(_ankle_errors(r, clip, ground, legs))
    edge = int(round(options.plan.smoothing / clip.frame_time))
    for k in range(4):
        core = _core(c[:, k], edge)
        assert core.sum() > 0.4 * c[:, k].sum()
        assert err[core, k].max() <= 1.0, (SIDES[k], err[core, k].max())
        assert np.percentile(err[c[:, k], k], 95) <= 1.0, (SIDES[k], err[c[:, k], k])
    # bone lengths kept, joint by joint
    pos = r.motion.positions_world()
    bones = np.linalg.norm(pos[:, 1:] - pos[:, sk.parents[1:]], axis=-1)
    assert np.abs(bones - np.linalg.norm(sk.offsets[1:], axis=-1)).max() < 1e-9
    # and the evaluator's bar (metrics: each foot against its own floor in the source)
    m = foot_metrics(r.motion, clip, ground, r.legs)
    assert m["pen_p95"] <= 0.5 and (m["float_mean"] or 0.0) <= 1.0, m
    for side in SIDES:
        foot = m["per_foot"][side]
        assert (foot["float_mean"] or 0.0) <= 1.0 and foot["pen_p95"] <= 0.5, (side, foot)
    assert m["bone_drift"] < 1e-6 and m["pops"] == 0
    # the trot made by code does not skate at all (1e-11); turning the feet to a slope moves
    # the toes a little: a quarter of a percent of a leg per second at most
    assert m["skate"] <= m["skate_source"] + 0.25


# ------------------------------------------------------- issue 36: every leg found by name
BIPED_BODY = {"pelvis": "Bip01 Pelvis", "spine": "Bip01 Spine", "chest": "Bip01 Spine1",
              "neck": "Bip01 Neck", "head": "Bip01 Head", "tail": "Bip01 Tail"}  # fmt: skip
BIPED_LIMB = {"h": ("Thigh", "Calf", "Foot", "Toe0"),
              "f": ("UpperArm", "Forearm", "Hand", "Finger0")}  # fmt: skip
BIPED_SIDES = ["hind_left", "hind_right", "front_left", "front_right"]


def _biped_named(clip: Motion) -> Motion:
    """The trot's rig named as a 3ds Max biped in quadruped use: hind legs ``Bip01 L Thigh``
    > ``Calf`` > ``Foot`` > ``Toe0``, front legs ``Bip01 L UpperArm`` > ``Forearm`` >
    ``Hand`` > ``Finger0``; no name says "leg" on the front legs."""
    rename = dict(BIPED_BODY)
    for tag in TAGS:
        s = tag[1].upper()
        for role, word in zip(("hip", "knee", "ankle", "toe"), BIPED_LIMB[tag[0]]):
            rename[f"{role}_{tag}"] = f"Bip01 {s} {word}"
    sk = clip.skeleton
    names = tuple(rename[n] for n in sk.names)
    return clip.replace(skeleton=Skeleton(names, sk.parents, sk.offsets))


def test_a_biped_named_quadruped_finds_its_four_legs_from_the_clip(trot):
    """The arms stand as front legs because the clip shows their ends on the floor like the
    hind feet; lifted off it (hands hanging half a leg up, as a biped's), the same names
    give the two legs of a biped."""
    clip = _biped_named(trot[0])
    sk, pos = clip.skeleton, clip.positions_world()
    legs = find_legs(sk, None, pos)
    assert [g.side for g in legs.legs] == BIPED_SIDES
    by_hand = find_legs(_skeleton(), LEGS)
    assert [(g.hip, g.knee, g.ankle, g.toe) for g in legs.legs] == [
        (g.hip, g.knee, g.ankle, g.toe) for g in by_hand.legs]  # fmt: skip
    assert legs.leg_length == pytest.approx(by_hand.leg_length)
    assert pelvis_joint(sk, legs) == sk.index("Bip01 Pelvis")
    hanging = pos.copy()
    front = [j for g in legs.legs[2:] for j in (g.hip, g.knee, g.ankle, g.toe)]
    hanging[:, front, 1] += 0.5 * legs.leg_length
    assert [g.side for g in find_legs(sk, None, hanging).legs] == ["left", "right"]
    assert [g.side for g in find_legs(sk).legs] == ["left", "right"]  # a rest pose says nothing


def _placed_by_name(clip: Motion, ground_name: str, labels: list[str], by_hand):
    """``clip`` placed without ``--legs`` (an unplaced limb would raise), its legs labelled
    ``labels``, and the same placement as the clip with its legs named by hand (``by_hand``:
    ``(clip, --legs)``): the result, its metrics and the placement."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnplacedLimbWarning)
        placed = place_clip(clip, ground_name, ["full"])
    r = placed.results["full"]
    assert [g.side for g in r.legs.legs] == labels
    given = place_clip(by_hand[0], ground_name, ["full"], by_hand[1]).results["full"]
    np.testing.assert_allclose(r.motion.positions_world(), given.motion.positions_world(),
                               atol=1e-9 * r.legs.leg_length)  # fmt: skip
    return r, result_metrics(r, placed.source, placed.world(), placed.source_fk), placed


def _biped_trot(trot, ground_name):
    return _placed_by_name(_biped_named(trot[0]), ground_name, BIPED_SIDES, (trot[0], LEGS))


def _assert_planted(placed, r, m, stance) -> None:
    """Each foot plants in its stance and its ankle stands at its recorded height over the
    ground (within 1 % of a leg) where the contact is more than the plan's smoothing window
    from its ends; penetration p95 within 0.5 % of a leg (at most 2 %) foot by foot; no
    knee pop."""
    clip, c = placed.source, r.contacts
    assert (c.sum(axis=0) >= 0.9 * stance.sum(axis=0)).all(), c.sum(axis=0)
    assert m["pen_p95"] <= 0.5 and m["pen_max"] <= 2.0 and m["pops"] == 0, m
    err = np.abs(_ankle_errors(r, clip, placed.world(), r.legs))
    edge = int(round(FootOptions().plan.smoothing / clip.frame_time))
    for k, leg in enumerate(r.legs.legs):
        assert m["per_foot"][leg.side]["pen_p95"] <= 0.5, (leg.side, m["per_foot"][leg.side])
        core = _core(c[:, k], edge)
        assert core.sum() > 0.4 * c[:, k].sum()
        assert err[core, k].max() <= 1.0, (leg.side, err[core, k].max())


@pytest.mark.parametrize("ground_name", ["stairs", "slope", "blocks"])
def test_a_biped_named_quadruped_plants_all_four_feet(trot, ground_name):
    """Found without ``--legs``: each foot planted (:func:`_assert_planted`)."""
    r, m, placed = _biped_trot(trot, ground_name)
    _assert_planted(placed, r, m, trot[1])


@pytest.mark.parametrize("ground_name", ["stairs", "slope"])
def test_a_biped_named_quadruped_floats_no_foot(trot, ground_name):
    """Issue 34's float goal foot by foot, over every contact frame."""
    _, m, _ = _biped_trot(trot, ground_name)
    for side in BIPED_SIDES:
        foot = m["per_foot"][side]
        assert (foot["float_mean"] or 0.0) <= float_goal(foot["float_mean_source"]), (side, foot)


def test_hind_legs_named_alone_warn_of_the_front_ones(trot):
    named = _biped_named(trot[0])
    hind = ";".join(f"Bip01 {s} Thigh,Bip01 {s} Calf,Bip01 {s} Foot" for s in "LR")
    with pytest.warns(UnplacedLimbWarning, match=r"2 limb\(s\).*'Bip01 L UpperArm'"):
        place_clip(named, "flat", ["full"], hind)


def _hexapod(names) -> Skeleton:
    """A thorax with three pairs of legs along Z, each leg named by ``names(side, k)``
    (side "l" / "r", k 1 to 3 from the front): four joints hanging from the thorax (hip,
    knee, ankle, toe) and an end joint."""
    out, parents, offsets = ["thorax", "head"], [-1, 0], [[0, 0.5, 0], [0, 0, 0.4]]
    for k, z in zip((1, 2, 3), (0.3, 0.0, -0.3)):
        for s, x in (("l", 0.15), ("r", -0.15)):
            chain = names(s, k)
            top = len(out)
            out += chain
            parents += [0, top, top + 1, top + 2, top + 3]
            offsets += [[x, 0, z], [x, 0.1, 0], [x, -0.3, 0], [0, -0.25, 0], [0, -0.05, 0.02]]
    return Skeleton(tuple(out), parents, offsets)


HEXAPODS = {
    "L_Leg1": lambda s, k: [f"{s.upper()}_Leg{k}_0{i}" for i in (1, 2, 3, 4)] + [
        f"{s.upper()}_Leg{k}_end"],
    "leg_front_l": lambda s, k: [f"{w}_{('front', 'mid', 'back')[k - 1]}_{s}"
                                 for w in ("leg", "shin", "foot", "toe", "toe_end")],
    "FrontLegLeft": lambda s, k: [
        f"{('Front', 'Middle', 'Rear')[k - 1]}{w}{('Left' if s == 'l' else 'Right')}"
        for w in ("UpLeg", "Leg", "Foot", "Toe", "ToeEnd")],
}  # fmt: skip


@pytest.mark.parametrize("convention", sorted(HEXAPODS))
def test_a_hexapod_finds_its_six_legs_by_name(convention):
    names = HEXAPODS[convention]
    sk = _hexapod(names)
    legs = find_legs(sk)
    places = ("leg1", "leg2", "leg3") if convention == "L_Leg1" else ("front", "mid", "hind")
    assert [g.side for g in legs.legs] == [f"{p}_{s}" for p in places for s in ("left", "right")]
    for g in legs.legs:
        k = 1 + places.index(g.side.split("_")[0])
        want = names("l" if g.side.endswith("left") else "r", k)[:4]
        assert [sk.names[j] for j in (g.hip, g.knee, g.ankle, g.toe)] == want
    assert sk.names[pelvis_joint(sk, legs)] == "thorax"


HEX_TAGS = ("fl", "fr", "ml", "mr", "hl", "hr")
TRIPOD = {"fl": 0.0, "mr": 0.0, "hl": 0.0, "fr": 0.5, "ml": 0.5, "hr": 0.5}
HEX_SIDES = [f"{p}_{s}" for p in ("front", "mid", "hind") for s in ("left", "right")]


def _hexapod_name(role: str, tag: str) -> str:
    """``leg_front_l`` > ``shin_front_l`` > ``foot_front_l`` > ``toe_front_l``: no name says
    thigh or hip, so the chain's order gives the roles."""
    word = {"hip": "leg", "knee": "shin", "ankle": "foot", "toe": "toe"}[role]
    return f"{word}_{dict(f='front', m='mid', h='back')[tag[0]]}_{tag[1]}"


@pytest.mark.parametrize("ground_name", ["stairs", "slope", "blocks", "bumps"])
def test_a_hexapod_found_by_name_plants_all_six_feet(ground_name):
    """Six legs (a tripod gait: front and hind left with middle right, then the others)
    found by name and placed without ``--legs``, as with the legs named by hand."""
    clip, stance = _trot(tags=HEX_TAGS, pair=TRIPOD, name=_hexapod_name)
    by_hand = (clip, _override(HEX_TAGS, _hexapod_name))
    r, m, placed = _placed_by_name(clip, ground_name, HEX_SIDES, by_hand)
    _assert_planted(placed, r, m, stance)
