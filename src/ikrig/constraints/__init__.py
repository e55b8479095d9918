"""Joint constraints for the chain solvers.

Each constraint is a small frozen dataclass limiting one solved joint's local rotation
(relative to its parent joint's frame; see :mod:`ikrig.constraints.base`):

* :class:`AngleLimit2D` — signed angle to the parent bone in a plane (a limited hinge in 3D);
* :class:`Cone` — ball-and-socket, the bone within a cone, twist free;
* :class:`Hinge` — rotation about one axis only, optionally limited;
* :class:`TwistLimit` — twist about the bone axis limited, swing free.

All share one method, :meth:`Constraint.project` (the nearest allowed local rotation), and
:func:`pack_constraints` turns a chain's constraints into the arrays the solver kernels read.
The kernel contract (frames, units, what each kind guarantees, where position-based solvers
only approximate) is the docstring of :mod:`ikrig.kernels.constraints`.

Example:
    >>> from ikrig.constraints import Cone, Hinge, pack_constraints
    >>> kinds, params = pack_constraints([Cone(0.5), None, Hinge((0, 0, 1), -1, 1)],
    ...                                  [[1, 0, 0], [1, 0, 0], [1, 0, 0]])
    >>> kinds.tolist(), params.shape
    ([2, 0, 3], (3, 8))
"""

from ..kernels.constraints import (
    KIND_ANGLE_2D,
    KIND_CONE,
    KIND_FREE,
    KIND_HINGE,
    KIND_TWIST,
    N_PARAMS,
)
from .base import Constraint, pack_constraints
from .cone import Cone
from .hinge import Hinge
from .limits2d import AngleLimit2D
from .twist import TwistLimit

__all__ = [
    "AngleLimit2D",
    "Cone",
    "Constraint",
    "Hinge",
    "KIND_ANGLE_2D",
    "KIND_CONE",
    "KIND_FREE",
    "KIND_HINGE",
    "KIND_TWIST",
    "N_PARAMS",
    "TwistLimit",
    "pack_constraints",
]
