"""Euler angles for writing BVH rotation channels (private to :mod:`ikrig.io.bvh`).

Each joint's rotation channels are written as Euler angles in their listed order (missing axes
appended and dropped). A rotation has two Euler triples, each angle also up to ``2 pi k``;
a compiled kernel picks, per frame and joint, the one closest to a reference: the clip's
``source_values`` when their shape matches, else the previous written frame. At gimbal lock,
where only the sum or difference of the outer angles is defined, the first angle keeps its
reference value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..._jit.setup import njit, notify_compiling
from ...errors import InputError
from ...math import quat_normalize, quat_to_euler
from ._channels import _Layout, _rotation_problem
from ._header import _shown

if TYPE_CHECKING:
    from .clip import BvhClip

_GIMBAL_TOLERANCE = 1e-6  # |cos(middle)| (Tait-Bryan) or |sin(middle)| (proper) below this
_TWO_PI = 2.0 * np.pi


class _EulerPlan(NamedTuple):
    """How to decompose the rotation of each joint that has rotation channels."""

    joints: np.ndarray  # (G,) joint index
    orders: tuple[str, ...]  # (G,) SciPy order, missing axes appended
    proper: np.ndarray  # (G,) bool: first and third axes equal
    parity: np.ndarray  # (G,) +1 for XYZ/YZX/ZXY, -1 for XZY/ZYX/YXZ (Tait-Bryan only)
    keep_first: np.ndarray  # (G,) at gimbal lock keep the first angle (else the third)


class _EulerPair(NamedTuple):
    """The two Euler triples of one rotation, radians: ``(a, b, c)`` and ``(a + pi, alt_b,
    c + pi)``; at gimbal lock only ``a + s c`` is defined (``s`` is +1 or -1)."""

    a: float
    b: float
    c: float
    alt_b: float
    s: float


def _euler_order(axes: tuple[int, ...], joint: str) -> str:
    """The 3-axis order used to write rotation channels about ``axes`` (1 to 3 of them).

    Raises:
        InputError: more than three rotation channels, or two neighbours about one axis.
    """
    problem = _rotation_problem(axes) if axes else "no rotation channels"
    if problem:
        raise InputError(f"joint {_shown(joint)}: {problem}")
    missing = tuple(a for a in range(3) if a not in axes)
    return "".join("XYZ"[a] for a in (axes + missing)[:3])


def _euler_plan(layout: _Layout, names) -> _EulerPlan:
    """The decomposition plan of every joint with rotation channels (InputError if none fits)."""
    joints = [j for j, axes in enumerate(layout.rotation_axes) if axes]
    known: dict[tuple[int, ...], str] = {}  # axes -> order: a few layouts repeat
    for j in joints:
        axes = layout.rotation_axes[j]
        if axes not in known:
            known[axes] = _euler_order(axes, names[j])
    orders = tuple(known[layout.rotation_axes[j]] for j in joints)
    proper = np.array([o[0] == o[2] for o in orders], dtype=bool)
    parity = np.array([1 if o in ("XYZ", "YZX", "ZXY") else -1 for o in orders])
    keep_first = np.array([len(layout.rotation_axes[j]) == 3 for j in joints], dtype=bool)
    return _EulerPlan(np.array(joints, dtype=np.int64), orders, proper, parity, keep_first)


def _principal_euler(rotations: np.ndarray, plan: _EulerPlan) -> np.ndarray:
    """``(F, G, 3)`` radians: one Euler triple per planned joint, from ``quat_to_euler``."""
    out = np.empty((len(rotations), len(plan.joints), 3))
    for order in sorted(set(plan.orders)):
        group = [g for g, o in enumerate(plan.orders) if o == order]
        q = quat_normalize(rotations[:, plan.joints[group]])
        out[:, group] = quat_to_euler(q, order)
    return out


@njit(cache=True)
def _wrap_near(x, reference):
    """``x + 2 pi k`` closest to ``reference``."""
    return x + _TWO_PI * np.floor((reference - x) / _TWO_PI + 0.5)


@njit(cache=True)
def _closest_regular(pair, ref):
    """The Euler triple closest to ``ref = (ra, rb, rc)`` among the two of ``pair``
    (:class:`_EulerPair`) and their ``2 pi k`` shifts (away from gimbal lock)."""
    a, b, c, alt_b = pair.a, pair.b, pair.c, pair.alt_b
    ra, rb, rc = ref[0], ref[1], ref[2]
    a1, b1, c1 = _wrap_near(a, ra), _wrap_near(b, rb), _wrap_near(c, rc)
    a2, b2, c2 = _wrap_near(a + np.pi, ra), _wrap_near(alt_b, rb), _wrap_near(c + np.pi, rc)
    d1 = (a1 - ra) ** 2 + (b1 - rb) ** 2 + (c1 - rc) ** 2
    d2 = (a2 - ra) ** 2 + (b2 - rb) ** 2 + (c2 - rc) ** 2
    if d2 < d1:
        return a2, b2, c2
    return a1, b1, c1


@njit(cache=True)
def _closest_locked(pair, keep_first, ref):
    """At gimbal lock only ``a + s c`` of ``pair`` (:class:`_EulerPair`) is defined: keep
    the first angle of ``ref = (ra, rb, rc)`` (or its third when ``keep_first`` is False)
    and solve for the other."""
    a, b, c, alt_b, s = pair.a, pair.b, pair.c, pair.alt_b, pair.s
    ra, rb, rc = ref[0], ref[1], ref[2]
    b_out = _wrap_near(b, rb)
    b_alt = _wrap_near(alt_b, rb)
    if abs(b_alt - rb) < abs(b_out - rb):
        b_out = b_alt
    locked = a + s * c
    if keep_first:
        return ra, b_out, _wrap_near(s * (locked - ra), rc)
    return _wrap_near(locked - s * rc, ra), b_out, rc


@njit(cache=True)
def _closest_euler_kernel(principal, reference, sequential, proper, parity, keep_first, out):
    """Pick, per frame and joint, the Euler triple equivalent to ``principal`` closest to a
    reference: ``reference[f]`` or, if ``sequential``, the previous output frame (frame 0
    uses ``reference[0]``). All arrays in radians; ``principal, out: (F, G, 3)``."""
    for f in range(principal.shape[0]):
        for g in range(principal.shape[1]):
            ref = out[f - 1, g] if sequential and f > 0 else reference[0 if sequential else f, g]
            a, b, c = principal[f, g, 0], principal[f, g, 1], principal[f, g, 2]
            if proper[g]:
                alt_b, locked = -b, abs(np.sin(b)) < _GIMBAL_TOLERANCE
                s = 1.0 if np.cos(b) > 0 else -1.0
            else:
                alt_b, locked = np.pi - b, abs(np.cos(b)) < _GIMBAL_TOLERANCE
                s = float(parity[g]) if np.sin(b) > 0 else -float(parity[g])
            pair = _EulerPair(a, b, c, alt_b, s)
            if locked:
                triple = _closest_locked(pair, keep_first[g], ref)
            else:
                triple = _closest_regular(pair, ref)
            out[f, g, 0], out[f, g, 1], out[f, g, 2] = triple


def _euler_reference(clip: BvhClip, layout: _Layout, plan: _EulerPlan, num_frames: int):
    """``(reference (F or 1, G, 3) radians, sequential)`` for :func:`_closest_euler_kernel`.

    The file's values when their shape matches the clip; else zeros for frame 0 and the
    previous written frame after it. Appended (unwritten) axes have reference 0.
    """
    source = clip.source_values
    if source is None or source.shape != (num_frames, layout.num_channels):
        return np.zeros((1, len(plan.joints), 3)), True
    reference = np.zeros((num_frames, len(plan.joints), 3))
    slot_of_joint = np.full(len(layout.rotation_axes), -1)
    slot_of_joint[plan.joints] = np.arange(len(plan.joints))
    for k, slot in enumerate(layout.rotation_slots):
        reference[:, slot_of_joint[slot.joints], k] = np.radians(source[:, slot.columns])
    return reference, False


def _euler_degrees(clip, rotations, layout: _Layout, plan: _EulerPlan) -> np.ndarray:
    """``(F, G, 3)`` Euler angles in degrees for the planned joints, closest to the reference."""
    principal = _principal_euler(rotations, plan)
    reference, sequential = _euler_reference(clip, layout, plan, len(rotations))
    out = np.empty_like(principal)
    notify_compiling()
    _closest_euler_kernel(
        principal, reference, sequential, plan.proper, plan.parity, plan.keep_first, out
    )
    return np.degrees(out)
