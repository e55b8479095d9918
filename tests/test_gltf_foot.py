"""Issue 14: foot placement on real glTF characters that walk in place (CesiumMan's walk,
the Godot platformer robot's walk and run, the Fox's walk with its four legs named), placed
on slope and stairs with ``place_clip`` (mode full), held to issue 11's bar the BVH clips
meet (``helpers.assert_foot_bar``).

Measured the outsider's way, :func:`~ikrig.app.placement.result_metrics` against the clip's own
floors. A cycle in place has a complication: its stance foot slides (the treadmill), so the
metrics' contact rule (low *and* slow) finds few or no contacts on the source as given, and
float and skate over contacts are empty. Those two are therefore also read on both clips
carried against the belt (the source's stance velocity, estimated here from the source's
lowest foot joint, not from the pipeline), where stance feet stand still; heights are still
read in place, where the ground is. Cases the pipeline does not yet meet are strict xfails
carrying their figures: they fail the run once fixed, so the marks get removed. On stairs
the cause is the treadmill itself: the stance foot slides across step edges while planted,
and the sole is kept above the ground from heel to toe, so the end over the lower tread
floats (3-4 % of a leg). Tiling the short cycles three times changes none of this (the
walk-in-place detection already works on 26 to 48 frames).

Walking the cycles (``FootPlacement(walk=True)``, ``ikrig foot --walk``: the root carried
by minus the belt's integral) is what stairs need: the stance feet stand still, the clip is
placed as a recorded walk (contacts by the usual rule, foot lock, footprints off the
edges), and the standard measure (``result_metrics`` against the walked source) applies
unchanged. Playing a cycle several times before walking it (``cycles``) helps the Fox's
18-frame walk (on the stairs: no knee pop, every foot joint within 0.25 % of the ground,
against one pop and 0.72 % walked once) and is not used for the others: three of Godot's
walk gained 6-7 knee pops on slope and stairs, three of CesiumMan's floated 1.35 % on the
stairs (0.98 once).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pygltflib")

from helpers import FOX_LEGS, SHARED_GLTF, assert_foot_bar, float_goal  # noqa: E402

from ikrig.app.placement import FootPlacement, place_clip, result_metrics  # noqa: E402
from ikrig.foot.travel import move_roots  # noqa: E402
from ikrig.ground.views import RaisedGround  # noqa: E402
from ikrig.io import read_gltf  # noqa: E402
from ikrig.metrics import CONTACT_HEIGHT, FLOOR_PERCENTILE, foot_metrics  # noqa: E402

pytestmark = pytest.mark.slow

GLTF = SHARED_GLTF


def _clip(name: str, animation: str | None):
    path = GLTF / f"{name}.glb"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    return read_gltf(path, animation=animation)


def belt(motion, legs) -> np.ndarray:
    """``(2,)`` the velocity of the source's stance: the median horizontal velocity of its
    lowest foot joint (over its own floor, as the metrics place floors) in the frames where
    that joint is within the metrics' contact height."""
    p = motion.positions_world()
    idx = [j for g in legs.legs for j in (g.ankle, g.toe) if j >= 0]
    feet = p[:, idx]
    h = feet[..., 1] - np.percentile(feet[..., 1], FLOOR_PERCENTILE, axis=0)
    rows = np.arange(len(feet))
    low = np.argmin(h, axis=1)
    v = np.gradient(feet[..., [0, 2]], motion.frame_time, axis=0)[rows, low]
    near = h[rows, low] <= CONTACT_HEIGHT * legs.leg_length
    return np.median(v[near], axis=0)


def carried(motion, v: np.ndarray):
    """``motion`` with its roots carried by ``-v t``: a cycle in place walking off its belt."""
    t = np.arange(motion.num_frames) * motion.frame_time
    return move_roots(motion, 0.0, np.zeros(2), -t[:, None] * v)


def measures(placed):
    """``(in place, float over carried contacts, skate carried)``: three foot_metrics dicts."""
    result = placed.results["full"]
    m = result_metrics(result, placed.source, placed.world())
    v = belt(placed.source, placed.legs)
    walking = carried(placed.source, v)
    floors = RaisedGround(placed.world(), -result.sole.floor)
    f = foot_metrics(result.motion, walking, floors, placed.legs)
    s = foot_metrics(carried(result.motion, v), walking, None, placed.legs)
    return m, f, s


def _open(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


# (clip, animation, ground): measured float mean over the carried contacts, % of a leg
# (the animations' own float on their own floor, unchanged: CesiumMan 1.55, walk 1.58, run 0.70)
CASES = [
    ("CesiumMan", None, "slope"),
    pytest.param("CesiumMan", None, "stairs",
                 marks=_open("float mean 2.06 % (2.42 before the plan's shorter lift out of the"
                             " ground, 4.0 before issue 34), its own 1.55")),
    ("GodotPlatformerPlayer", "walk", "slope"),
    pytest.param("GodotPlatformerPlayer", "walk", "stairs",
                 marks=_open("float mean 2.44 %, its own 1.58 (1.89 while the smoothing"
                             " also faded out at a foot's first landing onto a step, which"
                             " floats the walked cycle up the stairs 1.16 % against 1.05, its"
                             " own 1.21; 3.08 before the plan's shorter lift out of the"
                             " ground)")),
    ("GodotPlatformerPlayer", "run", "slope"),
    ("GodotPlatformerPlayer", "run", "stairs"),  # 0.56 (3.64 before footprints were read
    # over their whole contact, issue 34)
]  # fmt: skip
BODY = [(c, a, g) for c in ("CesiumMan",) for a in (None,) for g in ("slope", "stairs")] + [
    ("GodotPlatformerPlayer", a, g) for a in ("walk", "run") for g in ("slope", "stairs")
]


@pytest.mark.parametrize("name, animation, ground", BODY)
def test_gltf_walks_in_place_keep_the_bar_in_place(name, animation, ground):
    """Penetration, pops, bones, the pelvis's path and bob: the bar as is; skate (carried)
    no worse than the source's."""
    clip = _clip(name, animation)
    placed = place_clip(clip.motion, ground, ["full"])
    assert placed.walks_in_place
    m, _, s = measures(placed)
    key = (name, animation, ground)
    assert m["pen_p95"] <= 0.5, (key, m)
    if ground == "stairs":
        assert m["pen_max"] <= 2.0, (key, m)
    assert m["pops"] == 0 and m["bone_drift"] < 1e-6 and m["misses"] == 0, (key, m)
    assert m["pelvis_dev"] < 1e-9 and m["pelvis_acc_ratio"] <= 3.0, (key, m)
    assert s["skate_source"] is not None, key  # the carried source has contacts
    assert s["skate"] <= s["skate_source"] + 1e-9, (key, s)


@pytest.mark.parametrize("name, animation, ground", CASES)
def test_gltf_walks_in_place_float_over_their_contacts(name, animation, ground):
    clip = _clip(name, animation)
    placed = place_clip(clip.motion, ground, ["full"])
    _, f, _ = measures(placed)
    walking = carried(placed.source, belt(placed.source, placed.legs))
    own = foot_metrics(walking, walking, None, placed.legs)["float_mean"]
    assert f["float_mean"] is not None, (name, ground)
    assert f["float_mean"] <= float_goal(own), (name, animation, ground, f["float_mean"], own)


ALONG_THE_TREADS = FootPlacement(at=(0.0, 0.0), heading=np.pi / 2)
"""In place, facing +X: along the treads of the built-in stairs, which rise along +Z under a
clip that does not travel (``ground.procedural.STILL_PATH``)."""


@pytest.mark.parametrize("name, animation", [("CesiumMan", None),
                                             ("GodotPlatformerPlayer", "walk"),
                                             ("GodotPlatformerPlayer", "run")])  # fmt: skip
def test_in_place_on_stairs_along_the_treads_floats_no_more_than_the_animation(name, animation):
    """Facing up the stairs, a cycle in place slides each stance foot back by half a stride
    (0.5-0.7 of a leg) while it is down, so with the foot's length it crosses a riser
    (treads are 0.6 of a leg): the strict xfails above. Facing along the treads, as the
    README advises, no stance crosses an edge: the bar holds as in place on the slope, and
    the float over the carried contacts is at most the animation's own on a flat floor
    (measured 1.11 against 1.55, 1.36 against 1.58, 0.60 against 0.70)."""
    clip = _clip(name, animation)
    placed = place_clip(clip.motion, "stairs", ["full"], placement=ALONG_THE_TREADS)
    assert placed.walks_in_place
    m, f, s = measures(placed)
    key = (name, animation)
    assert m["pen_p95"] <= 0.5 and m["pen_max"] <= 2.0, (key, m)
    assert m["pops"] == 0 and m["bone_drift"] < 1e-6 and m["pelvis_dev"] < 1e-9, (key, m)
    assert m["pelvis_acc_ratio"] <= 3.0, (key, m)
    assert s["skate"] <= s["skate_source"] + 1e-9, (key, s)
    walking = carried(placed.source, belt(placed.source, placed.legs))
    own = foot_metrics(walking, walking, None, placed.legs)["float_mean"]
    assert f["float_mean"] is not None and own is not None
    assert f["float_mean"] <= float_goal(own), (key, f["float_mean"], own)


@pytest.mark.parametrize("name, animation", [("CesiumMan", None),
                                             ("GodotPlatformerPlayer", "walk"),
                                             ("GodotPlatformerPlayer", "run")])  # fmt: skip
def test_float_on_a_slope_is_no_more_than_the_animations_own(name, animation):
    """These game cycles do not stand their stance feet on one level: the clip itself,
    unchanged on a flat floor, floats 1.55 % (CesiumMan), 1.58 % (walk) and 0.70 % (run) of a
    leg over its contacts, so the 1 % bar sits below what the animation holds. Placed on the
    slope, the float is at most the animation's own (measured 1.08, 1.54, 0.65)."""
    clip = _clip(name, animation)
    placed = place_clip(clip.motion, "slope", ["full"])
    _, f, _ = measures(placed)
    walking = carried(placed.source, belt(placed.source, placed.legs))
    own = foot_metrics(walking, walking, None, placed.legs)["float_mean"]
    assert f["float_mean"] is not None and own is not None
    assert f["float_mean"] <= float_goal(own), (name, animation, f["float_mean"], own)


HOCKS = {"b_LeftFoot01_017": "b_LeftFoot02_018", "b_RightFoot01_021": "b_RightFoot02_022"}
"""The Fox's hind ankles (hocks, ``FOX_LEGS``' ankle joints) and the paw (toe) below each."""
PAWS = ["b_LeftFoot02_018", "b_RightFoot02_022", "b_LeftHand_011", "b_RightHand_08"]
"""The joints the Fox stands on: the hind legs' toes and the front legs' hands."""


def hock_allowance(ground: str, legs_unit: float) -> dict[str, float]:
    """How high (% of a leg) each hock may rest over the ground under it, its paw on the
    ground: 0.5 as for any foot joint, and on the slope the slope's rise over the hock's
    largest horizontal offset from its paw while the paw is down (within the metrics'
    contact height of its floor): the leg's pose kept, the hock stands that much higher over
    the ground under it than over a flat floor."""
    motion = _clip("Fox", "Walk").motion
    p, names = motion.positions_world(), list(motion.skeleton.names)
    rise = np.tan(np.radians(12.0)) if ground == "slope" else 0.0  # procedural.SLOPE_DEG
    out = {}
    for hock, paw in HOCKS.items():
        d = p[:, names.index(paw)] - p[:, names.index(hock)]
        y = p[:, names.index(paw), 1]
        down = (y - np.percentile(y, FLOOR_PERCENTILE)) * legs_unit <= 100 * CONTACT_HEIGHT
        offset = float(np.max(np.hypot(d[down, 0], d[down, 2]))) * legs_unit
        out[hock] = max(0.5, rise * offset)
    return out


def assert_feet_down(m: dict, ground: str) -> None:
    """Every paw of ``m`` (the Fox's :func:`~ikrig.app.placement.result_metrics`) rests on the
    ground (planted shift <= 0.5 % of a leg), every hock within :func:`hock_allowance`."""
    assert sorted(m["per_joint"]) == sorted(PAWS + list(HOCKS))
    for paw in PAWS:
        assert m["per_joint"][paw]["planted_shift"] <= 0.5, (ground, paw, m["per_joint"][paw])
    for hock, allowed in hock_allowance(ground, 100.0 / m["leg_length"]).items():
        assert m["per_joint"][hock]["planted_shift"] <= allowed, (ground, hock, allowed)


@pytest.mark.parametrize(
    "ground",
    [
        "flat",
        "slope",  # hind left paw 0.04 % (0.82 when the plan's smoothing lifted it)
        pytest.param(
            "stairs",
            marks=_open(
                "paws over the ground: hind 0.88 and 0.04 %, front 0.00 and 2.43 (1.38"
                " and 2.52 before the front left paw, which never plants, was carried by"
                " its hip; 0.88, 1.07, 1.77 and 2.58 before issue 34's footprint slides;"
                " the treadmill across risers)"
            ),
        ),
    ],
)
def test_the_fox_keeps_its_four_feet_on_the_ground(ground):
    """Fox.glb's walk (18 frames, 0.71 s, in place) with its four legs named: no foot sinks
    (penetration p95 and max per foot within the bar) and every paw comes down to the
    ground (``planted_shift``, the 5th percentile of its height over the ground, within the
    flat-ground bar of 0.5 %), the hocks as :func:`assert_feet_down` allows (on the slope
    1.54 and 1.50 % against 3.1 and 3.4; 2.15 and 1.81 before the body pitched). Float over
    contacts cannot be read here: in 18 frames the metrics' rule finds contacts on one foot
    only. On the stairs the paws slide
    across the risers while down (the treadmill), as the in-place cycles above do."""
    clip = _clip("Fox", "Walk")
    placed = place_clip(clip.motion, ground, ["full"], FOX_LEGS)
    assert placed.walks_in_place
    assert [g.side for g in placed.legs.legs] == [
        "hind_left", "hind_right", "front_left", "front_right"]  # fmt: skip
    m, _, _ = measures(placed)
    assert m["pops"] == 0 and m["bone_drift"] < 1e-6 and m["pelvis_dev"] < 1e-9, m
    for side, foot in m["per_foot"].items():
        assert foot["pen_p95"] <= 0.5 and foot["pen_max"] <= 2.0, (side, foot)
    assert_feet_down(m, ground)


WALK = FootPlacement(at=(0.0, 0.0), heading=0.5, walk=True)
"""Walked from the origin, facing 0.5 rad (29 degrees) off +Z: not along an axis."""

# (clip, animation, ground) walked: issue 11's bar, measured the standard way
WALKED = [
    pytest.param("CesiumMan", None, "slope"),  # float 0.98, skate 0.21
    pytest.param("CesiumMan", None, "stairs"),  # float 0.98, skate 0.33
    pytest.param("GodotPlatformerPlayer", "walk", "slope"),  # float 1.15, its own 1.21
    pytest.param("GodotPlatformerPlayer", "walk", "stairs"),  # float 0.96
    pytest.param("GodotPlatformerPlayer", "run", "slope"),  # float 0.67
    pytest.param("GodotPlatformerPlayer", "run", "stairs"),  # float 0.63
]  # fmt: skip


@pytest.mark.parametrize("name, animation, ground", WALKED)
def test_gltf_walk_cycles_walked_meet_the_bar(name, animation, ground):
    """A walk cycle walked on its belt from ``WALK``: its stance feet stand still, so the
    standard measure finds their contacts, and the result meets the BVH clips' bar."""
    clip = _clip(name, animation)
    placed = place_clip(clip.motion, ground, ["full"], placement=WALK)
    assert not placed.walks_in_place  # it walks now
    m = result_metrics(placed.results["full"], placed.source, placed.world())
    assert m["skate_source"] is not None and m["float_mean"] is not None, m  # contacts found
    assert_foot_bar(m, (name, ground))


@pytest.mark.parametrize("ground", ["slope", "stairs"])
@pytest.mark.parametrize("name, animation", [("CesiumMan", None),
                                             ("GodotPlatformerPlayer", "walk"),
                                             ("GodotPlatformerPlayer", "run")])  # fmt: skip
def test_walked_float_is_no_more_than_the_animations_own(name, animation, ground):
    """Where the bar is missed (Godot's walk on the slope, 1.06 %), the cause is the
    animation: the robot has no toe joint and lifts its ankle 2-5 % of a leg at the end of
    each stance while still slow enough to count as a contact, so the walked clip itself
    floats 1.21 % over its contacts on its own flat floor. Placed, the float is at most
    that."""
    clip = _clip(name, animation)
    placed = place_clip(clip.motion, ground, ["full"], placement=WALK)
    m = result_metrics(placed.results["full"], placed.source, placed.world())
    own = foot_metrics(placed.source, placed.source, None, placed.legs)["float_mean"]
    assert m["float_mean"] is not None and own is not None
    assert m["float_mean"] <= float_goal(own), (name, animation, ground, m["float_mean"], own)


def test_walking_moves_the_cycle_forward_at_its_feet_speed():
    """The walked source: pelvis at ``WALK.at`` at frame 0, then forward along the heading
    at the belt's speed (the in-place stance velocity this file measures independently)."""
    clip = _clip("GodotPlatformerPlayer", "walk")
    placed = place_clip(clip.motion, "flat", ["full"], placement=WALK)
    legs, motion = placed.legs, placed.source
    from ikrig.character.legs import pelvis_joint

    p = motion.positions_world()[:, pelvis_joint(motion.skeleton, legs)][:, [0, 2]]
    np.testing.assert_allclose(p[0], WALK.at, atol=1e-9)
    step = p[-1] - p[0]
    direction = np.array([np.sin(WALK.heading), np.cos(WALK.heading)])
    along = step @ direction
    assert abs(step @ [direction[1], -direction[0]]) <= 0.1 * along  # roughly straight
    speed = np.hypot(*belt(clip.motion, legs))
    duration = (motion.num_frames - 1) * motion.frame_time
    assert along / duration == pytest.approx(speed, rel=0.15), (along / duration, speed)


FOX_WALK = WALK._replace(cycles=3)
"""The Fox's 18-frame (0.71 s) walk played three times (its seam frame once), then walked."""


def _fox_walked(ground, placement=FOX_WALK):
    clip = _clip("Fox", "Walk")
    placed = place_clip(clip.motion, ground, ["full"], FOX_LEGS, placement=placement)
    assert not placed.walks_in_place
    assert placed.source.num_frames == 17 * placement.cycles + 1
    return result_metrics(placed.results["full"], placed.source, placed.world())


@pytest.mark.parametrize("ground", ["flat", "slope", "stairs"])
def test_the_fox_walked_keeps_its_four_feet_on_the_ground(ground):
    """The Fox's walk with its four legs, three cycles walked on their belt from ``WALK``:
    no foot sinks, every paw comes down to the ground (planted shift <= 0.5 % of a leg: the
    level it rests on is its recorded floor), and the standard measure finds contacts.

    The hocks are measured too, but they are no sole points: a hock stands 37 % of a leg
    above its paw and 10-15 % behind it, so on a 12 degree slope, with the paw on the ground
    and the leg's pose kept, it is higher over the ground under it than over a flat floor by
    about tan(12 deg) times that offset (measured 1.76 % left, 0.31 % right, against 2.1-3.2
    allowed); elsewhere they keep the 0.5 % bar. Until the no-contact plan was fixed the
    front left paw rested 0.79 % above the slope (it slides through every stance, so no
    contact is found for it and its plan was smoothed off the ground where it touches)."""
    m = _fox_walked(ground)
    assert m["bone_drift"] < 1e-6 and m["pelvis_dev"] < 1e-9, m
    assert m["pen_p95"] <= 0.5 and m["skate_source"] is not None, m
    assert m["skate"] <= m["skate_source"], m
    for side, foot in m["per_foot"].items():
        assert foot["pen_p95"] <= 0.5 and foot["pen_max"] <= 2.0, (side, foot)
    assert_feet_down(m, ground)


@pytest.mark.parametrize("ground", ["flat", "slope", "stairs"])
def test_the_fox_walked_keeps_its_knees(ground):
    """No knee pops on the walked Fox (issue 11's bar); walked as one 18-frame cycle, it
    had one on the stairs."""
    m = _fox_walked(ground)
    assert m["pops"] == 0, {side: foot["pops"] for side, foot in m["per_foot"].items()}
