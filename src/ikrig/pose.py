"""Poses and clips as arrays, forward kinematics and its inverse.

Free functions work on plain arrays (``fk`` loops over joints and vectorises over every
batch axis); :class:`Motion` bundles the arrays with their :class:`~ikrig.skeleton.Skeleton`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ._checks import as_float, float_dtype
from ._jit.lazy import prefer_numpy, spending
from .errors import InputError
from .math.quat import quat_conj, quat_identity, quat_mul, quat_rotate
from .skeleton import Skeleton


def fk(
    parents: Sequence[int] | np.ndarray, rotations_local: ArrayLike, positions_local: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Forward kinematics: local joint transforms to world (model) space.

    Args:
        parents: ``(J,)`` int, parent index per joint, ``-1`` for roots, ``parents[j] < j``.
        rotations_local: ``(..., J, 4)`` xyzw, each joint's rotation relative to its parent.
        positions_local: ``(..., J, 3)``, each joint's translation in its parent's space.

    Returns:
        ``rotations_world (..., J, 4)`` and ``positions_world (..., J, 3)`` (batch shapes
        broadcast). A root's world transform is its local transform.
    """
    rl, pl = rotations_local, positions_local
    if (
        type(rl) is np.ndarray
        and type(pl) is np.ndarray
        and rl.ndim == 3
        and rl.dtype == pl.dtype == np.float64
        and rl.shape[:2] == pl.shape[:2]
        and rl.flags.c_contiguous
        and pl.flags.c_contiguous
        and len(parents) == rl.shape[1]
    ):  # the common case, a clip's own float64 arrays: no conversion, no copies
        rot_w, pos_w = np.empty_like(rl), np.empty_like(pl)
        _fk_flat(_parent_indices(parents), rl, pl, rot_w, pos_w)
        return rot_w, pos_w
    dt = float_dtype(rotations_local, positions_local)
    rl = np.asarray(rotations_local, dtype=dt)
    pl = np.asarray(positions_local, dtype=dt)
    batch = np.broadcast_shapes(rl.shape[:-2], pl.shape[:-2])
    J = rl.shape[-2]
    rl = np.ascontiguousarray(np.broadcast_to(rl, batch + rl.shape[-2:])).reshape(-1, J, 4)
    pl = np.ascontiguousarray(np.broadcast_to(pl, batch + pl.shape[-2:])).reshape(-1, J, 3)
    rot_w = np.empty_like(rl)
    pos_w = np.empty_like(pl)
    par = _parent_indices(parents)
    if len(par) != J:
        raise InputError(f"parents: {len(par)} entries for {J} joints")
    _fk_flat(par, rl, pl, rot_w, pos_w)
    return rot_w.reshape(batch + (J, 4)), pos_w.reshape(batch + (J, 3))


FK_NUMPY_BELOW = 4_000_000
"""Poses times joints from which :func:`fk` always runs compiled: below, before anything
has imported Numba, its NumPy twin runs (:mod:`ikrig._jit.lazy`; 3 ms for 1247 frames of
31 joints, where starting Numba takes 0.35 s)."""


def _fk_flat(
    parents: np.ndarray, rl: np.ndarray, pl: np.ndarray, rw: np.ndarray, pw: np.ndarray
) -> None:
    """FK over flat poses ``rl (N, J, 4)``, ``pl (N, J, 3)`` into ``rw``, ``pw``: the
    compiled kernel, or its NumPy twin while that is cheaper (the same floats)."""
    if prefer_numpy(rl.shape[0] * rl.shape[1], FK_NUMPY_BELOW):
        with spending():
            _fk_numpy(parents, rl, pl, rw, pw)
        return
    from .kernels.pose import fk_kernel  # imports Numba: only when the kernel runs

    fk_kernel(parents, rl, pl, rw, pw)


def _fk_numpy(
    parents: np.ndarray, rl: np.ndarray, pl: np.ndarray, rw: np.ndarray, pw: np.ndarray
) -> None:
    """:func:`ikrig.kernels.pose.fk_kernel` in NumPy, joint by joint over all poses at once:
    the same products and sums in the same order, so the same floats (neither fuses a
    multiply-add)."""
    two = rl.dtype.type(2.0)
    for j, p in enumerate(parents.tolist()):
        if p < 0:
            rw[:, j] = rl[:, j]
            pw[:, j] = pl[:, j]
            continue
        ax, ay, az, aw = (rw[:, p, c] for c in range(4))
        bx, by, bz, bw = (rl[:, j, c] for c in range(4))
        rw[:, j, 0] = aw * bx + ax * bw + ay * bz - az * by
        rw[:, j, 1] = aw * by - ax * bz + ay * bw + az * bx
        rw[:, j, 2] = aw * bz + ax * by - ay * bx + az * bw
        rw[:, j, 3] = aw * bw - ax * bx - ay * by - az * bz
        vx, vy, vz = (pl[:, j, c] for c in range(3))
        tx = two * (ay * vz - az * vy)
        ty = two * (az * vx - ax * vz)
        tz = two * (ax * vy - ay * vx)
        pw[:, j, 0] = pw[:, p, 0] + vx + aw * tx + (ay * tz - az * ty)
        pw[:, j, 1] = pw[:, p, 1] + vy + aw * ty + (az * tx - ax * tz)
        pw[:, j, 2] = pw[:, p, 2] + vz + aw * tz + (ax * ty - ay * tx)


def _parent_indices(parents: Sequence[int] | np.ndarray) -> np.ndarray:
    """``parents`` as a read-only int64 array, as a skeleton holds them: read-only and
    writeable arrays are two types to Numba, and each would compile the FK kernel again
    (0.5 s on a first run: the built-in walk passed both)."""
    par = np.asarray(parents, dtype=np.int64)
    if par.flags.writeable:
        par = par.view()
        par.flags.writeable = False
    return par


def to_local(
    parents: Sequence[int] | np.ndarray, rotations_world: ArrayLike, positions_world: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`fk`: world joint transforms to local ones.

    Args:
        parents: ``(J,)`` int, as for :func:`fk`.
        rotations_world: ``(..., J, 4)`` xyzw unit quaternions.
        positions_world: ``(..., J, 3)``.

    Returns:
        ``rotations_local (..., J, 4)`` and ``positions_local (..., J, 3)``.
    """
    dt = float_dtype(rotations_world, positions_world)
    rw = np.asarray(rotations_world, dtype=dt)
    pw = np.asarray(positions_world, dtype=dt)
    parents = np.asarray(parents)
    rl, pl = rw.copy(), pw.copy()
    child = np.flatnonzero(parents >= 0)
    par = parents[child]
    inv_parent = quat_conj(rw[..., par, :])
    rl[..., child, :] = quat_mul(inv_parent, rw[..., child, :])
    pl[..., child, :] = quat_rotate(inv_parent, pw[..., child, :] - pw[..., par, :])
    return rl, pl


def end_site_positions(
    skeleton: Skeleton, rotations_world: np.ndarray, positions_world: np.ndarray
) -> np.ndarray:
    """World positions ``(..., E, 3)`` of the skeleton's end sites, given FK results."""
    p = skeleton.end_site_parents
    off = skeleton.end_site_offsets.astype(np.asarray(positions_world).dtype, copy=False)
    return positions_world[..., p, :] + quat_rotate(rotations_world[..., p, :], off)


def bone_length_change(
    parents: Sequence[int] | np.ndarray, positions_world_a: ArrayLike, positions_world_b: ArrayLike
) -> np.ndarray:
    """Each joint's largest change of its distance to its parent between two sets of poses.

    Args:
        parents: ``(J,)`` int, as for :func:`fk`.
        positions_world_a, positions_world_b: ``(..., J, 3)`` world joint positions of the
            same batch shape (a clip and its edit, say), compared pose by pose.

    Returns:
        ``(J,)`` float64: ``max |len_a - len_b|`` over the poses; 0 for roots and for an
        empty batch.

    Raises:
        InputError: shapes that differ or are not ``(..., J, 3)``; NaN or infinite values.
    """
    par = np.asarray(parents, dtype=np.int64)
    a, b = (np.asarray(x, dtype=np.float64) for x in (positions_world_a, positions_world_b))
    if a.shape != b.shape or a.ndim < 2 or a.shape[-2:] != (len(par), 3):
        raise InputError(
            f"positions_world_a {a.shape} and positions_world_b {b.shape}:"
            f" expected one shape (..., {len(par)}, 3)"
        )
    change = np.zeros(len(par))
    child = np.flatnonzero(par >= 0)
    if a.size == 0 or not len(child):
        return change
    a, b = (np.ascontiguousarray(x.reshape(-1, len(par), 3)) for x in (a, b))
    moved = np.empty(len(child))
    from .kernels.pose import bone_change_kernel  # imports Numba: only when it runs

    if not bone_change_kernel(a, b, child, par[child], moved):
        raise InputError("positions_world_a, positions_world_b: NaN or infinite values")
    change[child] = moved
    return change


def _check_frame_time(frame_time) -> None:
    """Raise InputError unless ``frame_time`` is a finite number of seconds > 0 whose frame
    rate ``1 / frame_time`` is finite too (5e-324 s would give an infinite rate)."""
    try:
        seconds = float(frame_time)
    except (TypeError, ValueError):
        raise InputError(
            f"frame_time: expected seconds (a number) or None, got {type(frame_time).__name__}"
        ) from None
    if not (0 < seconds < np.inf and 1.0 / seconds < np.inf):
        raise InputError(
            f"frame_time: must be finite and > 0 with a finite frame rate 1/frame_time,"
            f" got {seconds!r}"
        )


UNIT_TOLERANCE = 1e-5
"""How far a rotation's squared length may be from 1 for :class:`Motion` to keep it as
given (float32 rounding over a few products stays within this); beyond, it is scaled to
unit length."""


@dataclass(frozen=True, eq=False)
class Motion:
    """Local joint transforms of a skeleton over any batch shape: a pose, a clip or a crowd.

    Attributes:
        skeleton: the :class:`Skeleton`.
        rotations_local: ``(..., J, 4)`` xyzw, relative to each joint's parent.
        positions_local: ``(..., J, 3)``, each joint's translation in its parent's space, in the
            skeleton's units. For joints that are not animated this is the rest offset.
        frame_time: seconds per frame for clips (batch axis 0 is time), else ``None``.

    The batch shapes of the two arrays must be equal; float32 stays float32. Rotations are
    unit quaternions: one whose length is off 1 by more than :data:`UNIT_TOLERANCE` (in the
    squared length) is scaled to unit length, the same rotation, as SciPy's
    ``Rotation.from_quat`` does; the others are kept as given, bit for bit.

    Raises:
        InputError: wrong joint count or trailing size, a NaN/infinite value or a zero
            quaternion (the message names the frame and joint), or a ``frame_time`` that is
            not a finite number of seconds > 0 with a finite ``1 / frame_time``.

    Example:
        >>> from ikrig.skeleton import Skeleton
        >>> sk = Skeleton(("a", "b"), [-1, 0], [[0, 0, 0], [1, 0, 0]])
        >>> Motion.rest(sk, batch_shape=(10,)).fk()[1].shape
        (10, 2, 3)
    """

    skeleton: Skeleton
    rotations_local: np.ndarray
    positions_local: np.ndarray
    frame_time: float | None = None

    def __post_init__(self):
        J = self.skeleton.num_joints
        rl = as_float(self.rotations_local, "rotations_local", last=4, finite=False)
        pl = as_float(self.positions_local, "positions_local", last=3, finite=False)
        dt = float_dtype(rl, pl)
        rl, pl = rl.astype(dt, copy=False), pl.astype(dt, copy=False)
        if rl.ndim < 2 or rl.shape[-2] != J:
            raise InputError(f"rotations_local: expected shape (..., {J}, 4), got {rl.shape}")
        if pl.ndim < 2 or pl.shape[-2] != J:
            raise InputError(f"positions_local: expected shape (..., {J}, 3), got {pl.shape}")
        if rl.shape[:-2] != pl.shape[:-2]:
            raise InputError(
                f"rotations_local {rl.shape} and positions_local {pl.shape} batch shapes differ"
            )
        # one pass over the rotations: a NaN or infinite value fails the length test too
        unit = np.abs(np.einsum("...i,...i->...", rl, rl) - 1.0) <= UNIT_TOLERANCE
        if not unit.all():
            rl = self._unit_rotations(rl, unit)
        if not np.isfinite(pl).all():
            self._refuse("positions_local", "NaN or infinite value", ~np.isfinite(pl).all(-1))
        if self.frame_time is not None:
            _check_frame_time(self.frame_time)
        object.__setattr__(self, "rotations_local", rl)
        object.__setattr__(self, "positions_local", pl)

    def _refuse(self, name: str, what: str, bad: np.ndarray) -> None:
        """Raise ``InputError`` naming the first frame and joint where ``bad (..., J)``."""
        where = np.argwhere(bad)[0]
        frame = ", ".join(map(str, where[:-1])) or "-"
        joint = self.skeleton.names[where[-1]]
        raise InputError(f"{name}: {what} at frame {frame}, joint {joint!r}")

    def _unit_rotations(self, rl: np.ndarray, unit: np.ndarray) -> np.ndarray:
        """``rl`` with the quaternions not ``unit (..., J)`` scaled to unit length;
        ``InputError`` at the first NaN, infinite or zero one."""
        bad = ~np.isfinite(rl).all(axis=-1)
        if bad.any():
            self._refuse("rotations_local", "NaN or infinite value", bad)
        big = np.max(np.abs(rl), axis=-1, keepdims=True)  # no overflow in the squares
        zero = big[..., 0] == 0.0
        if zero.any():
            self._refuse("rotations_local", "zero quaternion (no rotation)", zero)
        q = rl / big
        q = q / np.sqrt(np.einsum("...i,...i->...", q, q))[..., None]
        return np.where(unit[..., None], rl, q)

    @classmethod
    def rest(
        cls,
        skeleton: Skeleton,
        batch_shape: tuple[int, ...] = (),
        dtype: DTypeLike = np.float64,
        frame_time: float | None = None,
    ) -> Motion:
        """The rest pose (identity rotations, rest offsets) repeated over ``batch_shape``."""
        batch_shape = tuple(np.atleast_1d(batch_shape)) if np.ndim(batch_shape) else ()
        rot = quat_identity(batch_shape + (skeleton.num_joints,), dtype=dtype)
        pos = np.broadcast_to(skeleton.offsets.astype(dtype), rot.shape[:-1] + (3,)).copy()
        return cls(skeleton, rot, pos, frame_time)

    @classmethod
    def from_world(
        cls,
        skeleton: Skeleton,
        rotations_world: ArrayLike,
        positions_world: ArrayLike,
        frame_time: float | None = None,
    ) -> Motion:
        """A Motion from world rotations ``(..., J, 4)`` and world positions ``(..., J, 3)``."""
        rl, pl = to_local(skeleton.parents, rotations_world, positions_world)
        return cls(skeleton, rl, pl, frame_time)

    @property
    def num_joints(self) -> int:
        return self.skeleton.num_joints

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Leading shape: ``()`` for a pose, ``(F,)`` for a clip, ``(C, F)`` for a crowd."""
        return self.rotations_local.shape[:-2]

    @property
    def num_frames(self) -> int:
        """Length of batch axis 0 (frames of a clip); 1 for a single pose."""
        return self.batch_shape[0] if self.batch_shape else 1

    @property
    def dtype(self) -> np.dtype:
        return self.rotations_local.dtype

    def fk(
        self, known: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """World rotations ``(..., J, 4)`` and positions ``(..., J, 3)``; see :func:`fk`.

        ``known``: this motion's world transforms when a caller has computed them already
        (a pipeline sharing them between steps): returned as they are once their shapes
        are checked, not computed again."""
        if known is None:
            return fk(self.skeleton.parents, self.rotations_local, self.positions_local)
        rot, pos = known
        if rot.shape != self.rotations_local.shape or pos.shape != self.positions_local.shape:
            raise InputError(
                f"fk: world transforms {rot.shape} and {pos.shape} given for a motion of"
                f" {self.rotations_local.shape} and {self.positions_local.shape}"
            )
        return rot, pos

    def positions_world(self) -> np.ndarray:
        """World joint positions ``(..., J, 3)``."""
        return self.fk()[1]

    def __getitem__(self, index) -> Motion:
        """Index the batch axes (``clip[10]``, ``clip[::2]``), keeping the joint axes."""
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) > len(self.batch_shape):
            raise InputError(f"too many indices for batch shape {self.batch_shape}")
        rl = self.rotations_local[index]
        ft = self.frame_time if rl.ndim > 2 else None
        return Motion._trusted(self.skeleton, rl, self.positions_local[index], ft)

    @classmethod
    def _trusted(cls, skeleton, rotations_local, positions_local, frame_time=None) -> Motion:
        """Build without validation, for arrays ikrig derived from a validated Motion
        (slices, results of its own solvers). Internal: user input goes through ``__init__``."""
        m = object.__new__(cls)
        object.__setattr__(m, "skeleton", skeleton)
        object.__setattr__(m, "rotations_local", rotations_local)
        object.__setattr__(m, "positions_local", positions_local)
        object.__setattr__(m, "frame_time", frame_time)
        return m

    def replace(self, **changes) -> Motion:
        """A copy with some fields replaced (``rotations_local=...``, ``frame_time=...``)."""
        return replace(self, **changes)
