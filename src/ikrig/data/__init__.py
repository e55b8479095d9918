"""Built-in demo data made by code, so examples and tests need no file.

- :func:`humanoid_skeleton` (:mod:`.humanoid`): a 31-joint humanoid with the CMU
  MotionBuilder joint names and hierarchy, in metres, Y up, facing +Z.
- :func:`walk_clip` (:mod:`.walk`): a procedural walk on that skeleton whose feet stay
  planted during stance; :func:`walk_contacts` gives its ground-truth stance flags. Its gait
  timing and foot trajectories are in :mod:`.gait`.

To write a walk as a BVH file: ``ikrig.io.write_bvh(path, ikrig.io.to_bvh_clip(walk_clip()))``.
"""

from .humanoid import humanoid_skeleton
from .walk import walk_clip, walk_contacts

__all__ = ["humanoid_skeleton", "walk_clip", "walk_contacts"]
