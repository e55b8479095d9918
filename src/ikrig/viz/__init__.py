"""Pictures, movies and browser tools. Nothing in the core imports this package.

Matplotlib (the ``[plot]`` extra: matplotlib, Pillow; MP4 also needs imageio-ffmpeg):

- :func:`plot_chain_2d` (:mod:`.chain2d`): a planar chain drawn like a game-engine gizmo, with
  joint-limit fans, the target, and each solver iteration faded behind the final pose;
- :func:`plot_skeleton_3d` (:mod:`.scene3d`): a skeleton on its ground in 3D, with the ray
  casts and their hits, contacts and IK targets;
- :func:`write_before_after_movie` / :func:`write_before_after_gif` (:mod:`.movie`): the
  baseline beside the foot-placement result, as GIF or MP4;
- :func:`plot_foot_diagnostics`, :func:`plot_convergence` (:mod:`.diagnostics`).

viser (the ``[viewer]`` extra):

- :class:`ClipViewer` / :func:`view_clip` (:mod:`.viewer`): a clip on a ground with live foot
  IK in the browser;
- :class:`Playground` / :func:`run_playground` (:mod:`.playground`): drag a target, watch a
  chain solve.

The names are imported lazily: ``import ikrig.viz`` loads neither matplotlib nor viser. A
missing extra raises :class:`~ikrig.viz._mpl.MissingDependencyError` (an
:class:`~ikrig.errors.IkrigError`) naming it.
"""

from __future__ import annotations

import importlib

_NAMES = {
    "plot_chain_2d": "chain2d",
    "draw_chain_2d": "chain2d",
    "default_chain": "chain2d",
    "plot_skeleton_3d": "scene3d",
    "SkeletonScene": "scene3d",
    "write_before_after_movie": "movie",
    "write_before_after_gif": "movie",
    "plot_foot_diagnostics": "diagnostics",
    "plot_convergence": "diagnostics",
    "ground_mesh": "geometry",
    "ClipViewer": "viewer",
    "view_clip": "viewer",
    "Playground": "playground",
    "run_playground": "playground",
    "MissingDependencyError": "_mpl",
    "IMAGE_SUFFIXES": "_mpl",
    "require": "_mpl",
    "serve_forever": "_viser",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'ikrig.viz' has no attribute {name!r}")
    # not cached here: a lookup always reads the defining module, so that a name patched
    # there (a test's monkeypatch) is the one every caller gets, whatever ran first
    return getattr(importlib.import_module(f".{module}", __name__), name)
