"""The chunked scan of big BVH files (issue 40): one chunk of frame rows per thread gives
the values, line counts and slow numbers of the one-pass scan, and any file it cannot
scan so (a bad token, a blank line among the rows) goes back to the one-pass scan, so that
every message is the one-pass scan's.

The chunked path is forced on small texts by setting ``PARALLEL_BYTES`` to 0; every text is
also read with it off, and the two results compared, bit for bit, or error for error.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ikrig.errors import FileFormatError
from ikrig.io import parse_bvh
from ikrig.io.bvh import _scan

HEADER = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Leg
  {
    OFFSET 0 -5 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -5 0
    }
  }
}
MOTION
Frames: {frames}
Frame Time: 0.0333333
"""
WIDTH = 9

NUMBER = st.one_of(
    st.floats(-1e4, 1e4, allow_nan=False).map(lambda x: f"{x:.6f}"),
    st.integers(-360, 360).map(str),
    st.floats(-1e3, 1e3, allow_nan=False).map(repr),  # up to 17 digits: the slow path
    st.sampled_from(["1e3", "-2.5E-2", "0.30000000000000004441", "123456789012345678901"]),
)
ANOMALIES = ("none", "bad token", "blank line", "short row", "long row", "extra row",
             "missing row", "trailing blanks", "tabs and CR")  # fmt: skip
ANOMALY = st.sampled_from(ANOMALIES)


def _text(rows: list[list[str]], anomaly: str, frames: int) -> str:
    lines = [" ".join(r) for r in rows]
    if anomaly == "bad token":
        lines[len(lines) * 2 // 3] += " x1"
    elif anomaly == "blank line":
        lines.insert(len(lines) // 2, "")
    elif anomaly == "short row":
        lines[-1] = " ".join(rows[-1][:-1])
    elif anomaly == "long row":
        lines[len(lines) // 3] += " 7"
    elif anomaly == "extra row":
        lines.append(" ".join(rows[0]))
    elif anomaly == "missing row":
        lines.pop()
    elif anomaly == "trailing blanks":
        lines += ["", "   ", ""]
    elif anomaly == "tabs and CR":
        lines = [line.replace(" ", "\t") + "\r" for line in lines]
    return HEADER.replace("{frames}", str(frames)) + "\n".join(lines) + "\n"


def _read(text: str):
    try:
        clip = parse_bvh(text)
    except FileFormatError as exc:
        return str(exc)
    return clip.source_values, clip.motion.rotations_local, clip.motion.positions_local


def _read_both(text: str):
    """``(chunked, one pass)`` readings of ``text``."""
    saved = _scan.PARALLEL_BYTES
    try:
        _scan.PARALLEL_BYTES = 0
        got = _read(text)
        _scan.PARALLEL_BYTES = 1 << 62
        return got, _read(text)
    finally:
        _scan.PARALLEL_BYTES = saved


@pytest.mark.skipif(numba.get_num_threads() < 2, reason="one thread: no chunked scan")
@settings(max_examples=60, deadline=None)
@given(data=st.data(), frames=st.integers(1, 40), anomaly=ANOMALY)
def test_chunked_scan_reads_as_the_one_pass_scan(data, frames, anomaly):
    rows = [[data.draw(NUMBER) for _ in range(WIDTH)] for _ in range(frames)]
    got, want = _read_both(_text(rows, anomaly, frames))
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
        return
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(numba.get_num_threads() < 2, reason="one thread: no chunked scan")
@pytest.mark.parametrize("anomaly", ANOMALIES)
def test_every_kind_of_row_reads_as_the_one_pass_scan(anomaly):
    rows = [[f"{10 * f + c}.{c}5" for c in range(WIDTH)] for f in range(30)]
    rows[7][2] = "0.30000000000000004441"  # a slow number
    got, want = _read_both(_text(rows, anomaly, 30))
    assert type(got) is type(want), (got, want)
    if isinstance(want, str):
        assert got == want
    else:
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(numba.get_num_threads() < 2, reason="one thread: no chunked scan")
def test_a_big_file_is_scanned_in_chunks_exactly():
    """A 1.5 MB file with slow numbers in every chunk, read both ways."""
    rng = np.random.default_rng(3)
    frames = 12_000
    values = rng.uniform(-180, 180, (frames, WIDTH))
    rows = [[f"{v:.6f}" for v in row] for row in values]
    for f in range(0, frames, 997):
        rows[f][f % WIDTH] = repr(float(values[f, f % WIDTH] / 3.0))  # 17 significant digits
    text = _text(rows, "none", frames)
    assert len(text) > _scan.PARALLEL_BYTES  # chunked at the default threshold
    got = _read(text)
    want = _read_both(text)[1]
    assert not isinstance(got, str), got
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert float(got[0][997, 997 % WIDTH]) == float(rows[997][997 % WIDTH])
