"""Pure array math: vectors ``(..., 3)``, quaternions ``(..., 4)`` xyzw, Euler angles, up
axes.

Knows nothing of skeletons. See ``docs/conventions.md`` for the conventions.
"""

from .axes import UP_AXES, check_up, points_from_y_up, points_to_y_up, to_y_up_quat
from .euler import parse_order, quat_from_euler, quat_to_euler
from .quat import (
    quat_angle,
    quat_between,
    quat_canonical,
    quat_conj,
    quat_dot,
    quat_from_axis_angle,
    quat_from_matrix,
    quat_from_rotvec,
    quat_identity,
    quat_inv,
    quat_mul,
    quat_nlerp,
    quat_normalize,
    quat_rotate,
    quat_slerp,
    quat_to_axis_angle,
    quat_to_matrix,
    quat_to_rotvec,
)
from .vec import (
    angle_between,
    any_perpendicular,
    cross,
    dot,
    norm,
    normalize,
    project_on_plane,
    signed_angle_2d,
    triangle_angle,
)

__all__ = [
    "UP_AXES",
    "angle_between",
    "any_perpendicular",
    "check_up",
    "cross",
    "dot",
    "norm",
    "normalize",
    "parse_order",
    "points_from_y_up",
    "points_to_y_up",
    "project_on_plane",
    "quat_angle",
    "quat_between",
    "quat_canonical",
    "quat_conj",
    "quat_dot",
    "quat_from_axis_angle",
    "quat_from_euler",
    "quat_from_matrix",
    "quat_from_rotvec",
    "quat_identity",
    "quat_inv",
    "quat_mul",
    "quat_nlerp",
    "quat_normalize",
    "quat_rotate",
    "quat_slerp",
    "quat_to_axis_angle",
    "quat_to_euler",
    "quat_to_matrix",
    "quat_to_rotvec",
    "signed_angle_2d",
    "triangle_angle",
    "to_y_up_quat",
]
