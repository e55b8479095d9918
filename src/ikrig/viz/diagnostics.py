"""Diagnostic plots: foot clearance and pinning over time, knee angles, solver convergence.

- :func:`plot_foot_diagnostics`: one row per foot with its clearance over the ground (the
  lower sole point's height over the ground, in leg lengths) before (the baseline: root on
  the ground, no IK) and after foot placement, the contact spans shaded and the pinning curve
  on a second axis; a last row with each knee's flexion before and after.
- :func:`plot_convergence`: the effector's distance to the target after each iteration for
  CCD, FABRIK, follow and DLS on the same chain and target.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ..metrics import knee_angles
from ..signal.spans import spans
from ._mpl import finish, new_figure
from ._solve import LABELS, solve_chain
from .options import Canvas, SolveLimits

__all__ = ["foot_clearance", "plot_convergence", "plot_foot_diagnostics"]

#: The default limits of :func:`convergence_curves` and :func:`plot_convergence`.
CONVERGENCE_LIMITS = SolveLimits(40, 1e-4)

BEFORE = "#9aa5b1"
AFTER = "#1d3557"
PIN = "#f77f00"
CONTACT = "#b7e4c7"
SOLVER_COLORS = {
    "ccd": "#e76f51",
    "fabrik": "#2a9d8f",
    "follow": "#8338ec",
    "dls": "#1d3557",
    "ccd2d": "#f4a261",
    "two-bone": "#d00000",
}


def foot_clearance(motion, sole, ground) -> np.ndarray:
    """``(F, feet)`` clearance of each foot over ``ground`` (0 standing on it, negative when it
    penetrates; NaN where the ground is missing under a sole point), in the data's units."""
    rot_w, pos_w = motion.fk()
    pts = sole.points_world(rot_w, pos_w)
    h, _, mask = ground.height_at(pts[..., [0, 2]])
    c = np.min(pts[..., 1] - sole.heights - np.asarray(h, dtype=np.float64), axis=-1)
    return np.where(np.asarray(mask).all(axis=-1), c, np.nan)


def plot_foot_diagnostics(
    result,
    source,
    ground,
    *,
    path: str | os.PathLike | None = None,
    title: str | None = None,
    figsize: tuple[float, float] | None = None,
    dpi: float = 110,
):
    """Per-foot clearance and pinning over time, and knee flexion, before and after.

    Args:
        result: :class:`~ikrig.foot.offline.FootResult`.
        source: the input clip (a :class:`~ikrig.pose.Motion` or a BVH clip with ``.motion``).
        ground: the ground the result was placed on.
        path: save the figure here when given.
        title, figsize, dpi: figure title, size (inches) and resolution.

    Returns:
        The matplotlib ``Figure``.
    """
    src = source.motion if hasattr(source, "motion") else source
    legs, L = result.legs, float(result.legs.leg_length)
    feet = len(legs.legs)
    ft = float(src.frame_time or 1.0)
    t = np.arange(result.motion.num_frames) * ft
    before = foot_clearance(result.baseline, result.sole, ground) / L
    after = foot_clearance(result.motion, result.sole, ground) / L
    fig = new_figure(*(figsize or (9.0, 2.1 * (feet + 1) + 0.4)), dpi=dpi)
    axes = fig.subplots(feet + 1, 1, sharex=True)
    for k, leg in enumerate(legs.legs):
        ax = axes[k]
        for a, b in spans(result.contacts[:, k]):
            ax.axvspan(
                t[a],
                t[min(b, len(t) - 1)],
                color=CONTACT,
                alpha=0.5,
                lw=0,
                label="contact" if a == spans(result.contacts[:, k])[0][0] else None,
            )
        ax.axhline(0.0, color="0.3", lw=0.8)
        ax.plot(t, before[:, k], color=BEFORE, lw=1.5, label="before (baseline)")
        ax.plot(t, after[:, k], color=AFTER, lw=1.6, label="after")
        ax.set_ylabel(f"{leg.side} foot\nclearance (leg)", fontsize=9)
        lo = np.nanmin(np.concatenate([before[:, k], after[:, k], [0.0]]))
        hi = np.nanmax(np.concatenate([before[:, k], after[:, k], [0.1]]))
        ax.set_ylim(lo - 0.05 * (hi - lo) - 0.01, hi + 0.1 * (hi - lo))
        twin = ax.twinx()
        twin.plot(t, result.pins[:, k], color=PIN, lw=1.2, ls="--", label="pinning")
        twin.set_ylim(-0.05, 1.6)
        twin.set_ylabel("pin", color=PIN, fontsize=9)
        twin.tick_params(axis="y", colors=PIN, labelsize=8)
        ax.tick_params(labelsize=8)
        if k == 0:
            h1, l1 = ax.get_legend_handles_labels()
            h2, l2 = twin.get_legend_handles_labels()
            ax.legend(
                h1 + h2,
                l1 + l2,
                loc="lower center",
                bbox_to_anchor=(0.5, 1.0),
                fontsize=8,
                ncol=4,
                frameon=False,
            )
    ax = axes[-1]
    k_before = 180.0 - np.degrees(knee_angles(src.positions_world(), legs))
    k_after = 180.0 - np.degrees(knee_angles(result.motion.positions_world(), legs))
    styles = ("-", "-.", ":", (0, (5, 2, 1, 2, 1, 2)))  # four legs apart
    for k, leg in enumerate(legs.legs):
        ls = styles[k % len(styles)]
        ax.plot(t, k_before[:, k], color=BEFORE, lw=1.4, ls=ls, label=f"{leg.side} before")
        ax.plot(t, k_after[:, k], color=AFTER, lw=1.5, ls=ls, label=f"{leg.side} after")
    ax.set_ylabel("knee flexion (deg)", fontsize=9)
    ax.set_xlabel("time (s)", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.legend(
        loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, ncol=4, frameon=False
    )  # two legs a row: more would run off the figure
    for a in axes:
        a.grid(True, color="0.92", lw=0.8)
        a.set_xlim(t[0], t[-1] if len(t) > 1 else 1.0)
    fig.suptitle(title or "foot placement: clearance over the ground, pinning, knees", fontsize=11)
    fig.tight_layout()
    return finish(fig, path)


def convergence_curves(
    positions,
    target,
    constraints=None,
    *,
    solvers: Sequence[str] = ("ccd", "fabrik", "follow", "dls"),
    limits: SolveLimits | None = None,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{solver: (iterations (k,), errors (k,))}``: the error after ``0, 1, ...`` iterations
    (each solver rerun with ``max_iterations = k``, until it stops early or runs out of
    ``limits.max_iterations``; default 40, tolerance 1e-4)."""
    limits = limits or CONVERGENCE_LIMITS
    out = {}
    for s in solvers:
        its, errs = [], []
        for k in range(limits.max_iterations + 1):
            r = solve_chain(
                s, positions, target, constraints, limits=SolveLimits(k, limits.tolerance)
            )
            used = int(np.asarray(r.iterations))
            its.append(used)
            errs.append(float(np.asarray(r.error)))
            if used < k or s == "follow":
                break
        out[s] = (np.asarray(its), np.asarray(errs))
    return out


def plot_convergence(
    positions,
    target,
    constraints=None,
    *,
    solvers: Sequence[str] = ("ccd", "fabrik", "follow", "dls"),
    limits: SolveLimits | None = None,
    path: str | os.PathLike | None = None,
    canvas: Canvas | None = None,
):
    """Solver convergence on one chain: the effector's distance to the target (relative to
    the chain's length, log scale) against the iteration.

    Args:
        positions: ``(n + 1, 2 | 3)`` the start pose.
        target: ``(2 | 3,)`` the target.
        constraints: ``None`` or ``n`` constraints (``None`` entries free), for every solver.
        solvers: names from ``"ccd"``, ``"fabrik"``, ``"follow"``, ``"dls"``, ``"ccd2d"``.
            ``follow`` is a single pass that drags the root, so it shows as one point.
        limits: the most iterations tried; the solvers' tolerance (relative to the chain
            length; drawn as a line). Default 40 and 1e-4.
        path: save the figure here when given.
        canvas: title, size (default 7 x 4.5 inches) and resolution of the figure.

    Returns:
        The matplotlib ``Figure``.
    """
    p = np.asarray(positions, dtype=np.float64)
    length = float(np.linalg.norm(np.diff(p, axis=0), axis=-1).sum())
    limits = limits or CONVERGENCE_LIMITS
    canvas = canvas or Canvas()
    tolerance = limits.tolerance
    curves = convergence_curves(p, target, constraints, solvers=solvers, limits=limits)
    fig = new_figure(*(canvas.figsize or (7.0, 4.5)), dpi=canvas.dpi)
    ax = fig.add_subplot(1, 1, 1)
    floor = tolerance * 1e-3
    for s, (its, errs) in curves.items():
        rel = np.maximum(errs / length, floor)
        label = LABELS.get(s, s)
        if s == "follow":
            label += " (one pass, root moves)"
            ax.plot(its[-1:], rel[-1:], "D", color=SOLVER_COLORS.get(s), ms=7, label=label)
            continue
        ax.plot(its, rel, "-o", color=SOLVER_COLORS.get(s), ms=3.5, lw=1.6, label=label)
    ax.axhline(tolerance, color="0.4", ls=":", lw=1.0, label=f"tolerance {tolerance:g}")
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("distance to target / chain length")
    ax.grid(True, which="both", color="0.92", lw=0.7)
    ax.legend(fontsize=8, framealpha=0.9)
    n = len(p) - 1
    ax.set_title(
        canvas.title
        or f"convergence on a {n}-bone chain"
        f"{' with joint limits' if constraints is not None else ''}",
        fontsize=11,
    )
    fig.tight_layout()
    return finish(fig, path)
