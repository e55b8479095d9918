"""Foot-placement building blocks on synthetic cases with known answers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ikrig.character import find_legs
from ikrig.errors import InputError
from ikrig.foot import AlignOptions, FootOptions, LockOptions
from ikrig.foot.options import LIMITS
from ikrig.foot.stages.contacts import detect_contacts, horizontal_speed, pinning_curve
from ikrig.foot.stages.knees import knee_angles_from_reach, smooth_knee_targets
from ikrig.foot.stages.lock import lock_feet, new_lock_state
from ikrig.signal.filters import (
    angular_jump,
    jerk_excess,
    running_max,
    upper_envelope,
    zero_lag_smooth,
)
from ikrig.signal.springs import Spring, smooth
from ikrig.skeleton import Skeleton


def leg_skeleton(names, toe=True):
    """Pelvis root with two legs along -Y, left at +X; names: (hip, knee, ankle, toe) per side."""
    joints, parents, offsets = ["root"], [-1], [[0, 1, 0]]
    for side, x in (("L", 0.1), ("R", -0.1)):
        base = len(joints)
        names_side = [n.format(s=side, side="Left" if side == "L" else "Right",
                               low=side.lower()) for n in names]  # fmt: skip
        joints += names_side[: 4 if toe else 3]
        parents += [0, base, base + 1] + ([base + 2] if toe else [])
        offsets += [[x, 0, 0], [0, -0.45, 0], [0, -0.42, 0]] + ([[0, -0.05, 0.12]] if toe else [])
    return Skeleton(tuple(joints), parents, offsets)


@pytest.mark.parametrize(
    "names",
    [
        ("{side}UpLeg", "{side}Leg", "{side}Foot", "{side}ToeBase"),  # CMU MotionBuilder, Mixamo
        ("{side}Hip", "{side}Knee", "{side}Ankle", "{side}Toe"),  # CMU 3ds Max
        ("mixamorig:{side}UpLeg", "mixamorig:{side}Leg", "mixamorig:{side}Foot",
         "mixamorig:{side}ToeBase"),
        ("thigh_{low}", "calf_{low}", "foot_{low}", "ball_{low}"),  # Unreal mannequin
        ("{s}_Hip", "{s}_Knee", "{s}_Ankle", "{s}_Toe"),
        ("Thigh.{s}", "Shin.{s}", "Foot.{s}", "Toe.{s}"),  # Blender
        ("Bip01 {s} Thigh", "Bip01 {s} Calf", "Bip01 {s} Foot", "Bip01 {s} Toe0"),
    ],
)  # fmt: skip
def test_legs_found_by_name(names):
    sk = leg_skeleton(names)
    legs = find_legs(sk)
    assert [g.side for g in legs.legs] == ["left", "right"]
    left = legs.legs[0]
    assert (left.hip, left.knee, left.ankle, left.toe) == (1, 2, 3, 4)
    assert legs.leg_length == pytest.approx(0.87)


def test_legs_by_topology_and_override():
    sk = leg_skeleton(("a{s}", "b{s}", "c{s}", "d{s}"))
    legs = find_legs(sk)  # no useful names: the two lowest leaves on either side
    assert [(g.hip, g.knee, g.ankle, g.toe) for g in legs.legs] == [(1, 2, 3, 4), (5, 6, 7, 8)]
    legs = find_legs(sk, "aL,bL,cL;aR,bR,cR,dR")
    assert legs.legs[0].toe == -1 and legs.legs[1].toe == 8
    with pytest.raises(InputError, match="not a child"):
        find_legs(sk, "aL,cL,bL")
    torso = Skeleton(("hips", "spine", "head"), [-1, 0, 1], [[0, 1, 0], [0, 0.3, 0], [0, 0.3, 0]])
    with pytest.raises(InputError, match="--legs") as err:
        find_legs(torso)
    assert "hips, spine, head" in str(err.value)


def test_legs_found_on_every_shared_clip(bvh_files):
    from ikrig.io import read_bvh

    for path in bvh_files:
        sk = read_bvh(path).motion.skeleton
        legs = find_legs(sk)
        assert [g.side for g in legs.legs] == ["left", "right"], path.name
        for g in legs.legs:
            assert sk.names[g.ankle].lower().replace("left", "").replace("right", "") in (
                "foot", "ankle")  # fmt: skip
        assert legs.leg_length > 0


def test_contacts_hysteresis_span_and_pins():
    F, dt, L = 60, 1 / 30, 1.0
    h = np.full((F, 1, 1), 0.5)
    h[10:30] = 0.01  # planted for 20 frames
    h[30:32] = 0.04  # above the enter threshold but under the stay one: contact holds
    h[45] = 0.0  # too short a contact: dropped
    h[50] = 0.04  # never entered: the enter threshold is stricter
    s = np.zeros_like(h)
    c = detect_contacts(h, s, L, dt)[:, 0]
    assert c[10:32].all() and not c[:10].any() and not c[32:].any()
    pins = pinning_curve(c[:, None], dt, blend_in=0.1, blend_out=0.1)[:, 0]
    assert (pins[c] == 1).all() and pins[0] == 0 and pins[-1] == 0
    assert 0 < pins[8] < 1 and 0 < pins[33] < 1
    assert np.all(np.abs(np.diff(pins)) < 0.6)


@given(
    arrays(np.bool_, st.tuples(st.integers(1, 80), st.integers(1, 3))),
    st.sampled_from([1 / 24, 1 / 30, 1 / 60, 0.0083]),
    st.sampled_from([0.0, 0.1, 0.15, 0.3]),
    st.sampled_from([0.0, 0.1, 0.2]),
)
@settings(max_examples=80, deadline=None)
def test_pinning_curve_is_the_ramp_formula(c, dt, blend_in, blend_out):
    """The compiled pinning curve gives the bits of the formula: a smoothstep ramp over the
    time to the next contact frame and since the last one, combined as ``1 - (1 - a)(1 -
    b)``, 1 in contact, 0 for a foot that never touches."""
    F = len(c)
    t = np.arange(F) * dt
    want = np.zeros(c.shape)
    for k in range(c.shape[1]):
        idx = np.flatnonzero(c[:, k])
        if not len(idx):
            continue
        nxt = np.searchsorted(idx, np.arange(F))
        after = np.where(nxt < len(idx), t[idx[np.minimum(nxt, len(idx) - 1)]] - t, np.inf)
        since = np.where(nxt > 0, t - t[idx[np.maximum(nxt - 1, 0)]], np.inf)
        ramps = []
        for gap, blend in ((after, blend_in), (since, blend_out)):
            x = np.clip(1 - gap / blend, 0.0, 1.0) if blend > 0 else (gap == 0) * 1.0
            ramps.append(x * x * (3 - 2 * x) if blend > 0 else x)
        want[:, k] = np.maximum(1 - (1 - ramps[0]) * (1 - ramps[1]), c[:, k])
    np.testing.assert_array_equal(pinning_curve(c, dt, blend_in, blend_out), want)


@given(
    arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 3), st.just(3)),
           elements=st.floats(-1e3, 1e3)),
    st.sampled_from([1 / 24, 1 / 60, 0.0083]),
)  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_horizontal_speed_is_numpys_gradient(p, dt):
    """The compiled speed gives the bits of ``np.gradient`` over X and Z and their norm."""
    want = np.zeros(p.shape[:-1])
    if len(p) >= 2:
        want = np.linalg.norm(np.gradient(p[..., [0, 2]], dt, axis=0), axis=-1)
    np.testing.assert_array_equal(horizontal_speed(p, dt), want)


def test_contacts_need_slow_feet():
    h = np.zeros((30, 1, 2))
    s = np.full_like(h, 5.0)  # fast everywhere: never a contact
    assert not detect_contacts(h, s, 1.0, 1 / 30).any()


def test_spring_is_frame_rate_independent_and_live_equals_offline():
    t30, t120 = np.arange(0, 2, 1 / 30), np.arange(0, 2, 1 / 120)
    for fn in (lambda t: np.sin(3 * t), lambda t: np.clip(t - 0.5, 0, None)):
        a = smooth(fn(t30), 1 / 30, 0.1)
        b = smooth(fn(t120), 1 / 120, 0.1)[::4]
        assert np.abs(a - b).max() < 1e-3
    g = np.r_[np.zeros(5), np.ones(40)]
    offline = smooth(g, 1 / 30, 0.1)
    spring = Spring(0.1)
    live = np.array([spring.update([x], 1 / 30)[0] for x in g])
    np.testing.assert_array_equal(live, offline)
    assert offline[-1] == pytest.approx(1, abs=1e-3) and np.all(np.diff(offline) >= -1e-12)
    np.testing.assert_array_equal(smooth(g, 1 / 30, 0.0), g)


def test_locking_holds_the_planted_point_then_releases():
    F = 40
    contact = np.zeros((F, 1), dtype=bool)
    contact[5:25] = True
    pts = np.zeros((F, 1, 2, 2))
    pts[:, 0, :, 0] = np.arange(F)[:, None] * 0.01  # sliding 1 cm per frame along x
    planted = np.zeros((F, 1), dtype=int)
    planted[15:] = 1  # the foot rolls onto the toe halfway through
    pts[:, 0, 1, 0] += 0.2
    out = lock_feet(contact, planted, pts, 1 / 30, radius=0.5, halflife=0.05)
    held = pts[5:25, 0, 0, 0] + out[5:25, 0, 0]
    np.testing.assert_allclose(held[:10], held[0], atol=1e-12)  # heel held
    toe = pts[15:25, 0, 1, 0] + out[15:25, 0, 0]
    np.testing.assert_allclose(toe, toe[0], atol=1e-12)  # then the toe
    assert abs(out[-1, 0, 0]) < 1e-3  # released after the span
    # no jump: the release moves the foot back over several frames
    assert np.abs(np.diff(out[:, 0, 0])).max() <= 0.35 * np.abs(out[:, 0, 0]).max()
    # past the radius the lock lets go
    out2 = lock_feet(contact, planted * 0, pts, 1 / 30, radius=0.05, halflife=0.05)
    assert np.abs(out2[5:25, 0, 0]).max() < 0.07
    # live, frame by frame, equals offline
    state = new_lock_state(1)
    live = np.concatenate([lock_feet(contact[f:f + 1], planted[f:f + 1], pts[f:f + 1],
                                     1 / 30, 0.5, 0.05, state) for f in range(F)])  # fmt: skip
    np.testing.assert_array_equal(live, out)


# ------------------------------------------------------------- offline plan smoothing


@given(
    arrays(np.float64, st.tuples(st.integers(1, 60), st.integers(1, 3)),
           elements=st.floats(-1.0, 1.0)),
    st.integers(0, 8),
)  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_upper_envelope_is_never_below(x, r):
    env = upper_envelope(x, r)
    assert env.shape == x.shape
    assert (env >= x - 1e-12).all()


@given(
    arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 3), st.integers(1, 2)),
           elements=st.floats(-1e3, 1e3)),
    st.integers(1, 9),
    st.sampled_from([1 / 30, 1 / 60, 0.0133]),
)  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_compiled_filters_are_the_plain_numpy_formulas(x, r, dt):
    """The filters' compiled loops give the bits of the NumPy formulas they stand for:
    shifted copies of the edge-padded signal, weighted and added in order, maximised, or
    second differences (any batch shape after the time axis, NaN kept by the maximum)."""
    pad = np.concatenate([np.repeat(x[:1], r, axis=0), x, np.repeat(x[-1:], r, axis=0)])
    w = np.cos(0.5 * np.pi * np.arange(-r, r + 1) / (r + 1)) ** 2
    w /= w.sum()
    smooth, top = w[0] * pad[: len(x)], pad[: len(x)].copy()
    for k in range(1, 2 * r + 1):
        smooth += w[k] * pad[k : k + len(x)]
        np.maximum(top, pad[k : k + len(x)], out=top)
    np.testing.assert_array_equal(zero_lag_smooth(x, r), smooth)
    np.testing.assert_array_equal(zero_lag_smooth(np.asfortranarray(x), r), smooth)
    np.testing.assert_array_equal(running_max(x, r), top)
    np.testing.assert_array_equal(running_max(np.asfortranarray(x), r), top)
    np.testing.assert_array_equal(running_max(x > 0, r), top > 0)
    jump = np.zeros_like(x)
    if len(x) > 2 * r:
        jump[r:-r] = (x[2 * r :] - 2.0 * x[r:-r] + x[: -2 * r]) / (r * dt)
    np.testing.assert_array_equal(angular_jump(x, dt, r), jump)
    x = x.copy()
    x[len(x) // 2] = np.nan
    assert np.isnan(running_max(x, r)[len(x) // 2]).all()


def test_zero_lag_smoothing_keeps_lines_and_rounds_corners():
    t = np.arange(50.0)[:, None]
    line = 0.3 * t - 2.0
    np.testing.assert_allclose(zero_lag_smooth(line, 5)[5:-5], line[5:-5], atol=1e-12)
    corner = np.abs(t - 25.0)
    sm = zero_lag_smooth(corner, 5)
    assert sm[25, 0] > 0.5  # the corner is rounded off
    np.testing.assert_allclose(sm[5:19], corner[5:19], atol=1e-12)  # far from it: unchanged
    np.testing.assert_array_equal(upper_envelope(np.ones((9, 2)), 3), np.ones((9, 2)))


def _leg_frames(ankle_y):
    """Hip at y = 1, knee in front, ankle straight below at ``ankle_y (F,)``: (F, 1, 3, 3)."""
    F = len(ankle_y)
    j = np.zeros((F, 1, 3, 3))
    j[:, 0, 0, 1] = 1.0
    j[:, 0, 2, 1] = ankle_y
    d = 1.0 - ankle_y  # hip-ankle distance; bones 0.5 and 0.5
    j[:, 0, 1, 1] = 1.0 - d / 2
    j[:, 0, 1, 2] = np.sqrt(np.maximum(0.25 - (d / 2) ** 2, 0.0))
    return j


def test_knee_smoothing_removes_pops_near_full_extension_and_leaves_smooth_paths():
    dt = 1 / 120
    F = 240
    src = _leg_frames(np.full(F, 0.01))  # nearly straight leg (reach 0.99)
    hips = src[:, :, 0].copy()
    targets = src[:, :, 2].copy()
    # a sharp 5 mm kink in the target path: a pop at this extension
    targets[:, 0, 1] += 0.005 * np.maximum(0.0, 1 - np.abs(np.arange(F) - 120) / 4)
    src_knee = knee_angles_from_reach(np.full((F, 1), 0.99), 0.5, 0.5)

    def knee(t):
        return knee_angles_from_reach(np.linalg.norm(hips - t, axis=-1), 0.5, 0.5)

    assert jerk_excess(knee(targets), src_knee, dt, 1 / 30).max() > 2.0
    out = smooth_knee_targets(src, hips, targets, 7, dt, 1.5)
    assert jerk_excess(knee(out), src_knee, dt, 1 / 30).max() <= 1.5 + 1e-9
    assert np.abs(out - targets).max() < 0.005  # moved by less than the kink itself
    np.testing.assert_array_equal(out[:, :, [0, 2]], targets[:, :, [0, 2]])  # vertically
    assert (out[:, 0, 1] - targets[:, 0, 1]).min() < -0.002  # the kink's top comes down
    # given the ground as a bound (here: no lower than the kinked path), the knee is
    # smoothed by holding the foot up around the kink instead, a little and without a kink
    lowest = targets[:, :, 1].copy()
    held = smooth_knee_targets(src, hips, targets, 7, dt, 1.5, lowest)
    assert (held[:, :, 1] - lowest).min() >= -1e-12
    assert jerk_excess(knee(held), src_knee, dt, 1 / 30).max() <= 1.5 + 1e-9
    assert (held[:, :, 1] - targets[:, :, 1]).max() < 0.005
    # a smooth path is left exactly as it is
    smooth_targets = src[:, :, 2] + 0.01 * np.sin(np.arange(F) * dt * 2)[:, None, None]
    same = smooth_knee_targets(src, hips, smooth_targets, 7, dt, 1.5)
    np.testing.assert_array_equal(same, smooth_targets)


# ------------------------------------------------------------- options and recipes


def test_every_mode_has_a_recipe():
    from ikrig.foot import MODES, FootOptions
    from ikrig.foot.recipes import recipe_for

    for mode in MODES:
        assert recipe_for(FootOptions(mode=mode)).name == mode
    off = FootOptions(align=AlignOptions(enabled=False), lock=LockOptions(enabled=False))
    assert recipe_for(off).soles == ()


@pytest.mark.parametrize("key", sorted(LIMITS))
def test_every_foot_option_is_checked_against_its_rule(key):
    group_name, name = key.split(".")
    group = getattr(FootOptions(), group_name)
    assert name in {f.name for f in dataclasses.fields(group)}
    rule = LIMITS[key]
    for bad in (np.nan, np.inf, -5.0, (rule.hi + 1.0) if np.isfinite(rule.hi) else -1.0):
        with pytest.raises(InputError, match=name):
            dataclasses.replace(group, **{name: bad})
    dataclasses.replace(group, **{name: getattr(group, name)})  # the default passes


def _sliding_paw(frames: int = 60):
    """A foot that never counts as a contact, sliding back and forth on a slope: the ground
    under it wiggles (period 8 frames, 3 % of a leg) while it touches down every 16 frames."""
    t = np.arange(frames)
    ground = 0.03 * np.sin(2 * np.pi * t / 8) + 0.002 * t
    clearance = 0.08 * (1 - np.cos(2 * np.pi * t / 16)) / 2  # 0 at t = 0, 16, 32, ...
    return ground, clearance, np.zeros((frames, 1), dtype=bool)


def test_a_foot_without_contacts_follows_the_ground_where_it_touches_it():
    """Smoothing a ground-following plan averages in the ground under the foot's other
    frames: where the foot touches down, the old plan lifted it off (the Fox's front left
    paw on the slope, 0.79 % of a leg). Near the ground the plan is now the ground itself,
    never below where the sole touches, out of contact for feet with contacts too; near a
    riser and in contact it is unchanged."""
    from ikrig.foot.stages.swing import PlanHeights, plan_foot_offsets

    ground, clearance, contacts = _sliding_paw()
    planted = (ground - clearance)[:, None]
    args = (planted, clearance[:, None], contacts, 3.0, 3)
    old_heights, heights = PlanHeights(0.005, 0.01, 0, 0.2), PlanHeights(0.005, 0.01, 0.06, 0.2)
    exact = ground[:, None]  # the offset that keeps the recorded clearance over the ground
    down = clearance < 1e-9
    old = plan_foot_offsets(*args, old_heights)
    assert np.max(np.abs(old - exact)[down]) > 0.005  # lifted off (or sunk) by the smoothing
    new = plan_foot_offsets(*args, heights)
    np.testing.assert_allclose(new[down], exact[down], atol=1e-12)
    assert np.all(new >= planted - 1e-12)
    # across a riser's edge (the ground steps by 0.15 between two frames) the plan keeps
    # the smoothing, whose lift ahead keeps the foot out of the riser
    stepped = ground + 0.15 * (np.arange(len(ground)) >= 30)
    riser = ((stepped - clearance)[:, None], clearance[:, None], contacts) + args[3:]
    near = slice(30 - 3, 30 + 3)
    np.testing.assert_array_equal(
        plan_foot_offsets(*riser, heights)[near], plan_foot_offsets(*riser, old_heights)[near]
    )
    # a foot with contacts: out of contact the same rule holds (issue 34: the Fox's front
    # right paw, which touches down after its detected contact, rested 1.2 % above the
    # slope); in contact it is smoothed as before, never below where the sole touches
    walking = contacts.copy()
    walking[20:26] = True
    with_contacts = (planted, clearance[:, None], walking) + args[3:]
    new = plan_foot_offsets(*with_contacts, heights)
    old = plan_foot_offsets(*with_contacts, old_heights)
    assert np.all(new >= planted - 1e-12)
    away = down & ~walking.reshape(-1)
    np.testing.assert_allclose(new[away, 0], exact[away, 0], atol=1e-12)
    assert np.max(np.abs(old - exact)[away, 0]) > 0.005


def test_smoothing_lifts_a_short_contact_by_at_most_lift_above():
    """Issue 34: a contact shorter than the smoothing window (the Fox's hind paw, two frames
    of an 18-frame cycle, sliding back and forth over the slope) took the ground under the
    swing around it into its average, and rested 0.82 % of a leg over the slope. In
    contact on smooth ground the plan now stays within ``lift_above`` of the exact one
    (never below where the sole touches); a recorded dip deeper than ``lift_above`` is
    still rounded off as before."""
    from ikrig.foot.stages.swing import PlanHeights, plan_foot_offsets
    from ikrig.signal.filters import zero_lag_smooth

    frames = 18
    t = np.arange(frames)
    ground = -0.06 * np.cos(2 * np.pi * (t - 16.5) / frames)  # lowest under the contact
    clearance = 0.1 * (1 - np.cos(2 * np.pi * (t - 16) / 16)) / 2  # a swing arc
    clearance[16:] = 0.0
    contacts = np.zeros((frames, 1), dtype=bool)
    contacts[16:] = True
    planted = (ground - clearance)[:, None]
    heights = PlanHeights(0.005, 0.01, 0.06, 0.2)
    args = (contacts, 3.0, 3, heights)
    plan = plan_foot_offsets(planted, clearance[:, None], *args)
    exact = ground[16:, None]  # the offset that stands the sole on the ground
    assert np.max(zero_lag_smooth(ground[:, None], 3)[16:] - exact) > 0.005  # uncapped
    assert np.all(plan[16:] <= exact + 0.005 + 1e-12), plan[16:] - exact
    assert np.all(plan >= planted - 1e-12)
    # a deep recorded dip (3 % below the floor) is kept to 1 % and rounded off, as before
    dipped = clearance.copy()
    dipped[16:] = -0.03
    deep = plan_foot_offsets(planted, dipped[:, None], *args)
    assert np.max(deep[16:] - (exact - 0.01)) > 0.005  # lifted by the smoothing


def _landing_on_a_step():
    """One foot: a contact on the ground at 0, a low swing (5 % clearance) over two risers of
    0.15 (one early in the swing, which asks for a high bump, one four frames before the
    landing), a contact on the upper tread from frame 40."""
    frames = 60
    t = np.arange(frames)
    ground = 0.15 * (t >= 23) + 0.15 * (t >= 36)
    clearance = 0.05 * np.sin(np.pi * np.clip((t - 19) / 21, 0, 1)) ** 2
    contacts = ((t < 20) | (t >= 40))[:, None]
    return ground, clearance, contacts


def test_a_foot_landing_on_a_step_stands_on_it_from_the_first_frame():
    """Issue 34: near a riser the whole plan was smoothed, so the swing's steep descent from
    its bump was averaged into the first frames of the contact, and the landed foot hovered
    over the tread (the built-in walk after a stand, on the stairs: 2.9 % of a leg at the
    landing, float p95 4.22 against the recording's own 3.99). The smoothing now fades out
    towards a landing whose planned swing clears the ground on its own: the foot stands on
    the tread from its first frame, its descent no sharper than the planned swing's own."""
    from ikrig.foot.stages.swing import PlanHeights, plan_foot_offsets

    ground, clearance, contacts = _landing_on_a_step()
    planted = (ground - clearance)[:, None]
    heights = PlanHeights(0.005, 0.01, 0.06, 0.3)
    args = (planted, clearance[:, None], contacts, 3.0)
    plan = plan_foot_offsets(*args, 7, heights, 1.0, 3)
    raw = plan_foot_offsets(*args, 0, heights, 1.0, 3)  # the planned swing, unsmoothed
    over = (plan - ground[:, None])[40:, 0]  # in contact on the tread
    assert over[0] == pytest.approx(0.0, abs=1e-12) and over.max() <= 0.005, over
    assert np.all(plan >= planted - 1e-12)
    descent = np.abs(np.diff(plan[33:48, 0], 2)).max()
    assert descent <= np.abs(np.diff(raw[:, 0], 2)).max(), descent


def test_the_smoothing_fades_only_at_landings_onto_steps_the_swing_clears():
    """:func:`_landing_fades`: 0 at a landing with a riser crossed just before it, smoothly
    back to 1 within the window; 1 everywhere when no riser was crossed, when one lies under
    the foot right after the landing (the smoothing's lift ahead of it is needed), when
    the planned swing cuts into the ground before the landing (a foot stepping down past an
    edge: the lift out of the ground needs the smoothed plan), or when no contact came
    before it (no swing was planned, only the ground under the foot, whose jump at a riser
    the smoothing rounds off)."""
    from ikrig.foot.stages.swing import _landing_fades, _steps

    ground, _, contacts = _landing_on_a_step()
    steps = _steps(ground[:, None], 0.06)
    clears = np.ones_like(contacts)
    fade = _landing_fades(clears, steps, contacts, 7)[:, 0]
    assert fade[40] == 0.0 and np.all(fade[:34] == 1.0) and np.all(fade[47:] == 1.0)
    assert np.all(np.diff(fade[33:41]) <= 0) and np.all(np.diff(fade[40:48]) >= 0)
    flat = _steps(np.zeros((60, 1)), 0.06)
    assert np.all(_landing_fades(clears, flat, contacts, 7) == 1.0)
    later = _steps((0.15 * (np.arange(60) >= 44))[:, None], 0.06)  # a riser under the stance
    assert np.all(_landing_fades(clears, steps | later, contacts, 7) == 1.0)
    cut = clears.copy()
    cut[38] = False
    assert np.all(_landing_fades(cut, steps, contacts, 7) == 1.0)
    first = contacts & (np.arange(60) >= 40)[:, None]  # no contact before: no swing planned
    assert np.all(_landing_fades(clears, steps, first, 7) == 1.0)


def test_a_foot_lifting_off_a_step_stands_on_it_to_its_last_frame():
    """Issue 34: the landing run backwards. The smoothing averaged the swing's rise into the
    last frames of a contact on a tread and lifted the foot before it left (a trot's front
    paw on the stairs: 2.2 % of a leg at its last contact frame). It now fades out there
    too: the foot stands on the tread to its last contact frame."""
    from ikrig.foot.stages.swing import PlanHeights, plan_foot_offsets

    ground, clearance, contacts = (a[::-1] for a in _landing_on_a_step())
    planted = (ground - clearance)[:, None]
    heights = PlanHeights(0.005, 0.01, 0.06, 0.3)
    plan = plan_foot_offsets(planted, clearance[:, None], contacts, 3.0, 7, heights, 1.0, 3)
    over = (plan - ground[:, None])[:20, 0]  # in contact on the tread
    assert over[-1] == pytest.approx(0.0, abs=1e-12) and over.max() <= 0.005, over
    assert np.all(plan >= planted - 1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_the_smoothing_fades_the_same_run_forwards_or_backwards(seed):
    """:func:`_edge_fades` is symmetric in time: a clip run backwards fades at its lift-offs
    as the clip does at its landings (random risers, contacts and cuts)."""
    from ikrig.foot.stages.swing import _edge_fades, _steps

    rng = np.random.default_rng(seed)
    F, feet = 120, 2
    ground = np.cumsum(rng.choice([0.0, 0.15, -0.15], (F, feet), p=[0.9, 0.05, 0.05]), axis=0)
    contacts = np.repeat(rng.random((F // 6, feet)) < 0.5, 6, axis=0)
    clears = rng.random((F, feet)) < 0.97
    fade = _edge_fades(clears, _steps(ground, 0.06), contacts, 5)
    back = _edge_fades(clears[::-1], _steps(ground[::-1], 0.06), contacts[::-1], 5)[::-1]
    assert np.array_equal(fade, back)
    assert (fade < 1.0).any()
