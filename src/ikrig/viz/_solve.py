"""One entry point over the position-level solvers, for the pictures and the playground.

:func:`solve_chain` runs a named solver on one chain of joint positions and returns a
:class:`~ikrig.solvers.result.SolveResult`; :func:`solver_iterations` reruns it with
``max_iterations = 1, 2, ...`` to show how the pose gets there, without touching the
solvers themselves.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..solvers.result import SolveResult
from .options import SolveLimits

SOLVERS = ("ccd2d", "ccd", "fabrik", "follow", "dls", "two-bone")
LABELS = {
    "ccd2d": "CCD 2D",
    "ccd": "CCD",
    "fabrik": "FABRIK",
    "follow": "follow",
    "dls": "DLS",
    "two-bone": "two-bone",
}
ITERATIVE = ("ccd2d", "ccd", "fabrik", "dls")


def two_bone_available() -> bool:
    try:
        from ..solvers import two_bone  # noqa: F401
    except ImportError:
        return False
    return True


def _two_bone(positions, target, pole, weight, soften, tolerance) -> SolveResult:
    from ..math.quat import quat_rotate
    from ..solvers.two_bone import TwoBoneOptions, two_bone_positions

    p = positions
    opts = TwoBoneOptions(soften=soften, tolerance=tolerance)
    r = two_bone_positions(p[0], p[1], p[2], target, pole_world=pole, weight=weight, options=opts)
    positions = getattr(r, "positions_world", None)  # the result's fields vary by version
    if positions is not None:
        out = np.asarray(positions, dtype=np.float64).reshape(3, 3)
    elif getattr(r, "end_world", None) is not None and getattr(r, "mid_world", None) is not None:
        out = np.stack([p[0], np.asarray(r.mid_world), np.asarray(r.end_world)]).astype(float)
    else:
        mid = p[0] + quat_rotate(np.asarray(r.root_rotation_world), p[1] - p[0])
        end_dir = quat_rotate(np.asarray(r.root_rotation_world), p[2] - p[1])
        end = mid + quat_rotate(np.asarray(r.mid_rotation_world), end_dir)
        out = np.stack([p[0], mid, end])
    err = float(np.linalg.norm(out[-1] - target))
    reached = np.asarray(getattr(r, "reached", err <= tolerance * _length(p)))
    return SolveResult(out, reached, np.asarray(err), np.asarray(1))


def _length(p) -> float:
    return float(np.linalg.norm(np.diff(p, axis=0), axis=-1).sum())


def solve_chain(
    solver: str,
    positions_world,
    target_world,
    constraints=None,
    *,
    limits: SolveLimits | None = None,
    pole_world=None,
    weight: float = 1.0,
    soften: float = 1.0,
) -> SolveResult:
    """Solve one chain with a named solver.

    Args:
        solver: one of :data:`SOLVERS`.
        positions_world: ``(n + 1, 2 | 3)`` the start (= rest) pose; 2D points get z = 0.
        target_world: ``(2 | 3,)`` the effector's target.
        constraints: ``None`` or ``n`` constraint objects / ``None`` (ignored by two-bone;
            ``ccd2d`` takes :class:`~ikrig.constraints.AngleLimit2D` only).
        limits: the solvers' iteration limit and tolerance (relative to the chain's length;
            default :class:`~ikrig.viz.options.SolveLimits` ``()``: 100 and 1e-3).
        pole_world: two-bone only: ``(3,)`` the knee's pole.
        weight: blend of the solve, 0 (start pose) .. 1. Two-bone blends its rotations; the
            chain solvers aim at ``effector + weight * (target - effector)``.
        soften: two-bone soft-IK start (1 = off).

    Returns:
        :class:`~ikrig.solvers.result.SolveResult` with 3D ``positions_world (n + 1, 3)``.
    """
    limits = limits or SolveLimits()
    max_iterations, tolerance = limits.max_iterations, limits.tolerance
    p = np.asarray(positions_world, dtype=np.float64)
    if p.ndim != 2 or p.shape[-1] not in (2, 3) or len(p) < 2:
        raise InputError(f"positions_world: expected (n + 1, 2 | 3), got {p.shape}")
    if p.shape[-1] == 2:
        p = np.column_stack([p, np.zeros(len(p))])
    t = np.zeros(3)
    tt = np.asarray(target_world, dtype=np.float64).reshape(-1)
    t[: len(tt)] = tt[:3]
    if solver == "two-bone":
        if len(p) != 3:
            raise InputError(f"two-bone: the chain needs exactly 3 joints, got {len(p)}")
        return _two_bone(p, t, pole_world, weight, soften, tolerance)
    if solver not in SOLVERS:
        raise InputError(f"solver: expected one of {', '.join(SOLVERS)}, got {solver!r}")
    t = p[-1] + float(weight) * (t - p[-1])
    cons = None if constraints is None or all(c is None for c in constraints) else constraints
    if solver == "ccd2d":
        from ..solvers.ccd2d import CCD2DOptions, ccd_2d

        r = ccd_2d(p[:, :2], t[:2], CCD2DOptions(max_iterations, tolerance), constraints=cons)
        out = np.column_stack([np.asarray(r.positions_world), np.zeros(len(p))])
        return SolveResult(out, r.reached, r.error, r.iterations, None, r.rotations_local)
    if solver == "ccd":
        from ..solvers.ccd import CCDOptions, ccd

        return ccd(p, t, CCDOptions(max_iterations, tolerance), constraints=cons)
    if solver == "fabrik":
        from ..solvers.fabrik import FabrikOptions, fabrik

        return fabrik(p, t, FabrikOptions(max_iterations, tolerance), constraints=cons)
    if solver == "follow":
        from ..solvers.follow import FollowOptions, follow

        return follow(p, t, FollowOptions(tolerance=tolerance), constraints=cons)
    from ..solvers.dls import DLSOptions, dls

    return dls(p, t, DLSOptions(max_iterations, tolerance), constraints=cons)


def solver_iterations(
    solver: str,
    positions_world,
    target_world,
    constraints=None,
    *,
    limits: SolveLimits | None = None,
) -> tuple[SolveResult, list[tuple[int, np.ndarray, float]]]:
    """The final result and the pose after each iteration.

    Returns:
        ``(final, steps)``: the :class:`SolveResult` with ``limits``, and a list of
        ``(k, positions (n + 1, 3), error)`` for ``k = 0 .. final.iterations`` (``k = 0`` is
        the start pose; one-pass solvers give ``k = 0, 1``).
    """
    limits = limits or SolveLimits()
    final = solve_chain(solver, positions_world, target_world, constraints, limits=limits)
    used = int(np.asarray(final.iterations))
    steps = []
    for k in range(0, used + 1):
        if solver in ITERATIVE:
            r = solve_chain(
                solver,
                positions_world,
                target_world,
                constraints,
                limits=SolveLimits(k, limits.tolerance),
            )
        elif k == 0:
            p = np.asarray(positions_world, dtype=np.float64)
            if p.shape[-1] == 2:
                p = np.column_stack([p, np.zeros(len(p))])
            tt = np.zeros(3)
            tgt = np.asarray(target_world, dtype=np.float64).reshape(-1)
            tt[: len(tgt)] = tgt[:3]
            steps.append((0, p, float(np.linalg.norm(p[-1] - tt))))
            continue
        else:
            r = final
        steps.append(
            (k, np.asarray(r.positions_world, dtype=np.float64), float(np.asarray(r.error)))
        )
    return final, steps
