"""A planar chain drawn like a game engine's IK gizmo.

Each bone is a tapered arrow from its joint to the next, each limited joint shows its
allowed angle range as a shaded fan about its parent bone's direction (the chain root's
about its start direction, as :class:`~ikrig.constraints.AngleLimit2D` measures it), the
target is a red cross-hair and the end effector an orange dot joined to it by the residual.
Optionally every solver iteration is drawn faded behind the final pose (the solver rerun
with ``max_iterations = 1, 2, ...``), and the start pose dashed.
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..constraints import AngleLimit2D, Cone
from ._mpl import finish, new_figure
from ._solve import LABELS, solver_iterations
from .options import ChainLook, ChainStyle, SolveLimits

__all__ = ["default_chain", "draw_chain_2d", "joint_ranges", "plot_chain_2d"]

BONE_EDGE = "#1d3557"
FAN = "#2a9d8f"
TARGET = "#d62828"
EFFECTOR = "#f77f00"


def default_chain(bones: int = 4, limit_deg: float = 60.0):
    """A demo planar chain: ``(positions (bones + 1, 2), constraints)``.

    Bones shrink from 1.0 towards the tip and start in a gentle arc; every joint is limited
    to ``+-limit_deg`` from its parent bone (the root to ``+-90`` from its start direction).
    """
    lengths = 1.0 * 0.82 ** np.arange(bones)
    angles = np.radians(20.0) - np.radians(12.0) * np.arange(bones)
    d = np.stack([np.cos(angles), np.sin(angles)], axis=-1) * lengths[:, None]
    pos = np.concatenate([[[0.0, 0.0]], np.cumsum(d, axis=0)])
    cons = [AngleLimit2D.degrees(-90, 90)] + [
        AngleLimit2D.degrees(-limit_deg, limit_deg) for _ in range(bones - 1)
    ]
    return pos, cons


def joint_ranges(positions, constraints, rest_positions=None):
    """Allowed bone directions of each joint in the XY plane, as absolute angle ranges.

    Args:
        positions: ``(n + 1, 2 | 3)`` the pose drawn.
        constraints: ``n`` entries (:class:`AngleLimit2D`, a default-axis :class:`Cone`, or
            ``None``).
        rest_positions: the start pose (the root's reference direction); default
            ``positions``.

    Returns:
        A list of ``n`` entries, ``None`` (free) or ``(start, stop)`` radians measured
        counter-clockwise from +X.
    """
    p = np.asarray(positions, dtype=np.float64)[:, :2]
    rest = p if rest_positions is None else np.asarray(rest_positions, dtype=np.float64)[:, :2]
    out: list[tuple[float, float] | None] = []
    for i, c in enumerate(constraints or [None] * (len(p) - 1)):
        ref = rest[1] - rest[0] if i == 0 else p[i] - p[i - 1]
        base = math.atan2(ref[1], ref[0])
        if isinstance(c, AngleLimit2D):
            if c.max_angle - c.min_angle >= 2 * math.pi or abs(abs(c.normal[2]) - 1) > 1e-6:
                out.append(None)
                continue
            lo, hi = (c.min_angle, c.max_angle) if c.normal[2] > 0 else (-c.max_angle, -c.min_angle)
            out.append((base + lo, base + hi))
        elif isinstance(c, Cone) and c.axis is None:
            out.append((base - c.limit, base + c.limit))
        else:
            out.append(None)
    return out


def _bone_polygon(a, b, width=0.09):
    d = b - a
    length = float(np.hypot(*d))
    if length < 1e-12:
        return None
    perp = np.array([-d[1], d[0]]) / length
    h = width * length
    return np.array([a, a + 0.18 * d + h * perp, b, a + 0.18 * d - h * perp])


def draw_chain_2d(
    ax,
    positions,
    constraints=None,
    rest_positions=None,
    *,
    fans: bool = True,
    ghost: bool = False,
    style: ChainStyle | None = None,
) -> None:
    """Draw one pose of a planar chain on a matplotlib ``ax`` (XY plane).

    A full pose gets bone arrows, joint discs and limit fans (``fans``; needs
    ``constraints``, measured from ``rest_positions`` at the root); ``ghost=True`` draws a
    thin polyline with small dots (for iterations and start poses). ``style``: colour,
    opacity, drawing order and legend label (:class:`~ikrig.viz.options.ChainStyle`).
    """
    from matplotlib.patches import Circle, Polygon, Wedge

    style = style or ChainStyle()
    color, alpha, zorder, label = style.color, style.alpha, style.zorder, style.label

    p = np.asarray(positions, dtype=np.float64)[:, :2]
    lengths = np.linalg.norm(np.diff(p, axis=0), axis=-1)
    scale = float(lengths.mean()) if len(lengths) else 1.0
    if ghost:
        ax.plot(
            p[:, 0],
            p[:, 1],
            "-o",
            color=color,
            alpha=alpha,
            lw=1.4,
            ms=3.5,
            zorder=zorder,
            label=label,
        )
        return
    if fans and constraints is not None:
        ranges = joint_ranges(p, constraints, rest_positions)
        first = next((i for i, rng in enumerate(ranges) if rng is not None), -1)
        for i, rng in enumerate(ranges):
            if rng is None:
                continue
            r = 0.45 * (lengths[i] if lengths[i] > 0 else scale)
            t0, t1 = np.degrees(rng)
            ax.add_patch(
                Wedge(
                    p[i],
                    r,
                    t0,
                    t1,
                    facecolor=FAN,
                    alpha=0.22 * alpha,
                    edgecolor=FAN,
                    lw=1.0,
                    zorder=zorder - 1,
                    label="joint limits" if i == first else None,
                )
            )
            rest = p if rest_positions is None else np.asarray(rest_positions)[:, :2]
            d = rest[1] - rest[0] if i == 0 else p[i] - p[i - 1]
            ref = p[i] + 1.15 * r * d / max(float(np.hypot(*d)), 1e-12)
            ax.plot(
                [p[i][0], ref[0]],
                [p[i][1], ref[1]],
                ls=(0, (2, 2)),
                color=FAN,
                lw=0.9,
                alpha=0.8 * alpha,
                zorder=zorder - 0.9,
            )
    for i in range(len(p) - 1):
        poly = _bone_polygon(p[i], p[i + 1])
        if poly is not None:
            ax.add_patch(
                Polygon(
                    poly,
                    closed=True,
                    facecolor=color,
                    edgecolor=BONE_EDGE,
                    lw=1.2,
                    alpha=alpha,
                    zorder=zorder,
                    label=label if i == 0 else None,
                )
            )
    for i, q in enumerate(p[:-1]):
        ax.add_patch(
            Circle(
                q,
                0.06 * scale,
                facecolor="white",
                edgecolor=BONE_EDGE,
                lw=1.4,
                alpha=alpha,
                zorder=zorder + 0.5,
            )
        )
        if i == 0:
            ax.add_patch(
                Circle(q, 0.03 * scale, facecolor=BONE_EDGE, alpha=alpha, zorder=zorder + 0.6)
            )


def _draw_target(ax, target, effector, scale):
    from matplotlib.patches import Circle

    t = np.asarray(target, dtype=np.float64)[:2]
    e = np.asarray(effector, dtype=np.float64)[:2]
    r = 0.12 * scale
    ax.add_patch(Circle((t[0], t[1]), r, facecolor="none", edgecolor=TARGET, lw=2.0, zorder=6))
    ax.plot([t[0] - 1.6 * r, t[0] + 1.6 * r], [t[1], t[1]], color=TARGET, lw=1.5, zorder=6)
    ax.plot(
        [t[0], t[0]],
        [t[1] - 1.6 * r, t[1] + 1.6 * r],
        color=TARGET,
        lw=1.5,
        zorder=6,
        label="target",
    )
    ax.plot([e[0], t[0]], [e[1], t[1]], ":", color=TARGET, lw=1.2, zorder=5)
    ax.plot(
        [e[0]], [e[1]], "o", color=EFFECTOR, ms=8, mec=BONE_EDGE, zorder=7, label="end effector"
    )


def plot_chain_2d(
    positions,
    target,
    constraints=None,
    *,
    solver: str = "ccd2d",
    limits: SolveLimits | None = None,
    path: str | os.PathLike | None = None,
    look: ChainLook | None = None,
    ax=None,
):
    """Solve a planar chain and draw it gizmo-style, with its iterations faded behind.

    Args:
        positions: ``(n + 1, 2 | 3)`` the start pose (XY plane), root first.
        target: ``(2 | 3,)`` the effector's target.
        constraints: ``None`` or ``n`` entries (:class:`~ikrig.constraints.AngleLimit2D`, a
            default-axis :class:`~ikrig.constraints.Cone`, or ``None``), drawn as fans.
        solver: ``"ccd2d"`` (default), ``"ccd"``, ``"fabrik"``, ``"follow"`` or ``"dls"``.
        limits: solver options (tolerance relative to the chain length; default 100
            iterations, 1e-3).
        path: save the figure here (PNG, SVG, PDF) when given.
        look: :class:`~ikrig.viz.options.ChainLook`: whether (and how many) iterations are
            drawn faded behind the final pose, title, figure size and resolution.
        ax: draw into this matplotlib axes instead of a new figure.

    Returns:
        The matplotlib ``Figure``.
    """
    look = look or ChainLook()
    p0 = np.asarray(positions, dtype=np.float64)
    final, steps = solver_iterations(solver, p0, target, constraints, limits=limits)
    pf = np.asarray(final.positions_world)[:, :2]
    pts = np.concatenate(
        [p0[:, :2], pf, np.asarray(target, dtype=float).reshape(1, -1)[:, :2]]
        + [s[1][:, :2] for s in steps]
    )
    scale = float(np.linalg.norm(np.diff(p0[:, :2], axis=0), axis=-1).mean())
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.08 * float(max(hi - lo)) + 0.3 * scale
    figsize = look.figsize
    if ax is None:
        if figsize is None:  # fit the figure to the drawing's aspect
            span = hi - lo + 2 * pad
            figsize = (7.0, float(np.clip(6.2 * span[1] / span[0] + 0.8, 3.2, 9.0)))
        fig = new_figure(*figsize, dpi=look.dpi)
        ax = fig.add_subplot(1, 1, 1)
    else:
        fig = ax.figure
    if look.iterations:
        import matplotlib as mpl

        start = ChainStyle(color="0.55", alpha=0.8, zorder=1.5, label="start pose")
        draw_chain_2d(ax, p0, ghost=True, style=start)
        ax.lines[-1].set_linestyle("--")
        mids = [s for s in steps if 0 < s[0] < len(steps) - 1]
        if len(mids) > look.max_ghosts:
            pick = np.unique(np.linspace(0, len(mids) - 1, look.max_ghosts).round().astype(int))
            mids = [mids[i] for i in pick]
        cmap = mpl.colormaps["Blues"]
        last = np.full(2, np.inf)
        for j, (k, pk, _) in enumerate(mids):
            f = (j + 1) / (len(mids) + 1)
            faded = ChainStyle(
                color=cmap(0.35 + 0.45 * f),
                alpha=0.35 + 0.4 * f,
                zorder=2,
                label="iterations" if j == 0 else None,
            )
            draw_chain_2d(ax, pk, ghost=True, style=faded)
            if j and np.hypot(*(pk[-1, :2] - last)) < 0.08 * scale:
                continue  # labels of iterations that barely moved would overlap
            last = pk[-1, :2]
            ax.annotate(
                str(k),
                pk[-1, :2],
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=7,
                color=cmap(0.45 + 0.45 * f),
            )
    draw_chain_2d(ax, pf, constraints, rest_positions=p0, style=ChainStyle(label="solved pose"))
    _draw_target(ax, target, pf[-1], scale)
    used = int(np.asarray(final.iterations))
    err = float(np.asarray(final.error))
    ok = bool(np.asarray(final.reached))
    name = LABELS.get(solver, solver)
    ax.set_title(
        look.title
        or f"{name}: {used} iteration{'s' * (used != 1)}, error {err:.2g}"
        f" ({'reached' if ok else 'not reached'})",
        fontsize=11,
    )
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal")
    ax.grid(True, color="0.9", lw=0.8)
    ax.set_axisbelow(True)
    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    fig.tight_layout()
    return finish(fig, path)
