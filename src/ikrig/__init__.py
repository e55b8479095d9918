"""ikrig: inverse kinematics for character animation.

Conventions (the full page is ``docs/conventions.md``):

- quaternions are unit Hamilton quaternions stored ``(x, y, z, w)``, scalar last;
- right-handed, Y up by default, radians everywhere inside the library;
- every position or rotation argument names its space: ``_local`` (relative to the parent
  joint) or ``_world`` (model/world space);
- every numeric function takes arrays shaped ``(..., 3)`` / ``(..., 4)`` and broadcasts over
  any leading batch shape; float32 stays float32.
"""

from ._version import __version__
from .errors import FileFormatError, HierarchyError, IkrigError, InputError

__all__ = [
    "__version__",
    "IkrigError",
    "InputError",
    "HierarchyError",
    "FileFormatError",
]
