"""Foot placement of one clip on a named ground, as ``ikrig foot`` and ``ikrig batch`` do it.

:func:`place_clip` is the one place where a command's arguments become a ground and
results: find the legs, lay the ground (a built-in one along the pelvis's path, a mesh file
turned from the clip's up axis), run :func:`~ikrig.foot.place_feet` in each mode.
:func:`result_metrics` measures one result the way the report does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the pipeline loads when a clip is placed, not when the CLI starts
    from ..character.legs import Legs
    from ..foot import FootResult
    from ..io.clips import AnyClip
    from ..pose import Motion

__all__ = [
    "DEFAULT_PLACEMENT", "FootPlacement", "Placed", "clip_with_time", "place_clip",
    "result_metrics",
    "result_summary", "slides_over_steps",
]  # fmt: skip


class FootPlacement(NamedTuple):
    """How a clip meets the ground: ``seed`` of random built-in grounds, ``datum``
    (:attr:`~ikrig.foot.options.FootOptions.datum`) and ``up``, the clip's (and a mesh
    file's) up axis; where the character stands (:func:`ikrig.foot.travel.travel`, in the
    Y-up world): ``at`` ``(x, z)`` of its pelvis at frame 0, ``heading`` (radians, 0 faces
    +Z, pi/2 faces +X; None: as recorded), or a ``path`` file (CSV ``time,x,z[,heading]``);
    ``walk``: a clip that walks in place walks from there, its root carried forward at the
    speed its stance feet slide back (:func:`ikrig.foot.travel.walk_the_belt`), so that
    they stand still on the ground and are found, locked and placed as a recorded walk's;
    ``cycles``: a cycle is first played so many times in a row
    (:func:`ikrig.foot.travel.belt.repeat_cycle`)."""

    seed: int = 0
    datum: str = "clip"
    up: str = "y"
    at: tuple[float, float] | None = None
    heading: float | None = None
    path: str | None = None
    walk: bool = False
    cycles: int = 1


DEFAULT_PLACEMENT = FootPlacement()


def clip_with_time(
    path: str,
    animation: str | None = None,
    data: bytes | None = None,
    fps: float | None = None,
    skin: str | None = None,
) -> AnyClip:
    """Read a clip file (BVH or glTF, by suffix: :func:`~ikrig.io.clips.read_clip`, which
    takes ``data``, and for glTF the ``animation``, the sampling rate ``fps`` and the
    ``skin``) for foot placement, which needs a frame time.

    Raises:
        InputError: the clip has no frame time (a single pose) or no frames; file errors
            as :func:`~ikrig.io.clips.read_clip`.
    """
    from ..errors import InputError
    from ..io.clips import read_clip

    clip = read_clip(path, animation=animation, fps=fps, data=data, skin=skin)
    if clip.motion.frame_time is None:
        raise InputError(
            f"{path}: no frame time (a single pose); foot placement needs a clip with a frame time"
        )
    if clip.motion.num_frames == 0:
        raise InputError(f"{path}: the clip has no frames; foot placement needs at least one")
    return clip


class Placed(NamedTuple):
    """What :func:`place_clip` returns: the legs found, the ground as laid (before the
    datum), one :class:`~ikrig.foot.offline.FootResult` per mode, the source as placed
    (moved to ``at``, ``heading`` or along ``path``; the given clip when none is asked),
    which the results are measured against, whether it walks in place
    (:func:`~ikrig.foot.travel.treadmill_contacts`), and the source's world transforms
    (:meth:`~ikrig.pose.Motion.fk`), computed once and shared by the steps."""

    legs: Legs
    ground: Any
    results: dict[str, FootResult]
    source: Motion
    walks_in_place: bool = False
    source_fk: Any = None

    def world(self) -> Any:
        """The ground where the pipeline stood the feet: raised to the first result's
        datum."""
        from ..ground.views import RaisedGround

        datum = next(iter(self.results.values())).datum
        return RaisedGround(self.ground, datum) if datum else self.ground


def place_clip(
    motion: Motion,
    ground_spec: str,
    modes: list[str],
    legs: Legs | str | None = None,
    placement: FootPlacement = DEFAULT_PLACEMENT,
    progress: bool = False,
) -> Placed:
    """Place the feet of ``motion`` (Y up) on the ground ``ground_spec`` in each of ``modes``.

    The clip is first repeated and moved where ``placement`` says (``cycles``, ``at``,
    ``heading``, ``path``, ``walk``: :func:`~ikrig.foot.travel.travel`). A built-in ground
    is laid along the pelvis's path with its ``y = 0`` where a mesh file's is; the datum
    (``placement.datum``) then places both the same way. A mesh file is turned from
    ``placement.up`` into Y-up, as the clip was. A clip that walks in place (and does not
    walk) gets its contacts relative to its belt
    (:func:`~ikrig.foot.travel.treadmill_contacts`) and no foot lock: its stance feet slide
    on purpose."""
    from ..character.legs import Legs, find_legs, pelvis_joint
    from ..foot import FootOptions, LockOptions, place_feet
    from ..foot.context import check_clip
    from ..foot.travel import travel, treadmill_contacts
    from ..ground import load_ground

    check_clip(motion)
    fk = motion.fk()
    found = legs if isinstance(legs, Legs) else find_legs(motion.skeleton, legs, fk[1])
    _warn_unplaced(motion.skeleton, found, fk[1])
    p = placement
    moved = travel(motion, found, p.at, p.heading, p.path, p.walk, p.cycles)
    fk, motion = (fk if moved is motion else moved.fk()), moved
    path_xz = fk[1][:, pelvis_joint(motion.skeleton, found)][:, [0, 2]]
    ground = load_ground(ground_spec, path_xz, found.leg_length, seed=p.seed, up=p.up)
    options = FootOptions(datum=p.datum)
    treadmill = treadmill_contacts(motion, found, options.contacts, fk=fk)
    contacts = None
    if treadmill is not None:
        contacts = treadmill
        options = options.replace(lock=LockOptions(enabled=False))
    results = {
        m: place_feet(motion, ground, options.replace(mode=m), found, contacts, progress, fk=fk)
        for m in modes
    }
    return Placed(found, ground, results, motion, treadmill is not None, fk)


def _warn_unplaced(skeleton: Any, legs: Legs, positions_world: Any) -> None:
    """Say which limbs reach the floor but are no placed leg
    (:func:`~ikrig.character.limbs.unplaced_limbs`)."""
    import warnings

    from ..character.limbs import UnplacedLimbWarning, unplaced_limbs

    left = unplaced_limbs(skeleton, legs, positions_world)
    if left:
        names = ", ".join(repr(skeleton.names[j]) for j in left[:4])
        more = f" and {len(left) - 4} more" if len(left) > 4 else ""
        warnings.warn(
            UnplacedLimbWarning(
                f"{len(left)} limb(s) reach the floor but are not placed ({names}{more}): they"
                " may hang or sink; name every leg with --legs 'hip,knee,ankle[,toe];...'"
            ),
            stacklevel=3,
        )


STEP_GROUNDS = ("stairs",)
"""Built-in grounds whose steps rise along the walking direction: a stance foot sliding
along it while down crosses a riser."""


def slides_over_steps(placed: Placed, ground_spec: str) -> bool:
    """Whether a clip placed in place (:attr:`Placed.walks_in_place`) on a built-in flight
    of stairs slides its stance feet up or down the flight: its belt (the median of
    :func:`~ikrig.foot.travel.belt.belt_velocity`) within 45 degrees of the direction the steps
    rise along. A stance foot then slides back by half a stride while down, longer with the
    foot than a tread (0.6 of a leg), and crosses a riser, where one end of the sole floats;
    walking the cycle, or facing along the treads, does not."""
    import numpy as np

    from ..foot.travel.belt import belt_velocity

    direction = getattr(placed.ground, "direction_xz", None)
    if not placed.walks_in_place or ground_spec not in STEP_GROUNDS or direction is None:
        return False
    sole = next(iter(placed.results.values())).sole
    v = belt_velocity(placed.source, placed.legs, sole, fk=placed.source_fk)
    belt = np.median(v, axis=0)
    norm = float(np.hypot(*belt) * np.hypot(*direction))
    return bool(norm > 0 and abs(float(belt @ direction)) > np.cos(np.pi / 4) * norm)


def result_metrics(
    result: FootResult, source: Motion, world: Any, source_fk: Any = None
) -> dict[str, Any]:
    """:func:`~ikrig.metrics.foot_metrics` of ``result`` against ``source`` on ``world``
    (:meth:`Placed.world`), read with the clip's floor at its ``y = 0``, as the report's
    rows are (each foot joint against its own floor in the source); ``source_fk``: the
    source's world transforms if known (:attr:`Placed.source_fk`)."""
    from ..metrics import foot_metrics

    return foot_metrics(result.motion, source, _floors(result, world), result.legs, source_fk)


def result_summary(
    result: FootResult, source: Motion, world: Any, source_fk: Any = None
) -> dict[str, Any]:
    """The overall values of :func:`result_metrics` (:func:`~ikrig.metrics.foot_summary`):
    what a batch records per clip."""
    from ..metrics import foot_summary

    return foot_summary(result.motion, source, _floors(result, world), result.legs, source_fk)


def _floors(result: FootResult, world: Any) -> Any:
    from ..ground.views import RaisedGround

    return RaisedGround(world, -result.sole.floor)
