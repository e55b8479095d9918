"""glTF animation samplers evaluated at given times, and the time grid a clip is sampled on.

``STEP`` holds each key until the next; ``LINEAR`` interpolates vectors linearly and
rotations by slerp along the shortest path; ``CUBICSPLINE`` is the glTF cubic Hermite spline
(each key stores in-tangent, value, out-tangent; tangents are scaled by the key interval),
rotations normalised afterwards. Before the first key the first value holds, after the last
key the last value.
"""

from __future__ import annotations

import numpy as np

from ...math.quat import quat_normalize, quat_slerp

INTERPOLATIONS = ("LINEAR", "STEP", "CUBICSPLINE")

MAX_FRAMES = 100_000
"""The most frames a glTF animation is sampled to (55 minutes at 30 fps): a key time of
1e9 s must not ask for gigabytes."""
MAX_SAMPLES = 2_000_000
"""The most frames x sampled nodes (about 1 GB of working arrays)."""


def densest_rate(key_sets: list[np.ndarray]) -> float:
    """Frames per second of the densest sampler (the inverse of its mean key spacing), or 30
    when no sampler has two keys apart: the rate :func:`time_grid` samples at when the
    samplers' keys differ."""
    spacing = [(float(k[-1]) - float(k[0])) / (len(k) - 1) for k in key_sets if len(k) > 1]
    return 1.0 / min((d for d in spacing if d > 0), default=1.0 / 30.0)


def grid_problem(key_sets: list[np.ndarray], fps: float | None, nodes: int) -> str | None:
    """Why sampling ``key_sets`` at ``fps`` (``None``: as :func:`time_grid` chooses) on
    ``nodes`` nodes is refused (:data:`MAX_FRAMES`, :data:`MAX_SAMPLES`), or ``None``.
    Decided before anything is allocated."""
    start = min(float(k[0]) for k in key_sets)
    end = max(float(k[-1]) for k in key_sets)
    own = max(len(k) for k in key_sets)
    # at least 30 fps: a span of key times past MAX_FRAMES at 30 fps is refused however
    # sparse its keys (as before the densest rate), and a dense sampler counts at its rate
    rate = max(densest_rate(key_sets), 30.0) if fps is None else fps
    frames = max(float(own), (end - start) * rate + 1.0)
    if not frames <= MAX_FRAMES:
        return (
            f"key times from {start:.6g} to {end:.6g} s would make over {MAX_FRAMES} frames"
            f" (at most {MAX_FRAMES} are sampled)"
        )
    if frames * max(nodes, 1) > MAX_SAMPLES:
        return (
            f"{int(frames)} frames of {nodes} nodes are more than the {MAX_SAMPLES} samples"
            " ikrig reads"
        )
    return None


def sample(
    keys: np.ndarray, values: np.ndarray, interpolation: str, t: np.ndarray, rotation: bool
) -> np.ndarray:
    """Evaluate one sampler.

    Args:
        keys: ``(K,)`` increasing key times (seconds).
        values: ``(K, D)`` key values, or ``(3 K, D)`` for ``CUBICSPLINE`` (in-tangent,
            value, out-tangent per key).
        interpolation: one of :data:`INTERPOLATIONS`.
        t: ``(F,)`` times to evaluate at.
        rotation: the values are xyzw quaternions (slerp, normalised results).

    Returns:
        ``(F, D)`` float64.
    """
    keys = np.asarray(keys, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    cubic = interpolation == "CUBICSPLINE"
    if cubic:
        v3 = values.reshape(len(keys), 3, -1)
        a_in, v, b_out = v3[:, 0], v3[:, 1], v3[:, 2]
    else:
        v = values
    if len(keys) == 1:
        out = np.repeat(v[:1], len(t), axis=0)
        return quat_normalize(out) if rotation else out
    if interpolation == "STEP":
        i = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 1)
        out = v[i].copy()
        return quat_normalize(out) if rotation else out
    i = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 2)
    dt = keys[i + 1] - keys[i]
    u = np.clip((t - keys[i]) / np.where(dt > 0, dt, 1.0), 0.0, 1.0)
    u = np.where(dt > 0, u, (t >= keys[i + 1]).astype(np.float64))
    if not cubic:
        if rotation:
            return quat_slerp(quat_normalize(v[i]), quat_normalize(v[i + 1]), u)
        return v[i] + (v[i + 1] - v[i]) * u[:, None]
    u2, u3 = u * u, u * u * u
    h00 = 2 * u3 - 3 * u2 + 1
    h10 = (u3 - 2 * u2 + u) * dt
    h01 = -2 * u3 + 3 * u2
    h11 = (u3 - u2) * dt
    out = (
        h00[:, None] * v[i]
        + h10[:, None] * b_out[i]
        + h01[:, None] * v[i + 1]
        + h11[:, None] * a_in[i + 1]
    )
    return quat_normalize(out) if rotation else out


def uniform_step(keys: np.ndarray) -> float | None:
    """The spacing of ``keys`` when they are uniformly spaced (to float32 rounding), else
    ``None`` (also for fewer than two keys)."""
    if len(keys) < 2:
        return None
    d = np.diff(keys)
    step = (keys[-1] - keys[0]) / (len(keys) - 1)
    tol = 1e-4 * step + 4 * np.finfo(np.float32).eps * max(abs(keys[0]), abs(keys[-1]))
    return float(step) if step > 0 and np.all(np.abs(d - step) <= tol) else None


def time_grid(key_sets: list[np.ndarray], fps: float | None) -> tuple[np.ndarray, float, bool]:
    """The times a clip is sampled at.

    Args:
        key_sets: the input key times of every sampler used (at least one).
        fps: frames per second, or ``None``: the keys' own times when every sampler has the
            same uniformly spaced keys, else about the densest sampler's rate (its mean key
            spacing, the rate that puts a frame on the last key too: a 60 fps walk whose
            constant channels keep 2 keys stays 60 fps), or 30 when no sampler has two keys
            apart.

    Returns:
        ``(times (F,), frame_time, own_keys)``: times run from the first key on the
        animation's own clock, one frame every ``frame_time`` seconds, to the last key
        (with an explicit ``fps``: the last frame at or before the last key).
        ``own_keys`` tells whether the times are the keys themselves.
    """
    start = min(float(k[0]) for k in key_sets)
    end = max(float(k[-1]) for k in key_sets)
    if fps is None:
        first = key_sets[0]
        same = all(len(k) == len(first) and np.array_equal(k, first) for k in key_sets)
        step = uniform_step(first) if same else None
        if step is not None:
            return np.asarray(first, dtype=np.float64).copy(), step, True
        intervals = max(int(round((end - start) * densest_rate(key_sets))), 1)
        if end > start:  # the densest sampler's rate, the first and last keys both on a frame
            return (
                start + (end - start) * np.arange(intervals + 1) / intervals,
                (end - start) / intervals,
                False,
            )
        fps = 30.0
    frame_time = 1.0 / fps
    n = int(np.floor((end - start) * fps + 1e-6)) + 1
    return start + np.arange(n) * frame_time, frame_time, False
