"""The :class:`BvhClip` record: a BVH file's motion and the channel layout to write it back.

Read by :func:`ikrig.io.bvh.read_bvh`, written by :func:`ikrig.io.bvh.write_bvh`; a leaf
module (the reader, the writer and its Euler step import it, it imports none of them), as
:mod:`ikrig.io.gltf.clip` is for glTF.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np

from ...errors import InputError
from ...pose import Motion
from ._channels import _check_channels, _checked_source_values

__all__ = ["BvhClip"]


@dataclass(frozen=True, eq=False)
class BvhClip:
    """A BVH clip: the motion plus what is needed to write it back in the same layout.

    Attributes:
        motion: the :class:`~ikrig.pose.Motion`, batch shape ``(F,)``: ``rotations_local
            (F, J, 4)`` xyzw, ``positions_local (F, J, 3)`` in the file's units, ``frame_time``
            in seconds (``None`` when the file says 0).
        channels: per joint, the channel names exactly as in the file, e.g. ``("Xposition",
            "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation")``; ``()`` for a
            joint without channels.
        source_values: ``(F, C)`` float64, the channel values as read (degrees for rotations),
            or ``None``. Only used as the reference when choosing among equivalent Euler
            angles on writing.
        path: the file the clip was read from, or ``None``.

    Raises:
        InputError: ``channels`` does not have one entry per joint, names an unknown channel,
            or ``source_values`` is not a finite 2-D array with one column per channel.
    """

    motion: Motion
    channels: tuple[tuple[str, ...], ...]
    source_values: np.ndarray | None = None
    path: str | None = None

    def __post_init__(self):
        if not isinstance(self.motion, Motion):
            raise InputError(f"motion: expected an ikrig Motion, got {type(self.motion).__name__}")
        channels = tuple(tuple(str(name) for name in joint) for joint in self.channels)
        _check_channels(channels, self.motion.skeleton)
        object.__setattr__(self, "channels", channels)
        if self.source_values is not None:
            source = _checked_source_values(self.source_values, channels)
            object.__setattr__(self, "source_values", source)
        if self.path is not None:
            object.__setattr__(self, "path", os.fspath(self.path))

    @property
    def frame_time(self) -> float | None:
        """Seconds per frame, or ``None``."""
        return self.motion.frame_time

    @property
    def num_frames(self) -> int:
        """Number of frames ``F`` (1 for a single pose)."""
        return self.motion.num_frames

    @property
    def fps(self) -> float | None:
        """Frames per second ``1 / frame_time``, or ``None`` without a frame time."""
        return None if self.frame_time is None else 1.0 / self.frame_time

    @property
    def duration(self) -> float | None:
        """``num_frames * frame_time`` in seconds, or ``None`` without a frame time."""
        return None if self.frame_time is None else self.num_frames * self.frame_time

    def with_motion(self, motion: Motion) -> BvhClip:
        """The same clip layout with another motion (an edited copy of this one).

        ``source_values`` is kept as the Euler reference; it is used only while the new
        motion has as many frames as it has rows.

        Raises:
            InputError: the motion's skeleton has a different number of joints or different
                parents than this clip's.
        """
        if not isinstance(motion, Motion):
            raise InputError(f"motion: expected an ikrig Motion, got {type(motion).__name__}")
        if not np.array_equal(motion.skeleton.parents, self.motion.skeleton.parents):
            raise InputError(
                "motion: its skeleton's hierarchy (parents) differs from the clip's; a BVH"
                " clip's channel layout needs the same joints in the same order"
            )
        return replace(self, motion=motion)
