"""BVH channel names and the channel layout of a clip (private to :mod:`ikrig.io.bvh`).

A ``CHANNELS`` name (``Xposition`` ... ``Zrotation``, any case) is a kind (position or
rotation) and an axis; :func:`_check_channels` and :func:`_checked_source_values` validate a
:class:`~ikrig.io.bvh.BvhClip`'s ``channels`` and ``source_values``; and :func:`_channel_layout`
maps the columns of a frame row to joints, axes and kinds, the table that both the reader
(channel values to rotations and positions) and the writer (rotations and positions to
channel values) work from.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np

from ...errors import InputError
from ...skeleton import Skeleton


class _Channel(NamedTuple):
    kind: str  # "position" or "rotation"
    axis: int  # 0 = X, 1 = Y, 2 = Z


_CHANNELS = {
    f"{axis_name}{kind}": _Channel(kind, axis)
    for kind in ("position", "rotation")
    for axis, axis_name in enumerate("xyz")
}
_CHANNEL_NAMES = "Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation"


def _channel(name: str) -> _Channel | None:
    """The kind and axis of a channel name (case-insensitive), or None if unknown."""
    return _CHANNELS.get(name.lower())


def _rotation_problem(axes: tuple[int, ...]) -> str | None:
    """Why rotation channels about ``axes`` (in order) cannot be written as Euler angles, or
    None: at most three, and neighbours about different axes. The reader refuses what the
    writer could not write back."""
    if len(axes) <= 3 and all(a != b for a, b in zip(axes, axes[1:])):
        return None
    listed = " ".join("XYZ"[a] + "rotation" for a in axes[:6]) + (" ..." if len(axes) > 6 else "")
    return (
        f"rotation channels '{listed}' cannot be written as Euler angles (at most 3,"
        " neighbours about different axes)"
    )


def _check_channels(channels: tuple[tuple[str, ...], ...], skeleton: Skeleton) -> None:
    """Raise InputError unless there is one tuple of known channel names per joint."""
    if len(channels) != skeleton.num_joints:
        raise InputError(
            f"channels: expected one entry per joint ({skeleton.num_joints}), got {len(channels)}"
        )
    known = {layout for layout in set(channels) if None not in map(_channel, layout)}
    for name, joint_channels in zip(skeleton.names, channels):
        if joint_channels in known:  # the same few layouts repeat over the joints
            continue
        for channel in joint_channels:
            if _channel(channel) is None:
                raise InputError(
                    f"channels: joint {name!r} has unknown channel {channel!r};"
                    f" expected {_CHANNEL_NAMES}"
                )


def _checked_source_values(values, channels) -> np.ndarray:
    """``values`` as a read-only finite ``(F, C)`` float64 array, else InputError."""
    num_channels = sum(len(c) for c in channels)
    source = np.array(values, dtype=np.float64)
    if source.ndim != 2 or source.shape[1] != num_channels:
        raise InputError(
            f"source_values: expected shape (F, {num_channels}) (one column per channel),"
            f" got {source.shape}"
        )
    if not np.isfinite(source).all():
        raise InputError("source_values: contains NaN or infinite values")
    source.flags.writeable = False
    return source


# --------------------------------------------------------------------------------------------
# Channel layout: which column of a frame row feeds which joint, axis and kind
# --------------------------------------------------------------------------------------------


class _RotationSlot(NamedTuple):
    """The k-th rotation channel of every joint that has at least k + 1 of them."""

    joints: np.ndarray  # (n,) joint index
    axes: np.ndarray  # (n,) rotation axis, 0..2
    columns: np.ndarray  # (n,) column of the frame rows


class _Layout(NamedTuple):
    num_channels: int
    position_joints: np.ndarray  # (P,)
    position_axes: np.ndarray  # (P,)
    position_columns: np.ndarray  # (P,)
    rotation_slots: tuple[_RotationSlot, ...]
    rotation_axes: tuple[tuple[int, ...], ...]  # per joint, its rotation axes in order
    column_labels: tuple[str, ...]  # "joint channel" per column, for messages


def _channel_layout(channels, names, file_order=None) -> _Layout:
    """Map the columns of a frame row to joints, axes and kinds.

    Args:
        channels: per joint, its channel names (all known).
        names: joint names, for messages.
        file_order: the joint indices in the order they appear in the file (depth first);
            default ``range(J)``.
    """
    order = range(len(channels)) if file_order is None else file_order
    positions: list[tuple[int, int, int]] = []
    rotations: list[tuple[int, int, int, int]] = []
    labels: list[str] = []
    rotation_axes: list[tuple[int, ...]] = [()] * len(channels)
    # channel tuple -> its (kind, axis) per channel (all known): a few layouts repeat
    decoded: dict[tuple[str, ...], tuple[_Channel, ...]] = {}
    for j in order:
        joint_channels = channels[j]
        kinds = decoded.get(joint_channels)
        if kinds is None:
            kinds = decoded[joint_channels] = cast(
                "tuple[_Channel, ...]", tuple(map(_channel, joint_channels))
            )
        axes: list[int] = []
        start = len(labels)
        for k, (kind, axis) in enumerate(kinds):
            if kind == "position":
                positions.append((j, axis, start + k))
            else:
                rotations.append((len(axes), j, axis, start + k))
                axes.append(axis)
        labels += [f"{names[j]} {name}" for name in joint_channels]
        rotation_axes[j] = tuple(axes)
    slots = tuple(
        _RotationSlot(*_int_columns([r[1:] for r in rotations if r[0] == k], 3))
        for k in range(max((r[0] + 1 for r in rotations), default=0))
    )
    pos_joints, pos_axes, pos_columns = _int_columns(positions, 3)
    return _Layout(
        len(labels),
        pos_joints,
        pos_axes,
        pos_columns,
        slots,
        tuple(rotation_axes),
        tuple(labels),
    )


def _int_columns(rows, width: int) -> list[np.ndarray]:
    """The columns of a list of integer tuples, as int64 arrays (empty ones for no rows)."""
    table = np.array(rows, dtype=np.int64).reshape(-1, width)
    return [table[:, i] for i in range(width)]
