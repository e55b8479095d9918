"""The constraint base class and :func:`pack_constraints`, which turns constraint objects into
the ``(kinds, params)`` arrays the solver kernels read (see :mod:`ikrig.kernels.constraints`
for the kernel contract).

Every constraint limits the *local rotation* of one solved joint of a chain: its rotation
relative to its parent joint's frame (for the chain root: relative to the root's parent,
the identity for a skeleton root). Constraint geometry is given in that parent frame, in
radians. Each constraint needs two vectors that come from the skeleton, not from the
constraint itself:

* ``bone_local (3,)``: the bone's direction in the joint's own frame (the offset of the next
  chain joint, the skeleton's ``offsets[chain.joints[i + 1]]``);
* ``parent_bone_local (3,)`` or ``None``: the parent bone's direction in the parent frame
  (``offsets[chain.joints[i]]``); ``None`` for the chain root, where the bone's own rest
  direction ``bone_local`` stands in for it.

Chains given as world positions (no skeleton: ``fabrik``, ``follow``, ``ccd``, ``dls``,
``ccd_2d``) have no other rest pose than their input: every joint's local rotation is the
identity there and every joint frame is ``parent_rotation_world`` (identity by default), so
``bone_local`` is ``parent_rotation_world^-1 (p[i + 1] - p[i])`` of each problem's input and
every limit is relative to that input pose (see ``docs/solvers.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._checks import angle_pair, as_float
from .._jit.setup import notify_compiling
from ..errors import InputError
from ..kernels import constraints as K


def _set_angle_range(c) -> None:
    """Check ``c.min_angle <= c.max_angle`` (radians) and store them as floats."""
    lo, hi = angle_pair(c.min_angle, c.max_angle, ("min_angle", "max_angle"))
    object.__setattr__(c, "min_angle", lo)
    object.__setattr__(c, "max_angle", hi)


def _bone_dir(bone_local) -> np.ndarray:
    """Unit bone directions ``(..., 3)``; ``(1, 0, 0)`` for a zero-length bone."""
    b = np.asarray(bone_local, dtype=np.float64)
    if b.ndim == 0 or b.shape[-1] != 3:
        b = b.reshape(3)
    n = np.linalg.norm(b, axis=-1, keepdims=True)
    ok = n > 1e-300
    return np.where(ok, b / np.where(ok, n, 1.0), np.array([1.0, 0.0, 0.0]))


def _row(shape, lo=0.0, hi=0.0, axis=None, bone=None) -> np.ndarray:
    """A ``shape + (N_PARAMS,)`` kernel row: ``[lo, hi, axis(3), bone(3)]`` broadcast."""
    row = np.zeros(tuple(shape) + (K.N_PARAMS,))
    row[..., K.P_LO] = lo
    row[..., K.P_HI] = hi
    if axis is not None:
        row[..., K.P_AXIS : K.P_AXIS + 3] = axis
    if bone is not None:
        row[..., K.P_BONE : K.P_BONE + 3] = bone
    return row


def _angle_range(lo: float, hi: float) -> tuple[float, float]:
    """Kernel ``(lo, hi)`` of an angle range: ``+-HINGE_FREE`` when it spans 2 pi or more."""
    if hi - lo >= 2 * np.pi:
        return -K.HINGE_FREE, K.HINGE_FREE
    return lo, hi


class Constraint:
    """Base class of the joint constraints (:class:`AngleLimit2D`, :class:`Cone`,
    :class:`Hinge`, :class:`TwistLimit`).

    A subclass sets ``kind`` (a ``KIND_*`` code of :mod:`ikrig.kernels.constraints`) and
    implements :meth:`params`; :meth:`project` and :meth:`violation` are shared and run the
    same kernel code as the solvers.
    """

    kind: int = K.KIND_FREE

    def params(
        self, bone_local: ArrayLike, parent_bone_local: ArrayLike | None = None
    ) -> np.ndarray:
        """The ``(N_PARAMS,)`` float64 kernel row for this joint (see the kernel contract).

        ``bone_local`` (and ``parent_bone_local``) may also be ``(..., 3)`` batches (one rest
        pose per problem): the result is then ``(..., N_PARAMS)``.
        """
        b = _bone_dir(bone_local)
        return _row(b.shape[:-1], bone=b)

    def project(
        self,
        rotation_local: ArrayLike,
        bone_local: ArrayLike,
        parent_bone_local: ArrayLike | None = None,
    ) -> np.ndarray:
        """The nearest allowed local rotation.

        Args:
            rotation_local: ``(..., 4)`` xyzw, the joint's rotation relative to its parent.
            bone_local: ``(3,)`` the bone's direction in the joint's own frame (or ``(..., 3)``,
                one per rotation).
            parent_bone_local: ``(3,)`` (or ``(..., 3)``) the parent bone's direction in the
                parent frame, or ``None`` for a chain root (the rest direction ``bone_local``
                is used).

        Returns:
            ``(..., 4)`` xyzw unit quaternions (dtype kept; batch shapes broadcast). Allowed
            rotations come back unchanged; projecting twice gives the same result.

        Raises:
            InputError: wrong shape or non-finite values.
        """
        q = as_float(rotation_local, "rotation_local", last=4)
        row = self.params(bone_local, parent_bone_local)
        batch = np.broadcast_shapes(q.shape[:-1], row.shape[:-1])
        flat = np.ascontiguousarray(np.broadcast_to(q, batch + (4,)).reshape(-1, 4), np.float64)
        kinds = np.full(flat.shape[0], self.kind, dtype=np.int64)
        params = np.broadcast_to(row, batch + (K.N_PARAMS,)).reshape(-1, K.N_PARAMS)
        out = np.empty_like(flat)
        notify_compiling()
        K.project_local_batch(kinds, np.ascontiguousarray(params), flat, out)
        return out.reshape(batch + (4,)).astype(q.dtype, copy=False)

    def violation(
        self,
        rotation_local: ArrayLike,
        bone_local: ArrayLike,
        parent_bone_local: ArrayLike | None = None,
    ) -> np.ndarray:
        """Angle in radians ``(...)`` between each rotation and its projection (0 if allowed)."""
        q = as_float(rotation_local, "rotation_local", last=4).astype(np.float64)
        q = q / np.linalg.norm(q, axis=-1, keepdims=True)
        p = self.project(q, bone_local, parent_bone_local)
        chord = np.minimum(np.linalg.norm(q - p, axis=-1), np.linalg.norm(q + p, axis=-1))
        return 4 * np.arcsin(np.clip(0.5 * chord, 0.0, 1.0))


def pack_constraints(
    constraints: Sequence[Constraint | None], bone_local: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Pack a chain's constraints for the kernels.

    Args:
        constraints: ``n`` entries, one per solved joint (root first), a :class:`Constraint`
            or ``None`` (free).
        bone_local: ``(n, 3)``: row ``i`` is joint ``i``'s bone (the offset of joint
            ``i + 1``) in joint ``i``'s own frame. Row ``i - 1`` is also the parent bone's
            direction for joint ``i`` (used by :class:`Cone`'s default axis and
            :class:`AngleLimit2D`). A batch of rest poses ``(..., n, 3)`` packs each.

    Returns:
        ``kinds (n,) int64`` and ``params (..., n, N_PARAMS) float64`` (read-only arrays).

    Raises:
        InputError: an entry is not a constraint, or ``bone_local`` has the wrong shape.
    """
    cons = list(constraints)
    n = len(cons)
    bones = as_float(bone_local, "bone_local", last=3).astype(np.float64, copy=False)
    if bones.ndim < 2 or bones.shape[-2:] != (n, 3):
        raise InputError(f"bone_local: expected shape (..., {n}, 3), got {bones.shape}")
    kinds = np.zeros(n, dtype=np.int64)
    params = np.zeros(bones.shape[:-1] + (K.N_PARAMS,))
    for i, c in enumerate(cons):
        if c is None:
            c = _FREE
        elif not isinstance(c, Constraint):
            raise InputError(
                f"constraints[{i}]: expected a constraint from ikrig.constraints or None, got"
                f" {type(c).__name__}"
            )
        kinds[i] = c.kind
        params[..., i, :] = c.params(bones[..., i, :], bones[..., i - 1, :] if i > 0 else None)
    kinds.flags.writeable = False
    params.flags.writeable = False
    return kinds, params


_FREE = Constraint()
