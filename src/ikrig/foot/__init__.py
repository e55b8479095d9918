"""Foot placement on uneven ground: take a clip recorded on flat ground and plant its feet
on stairs, slopes and rough ground, offline over whole clips (:func:`place_feet`) or live
frame by frame (:class:`FootPlacer`).

Layout: :mod:`~ikrig.foot.options` (settings, one group per concern),
:mod:`~ikrig.foot.context` (the job: character, ground and options, validated once),
:mod:`~ikrig.foot.state` (what carries from frame to frame), :mod:`~ikrig.foot.stages`
(one numbered step per module), :mod:`~ikrig.foot.recipes` (which steps each mode runs),
:mod:`~ikrig.foot.offline` and :mod:`~ikrig.foot.live` (the two drivers).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .options import (
    DATUMS,
    MODES,
    AlignOptions,
    ContactOptions,
    FootOptions,
    IKOptions,
    LiveOptions,
    LockOptions,
    PelvisOptions,
    PlanOptions,
    RootOptions,
    TraceOptions,
)

if TYPE_CHECKING:
    from .context import FootContext
    from .live import FootPlacer
    from .offline import DatumWarning, FootResult, FramePlan, make_baseline, place_feet
    from .stages.contacts import detect_foot_contacts
    from .stages.legs_ik import FrameInfo

_LAZY = {
    "FootContext": "context",
    "FootPlacer": "live",
    "DatumWarning": "offline",
    "FootResult": "offline",
    "FramePlan": "offline",
    "make_baseline": "offline",
    "place_feet": "offline",
    "detect_foot_contacts": "stages.contacts",
    "FrameInfo": "stages.legs_ik",
}
"""The pipeline's names, imported when first used: the settings (``MODES`` included, which
the command line's options read) load without the compiled pipeline."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # not cached here: a lookup always reads the defining module, so that a name patched
    # there (a test's monkeypatch) is the one every caller gets, whatever ran first
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "DATUMS",
    "DatumWarning",
    "MODES",
    "AlignOptions",
    "ContactOptions",
    "FootContext",
    "FootOptions",
    "FootPlacer",
    "FootResult",
    "FrameInfo",
    "FramePlan",
    "IKOptions",
    "LiveOptions",
    "LockOptions",
    "PelvisOptions",
    "PlanOptions",
    "RootOptions",
    "TraceOptions",
    "detect_foot_contacts",
    "make_baseline",
    "place_feet",
]
