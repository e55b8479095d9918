"""Built-in demo data made by code, so examples and tests need no file.

- :func:`humanoid_skeleton`: a 31-joint humanoid with the CMU MotionBuilder joint names and
  hierarchy, in metres, Y up, facing +Z.
- :func:`walk_clip`: a procedural walk on that skeleton whose feet stay planted during stance;
  :func:`walk_contacts` gives its ground-truth stance flags.
- :func:`to_bvh_clip`: wrap such a motion with CMU-style BVH channels for
  :func:`ikrig.io.write_bvh`.
"""

from .walk import humanoid_skeleton, to_bvh_clip, walk_clip, walk_contacts

__all__ = ["humanoid_skeleton", "to_bvh_clip", "walk_clip", "walk_contacts"]
