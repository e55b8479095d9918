"""The Blender add-on (issue 39): ikrig on an armature's own data, in Blender 4.2+.

- :mod:`ikrig.blender.rig` and :mod:`ikrig.blender.rotation`: the arithmetic (no ``bpy``):
  bones and channels <-> :class:`~ikrig.skeleton.Skeleton` and :class:`~ikrig.pose.Motion`,
  rotation modes <-> quaternions;
- :mod:`ikrig.blender.armature`: an armature object and its action read into a clip;
- :mod:`ikrig.blender.keys`: a clip written back as a new action.

:func:`register` and :func:`unregister` add and remove the operators and the panel; they
import ``bpy`` (the ``[blender]`` extra, or Blender itself); nothing else in ikrig does.
"""

from __future__ import annotations

__all__ = ["register", "unregister"]


def register() -> None:
    """Register the add-on's operators and panel with Blender."""
    from .ui import register as _register

    _register()


def unregister() -> None:
    """Remove what :func:`register` added."""
    from .ui import unregister as _unregister

    _unregister()
