"""The :class:`GltfClip` record: one skin and one animation of a glTF 2.0 file.

Read by :func:`ikrig.io.gltf.read.read_gltf`, written back by ``ikrig.io.gltf.write``. This
module imports nothing from pygltflib: ``document`` is typed ``Any``.

Spaces: ``motion`` is in the scene's world space. The skeleton's joints are the skin's joints
(parents before children) plus any non-joint node lying between two of them;
``joint_nodes[j]`` is the glTF node of skeleton joint ``j``. The world transform of the nodes
above the skeleton root (``root_world``) is baked into joint 0, and its uniform scale into
every joint's local translation, so ``motion.positions_world()`` are the scene's world joint
positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...pose import Motion
from ...skeleton import Skeleton


@dataclass(frozen=True, eq=False)
class GltfClip:
    """One skin and one animation of a glTF file, as ikrig sees them.

    Attributes:
        document: the ``pygltflib.GLTF2`` document, the whole file as read (binary blob
            loaded).
        skin: index of the chosen skin.
        animation: index of the chosen animation, ``None`` for the rest pose only.
        joint_nodes: node index of each skeleton joint, in skeleton order.
        motion: batch ``(F,)``; the skeleton's joints are ``joint_nodes``, world space (see
            the module docstring).
        times: ``(F,)`` float64 seconds on the animation's own clock.
        root_world: ``(4, 4)`` float64 world matrix of the root joint's parent node (at rest).
        quirks: one short sentence per thing found in the file and handled.
        path: the file read, if any.
        allow_outside: its buffer files may lie outside its folder (the reader's
            ``allow_outside``); the writer reads them again under the same rule.
    """

    document: Any
    skin: int
    animation: int | None
    joint_nodes: tuple[int, ...]
    motion: Motion
    times: np.ndarray
    root_world: np.ndarray
    quirks: tuple[str, ...] = ()
    path: str | None = None
    allow_outside: bool = False

    @property
    def skeleton(self) -> Skeleton:
        """The motion's skeleton."""
        return self.motion.skeleton

    @property
    def frame_time(self) -> float | None:
        """Seconds per frame (``motion.frame_time``)."""
        return self.motion.frame_time
