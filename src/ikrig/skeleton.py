"""The immutable :class:`Skeleton`: joint names, hierarchy and rest offsets.

A skeleton holds no motion. Joints are ordered so that every parent comes before its
children (``parents[j] < j``); roots have parent ``-1``. ``offsets[j]`` is the rest local
translation of joint ``j`` relative to its parent, in the data's own units.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import numpy as np

from .errors import HierarchyError, InputError


def _empty_sites() -> np.ndarray:
    return np.zeros((0, 3))


@dataclass(frozen=True, eq=False)
class Skeleton:
    """A joint hierarchy.

    Attributes:
        names: ``J`` unique joint names.
        parents: ``(J,)`` int; parent index of each joint, ``-1`` for a root, always ``< j``.
        offsets: ``(J, 3)`` float64; rest local translation of each joint (parent space).
        end_site_parents: ``(E,)`` int; the joint each end site hangs from (BVH ``End Site``).
        end_site_offsets: ``(E, 3)`` float64; end-site offsets in their parent joint's space.

    Raises:
        HierarchyError: duplicate or empty names, a parent not before its child, offsets of
            the wrong shape or not finite, an end site on an unknown joint.

    Example:
        >>> offsets = [[0, 1, 0], [0, -0.45, 0], [0, -0.42, 0]]
        >>> sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1], offsets)
        >>> sk.chain("hip", "ankle")
        (0, 1, 2)
    """

    names: tuple[str, ...]
    parents: np.ndarray
    offsets: np.ndarray
    end_site_parents: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    end_site_offsets: np.ndarray = field(default_factory=_empty_sites)

    def __post_init__(self):
        names = tuple(str(n) for n in self.names)
        parents = np.asarray(self.parents)
        offsets = np.asarray(self.offsets, dtype=np.float64)
        site_parents = np.asarray(self.end_site_parents)
        site_offsets = np.asarray(self.end_site_offsets, dtype=np.float64).reshape(-1, 3)
        n = len(names)
        if n == 0:
            raise HierarchyError("skeleton: needs at least one joint")
        if parents.shape != (n,) or parents.dtype.kind not in "iu":
            raise HierarchyError(f"parents: expected {n} integers, got shape {parents.shape}")
        if offsets.shape != (n, 3):
            raise HierarchyError(f"offsets: expected shape ({n}, 3), got {offsets.shape}")
        if not np.isfinite(offsets).all():
            j = int(np.argwhere(~np.isfinite(offsets))[0, 0])
            raise HierarchyError(f"offsets: joint {names[j]!r} has a NaN or infinite offset")
        seen = set()
        for j, name in enumerate(names):
            if not name.strip():
                raise HierarchyError(f"names: joint {j} has an empty name")
            if name in seen:
                raise HierarchyError(f"names: joint name {name!r} appears twice")
            seen.add(name)
            p = int(parents[j])
            if p < -1 or p >= j:
                raise HierarchyError(
                    f"parents: joint {j} ({name!r}) has parent {p}; parents must come before"
                    " their children (-1 for a root)"
                )
        if site_parents.shape != (len(site_offsets),):
            raise HierarchyError(
                f"end sites: {site_parents.shape} parents for {len(site_offsets)} offsets"
            )
        if len(site_parents) and (site_parents.min() < 0 or site_parents.max() >= n):
            raise HierarchyError("end_site_parents: index out of range")
        if not np.isfinite(site_offsets).all():
            raise HierarchyError("end_site_offsets: contains NaN or infinite values")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "parents", parents.astype(np.int64))
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "end_site_parents", site_parents.astype(np.int64))
        object.__setattr__(self, "end_site_offsets", site_offsets)
        for a in (self.parents, self.offsets, self.end_site_parents, self.end_site_offsets):
            a.flags.writeable = False

    @property
    def num_joints(self) -> int:
        """Number of joints ``J``."""
        return len(self.names)

    def index(self, joint: str | int) -> int:
        """Index of a joint given by name (or by index, checked).

        Raises:
            InputError: unknown name (the message suggests close names) or index out of range.
        """
        if isinstance(joint, (int, np.integer)):
            j = int(joint)
            if not -self.num_joints <= j < self.num_joints:
                raise InputError(f"joint index {j} out of range for {self.num_joints} joints")
            return j % self.num_joints
        try:
            return self.names.index(joint)
        except ValueError:
            close = difflib.get_close_matches(str(joint), self.names, n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise InputError(f"no joint named {joint!r}{hint}") from None

    def indices(self, joints) -> tuple[int, ...]:
        """Indices of several joints (names or indices)."""
        return tuple(self.index(j) for j in joints)

    def children(self, joint: str | int) -> tuple[int, ...]:
        """Indices of the direct children of a joint."""
        j = self.index(joint)
        return tuple(int(c) for c in np.flatnonzero(self.parents == j))

    def ancestors(self, joint: str | int) -> tuple[int, ...]:
        """The joint's parent, grandparent, ... up to its root (nearest first)."""
        out = []
        p = int(self.parents[self.index(joint)])
        while p >= 0:
            out.append(p)
            p = int(self.parents[p])
        return tuple(out)

    def chain(self, start: str | int, end: str | int) -> tuple[int, ...]:
        """Joint indices from ``start`` down the hierarchy to ``end``, both included.

        Raises:
            HierarchyError: ``end`` is not ``start`` or one of its descendants.
        """
        s, e = self.index(start), self.index(end)
        path = [e]
        while path[-1] != s:
            p = int(self.parents[path[-1]])
            if p < 0:
                raise HierarchyError(
                    f"joint {self.names[e]!r} is not below {self.names[s]!r} in the hierarchy"
                )
            path.append(p)
        return tuple(reversed(path))

    def bone_lengths(self) -> np.ndarray:
        """``(J,)`` rest length of the bone from each joint's parent to the joint (0 for roots)."""
        lengths = np.linalg.norm(self.offsets, axis=-1)
        lengths[self.parents < 0] = 0.0
        return lengths
