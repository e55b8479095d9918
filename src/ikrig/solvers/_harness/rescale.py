"""Chain problems out of float64's squaring range: solved again, shifted and rescaled.

The position-based chain kernels square coordinates; for chains whose coordinates are beyond
about ``2**400`` (or below ``2**-400``), or targets beyond ``2**200`` of the chain, they flag
the element (``err < 0``) instead of returning NaN. :func:`rescue` solves those elements
again, moved to their roots and scaled by an exact power of two, and maps the results back.
"""

from __future__ import annotations

import numpy as np

from .problem import frozen


def packable(bones) -> np.ndarray:
    """``bones (..., n, 3)`` as they are, or, for chains whose largest coordinate is beyond
    ``2**400`` or below ``2**-400`` (where squaring overflows or underflows), times the power
    of two that brings it near 1: exact, so the directions, all that packing reads, come
    out the same bit for bit."""
    big = np.abs(bones).max(axis=(-1, -2), keepdims=True)
    odd = ~((big >= 2.0**-400) & (big <= 2.0**400)) & (big > 0)
    if not odd.any():
        return bones
    return np.ldexp(bones, np.where(odd, -np.frexp(np.where(odd, big, 1.0))[1], 0))


_FAR = 2.0**200  # a target farther than this (in rescaled units) is moved in along its line


def safe_norm(v) -> np.ndarray:
    """Euclidean norms over the last axis without overflow or underflow."""
    m = np.abs(v).max(-1)
    k = np.where(m > 0, m, 1.0)[..., None]
    return m * np.sqrt(np.sum((v / k) ** 2, axis=-1))


def rescaled(pos, targets, fixed_root: bool):
    """Chains ``pos (K, m, 3)`` and targets ``(K, G, 3)`` moved to their roots and scaled
    by a power of two ``s (K,)`` so that the kernels can square them (the caller maps the
    results back with ``root + 2 x / s``); with ``fixed_root`` targets far beyond the chain
    are moved in along their line (only their direction matters then). Returns ``(pos,
    targets, s, moved (K, G))``."""
    root = pos[:, :1, :]
    q = pos * 0.5 - root * 0.5  # halved: differences of finite numbers stay finite
    v = targets * 0.5 - root * 0.5
    extent = np.abs(q).max((1, 2))
    size = extent if fixed_root else np.maximum(extent, np.abs(v).max((1, 2)))
    s = np.ldexp(1.0, -np.frexp(np.where(size > 0, size, 1.0))[1])
    q *= s[:, None, None]
    q[extent * s < 2.0**-300] = 0.0  # bones below the rounding of the target's distance
    dist = safe_norm(v)
    with np.errstate(over="ignore"):  # _FAR / s is inf for the tiniest chains: compares fine
        moved = dist > _FAR / s[:, None] if fixed_root else np.zeros(dist.shape, dtype=bool)
    v *= np.where(moved, np.divide(_FAR, dist, out=np.ones_like(dist), where=moved),
                  s[:, None])[..., None]  # fmt: skip
    return q, v, s, moved


def scaled_back(root, x, s):
    """``root + 2 x / s`` over ``(K, ...)`` rows, clipped to finite values."""
    shape = (-1,) + (1,) * (x.ndim - 1)
    with np.errstate(over="ignore"):
        y = root + (x * 2.0) / s.reshape(shape)
    big = np.finfo(np.float64).max
    return np.clip(y, -big, big)


def rescue(solve, args, opts, outs, world):
    """Solve again, rescaled, the elements a position-based kernel left out of range
    (``err < 0``; see :mod:`ikrig.solvers._harness.chain_common`), writing into ``outs``."""
    pos, target, rot, parent, packed = args
    out, rw, rl, err, iters, reached = outs
    idx = np.flatnonzero(err < 0)
    direction = getattr(opts, "direction", None)
    p = pos[idx] if pos.shape[0] > 1 else np.repeat(pos, len(idx), axis=0)
    q, v, s, moved = rescaled(p, target[idx, None, :], direction is None)
    sub = [frozen(a[idx]) if a.shape[0] > 1 else a for a in (rot, parent)]
    if packed is not None and packed[1].shape[0] > 1:
        packed = (packed[0], frozen(packed[1][idx]))
    got = solve(np.ascontiguousarray(q), np.ascontiguousarray(v[:, 0]), *sub, packed, opts,
                world=world)  # fmt: skip
    root = p[:, :1, :]
    out[idx] = scaled_back(root, got[0], s)
    end = out[idx, 0 if direction == "head" else -1]
    err[idx] = 2.0 * safe_norm(target[idx] * 0.5 - end * 0.5)
    reached[idx] = got[5] & ~moved[:, 0]
    iters[idx] = got[4]
    rl[idx] = got[2]
    if rw is not rl:
        rw[idx] = got[1]
