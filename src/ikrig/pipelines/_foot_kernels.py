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
    """Full mode, steps 4c and 8: ankle targets ``(F, K, 3)`` from the source ankles, the
    vertical ``offsets (F, K)`` and the locking ``shift (F, K, 2)``. With ``halflife > 0``
    (live estimates) the offsets move on a short spring (``spring (3, K)``; it takes the
    last kinks out: lock switches, plant ramps) that never lets a sole sink below
    ``planted``; with 0 (a plan, already smoothed) they are used as they are."""
    y, eydt = spring_rate(halflife, dt)
    for f in range(ankles.shape[0]):
        for k in range(ankles.shape[1]):
            o = offsets[f, k]
            if halflife > 0.0:
                o = max(spring_advance(spring, k, o, halflife, y, eydt, dt), planted[f, k])
            targets[f, k, 0] = ankles[f, k, 0] + shift[f, k, 0]
            targets[f, k, 1] = ankles[f, k, 1] + o
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
def pelvis_need_run(joints_p, targets, root, lengths, prm, need):
    """Step 5a: how far the pelvis must come down so that no leg straightens beyond the
    source's extension or ``max_extension`` (smooth maxima of the two, then a smooth minimum
    with ``extension_cap``: no kinks), the largest over the legs, clipped to ``[0,
    max_pelvis_drop]``.

    Args:
        joints_p: ``(F, K, 3, 3)`` hip, knee and ankle world positions (source).
        targets: ``(F, K, 3)`` ankle targets; root: ``(F,)`` the root's vertical offset.
        lengths: ``(K,)`` leg lengths (thigh plus shin).
        prm: ``[leg length unit, max_extension, extension_cap, max_pelvis_drop (units)]``.
        need: ``(F,)`` out.
    """
    unit, max_ext, cap, max_drop = prm[0], prm[1], prm[2], prm[3]
    band = 0.01 * unit
    for f in range(targets.shape[0]):
        top = 0.0
        for k in range(targets.shape[1]):
            sx = joints_p[f, k, 2, 0] - joints_p[f, k, 0, 0]
            sy = joints_p[f, k, 2, 1] - joints_p[f, k, 0, 1]
            sz = joints_p[f, k, 2, 2] - joints_p[f, k, 0, 2]
            src = math.sqrt(sx * sx + sy * sy + sz * sz)
            # (a smooth max less half its band: never above the larger of the two, no kink)
            reach = smooth_max(src, max_ext * lengths[k], band)
            reach = smooth_min(reach - 0.5 * band, cap * lengths[k], band)
            d = pelvis_drop(
                joints_p[f, k, 0, 0], joints_p[f, k, 0, 1] + root[f], joints_p[f, k, 0, 2],
                targets[f, k, 0], targets[f, k, 1], targets[f, k, 2], reach,
            )  # fmt: skip
            top = max(top, d)
        need[f] = min(top, max_drop)


@njit(cache=True)
def pelvis_hold_run(need, band, dt, halflife, spring, drop):
    """Step 5b, causal (live without a plan): the drop follows ``need (F,)`` at once when it
    grows and comes back on a spring (``halflife``, ``spring (3, 1)``); a smooth maximum of
    the two (width ``band``) keeps the hand-over free of kinks. ``drop (F,)`` out."""
    y, eydt = spring_rate(halflife, dt)
    for f in range(need.shape[0]):
        held = spring_advance(spring, 0, need[f], halflife, y, eydt, dt)
        drop[f] = smooth_max(need[f], held, band) - 0.5 * band


@njit(cache=True)
def legs_run(
    joints_p, joints_r, parent_r, targets, root, found, align, consts, dt, halflife,
    weight, out_r, reached,
):  # fmt: skip
    """Steps 6 and 7b: two-bone leg IK and the ankle turn, per frame.

    Args:
        joints_p: ``(F, K, 3, 3)`` hip, knee and ankle world positions (source).
        joints_r: ``(F, K, 3, 4)`` their world rotations; parent_r: ``(F, K, 4)`` the hip's
            parent's world rotation.
        targets: ``(F, K, 3)`` ankle targets.
        root: ``(F,)`` the root's vertical offset (pelvis drop included).
        found: ``(F, K)`` ground found: the IK weight's goal, on a spring (``halflife``,
            ``weight (3, K)``).
        align: ``(F, K, 4)`` the ankle turns of step 7a.
        consts: two-bone constants (:func:`~ikrig.solvers._two_bone_kernels.make_consts`).
        out_r: ``(F, K, 3, 4)`` out: new local rotations of hip, knee and ankle.
        reached: ``(F, K)`` out.
    """
    yw, ew = spring_rate(halflife, dt)
    zero, one, half, two, three = (
        consts[C_ZERO], consts[C_ONE], consts[C_HALF], consts[C_TWO], consts[C_THREE],
    )  # fmt: skip
    soften, max_stretch, tol = consts[C_SOFTEN], consts[C_MAX_STRETCH], consts[C_TOL]
    eps, perp = consts[C_EPS], consts[C_PERP]
    for f in range(targets.shape[0]):
        up = root[f]
        for k in range(targets.shape[1]):
            # 6. leg IK on the shifted pose, weighted out where no ground was found
            w = spring_advance(weight, k, 1.0 if found[f, k] else 0.0, halflife, yw, ew, dt)
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


@njit(cache=True)
def smootherstep(u):
    """``6u^5 - 15u^4 + 10u^3`` of ``u`` clipped to [0, 1] (zero slope and curvature at both
    ends)."""
    u = min(max(u, 0.0), 1.0)
    return u * u * u * (u * (6.0 * u - 15.0) + 10.0)


@njit(cache=True)
def swing_bump(u):
    """``16 u^2 (1 - u)^2``: 1 at mid-swing, 0 with zero slope at lift-off and landing."""
    u = min(max(u, 0.0), 1.0)
    return 16.0 * u * u * (1.0 - u) ** 2


@njit(cache=True)
def spans_of(mask):
    """``(starts, ends)`` of the runs of True in ``mask (F,)`` (``[start, end)``)."""
    F = mask.shape[0]
    starts = []
    ends = []
    f = 0
    while f < F:
        if mask[f]:
            s = f
            while f < F and mask[f]:
                f += 1
            starts.append(s)
            ends.append(f)
        else:
            f += 1
    return starts, ends


@njit(cache=True)
def plan_run(planted, clearance, contacts, ramp, max_bump, out):
    """Step 4b, offline (see :func:`~ikrig.pipelines.foot_steps.plan_foot_offsets`), one
    foot: ``planted, clearance (F,)``, ``contacts (F,)`` bool, ``ramp`` frames, ``max_bump``
    in data units; ``out (F,)``."""
    F = planted.shape[0]
    starts, ends = spans_of(contacts)
    if len(starts) == 0:  # never planted: the highest ground so far, never cutting into it
        top = -math.inf
        for f in range(F):
            top = max(top, planted[f])
            out[f] = top
        return
    stance = planted.copy()
    for i in range(len(starts)):  # the animation's own clearance blended out mid-contact
        s, e = starts[i], ends[i]
        for f in range(s, e):
            keep = 1.0 - smootherstep((f - s + 1) / ramp) * smootherstep((e - f) / ramp)
            stance[f] = planted[f] + clearance[f] * keep
            out[f] = stance[f]
    # air phases between (last contact frame or -1) and (next contact frame or F)
    for i in range(len(starts) + 1):
        a = ends[i - 1] - 1 if i > 0 else -1
        b = starts[i] if i < len(starts) else F
        if b <= a + 1:
            continue
        d_a = stance[a] if a >= 0 else stance[b]
        d_b = stance[b] if b < F else d_a
        span = max(b - a, 1)
        amp = 0.0
        for f in range(a + 1, b):
            u = (f - a) / span
            base = d_a + (d_b - d_a) * smootherstep(u)
            shape = _swing_shape(u, a, b, F)
            # near lift-off and landing the foot is still on the ground: a scuff there is
            # not worth a high bump (shape ~ 0), so the amplitude divides by at least 0.25
            amp = max(amp, max(planted[f] - base, 0.0) / max(shape, 0.25))
        amp = min(amp, max_bump)
        for f in range(a + 1, b):
            u = (f - a) / span
            base = d_a + (d_b - d_a) * smootherstep(u)
            out[f] = base + amp * _swing_shape(u, a, b, F)


@njit(cache=True)
def _swing_shape(u, a, b, F):
    if a < 0:  # before the first contact: high at the start, down to the landing
        return smootherstep(2.0 * (1.0 - u))
    if b >= F:  # after the last contact: up from the lift-off, then held
        return smootherstep(2.0 * u)
    return swing_bump(u)


@njit(cache=True)
def hysteresis(enter, stay, out):
    """``out[f]``: on from a frame where ``enter`` until the first frame without ``stay``."""
    on = False
    for f in range(enter.shape[0]):
        on = stay[f] if on else enter[f]
        out[f] = on
