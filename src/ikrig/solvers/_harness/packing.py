"""Constraint packing of the chain solvers (private): the ``(kinds, params)`` arrays the
kernels read, for both levels (:func:`pack_position_constraints`,
:func:`pack_pose_constraints`), cached for repeated calls on the same chain.

Position-level chains have no rest pose but their input: every joint's frame there is the
world frame turned by ``parent_rotation_world`` (identity by default), so joint ``i``'s bone
in its own frame is ``parent_rotation_world^-1 (p[i + 1] - p[i])``, and constraints are
packed from those bones (see ``docs/solvers.md``).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..._checks import check_finite
from ...constraints import N_PARAMS, pack_constraints
from ...errors import InputError
from ...math.quat import quat_conj, quat_rotate
from ...pose import Motion
from ..chain import Chain
from .problem import PositionsProblem
from .rescale import packable

_FREE: dict = {}
_PACKED: OrderedDict = OrderedDict()
_PACKED_MAX = 64


def free_constraints(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``kinds (n,)`` zeros and ``params (1, n, P)`` zeros (every joint free), cached."""
    got = _FREE.get(n)
    if got is None:
        got = _FREE[n] = (np.zeros(n, dtype=np.int64), np.zeros((1, n, N_PARAMS)))
        for a in got:
            a.flags.writeable = False
    return got


def _check_count(constraints, n: int):
    if constraints is None:
        return None
    cons = tuple(constraints)
    if len(cons) != n:
        raise InputError(
            f"constraints: expected {n} entries (one per solved joint, root first), got {len(cons)}"
        )
    if all(c is None for c in cons):
        return None
    return cons


def _pack_cached(cons: tuple, bones: np.ndarray):
    """``pack_constraints`` of one rest pose ``(n, 3)``, remembered for repeated calls."""
    try:
        key = (cons, bones.tobytes())
        got = _PACKED.get(key)
    except TypeError:  # an unhashable entry: pack_constraints reports what is wrong
        key, got = None, None
    if got is None:
        kinds, params = pack_constraints(cons, packable(bones))
        got = (kinds, params.reshape((1,) + params.shape))
        if key is not None:
            _PACKED[key] = got
            if len(_PACKED) > _PACKED_MAX:
                _PACKED.popitem(last=False)
    return got


def rest_bones(own_positions, parent_rotation_world) -> np.ndarray:
    """Each joint's bone in its own rest frame, ``parent^-1 (p[i + 1] - p[i])``: ``(..., n, 3)``
    over the broadcast of the positions' and the parent rotations' own batch shapes."""
    bones = np.diff(np.asarray(own_positions, dtype=np.float64), axis=-2)
    if parent_rotation_world is not None:
        q = np.asarray(parent_rotation_world, dtype=np.float64)
        q = q / np.linalg.norm(q, axis=-1, keepdims=True)
        bones = quat_rotate(quat_conj(q)[..., None, :], bones)
    return bones


def pack_position_constraints(constraints, prob: PositionsProblem, parent_rotation_world):
    """Packed constraints of position-level chains: ``None`` when every joint is free, else
    ``(kinds (n,), params (M, n, P))`` with ``M`` 1 (one rest pose for the whole batch) or
    ``N`` (one per problem). Constraints are relative to each problem's input pose."""
    n = prob.pos.shape[1] - 1
    cons = _check_count(constraints, n)
    if cons is None:
        return None
    try:
        return _pack_positions(cons, prob, parent_rotation_world, 1.0)
    except InputError:
        # Packing reads the positions before the kernels check them: name NaN here. Else
        # the bones overflowed (coordinates beyond 1e307): halve (directions are the same).
        check_finite(prob.own, "positions_world")
        return _pack_positions(cons, prob, parent_rotation_world, 0.5)


def _pack_positions(cons, prob: PositionsProblem, parent_rotation_world, scale):
    n = prob.pos.shape[1] - 1
    own = prob.own if scale == 1.0 else prob.own * scale
    bones = rest_bones(own, parent_rotation_world)
    if bones.shape[:-2] == ():
        return _pack_cached(cons, np.ascontiguousarray(bones))
    try:
        bones = np.broadcast_to(bones, prob.batch + (n, 3))
    except ValueError:
        raise InputError(
            f"parent_rotation_world: does not broadcast to the batch shape {prob.batch}"
        ) from None
    kinds, params = pack_constraints(cons, packable(bones.reshape(-1, n, 3)))
    return kinds, params


def pack_pose_constraints(motion: Motion, chain: Chain):
    """Packed constraints of a skeleton chain (frames of the skeleton's joints): ``None``
    when every joint is free, else ``(kinds (n,), params (1, n, P))``."""
    cons = _check_count(chain.constraints, chain.num_bones)
    if cons is None:
        return None
    bones = motion.skeleton.offsets[list(chain.joints[1:])].astype(np.float64)
    return _pack_cached(cons, np.ascontiguousarray(bones))


def packed_or_free(packed, n):
    """``packed``, or the all-free packing for ``None``."""
    return free_constraints(n) if packed is None else packed
