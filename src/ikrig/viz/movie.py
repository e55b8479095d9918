"""Before/after movies of foot placement: the baseline beside the result, to GIF or MP4.

The left panel is the do-nothing baseline (the root follows the ground, no IK: feet sink
into steps and float over dips), the right panel the foot-placement result with its IK
targets and contacts. Both cameras follow the character's pelvis (not joint 0, which some
rigs keep on the ground at the origin: :func:`~ikrig.viz.geometry.body_joint`). Long clips
are frame-skipped so the file stays small: at most ``max_frames`` frames are written, evenly
spaced, and each is shown until the next one's time, so the movie runs in real time (a GIF's
delays add up to the clip's duration, to 10 ms; no GIF frame is shorter than 20 ms, so
high-rate clips skip frames). A movie that skips frames says so in its title.

GIFs are written with Pillow, MP4 with imageio-ffmpeg (which ships its own ffmpeg binary);
both come with the ``[plot]`` extra (``pip install 'ikrig[plot]'``). Movies are written
atomically (:func:`ikrig._files.atomic_path`): a failed or killed write leaves the previous
file as it was.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .._files import atomic_path, check_output
from ..errors import InputError
from ..pose import Motion
from ._mpl import figure_rgb, new_figure, require
from .geometry import body_joint, walking_axes
from .options import MovieLook, View
from .scene3d import MARKS, PALETTE, SceneSetup, SkeletonScene

__all__ = [
    "BeforeAfter",
    "check_movie_path",
    "frame_indices",
    "gif_durations",
    "subsampling_note",
    "write_before_after_gif",
    "write_before_after_movie",
]

FORMATS = (".gif", ".mp4")


#: Shortest GIF frame delay (s): browsers play shorter delays (10 ms, 0) far slower.
GIF_MIN_DELAY = 0.02


def frame_indices(num_frames: int, max_frames: int, min_step: int = 1) -> np.ndarray:
    """The frames a movie shows: every ``step``-th frame, ``step = ceil(F / max_frames)``
    (at least ``min_step``)."""
    if max_frames < 1:
        raise InputError(f"max_frames: must be >= 1, got {max_frames}")
    step = max(1, int(min_step), math.ceil(num_frames / max_frames))
    return np.arange(0, num_frames, step)


def gif_durations(indices, num_frames: int, seconds_per_frame: float) -> list[int]:
    """Delays (ms, multiples of 10 as GIF stores them) of the shown ``indices`` of a clip of
    ``num_frames`` frames of ``seconds_per_frame`` each: each shown frame lasts until the
    next one's time (the last until the clip's end), rounded on the running total so the
    delays add up to the clip's duration within 10 ms (no delay under 20 ms)."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    ends = np.append(idx[1:], num_frames) * float(seconds_per_frame)
    total = np.round(ends * 100.0).astype(np.int64) * 10
    return [max(20, int(d)) for d in np.diff(total, prepend=0)]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def subsampling_note(num_frames: int, indices, fps: float | None = None) -> str | None:
    """The movie's title when it does not show every frame in real time (else ``None``)."""
    idx = np.asarray(indices).reshape(-1)
    step = int(idx[1] - idx[0]) if len(idx) > 1 else 1
    speed = "in real time" if not fps else f"at {fps:g} frames per second"
    if step > 1:
        return f"every {_ordinal(step)} frame of {num_frames} shown ({len(idx)} frames), {speed}"
    return f"all {num_frames} frames, {speed}" if fps else None


def _motion(x) -> Motion:
    return x.motion if hasattr(x, "motion") and not isinstance(x, Motion) else x


class BeforeAfter:
    """The figure of the before/after movie: two :class:`SkeletonScene` panels (baseline on
    the left, result on the right, ``scenes``) on one figure (``fig``), moved to a frame and
    grabbed as pixels by :meth:`frame`. Its legend holds the marks drawn on the frames
    ``indices`` (default: all). See :func:`write_before_after_movie` for the other
    arguments."""

    def __init__(self, result, source, ground, look: MovieLook | None = None, indices=None) -> None:
        look = look or MovieLook()
        self.result, self.src = result, _motion(source)
        self.fig = fig = new_figure(*look.size, dpi=look.dpi)
        fig.subplots_adjust(left=0.0, right=1.0, bottom=0.08, top=0.92, wspace=0.0)
        L = float(result.legs.leg_length)
        #: the joint both cameras follow: the pelvis of the result's legs
        self.body = body_joint(self.src.skeleton, result.legs)
        self.base = result.baseline.fk()
        self.res = result.motion.fk()
        w, _ = walking_axes(self.res[1][:, self.body, [0, 2]])
        left, right = look.labels or ("before: root on the ground, no IK", "after: ikrig foot IK")
        setup = SceneSetup(result.legs, result.sole, L)
        self.scenes = []
        for k, title in enumerate((left, right)):
            ax = fig.add_subplot(1, 2, k + 1, projection="3d")
            view = View(window=look.window, title=title)
            self.scenes.append(
                SkeletonScene(
                    ax,
                    self.src.skeleton,
                    ground,
                    setup,
                    direction_xz=w,
                    view=view,
                    cells=24,
                    ticks=False,
                )
            )
        static = []
        if look.title:
            fig.subplots_adjust(top=0.86)
            static.append(fig.suptitle(look.title, y=0.985, fontsize=9, color="0.25"))
        self.text = fig.text(0.01, 0.015, "", ha="left", fontsize=8, color="0.3")
        labels = self.legend_labels(
            np.arange(result.motion.num_frames) if indices is None else indices
        )
        legend = fig.legend(
            handles=self.scenes[1].legend_handles(labels),
            loc="lower center",
            bbox_to_anchor=(0.58, 0.0),
            ncol=(len(labels) + 1) // 2,
            fontsize=7,
            frameon=False,
            handlelength=1.6,
            columnspacing=1.2,
        )
        #: the artists that look the same on every frame (titles, legend): drawn once
        self.static = [*static, *_fixed_titles(fig, [sc.ax for sc in self.scenes]), legend]
        self.overlay = StaticOverlay.draw(fig, self.static)
        self.frame_time = float(self.src.frame_time or result.motion.frame_time or 1 / 30)

    def legend_labels(self, indices) -> list[str]:
        """The kinds of mark (:data:`~.scene3d.MARKS`) the movie draws on the frames
        ``indices``: the rays are cast beforehand (nothing drawn) to know."""
        kinds = {"body", "target"} | ({"left", "right"} if self.result.legs is not None else set())
        names = ("ray", "hit", "below", "contact")
        for f in np.asarray(indices, dtype=np.int64).reshape(-1):
            for scene, (rot, pos), contacts in (
                (self.scenes[0], (self.base[0][f], self.base[1][f]), None),
                (self.scenes[1], (self.res[0][f], self.res[1][f]), self.result.contacts[f]),
            ):
                marks = scene.sole_marks(rot, pos, contacts)
                found = (marks.rays, marks.hits, marks.below, marks.contacts)
                kinds |= {k for k, a in zip(names, found, strict=True) if len(a)}
        return [label for kind, label in MARKS.items() if kind in kinds]

    def frame(self, f: int) -> np.ndarray:
        """``(H, W, 3)`` uint8 pixels of frame ``f``."""
        F = self.result.motion.num_frames
        center = self.res[1][f, self.body, [0, 2]]  # the result's pelvis, both panels
        self.scenes[0].update(self.base[0][f], self.base[1][f], center_xz=center)
        self.scenes[1].update(
            self.res[0][f],
            self.res[1][f],
            targets=self.result.info.targets_world[f],
            contacts=self.result.contacts[f],
            center_xz=center,
        )
        self.text.set_text(f"frame {f} / {F}   t = {f * self.frame_time:.2f} s")
        return self.overlay.over(figure_rgb(self.fig))


def _fixed_titles(fig, axes) -> list:
    """The axes' titles as figure texts where matplotlib lays them out (one draw): an
    axes title is placed again on every draw, from the 3D axes' bounding boxes."""
    fig.canvas.draw()
    texts = []
    for ax in axes:
        t = ax.title
        texts.append(
            fig.text(*t.get_position(), t.get_text(), transform=t.get_transform(),
                     fontproperties=t.get_fontproperties(), color=t.get_color(),
                     ha=t.get_horizontalalignment(), va=t.get_verticalalignment())
        )  # fmt: skip
        t.set_text("")
    return texts


class StaticOverlay(NamedTuple):
    """Artists that look the same on every frame, drawn once: the pixels they touch
    (``rows``, ``cols``), their colours ``rgb (n, 3)`` and coverage ``alpha (n, 1)``.

    Text was about half of a frame's drawing time (the legend's layout and glyphs, and the
    3D axes' titles placed again on every draw). Laid over each frame with the same "over"
    rule Agg draws with, the result matches drawing them with the frame to within rounding
    (tested)."""

    rows: np.ndarray
    cols: np.ndarray
    rgb: np.ndarray
    alpha: np.ndarray

    @classmethod
    def draw(cls, fig, static: list) -> StaticOverlay:
        """Draw only ``static`` on a transparent ``fig``, then hide them from its frames."""
        static_ids = {id(a) for a in static}
        others = [a for a in (*fig.axes, *fig.texts) if id(a) not in static_ids]
        shown = [a.get_visible() for a in others]
        for a in others:
            a.set_visible(False)
        face = fig.patch.get_alpha()
        fig.patch.set_alpha(0.0)
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())
        rows, cols = np.nonzero(rgba[..., 3])
        alpha = rgba[rows, cols, 3:].astype(np.float32) / 255.0
        overlay = cls(rows, cols, rgba[rows, cols, :3].astype(np.float32), alpha)
        fig.patch.set_alpha(face)
        for a, visible in zip(others, shown, strict=True):
            a.set_visible(visible)
        for a in static:
            a.set_visible(False)
        return overlay

    def over(self, rgb: np.ndarray) -> np.ndarray:
        """``rgb (H, W, 3)`` uint8 with the overlay laid over it (in place; returned)."""
        under = rgb[self.rows, self.cols].astype(np.float32)
        mixed = self.rgb * self.alpha + under * (1.0 - self.alpha)
        rgb[self.rows, self.cols] = np.rint(mixed).astype(np.uint8)
        return rgb


def render_before_after(
    result,
    source,
    ground,
    *,
    max_frames: int = 150,
    progress: bool = True,
    look: MovieLook | None = None,
) -> Iterator[np.ndarray]:
    """Yield ``(H, W, 3)`` uint8 frames of the before/after movie (see the module docstring
    and :func:`write_before_after_movie` for the arguments).

    Returns a generator; ``len(frame_indices(F, max_frames))`` frames come out.
    """
    idx = frame_indices(result.motion.num_frames, max_frames)
    return _render(BeforeAfter(result, source, ground, look, idx), idx, progress)


def _render(movie: BeforeAfter, indices, progress: bool) -> Iterator[np.ndarray]:
    frames = indices
    if progress:
        from tqdm import tqdm

        frames = tqdm(indices, desc="rendering", unit="frame", leave=False)
    for f in frames:
        yield movie.frame(int(f))


def write_before_after_movie(
    result,
    source,
    ground,
    path: str | os.PathLike,
    *,
    max_frames: int = 150,
    fps: float | None = None,
    progress: bool = True,
    look: MovieLook | None = None,
) -> Path:
    """Write the before/after movie of a foot-placement result to a GIF or MP4 file.

    Args:
        result: :class:`~ikrig.foot.offline.FootResult` (its ``baseline`` is the left panel).
        source: the input clip (:class:`~ikrig.pose.Motion` or a BVH clip with ``.motion``).
        ground: the ground the result was placed on.
        path: ``.gif`` (Pillow) or ``.mp4`` (imageio-ffmpeg).
        max_frames: at most this many frames (evenly skipped; see :func:`frame_indices`).
        fps: playback rate; default real time (each frame shown until the next one's time;
            see :func:`gif_durations`).
        progress: show a tqdm progress bar.
        look: :class:`~ikrig.viz.options.MovieLook`: frame size in inches and resolution
            (pixels = size * dpi; default 10 x 5 at 80), the two panel titles, and the
            half-size of the ground shown around the character, in leg lengths.

    Returns:
        The path written.

    Raises:
        InputError: an unknown extension, ``max_frames < 1`` or a folder that cannot be
            written (all checked before any frame is drawn).
        MissingDependencyError: matplotlib/Pillow (GIF) or imageio-ffmpeg (MP4) missing.
    """
    path = Path(check_movie_path(path))
    gif = path.suffix.lower() == ".gif"
    src = _motion(source)
    F = result.motion.num_frames
    ft = float(src.frame_time or result.motion.frame_time or 1 / 30)
    # real time: a GIF frame lasts at least GIF_MIN_DELAY, so high-rate clips skip frames
    min_step = math.ceil(GIF_MIN_DELAY / ft - 1e-9) if gif and not fps else 1
    idx = frame_indices(F, max_frames, min_step)
    look = look or MovieLook()
    if look.title is None:
        look = replace(look, title=subsampling_note(F, idx, fps))
    frames = _render(BeforeAfter(result, src, ground, look, idx), idx, progress)
    with atomic_path(path) as tmp:
        if gif:
            per_frame = 1.0 / float(fps) if fps else ft
            shown = np.arange(len(idx)) if fps else idx
            _write_gif(frames, tmp, gif_durations(shown, len(idx) if fps else F, per_frame))
        else:
            step = int(idx[1] - idx[0]) if len(idx) > 1 else 1
            _write_mp4(frames, tmp, float(fps) if fps else 1.0 / (ft * step))
    return path


def check_movie_path(path, inputs=()) -> Path:
    """Check before any work that a movie can be written to ``path``: a ``.gif`` or ``.mp4``
    suffix, its writer installed, a writable folder (created if needed), not one of
    ``inputs``. Returns the path; raises InputError or MissingDependencyError."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"movie: expected a .gif or .mp4 path, got {str(path)!r}")
    require("matplotlib", "plot", "drawing movies")
    if path.suffix.lower() == ".gif":
        require("PIL.Image", "plot", "writing GIFs")
    else:
        require("imageio_ffmpeg", "plot", "writing MP4")
    return check_output(path, inputs=inputs, suffixes=FORMATS, what="movie")


def write_before_after_gif(result, source, ground, path, **kwargs) -> Path:
    """:func:`write_before_after_movie` (the name the CLI calls; ``.mp4`` works as well)."""
    return write_before_after_movie(result, source, ground, path, **kwargs)


def gif_palette(first_frame: np.ndarray, colors: int = 64):
    """A Pillow ``P`` image holding the palette every GIF frame is mapped to: the colours
    of every mark (:data:`~.scene3d.PALETTE`, exact, so the legend's colours stay true)
    and the rest median-cut from the first frame (the ground's shades, text, panes)."""
    image = require("PIL.Image", "plot", "writing GIFs")
    fixed = [c for hexc in PALETTE for c in _rgb(hexc)]
    rest = colors - len(PALETTE)
    cut = image.fromarray(first_frame).quantize(
        colors=rest, method=image.Quantize.MEDIANCUT, dither=image.Dither.NONE
    )
    found = np.asarray(cut.getpalette()[: 3 * rest], dtype=np.int64).reshape(-1, 3)
    # Pillow maps to a palette through a coarse colour cache: a shade close to a fixed
    # colour could take its pixels (white turning pinkish), so such shades are left out
    near = np.abs(found[:, None] - np.array(fixed).reshape(-1, 3)[None]).max(axis=-1) <= 12
    found = found[~near.any(axis=1)]
    pal = image.new("P", (1, 1))
    pal.putpalette(fixed + found.ravel().tolist())
    return pal


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _write_gif(frames, path: Path, durations: list[int]) -> None:
    image = require("PIL.Image", "plot", "writing GIFs")
    images: list = []
    palette = None
    for f in frames:
        if palette is None:
            palette = gif_palette(f)
        images.append(image.fromarray(f).quantize(palette=palette, dither=image.Dither.NONE))
    if not images:
        raise InputError("movie: no frames to write")
    images[0].save(
        path,
        save_all=True,
        append_images=images[1:],
        duration=durations[: len(images)],
        loop=0,
        format="GIF",
        optimize=False,
        disposal=1,
    )


def _write_mp4(frames, path: Path, fps: float) -> None:
    ffmpeg = require("imageio_ffmpeg", "plot", "writing MP4")
    writer = None
    try:
        for f in frames:
            h, w = f.shape[:2]
            f = f[: h - h % 2, : w - w % 2]  # yuv420p needs even sizes
            if writer is None:
                writer = ffmpeg.write_frames(
                    str(path), (f.shape[1], f.shape[0]), fps=fps, quality=7, macro_block_size=1
                )
                writer.send(None)
            writer.send(np.ascontiguousarray(f))
    finally:
        if writer is not None:
            writer.close()
