"""``ikrig info`` without Numba (issue 40): the NumPy twins of the kernels it reaches (the BVH
row scan, the Euler composition of the rotation channels, forward kinematics) give the
compiled kernels' numbers bit for bit and the BVH reader's messages word for word, so the
command prints the same text and JSON whichever path ran.

Each path is forced with :func:`ikrig._jit.lazy.forced`; the reader's own malformed-file
tests (``test_bvh``, ``test_bvh_fuzz``) run again on both. The real command, which starts no
Numba, runs in a fresh process (``tests/test_cli_startup.py`` checks what it imports).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_bvh
import test_bvh_fuzz
import test_bvh_scan
from helpers import BATCH_SHAPES, DTYPES, SHARED, invoke, random_quats
from hypothesis import given, settings
from hypothesis import strategies as st

from ikrig._jit import lazy
from ikrig.errors import IkrigError, InputError
from ikrig.io import parse_bvh
from ikrig.io.bvh import _compose, _motion, _parse_bytes, _rows, _scan
from ikrig.pose import _fk_numpy, fk

CLIPS = [
    p
    for folder, pattern in (("bvh", "*.bvh"), ("bvh_more", "*.bvh"), ("gltf", "*.gl*"))
    for p in (sorted((SHARED / "data" / folder).glob(pattern)) if SHARED.is_dir() else [])
]
PATHS = ("numpy", "compiled")


@pytest.fixture(params=PATHS)
def path(request):
    """Run the test with every kernel that has a NumPy twin on one path."""
    with lazy.forced(request.param):
        yield request.param


def _info(args: list[str], path: str) -> str:
    with lazy.forced(path):
        r = invoke("info", *args)
    assert r.exit_code == 0, r.output
    return r.stdout  # not the "compiling" notice on stderr


def _same_json(a: dict, b: dict) -> None:
    """Equal, floats within 1e-12 relative (bit for bit on x86-64 with glibc)."""
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, float) or (isinstance(x, list) and x and isinstance(x[0], float)):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=0, err_msg=key)
        else:
            assert x == y, key


# --------------------------------------------------------------------------------------------
# The command: the same text and JSON on every shared clip
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("clip", CLIPS, ids=lambda p: p.name)
def test_info_prints_the_same_on_both_paths(clip):
    numpy_text, compiled_text = (_info([clip], p) for p in PATHS)
    assert numpy_text == compiled_text
    numpy_json, compiled_json = (json.loads(_info([clip, "--json"], p)) for p in PATHS)
    _same_json(numpy_json, compiled_json)
    assert numpy_json["frames"] > 0 and numpy_json["bounds_min"] is not None


def _fresh_info(args: list[str]) -> str:
    """``ikrig info ARGS`` in a fresh process (nothing imported Numba there)."""
    code = "import sys; from ikrig.cli import main; sys.exit(main())"
    out = subprocess.run([sys.executable, "-c", code, "info", *args], capture_output=True,
                         text=True, check=True)  # fmt: skip
    return out.stdout


@pytest.mark.parametrize("name", ["cmu_131_02_walk.bvh", "Fox.glb"])
def test_a_fresh_process_prints_what_the_compiled_path_prints(name):
    clip = next((p for p in CLIPS if p.name == name), None)
    if clip is None:
        pytest.skip(f"{name}: ../shared/data is not present")
    assert _fresh_info([str(clip)]) == _info([clip], "compiled")
    _same_json(json.loads(_fresh_info([str(clip), "--json"])),
               json.loads(_info([clip, "--json"], "compiled")))  # fmt: skip


def test_the_built_in_walk_reads_the_same_on_both_paths(tmp_path):
    from ikrig.data import walk_clip
    from ikrig.io import to_bvh_clip, write_bvh

    bvh = tmp_path / "walk.bvh"
    write_bvh(bvh, to_bvh_clip(walk_clip(seconds=2.0)))
    assert _info([bvh], "numpy") == _info([bvh], "compiled") == _fresh_info([str(bvh)])


# --------------------------------------------------------------------------------------------
# The BVH reader: the same clips, and the same messages for malformed files
# --------------------------------------------------------------------------------------------


def _read(text: str | bytes, path: str):
    """The clip's arrays, or the message, of ``text`` (a file's bytes) read on ``path``."""
    with lazy.forced(path):
        try:
            clip = parse_bvh(text) if isinstance(text, str) else _parse_bytes(text, "f.bvh")
        except IkrigError as exc:  # a FileFormatError mostly; a HierarchyError from Skeleton
            return f"{type(exc).__name__}: {exc}"
    m = clip.motion
    return [clip.source_values, m.rotations_local, m.positions_local, m.frame_time]


def _assert_same(a, b) -> None:
    assert type(a) is type(b), (a, b) if isinstance(a, str) or isinstance(b, str) else None
    if isinstance(a, str):
        assert a == b
        return
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("clip", [p for p in CLIPS if p.suffix == ".bvh"], ids=lambda p: p.name)
def test_shared_clips_read_bit_for_bit_on_both_paths(clip):
    text = clip.read_bytes()
    numpy_read, compiled_read = (_read(text, p) for p in PATHS)
    assert not isinstance(numpy_read, str), numpy_read
    _assert_same(numpy_read, compiled_read)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), frames=st.integers(1, 12), anomaly=test_bvh_scan.ANOMALY)
def test_rows_with_every_anomaly_read_alike(data, frames, anomaly):
    rows = [data.draw(st.lists(test_bvh_scan.NUMBER, min_size=test_bvh_scan.WIDTH,
                               max_size=test_bvh_scan.WIDTH)) for _ in range(frames)]  # fmt: skip
    text = test_bvh_scan._text(rows, anomaly, frames)
    _assert_same(_read(text, "numpy"), _read(text, "compiled"))


TOKEN_BYTES = "0123456789+-.eE" * 3 + " \t\r\n\v\f" + "x_nai\xa0" + "\x1c"
"""Characters of numbers, weighted up, every separator, and a few that are neither
(``nan``, ``inf``, ``1_0`` are numbers to Python's ``float``, not to a BVH file)."""


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.text(TOKEN_BYTES, min_size=1, max_size=6), min_size=1, max_size=40),
    seps=st.lists(
        st.sampled_from([" ", "\t", "\n", " \r\n", "\v", "\f"]), min_size=40, max_size=40
    ),  # fmt: skip
)
def test_scanners_agree_on_any_token_soup(tokens, seps):
    """The scan itself: the same numbers, line counts and first bad token."""
    data = "".join(t + s for t, s in zip(tokens, seps)).encode("latin-1")
    num_lines = data.count(b"\n") + 1
    results = []
    for scan in (
        lambda out: _rows.scan_numpy(data, 0, num_lines, out),
        lambda out: _scan.scan_rows(data, 0, num_lines, 3, out),
    ):
        out = np.full(12, -7.0)
        s = scan(out)
        if s.bad < 0:  # what the caller does with the numbers left to Python's float
            for index, start in zip(*s.slow.tolist()):
                out[index] = float(data[start:].split()[0])
        results.append((s.bad, s.line_counts.tolist(), out if s.bad < 0 else None))
    (bad_a, counts_a, out_a), (bad_b, counts_b, out_b) = results
    assert (bad_a, counts_a) == (bad_b, counts_b)
    if bad_a < 0:
        np.testing.assert_array_equal(out_a, out_b)


def _cases(module, names: list[str]):
    """``pytest.param(test, kwargs)`` for each named test of ``module`` and each of its
    parameter sets (from its ``parametrize`` mark)."""
    for name in names:
        fn = getattr(module, name)
        marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            yield pytest.param(fn, {}, id=name)
            continue
        argnames, values = marks[0].args[:2]
        keys = [a.strip() for a in argnames.split(",")] if isinstance(argnames, str) else argnames
        for k, v in enumerate(values):
            kwargs = dict(zip(keys, v if len(keys) > 1 else (v,)))
            yield pytest.param(fn, kwargs, id=f"{name}[{k}]")


READER_TESTS = [
    *_cases(test_bvh, [
        "test_malformed_file_names_file_and_line",
        "test_malformed_text_names_string_and_crlf_keeps_line_numbers",
        "test_missing_motion_at_the_end",
        "test_empty_and_truncated_files",
        "test_first_problem_in_file_order_is_reported",
        "test_out_of_range_number",
        "test_numbers_in_every_notation",
        "test_number_parsing_is_exact",
        "test_crlf_cr_and_tabs_give_the_same_clip",
        "test_irregular_whitespace",
        "test_zero_frames",
        "test_subsets_of_channels",
        "test_base_file",
    ]),
    *_cases(test_bvh_fuzz, [
        "test_frame_count_beyond_any_file",
        "test_frame_count_beyond_the_rows_present",
        "test_zero_channel_files_hold_one_frame_per_line",
        "test_many_joints_without_channels_cannot_claim_a_huge_clip",
        "test_channel_values_out_of_range_are_refused",
        "test_values_at_the_bounds_round_trip",
        "test_messages_quote_at_most_40_characters",
        "test_form_feed_and_vertical_tab_separate_everywhere",
        "test_unicode_spaces_are_part_of_names",
    ]),
]  # fmt: skip


@pytest.mark.parametrize(("test", "kwargs"), READER_TESTS)
def test_the_reader_tests_pass_on_both_paths(test, kwargs, path, tmp_path):
    """The BVH reader's own tests (messages, lines, exact numbers), on each path."""
    wanted = inspect.signature(test).parameters
    fixtures = {k: tmp_path for k in ("tmp_path", "folder") if k in wanted and k not in kwargs}
    test(**kwargs, **fixtures)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, len(test_bvh_fuzz.CORPUS) - 1), steps=test_bvh_fuzz.steps)
def test_fuzzed_files_read_alike(seed, steps):
    """Mutated files (the fuzzer's): the same clip, or the same message, on both paths."""
    data = test_bvh_fuzz.fuzz.mutate(test_bvh_fuzz.CORPUS[seed], steps)
    _assert_same(_read(data, "numpy"), _read(data, "compiled"))


# --------------------------------------------------------------------------------------------
# The twins themselves
# --------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    batch=st.sampled_from(BATCH_SHAPES + [(0,), (7,)]),
    dtype=st.sampled_from(DTYPES),
    joints=st.integers(1, 9),
    seed=st.integers(0, 2**32 - 1),
)
def test_fk_twins_agree_bit_for_bit(batch, dtype, joints, seed):
    rng = np.random.default_rng(seed)
    parents = np.array([-1] + [int(rng.integers(-1, j)) for j in range(1, joints)])
    rl = random_quats(rng, batch + (joints,), dtype)
    pl = rng.normal(size=batch + (joints, 3)).astype(dtype)
    with lazy.forced("numpy"):
        rn, pn = fk(parents, rl, pl)
    with lazy.forced("compiled"):
        rc, pc = fk(parents, rl, pl)
    assert rn.dtype == rc.dtype == dtype and pn.shape == batch + (joints, 3)
    np.testing.assert_array_equal(rn, rc)
    np.testing.assert_array_equal(pn, pc)


def test_fk_twin_fills_what_it_is_given():
    parents = np.array([-1, 0, 1])
    rl = np.tile([0.0, 0.0, np.sin(0.25), np.cos(0.25)], (2, 3, 1))
    pl = np.tile([1.0, 0.0, 0.0], (2, 3, 1))
    rw, pw = np.empty_like(rl), np.empty_like(pl)
    _fk_numpy(parents, rl, pl, rw, pw)
    np.testing.assert_allclose(
        pw[0, 2], [1 + np.cos(0.5) + np.cos(1.0), np.sin(0.5) + np.sin(1.0), 0]
    )


@settings(max_examples=40, deadline=None)
@given(frames=st.integers(0, 6), joints=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_composition_twins_agree_bit_for_bit(frames, joints, seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, joints)  # rotation channels per joint, any axes
    most = max(int(counts.max()), 1)
    columns = np.full((joints, most), -1, dtype=np.int64)
    axes = np.zeros((joints, most), dtype=np.int64)
    c = 0
    for j, n in enumerate(counts):
        columns[j, :n] = np.arange(c, c + n)
        axes[j, :n] = rng.integers(0, 3, n)
        c += n
    values = rng.choice([0.0, -0.0, 90.0, -180.0, 1e7], size=(frames, max(c, 1)))
    values = np.where(rng.random(values.shape) < 0.5, rng.normal(0, 200, values.shape), values)
    a, b = np.empty((frames, joints, 4)), np.empty((frames, joints, 4))
    _motion._compose_numpy(values, columns, axes, a)
    _compose.compose_rotations(values, columns, axes, b)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))  # even the signed zeros


# --------------------------------------------------------------------------------------------
# Which path runs
# --------------------------------------------------------------------------------------------


def test_the_choice_of_path(monkeypatch):
    monkeypatch.setattr(lazy, "_spent", 0.0)
    monkeypatch.setattr(lazy, "numba_loaded", lambda: False)
    assert lazy.prefer_numpy(10, 100)
    assert not lazy.prefer_numpy(100, 100)  # big work: compiled
    monkeypatch.setattr(lazy, "_spent", lazy.NUMPY_BUDGET)
    assert not lazy.prefer_numpy(10, 100)  # the budget is spent
    monkeypatch.setattr(lazy, "_spent", 0.0)
    with lazy.spending():
        pass
    assert 0.0 <= lazy._spent < lazy.NUMPY_BUDGET
    monkeypatch.setattr(lazy, "numba_loaded", lambda: True)
    assert not lazy.prefer_numpy(10, 100)  # Numba started: compiled from now on
    with lazy.forced("numpy"):
        assert lazy.prefer_numpy(10**9, 100)
    with lazy.forced("compiled"):
        assert not lazy.prefer_numpy(0, 100)
    with pytest.raises(InputError, match="path"), lazy.forced("fast"):
        pass


def test_this_process_runs_compiled():
    """Numba is loaded here (the test modules import it): the usual choice is compiled."""
    assert lazy.numba_loaded() and not lazy.prefer_numpy(1, 10**9)


def test_shared_data_is_found_or_skipped():
    if not SHARED.is_dir():
        pytest.skip("../shared is not present")
    assert {p.suffix for p in CLIPS} == {".bvh", ".glb"} and len(CLIPS) >= 10
    assert all(isinstance(p, Path) for p in CLIPS)
