"""Step 1 of foot placement: find each leg's hip, knee, ankle (and toe) joints.

Three ways, the first that applies wins:

1. **The user's override** (``ikrig foot --legs``): any number of legs,
   ``"hip,knee,ankle[,toe];hip,knee,ankle[,toe];..."``, each optionally labelled
   (``"hind_left=hip_hl,knee_hl,ankle_hl;..."``). See :func:`find_legs` for the labels.
2. **Names**, in the common conventions: Mixamo with any namespace (``mixamorig7:LeftUpLeg``,
   ``LeftLeg``, ``LeftFoot``, ``LeftToeBase``), CMU MotionBuilder and 3ds Max exports
   (``LeftHip``, ``LeftKnee``, ``LeftAnkle``, ``LeftToe``), Blender (``thigh.L``, ``shin.L``,
   ``foot.L``, ``toe.L``; also ``_L``, ``-L``, ``.l``), Bandai/Unity (``UpperLeg_L``,
   ``LowerLeg_L``, ``Foot_L``, ``Toes_L``), 3ds Max biped (``Bip01 L Thigh``,
   ``Bip01_L_Calf``, ``Bip01 L Foot``, ``Bip01 L Toe0``), Unreal (``thigh_l``, ``calf_l``,
   ``foot_l``, ``ball_l``). Each ankle found by name climbs to the nearest knee above it, the
   knee to the nearest hip, on the same side: the knee and the ankle are always descendants
   of the hip. Helper bones never take a leg role: twist and roll bones
   (``thigh_twist_01_l``, ``LeftUpLegRoll``), IK and pole bones (``ik_foot_l``), correctives,
   end joints (``LeftToe_End``, ``Bip01 L Toe0Nub``), toe digits (``LeftFootIndex1``) and
   pelvis helpers (CMU ``LHipJoint``). Rigs with more legs (:mod:`~ikrig.character.naming`):
   a leg named in numbered segments (the Fox's ``b_LeftLeg01`` > ``b_LeftLeg02`` >
   ``b_LeftFoot01``); a pair of legs per place (hexapods' ``leg_front_l``, ``leg_mid_l``,
   ``leg_back_l``, or ``L_Leg1``, ``L_Leg2``, ``L_Leg3``), labelled ``front_left``,
   ``leg1_left``...; and a quadruped's front legs named as arms (``Bip01 L UpperArm`` >
   ``Forearm`` > ``Hand``, the Fox's ``b_LeftUpperArm``): the arms stand as legs when the
   clip (``pose_world``) shows their ends on the floor like the feet, never on names alone
   (a biped's hands never come near it); the legs are then ``hind_left``, ``hind_right``,
   ``front_left``, ``front_right``.
3. **Topology and a reference pose** (two legs), when names give fewer than two legs: names
   that say nothing, or ambiguous names (CesiumMan's ``leg_joint_L_1`` > ``_2`` > ``_3`` >
   ``_5`` all claim one role, so no chain of hip, knee and ankle is named). The pose is the
   rest pose of the offsets, or world positions the caller gives (``pose_world``: a glTF
   skeleton's bind pose lives in node rotations its offsets do not hold; see
   :mod:`~ikrig.character.shape`). The lowest leaf joint and the lowest leaf on another
   branch that splits from it well above the feet; the joint where they split is the pelvis
   (never assumed to be joint 0: a rig may hang its ``Hips`` under a ground-level ``Root``).
   Down each branch, the ankle is the first joint within a tenth of the pose's height of the
   leaf, its child the toe; the knee and hip are the two joints above it. The sides are the
   ones the legs' names say when they say one each, else "left" is the leg on the
   character's left, facing where its toes point (else where its knees bend, else +Z: the
   leg on the +X side).

Two-bone IK turns the hip and the knee, so a leg's ``(hip, knee, ankle)`` must be a parent
chain. When helper bones sit inside the chain found by name: those between hip and knee that
all sit at the hip (zero rest length) are skipped by solving from the lowest of them (it
turns about the same point, so the result is the same); any other bone between hip and knee
or between knee and ankle (a twist bone half way down the thigh, a thigh split in two) is
refused with an :class:`~ikrig.errors.InputError` that asks for ``--legs``.

The leg length (thigh plus shin at rest) is the unit of every foot-placement threshold, so
clips in centimetres, inches or metres all work.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError
from ..skeleton import Skeleton
from .naming import NamedLimb, arm_limbs, bare_name, leg_limbs, side_of
from .reach import reaches_floor
from .shape import legs_by_shape, reference_pose, with_sides

_LABEL = re.compile(r"^[A-Za-z_][\w.-]*$")
ARM_HANG = 0.5
"""Fraction of an arm's length (upper arm plus forearm): an arm that stands as a front leg
hangs its end at least this far below its upper arm (median over the frames), as a leg
does; hands on the floor beside a body lying down do not."""


@dataclass(frozen=True)
class Leg:
    """One leg's joint indices (``toe`` is -1 when the skeleton has none) and its side
    (a label: "left", "right", "leg2", or the user's own)."""

    side: str
    hip: int
    knee: int
    ankle: int
    toe: int = -1

    @property
    def joints(self) -> tuple[int, int, int]:
        """``(hip, knee, ankle)``: the two-bone chain."""
        return (self.hip, self.knee, self.ankle)


@dataclass(frozen=True)
class Legs:
    """The legs of a skeleton and the length unit for thresholds.

    Attributes:
        legs: one :class:`Leg` per leg (two for humans, in the order left, right), each
            with a side label of its own.
        leg_length: mean over legs of thigh plus shin rest length, in the data's units.

    Raises:
        InputError: no legs, two legs with the same side label, or a leg length that is not
            a finite number > 0.
    """

    legs: tuple[Leg, ...]
    leg_length: float

    def __post_init__(self):
        if not self.legs:
            raise InputError("legs: expected at least one leg")
        sides = [leg.side for leg in self.legs]
        for s in sides:
            if sides.count(s) > 1:
                raise InputError(f"legs: the side label {s!r} is on more than one leg")
        if not (np.isfinite(self.leg_length) and self.leg_length > 0):
            raise InputError(f"legs: leg_length must be a finite number > 0, got {self.leg_length}")

    def describe(self, skeleton: Skeleton) -> str:
        n = skeleton.names
        parts = []
        for leg in self.legs:
            toe = f", toe {n[leg.toe]}" if leg.toe >= 0 else ""
            parts.append(f"{leg.side}: {n[leg.hip]} > {n[leg.knee]} > {n[leg.ankle]}{toe}")
        return "; ".join(parts)


def _solvable(skeleton: Skeleton, leg: Leg) -> Leg:
    """``leg`` with a parent chain ``(hip, knee, ankle)``: bones of zero rest length between
    hip and knee are skipped (the lowest of them becomes the hip); any other bone inside the
    chain raises InputError."""
    par, n, off = skeleton.parents, skeleton.names, skeleton.offsets
    hint = "two-bone IK needs hip > knee > ankle as a parent chain; name one per leg with"
    hint += " --legs 'hip,knee,ankle[,toe];...'"
    if par[leg.ankle] != leg.knee:
        raise InputError(
            f"legs: {n[par[leg.ankle]]!r} sits between the knee {n[leg.knee]!r} and the ankle"
            f" {n[leg.ankle]!r}; {hint}"
        )
    mid = int(par[leg.knee])
    if mid == leg.hip:
        return leg
    between = skeleton.chain(leg.hip, mid)[1:]
    shin_thigh = float(np.linalg.norm(off[leg.knee]) + np.linalg.norm(off[leg.ankle]))
    if sum(float(np.linalg.norm(off[j])) for j in between) > 1e-6 * shin_thigh:
        raise InputError(
            f"legs: {n[mid]!r} sits between the hip {n[leg.hip]!r} and the knee"
            f" {n[leg.knee]!r}; {hint}"
        )
    return replace(leg, hip=mid)


def _leg_length(skeleton: Skeleton, legs: Sequence[Leg | NamedLimb]) -> float:
    """The mean over ``legs`` of thigh plus shin rest length."""
    norm = np.linalg.norm(skeleton.offsets, axis=-1)
    return float(np.mean([norm[g.knee] + norm[g.ankle] for g in legs]))


def _with_standing_arms(
    skeleton: Skeleton, legs: list[Leg], pose_world: np.ndarray | None
) -> list[Leg]:
    """``legs`` and the arms as front legs, when ``legs`` are a biped's two named legs
    ("left" and "right", then relabelled "hind_left" and "hind_right") and, in the frames
    of ``pose_world`` (a rest pose says nothing: a Bandai rig's stretches every limb
    sideways), both arms' ends (the hand's finger when it has one, else the hand) reach
    the legs' floor (:func:`~ikrig.character.reach.reaches_floor`) and hang below their
    upper arms (by :data:`ARM_HANG` of the arm's length, median over the frames), as a
    quadruped's front legs do and a biped's hanging hands never reach. Otherwise ``legs``
    as given; also when an arm has a bone inside its chain (the unplaced-limb warning then
    names it)."""
    if pose_world is None or [g.side for g in legs] != ["left", "right"]:
        return legs
    arms = arm_limbs(skeleton)
    pos = np.asarray(pose_world, dtype=np.float64)
    shape_ok = pos.ndim in (2, 3) and pos.shape[-2:] == (skeleton.num_joints, 3)
    if len(arms) != 2 or not shape_ok or pos.size == 0:  # (no frames: nothing to read)
        return legs
    pos = pos.reshape(-1, skeleton.num_joints, 3)
    down = reaches_floor(pos, [g.ankle for g in legs], _leg_length(skeleton, legs))
    for g in arms:
        end = g.toe if g.toe >= 0 else g.ankle
        hang = float(np.median(pos[:, g.hip, 1] - pos[:, end, 1]))
        if not (down[end] and hang >= ARM_HANG * _leg_length(skeleton, [g])):
            return legs
    try:
        front = [_solvable(skeleton, Leg(g.label, *g[2:])) for g in arms]
    except InputError:
        return legs
    return [replace(g, side=f"hind_{g.side}") for g in legs] + front


def _by_topology(skeleton: Skeleton, pose_world: np.ndarray | None = None) -> list[Leg]:
    """Two legs from a reference pose (module docstring, step 3;
    :func:`~ikrig.character.shape.legs_by_shape`), labelled by their names' sides when
    those say one each, else by the way the pose faces; [] when none is found."""
    found = legs_by_shape(skeleton, reference_pose(skeleton, pose_world))
    legs = [Leg("", *joints) for joints in found]
    said = []
    for leg in legs:
        sides = {side_of(skeleton.names[j]) for j in leg.joints}
        said.append(sides.pop() if len(sides) == 1 else "")
    return with_sides(legs, said)


def _lookup(skeleton: Skeleton, name: str) -> int:
    """The joint named ``name``, or the only one named so after its namespace
    ("LeftFoot" finds "mixamorig:LeftFoot"); InputError with a hint otherwise."""
    if name in skeleton.names:
        return skeleton.names.index(name)
    bare = [j for j, n in enumerate(skeleton.names) if bare_name(n) == name]
    if len(bare) == 1:
        return bare[0]
    if bare:
        both = " and ".join(repr(skeleton.names[j]) for j in bare[:2])
        raise InputError(f"--legs: {name!r} could be {both}; give the full name")
    close = difflib.get_close_matches(name, skeleton.names, n=3)
    hint = f"did you mean {', '.join(map(repr, close))}?" if close else "`ikrig info` lists them"
    raise InputError(f"--legs: no joint named {name!r}; {hint}")


def _override_leg(skeleton: Skeleton, part: str) -> tuple[str, tuple[int, ...]]:
    """``(label, joints)`` of one ``[label=]hip,knee,ankle[,toe]`` group."""
    label, sep, rest = part.partition("=")
    label = label.strip() if sep else ""
    if sep and not _LABEL.match(label):
        raise InputError(f"--legs: {label!r} is not a label (letters, digits, _ . -) in {part!r}")
    names = [s.strip() for s in (rest if sep else part).split(",")]
    if len(names) not in (3, 4) or not all(names):
        raise InputError(
            f"--legs: each leg needs 3 or 4 joint names (hip,knee,ankle[,toe]), got {part!r}"
        )
    idx = tuple(_lookup(skeleton, s) for s in names)
    n = skeleton.names
    for a, b in zip(idx[:3], idx[1:3]):
        if skeleton.parents[b] != a:
            between = "" if a not in skeleton.ancestors(b) else " (bones between them)"
            raise InputError(f"--legs: {n[b]!r} is not a child of {n[a]!r}{between}")
    if len(idx) == 4 and idx[2] not in skeleton.ancestors(idx[3]):
        raise InputError(f"--legs: the toe {n[idx[3]]!r} is not below the ankle {n[idx[2]]!r}")
    return label, idx


def _override_sides(
    skeleton: Skeleton, labels: list[str], legs: list[tuple[int, ...]]
) -> list[str]:
    """The side label of every leg: the user's; else the side the leg's names say (left or
    right as name detection reads them) when no other leg says it; else "left" / "right" for
    the first / second leg given when its names say no side; else ``leg{k}`` (k its place,
    from 0)."""
    said = []
    for idx in legs:
        sides = {side_of(skeleton.names[j]) for j in idx[:3]} - {""}
        said.append(sides.pop() if len(sides) == 1 else ("?" if sides else ""))
    out = list(labels)
    for k, s in enumerate(said):
        if not out[k] and s in ("left", "right") and said.count(s) == 1 and s not in labels:
            out[k] = s
    for k in range(len(out)):
        if not out[k]:
            free = [] if said[k] or k > 1 else [("left", "right")[k]]
            out[k] = next((c for c in [*free, f"leg{k}"] if c not in out), "")
    for k, s in enumerate(out):
        if not s or s in out[:k]:
            raise InputError(f"--legs: leg {k + 1}'s label {s!r} is taken; label every leg")
    return out


def _by_override(skeleton: Skeleton, spec: str) -> list[Leg]:
    """Legs named by the user (see :func:`find_legs`). A joint in two legs (a leg given
    twice) is refused."""
    labels, legs = [], []
    used: dict[int, int] = {}
    for k, part in enumerate(p for p in spec.split(";") if p.strip()):
        label, idx = _override_leg(skeleton, part)
        for j in idx:
            if j in used:
                raise InputError(
                    f"--legs: joint {skeleton.names[j]!r} is in leg {used[j] + 1} and leg"
                    f" {k + 1}; each leg needs joints of its own"
                )
            used[j] = k
        labels.append(label)
        legs.append(idx)
    if not legs:
        raise InputError(f"--legs: no leg in {spec!r}; expected 'hip,knee,ankle[,toe];...'")
    sides = _override_sides(skeleton, labels, legs)
    return [Leg(s, *idx) for s, idx in zip(sides, legs)]


def pelvis_joint(skeleton: Skeleton, legs: Legs) -> int:
    """The pelvis: the nearest common ancestor of every leg's hip (not necessarily joint 0:
    a rig may hang its hips under a ground-level root that never moves). With one leg, the
    hip's parent (the hip itself when it is a root)."""
    chains = [(leg.hip, *skeleton.ancestors(leg.hip)) for leg in legs.legs]
    if len(chains) == 1:
        return chains[0][1] if len(chains[0]) > 1 else chains[0][0]
    shared = set(chains[0]).intersection(*chains[1:])
    common = [j for j in chains[0] if j in shared]
    if not common:
        raise InputError("legs: the hips have no common ancestor; expected one body")
    return int(common[0])


def find_legs(
    skeleton: Skeleton, override: str | None = None, pose_world: np.ndarray | None = None
) -> Legs:
    """Find the legs of a skeleton: the override, else by name, else by topology (module
    docstring).

    Args:
        skeleton: the skeleton, in a Y-up world (the topology fallback reads the rest pose
            of its offsets unless ``pose_world`` is given).
        override: ``"hip,knee,ankle[,toe];hip,knee,ankle[,toe];..."`` joint names (any
            number of legs; a name may leave out its namespace when that is unambiguous), or
            None (or ``""``). Each group may start with a label, ``"front_left=a,b,c"``
            (letters, digits, ``_``, ``.``, ``-``), that becomes the leg's ``side``; without
            one a leg is "left" or "right" when its joint names say so and no other leg's
            do, else "left" / "right" for the first / second leg given when its names say
            no side, else ``leg{k}`` with ``k`` its place from 0 ("a,b,c;d,e,f;g,h,i;j,k,l" gives
            "left", "right", "leg2", "leg3").
        pose_world: the reference pose of the topology fallback, Y up: ``(J, 3)`` world
            positions, or a clip's ``(F, J, 3)`` (``motion.positions_world()``), read as its
            typical pose (:func:`~ikrig.character.shape.reference_pose`). None: the rest pose
            of the offsets, right for BVH (whose rest pose is the T-pose) and wrong for glTF
            (whose bind pose is in rotations). Names and the override do not read it.

    Returns:
        :class:`Legs` with at least one leg and the leg length.

    Raises:
        InputError: no legs found (the message lists the joint names and shows ``--legs``);
            a leg found by name with a bone inside its hip > knee > ankle chain; a bad
            override: a joint in two legs, an unknown joint (named, with a hint), a knee
            that is not the hip's child or an ankle not the knee's, a toe not below the
            ankle, a bad or repeated label; a ``pose_world`` of the wrong shape or not
            finite, when the fallback reads it.
    """
    if override is not None and override.strip():
        legs = _by_override(skeleton, override)
    else:
        legs = [_solvable(skeleton, Leg(g.label, *g[2:])) for g in leg_limbs(skeleton)]
        legs = _with_standing_arms(skeleton, legs, pose_world)
        if len(legs) < 2:
            topo = _by_topology(skeleton, pose_world)
            if len(topo) > len(legs):
                legs = topo
    if not legs:
        names = ", ".join(skeleton.names[:8])
        if len(skeleton.names) > 8:
            names += f" and {len(skeleton.names) - 8} more"
        raise InputError(
            "no legs found in the skeleton; joints are: "
            f"{names[:100]}. Name them with --legs 'LeftUpLeg,LeftLeg,LeftFoot;RightUpLeg,RightLeg,"
            "RightFoot' (hip,knee,ankle[,toe] per leg)"
        )
    length = _leg_length(skeleton, legs)
    if not length > 0:
        raise InputError("legs: zero leg length at rest; cannot scale foot-placement thresholds")
    return Legs(tuple(legs), length)
