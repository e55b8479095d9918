"""Shared records of the joint-frame chain kernels (CCD: :mod:`._ccd_kernels`, DLS:
:mod:`._dls_kernels`).

Private. These kernels solve chains given by their joint frames: each solved joint's bone
in its own frame, the start local rotations, the world rotation of the chain root's parent
and the root's world position. Their position-level entry kernels first put a chain given
by joint positions into that form (the input pose is the rest pose:
:func:`~ikrig.kernels.qmath.rest_frame`; every start local rotation is the identity).

Settings cross from Python as one-element structured arrays built once per options object
(:func:`~ikrig.solvers._harness.chain_common.settings_record`; ``CCD_SETTINGS``, ``DLS_SETTINGS``);
inside the kernels a problem travels as a :class:`FrameChain` (what does not change) and a
:class:`FrameState` (what the solve updates), and the entry kernels' outputs as
:class:`Outputs`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..._jit.setup import njit
from ...kernels.qmath import pick, rest_frame, v_get

IDENTITY_Q = (0.0, 0.0, 0.0, 1.0)


class FrameChain(NamedTuple):
    """One problem's chain given by its joint frames (read only)."""

    bone: np.ndarray  # (n, 3) each solved joint's bone in its own frame
    pq: tuple  # world rotation of the chain root's parent, xyzw
    root: tuple  # world position of the chain root
    eff_local: tuple  # the effector joint's fixed local rotation (DLS; CCD: identity)
    kinds: np.ndarray  # (n,) constraint kinds
    params: np.ndarray  # (n, P) this problem's constraint parameters


class FrameState(NamedTuple):
    """One problem's chain while it is solved (updated in place)."""

    rl: np.ndarray  # (n, 4) local rotations of the solved joints
    pos: np.ndarray  # (n + 1, 3) world joint positions, the forward kinematics of rl
    rw: np.ndarray  # (n, 4) or (n + 1, 4) world rotations (DLS: the effector's last)


class Outputs(NamedTuple):
    """An entry kernel's outputs, one row per problem."""

    pos: np.ndarray  # (N, n + 1, 3) world joint positions
    rl: np.ndarray  # (N, n, 4) local rotations of the solved joints
    err: np.ndarray  # (N,) float64
    iters: np.ndarray  # (N,) int64
    reached: np.ndarray  # (N,) bool


@njit(cache=True)
def positions_chain(positions, parent, kinds, params, k, bone):
    """Problem ``k`` of a position-level kernel (``positions (M, n + 1, 3)``, ``parent (M,
    4)``, ``params (M, n, P)``) as a :class:`FrameChain` whose bones are written into
    ``bone (n, 3)``."""
    pk = pick(positions, k)
    pq = rest_frame(pk, pick(parent, k), bone)
    return FrameChain(bone, pq, v_get(pk, 0), IDENTITY_Q, kinds, pick(params, k))
