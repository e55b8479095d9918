"""What a character is made of, for foot placement and its measures: which joints are its
legs (:mod:`~ikrig.character.legs`) and where its soles and its clip's floor are
(:mod:`~ikrig.character.sole`)."""

from .legs import Leg, Legs, find_legs, pelvis_joint
from .sole import FootSole, estimate_sole

__all__ = ["FootSole", "Leg", "Legs", "estimate_sole", "find_legs", "pelvis_joint"]
