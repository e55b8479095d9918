"""Limbs found by their joints' names (step 2 of :mod:`~ikrig.character.legs`).

A joint's name gives a side ("left", "right" or none), a leg role (hip, knee, ankle, toe or
none) or an arm role (upper arm as hip, forearm as knee, hand as ankle), and a *place* that
tells several legs on one side apart: ``front`` (also ``fore``), ``mid`` (``middle``,
``center``), ``hind`` (``back``, ``rear``), or a leg number (``L_Leg1``, ``L_Leg2`` on
separate branches: ``leg1``, ``leg2``; numbers that follow each other down one chain, the
Fox's ``b_LeftLeg01`` > ``b_LeftLeg02``, are segments of one leg, not places).

:func:`leg_limbs` gives the legs named as legs: per side, a biped's one leg (no place), and
one leg per place when a place names a leg on both sides (a hexapod's ``leg_front_l``,
``leg_mid_l``, ``leg_back_l``). Within a group the ankle climbs to the nearest knee, the knee
to the nearest hip; a leg named in numbered segments (``Leg01`` > ``Leg02`` > ``Foot01``)
takes the upper segment as the hip; a place whose names give no roles (``L_Leg1_01`` >
``_02`` > ``_03`` > ``_04``) takes the lowest four joints of its chain as hip, knee, ankle
and toe (three: no toe). :func:`arm_limbs` gives the arms, which stand as front legs only
when the clip shows them on the floor (:func:`~ikrig.character.legs.find_legs` decides).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..skeleton import Skeleton

__all__ = ["NamedLimb", "arm_limbs", "bare_name", "is_helper", "leg_limbs", "side_of"]

_NAMESPACE = re.compile(r"^.*[:|]")  # "mixamorig:LeftFoot", "Armature|foot_l"
_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # "IKFootRoll" -> IK, Foot, Roll
_ROLE_WORDS = {
    "toe": ("toe", "ball"),
    "ankle": ("foot", "ankle"),
    "knee": ("knee", "calf", "shin", "lowerleg", "leg"),
    "hip": ("upleg", "upperleg", "thigh", "hip"),
}
_ARM_ROLE_WORDS = {  # checked in this order: "forearm" before "arm"
    "ankle": ("hand", "wrist"),
    "knee": ("forearm", "lowerarm", "elbow"),
    "hip": ("upperarm", "arm"),
}
# words that disqualify a joint from a leg role (arms, hip *joints* that are pelvis helpers)
_NOT_LEG = ("arm", "hand", "finger", "thumb", "shoulder", "elbow", "wrist", "collar", "clav")
_NOT_ARM = ("shoulder", "collar", "clav", "finger", "thumb")
# whole name tokens of helper bones and toe digits: never a leg joint
_HELPERS = frozenset(
    "twist roll ik fk pole target tgt ctrl control mch helper nub end corrective aux dummy"
    " null locator ref thumb index middle ring pinky little finger".split()
)
_PLACES = {"front": "front", "fore": "front", "mid": "mid", "middle": "mid", "center": "mid",
           "centre": "mid", "hind": "hind", "back": "hind", "rear": "hind"}  # fmt: skip
_PLACE_ORDER = ("front", "mid", "hind")
_SIDE_PATTERNS = (  # (regex on the name without namespace, side); first match wins
    (re.compile(r"left", re.IGNORECASE), "left"),
    (re.compile(r"right", re.IGNORECASE), "right"),
    (re.compile(r"[._\s-][lL]$|^[lL][._\s-]|[._\s-][lL][._\s-]|^L(?=[A-Z])"), "left"),
    (re.compile(r"[._\s-][rR]$|^[rR][._\s-]|[._\s-][rR][._\s-]|^R(?=[A-Z])"), "right"),
)
_SIDE_TOKENS = re.compile(
    r"left|right|[._\s-][lr]$|^[lr][._\s-]|[._\s-][lr](?=[._\s-])|[._\s-]", re.IGNORECASE
)


class NamedLimb(NamedTuple):
    """A limb found by name: its side ("left" or "right"), its place ("" for a biped's
    legs, "front", "mid", "hind" or "leg1", "leg2", ...) and its joints (``toe`` -1 for
    none)."""

    side: str
    place: str
    hip: int
    knee: int
    ankle: int
    toe: int = -1

    @property
    def label(self) -> str:
        """The leg's label: the side, after the place when there is one ("front_left")."""
        return f"{self.place}_{self.side}" if self.place else self.side


def bare_name(name: str) -> str:
    """``name`` without its namespace ("mixamorig:LeftFoot" -> "LeftFoot")."""
    return _NAMESPACE.sub("", name)


def _tokens(name: str) -> list[str]:
    return [t.lower() for t in _TOKENS.findall(bare_name(name))]


def _words(name: str) -> tuple[str, str]:
    """``(side, core)`` of a joint name: side is "left", "right" or ""; core is the lower-case
    name without namespace, side markers and separators ("mixamorig:LeftUpLeg" -> "upleg")."""
    base = bare_name(name).strip()
    side = next((s for pat, s in _SIDE_PATTERNS if pat.search(base)), "")
    core = _SIDE_TOKENS.sub("", base)
    if side and re.match(r"^[LR][A-Z]", core):  # "LHipJoint" -> "HipJoint"
        core = core[1:]
    return side, core.lower()


def side_of(name: str) -> str:
    """The side a joint's name says: "left", "right" or ""."""
    return _words(name)[0]


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


def _arm_role(core: str) -> str | None:
    if any(w in core for w in _NOT_ARM):
        return None
    return next((r for r, words in _ARM_ROLE_WORDS.items() if any(w in core for w in words)), None)


def is_helper(name: str) -> bool:
    """Whether a joint name is a helper bone's (twist, roll, IK, pole, end, digit, ...),
    which never takes a leg role ("middle" names a digit in a numbered name,
    ``LeftHandMiddle1``, a hexapod's middle leg otherwise, ``MiddleFootLeft``)."""
    tokens = _tokens(name)
    helpers = _HELPERS if any(t.isdigit() for t in tokens) else _HELPERS - {"middle"}
    return any(t in helpers for t in tokens)


def _named(skeleton: Skeleton, role_of=_role) -> list[tuple[str, str | None, str]]:
    """Per joint ``(side, role, stem)``: the side, the role ``role_of`` reads off the core
    (None for helpers and other joints) and the core without trailing digits
    ("thigh.L.001" -> "thigh")."""
    out = []
    for name in skeleton.names:
        side, core = _words(name)
        role = None if is_helper(name) else role_of(core)
        out.append((side, role, core.rstrip("0123456789")))
    return out


def _places(skeleton: Skeleton, named) -> list[str]:
    """Per joint its place (module docstring), "" for joints without a leg role. Leg
    numbers are dropped when one numbered joint hangs below another of another number on
    its side (segments of one leg)."""
    places = []
    for j, name in enumerate(skeleton.names):
        tokens = _tokens(name) if named[j][1] else []
        place = next((_PLACES[t] for t in tokens if t in _PLACES), "")
        after_leg = [b for a, b in zip(tokens, tokens[1:]) if a == "leg" and b.isdigit()]
        places.append(place or (f"leg{int(after_leg[0])}" if after_leg else ""))
    for j, p in enumerate(places):
        if p.startswith("leg") and any(
            places[a].startswith("leg") and places[a] != p and named[a][0] == named[j][0]
            for a in skeleton.ancestors(j)
        ):
            return [q if not q.startswith("leg") else "" for q in places]
    return places


def _up_to(skeleton: Skeleton, named, j: int, role: str) -> int:
    """The nearest ancestor of ``j`` with ``role`` on ``j``'s side, climbing over joints
    without a role only; the top of a run of segments of one bone ("thigh.L" above
    "thigh.L.001"); -1 if none."""
    side = named[j][0]
    p = int(skeleton.parents[j])
    while p >= 0 and named[p][1] is None:
        p = int(skeleton.parents[p])
    if p < 0 or named[p][:2] != (side, role):
        return -1
    while (q := int(skeleton.parents[p])) >= 0 and named[q] == named[p]:
        p = q
    return p


def _toe(skeleton: Skeleton, named, ankle: int) -> int:
    """A child of the ankle named as a toe, else its only child that is no helper, else -1."""
    kids = [c for c in skeleton.children(ankle) if not is_helper(skeleton.names[c])]
    toes = [c for c in kids if named[c][1] == "toe"]
    return toes[0] if toes else (kids[0] if len(kids) == 1 else -1)


def _by_roles(skeleton: Skeleton, named, ankles: list[int]) -> tuple[int, ...] | None:
    """``(hip, knee, ankle, toe)`` climbing from the first of ``ankles`` (in joint order)
    that gives a parent chain, else the first that gives a leg at all; None for none. Two
    segments of one bone above the ankle with no hip above them (``Leg01`` > ``Leg02``) are
    the hip and the knee."""
    par = skeleton.parents
    found = []
    for ankle in ankles:
        knee = _up_to(skeleton, named, ankle, "knee")
        hip = _up_to(skeleton, named, knee, "hip") if knee >= 0 else -1
        low = int(par[ankle])
        if hip < 0 and knee >= 0 and low != knee and par[low] == knee and named[low] == named[knee]:
            hip, knee = knee, low
        if hip >= 0:
            found.append((hip, knee, ankle, _toe(skeleton, named, ankle)))
    found.sort(key=lambda g: par[g[2]] != g[1] or par[g[1]] != g[0])
    return found[0] if found else None


def _by_order(skeleton: Skeleton, members: list[int]) -> tuple[int, ...] | None:
    """``(hip, knee, ankle, toe)``: the lowest four joints (three: no toe) of the parent
    chain the ``members`` form from their top down (the deepest branch where it forks);
    None when it is shorter."""
    inside = set(members)
    tops = [j for j in members if skeleton.parents[j] not in inside]
    if not tops:
        return None

    def depth(j: int) -> int:
        return 1 + max((depth(c) for c in skeleton.children(j) if c in inside), default=0)

    chain = [tops[0]]
    while kids := [c for c in skeleton.children(chain[-1]) if c in inside]:
        chain.append(max(kids, key=depth))
    if len(chain) < 3:
        return None
    return tuple(chain[-4:]) if len(chain) >= 4 else (*chain, -1)


def leg_limbs(skeleton: Skeleton) -> list[NamedLimb]:
    """The legs named as legs (module docstring): a biped's left and right (each a leg
    whose ``(hip, knee, ankle)`` is not always a parent chain: the caller checks), then one
    pair per place named on both sides, front to hind."""
    named = _named(skeleton)
    places = _places(skeleton, named)
    out = []
    for side in ("left", "right"):
        for place in sorted({p for j, p in enumerate(places) if named[j][0] == side}):
            members = [j for j, (s, role, _) in enumerate(named)
                       if s == side and role and places[j] == place]  # fmt: skip
            ankles = [j for j in members if named[j][1] == "ankle"]
            joints = _by_roles(skeleton, named, ankles)
            if joints is None and place:
                joints = _by_order(skeleton, members)
            if joints is not None:
                out.append(NamedLimb(side, place, *joints))
    both = {g.place for g in out if g.side == "left"} & {g.place for g in out if g.side == "right"}
    out = [g for g in out if not g.place or g.place in both]

    def order(g: NamedLimb) -> tuple:
        rank = _PLACE_ORDER.index(g.place) if g.place in _PLACE_ORDER else len(_PLACE_ORDER)
        return (bool(g.place), rank, len(g.place), g.place, g.side)

    return sorted(out, key=order)


def _arm_toe(skeleton: Skeleton, hand: int) -> int:
    """The hand's only child that is no end joint (a finger: a front foot's toe), else -1."""
    kids = [c for c in skeleton.children(hand)
            if not {"nub", "end"} & set(_tokens(skeleton.names[c]))]  # fmt: skip
    return kids[0] if len(kids) == 1 else -1


def arm_limbs(skeleton: Skeleton) -> list[NamedLimb]:
    """The left and right arms named as arms (upper arm, forearm, hand; place "front"), each
    from the first hand (in joint order) that climbs to a forearm and an upper arm on its
    side; their chains are not checked to be parent chains."""
    named = _named(skeleton, _arm_role)
    out = []
    for side in ("left", "right"):
        for hand, (s, role, _) in enumerate(named):
            if s != side or role != "ankle":
                continue
            elbow = _up_to(skeleton, named, hand, "knee")
            shoulder = _up_to(skeleton, named, elbow, "hip") if elbow >= 0 else -1
            if shoulder >= 0:
                toe = _arm_toe(skeleton, hand)
                out.append(NamedLimb(side, "front", shoulder, elbow, hand, toe))
                break
    return out
