"""BVH text from a clip (private to :mod:`ikrig.io.bvh`).

The ``HIERARCHY`` is written tab-indented, joints depth first, offsets with ``precision``
decimals; the ``MOTION`` rows hold the channel values (positions from ``positions_local``,
rotations as Euler angles in degrees from :mod:`ikrig.io.bvh._euler`), printed by a compiled
fixed-point formatter that rounds exactly as ``"%.6f"`` does (Python's ``%`` formatting
takes over for values too large for its exact integer arithmetic).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ...errors import InputError
from ...kernels.text import format_rows_buffer
from ...pose import Motion
from ...skeleton import Skeleton
from ._channels import _channel_layout, _Layout
from ._euler import _euler_plan, write_euler
from ._header import MAX_COORDINATE, _cut, _shown
from ._motion import MAX_DEGREES

if TYPE_CHECKING:
    from .clip import BvhClip


def _depth_first_order(parents: np.ndarray) -> list[int]:
    """Joint indices in depth-first pre-order (children in index order), as BVH lists them."""
    children: list[list[int]] = [[] for _ in parents]
    roots: list[int] = []
    for j, p in enumerate(parents.tolist()):
        (roots if p < 0 else children[p]).append(j)
    order, stack = [], roots[::-1]
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(children[j][::-1])
    return order


_NOT_IN_NAMES = re.compile(r"[{}\t\n\r\v\f]|  |^ | $")


def _check_writable_names(names) -> None:
    """Raise InputError for a joint name that would not read back the same: the reader splits
    at ASCII whitespace and braces and joins a name's words with one space."""
    for name in names:
        if _NOT_IN_NAMES.search(name):
            raise InputError(
                f"joint name {_shown(name)} cannot be written to BVH (braces, tabs, line"
                " breaks, leading, trailing or repeated spaces)"
            )


def _check_ranges(clip: BvhClip, values: np.ndarray, layout: _Layout, precision: int) -> None:
    """Raise InputError for what the reader would refuse: offsets or positions beyond
    ``MAX_COORDINATE``, angles beyond ``MAX_DEGREES`` (once printed: a decomposed angle a
    rounding error past the bound is printed as the bound)."""
    skeleton = clip.motion.skeleton
    for what, array in (
        ("offset", skeleton.offsets),
        ("end site offset", skeleton.end_site_offsets),
    ):
        if array.size and not np.abs(array).max() <= MAX_COORDINATE:
            raise InputError(f"skeleton: an {what} is beyond |x| <= 1e30, which BVH files refuse")
    rotation = np.zeros(layout.num_channels, dtype=bool)
    for slot in layout.rotation_slots:
        rotation[slot.columns] = True
    slack = 0.5 * 10.0**-precision
    bad = ~(np.abs(values) <= np.where(rotation, MAX_DEGREES + slack, MAX_COORDINATE))
    if bad.any():
        frame, column = divmod(int(np.argmax(bad.ravel())), values.shape[1])
        raise InputError(
            f"motion: frame {frame}, {_cut(layout.column_labels[column])} is"
            f" {values[frame, column]:.6g}, beyond what BVH files hold (|x| <= 1e30,"
            " |angle| <= 1e7 degrees)"
        )


def _clip_arrays(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """``(F, J, 4)`` rotations and ``(F, J, 3)`` positions in float64; a pose is one frame.

    Raises:
        InputError: the motion has more than one batch axis.
    """
    if len(motion.batch_shape) > 1:
        raise InputError(
            f"motion: a BVH clip needs batch shape (F,) or (), got {motion.batch_shape}"
        )
    J = motion.num_joints
    rotations = motion.rotations_local.reshape(-1, J, 4).astype(np.float64, copy=False)
    positions = motion.positions_local.reshape(-1, J, 3).astype(np.float64, copy=False)
    return rotations, positions


def _channel_values(clip: BvhClip, layout: _Layout) -> np.ndarray:
    """``(F, C)`` channel values to write: positions in file units, rotations in degrees."""
    rotations, positions = _clip_arrays(clip.motion)
    values = np.empty((len(rotations), layout.num_channels))
    values[:, layout.position_columns] = positions[:, layout.position_joints, layout.position_axes]
    plan = _euler_plan(layout, clip.motion.skeleton.names)
    if len(plan.joints):
        write_euler(clip, rotations, layout, plan, values)
    return values


class _Tree(NamedTuple):
    """What the hierarchy writer needs, indexed by joint."""

    skeleton: Skeleton
    channels: tuple[tuple[str, ...], ...]
    children: list[list[int]]
    end_sites: list[list[np.ndarray]]  # offsets of the end sites under each joint
    number: str  # "%.6f"-style format of one offset component


def _tree(skeleton: Skeleton, channels, precision: int) -> _Tree:
    children: list[list[int]] = [[] for _ in skeleton.names]
    end_sites: list[list[np.ndarray]] = [[] for _ in skeleton.names]
    for j, p in enumerate(skeleton.parents.tolist()):
        if p >= 0:
            children[p].append(j)
    for parent, offset in zip(skeleton.end_site_parents.tolist(), skeleton.end_site_offsets):
        end_sites[parent].append(offset)
    return _Tree(skeleton, channels, children, end_sites, f"%.{precision}f")


def _offset_line(tree: _Tree, indent: str, offset) -> str:
    return f"{indent}OFFSET " + " ".join(tree.number % v for v in offset)


_MAX_INDENT = 32  # deeper blocks are not indented further (keeps deep chains linear in size)


def _indent(depth: int) -> str:
    return "\t" * min(depth, _MAX_INDENT)


def _format_hierarchy(skeleton: Skeleton, channels, precision: int) -> list[str]:
    """The lines of the ``HIERARCHY`` section, tab-indented, joints depth first.

    Iterative (an explicit stack, no recursion), so a chain of any depth is written; each
    joint's block holds its OFFSET, CHANNELS, child joints, then its end sites.
    """
    tree = _tree(skeleton, channels, precision)
    lines = ["HIERARCHY"]
    roots = np.flatnonzero(skeleton.parents < 0).tolist()
    stack = [(False, j, 0) for j in reversed(roots)]  # (closing?, joint, depth)
    while stack:
        closing, j, depth = stack.pop()
        indent, inner = _indent(depth), _indent(depth + 1)
        if closing:
            for offset in tree.end_sites[j]:
                site = [
                    f"{inner}End Site",
                    inner + "{",
                    _offset_line(tree, _indent(depth + 2), offset),
                ]
                lines += site + [inner + "}"]
            lines.append(indent + "}")
            continue
        keyword = "ROOT" if skeleton.parents[j] < 0 else "JOINT"
        lines += [f"{indent}{keyword} {skeleton.names[j]}", indent + "{"]
        lines.append(_offset_line(tree, inner, skeleton.offsets[j]))
        lines.append(f"{inner}CHANNELS " + " ".join([str(len(channels[j])), *channels[j]]))
        stack.append((True, j, depth))
        stack.extend((False, child, depth + 1) for child in reversed(tree.children[j]))
    return lines


def _check_precision(precision) -> int:
    """``precision`` as an int in 0..17, else InputError."""
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)):
        raise InputError(f"precision: expected an integer number of decimals, got {precision!r}")
    if not 0 <= precision <= 17:
        raise InputError(f"precision: expected 0 to 17 decimals, got {precision}")
    return int(precision)


def _format_bytes(clip: BvhClip, precision: int) -> bytes:
    """The BVH text of a clip as ASCII/UTF-8 bytes; see :func:`format_bvh`."""
    header, rows = _format_parts(clip, precision)
    return header + rows.tobytes()


def _format_parts(clip: BvhClip, precision: int) -> tuple[bytes, np.ndarray]:
    """The BVH text of a clip in two parts: the hierarchy and MOTION header (UTF-8) and the
    frame rows (ASCII, a ``uint8`` array); see :func:`format_bvh`."""
    precision = _check_precision(precision)
    skeleton = clip.motion.skeleton
    _check_writable_names(skeleton.names)
    layout = _channel_layout(clip.channels, skeleton.names, _depth_first_order(skeleton.parents))
    values = _channel_values(clip, layout)
    _check_ranges(clip, values, layout, precision)
    frame_time = 0.0 if clip.frame_time is None else float(clip.frame_time)
    lines = _format_hierarchy(skeleton, clip.channels, precision)
    lines += ["MOTION", f"Frames: {len(values)}", f"Frame Time: {frame_time!r}", ""]
    return "\n".join(lines).encode("utf-8"), format_rows_buffer(values, precision)
