"""What a character is made of, for foot placement and its measures: which joints are its
legs (:mod:`~ikrig.character.legs`) and where its soles and its clip's floor are
(:mod:`~ikrig.character.sole`)."""

from .legs import Leg, Legs, find_legs, pelvis_joint
from .sole import FootSole, estimate_sole
from .up import detect_up, from_y_up, to_y_up

__all__ = [
    "FootSole",
    "Leg",
    "Legs",
    "detect_up",
    "estimate_sole",
    "find_legs",
    "from_y_up",
    "pelvis_joint",
    "to_y_up",
]
