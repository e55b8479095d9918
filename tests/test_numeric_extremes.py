"""``ikrig foot`` on numeric extremes (issue 35 R8): a frame time near 0, coordinates far
beyond the character's size. Each gives one clear error line, quickly, not a traceback or
gigabytes of ground."""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import invoke, one_error_line

from ikrig.data import walk_clip
from ikrig.errors import InputError
from ikrig.ground.procedural import GROUND_NAMES, MAX_EXTENT, make_ground
from ikrig.io.bvh import to_bvh_clip, write_bvh
from ikrig.signal.filters import MAX_RADIUS, hann_window, zero_lag_smooth


@pytest.mark.parametrize("radius", [MAX_RADIUS + 1, 1e30, float("inf"), float("nan")])
def test_smoothing_windows_are_bounded(radius):
    with pytest.raises(InputError, match="frame time is too small"):
        zero_lag_smooth(np.zeros((5, 3)), radius)
    with pytest.raises(InputError, match="frame time is too small"):
        hann_window(radius)
    assert len(hann_window(3)) == 7


@pytest.mark.parametrize("name", [n for n in GROUND_NAMES if n != "flat"])
def test_grounds_along_a_path_of_a_billion_legs_are_refused(name):
    path = np.stack([np.linspace(0, 1e9, 50), np.zeros(50)], axis=1)
    start = time.perf_counter()
    with pytest.raises(InputError, match="leg lengths"):
        make_ground(name, path, 1.0)
    assert time.perf_counter() - start < 1
    inside = np.stack([np.linspace(0, MAX_EXTENT / 2, 50), np.zeros(50)], axis=1)
    make_ground(name, inside, 1.0)  # a long path within the bound is laid out


def test_blocks_are_bounded_in_slots():
    path = np.array([[0.0, 0.0], [8000.0, 0.0], [8000.0, 8000.0], [0.0, 8000.0]] * 5)
    with pytest.raises(InputError, match="slots"):
        make_ground("blocks", path, 1.0)


def test_foot_on_a_clip_moved_a_billion_units(tmp_path):
    motion = walk_clip(seconds=1.0, fps=30.0)
    positions = np.array(motion.positions_local)
    positions[:, 0, 0] += np.linspace(0.0, 1e9, motion.num_frames)
    clip = tmp_path / "far.bvh"
    write_bvh(clip, to_bvh_clip(motion.replace(positions_local=positions)))
    r = invoke("foot", clip, "-g", "stairs", "-o", tmp_path / "o.bvh")
    one_error_line(r, "leg lengths")


def test_foot_on_a_clip_with_a_tiny_frame_time(tmp_path):
    motion = walk_clip(seconds=1.0, fps=30.0).replace(frame_time=1e-12)
    clip = tmp_path / "fast.bvh"
    write_bvh(clip, to_bvh_clip(motion))
    r = invoke("foot", clip, "-g", "flat", "-o", tmp_path / "o.bvh")  # no traceback
    said = [line for line in r.stderr.splitlines() if "compiling" not in line]
    assert r.exit_code == 2 and len(said) == 1 and "frame time is too small" in said[0], said
