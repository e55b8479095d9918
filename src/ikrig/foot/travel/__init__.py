"""Where a clip is placed: :mod:`~ikrig.foot.travel.place` (at a spot, along a path, walked
off its belt; :func:`travel`), :mod:`~ikrig.foot.travel.belt` (a cycle in place: its belt
speed, repeated cycles, treadmill contacts) and :mod:`~ikrig.foot.travel.roots` (turning
and moving the roots)."""

from .place import (
    TravelPath,
    belt_velocity,
    facing,
    follow_path,
    move_roots,
    path_headings,
    place_at,
    read_path,
    repeat_cycle,
    travel,
    treadmill_contacts,
    walk_the_belt,
)

__all__ = [
    "TravelPath",
    "belt_velocity",
    "facing",
    "follow_path",
    "move_roots",
    "path_headings",
    "place_at",
    "read_path",
    "repeat_cycle",
    "travel",
    "treadmill_contacts",
    "walk_the_belt",
]
