"""Numba kernels of the foot-placement steps (private; :mod:`ikrig.pipelines.foot` calls them).

Each kernel runs one or more steps over ``F`` frames in order, carrying its state (springs,
locks) from frame to frame in arrays that the caller keeps. The offline pipeline calls them
once over a chunk of frames, the live placer once per frame with ``F = 1``: the same code,
the same frames. Ground queries stay outside (a ground is any object with ``height_at``), so
a step that needs the ground under points computed by the previous one is split at that
query.

Conventions: world space, Y up, lengths in the clip's units, times in seconds. Feet are
``K``; arrays are float64 and C-contiguous; quaternions xyzw. Spring states are ``(3, n)``
arrays (see :func:`~ikrig.pipelines.smoothing.spring_advance`).
"""

from __future__ import annotations

import math

from .._numba import njit
from ..math._qmath import q_between, q_conj, q_get, q_mul, q_normalize, q_rotate
from ..solvers._two_bone_kernels import (
    C_EPS,
    C_HALF,
    C_MAX_STRETCH,
    C_ONE,
    C_PERP,
    C_SOFTEN,
    C_THREE,
    C_TOL,
    C_TWO,
    C_ZERO,
    _solve,
)
from .locking import lock_step
from .smoothing import spring_advance, spring_rate


@njit(cache=True)
def smooth_max(a, b, k):
    """A smooth maximum of ``a`` and ``b``: ``>= max(a, b)``, within ``k / 2`` of it, and
    without the kink of ``max`` where they cross (``k`` in the same units)."""
    return 0.5 * (a + b + math.sqrt((a - b) ** 2 + k * k))


@njit(cache=True)
def smooth_min(a, b, k):
    """A smooth minimum: ``<= min(a, b)``, within ``k / 2`` of it (see :func:`smooth_max`)."""
    return 0.5 * (a + b - math.sqrt((a - b) ** 2 + k * k))


@njit(cache=True)
def q_toward(q, w):
    """``nlerp(identity, q, w)`` for ``q`` with ``q.w >= 0``: ``q`` weighted by ``w``."""
    return q_normalize((q[0] * w, q[1] * w, q[2] * w, q[3] * w + (1.0 - w)))


@njit(cache=True)
def align_run(points, ankles, normals, hit, pins, cos_max, dt, halflife, spring, align):
    """Step 7a: turn each foot to the ground normal under it.

    Args:
        points: ``(F, K, 2, 3)`` heel and toe, rotated about the ankle in place.
        ankles: ``(F, K, 3)``.
        normals, hit: ``(F, K, 2, 3)`` and ``(F, K, 2)`` the ground under the points.
        pins: ``(F, K)`` pinning weights (the turn is blended by them).
        cos_max: cosine of the largest turn; normals steeper than it count as +Y.
        dt, halflife: frame time and the normal spring's half-life.
        spring: ``(3, 3 K)`` state of the normal spring.
        align: ``(F, K, 4)`` out: the turn of each ankle (world).
    """
    y, eydt = spring_rate(halflife, dt)
    cos_half = math.sqrt(0.5 * (1.0 + cos_max))
    sin_half = math.sqrt(max(1.0 - cos_half * cos_half, 0.0))
    for f in range(points.shape[0]):
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
            s0 = spring_advance(spring, 3 * k, a0 / n, halflife, y, eydt, dt)
            s1 = spring_advance(spring, 3 * k + 1, a1 / n, halflife, y, eydt, dt)
            s2 = spring_advance(spring, 3 * k + 2, a2 / n, halflife, y, eydt, dt)
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


@njit(cache=True)
def lock_run(points, heights, ground, hit, contacts, dt, radius, halflife, state, shift):
    """Step 9: foot locking, applied to the points.

    Args:
        points: ``(F, K, 2, 3)`` heel and toe, shifted in place.
        heights: ``(K, 2)`` the points' planted heights.
        ground, hit: ``(F, K, 2)`` ground height under each point and whether it was found.
        contacts: ``(F, K)`` bool; a foot locks only where the ground is under both points.
        dt, radius, halflife: frame time, release radius, return half-life.
        state: ``(K, 9)`` lock state (:func:`~ikrig.pipelines.locking.lock_step`).
        shift: ``(F, K, 2)`` out: the X and Z correction of each foot.
    """
    y, eydt = spring_rate(halflife, dt)
    for f in range(points.shape[0]):
        for k in range(points.shape[1]):
            c0 = points[f, k, 0, 1] - heights[k, 0] - ground[f, k, 0]
            c1 = points[f, k, 1, 1] - heights[k, 1] - ground[f, k, 1]
            p = 1 if c1 < c0 else 0  # the lower point is the planted one (heel on a tie)
            on = contacts[f, k] and hit[f, k, 0] and hit[f, k, 1]
            dx, dz = lock_step(
                state[k], on, p, points[f, k, p, 0], points[f, k, p, 2],
                dt, radius, y, eydt,
            )  # fmt: skip
            shift[f, k, 0] = dx
            shift[f, k, 1] = dz
            for q in range(2):
                points[f, k, q, 0] += dx
                points[f, k, q, 2] += dz


@njit(cache=True)
def root_run(offsets, weights, softness, floor_weight, dt, halflife, spring, out):
    """Step 3: how far the character moves up, smoothed.

    A soft minimum (width ``softness``) of the feet's ``offsets (F, K)``, weighted by
    ``weights (F, K)`` plus ``floor_weight`` (so a character in the air follows its feet
    too): the lower planted foot keeps its leg's extension and the higher one bends, as a
    person on stairs does, and a foot lifted or placed hands over smoothly. Then the spring
    (``spring (3, 1)``). ``out (F,)``.
    """
    y, eydt = spring_rate(halflife, dt)
    for f in range(offsets.shape[0]):
        low = offsets[f, 0]
        for k in range(1, offsets.shape[1]):
            low = min(low, offsets[f, k])
        num = 0.0
        den = 0.0
        for k in range(offsets.shape[1]):
            w = weights[f, k] + floor_weight
            num += w * math.exp(-(offsets[f, k] - low) / softness)
            den += w
        goal = low - softness * math.log(num / den)
        out[f] = spring_advance(spring, 0, goal, halflife, y, eydt, dt)


@njit(cache=True)
def full_targets_run(ankles, offsets, planted, shift, dt, halflife, spring, targets):
    """Full mode, steps 4 and 8: ankle targets ``(F, K, 3)`` from the source ankles, the
    vertical ``offsets (F, K)`` on a short spring (``spring (3, K)``; it takes the last
    kinks out: lock switches, plant ramps) that never lets a sole sink below ``planted``,
    and the locking ``shift (F, K, 2)``."""
    y, eydt = spring_rate(halflife, dt)
    for f in range(ankles.shape[0]):
        for k in range(ankles.shape[1]):
            o = spring_advance(spring, k, offsets[f, k], halflife, y, eydt, dt)
            targets[f, k, 0] = ankles[f, k, 0] + shift[f, k, 0]
            targets[f, k, 1] = ankles[f, k, 1] + max(o, planted[f, k])
            targets[f, k, 2] = ankles[f, k, 2] + shift[f, k, 1]


@njit(cache=True)
def pelvis_drop(hx, hy, hz, tx, ty, tz, reach):
    """Step 5: how far a hip must come down so its foot target is within ``reach`` (>= 0;
    a target straight below but out of reach needs ``vertical gap - reach``, a target too
    far sideways needs the hip at its height)."""
    dx = hx - tx
    dz = hz - tz
    vert = math.sqrt(max(reach * reach - dx * dx - dz * dz, 0.0))
    return max(hy - ty - vert, 0.0)


@njit(cache=True)
def legs_run(
    joints_p, joints_r, parent_r, targets, root, found, align, lengths, prm, consts,
    pelvis, weight, out_r, drop_out, reached,
):  # fmt: skip
    """Steps 5, 6 and 7b: pelvis drop, two-bone leg IK and the ankle turn, per frame.

    Args:
        joints_p: ``(F, K, 3, 3)`` hip, knee and ankle world positions (source).
        joints_r: ``(F, K, 3, 4)`` their world rotations; parent_r: ``(F, K, 4)`` the hip's
            parent's world rotation.
        targets: ``(F, K, 3)`` ankle targets.
        root: ``(F,)`` the root's vertical offset; the pelvis drop is taken off in place.
        found: ``(F, K)`` ground found (IK weight goal, on a spring).
        align: ``(F, K, 4)`` the ankle turns of step 7a.
        lengths: ``(K,)`` leg lengths (thigh plus shin).
        prm: ``[leg length unit, max_extension, extension_cap, max_pelvis_drop (units),
            pelvis_halflife, weight_halflife, dt, pelvis on (1/0)]``.
        consts: two-bone constants (:func:`~ikrig.solvers._two_bone_kernels.make_consts`).
        pelvis: ``(3, 1)`` and weight: ``(3, K)`` spring states.
        out_r: ``(F, K, 3, 4)`` out: new local rotations of hip, knee and ankle.
        drop_out: ``(F,)`` out: the pelvis drop; reached: ``(F, K)`` out.
    """
    unit, max_ext, cap, max_drop = prm[0], prm[1], prm[2], prm[3]
    dt = prm[6]
    use_pelvis = prm[7] != 0.0
    yp, ep = spring_rate(prm[4], dt)
    yw, ew = spring_rate(prm[5], dt)
    band = 0.01 * unit
    zero, one, half, two, three = (
        consts[C_ZERO], consts[C_ONE], consts[C_HALF], consts[C_TWO], consts[C_THREE],
    )  # fmt: skip
    soften, max_stretch, tol = consts[C_SOFTEN], consts[C_MAX_STRETCH], consts[C_TOL]
    eps, perp = consts[C_EPS], consts[C_PERP]
    K = targets.shape[1]
    for f in range(targets.shape[0]):
        drop = 0.0
        if use_pelvis:
            # 5. the pelvis comes down when a leg would have to straighten beyond the
            # source's extension or max_extension (smooth maxima: no kinks, no knee pops)
            need = 0.0
            for k in range(K):
                hx = joints_p[f, k, 0, 0]
                hy = joints_p[f, k, 0, 1] + root[f]
                hz = joints_p[f, k, 0, 2]
                sx = joints_p[f, k, 2, 0] - joints_p[f, k, 0, 0]
                sy = joints_p[f, k, 2, 1] - joints_p[f, k, 0, 1]
                sz = joints_p[f, k, 2, 2] - joints_p[f, k, 0, 2]
                src = math.sqrt(sx * sx + sy * sy + sz * sz)
                reach = smooth_max(src, max_ext * lengths[k], band)
                reach = smooth_min(reach - 0.5 * band, cap * lengths[k], band)
                d = pelvis_drop(hx, hy, hz, targets[f, k, 0], targets[f, k, 1],
                                targets[f, k, 2], reach)  # fmt: skip
                need = max(need, d)
            need = min(need, max_drop)
            held = spring_advance(pelvis, 0, need, prm[4], yp, ep, dt)
            drop = smooth_max(need, held, band) - 0.5 * band
            root[f] -= drop
        drop_out[f] = drop
        up = root[f]
        for k in range(K):
            # 6. leg IK on the shifted pose, weighted out where no ground was found
            w = spring_advance(weight, k, 1.0 if found[f, k] else 0.0, prm[5], yw, ew, dt)
            w = min(max(w, 0.0), 1.0)
            (
                _, _, _, _, _, _, _, qrx, qry, qrz, qrw, qmx, qmy, qmz, qmw, _, ok,
            ) = _solve(
                joints_p[f, k, 0, 0], joints_p[f, k, 0, 1] + up, joints_p[f, k, 0, 2],
                joints_p[f, k, 1, 0], joints_p[f, k, 1, 1] + up, joints_p[f, k, 1, 2],
                joints_p[f, k, 2, 0], joints_p[f, k, 2, 1] + up, joints_p[f, k, 2, 2],
                targets[f, k, 0], targets[f, k, 1], targets[f, k, 2],
                joints_p[f, k, 1, 0], joints_p[f, k, 1, 1] + up, joints_p[f, k, 1, 2],
                w, one, zero, zero, one, half, two, three, soften, max_stretch, tol, eps, perp,
            )  # fmt: skip
            reached[f, k] = ok != 0
            # 7b. new rotations: hip and knee from the IK, the ankle turned to the ground
            hip_w = q_mul((qrx, qry, qrz, qrw), q_get(joints_r[f, k], 0))
            knee_w = q_mul((qmx, qmy, qmz, qmw), q_get(joints_r[f, k], 1))
            ankle_w = q_mul(q_toward(q_get(align[f], k), w), q_get(joints_r[f, k], 2))
            locals_ = (
                q_mul(q_conj(q_get(parent_r[f], k)), hip_w),
                q_mul(q_conj(hip_w), knee_w),
                q_mul(q_conj(knee_w), ankle_w),
            )
            for j in range(3):
                for c in range(4):
                    out_r[f, k, j, c] = locals_[j][c]


@njit(cache=True)
def swing_run(planted, stance, contacts, dt, halflife, held, spring, out):
    """Step 4b live, without a plan (see
    :func:`~ikrig.pipelines.foot_steps.live_foot_offsets`): in contact a foot stands at its
    ``stance`` offset; in the air it holds its last stance offset (``held (K,)``, NaN at the
    start), raised to clear the ground (``planted``), on a spring (``spring (3, K)``) that
    never lags below the ground. ``planted, stance: (F, K)``, ``contacts (F, K)`` bool,
    ``out (F, K)``."""
    y, eydt = spring_rate(halflife, dt)
    for f in range(planted.shape[0]):
        for k in range(planted.shape[1]):
            if contacts[f, k] or held[k] != held[k]:
                held[k] = stance[f, k]
            goal = stance[f, k] if contacts[f, k] else max(held[k], planted[f, k])
            x = spring_advance(spring, k, goal, halflife, y, eydt, dt)
            out[f, k] = stance[f, k] if contacts[f, k] else max(x, planted[f, k])


@njit(cache=True)
def detect_run(points, heights, floor, unit, dt, thresholds, last, contact, pin, pins, flags):
    """Live contact detection (step 2 without the whole clip): per frame and foot, contact
    starts when a sole point is lower than ``height_on`` over its floor level and slower than
    ``speed_on``, and lasts while one is within ``height_off`` and ``speed_off`` (leg lengths,
    leg lengths per second; ``thresholds = [height_on, height_off, speed_on, speed_off,
    blend_in, blend_out]``, blends in seconds); the pin ramps toward 1 in contact and 0
    out of it over the blend times.

    Args:
        points: ``(F, K, 2, 3)`` sole points; heights: ``(K, 2)`` their planted heights.
        floor, unit, dt: the clip's floor height, the leg length, the frame time.
        last: ``(K, 2, 3)`` the previous frame's points (NaN at the start: speed 0),
            updated in place; contact: ``(K,)`` bool and pin: ``(K,)`` state, in place.
        pins, flags: ``(F, K)`` out.
    """
    h_on, h_off, s_on, s_off = thresholds[0], thresholds[1], thresholds[2], thresholds[3]
    rate_in = dt / thresholds[4] if thresholds[4] > 0 else 1.0
    rate_out = dt / thresholds[5] if thresholds[5] > 0 else 1.0
    for f in range(points.shape[0]):
        for k in range(points.shape[1]):
            enter = False
            stay = False
            for p in range(2):
                h = (points[f, k, p, 1] - floor - heights[k, p]) / unit
                speed = 0.0
                if last[k, p, 0] == last[k, p, 0]:
                    dx = points[f, k, p, 0] - last[k, p, 0]
                    dz = points[f, k, p, 2] - last[k, p, 2]
                    speed = math.sqrt(dx * dx + dz * dz) / dt / unit
                enter = enter or (h < h_on and speed < s_on)
                stay = stay or (h < h_off and speed < s_off)
                for c in range(3):
                    last[k, p, c] = points[f, k, p, c]
            contact[k] = stay if contact[k] else enter
            if contact[k]:
                pin[k] = min(pin[k] + rate_in, 1.0)
            else:
                pin[k] = max(pin[k] - rate_out, 0.0)
            pins[f, k] = pin[k]
            flags[f, k] = contact[k]
