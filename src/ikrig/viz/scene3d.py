"""A skeleton on its ground in 3D (matplotlib): bones, ground, ray casts, contacts, targets.

:class:`SkeletonScene` builds the artists once on a 3D axes and moves them per frame (the
movies reuse it); :func:`plot_skeleton_3d` draws one frame of a clip or of a foot-placement
result to a file.

The view follows the character: the ground is drawn over a square window around the pelvis
(:func:`~ikrig.viz.geometry.body_joint`, not joint 0; ``window`` leg lengths each way), Y
up, seen from the side of the walking direction. Parts of the skeleton below the ground are
not hidden (matplotlib cannot depth-sort lines against surfaces); instead sole points under
the ground are marked red.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..errors import IkrigError
from ..ground import MeshGround
from ..pose import Motion
from ..skeleton import Skeleton
from ._mpl import finish, new_figure
from .geometry import (
    body_joint,
    bone_segments,
    clip_faces_xz,
    face_normals,
    ground_mesh,
    shade,
    skirts,
    surface_floor,
    walking_axes,
)
from .options import View

if TYPE_CHECKING:
    from ..character.legs import Legs
    from ..character.sole import FootSole

__all__ = ["MARKS", "SceneSetup", "SkeletonScene", "plot_skeleton_3d", "scene_setup"]

BONES = "#1d3557"
LEFT = "#2a6fdb"
RIGHT = "#e76f51"
GHOST = "#9aa5b1"
RAY = "#6c757d"
HIT = "#2a9d8f"
CONTACT = "#38b000"
TARGET = "#d00000"
BELOW = "#ff006e"
#: Every mark's colour, with white and the text greys (GIFs keep them exact).
PALETTE = (BONES, LEFT, RIGHT, GHOST, RAY, HIT, CONTACT, TARGET, BELOW, "#ffffff", "#4d4d4d")


#: The legend's words for each kind of mark a scene draws.
MARKS = {
    "body": "skeleton",
    "left": "left leg",
    "right": "right leg",
    "ghost": "before (the source pose)",
    "ray": "ray cast down from a sole point",
    "hit": "ray hit and ground normal",
    "contact": "foot in contact",
    "below": "sole point under the ground",
    "target": "IK target",
}
#: How each kind of mark looks in the legend.
KEYS: dict[str, dict] = {
    "body": {"color": BONES, "lw": 3.0, "marker": "o", "ms": 2.5},
    "left": {"color": LEFT, "lw": 3.0},
    "right": {"color": RIGHT, "lw": 3.0},
    "ghost": {"color": GHOST, "lw": 2.0, "alpha": 0.7},
    "ray": {"color": RAY, "lw": 1.0, "ls": "--"},
    "hit": {"color": HIT, "lw": 1.5, "marker": "o", "ms": 4},
    "contact": {"ls": "none", "marker": "o", "ms": 9, "mfc": "none", "mec": CONTACT, "mew": 2},
    "below": {"ls": "none", "marker": "v", "ms": 7, "color": BELOW},
    "target": {"ls": "none", "marker": "x", "ms": 9, "mew": 2.2, "color": TARGET},
}


class SoleMarks(NamedTuple):
    """What the rays under a pose's sole points show (world, ``(n, 2, 3)`` segments and
    ``(n, 3)`` points): the rays down to their hits, the ground's normals at the hits, the
    hits, the sole points under the ground and the contact marks."""

    rays: np.ndarray
    normals: np.ndarray
    hits: np.ndarray
    below: np.ndarray
    contacts: np.ndarray


class SceneSetup(NamedTuple):
    """What a scene needs to know of a character: its legs and sole (``None`` for a skeleton
    without recognisable legs) and the length unit of the view."""

    legs: Legs | None
    sole: FootSole | None
    leg_length: float


def scene_setup(motion: Motion, legs=None) -> SceneSetup:
    """``(legs, sole, leg_length)`` of a clip for drawing; ``(None, None, length)`` when the
    skeleton has no recognisable legs (the length is then half the rest height)."""
    from ..character.legs import find_legs
    from ..character.sole import estimate_sole

    clip = motion if motion.batch_shape else _as_clip(motion)
    try:
        found = find_legs(motion.skeleton, legs, clip.positions_world())
        sole = estimate_sole(clip, found)
        return SceneSetup(found, sole, float(found.leg_length))
    except IkrigError:
        rest = Motion.rest(motion.skeleton).positions_world()
        return SceneSetup(None, None, max(float(np.ptp(rest[:, 1])) / 2.0, 1e-6))


class SkeletonScene:
    """Artists for one skeleton on a ground in a matplotlib 3D axes, updated per frame.

    Args:
        ax: a 3D axes (``projection="3d"``).
        skeleton: the :class:`~ikrig.skeleton.Skeleton`.
        ground: a ground of :mod:`ikrig.ground`, or ``None`` (no ground drawn).
        setup: :class:`SceneSetup`: the legs (to colour left and right legs) and sole (for
            rays and contact markers), either may be ``None``, and the length unit of the view
            (window, ray lengths, marker sizes).
        direction_xz: the walking direction; the camera looks across it.
        view: :class:`~ikrig.viz.options.View`: window, camera angles, rays and title (its
            figure size and resolution are not used here).
        cells: ground grid resolution for heightfields.
        ticks: show the axes' tick labels.
    """

    def __init__(
        self,
        ax,
        skeleton: Skeleton,
        ground,
        setup: SceneSetup,
        *,
        direction_xz=(0.0, 1.0),
        view: View | None = None,
        cells: int = 28,
        ticks: bool = True,
    ) -> None:
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection

        view = view or View()
        elev, azim_offset, title = view.elev, view.azim_offset, view.title
        self.ax, self.skeleton, self.ground = ax, skeleton, ground
        self.L, self.sole, self.legs = float(setup.leg_length), setup.sole, setup.legs
        self.window, self.cells, self.rays = float(view.window), int(cells), bool(view.rays)
        self.parents = skeleton.parents
        #: the joint the view is centred on: the pelvis (:func:`~.geometry.body_joint`)
        self.body = body_joint(skeleton, setup.legs)
        # the joints whose heights set the view: all of them when the pelvis is a root, else
        # the pelvis and all below it (not a static root above it, far from the body)
        self._framed = np.array(
            [
                self.parents[self.body] < 0
                or j == self.body
                or self.body in _ancestors(self.parents, j)
                for j in range(len(self.parents))
            ],
            dtype=bool,
        )
        self._kinds = self._bone_kinds()
        ax.computed_zorder = False
        self.ground_poly = Poly3DCollection([], zorder=1, linewidths=0.4, label="_ground")
        ax.add_collection3d(self.ground_poly, autolim=False)
        self.ghost = Line3DCollection(
            [], colors=GHOST, linewidths=2.0, alpha=0.7, zorder=3, label=MARKS["ghost"]
        )
        ax.add_collection3d(self.ghost, autolim=False)
        self.ray_lines = Line3DCollection(
            [], colors=RAY, linewidths=1.0, linestyles="--", zorder=4, label=MARKS["ray"]
        )
        ax.add_collection3d(self.ray_lines, autolim=False)
        self.normals = Line3DCollection(
            [], colors=HIT, linewidths=1.5, zorder=4, label=MARKS["hit"]
        )
        ax.add_collection3d(self.normals, autolim=False)
        self.bones = {}
        for kind, color in (("body", BONES), ("left", LEFT), ("right", RIGHT)):
            self.bones[kind] = Line3DCollection(
                [], colors=color, linewidths=3.0, zorder=5, label=MARKS[kind]
            )
            ax.add_collection3d(self.bones[kind], autolim=False)
        (self.joints,) = ax.plot(
            [], [], [], "o", ms=2.5, color=BONES, zorder=6, label=MARKS["body"]
        )
        (self.hits,) = ax.plot([], [], [], "o", ms=4, color=HIT, zorder=6, label=MARKS["hit"])
        (self.contacts,) = ax.plot(
            [],
            [],
            [],
            "o",
            ms=9,
            mfc="none",
            mec=CONTACT,
            mew=2.0,
            zorder=7,
            label=MARKS["contact"],
        )
        (self.below,) = ax.plot([], [], [], "v", ms=7, color=BELOW, zorder=7, label=MARKS["below"])
        (self.targets,) = ax.plot(
            [], [], [], "x", ms=9, mew=2.2, color=TARGET, zorder=8, label=MARKS["target"]
        )
        w = np.asarray(direction_xz, dtype=np.float64)
        w = w / max(float(np.hypot(*w)), 1e-12)
        # vertical_axis="y": the view's azimuth is measured in the ZX plane
        side = math.degrees(math.atan2(w[0], w[1]))
        ax.view_init(elev=elev, azim=side - 90.0 - azim_offset, vertical_axis="y")
        ax.set_xlabel("x", labelpad=-8)
        ax.set_ylabel("y", labelpad=-8)
        ax.set_zlabel("z", labelpad=-8)
        ax.tick_params(labelsize=6, pad=-2)
        self.zoom = 1.15
        if not ticks:  # a clean picture: no panes, grid or labels, and closer
            ax.set_axis_off()
            self.zoom = 1.45
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
            axis.set_pane_color((0.97, 0.97, 0.98, 1.0))
            axis._axinfo["grid"].update(color=(0.85, 0.85, 0.88, 1.0), linewidth=0.6)
        if title:
            ax.set_title(title, fontsize=11, pad=0)

    def _bone_kinds(self) -> np.ndarray:
        """Per bone (non-root joint): ``"body"``, ``"left"`` or ``"right"`` (leg bones)."""
        child = np.flatnonzero(self.parents >= 0)
        kinds = np.array(["body"] * len(child), dtype=object)
        if self.legs is None:
            return kinds
        for leg in self.legs.legs:
            below = {leg.knee, leg.ankle} | set(
                j for j in range(len(self.parents)) if leg.ankle in _ancestors(self.parents, j)
            )
            for b, j in enumerate(child):
                if j in below:
                    kinds[b] = "left" if leg.side == "left" else "right"
        return kinds

    def marks(self) -> dict[str, object]:
        """The marks drawn now, one artist per kind: ``{label: artist}`` in legend order."""
        artists = [*self.bones.values(), self.joints, self.ghost, self.ray_lines, self.hits]
        artists += [self.normals, self.contacts, self.below, self.targets]
        out: dict[str, object] = {}
        for a in artists:
            label = a.get_label()
            if not label.startswith("_") and _drawn(a):
                out.setdefault(label, a)
        return out

    def legend_handles(self, labels=None) -> list:
        """Legend keys (matplotlib ``Line2D``) for the marks ``labels`` (default: those drawn
        now, :meth:`marks`), in :data:`MARKS` order, one per kind."""
        from matplotlib.lines import Line2D

        wanted = set(self.marks() if labels is None else labels)
        handles = []
        for kind, label in MARKS.items():
            if label in wanted:
                handles.append(Line2D([], [], label=label, **KEYS[kind]))
        return handles

    def _set_ground(self, center_xz):
        if self.ground is None:
            return
        r = self.window * self.L
        bounds = np.array([center_xz - r, center_xz + r])
        v, f = ground_mesh(self.ground, bounds, cells=self.cells)
        y_min = None
        if isinstance(self.ground, MeshGround):  # a user's boxes may reach far down
            top = surface_floor(self.ground, bounds, samples=16)
            y_min = None if top is None else top - 0.25 * self.L
        polys, index = clip_faces_xz(v, f, bounds, y_min) if len(f) else ([], np.zeros(0, int))
        normals = face_normals(v, f)[index] if len(f) else np.zeros((0, 3))
        if y_min is not None:  # close the cut: the ground as a solid block
            cut, cut_normals = skirts(self.ground, bounds, y_min)
            polys, normals = list(polys) + cut, np.concatenate([normals, cut_normals])
        if polys:
            heights = np.array([p[:, 1].mean() for p in polys])
            colors = shade(normals, heights)
            self.ground_poly.set_verts(polys)
            self.ground_poly.set_facecolor(colors)
            self.ground_poly.set_edgecolor(colors)
            ys = np.concatenate([p[:, 1] for p in polys])
            self._ground_y = (float(ys.min()), float(ys.max()))
        else:
            self.ground_poly.set_verts([])
            self._ground_y = (float(v[:, 1].min()), float(v[:, 1].max())) if len(v) else (0.0, 0.0)

    def update(
        self,
        rotations_world,
        positions_world,
        *,
        ghost_positions=None,
        targets=None,
        contacts=None,
        center_xz=None,
    ):
        """Move everything to one frame.

        Args:
            rotations_world, positions_world: ``(J, 4)``, ``(J, 3)`` the pose (world).
            ghost_positions: ``(J, 3)`` another pose drawn faint behind (the source), or None.
            targets: ``(feet, 3)`` IK targets, or None.
            contacts: ``(feet,)`` bool feet in contact, or None.
            center_xz: ``(2,)`` world XZ centre of the view window (default: the pelvis's,
                :attr:`body`).
        """
        pos = np.asarray(positions_world, dtype=np.float64)
        c = pos[self.body, [0, 2]] if center_xz is None else np.asarray(center_xz, dtype=np.float64)
        self._set_ground(c)
        segments = bone_segments(self.parents, pos)
        for kind, lines in self.bones.items():
            lines.set_segments(segments[self._kinds == kind])
        self.joints.set_data_3d(pos[:, 0], pos[:, 1], pos[:, 2])
        if ghost_positions is not None:
            self.ghost.set_segments(bone_segments(self.parents, np.asarray(ghost_positions)))
        else:
            self.ghost.set_segments([])
        marks = self.sole_marks(rotations_world, pos, contacts)
        self.ray_lines.set_segments(marks.rays)
        self.normals.set_segments(marks.normals)
        self.hits.set_data_3d(*marks.hits.T)
        self.below.set_data_3d(*marks.below.T)
        self.contacts.set_data_3d(*marks.contacts.T)
        empty = (np.zeros(0),) * 3
        if targets is not None:
            t = np.asarray(targets, dtype=np.float64).reshape(-1, 3)
            self.targets.set_data_3d(t[:, 0], t[:, 1], t[:, 2])
        else:
            self.targets.set_data_3d(*empty)
        self._frame_view(c, pos)

    def sole_marks(self, rotations_world, positions_world, contacts=None) -> SoleMarks:
        """The ray casts under the sole points of a pose and what they find (nothing
        drawn): see :class:`SoleMarks`; all empty without a sole or a ground."""
        none = np.zeros((0, 3))
        if self.sole is None or self.ground is None:
            return SoleMarks(np.zeros((0, 2, 3)), np.zeros((0, 2, 3)), none, none, none)
        pos = np.asarray(positions_world, dtype=np.float64)
        pts = self.sole.points_world(np.asarray(rotations_world), pos).reshape(-1, 3)
        soles = pts - self.sole.heights.reshape(-1)[:, None] * np.array([0.0, 1.0, 0.0])
        origin = soles + np.array([0.0, 0.35 * self.L, 0.0])
        hits = self.ground.raycast(origin, np.array([0.0, -1.0, 0.0]), 1.2 * self.L)
        m = np.asarray(hits.mask)
        hp = np.asarray(hits.point, dtype=np.float64)
        rays, normals, hit_points = np.zeros((0, 2, 3)), np.zeros((0, 2, 3)), none
        if self.rays:
            rays = np.stack([origin[m], hp[m]], axis=1)
            normals = np.stack([hp[m], hp[m] + 0.12 * self.L * np.asarray(hits.normal)[m]], 1)
            hit_points = hp[m]
        below = soles[m & (soles[:, 1] < hp[:, 1] - 1e-3 * self.L)]
        contact_points = none
        if contacts is not None:
            feet = np.repeat(np.asarray(contacts, dtype=bool).reshape(-1), 2)
            contact_points = np.where((feet & m)[:, None], hp, soles)[feet]
        return SoleMarks(rays, normals, hit_points, below, contact_points)

    def _frame_view(self, c, pos):
        r = self.window * self.L
        y = pos[self._framed, 1]
        gy = getattr(self, "_ground_y", (float(y.min()),) * 2)
        y0 = min(gy[0], float(y.min())) - 0.05 * self.L
        y1 = max(float(y.max()), gy[1]) + 0.1 * self.L
        ax = self.ax
        ax.set_xlim(c[0] - r, c[0] + r)
        ax.set_zlim(c[1] - r, c[1] + r)
        ax.set_ylim(y0, y1)
        ax.set_box_aspect((2 * r, y1 - y0, 2 * r), zoom=self.zoom)


def _drawn(artist) -> bool:
    if hasattr(artist, "_segments3d"):  # Line3DCollection keeps its 3D segments there
        return len(artist._segments3d) > 0
    return len(artist.get_data_3d()[0]) > 0


def _ancestors(parents, j):
    out = set()
    p = int(parents[j])
    while p >= 0:
        out.add(p)
        p = int(parents[p])
    return out


def plot_skeleton_3d(
    motion: Motion,
    ground=None,
    *,
    frame: int = 0,
    result=None,
    ghost: Motion | None = None,
    legs=None,
    path: str | os.PathLike | None = None,
    view: View | None = None,
):
    """Draw one frame of a clip on its ground in 3D.

    Args:
        motion: a clip ``(F,)`` (with ``frame``) or a single pose.
        ground: a ground of :mod:`ikrig.ground`, or ``None``.
        frame: the frame of a clip to draw.
        result: a :class:`~ikrig.foot.offline.FootResult` of ``motion``: the result's
            pose is drawn with its IK targets and contacts, and ``motion`` as a faint ghost.
        ghost: another clip drawn faint behind (ignored with ``result``).
        legs: leg override for :func:`~ikrig.character.legs.find_legs`.
        path: save the figure here when given.
        view: :class:`~ikrig.viz.options.View`: the ground window, camera angles, ray casts
            (drawn by default), title (default: ground, frame) and figure size (7 x 6 inches)
            and resolution.

    Returns:
        The matplotlib ``Figure``.
    """
    view = view or View()
    fig = new_figure(*view.figsize, dpi=view.dpi)
    ax = fig.add_subplot(1, 1, 1, projection="3d")
    clip = motion if motion.batch_shape else _as_clip(motion)
    f = int(np.clip(frame, 0, clip.num_frames - 1))
    if result is not None:
        setup = SceneSetup(result.legs, result.sole, float(result.legs.leg_length))
        shown = result.motion
        ghost_clip: Motion | None = clip
    else:
        setup = scene_setup(clip, legs)
        shown, ghost_clip = clip, ghost
    rot_w, pos_w = shown[f].fk()
    path_xz = clip.positions_world()[:, body_joint(clip.skeleton, setup.legs)]
    w, _ = walking_axes(path_xz[:, [0, 2]])
    # the scene gets no title: the figure's is set below
    scene = SkeletonScene(
        ax, clip.skeleton, ground, setup, direction_xz=w, view=replace(view, title=None)
    )
    kw = {}
    if ghost_clip is not None:
        kw["ghost_positions"] = ghost_clip[min(f, ghost_clip.num_frames - 1)].positions_world()
    if result is not None:
        kw["targets"] = result.info.targets_world[f]
        kw["contacts"] = result.contacts[f]
    scene.update(rot_w, pos_w, **kw)
    handles = scene.legend_handles()
    if handles:
        ax.legend(handles=handles, loc="upper left", fontsize=8, framealpha=0.9)
    title = view.title
    if title is None:
        title = f"frame {f}" + (f" / {clip.num_frames}" if clip.num_frames > 1 else "")
        if ground is not None:
            title = f"{type(ground).__name__}, {title}"
    ax.set_title(title, fontsize=11)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.02, top=0.95)
    return finish(fig, path)


def _as_clip(pose: Motion) -> Motion:
    return Motion(pose.skeleton, pose.rotations_local[None], pose.positions_local[None], None)
