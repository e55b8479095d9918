"""Goal set-up of the damped-least-squares solver (:mod:`ikrig.solvers.dls`). Private.

:func:`goals` checks the effectors, targets and weights of a call; :func:`goal_arrays`
flattens the targets to the kernels' arrays; :func:`target_batch` is the targets' batch
shape.
"""

from __future__ import annotations

import numpy as np

from .._checks import as_points, batch_shape, raise_nonfinite
from ..errors import InputError
from ._harness.problem import flat, frozen

_WEIGHTS: dict = {}
_EFFECTOR_N: dict = {}
_IDENTITY_ROWS: dict = {}


def effector_n(n: int) -> np.ndarray:
    """``[n]`` as a cached int64 array: the default goal, the chain's last joint."""
    got = _EFFECTOR_N.get(n)
    if got is None:
        got = _EFFECTOR_N[n] = np.array([n], dtype=np.int64)
    return got


def goals(n, effectors, target_world, target_rotation_world, goal_weights):
    """Checked goal set-up (``goal_weights``: a checked ``GoalWeights``).

    Returns ``(effectors (G,) int64, multi, tpos (..., G, 3) or None, trot (..., G, 4) or
    None, wpos (G,), wrot (G,))``; ``multi`` says whether the goal axis is explicit.
    """
    eff: np.ndarray | list[int]
    if effectors is None:
        eff, multi = effector_n(n), False
    elif isinstance(effectors, (int, np.integer)) and not isinstance(effectors, bool):
        eff, multi = [int(effectors)], False
    else:
        try:
            eff = [int(e) for e in effectors]
        except (TypeError, ValueError):
            raise InputError(f"effectors: expected joint indices, got {effectors!r}") from None
        multi = True
        if not eff:
            raise InputError("effectors: needs at least one goal")
    if effectors is not None:
        for e in eff:
            if not -(n + 1) <= e <= n:
                raise InputError(f"effectors: index {e} out of range for a chain of {n + 1} joints")
        eff = np.array([e % (n + 1) for e in eff], dtype=np.int64)
    G = len(eff)
    extra = 1 if multi else 0

    def weights(value, name, default):
        if value is None:
            key = (G, default)
            got = _WEIGHTS.get(key)
            if got is None:
                got = _WEIGHTS[key] = np.full(G, default, dtype=np.float64)
                got.flags.writeable = False
            return got
        w = np.asarray(value, dtype=np.float64)
        if w.ndim > 1 or (w.ndim == 1 and w.shape != (G,)):
            raise InputError(f"{name}: expected a number or {G} numbers, got shape {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise InputError(f"{name}: weights must be finite and >= 0, got {value!r}")
        return frozen(np.broadcast_to(w, (G,)).copy())

    if target_world is None and target_rotation_world is None:
        raise InputError("target_world: needs a position target or a target_rotation_world")
    tpos = None if target_world is None else as_points(target_world, "target_world", 3, 1 + extra)
    trot = None
    if target_rotation_world is not None:
        trot = as_points(target_rotation_world, "target_rotation_world", 4, 1 + extra)
    position_weights, rw = goal_weights
    wpos = weights(position_weights, "position_weights", 1.0 if tpos is not None else 0.0)
    if tpos is None and position_weights is not None and (wpos > 0).any():
        raise InputError("position_weights: given without target_world")
    wrot = weights(rw, "rotation_weights", 1.0 if trot is not None else 0.0)
    if trot is None and rw is not None and (wrot > 0).any():
        raise InputError("rotation_weights: given without target_rotation_world")
    for name, a in (("target_world", tpos), ("target_rotation_world", trot)):
        if a is not None and multi and a.shape[-2] != G:
            raise InputError(f"{name}: expected {G} goals on axis -2, got shape {a.shape}")
    return eff, multi, tpos, trot, wpos, wrot


def goal_arrays(tpos, trot, multi, batch, G):
    """Flat float64 ``(N, G, 3)`` positions and ``(N or 1, G, 4)`` unit rotations (one
    identity row, for every problem, when there is no rotation target)."""
    if tpos is None:
        tp = np.zeros((int(np.prod(batch, dtype=np.int64)), G, 3))
    else:
        tp = flat(tpos if multi else tpos[..., None, :], batch, (G, 3))
    if trot is None:
        tr = _IDENTITY_ROWS.get(G)
        if tr is None:
            tr = _IDENTITY_ROWS[G] = np.zeros((1, G, 4))
            tr[..., 3] = 1
            tr.flags.writeable = False
        return tp, tr
    tr = flat(trot if multi else trot[..., None, :], batch, (G, 4))
    if not np.isfinite(tr).all():
        raise_nonfinite(target_rotation_world=trot)
    nrm = np.sqrt(np.sum(tr * tr, axis=-1, keepdims=True))
    if (nrm <= 1e-12).any():
        raise InputError("target_rotation_world: contains a zero quaternion")
    return tp, frozen(tr / nrm)


def target_batch(tpos, trot, multi):
    extra = 1 if multi else 0
    shapes = [a.shape[: a.ndim - 1 - extra] for a in (tpos, trot) if a is not None]
    if len(shapes) == 2:
        return batch_shape(("target_world", shapes[0]), ("target_rotation_world", shapes[1]))
    return shapes[0]
