"""Step 1 of foot placement: find each leg's hip, knee, ankle (and toe) joints.

Names first, in the common conventions (CMU MotionBuilder and 3ds Max exports, Mixamo, Unreal
mannequin, LaFAN1, Blender ``.L/.R``, generic ``l_``/``_r`` patterns); topology and the rest
pose as the fallback; a user override (``"LeftUpLeg,LeftLeg,LeftFoot[,LeftToeBase];..."``)
above both. The leg length (thigh plus shin at rest) is the unit of every foot-placement
threshold, so clips in centimetres, inches or metres all work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..pose import Motion
from ..skeleton import Skeleton

_NAMESPACE = re.compile(r"^.*[:|]")  # "mixamorig:LeftFoot", "Armature|foot_l"
_ROLE_WORDS = {
    "toe": ("toe", "ball"),
    "ankle": ("foot", "ankle"),
    "knee": ("knee", "calf", "shin", "lowerleg", "leg"),
    "hip": ("upleg", "upperleg", "thigh", "hip"),
}
# words that disqualify a joint from a leg role (arms, hip *joints* that are pelvis helpers)
_NOT_LEG = ("arm", "hand", "finger", "thumb", "shoulder", "elbow", "wrist", "collar", "clav")


@dataclass(frozen=True)
class Leg:
    """One leg's joint indices (``toe`` is -1 when the skeleton has none) and its side."""

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
        legs: one :class:`Leg` per leg (two for humans, in the order left, right).
        leg_length: mean over legs of thigh plus shin rest length, in the data's units.
    """

    legs: tuple[Leg, ...]
    leg_length: float

    def describe(self, skeleton: Skeleton) -> str:
        n = skeleton.names
        parts = []
        for leg in self.legs:
            toe = f", toe {n[leg.toe]}" if leg.toe >= 0 else ""
            parts.append(f"{leg.side}: {n[leg.hip]} > {n[leg.knee]} > {n[leg.ankle]}{toe}")
        return "; ".join(parts)


_SIDE_PATTERNS = (  # (regex on the name without namespace, side); first match wins
    (re.compile(r"left", re.IGNORECASE), "left"),
    (re.compile(r"right", re.IGNORECASE), "right"),
    (re.compile(r"[._\s-][lL]$|^[lL][._\s-]|[._\s-][lL][._\s-]|^L(?=[A-Z])"), "left"),
    (re.compile(r"[._\s-][rR]$|^[rR][._\s-]|[._\s-][rR][._\s-]|^R(?=[A-Z])"), "right"),
)
_SIDE_TOKENS = re.compile(
    r"left|right|[._\s-][lr]$|^[lr][._\s-]|[._\s-][lr](?=[._\s-])|[._\s-]", re.IGNORECASE
)


def _words(name: str) -> tuple[str, str]:
    """``(side, core)`` of a joint name: side is "left", "right" or ""; core is the lower-case
    name without namespace, side markers and separators ("mixamorig:LeftUpLeg" -> "upleg")."""
    base = _NAMESPACE.sub("", name).strip()
    side = next((s for pat, s in _SIDE_PATTERNS if pat.search(base)), "")
    core = _SIDE_TOKENS.sub("", base)
    if side and re.match(r"^[LR][A-Z]", core):  # "LHipJoint" -> "HipJoint"
        core = core[1:]
    return side, core.lower()


def _role(core: str) -> str | None:
    if any(w in core for w in _NOT_LEG):
        return None
    for role, words in _ROLE_WORDS.items():
        if role == "knee" and "up" in core:
            continue
        if any(w in core for w in words):
            if role == "hip" and core.endswith("joint"):  # CMU "LHipJoint" pelvis helper
                return None
            return role
    return None


def _joint_role(skeleton: Skeleton, j: int) -> str | None:
    return _role(_words(skeleton.names[j])[1])


def _leg_from_ankle(skeleton: Skeleton, ankle: int, side: str) -> Leg | None:
    knee = int(skeleton.parents[ankle])
    hip = int(skeleton.parents[knee]) if knee >= 0 else -1
    if knee < 0 or hip < 0:
        return None
    kids = skeleton.children(ankle)
    toe = -1
    for c in kids:
        if _joint_role(skeleton, c) == "toe":
            toe = c
            break
    if toe < 0 and len(kids) == 1:
        toe = kids[0]
    return Leg(side, hip, knee, ankle, toe)


def _by_names(skeleton: Skeleton) -> list[Leg]:
    legs = []
    for side in ("left", "right"):
        ankles = []
        for j, name in enumerate(skeleton.names):
            if _words(name)[0] == side and _joint_role(skeleton, j) == "ankle":
                ankles.append(j)
        for ankle in ankles:
            leg = _leg_from_ankle(skeleton, ankle, side)
            if leg is None:
                continue
            roles = (
                _role(_words(skeleton.names[leg.knee])[1]),
                _role(_words(skeleton.names[leg.hip])[1]),
            )
            if roles == ("knee", "hip"):
                legs.append(leg)
                break
    return legs


def _by_topology(skeleton: Skeleton) -> list[Leg]:
    """Two lowest leaves on either side of the root at rest; toe if a leaf sits at ankle level."""
    pos = Motion.rest(skeleton).positions_world()
    root = int(np.flatnonzero(skeleton.parents < 0)[0])
    height = np.ptp(pos[:, 1]) or 1.0
    leaves = [j for j in range(skeleton.num_joints) if not skeleton.children(j)]
    legs = []
    for side, sign in (("left", 1.0), ("right", -1.0)):
        cands = [j for j in leaves if sign * (pos[j, 0] - pos[root, 0]) > 1e-6 * height]
        cands = [j for j in cands if len(skeleton.ancestors(j)) >= 3]
        if not cands:
            continue
        leaf = min(cands, key=lambda j: pos[j, 1])
        if pos[leaf, 1] > pos[root, 1] - 0.25 * height:
            continue  # not below the root: no leg here
        parent = int(skeleton.parents[leaf])
        foot_is_parent = abs(pos[parent, 1] - pos[leaf, 1]) < 0.1 * height
        ankle = parent if foot_is_parent else leaf
        leg = _leg_from_ankle(skeleton, ankle, side)
        if leg is not None:
            legs.append(Leg(side, leg.hip, leg.knee, leg.ankle, leaf if foot_is_parent else -1))
    return legs


def _by_override(skeleton: Skeleton, spec: str) -> list[Leg]:
    """Legs named by the user: any number of ``hip,knee,ankle[,toe]`` groups separated by
    ``;`` (sides ``left``, ``right``, then ``leg2``, ``leg3``, ...). A joint in two legs (a
    leg given twice) is refused."""
    legs: list[Leg] = []
    used: dict[int, int] = {}
    for k, part in enumerate(p for p in spec.split(";") if p.strip()):
        names = [n.strip() for n in part.split(",")]
        if len(names) not in (3, 4):
            raise InputError(
                f"--legs: each leg needs 3 or 4 joint names (hip,knee,ankle[,toe]), got {part!r}"
            )
        idx = skeleton.indices(names)
        for a, b in zip(idx, idx[1:]):
            if skeleton.parents[b] != a:
                raise InputError(
                    f"--legs: {skeleton.names[b]!r} is not a child of {skeleton.names[a]!r}"
                )
        for j in idx:
            if j in used:
                raise InputError(
                    f"--legs: joint {skeleton.names[j]!r} is in leg {used[j] + 1} and leg"
                    f" {k + 1}; each leg needs joints of its own"
                )
            used[j] = k
        side = ("left", "right")[k] if k < 2 else f"leg{k}"
        legs.append(Leg(side, idx[0], idx[1], idx[2], idx[3] if len(idx) == 4 else -1))
    return legs


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


def find_legs(skeleton: Skeleton, override: str | None = None) -> Legs:
    """Find the legs of a skeleton.

    Args:
        skeleton: the skeleton.
        override: ``"hip,knee,ankle[,toe];hip,knee,ankle[,toe]"`` joint names, or None.

    Returns:
        :class:`Legs` with at least one leg and the leg length.

    Raises:
        InputError: no legs found (the message lists the joint names and shows ``--legs``),
            or a bad override.
    """
    legs = _by_override(skeleton, override) if override else _by_names(skeleton)
    if len(legs) < 2 and not override:
        topo = _by_topology(skeleton)
        if len(topo) > len(legs):
            legs = topo
    if not legs:
        names = ", ".join(skeleton.names)
        raise InputError(
            "no legs found in the skeleton; joints are: "
            f"{names}. Name them with --legs 'LeftUpLeg,LeftLeg,LeftFoot;RightUpLeg,RightLeg,"
            "RightFoot' (hip,knee,ankle[,toe] per leg)"
        )
    lengths = [
        np.linalg.norm(skeleton.offsets[leg.knee]) + np.linalg.norm(skeleton.offsets[leg.ankle])
        for leg in legs
    ]
    length = float(np.mean(lengths))
    if not length > 0:
        raise InputError("legs: zero leg length at rest; cannot scale foot-placement thresholds")
    return Legs(tuple(legs), length)
