"""Browser viewer of a clip on a ground, with live foot placement (viser, ``[viewer]`` extra).

``ikrig view CLIP.bvh --ground stairs`` opens a page (served on 127.0.0.1 by default) with
the clip on the ground, a timeline slider, play/pause and speed, and switches for foot IK
(on/off and the mode), the ray casts, the contacts, the IK goals and a ghost of the original
clip. A glTF character (:class:`~ikrig.io.gltf.clip.GltfClip`) is drawn as its skinned
meshes, posed per frame (:mod:`ikrig.viz.viewer_mesh`), with switches for the mesh and the
bones. A mesh ground is drawn as its triangles; rays under the soles that find no ground are
drawn in amber to their full length, and the info line counts them. The ground, the
camera and its following are laid by the pelvis (:func:`~ikrig.viz.geometry.body_joint`),
not joint 0, which some rigs keep on the ground at the origin. Only the page it serves may
connect to it (see :mod:`ikrig.viz._viser`).

Foot IK runs live, frame by frame, through :class:`~ikrig.foot.live.FootPlacer` with the
clip's pinning curve (so playback gives the same frames as the offline pipeline); jumping
on the timeline restarts the placer's springs and locks at the new frame.
:meth:`ClipViewer.update` is the whole per-frame work (solve, FK, scene update); the
benchmark ``benchmarks/bench_viewer.py`` times it.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..errors import IkrigError
from ..foot.options import MODES
from ..io.gltf.clip import GltfClip
from ..pose import Motion
from . import _viser as V
from .geometry import body_joint, bone_segments, ground_mesh, path_bounds, walking_axes
from .scene3d import BELOW, CONTACT, GHOST, HIT, LEFT, RAY, RIGHT, TARGET, scene_setup

MISS = "#ff9f1c"  # a ray that finds no ground under a sole point

__all__ = ["ClipViewer", "view_clip"]

#: What each colour in the scene is (shown under the controls).
LEGEND = (
    "**Legend**: skeleton navy, left leg blue, right leg coral, ghost (original) grey; "
    "rays grey with teal hits; rays that **miss the ground** amber, ending in a square; "
    "contacts green circles; soles under the ground pink diamonds; IK goals red sparkles."
)
MESH_LEGEND = " A glTF character's skinned mesh is drawn in its material's colour."


class ClipViewer:
    """A clip on a ground in the browser, with live foot IK.

    Args:
        clip: the clip (batch shape ``(F,)``, with ``frame_time``), or a clip read from a
            file (``.motion``); a :class:`~ikrig.io.gltf.clip.GltfClip` with a skinned mesh
            is drawn as that mesh.
        ground: a ground of :mod:`ikrig.ground`, or ``None`` (the clip's floor plane).
        host, port: where to serve (``port=0``: any free port).
        mode: initial foot-placement mode.
        legs: leg override for :func:`~ikrig.character.legs.find_legs`.
        server: an existing ``viser.ViserServer`` to use instead of starting one.
        start_playing: start playback at once.

    Attributes:
        server: the viser server; ``url`` its address.
        frame: the frame shown; ``positions_world`` its joint positions ``(J, 3)``.
        root: the skeleton's first root joint; ``body`` the joint the ground is laid along
            and the camera looks at and follows: the pelvis
            (:func:`~ikrig.viz.geometry.body_joint`; ``root`` when no legs are found).
        clip: the Motion played; ``skin`` the :class:`~ikrig.viz.viewer_mesh.SkinLayer` of a
            glTF character (``None`` otherwise).
    """

    def __init__(
        self,
        clip: Motion,
        ground=None,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        mode: str = "full",
        legs=None,
        server=None,
        start_playing: bool = False,
    ):
        source = clip
        if not isinstance(clip, Motion) and hasattr(clip, "motion"):
            clip = clip.motion
        if clip.rotations_local.ndim != 3 or clip.frame_time is None:
            raise IkrigError("viewer: expected a clip with batch shape (frames,) and frame_time")
        if mode not in MODES:
            raise IkrigError(f"viewer: unknown mode {mode!r}; expected one of {MODES}")
        self.clip = clip
        self.frame_time = float(clip.frame_time)
        self.skeleton = clip.skeleton
        self.parents = clip.skeleton.parents
        self.root = int(np.flatnonzero(self.parents < 0)[0])
        self.legs, self.sole, self.L = scene_setup(clip, legs)
        self.body = body_joint(self.skeleton, self.legs)
        self.source_rot, self.source_pos = clip.fk()
        path_xz = self.source_pos[:, self.body][:, [0, 2]]
        if ground is None:
            from ..ground import Plane

            floor = (
                self.sole.floor if self.sole is not None else float(self.source_pos[..., 1].min())
            )
            ground = Plane([0.0, floor, 0.0], [0.0, 1.0, 0.0])
        self.ground = ground
        self._lock = threading.RLock()
        self._placers: dict = {}
        self._last: tuple[str, int] | None = None  # (mode, frame) of the last live solve
        self.pins = self.contacts = None
        if self.legs is not None:
            try:
                from ..foot import FootOptions, detect_foot_contacts
            except ImportError:  # foot placement not available: view only
                self.ik_error = "foot placement is not available in this install"
            else:
                assert self.sole is not None  # scene_setup finds both or neither
                self.contacts, self.pins = detect_foot_contacts(
                    clip, self.legs, self.sole, FootOptions().contacts
                )
        self.server = server if server is not None else V.start_server(host, port)
        self.url = V.url(self.server)
        self._build_scene(path_xz, source)
        self._build_gui(mode)
        self.frame = -1
        self.positions_world = self.source_pos[0]
        self.update(0)
        self.ticker = V.Ticker(self._tick, self._period, lambda: self.gui_play.value)
        if start_playing:
            self.gui_play.value = True

    # ------------------------------------------------------------------ scene and GUI
    def _build_scene(self, path_xz, source):
        s = self.server.scene
        L = self.L
        bounds = path_bounds(path_xz, 2.0 * L)
        v, f = ground_mesh(self.ground, bounds, cells=160, max_faces=200_000)
        self.ground_handle = s.add_mesh_simple(
            "/ground",
            v.astype(np.float32),
            f.astype(np.uint32),
            color=(178, 182, 172),
            flat_shading=True,
            side="double",
        )
        s.add_grid(
            "/grid",
            width=float(np.ptp(bounds[:, 0])),
            height=float(np.ptp(bounds[:, 1])),
            plane="xz",
            cell_size=L * 0.5,
            section_size=L * 2.0,
            position=(
                float(bounds[:, 0].mean()),
                float(v[:, 1].min() - 1e-3 * L) if len(v) else 0.0,
                float(bounds[:, 1].mean()),
            ),
        )
        self.skin = None
        if isinstance(source, GltfClip):
            from .viewer_mesh import SkinLayer

            self.skin = SkinLayer(s, source, (self.source_rot, self.source_pos))
            if not self.skin.meshes:
                self.skin = None
        t = 0.05 * L
        self.bones = V.Lines(s, "/skeleton/bones", V.rgb("#1d3557"), t)
        self.joints = V.Points(s, "/skeleton/joints", V.rgb("#1d3557"), 0.035 * L)
        self.ghost = V.Lines(s, "/ghost", V.rgb(GHOST), 0.6 * t, visible=False)
        self.rays = V.Lines(s, "/rays/lines", V.rgb(RAY), 0.25 * t)
        self.hits = V.Points(s, "/rays/hits", V.rgb(HIT), 0.06 * L)
        self.misses = V.Lines(s, "/rays/misses", V.rgb(MISS), 0.25 * t)
        self.miss_ends = V.Points(s, "/rays/miss_ends", V.rgb(MISS), 0.06 * L, shape="square")
        self.contact_pts = V.Points(s, "/contacts", V.rgb(CONTACT), 0.12 * L, shape="circle")
        self.below_pts = V.Points(s, "/below", V.rgb(BELOW), 0.08 * L, shape="diamond")
        self.goals = V.Points(s, "/goals", V.rgb(TARGET), 0.09 * L, shape="sparkle")
        child = np.flatnonzero(self.parents >= 0)
        colors = np.tile(np.array(V.rgb("#1d3557"), np.uint8), (len(child), 2, 1))
        if self.legs is not None:
            for leg in self.legs.legs:
                c = np.array(V.rgb(LEFT if leg.side == "left" else RIGHT), np.uint8)
                for b, j in enumerate(child):
                    if j in (leg.knee, leg.ankle) or _below(self.parents, j, leg.ankle):
                        colors[b] = c
        self.bone_colors = colors
        w, u = walking_axes(path_xz)
        self._cam_offset = (
            3.0 * L * np.array([u[0], 0.0, u[1]])
            + np.array([0.0, 0.5 * L, 0.0])
            - 1.0 * L * np.array([w[0], 0.0, w[1]])
        )
        self._cam_look = np.array([0.0, -0.45 * L, 0.0])
        c0 = self.camera_target(self.source_pos[0])
        if self.skin is not None:  # frame the whole mesh (a fox is long, a root on the floor)
            self.skin.pose(0)
            v = np.concatenate(self.skin.vertices)
            lo, hi = v.min(axis=0), v.max(axis=0)
            fov = float(self.server.initial_camera.fov)
            d = 0.7 * float(np.linalg.norm(hi - lo)) / np.sin(0.5 * fov)
            self._cam_look = 0.5 * (lo + hi) - c0
            self._cam_offset = self._cam_look + d * self._cam_offset / np.linalg.norm(
                self._cam_offset
            )
        self.server.initial_camera.position = tuple((c0 + self._cam_offset).tolist())
        self.server.initial_camera.look_at = tuple((c0 + self._cam_look).tolist())
        # clipping planes in the clip's units (a character in centimetres is 100x larger)
        self.server.initial_camera.near = 0.02 * L
        self.server.initial_camera.far = 2000.0 * L

        @self.server.on_client_connect
        def _(client):  # a new page looks at the character where it is now
            c = self.camera_target(self.positions_world)
            client.camera.position = tuple((c + self._cam_offset).tolist())
            client.camera.look_at = tuple((c + self._cam_look).tolist())

    def camera_target(self, positions_world) -> np.ndarray:
        """``(3,)`` the world point the camera is placed from (its offset and look-at are
        relative to it) for a pose ``positions_world (J, 3)``: the pelvis's position."""
        return np.asarray(positions_world, dtype=np.float64)[self.body]

    def _build_gui(self, mode):
        g = self.server.gui
        F = self.clip.num_frames
        self.gui_frame = g.add_slider("frame", 0, max(F - 1, 1), 1, 0)
        self.gui_play = g.add_checkbox("play", False)
        self.gui_speed = g.add_slider("speed", 0.1, 2.0, 0.05, 1.0)
        can = self.pins is not None
        self.gui_ik = g.add_checkbox("foot IK", can, disabled=not can)
        self.gui_mode = g.add_dropdown("mode", MODES, initial_value=mode)
        self.gui_rays = g.add_checkbox("show rays", True)
        self.gui_contacts = g.add_checkbox("show contacts", True)
        self.gui_goals = g.add_checkbox("show goals", True)
        self.gui_ghost = g.add_checkbox("ghost (original)", False)
        has_mesh = self.skin is not None
        self.gui_mesh = g.add_checkbox("show mesh", has_mesh, disabled=not has_mesh)
        self.gui_bones = g.add_checkbox("show bones", not has_mesh)
        self.gui_follow = g.add_checkbox("camera follows", True)
        self.gui_info = g.add_markdown("")
        self.gui_legend = g.add_markdown(LEGEND + (MESH_LEGEND if has_mesh else ""))
        self.gui_frame.on_update(lambda _: self.update(int(self.gui_frame.value)))
        for h in (
            self.gui_ik,
            self.gui_mode,
            self.gui_rays,
            self.gui_contacts,
            self.gui_goals,
            self.gui_ghost,
            self.gui_mesh,
            self.gui_bones,
        ):
            h.on_update(lambda _: self.update(self.frame, force=True))

    def _period(self) -> float:
        return self.frame_time / max(float(self.gui_speed.value), 1e-3)

    def _tick(self):
        f = (self.frame + 1) % self.clip.num_frames
        self.gui_frame.value = f  # calls update(f) through the slider's callback

    # ------------------------------------------------------------------ per frame
    def _placer(self, mode):
        """``(placer, plan)`` for a mode: a live :class:`FootPlacer` and the offline result
        of the clip (its pinning curve, contacts, planned foot offsets and pelvis drop feed
        the placer, as an engine would store them with the clip)."""
        got = self._placers.get(mode)
        if got is None:
            from ..foot import FootOptions, FootPlacer, place_feet

            options = FootOptions(mode=mode)
            placer = FootPlacer.from_clip(self.clip, self.ground, options, legs=self.legs)
            plan = place_feet(self.clip, self.ground, options, legs=self.legs)
            got = self._placers[mode] = (placer, plan)
        return got

    def solve(self, frame: int):
        """The pose shown at ``frame``: ``(rotations_world (J, 4), positions_world (J, 3),
        targets (feet, 3) or None)``, with live foot IK when it is on."""
        if not (self.gui_ik.value and self.pins is not None):
            return self.source_rot[frame], self.source_pos[frame], None
        mode = str(self.gui_mode.value)
        placer, plan = self._placer(mode)
        if self._last != (mode, frame - 1):
            placer.reset()  # a jump: restart springs and locks here
        pose = placer.update(
            self.clip[frame],
            self.frame_time,
            plan=plan.plan(frame),
        )
        self._last = (mode, frame)
        rot_w, pos_w = pose.fk()
        return rot_w, pos_w, np.asarray(placer.last_info.targets_world)[0]

    def update(self, frame: int, force: bool = False) -> None:
        """Show ``frame``: solve it (live foot IK when on) and update every scene node."""
        with self._lock:
            frame = int(np.clip(frame, 0, self.clip.num_frames - 1))
            if frame == self.frame and not force:
                return
            if force and self._last is not None and self._last[1] == frame:
                self._last = None
            rot_w, pos_w, targets = self.solve(frame)
            with self.server.atomic():
                self._draw(frame, rot_w, pos_w, targets)
                if self.gui_follow.value and self.frame >= 0:
                    self._follow(pos_w[self.body] - self.positions_world[self.body])
            self.frame = frame
            self.positions_world = pos_w
            if int(self.gui_frame.value) != frame:  # keep the timeline in step (no re-solve)
                self.gui_frame.value = frame

    def _draw(self, frame, rot_w, pos_w, targets):
        if self.skin is not None:
            self.skin.visible = bool(self.gui_mesh.value)
            self.skin.pose(frame, rot_w, pos_w)
        self.bones.enabled = self.joints.enabled = bool(self.gui_bones.value)
        self.bones.set(bone_segments(self.parents, pos_w), self.bone_colors)
        self.joints.set(pos_w)
        self.ghost.enabled = bool(self.gui_ghost.value)
        self.ghost.set(bone_segments(self.parents, self.source_pos[frame]))
        rays, misses = np.zeros((0, 2, 3)), np.zeros((0, 2, 3))
        hits, below, contacts = (np.zeros((0, 3)),) * 3
        if self.sole is not None:
            pts = self.sole.points_world(rot_w, pos_w).reshape(-1, 3)
            soles = pts - np.repeat(self.sole.heights.reshape(-1, 1), 3, 1) * [0.0, 1.0, 0.0]
            origin = soles + np.array([0.0, 0.35 * self.L, 0.0])
            h = self.ground.raycast(origin, np.array([0.0, -1.0, 0.0]), 1.2 * self.L)
            m = np.asarray(h.mask)
            hp = np.asarray(h.point, dtype=np.float64)
            rays = np.stack([origin[m], hp[m]], axis=1)
            hits = hp[m]
            # a ray that finds no ground: its full length, ending in a square
            misses = np.stack([origin[~m], origin[~m] - [0.0, 1.2 * self.L, 0.0]], axis=1)
            below = soles[m & (soles[:, 1] < hp[:, 1] - 1e-3 * self.L)]
            if self.pins is not None:
                on = np.repeat(self.pins[frame] > 0.5, 2)
                contacts = np.where((on & m)[:, None], hp, soles)[on]
        self.rays.enabled = self.hits.enabled = bool(self.gui_rays.value)
        self.misses.enabled = self.miss_ends.enabled = bool(self.gui_rays.value)
        self.rays.set(rays)
        self.hits.set(hits)
        self.misses.set(misses)
        self.miss_ends.set(misses[:, 1])
        self.missed = int(len(misses))
        self.below_pts.set(below)
        self.contact_pts.enabled = bool(self.gui_contacts.value)
        self.contact_pts.set(contacts)
        self.goals.enabled = bool(self.gui_goals.value)
        self.goals.set(np.zeros((0, 3)) if targets is None else targets)
        ik = "on (" + str(self.gui_mode.value) + ")" if self.gui_ik.value else "off"
        missed = f", **{len(misses)} rays miss the ground**" if len(misses) else ""
        self.gui_info.content = (
            f"frame **{frame}** / {self.clip.num_frames}, "
            f"t = {frame * self.clip.frame_time:.2f} s, foot IK {ik}{missed}"
        )

    def _follow(self, delta) -> None:
        """Move every client's camera by ``delta (3,)``, the pelvis's motion (its horizontal
        part)."""
        d = np.array([delta[0], 0.0, delta[2]])
        if not np.any(d):
            return
        for client in self.server.get_clients().values():
            cam = client.camera
            try:  # moving the position moves the look-at point with it
                cam.position = np.asarray(cam.position) + d
            except (AssertionError, ValueError):  # no camera state from this client yet
                pass

    def close(self) -> None:
        """Stop playback and the server."""
        self.ticker.stop()
        self.server.stop()


def _below(parents, j, ancestor) -> bool:
    p = int(parents[j])
    while p >= 0:
        if p == ancestor:
            return True
        p = int(parents[p])
    return False


def view_clip(
    clip,
    ground=None,
    *,
    host="127.0.0.1",
    port=8080,
    mode="full",
    legs=None,
    block: bool = True,
    echo=print,
) -> ClipViewer:
    """Open the viewer on ``clip`` (a Motion, or a BVH or glTF clip); with ``block`` serve
    until Ctrl-C."""
    app = ClipViewer(clip, ground, host=host, port=port, mode=mode, legs=legs)
    if block:
        V.serve_forever(app, echo)
    return app


def time_updates(viewer: ClipViewer, frames: int = 300) -> float:
    """Updates per second of :meth:`ClipViewer.update` over consecutive frames."""
    F = viewer.clip.num_frames
    viewer.update(0, force=True)
    t0 = time.perf_counter()
    for k in range(1, frames + 1):
        viewer.update(k % F)
    return frames / (time.perf_counter() - t0)
