"""The feet's sole points (heel and toe) and the clip's own floor.

Each foot has two sole points: the heel (the ankle joint) and the toe (the toe joint, else the
ankle's end site, else the heel again). A point's *planted height* is how far above the
clip's floor it sits when the foot is on the ground: a low percentile of its height over the
clip, minus the floor. The floor is the lowest planted level of any sole point. A foot's
*clearance* over some ground is ``min over points (y - planted height - ground height)``:
0 when the foot stands on it, negative when it penetrates.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._jit.setup import njit
from ..ground.views import heights_below
from ..kernels.qmath import q_get, q_rotate
from ..pose import Motion
from ..signal.stats import percentiles
from .legs import Legs

HEEL, TOE = 0, 1
SOLE_SAMPLES = np.linspace(0.0, 1.0, 5)
"""Fractions from heel to toe at which a sole is checked against the ground."""


@dataclass(frozen=True, eq=False)
class FootSole:
    """Sole points of every foot.

    Attributes:
        joints: ``(feet, 2)`` int; the joint each point hangs from (heel: the ankle).
        offsets_local: ``(feet, 2, 3)``; the point's offset in that joint's frame (zero for a
            point at the joint, the end-site offset for an end site).
        heights: ``(feet, 2)``; planted height of each point above ``floor``.
        floor: the clip's floor height (world Y), in the clip's units.
    """

    joints: np.ndarray
    offsets_local: np.ndarray
    heights: np.ndarray
    floor: float

    def points_world(self, rotations_world, positions_world) -> np.ndarray:
        """World positions ``(..., feet, 2, 3)`` of the sole points from FK ``(..., J, 4/3)``
        (float64)."""
        rot = np.ascontiguousarray(rotations_world, dtype=np.float64)
        pos = np.ascontiguousarray(positions_world, dtype=np.float64)
        batch = pos.shape[:-2]
        out = np.empty(batch + self.joints.shape + (3,))
        _points_kernel(
            rot.reshape(-1, rot.shape[-2], 4),
            pos.reshape(-1, pos.shape[-2], 3),
            self.joints,
            self.offsets_local,
            out.reshape(-1, self.joints.shape[0], 2, 3),
        )
        return out

    def samples(self, points_world) -> tuple[np.ndarray, np.ndarray]:
        """The sole sampled from heel to toe (:data:`SOLE_SAMPLES`).

        ``points_world: (..., feet, 2, 3)`` -> ``(samples (..., feet, S, 3), planted heights
        (feet, S))``, the heights interpolated between heel and toe.
        """
        pts = np.ascontiguousarray(points_world, dtype=np.float64)
        batch = pts.shape[:-2]
        out = np.empty(batch + (len(SOLE_SAMPLES), 3))
        _samples_kernel(pts.reshape(-1, 2, 3), SOLE_SAMPLES, out.reshape(-1, len(SOLE_SAMPLES), 3))
        return out, self.sample_heights

    @cached_property
    def sample_heights(self) -> np.ndarray:
        """``(feet, S)`` planted heights of the :data:`SOLE_SAMPLES`, heel to toe."""
        h = self.heights
        out = h[:, :1] + (h[:, 1:] - h[:, :1]) * SOLE_SAMPLES
        out.flags.writeable = False  # shared by every call
        return out

    def sole_clearance(self, points_world, ground, ceiling=None) -> tuple[np.ndarray, np.ndarray]:
        """Clearance of the whole sole over ``ground``: the lowest heel-to-toe sample's
        ``y - planted height - ground height`` ``(..., feet)``, and whether the ground was
        found under every sample ``(..., feet)`` (misses count as the clip's floor). With a
        ``ceiling`` (world heights broadcast against ``(..., feet, samples)``) only ground
        below it counts (:func:`~ikrig.ground.views.heights_below`)."""
        samples, heights = self.samples(points_world)
        gh, _, hit = heights_below(ground, samples[..., ::2], ceiling)  # under X and Z
        clear = np.empty(samples.shape[:-2])
        found = np.empty(samples.shape[:-2], dtype=np.bool_)
        S = len(SOLE_SAMPLES)
        _clearance_kernel(
            samples.reshape(-1, heights.shape[0], S, 3),
            heights,
            np.ascontiguousarray(gh, dtype=np.float64).reshape(-1, heights.shape[0], S),
            np.ascontiguousarray(hit).reshape(-1, heights.shape[0], S),
            self.floor,
            clear.reshape(-1, heights.shape[0]),
            found.reshape(-1, heights.shape[0]),
        )
        return clear, found

    def clearance(self, points_world, ground_heights) -> np.ndarray:
        """Foot clearance ``(..., feet)`` given sole points ``(..., feet, 2, 3)`` and the ground
        height under each ``(..., feet, 2)``."""
        return np.min(points_world[..., 1] - self.heights - ground_heights, axis=-1)


@njit(cache=True)
def _points_kernel(rot_w, pos_w, joints, offsets, out):
    """``out[n, k, p] = pos_w[n, j] + rot_w[n, j] * offsets[k, p]``, ``j = joints[k, p]``."""
    for n in range(rot_w.shape[0]):
        for k in range(joints.shape[0]):
            for p in range(2):
                j = joints[k, p]
                r = q_rotate(
                    q_get(rot_w[n], j), (offsets[k, p, 0], offsets[k, p, 1], offsets[k, p, 2])
                )
                for c in range(3):
                    out[n, k, p, c] = pos_w[n, j, c] + r[c]


@njit(cache=True)
def _samples_kernel(points, fractions, out):
    """``out[n, s] = heel + (toe - heel) * fractions[s]`` for ``points (N, 2, 3)``."""
    for n in range(points.shape[0]):
        for s in range(fractions.shape[0]):
            for c in range(3):
                heel = points[n, 0, c]
                out[n, s, c] = heel + (points[n, 1, c] - heel) * fractions[s]


@njit(cache=True)
def _clearance_kernel(samples, heights, ground, hit, floor, clear, found):
    """Lowest ``y - planted height - ground height`` over the samples of each foot (misses
    count as the ``floor``) and whether every sample hit: ``samples (N, K, S, 3)``, ``heights
    (K, S)``, ``ground, hit (N, K, S)`` -> ``clear, found (N, K)``."""
    for n in range(samples.shape[0]):
        for k in range(samples.shape[1]):
            low = np.inf
            every = True
            for s in range(samples.shape[2]):
                g = ground[n, k, s] if hit[n, k, s] else floor
                every = every and hit[n, k, s]
                low = min(low, samples[n, k, s, 1] - heights[k, s] - g)
            clear[n, k] = low
            found[n, k] = every


def estimate_sole(motion: Motion, legs: Legs, percentile: float = 5.0, fk=None) -> FootSole:
    """Sole points of ``legs`` and their planted heights, measured on the clip ``motion (F,)``
    (``fk``: its world rotations and positions, if already computed)."""
    return measure_sole(motion, legs, percentile, fk)[0]


def measure_sole(
    motion: Motion, legs: Legs, percentile: float = 5.0, fk=None
) -> tuple[FootSole, np.ndarray]:
    """:func:`estimate_sole`, and the clip's sole points it measured the levels on, ``(F,
    feet, 2, 3)`` world (:meth:`FootSole.points_world`): a pipeline reads them next."""
    sk = motion.skeleton
    joints, offsets = [], []
    for leg in legs.legs:
        toe_joint, toe_offset = leg.ankle, np.zeros(3)
        if leg.toe >= 0:
            toe_joint = leg.toe
        else:
            sites = np.flatnonzero(sk.end_site_parents == leg.ankle)
            if len(sites):
                toe_offset = sk.end_site_offsets[sites[0]]
        joints.append([leg.ankle, toe_joint])
        offsets.append([np.zeros(3), toe_offset])
    sole = FootSole(np.array(joints), np.array(offsets, dtype=np.float64), np.zeros((0,)), 0.0)
    rot_w, pos_w = motion.fk() if fk is None else fk
    pts = sole.points_world(rot_w, pos_w)
    levels = percentiles(pts.reshape(-1, len(joints), 2, 3)[..., 1], percentile)
    floor = float(levels.min())  # levels: (feet, 2)
    return FootSole(sole.joints, sole.offsets_local, levels - floor, floor), pts
