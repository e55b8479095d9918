"""Issue 34: footprints slid away from ground that rises just ahead of their lift-off or just
behind their landing (step 3d's rise rule).

The whole outcome is tested where it shows: a trot on the stairs (``test_quadruped.py``),
the Fox over the blocks and every shared clip over stairs and blocks
(``test_do_no_harm.py``). Here, the parts: which frames a footprint is judged at; the
pelvis drop a candidate shift would add, which must agree with what the pelvis step
reckons (:func:`~ikrig.foot.stages.pelvis.pelvis_drop`); which rises cost; and a shared
clip whose footprint must not be slid onto another surface.
"""

from __future__ import annotations

import numpy as np
import pytest

from ikrig.foot.stages.footprints import Footprint, _cost, _drop, _footprint_frames
from ikrig.foot.stages.pelvis import pelvis_drop


def test_a_footprint_is_judged_where_the_foot_is_still_low_before_and_after_it():
    """First, middle and last frame of each contact, and on either side the farthest frame
    up to which the foot is still low, at most ``radius`` frames away; the contact's own
    end frame where the foot is high at once; the clip's ends bound both."""
    low = np.zeros(30, dtype=bool)
    low[3:5] = True  # low for 2 frames before the first contact [5, 10)
    low[10:14] = True  # and for 4 after it (radius 3: 3 of them count)
    low[22:30] = True  # low to the clip's end after the second contact [18, 22)
    when = _footprint_frames([(5, 10), (18, 22)], low, radius=3)
    assert when.tolist() == [[3, 5, 7, 9, 12], [18, 18, 19, 21, 24]]
    high = np.zeros(30, dtype=bool)
    assert _footprint_frames([(5, 10)], high, 3).tolist() == [[5, 5, 7, 9, 9]]
    ends = np.ones(30, dtype=bool)
    assert _footprint_frames([(0, 2), (25, 30)], ends, 3).tolist() == [
        [0, 0, 0, 1, 4],
        [22, 25, 27, 29, 29],
    ]
    assert _footprint_frames([], low, 3).shape == (0, 5)


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


@pytest.mark.parametrize("side", ["landing", "lifting off"])
def test_only_a_step_next_to_a_footprint_costs(side):
    """Ground that rises next to a footprint by more than a foot's contact height (a riser,
    a block's side) costs what it rises past ``LIFT_ABOVE``, times the share of the contact
    an early lift would float; gentler ground (a bump's flank) costs nothing, left to the
    plan's swing bump (the Fox on the bumps crouched 1.2 % of a leg lower on average when
    its footprints slid off 1.2-1.8 % rises, and floated no less)."""
    from ikrig.foot.stages.swing import LIFT_ABOVE

    samples = 9
    unit, step = 1.0, 0.06

    def cost(rise: float, share: float = 1.0) -> float:
        levels = np.zeros(5)
        levels[0 if side == "landing" else 4] = rise  # the frame before or after it
        heights = np.repeat(levels[:, None], samples, axis=1)[None]  # (1, 5, S)
        print_ = Footprint(
            np.zeros((1, 5, samples, 2)), np.zeros((1, 5, samples)), np.zeros((1, 2)),
            np.array([share]), *(None,) * 4,
        )  # fmt: skip
        return float(_cost(heights, print_, unit, step)[0])

    assert cost(0.0) == 0.0 and cost(0.03) == 0.0 and cost(step) == 0.0
    assert cost(0.10) == pytest.approx(0.10 - LIFT_ABOVE)
    assert cost(0.10, share=0.5) == pytest.approx(0.5 * (0.10 - LIFT_ABOVE))
    assert cost(-0.10) == 0.0  # ground falling away needs no lift


def test_a_footprint_on_one_surface_is_not_slid_onto_another():
    """``bandai1_walk_back_short`` starts with a foot planted beside a block it then backs
    into: ground rises 11 % of a leg right after it lifts off. The cheapest slide that
    clears it put the footprint on the block's top, and the body followed it up and down
    (pelvis change mean -0.19 -> -0.47 % of a leg, p95 0.89 -> 2.02). A footprint that
    rests on one surface keeps its level; its pelvis is as before the rise rule."""
    from helpers import SHARED

    from ikrig.app.placement import place_clip, result_summary
    from ikrig.character import detect_up, to_y_up
    from ikrig.io import read_bvh

    path = SHARED / "data" / "bvh_more" / "bandai1_walk_back_short.bvh"
    if not path.is_file():
        pytest.skip(f"{path} is not present")
    motion = read_bvh(path).motion
    placed = place_clip(to_y_up(motion, detect_up(motion)), "blocks", ["full"])
    m = result_summary(placed.results["full"], placed.source, placed.world(), placed.source_fk)
    assert m["pelvis_change_mean"] >= -0.25 and m["pelvis_change_p95"] <= 1.0, m
    assert m["pops"] == 0 and m["pelvis_acc_ratio"] <= 1.05, m
