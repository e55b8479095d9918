"""Option records of the pictures and movies (frozen; build a changed copy with
:func:`dataclasses.replace`).

- :class:`SolveLimits`: the iteration limit and tolerance of the chain solvers drawn;
- :class:`Canvas`: title, size and resolution of a new figure;
- :class:`ChainLook`: how :func:`~ikrig.viz.chain2d.plot_chain_2d` draws (iterations, figure);
- :class:`ChainStyle`: colour, opacity, order and label of one pose of a planar chain;
- :class:`View`: how a skeleton on its ground is seen in 3D
  (:func:`~ikrig.viz.scene3d.plot_skeleton_3d`, :class:`~ikrig.viz.scene3d.SkeletonScene`);
- :class:`MovieLook`: the frames of :func:`~ikrig.viz.movie.write_before_after_movie`.

Importing this module loads no plotting library.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Canvas", "ChainLook", "ChainStyle", "MovieLook", "SolveLimits", "View"]


@dataclass(frozen=True)
class SolveLimits:
    """Options of the chain solvers a picture runs.

    Attributes:
        max_iterations: the most iterations (for convergence curves: the most tried).
        tolerance: stop within this distance of the target, relative to the chain's length.
    """

    max_iterations: int = 100
    tolerance: float = 1e-3


@dataclass(frozen=True)
class Canvas:
    """A new figure: its title, size and resolution.

    Attributes:
        title: the title; ``None`` lets the plot function write one.
        figsize: width and height in inches; ``None`` is the plot function's own default.
        dpi: dots per inch.
    """

    title: str | None = None
    figsize: tuple[float, float] | None = None
    dpi: float = 110


@dataclass(frozen=True)
class ChainLook:
    """How a planar chain solve is drawn (:func:`~ikrig.viz.chain2d.plot_chain_2d`).

    Attributes:
        iterations: draw the pose after each iteration faded behind the final pose, and the
            start pose dashed.
        max_ghosts: at most this many iterations are drawn, spread over the run.
        title: figure title (default: solver, iterations, error).
        figsize: size in inches (default: 7 wide, fitted to the drawing).
        dpi: resolution.
    """

    iterations: bool = True
    max_ghosts: int = 8
    title: str | None = None
    figsize: tuple[float, float] | None = None
    dpi: float = 110


@dataclass(frozen=True)
class ChainStyle:
    """How one pose of a planar chain is stroked (:func:`~ikrig.viz.chain2d.draw_chain_2d`).

    Attributes:
        color: the bones' fill colour (any matplotlib colour; default a mid blue).
        alpha: opacity of everything drawn.
        zorder: drawing order of the bones (fans below, joints above).
        label: legend label, or ``None``.
    """

    color: str | tuple[float, ...] = "#3b6fb6"
    alpha: float = 1.0
    zorder: float = 3
    label: str | None = None


@dataclass(frozen=True)
class View:
    """How a skeleton on its ground is seen in 3D. The view follows the character.

    Attributes:
        window: half-size of the ground square shown around the pelvis, in leg lengths.
        elev: camera elevation (degrees).
        azim_offset: camera azimuth relative to the side view of the walking direction
            (degrees).
        rays: draw the vertical ray casts under each sole point with their hits and normals.
        title: the axes title (:func:`~ikrig.viz.scene3d.plot_skeleton_3d` writes one when
            ``None``; a :class:`~ikrig.viz.scene3d.SkeletonScene` then has none).
        figsize, dpi: size in inches and resolution of the figure
            :func:`~ikrig.viz.scene3d.plot_skeleton_3d` makes.
    """

    window: float = 1.0
    elev: float = 14.0
    azim_offset: float = -25.0
    rays: bool = True
    title: str | None = None
    figsize: tuple[float, float] = (7.0, 6.0)
    dpi: float = 110


@dataclass(frozen=True)
class MovieLook:
    """The frames of a before/after movie.

    Attributes:
        size: frame size in inches; pixels are ``size * dpi``.
        dpi: resolution.
        labels: the two panel titles (default: before and after foot IK).
        window: half-size of the ground shown around the character, in leg lengths.
        title: a line over both panels; ``None`` lets
            :func:`~ikrig.viz.movie.write_before_after_movie` say when frames are skipped.
    """

    size: tuple[float, float] = (10.0, 5.0)
    dpi: float = 80
    labels: tuple[str, str] | None = None
    window: float = 1.0
    title: str | None = None
