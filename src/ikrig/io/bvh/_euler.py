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

from ..._jit.setup import njit, notify_compiling, prange
from ...errors import InputError
from ...math.euler import parse_order
from ._channels import _Layout, _rotation_problem
from ._header import _shown

if TYPE_CHECKING:
    pass

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


def _slot_columns(layout: _Layout, plan: _EulerPlan) -> np.ndarray:
    """``(G, 3)`` the column of each planned joint's k-th rotation channel, -1 for an axis
    appended to complete its order (not written)."""
    columns = np.full((len(plan.joints), 3), -1, dtype=np.int64)
    slot_of_joint = np.full(len(layout.rotation_axes), -1)
    slot_of_joint[plan.joints] = np.arange(len(plan.joints))
    for k, slot in enumerate(layout.rotation_slots):
        columns[slot_of_joint[slot.joints], k] = slot.columns
    return columns


_TINY = 1e-200  # ikrig.math.vec.tiny(float64): a shorter quaternion is the identity


@njit(cache=True)
def _euler_inputs(rotations, joints, axes, proper, sign, out):
    """``out[:, f, g]``: the four numbers ``(a, b, c, d)`` whose arctangents give planned
    joint ``g``'s Euler angles in frame ``f`` (:func:`ikrig.math.quat_to_euler` on
    :func:`ikrig.math.quat_normalize`, the same operations in the same order: the same
    floats). ``axes[g]``: the extrinsic sequence ``i, j, k`` (``k`` the remaining axis for
    a proper order), ``sign`` its parity."""
    for f in range(rotations.shape[0]):
        for g in range(joints.shape[0]):
            q = rotations[f, joints[g]]
            x, y, z, w = q[0], q[1], q[2], q[3]
            n = np.sqrt(x * x + y * y + z * z + w * w)
            if n > _TINY:
                x, y, z, w = x / n, y / n, z / n, w / n
            else:
                x, y, z, w = 0.0, 0.0, 0.0, 1.0
            v = (x, y, z)
            i, j, k, s = axes[g, 0], axes[g, 1], axes[g, 2], sign[g]
            if proper[g]:
                out[0, f, g], out[1, f, g], out[2, f, g], out[3, f, g] = w, v[i], v[j], v[k] * s
            else:
                out[0, f, g] = w - v[j]
                out[1, f, g] = v[i] + v[k] * s
                out[2, f, g] = v[j] + w
                out[3, f, g] = v[k] * s - v[i]


@njit(cache=True)
def _wrap_pi(x):
    """``x`` wrapped to ``(-pi, pi]`` as :func:`ikrig.math.quat_to_euler` wraps it."""
    x = (x + np.pi) % (2 * np.pi) - np.pi
    return x + 2 * np.pi if x <= -np.pi else x


@njit(cache=True, parallel=True)
def _euler_finish(angles, plan, source, columns, values):
    """From ``angles (3, F, G)`` (the middle angle, the half sum and the half difference of
    the outer ones), each planned joint's Euler triple written into its rotation columns of
    ``values (F, C)``, in degrees: the principal triple as :func:`ikrig.math.quat_to_euler`
    finishes it, then the equivalent triple nearest the reference. The reference is the
    file's values ``source (F, C)``, degrees (an empty array: none), else the previous
    written frame (zeros for frame 0); an appended axis (column -1) has reference 0.
    ``plan``: ``(proper, sign, intrinsic, parity, keep_first)`` per planned joint."""
    proper, sign, intrinsic, parity, keep_first = plan
    F, G = angles.shape[1], angles.shape[2]
    sequential = source.shape[0] == 0
    for g in prange(G):  # the joints apart, each on its own (frames in order)
        prev = (0.0, 0.0, 0.0)
        for f in range(F):
            t2, half_sum, half_diff = angles[0, f, g], angles[1, f, g], angles[2, f, g]
            at_zero, at_pi = abs(t2) <= 1e-7, abs(t2 - np.pi) <= 1e-7
            if at_zero:
                t1 = 2 * half_sum
            elif at_pi:
                t1 = -2 * half_diff
            else:
                t1 = half_sum - half_diff
            t3 = 0.0 if at_zero or at_pi else half_sum + half_diff
            if not proper[g]:
                t3 = t3 * sign[g]
                t2 = t2 - np.pi / 2
            t1, t2, t3 = _wrap_pi(t1), _wrap_pi(t2), _wrap_pi(t3)
            a, b, c = (t3, t2, t1) if intrinsic[g] else (t1, t2, t3)
            ref = prev
            if not sequential:
                ref = (_source_radians(source, f, columns[g, 0]),
                       _source_radians(source, f, columns[g, 1]),
                       _source_radians(source, f, columns[g, 2]))  # fmt: skip
            if proper[g]:
                alt_b, locked = -b, abs(np.sin(b)) < _GIMBAL_TOLERANCE
                s = 1.0 if np.cos(b) > 0 else -1.0
            else:
                alt_b, locked = np.pi - b, abs(np.cos(b)) < _GIMBAL_TOLERANCE
                s = float(parity[g]) if np.sin(b) > 0 else -float(parity[g])
            pair = _EulerPair(a, b, c, alt_b, s)
            if locked:
                prev = _closest_locked(pair, keep_first[g], ref)
            else:
                prev = _closest_regular(pair, ref)
            for k in range(3):
                if columns[g, k] >= 0:
                    values[f, columns[g, k]] = prev[k] * (180.0 / np.pi)


@njit(cache=True)
def _source_radians(source, f, column):
    """The file's value of ``column`` in frame ``f``, radians (0 for no column)."""
    return source[f, column] * (np.pi / 180.0) if column >= 0 else 0.0


def _extrinsic(order: str) -> tuple[tuple[int, int, int], bool, int, bool]:
    """``(i, j, k, proper, sign, intrinsic)`` of a SciPy order, as
    :func:`ikrig.math.quat_to_euler` derives them."""
    idx, intrinsic = parse_order(order)
    i, j, k = idx[::-1] if intrinsic else idx
    proper = i == k
    if proper:
        k = 3 - i - j
    return (i, j, k), proper, (i - j) * (j - k) * (k - i) // 2, intrinsic


def write_euler(clip, rotations, layout: _Layout, plan: _EulerPlan, values) -> None:
    """Write the planned joints' rotation channels into ``values (F, C)``, degrees, each
    the Euler triple closest to the reference (module notes).

    The angles are those of ``quat_to_euler(quat_normalize(q), order)`` bit for bit: two
    compiled loops around NumPy's own ``arctan2`` and ``hypot`` (the compiled ``atan2`` of
    the C library differs from NumPy's in the last bit for about one value in seven)."""
    parts = [_extrinsic(o) for o in plan.orders]
    axes = np.array([p[0] for p in parts], dtype=np.int64).reshape(-1, 3)
    proper = np.array([p[1] for p in parts], dtype=np.bool_)
    sign = np.array([p[2] for p in parts], dtype=np.float64)
    intrinsic = np.array([p[3] for p in parts], dtype=np.bool_)
    abcd = np.empty((4, len(rotations), len(plan.joints)))
    notify_compiling()
    _euler_inputs(np.ascontiguousarray(rotations), plan.joints, axes, proper, sign, abcd)
    a, b, c, d = abcd
    angles = np.empty((3, len(rotations), len(plan.joints)))  # written in place: no copies
    np.hypot(c, d, out=angles[1])
    np.hypot(a, b, out=angles[2])
    np.arctan2(angles[1], angles[2], out=angles[0])
    angles[0] *= 2  # the middle angle
    np.arctan2(b, a, out=angles[1])  # the half sum of the outer ones
    np.arctan2(d, c, out=angles[2])  # the half difference
    source = clip.source_values
    if source is None or source.shape != values.shape:
        source = np.zeros((0, 0))
    flags = (proper, sign, intrinsic, plan.parity.astype(np.int64), plan.keep_first)
    _euler_finish(angles, flags, np.ascontiguousarray(source, dtype=np.float64),
                  _slot_columns(layout, plan), values)  # fmt: skip
