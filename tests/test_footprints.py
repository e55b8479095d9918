"""Issue 34: footprints slid back from a riser just ahead of them (step 3d's rise rule).

The whole outcome is tested where it shows: a trot on the stairs (``test_quadruped.py``)
and every shared clip over stairs and blocks (``test_do_no_harm.py``). Here, the parts:
which frames a footprint is judged at, and the pelvis drop a candidate shift would add,
which must agree with what the pelvis step reckons (:func:`~ikrig.foot.stages.pelvis.pelvis_drop`).
"""

from __future__ import annotations

import numpy as np
import pytest

from ikrig.foot.stages.footprints import Footprint, _drop, _footprint_frames
from ikrig.foot.stages.pelvis import pelvis_drop


def test_a_footprint_is_judged_where_the_foot_is_still_low_after_it():
    """First, middle and last frame of each contact, then the last frame after it up to
    which the foot is still low, at most ``radius`` frames on; the last frame again where
    the foot lifts at once, and the clip's end bounds it."""
    low = np.zeros(30, dtype=bool)
    low[10:14] = True  # low for 4 frames after the first contact [5, 10)
    low[22:30] = True  # low to the clip's end after the second contact [18, 22)
    when = _footprint_frames([(5, 10), (18, 22)], low, radius=3)
    assert when.tolist() == [[5, 7, 9, 12], [18, 19, 21, 24]]
    assert _footprint_frames([(5, 10)], np.zeros(30, dtype=bool), 3).tolist() == [[5, 7, 9, 9]]
    assert _footprint_frames([(25, 30)], np.ones(30, dtype=bool), 3).tolist() == [[25, 27, 29, 29]]
    assert _footprint_frames([], low, 3).shape == (0, 4)


@pytest.mark.parametrize("seed", range(5))
def test_the_drop_of_a_shift_is_the_pelvis_steps_drop(seed):
    """:func:`_drop` over a batch of candidate shifts equals
    :func:`~ikrig.foot.stages.pelvis.pelvis_drop` of the hip and the moved ankle, frame by
    frame: 0 where the leg still reaches, the height it lacks where it does not."""
    rng = np.random.default_rng(seed)
    spans = 4
    hip = rng.normal(0.0, 0.2, (spans, 3, 3)) + [0.0, 0.9, 0.0]
    ankle = rng.normal(0.0, 0.2, (spans, 3, 3)) + [0.0, 0.05, 0.0]
    reach = rng.uniform(0.7, 1.0, (spans, 3))
    shift = rng.normal(0.0, 0.3, (spans, 5, 2))
    print_ = Footprint(
        *(None,) * 4, hip[:, None], ankle[:, None], reach[:, None], None
    )  # fmt: skip
    got = _drop(print_, shift)
    assert got.shape == (spans, 5, 3)
    for s in range(spans):
        for c in range(5):
            for f in range(3):
                moved = ankle[s, f] + [shift[s, c, 0], 0.0, shift[s, c, 1]]
                want = pelvis_drop(tuple(hip[s, f]), tuple(moved), float(reach[s, f]))
                assert got[s, c, f] == pytest.approx(want, abs=1e-12)
    assert (got >= 0.0).all() and (got > 0.0).any() and (got == 0.0).any()
