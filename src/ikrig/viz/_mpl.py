"""Matplotlib plumbing: optional-import checks, off-screen figures, saving, pixel grabs.

Figures are made with ``matplotlib.figure.Figure`` and the Agg canvas directly, never with
``pyplot``: nothing global changes (no backend switch, no figure manager), so the plots work
in scripts, tests and servers without a display.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import IkrigError


class MissingDependencyError(IkrigError, ImportError):
    """An optional dependency (an ``ikrig[...]`` extra) is not installed."""


def require(module: str, extra: str, what: str):
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{what} needs {module.split('.')[0]} (pip install 'ikrig[{extra}]'): {exc}"
        ) from None


def new_figure(width: float, height: float, dpi: float = 100):
    """An off-screen matplotlib Figure of ``width x height`` inches with an Agg canvas."""
    require("matplotlib", "plot", "plotting")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig, path) -> Path:
    """Write ``fig`` to ``path`` (format from the extension: png, svg, pdf, jpg) and return it."""
    path = Path(os.fspath(path))
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, facecolor=fig.get_facecolor())
    return path


def figure_rgb(fig) -> np.ndarray:
    """``(H, W, 3)`` uint8 pixels of the figure as drawn now."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def finish(fig, path):
    """Save ``fig`` when ``path`` is given; return the figure either way."""
    if path is not None:
        save_figure(fig, path)
    return fig
