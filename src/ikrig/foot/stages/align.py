"""Step 3b: each sole turns to the (smoothed) ground normal under it, limited to
``align.max_angle`` and blended by the pinning curve. The turn moves the sole points of a
:class:`~ikrig.foot.stages.goals.FootGoals` about the ankle; step 8b
(:mod:`~ikrig.foot.stages.legs_ik`) applies it to the ankle joint."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..._jit.setup import njit
from ...ground.views import heights_below
from ...kernels.qmath import q_between, q_normalize, q_rotate
from ...signal.springs import lane, spring_advance, spring_rate
from ..context import FootContext
from .goals import FootGoals

if TYPE_CHECKING:
    from ..state import FootState


@njit(cache=True)
def q_toward(q, w):
    """``nlerp(identity, q, w)`` for ``q`` with ``q.w >= 0``: ``q`` weighted by ``w``."""
    return q_normalize((q[0] * w, q[1] * w, q[2] * w, q[3] * w + (1.0 - w)))


@njit(cache=True)
def align_run(points, ankles, normals, hit, pins, cos_max, rate, spring, align):
    """Turn each foot to the ground normal under it.

    Args:
        points: ``(F, K, 2, 3)`` heel and toe (world), rotated about the ankle in place.
        ankles: ``(F, K, 3)`` (world).
        normals, hit: ``(F, K, 2, 3)`` and ``(F, K, 2)`` bool, the ground under the points.
        pins: ``(F, K)`` pinning weights (the turn is blended by them).
        cos_max: cosine of the largest turn; normals steeper than it count as +Y.
        rate: the normal spring's rate (:data:`~ikrig.signal.springs.RATE`, ``(1,)``).
        spring: ``(lanes, 3 K)`` springs (:data:`~ikrig.signal.springs.SPRING` records;
            frame ``f`` uses lane ``f % lanes``).
        align: ``(F, K, 4)`` out: the turn of each ankle (world, xyzw).
    """
    rt = rate[0]
    cos_half = math.sqrt(0.5 * (1.0 + cos_max))
    sin_half = math.sqrt(max(1.0 - cos_half * cos_half, 0.0))
    for f in range(points.shape[0]):
        bank = lane(spring, f)
        for k in range(points.shape[1]):
            # the normals under heel and toe, averaged; misses and steep ones count as +Y
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            for p in range(2):
                n0 = normals[f, k, p, 0]
                n1 = normals[f, k, p, 1]
                n2 = normals[f, k, p, 2]
                if not hit[f, k, p] or n1 < cos_max:
                    n0, n1, n2 = 0.0, 1.0, 0.0
                a0 += n0
                a1 += n1
                a2 += n2
            n = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            if n <= 1e-12:
                a0, a1, a2, n = 0.0, 1.0, 0.0, 1.0
            s0 = spring_advance(bank, 3 * k, a0 / n, rt)
            s1 = spring_advance(bank, 3 * k + 1, a1 / n, rt)
            s2 = spring_advance(bank, 3 * k + 2, a2 / n, rt)
            q = q_between((0.0, 1.0, 0.0), (s0, s1, s2))
            if abs(q[3]) < cos_half:  # limit the turn to the largest angle
                s = sin_half / max(math.sqrt(q[0] ** 2 + q[1] ** 2 + q[2] ** 2), 1e-300)
                q = (q[0] * s, q[1] * s, q[2] * s, cos_half)
            w = pins[f, k] if hit[f, k, 0] and hit[f, k, 1] else 0.0
            q = q_toward(q, w)
            align[f, k, 0] = q[0]
            align[f, k, 1] = q[1]
            align[f, k, 2] = q[2]
            align[f, k, 3] = q[3]
            for p in range(2):
                r = q_rotate(
                    q,
                    (
                        points[f, k, p, 0] - ankles[f, k, 0],
                        points[f, k, p, 1] - ankles[f, k, 1],
                        points[f, k, p, 2] - ankles[f, k, 2],
                    ),
                )
                for c in range(3):
                    points[f, k, p, c] = ankles[f, k, c] + r[c]


def align_feet(ctx: FootContext, goals: FootGoals, state: FootState) -> None:
    """Step 3b on ``goals``: sets ``goals.align`` and turns ``goals.points`` (the normal
    spring is ``state.normals``)."""
    o = ctx.options.align
    xz = goals.points[..., ::2]  # X and Z
    _, normals, hit = heights_below(ctx.ground, xz, goals.ceiling[:, None, None])
    align_run(
        goals.points,
        goals.ankles,
        np.ascontiguousarray(normals, dtype=np.float64),
        hit,
        np.ascontiguousarray(goals.pins, dtype=np.float64),
        ctx.memo("align cos", lambda: float(np.cos(o.max_angle))),
        spring_rate(o.normal_halflife, goals.frame_time),
        state.normals,
        goals.align,
    )
