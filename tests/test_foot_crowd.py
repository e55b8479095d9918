"""Live foot placement of a crowd (issue 12): ``FootPlacer(characters=K)`` places ``K``
poses per update, each with its own state, and gives each exactly what a placer of its own
gives, in every mode, on a built-in ground and on a mesh with a roof (whose ceilings are
tracked per character)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import quads_mesh

from ikrig.character import find_legs
from ikrig.data.walk import walk_clip
from ikrig.errors import InputError
from ikrig.foot import FootOptions, FootPlacer, place_feet
from ikrig.ground import load_ground
from ikrig.pose import Motion

LEG = 0.85  # the built-in humanoid's leg length
K = 3


@pytest.fixture(scope="module")
def walk():
    return walk_clip(seconds=1.5, fps=60.0)


def _cave():
    """A floor at 0 with a step up at z > 1.2 and a roof 1.4 legs above it all."""
    return quads_mesh([(-9, 9, -9, 1.2, 0.0), (-9, 9, 1.2, 9, 0.12), (-9, 9, -9, 9, 1.4 * LEG)])


def _ground(name: str, walk: Motion):
    if name == "cave":
        return _cave()
    return load_ground(name, walk.positions_world()[:, 0, [0, 2]], LEG, 0.0)


def _crowd_frames(walk: Motion, frames: int) -> list[Motion]:
    """``frames`` crowd poses ``(K,)``: character ``c`` plays the walk from frame ``5 c``,
    moved ``0.6 c`` sideways and ``0.3 c`` forward (a different part of the ground)."""
    out = []
    for f in range(frames):
        pose = walk[[f + 5 * c for c in range(K)]]
        pl = pose.positions_local.copy()
        pl[:, 0, 0] += 0.6 * np.arange(K)
        pl[:, 0, 2] += 0.3 * np.arange(K)
        out.append(pose.replace(positions_local=pl, frame_time=None))
    return out


@pytest.mark.parametrize("mode", ["full", "goal-blend", "trace-offset"])
@pytest.mark.parametrize("ground_name", ["stairs", "cave"])
def test_a_crowd_places_each_character_as_its_own_placer_would(walk, mode, ground_name):
    ground = _ground(ground_name, walk)
    options = FootOptions(mode=mode)
    crowd = FootPlacer.from_clip(walk, ground, options, characters=K)
    alone = [FootPlacer.from_clip(walk, ground, options) for _ in range(K)]
    dt = walk.frame_time
    for poses in _crowd_frames(walk, 60):
        placed = crowd.update(poses, dt)
        assert placed.batch_shape == (K,)
        for c in range(K):
            own = alone[c].update(poses[c], dt)
            np.testing.assert_array_equal(placed.rotations_local[c], own.rotations_local)
            np.testing.assert_array_equal(placed.positions_local[c], own.positions_local)


def test_a_crowd_takes_pins_per_character_and_resets_every_one(walk):
    ground = _ground("bumps", walk)
    crowd = FootPlacer.from_clip(walk, ground, characters=K)
    alone = [FootPlacer.from_clip(walk, ground) for _ in range(K)]
    pins = np.array([[1.0, 0.0], [0.0, 1.0], [0.3, 0.9]])
    frames = _crowd_frames(walk, 12)
    first = crowd.update(frames[0], walk.frame_time, pin=pins)
    for c in range(K):
        alone[c].update(frames[0][c], walk.frame_time, pin=pins[c])
    for poses in frames[1:]:
        placed = crowd.update(poses, walk.frame_time, pin=pins)
        for c in range(K):
            own = alone[c].update(poses[c], walk.frame_time, pin=pins[c])
            np.testing.assert_array_equal(placed.rotations_local[c], own.rotations_local)
    crowd.reset()
    again = crowd.update(frames[0], walk.frame_time, pin=pins)
    np.testing.assert_array_equal(again.rotations_local, first.rotations_local)


def test_a_crowd_checks_its_input(walk):
    ground = _ground("flat", walk)
    crowd = FootPlacer.from_clip(walk, ground, characters=K)
    poses = _crowd_frames(walk, 1)[0]
    plan = place_feet(walk, ground).plan(0)
    with pytest.raises(InputError, match="3 characters"):
        crowd.update(walk[0], walk.frame_time)  # one pose for three characters
    with pytest.raises(InputError, match="3 characters"):
        crowd.update(poses[:2], walk.frame_time)
    with pytest.raises(InputError, match="each of 3 characters"):
        crowd.update(poses, walk.frame_time, pin=[1.0, 0.0])
    with pytest.raises(InputError, match="one character"):
        crowd.update(poses, walk.frame_time, plan=plan)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InputError, match="characters"):
            FootPlacer.from_clip(walk, ground, characters=bad)
    assert FootPlacer.from_clip(walk, ground).update(walk[0], walk.frame_time).batch_shape == ()
    assert find_legs(walk.skeleton).leg_length == pytest.approx(LEG, rel=0.05)


def test_a_placer_takes_poses_of_its_own_rig_only(walk):
    """A pose of another skeleton is refused in one line (it used to index out of range);
    another clip of the same rig (an equal skeleton, not the same object) is taken."""
    from ikrig.skeleton import Skeleton

    placer = FootPlacer.from_clip(walk, _ground("flat", walk))
    other = Skeleton(("root", "tip"), [-1, 0], [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    with pytest.raises(InputError, match=r"pose: its skeleton \(2 joints, root 'root'\)"):
        placer.update(Motion.rest(other), walk.frame_time)
    sk = walk.skeleton
    renamed = Skeleton(tuple(n + "_" for n in sk.names), sk.parents, sk.offsets)
    with pytest.raises(InputError, match="is not the placer's"):
        placer.update(Motion(renamed, walk.rotations_local[0], walk.positions_local[0]), 0.1)
    same = Skeleton(sk.names, sk.parents.copy(), sk.offsets.copy())
    pose = Motion(same, walk.rotations_local[0], walk.positions_local[0])
    np.testing.assert_array_equal(
        placer.update(pose, walk.frame_time).rotations_local,
        FootPlacer.from_clip(walk, _ground("flat", walk)).update(walk[0], walk.frame_time)
        .rotations_local,
    )  # fmt: skip
