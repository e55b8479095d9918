"""What a character is made of, for foot placement and its measures: which joints are its
legs (:mod:`~ikrig.character.legs`) and where its soles and its clip's floor are
(:mod:`~ikrig.character.sole`).

The sole module (compiled kernels, the ground) is loaded on first use of ``FootSole`` or
``estimate_sole``: ``ikrig info`` finds legs and the up axis without starting Numba."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .legs import Leg, Legs, find_legs, pelvis_joint
from .up import detect_up, from_y_up, to_y_up

if TYPE_CHECKING:
    from .sole import FootSole, estimate_sole

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


def __getattr__(name: str) -> Any:
    """``FootSole`` and ``estimate_sole``, from :mod:`~ikrig.character.sole` when first
    asked for."""
    if name in ("FootSole", "estimate_sole"):
        from . import sole

        return getattr(sole, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
