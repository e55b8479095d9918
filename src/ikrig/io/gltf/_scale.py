"""The scales of a glTF skeleton's nodes: what ikrig refuses, and what it notes.

A node's scale multiplies its children's translations and rotates nothing. ikrig's
skeletons have no scale: the reader folds every scale, uniform or not, still or animated,
into the joints' local translations frame by frame (the positions are the scene graph's),
and keeps each node's rotation as authored. A non-uniform scale also shears the frames of
the nodes below it; that shear has no place in a rotation and is left out of the joints'
rotations, never out of their positions. Refused: zero, negative (mirrored) and absurd
scales (:data:`SCALE_RANGE`), which leave no rotation to keep.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...errors import InputError
from ._nodes import scale_spread
from .document import GltfDocument

SCALE_SPREAD_QUIET = 1e-5
"""Relative spread of a node's scale components below which it counts as uniform, silently
(float32 noise in exports reaches a few 1e-6)."""
SCALE_SPREAD_NOISE = 1e-3
"""Relative spread up to which a non-uniform scale is called float noise in the quirk line
(above it: a real stretch, as squash-and-stretch rigs animate)."""
SCALE_RANGE = (1e-6, 1e6)
"""Node scale components outside this range are refused (a top node scaled by 1e-300 leaves
nothing of the rotations below it in float64)."""

Labels = Callable[[list[int]], str]


def check_scales(
    doc: GltfDocument, chain_above: tuple[Sequence[int], int], s_all: np.ndarray, where: str
) -> None:
    """Refuse zero, negative and absurd scales on the chain's nodes.

    Args:
        doc: the document (for node names).
        chain_above: ``(chain node indices (K,), how many of them lie above the skeleton)``.
        s_all: ``(F, K, 3)`` scales, rest and animated frames alike.
        where: the file, for messages.

    Raises:
        InputError: one line naming the first node with such a scale.
    """
    chain = chain_above[0]
    absurd = ((s_all < SCALE_RANGE[0]) | (s_all > SCALE_RANGE[1])).any(axis=(0, 2))
    absurd &= (s_all > 0).all(axis=(0, 2))
    if absurd.any():
        k = chain[int(np.argmax(absurd))]
        raise InputError(
            f"{where}: scale of node {doc.nodes[k].label} outside"
            f" {SCALE_RANGE[0]:g}..{SCALE_RANGE[1]:g}; ikrig cannot keep its rotations exact"
        )
    bad = (s_all <= 0).any(axis=(0, 2))
    if bad.any():
        k = chain[int(np.argmax(bad))]
        raise InputError(
            f"{where}: zero or negative scale on node {doc.nodes[k].label} (mirrored"
            " or collapsed nodes are not supported)"
        )


def scale_quirks(
    chain_above: tuple[Sequence[int], int], s_all: np.ndarray, labels: Labels
) -> list[str]:
    """The quirk lines on the chain's scales (``s_all (F, K, 3)``, already checked by
    :func:`check_scales`; ``labels`` names a list of nodes): non-uniform scales (float
    noise, or a real stretch with how far from uniform and whether animated), and uniform
    scales other than 1 on skeleton nodes."""
    chain, n_above = chain_above
    quirks = []
    spread = scale_spread(s_all).max(axis=0)
    noise = (spread > SCALE_SPREAD_QUIET) & (spread <= SCALE_SPREAD_NOISE)
    if noise.any():
        quirks.append(
            f"near-uniform scale on {labels([chain[int(i)] for i in np.flatnonzero(noise)])}"
            f" (components up to {spread[noise].max():.2g} apart); positions exact,"
            " rotations ignore it"
        )
    stretch = np.flatnonzero(spread > SCALE_SPREAD_NOISE)
    if len(stretch):
        moving = np.ptp(s_all[:, stretch], axis=0).max(axis=-1) > 1e-9
        how = "animated " if moving.any() else ""
        lo, hi = s_all[:, stretch].min(), s_all[:, stretch].max()
        quirks.append(
            f"{how}non-uniform scale on {labels([chain[int(i)] for i in stretch])} (components"
            f" {lo:.4g} to {hi:.4g}, up to {100 * spread.max():.3g} % apart): positions as the"
            " scene graph gives them (each frame's scales folded into the offsets), rotations"
            " the node rotations as authored (the shear left out)"
        )
    uniform = spread[n_above:] <= SCALE_SPREAD_NOISE
    mean = s_all[:, n_above:].mean(axis=-1)
    off = (np.abs(mean - 1).max(axis=0) > 1e-5) & uniform
    if off.any():
        scaled = [chain[n_above + i] for i in np.flatnonzero(off)]
        quirks.append(
            f"uniform scale (from {mean[:, off].min():.4g} to {mean[:, off].max():.4g}) on"
            f" {labels(scaled)} folded into the translations below it"
        )
    return quirks
