"""Issue 11: any number of legs. A four-legged character made by code trots over uneven
ground with all four feet planted; legs are named with the override string."""

from __future__ import annotations

import numpy as np
import pytest

from ikrig.character import find_legs, pelvis_joint
from ikrig.errors import InputError
from ikrig.foot import place_feet
from ikrig.ground import load_ground
from ikrig.metrics import foot_metrics
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.two_bone import solve_two_bone

LEGS = "hip_hl,knee_hl,ankle_hl,toe_hl;hip_hr,knee_hr,ankle_hr,toe_hr;" + (
    "hip_fl,knee_fl,ankle_fl,toe_fl;hip_fr,knee_fr,ankle_fr,toe_fr"
)
LEG = 0.9  # thigh + shin


def _skeleton() -> Skeleton:
    names, parents, offsets = ["pelvis", "chest"], [-1, 0], [[0, 1.0, 0], [0, 0, 1.0]]
    for body, tag in ((0, "hl"), (0, "hr"), (1, "fl"), (1, "fr")):
        x = 0.2 if tag.endswith("l") else -0.2
        n = len(names)
        names += [f"hip_{tag}", f"knee_{tag}", f"ankle_{tag}", f"toe_{tag}"]
        parents += [body, n, n + 1, n + 2]
        offsets += [[x, -0.05, 0], [0, -0.45, 0.02], [0, -0.45, -0.02], [0, -0.05, 0.12]]
    return Skeleton(tuple(names), parents, offsets)


def _trot(seconds=3.0, fps=60.0, speed=0.6, stride=0.5) -> Motion:
    """A trot by code: diagonal pairs swing in turn (half the cycle each), every foot planted
    still on the floor in its stance and lifted on an arc in its swing."""
    sk = _skeleton()
    F = int(seconds * fps)
    t = np.arange(F) / fps
    rest = Motion.rest(sk, batch_shape=(F,), frame_time=1.0 / fps)
    pos = rest.positions_local.copy()
    pos[:, 0, 1] = 0.93  # the legs a little bent
    pos[:, 0, 2] = speed * t
    motion = rest.replace(positions_local=pos)
    period = stride / speed  # one step of each pair
    legs = find_legs(sk, LEGS)
    for k, leg in enumerate(legs.legs):
        phase = ((t / period) + (0.5 if k in (1, 2) else 0.0)) % 1.0
        hip = motion.positions_world()[:, leg.hip]
        # the foot lands at the hip's place half a stride ahead and stays until lift-off
        cycle = np.floor(t / period + (0.5 if k in (1, 2) else 0.0))
        land_z = (cycle * period - (0.5 if k in (1, 2) else 0.0) * period) * speed
        stance = phase < 0.5
        z = np.where(
            stance, land_z + 0.25 * stride, land_z + 0.25 * stride + stride * 2 * (phase - 0.5)
        )
        z = z + (hip[:, 2] - pos[:, 0, 2])  # the leg's own place along the body
        y = 0.05 + np.where(stance, 0.0, 0.12 * np.sin(np.pi * 2 * (phase - 0.5)))
        target = np.stack([hip[:, 0], y, z], axis=-1)
        motion = solve_two_bone(motion, leg.joints, target).motion
    return motion


@pytest.fixture(scope="module")
def trot():
    return _trot()


def test_four_legs_are_named_and_a_leg_given_twice_is_refused():
    sk = _skeleton()
    legs = find_legs(sk, LEGS)
    assert [leg.side for leg in legs.legs] == ["left", "right", "leg2", "leg3"]
    assert pelvis_joint(sk, legs) == sk.index("pelvis")  # hips under pelvis and chest
    twice = LEGS + ";hip_hl,knee_hl,ankle_hl"
    with pytest.raises(InputError, match="'hip_hl' is in leg 1 and leg 5"):
        find_legs(sk, twice)


@pytest.mark.parametrize("ground_name", ["flat", "slope", "bumps", "blocks"])
def test_a_four_legged_trot_keeps_all_four_feet_planted(trot, ground_name):
    sk = trot.skeleton
    legs = find_legs(sk, LEGS)
    path = trot.positions_world()[:, pelvis_joint(sk, legs), [0, 2]]
    ground = load_ground(ground_name, path, legs.leg_length)
    r = place_feet(trot, ground, legs=legs)
    assert r.contacts.any(axis=0).all()  # every foot plants
    m = foot_metrics(r.motion, trot, ground, legs)
    assert m["pen_p95"] <= 0.5 and (m["float_mean"] or 0.0) <= 1.0, m
    for side in ("left", "right", "leg2", "leg3"):
        foot = m["per_foot"][side]
        assert (foot["float_mean"] or 0.0) <= 1.0 and foot["pen_p95"] <= 0.5, (side, foot)
    assert m["bone_drift"] < 1e-6 and m["pops"] == 0
    # the trot made by code does not skate at all (1e-11); turning the feet to a slope moves
    # the toes a little: a quarter of a percent of a leg per second at most
    assert m["skate"] <= m["skate_source"] + 0.25
