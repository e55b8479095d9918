"""Matplotlib plumbing: optional-import checks, off-screen figures, saving, pixel grabs.

Figures are saved atomically (:func:`ikrig._files.atomic_path`): a failed or killed save
leaves the previous file as it was.

Figures are made with ``matplotlib.figure.Figure`` and the Agg canvas directly, never with
``pyplot``: nothing global changes (no backend switch, no figure manager), so the plots work
in scripts, tests and servers without a display.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._files import atomic_path, check_output
from ..errors import IkrigError

#: The picture formats :func:`save_figure` writes (the format comes from the suffix).
IMAGE_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg")


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
    """Write ``fig`` to ``path`` atomically and return it; the format comes from the suffix
    (:data:`IMAGE_SUFFIXES`), the folder is created if needed.

    Raises:
        InputError: an unsupported suffix or a folder that cannot be written (before drawing).
    """
    path = check_output(path, suffixes=IMAGE_SUFFIXES, what="picture")
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix[1:].lower(), facecolor=fig.get_facecolor())
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
