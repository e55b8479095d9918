"""Every goal of issue 12 ("speed where users feel it") measured in one run, in one table.

Sections (``--only NAME`` runs one):

* ``cold``: ``ikrig demo --no-gif`` in a fresh process with an empty ``NUMBA_CACHE_DIR``
  (wall time, the median of 3 rounds, 1 with ``--quick``, each beside a run with the
  compile-ahead helper off; the compile notice on stderr; the printed solve time excluding
  compilation), again on the now warm cache, and ``ikrig warmup -q`` on another empty
  cache followed by a demo that must compile nothing. Also ``ikrig batch --jobs 2`` of the
  shared BVH clips on an empty cache, with and without compiling ahead (no goal).
* ``two_bone``: the public ``(N, 3)`` two-bone API against the ``(3, N)`` one on copies of
  the same N = 100,000 float32 leg problems, wall time (issue 40: the full call within
  2.5x, ``two_bone_positions_only`` within 1.5x; run it with ``NUMBA_NUM_THREADS=1`` for
  the one-thread figures the issue asks for).
* ``single``: one ``(3,)`` float64 two-bone call against a pure-Python scalar solve written
  here (math module only, tuples of floats in), CPU time.
* ``wrapper``: one call of each chain solver (and of the four issue 40 names into ``out=``
  buffers) on a 10-link chain whose end is already on the
  target (0 iterations), CPU time per call; and the floor of this design, what any call
  costs before validation and glue (dispatching a no-op compiled kernel with the arguments
  of FABRIK's one-problem kernel, its two output arrays, the result object), timed
  interleaved with the calls: each call's row says how far above that floor it is, a
  figure that moves less with the machine's load than the call itself.
* ``chains``: FABRIK, ``ccd_2d``, CCD and follow single calls, plain and into ``out=`` buffers
  (a Python loop over 1,000 reachable targets,
  each solve from the straight rest pose) against Numba references written here (scalar
  loops, no temporaries; FABRIK is also compared with ``bench_chains.fabrik_nb``), CPU time,
  with both success rates (end within 1e-3 of the target in at most 100 iterations).
* ``threads``: ``benchmarks/bench_threads.py --rounds 1`` in a subprocess, parsed; its lines
  are printed under the table.
* ``foot``: offline full mode on stairs against FK of the same clip (wall time); its
  allocations per frame beyond the output (tracemalloc: the peak during ``place_feet`` minus
  what the result keeps; it sees NumPy and Python allocations, not Numba's own); live
  ``FootPlacer.update`` CPU time per frame; a crowd placer (``characters=256``, each
  character playing the clip from its own frame) CPU time per character-frame.
* ``startup`` (issue 40, :mod:`_startup`): every command's start-up on a warm cache, from
  the process's start to its output: ``ikrig --help`` and ``ikrig info`` (goal 0.3 s) and
  each command's ``--help``; ``--baseline SRC`` times another checkout's ``src`` beside it.
* ``body`` (issue 38's speed goal, here as issue 40 asks): the whole-body solver on the first
  300 frames of the shared CMU jump with six trackers, ms per frame against mink on the
  same targets (``bench_body.py``'s set-up; goal at most 1/10 of mink's); ikrig alone when
  mink is not installed.
* ``ci``: not measured here (the row says how).

Figures are medians over repeats of the time per call; what is compared is interleaved in
each repeat. The ikrig measured is this checkout's ``src`` (first on ``sys.path`` and on the
subprocesses' ``PYTHONPATH``), whatever is installed. The CLI is run as ``python -c 'from
ikrig.cli import main; main()'``, what the ``ikrig`` script does.

Run: ``python benchmarks/bench_speed.py [--quick] [--no-cold] [--only NAME] [--baseline
SRC]``. Not a test.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if (REPO / "src" / "ikrig").is_dir():
    sys.path.insert(0, str(REPO / "src"))
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(REPO / "src") + (os.pathsep + old if old else "")

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    # mink's small BLAS products (the body section) are fastest on one thread, as in
    # bench_body.py; set before NumPy loads. ikrig's kernels do not use BLAS.
    os.environ.setdefault(_var, "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

TOL, MAX_ITER = 1e-3, 100
CLI = [sys.executable, "-c", "import sys; from ikrig.cli import main; sys.exit(main())"]
NOTICE = "compiling numerical kernels"
SOLVED = re.compile(r"solved .* in ([\d.]+) s(?: \(after ([\d.]+) s compiling kernels)?")
VERBATIM: list[str] = []  # lines printed under the table


def row(goal, value, measured, ratio=None, met=None, note=""):
    """One table row; ``met`` is None when the row has no goal to meet."""
    return dict(goal=goal, value=value, measured=measured, ratio=ratio, met=met, note=note)


def clocked(fns, repeats, inner=1):
    """Interleaved repeats of every ``fns[name]()`` (run ``inner`` times per sample):
    ``{name: (median wall, median CPU)}`` in seconds per call."""
    samples = {k: ([], []) for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            w, c = time.perf_counter(), time.process_time()
            for _ in range(inner):
                fn()
            samples[k][0].append((time.perf_counter() - w) / inner)
            samples[k][1].append((time.process_time() - c) / inner)
    return {k: (statistics.median(w), statistics.median(c)) for k, (w, c) in samples.items()}


def us(seconds):
    return f"{seconds * 1e6:.2f} us"


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1][:90] if lines else ""


# ---------------------------------------------------------------------- 1. cold start
def run_cli(args, cache, timeout=1200, **env_vars):
    """``(wall seconds, stdout, stderr, return code)`` of ``ikrig <args>`` on a cache dir."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **env_vars)
    t = time.perf_counter()
    try:
        p = subprocess.run(CLI + args, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t, "", f"timed out after {timeout} s", -1
    return time.perf_counter() - t, p.stdout, p.stderr, p.returncode


def sec_cold(args):
    rows = []
    with tempfile.TemporaryDirectory(prefix="ikrig_cold_") as tmp:
        demo = ["demo", "--no-gif", "-o", f"{tmp}/d.bvh"]
        warm = Path(tmp, "cache_warmup")
        warm.mkdir()
        walls, ones = [], []
        for k in range(args.cold_rounds):  # alternating, each on an empty cache of its own
            fresh, single = Path(tmp, f"cache_cold{k}"), Path(tmp, f"cache_alone{k}")
            fresh.mkdir()
            single.mkdir()
            wall, so, se, rc = run_cli(demo, fresh)
            one, *_ = run_cli(demo, single, IKRIG_COMPILE_AHEAD="0")
            walls.append(wall)
            ones.append(one)
            if rc:
                break
        wall, one = statistics.median(walls), statistics.median(ones)
        runs = ", ".join(f"{w:.1f}" for w in walls)
        note = (f"median of {len(walls)} ({runs}); one process compiling "
                f"(IKRIG_COMPILE_AHEAD=0) {one:.1f} s, ratio {wall / one:.2f}")  # fmt: skip
        note = f"exit {rc}: {last_line(se)}" if rc else note
        rows.append(row("cold: first demo, empty cache", "<= 15 s wall", f"{wall:.1f} s",
                        f"{wall / 15:.2f} x goal", rc == 0 and wall <= 15, note))  # fmt: skip
        where = "stderr" if NOTICE in se else "stdout" if NOTICE in so else "nowhere"
        rows.append(row("cold: compile notice on stderr", "yes", "yes" if NOTICE in se else "no",
                        met=NOTICE in se, note=f"notice found: {where}"))  # fmt: skip
        m = SOLVED.search(so)
        comp = m.group(2) if m else None
        note = f"printed: solve {m.group(1)} s, compile {comp} s" if m else "no 'solved' line"
        rows.append(row("cold: solve time excludes compile", "yes", "yes" if comp else "no",
                        met=comp is not None, note=note))  # fmt: skip
        rows += cold_batch_rows(args, tmp)
        wall, so, se, rc = run_cli(demo, fresh)  # the last cold round's cache, now warm
        m = SOLVED.search(so)
        notice = "yes" if NOTICE in se else "no"
        note = f"printed solve {m.group(1) if m else '?'} s; compile notice {notice}"
        rows.append(row("warm: demo again, same cache", "-", f"{wall:.1f} s", note=note))
        wall, so, se, rc = run_cli(["warmup", "-q"], warm)
        note = last_line(so) if rc == 0 else f"exit {rc}: {last_line(se)}"
        rows.append(row("ikrig warmup -q, empty cache", "-", f"{wall:.1f} s", note=note))
        wall, so, se, rc = run_cli(demo, warm)
        quiet = rc == 0 and NOTICE not in se + so
        rows.append(row("demo after warmup compiles nothing", "yes", "yes" if quiet else "no",
                        met=quiet, note=f"wall {wall:.1f} s"))  # fmt: skip
    return rows


def cold_batch_rows(args, tmp):
    """``ikrig batch`` of the shared BVH clips with 2 workers on an empty cache, against
    the same with compiling ahead off (``IKRIG_COMPILE_AHEAD=0``: both workers compile
    the same kernels at once); medians of alternating rounds. No goal: a first run."""
    clips = REPO.parent / "shared" / "data" / "bvh"
    if not clips.is_dir():
        return [row("cold: first batch, empty cache", "-", "no ../shared/data/bvh")]
    ahead, alone = [], []
    for k in range(args.cold_rounds):
        for times, env in ((ahead, {}), (alone, {"IKRIG_COMPILE_AHEAD": "0"})):
            cache, out = Path(tmp, f"batch_cache{k}{len(env)}"), Path(tmp, f"batch{k}{len(env)}")
            cache.mkdir()
            args_ = ["batch", str(clips), "-g", "stairs", "-o", str(out), "--jobs", "2", "-q"]
            wall, so, se, rc = run_cli(args_, cache, **env)
            times.append(wall if rc == 0 else math.nan)
    a, b = statistics.median(ahead), statistics.median(alone)
    n = len(list(clips.glob("*.bvh")))
    note = (f"{n} clips, --jobs 2, medians of {len(ahead)}; compiling ahead off"
            f" (IKRIG_COMPILE_AHEAD=0) {b:.1f} s, ratio {a / b:.2f}")  # fmt: skip
    return [row("cold: first batch, empty cache", "-", f"{a:.1f} s", f"{a / b:.2f}", None, note)]


# ------------------------------------------------------------- 2. (N,3) vs (3,N)
def leg_problems(n, seed=1, dtype=np.float32):
    """``[root, mid, end, target, pole]``, each ``(n, 3)``: a leg at a random root, targets
    uniform in the ball of radius 1 about it, poles at 0.5 in a random direction."""
    rng = np.random.default_rng(seed)

    def unit(k):
        v = rng.normal(size=(k, 3))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    root = rng.uniform(-1.0, 1.0, (n, 3))
    mid = root + [0.0, -0.45, 0.05]
    end = mid + [0.0, -0.42, -0.05]
    target = root + unit(n) * rng.uniform(0.0, 1.0, (n, 1)) ** (1 / 3)
    pole = root + 0.5 * unit(n)
    return [a.astype(dtype) for a in (root, mid, end, target, pole)]


@numba.njit(cache=False)
def _full_traffic(root, mid, end, target, pole, outs):
    """The memory traffic of the full ``(N, 3)`` call and none of its math: read the five
    ``(N, 3)`` inputs, write the 15 output values per element (mid, end, two deltas,
    stretch) in the same layout (the outputs raveled, as the kernel gets them)."""
    om, oe, qr, qm, st = outs
    for i in range(st.shape[0]):
        a = root[i, 0] + mid[i, 0] + end[i, 0] + target[i, 0] + pole[i, 0]
        b = root[i, 1] + mid[i, 1] + end[i, 1] + target[i, 1] + pole[i, 1]
        c = root[i, 2] + mid[i, 2] + end[i, 2] + target[i, 2] + pole[i, 2]
        om[3 * i], om[3 * i + 1], om[3 * i + 2] = a, b, c
        oe[3 * i], oe[3 * i + 1], oe[3 * i + 2] = b, c, a
        qr[4 * i], qr[4 * i + 1], qr[4 * i + 2], qr[4 * i + 3] = a, b, c, a
        qm[4 * i], qm[4 * i + 1], qm[4 * i + 2], qm[4 * i + 3] = c, a, b, c
        st[i] = a


def traffic_call(aos):
    """One call of :func:`_full_traffic` on fresh outputs allocated as the public call
    allocates them."""
    from ikrig.solvers.two_bone._positions import _output_views

    n = len(aos[0])
    views = _output_views((n,), n, aos[0].dtype)
    _full_traffic(*aos, tuple(v.reshape(-1) for v in views))


def sec_two_bone(args):
    from ikrig.solvers.two_bone import (
        two_bone_positions,
        two_bone_positions_only,
        two_bone_positions_soa,
    )

    aos = leg_problems(100_000)
    soa = [np.ascontiguousarray(a.T) for a in aos]
    a, s = two_bone_positions(*aos), two_bone_positions_soa(*soa)  # warm (may compile)
    o = two_bone_positions_only(*aos)
    err = max(np.abs(s.mid_world.T - a.mid_world).max(), np.abs(s.end_world.T - a.end_world).max())
    err_o = max(np.abs(o.mid_world - s.mid_world.T).max(),
                np.abs(o.end_world - s.end_world.T).max())  # fmt: skip
    traffic_call(aos)  # compiles
    fns = {"aos": lambda: two_bone_positions(*aos), "soa": lambda: two_bone_positions_soa(*soa),
           "only": lambda: two_bone_positions_only(*aos),
           "traffic": lambda: traffic_call(aos)}  # fmt: skip
    # two figures: 10 calls in a row per sample (steady state, the table's), and single
    # calls interleaved (a call after another path's finds its big outputs on fresh pages)
    t = clocked(fns, args.repeats * 2, inner=10)
    t1 = clocked(fns, args.repeats * 4)
    r, ro = t["aos"][0] / t["soa"][0], t["only"][0] / t["soa"][0]
    rt = t["traffic"][0] / t["soa"][0]
    threads = numba.get_num_threads()
    note = (f"wall, {threads} thread(s), 10 calls per sample; (3,N) {1e3 * t['soa'][0]:.2f} ms;"
            f" single calls interleaved: {t1['aos'][0] / t1['soa'][0]:.2f}; max |diff|"
            f" {err:.1e}; (N,3) also computes 2 rotation deltas and stretch")  # fmt: skip
    note_t = ("the cause of the gap above: reading the five (N,3) inputs and writing the"
              " 15 output values per element, no math, as the full call lays them out;"
              f" the full call is {t['aos'][0] / t['traffic'][0]:.2f}x this floor")  # fmt: skip
    note_o = (f"as above; single calls: {t1['only'][0] / t1['soa'][0]:.2f}; positions only,"
              f" (N,3) rows; max |diff| from (3,N) {err_o:.1e} (straight chains: the square"
              " root of a rounding)")  # fmt: skip
    return [row("(N,3) two-bone vs (3,N), N=1e5", "ratio <= 2.5", f"{1e3 * t['aos'][0]:.2f} ms",
                f"{r:.2f}", r <= 2.5, note),
            row("(N,3) full call's memory traffic alone", "-", f"{1e3 * t['traffic'][0]:.2f} ms",
                f"{rt:.2f}", note=note_t),
            row("(N,3) positions only vs (3,N)", "ratio <= 1.5", f"{1e3 * t['only'][0]:.2f} ms",
                f"{ro:.2f}", ro <= 1.5, note_o)]  # fmt: skip


# --------------------------------------------------------- 3. single two-bone call
def py_two_bone(root, mid, end, target, pole):
    """Scalar two-bone IK in pure Python (law of cosines, knee in the pole's plane):
    ``(mid, end, reached)``."""
    l1, l2 = math.dist(root, mid), math.dist(mid, end)
    d = [t - r for t, r in zip(target, root)]
    dn = math.hypot(*d)
    a = [c / dn for c in d] if dn > 0.0 else [1.0, 0.0, 0.0]
    reach = min(max(dn, abs(l1 - l2)), l1 + l2)
    x = (reach * reach + l1 * l1 - l2 * l2) / (2.0 * reach)
    h = math.sqrt(max(l1 * l1 - x * x, 0.0))
    p = [q - r for q, r in zip(pole, root)]
    pa = p[0] * a[0] + p[1] * a[1] + p[2] * a[2]
    c = [pi - ai * pa for pi, ai in zip(p, a)]
    cn = math.hypot(*c)
    u = [ci / cn for ci in c] if cn > 0.0 else [0.0, 0.0, 0.0]
    new_mid = tuple(r + ai * x + ui * h for r, ai, ui in zip(root, a, u))
    new_end = tuple(r + ai * reach for r, ai in zip(root, a))
    return new_mid, new_end, abs(reach - dn) <= 1e-5 * (l1 + l2)


def sec_single(args):
    from ikrig.solvers.two_bone import two_bone_positions

    one = [a[0] for a in leg_problems(8, seed=3, dtype=np.float64)]
    tup = [tuple(float(x) for x in a) for a in one]
    res, ref = two_bone_positions(*one), py_two_bone(*tup)
    err = max(np.abs(res.mid_world - ref[0]).max(), np.abs(res.end_world - ref[1]).max())
    fns = {"ikrig": lambda: two_bone_positions(*one), "py": lambda: py_two_bone(*tup)}
    t = clocked(fns, args.repeats * 4, inner=2000)
    r = t["ikrig"][1] / t["py"][1]
    note = f"CPU; pure Python {us(t['py'][1])}; the two agree to {err:.1e}"
    return [row("single two-bone call vs pure Py", "ratio <= 2", us(t["ikrig"][1]), f"{r:.2f}",
                r <= 2, note)]  # fmt: skip


# ----------------------------------------------------------- 4. wrapper overhead
def rest_chain(dim=3):
    """10 links of 0.1 along +x from the origin: ``(11, dim)`` float64."""
    p = np.zeros((11, dim))
    p[:, 0] = np.arange(11) * 0.1
    return p


def out_buffers(chain, planar=False):
    """Caller-owned ``out=`` buffers for one solve of ``chain`` (issue 40)."""
    m = len(chain)
    got = (np.empty((m, chain.shape[1])), np.empty((m - 1, 4)))
    return got + (np.empty(m - 1),) if planar else got


def sec_wrapper(args):
    from ikrig.solvers import ccd, ccd_2d, dls, fabrik, follow

    c3, c2 = rest_chain(), rest_chain(2)
    o3, o2 = out_buffers(c3), out_buffers(c2, planar=True)
    calls = {"fabrik": lambda: fabrik(c3, c3[-1]),
             "fabrik out=": lambda: fabrik(c3, c3[-1], out=o3),
             "ccd": lambda: ccd(c3, c3[-1]), "ccd out=": lambda: ccd(c3, c3[-1], out=o3),
             "ccd_2d": lambda: ccd_2d(c2, c2[-1]),
             "ccd_2d out=": lambda: ccd_2d(c2, c2[-1], out=o2),
             "follow": lambda: follow(c3, c3[-1]),
             "follow out=": lambda: follow(c3, c3[-1], out=o3),
             "dls": lambda: dls(c3, c3[-1])}  # fmt: skip
    iters = {}
    for k, fn in calls.items():
        it = getattr(fn(), "iterations", None)  # also warms
        iters[k] = "n/a" if it is None else int(np.max(it))
    parts = floor_parts(c3)
    t = clocked(calls | parts, args.repeats * 2, inner=1000)  # interleaved: one machine state
    floor = sum(t[k][1] for k in parts)
    rows = [row(f"wrapper: {k}, target reached", "<= 3 us CPU", us(t[k][1]),
                f"{t[k][1] / 3e-6:.2f} (<= 1)", t[k][1] <= 3e-6,
                f"result.iterations {iters[k]}; wall {us(t[k][0])}; the floor below"
                f" + {us(t[k][1] - floor)}") for k in calls]  # fmt: skip
    note = "; ".join(f"{k} {us(t[k][1])}" for k in parts) + " (no validation, no glue)"
    return rows + [row("wrapper floor: dispatch+outputs+result", "-", us(floor),
                       f"{floor / 3e-6:.2f} (<= 1)", note=note)]  # fmt: skip


@numba.njit(cache=False)
def _no_op(pos, target, settings, out, rl):
    return 0.0, 0, True, -1


def floor_parts(chain):
    """What any single FABRIK call costs before its kernel does any work, in this design
    (the one-problem path, ``ikrig.solvers._harness.single``), as three calls to time: the dispatch
    of a compiled kernel taking ``fabrik_free_one``'s arguments and returning its status (a
    no-op here), its two output arrays, and the result object with its three scalars."""
    from ikrig.solvers.fabrik import FabrikOptions
    from ikrig.solvers.result import SolveResult

    m = len(chain)
    out, rl = np.empty((m, 3)), np.empty((m - 1, 4))
    a = (chain, chain[-1].copy(), FabrikOptions()._settings, out, rl)
    _no_op(*a)

    def result():
        return SolveResult._trusted(out, np.True_, np.float64(0.0), np.int64(0), None, rl)

    return {"dispatch": lambda: _no_op(*a), "result": result,
            "outputs": lambda: (np.empty((m, 3)), np.empty((m - 1, 4)))}  # fmt: skip


# ------------------------------ 5. FABRIK, ccd_2d, CCD and follow vs Numba refs
@numba.njit(cache=False)
def _dist(p, i, q):
    return math.sqrt((p[i, 0] - q[0]) ** 2 + (p[i, 1] - q[1]) ** 2 + (p[i, 2] - q[2]) ** 2)


@numba.njit(cache=False)
def ref_fabrik(points, target, tol, max_iter):
    """Aristidou & Lasenby (2011) Algorithm 1 in scalar loops: ``(positions, iterations)``."""
    p = points.copy()
    n = p.shape[0] - 1
    d = np.array([_dist(p, i, p[i + 1]) for i in range(n)])
    root = p[0].copy()
    if _dist(p, 0, target) >= d.sum():  # out of reach: stretch towards the target
        for i in range(n):
            lam = d[i] / _dist(p, i, target)
            p[i + 1] = (1 - lam) * p[i] + lam * target
        return p, 1
    it = 0
    while _dist(p, n, target) > tol and it < max_iter:
        it += 1
        p[n] = target  # backward reaching
        for i in range(n - 1, -1, -1):
            lam = d[i] / _dist(p, i, p[i + 1])
            for k in range(3):
                p[i, k] = (1 - lam) * p[i + 1, k] + lam * p[i, k]
        p[0] = root  # forward reaching
        for i in range(n):
            lam = d[i] / _dist(p, i + 1, p[i])
            for k in range(3):
                p[i + 1, k] = (1 - lam) * p[i, k] + lam * p[i + 1, k]
    return p, it


@numba.njit(cache=False)
def ref_ccd_2d(points, target, tol, max_iter):
    """Planar CCD: each sweep turns the joints, end inward, to aim the effector at the
    target: ``(positions, iterations)``."""
    p = points.copy()
    n = p.shape[0] - 1
    it = 0
    while math.hypot(p[n, 0] - target[0], p[n, 1] - target[1]) > tol and it < max_iter:
        it += 1
        for j in range(n - 1, -1, -1):
            ex, ey = p[n, 0] - p[j, 0], p[n, 1] - p[j, 1]
            tx, ty = target[0] - p[j, 0], target[1] - p[j, 1]
            norm = math.sqrt((ex * ex + ey * ey) * (tx * tx + ty * ty))
            if norm == 0.0:
                continue
            c, s = (ex * tx + ey * ty) / norm, (ex * ty - ey * tx) / norm
            for k in range(j + 1, n + 1):
                x, y = p[k, 0] - p[j, 0], p[k, 1] - p[j, 1]
                p[k, 0], p[k, 1] = p[j, 0] + c * x - s * y, p[j, 1] + s * x + c * y
    return p, it


@numba.njit(cache=False)
def ref_ccd(points, target, tol, max_iter):
    """3D CCD: each sweep turns the joints, end inward, by the shortest arc that aims the
    effector at the target (Rodrigues' formula on the joints beyond): ``(positions,
    iterations)``."""
    p = points.copy()
    n = p.shape[0] - 1
    it = 0
    while _dist(p, n, target) > tol and it < max_iter:
        it += 1
        for j in range(n - 1, -1, -1):
            ex, ey, ez = p[n, 0] - p[j, 0], p[n, 1] - p[j, 1], p[n, 2] - p[j, 2]
            tx, ty, tz = target[0] - p[j, 0], target[1] - p[j, 1], target[2] - p[j, 2]
            ax, ay, az = ey * tz - ez * ty, ez * tx - ex * tz, ex * ty - ey * tx
            s = math.sqrt(ax * ax + ay * ay + az * az)
            norm = math.sqrt((ex * ex + ey * ey + ez * ez) * (tx * tx + ty * ty + tz * tz))
            if s == 0.0 or norm == 0.0:
                continue
            c, sn = (ex * tx + ey * ty + ez * tz) / norm, s / norm
            ax, ay, az = ax / s, ay / s, az / s
            for k in range(j + 1, n + 1):
                x, y, z = p[k, 0] - p[j, 0], p[k, 1] - p[j, 1], p[k, 2] - p[j, 2]
                cx, cy, cz = ay * z - az * y, az * x - ax * z, ax * y - ay * x
                d = (ax * x + ay * y + az * z) * (1.0 - c)
                p[k, 0] = p[j, 0] + x * c + cx * sn + ax * d
                p[k, 1] = p[j, 1] + y * c + cy * sn + ay * d
                p[k, 2] = p[j, 2] + z * c + cz * sn + az * d
    return p, it


@numba.njit(cache=False)
def ref_follow(points, target):
    """Follow-the-target, tail first: the effector onto the target, then each joint, end
    inward, pulled along its bone towards the joint placed before it: ``(positions, 1)``."""
    p = points.copy()
    n = p.shape[0] - 1
    d = np.array([_dist(p, i, p[i + 1]) for i in range(n)])
    p[n] = target
    for i in range(n - 1, -1, -1):
        dn = _dist(p, i, p[i + 1])
        if dn > 0.0:
            lam = d[i] / dn
            for k in range(3):
                p[i, k] = p[i + 1, k] + lam * (p[i, k] - p[i + 1, k])
    return p, 1


def sec_chains(args):
    """Each solver's single calls, plain and into ``out=`` buffers, against its Numba
    reference on the same targets (the references compute positions only; ikrig also
    computes each joint's local rotation and, for FABRIK and CCD, tracks the best pose)."""
    from ikrig.solvers import (
        CCD2DOptions,
        CCDOptions,
        FabrikOptions,
        FollowOptions,
        ccd,
        ccd_2d,
        fabrik,
        follow,
    )

    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_chains import fabrik_nb  # the reference issue 12 was measured against

    rng = np.random.default_rng(20240607)
    v = rng.normal(size=(1000, 3))
    ball = v / np.linalg.norm(v, axis=1, keepdims=True) * rng.uniform(0, 1, (1000, 1)) ** (1 / 3)
    ang, rad = rng.uniform(0, 2 * np.pi, 1000), np.sqrt(rng.uniform(0, 1, 1000))
    disc = np.stack([rad * np.cos(ang), rad * np.sin(ang)], axis=-1)
    c3, c2 = rest_chain(), rest_chain(2)
    o3, o2 = out_buffers(c3), out_buffers(c2, planar=True)
    fo = FabrikOptions(max_iterations=MAX_ITER, tolerance=TOL)
    co = CCD2DOptions(max_iterations=MAX_ITER, tolerance=TOL)
    c3o = CCDOptions(max_iterations=MAX_ITER, tolerance=TOL)
    wo = FollowOptions(tolerance=TOL)
    cases = {  # name: (targets, ikrig, ikrig into out=, reference, bench_chains ref or None)
        "FABRIK": (0.9 * ball, lambda t: fabrik(c3, t, fo), lambda t: fabrik(c3, t, fo, out=o3),
                   lambda t: ref_fabrik(c3, t, TOL, MAX_ITER),
                   lambda t: fabrik_nb(c3, t, TOL, MAX_ITER)),
        "ccd_2d": (0.9 * disc, lambda t: ccd_2d(c2, t, co), lambda t: ccd_2d(c2, t, co, out=o2),
                   lambda t: ref_ccd_2d(c2, t, TOL, MAX_ITER), None),
        "CCD": (0.9 * ball, lambda t: ccd(c3, t, c3o), lambda t: ccd(c3, t, c3o, out=o3),
                lambda t: ref_ccd(c3, t, TOL, MAX_ITER), None),
        "follow": (0.9 * ball, lambda t: follow(c3, t, wo), lambda t: follow(c3, t, wo, out=o3),
                   lambda t: ref_follow(c3, t), None),
    }  # fmt: skip
    rows = []
    for name, (targets, ik, ik_out, ref, old) in cases.items():
        res = [ik(t) for t in targets]  # also warms
        ends = np.array([np.asarray(r.positions_world)[-1] for r in res])
        its = np.mean([int(r.iterations) for r in res])
        ref_res = [ref(t) for t in targets]
        ref_ends = np.array([r[0][-1] for r in ref_res])
        ok = np.mean(np.linalg.norm(ends - targets, axis=-1) <= TOL * (1 + 1e-9))
        ok_ref = np.mean(np.linalg.norm(ref_ends - targets, axis=-1) <= TOL * (1 + 1e-9))
        same = all(np.array_equal(ik_out(t).positions_world, r.positions_world)
                   for t, r in zip(targets[:50], res))  # fmt: skip
        fns = {"ikrig": ik, "out": ik_out, "ref": ref} | ({"old": old} if old else {})
        if old:
            old(targets[0])
        loops = {k: lambda f=f, ts=targets: [f(x) for x in ts] for k, f in fns.items()}
        t = clocked(loops, args.repeats)
        its_ref = np.mean([r[1] for r in ref_res])
        for k, label in (("ikrig", ""), ("out", " out=")):
            r = t[k][1] / t["ref"][1]
            note = (f"CPU per 1000 solves, ref {1e3 * t['ref'][1]:.2f} ms; success ikrig"
                    f" {100 * ok:.1f} %, ref {100 * ok_ref:.1f} %; mean iterations ikrig"
                    f" {its:.1f}, ref {its_ref:.1f}")  # fmt: skip
            if k == "out":
                note += f"; same positions as without out= {same}"
            if old and k == "ikrig":
                note += f"; vs bench_chains.fabrik_nb {t['ikrig'][1] / t['old'][1]:.2f}"
            rows.append(row(f"{name}{label} single calls vs Numba ref", "ratio <= 1.5",
                            f"{1e3 * t[k][1]:.2f} ms", f"{r:.2f} (<= 1.5)", r <= 1.5,
                            note))  # fmt: skip
    return rows


# ------------------------------------------------------------------- 6. threads
THREAD_LINE = re.compile(
    r"^\s*(aos|soa) (.+?)\s+1 thread\s+([\d.]+)\s+2 threads\s+([\d.]+)\s+ratio 2/1\s+([\d.]+)"
)


def sec_threads(args):
    cmd = [sys.executable, str(REPO / "benchmarks" / "bench_threads.py"), "--rounds", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    VERBATIM.extend(["", "bench_threads.py --rounds 1, verbatim:"] + p.stdout.splitlines())
    if p.returncode:
        return [row("threads: 2 vs 1, core busy", "ratio <= 1.2", "failed", met=False,
                    note=last_line(p.stderr))]  # fmt: skip
    rows, busy = [], None
    for line in p.stdout.splitlines():
        if line.startswith("second core"):
            busy = "busy" in line
        m = THREAD_LINE.match(line)
        if m and busy is not None and "default" in m.group(2):
            r, note = float(m.group(5)), f"wall; 1 thread {m.group(3)} ms; N = 100,000"
            goal = f"threads {m.group(1)}: 2 vs 1, core {'busy' if busy else 'idle'}"
            rows.append(row(goal, "ratio <= 1.2", f"{m.group(4)} ms", f"{r:.2f}", r <= 1.2, note))
    return rows or [row("threads", "ratio <= 1.2", "unparsed (see below)", met=False)]


# ---------------------------------------------------------------- 7. foot pipeline
def sec_foot(args):
    import ikrig.foot as foot
    from ikrig.character.legs import find_legs
    from ikrig.character.sole import estimate_sole
    from ikrig.data.walk import walk_clip
    from ikrig.ground import load_ground

    clip = walk_clip(seconds=20.0, fps=60.0)
    nf, legs = clip.num_frames, find_legs(clip.skeleton)
    path_xz = clip.positions_world()[:, 0, [0, 2]]
    ground = load_ground("stairs", path_xz, legs.leg_length, estimate_sole(clip, legs).floor)
    opts = foot.FootOptions(mode="full")
    foot.place_feet(clip, ground, opts, legs=legs)  # warm (may compile)
    fns = {"place": lambda: foot.place_feet(clip, ground, opts, legs=legs), "fk": clip.fk}
    t = clocked(fns, args.repeats * 2)
    r = t["place"][0] / t["fk"][0]
    note = f"wall per frame; FK {us(t['fk'][0] / nf)}; {clip.num_joints} joints, {nf} frames"
    rows = [row("foot offline full vs FK, stairs", "ratio <= 20", us(t["place"][0] / nf),
                f"{r:.1f}", r <= 20, note)]  # fmt: skip
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = foot.place_feet(clip, ground, opts, legs=legs)
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    extra = (peak - kept) / nf
    clip_b = (clip.rotations_local.nbytes + clip.positions_local.nbytes) / nf
    note = (f"tracemalloc per frame: peak {(peak - before) / 1e3 / nf:.2f} kB, result keeps"
            f" {(kept - before) / 1e3 / nf:.2f} kB; the clip is {clip_b / 1e3:.2f} kB")  # fmt: skip
    rows.append(row("foot offline alloc beyond output", "<= 2 kB/frame", f"{extra / 1e3:.2f} kB",
                    f"{extra / 2e3:.2f} x goal", extra <= 2e3, note))  # fmt: skip
    del result
    placer = foot.FootPlacer.from_clip(clip, ground)
    frames = [clip[f] for f in range(min(nf, 300 if args.quick else 1200))]
    placer.update(frames[0], dt=clip.frame_time)  # warm

    def live():
        for pose in frames:
            placer.update(pose, dt=clip.frame_time)

    w, c = (x / len(frames) for x in clocked({"live": live}, max(3, args.repeats // 2))["live"])
    rows.append(row("foot live FootPlacer.update", "<= 100 us CPU", us(c), f"{c / 1e-4:.2f} x goal",
                    c <= 100e-6, f"wall {us(w)}; {len(frames)} frames per repeat"))  # fmt: skip
    rows.append(crowd_row(clip, ground, 256, 30 if args.quick else 120, args.repeats))
    return rows


def crowd_row(clip, ground, k, frames, repeats):
    """``FootPlacer(characters=k)``: each character plays the clip from its own frame, moved
    sideways; CPU time per character-frame over ``frames`` updates."""
    import ikrig.foot as foot
    from ikrig.pose import Motion

    starts = (np.arange(k) * 7) % (clip.num_frames - frames)
    crowd = []
    for f in range(frames):
        pose = clip[starts + f]
        pl = pose.positions_local.copy()
        pl[:, 0, 0] += 0.5 * (np.arange(k) % 16)
        crowd.append(Motion._trusted(pose.skeleton, pose.rotations_local, pl))
    placer = foot.FootPlacer.from_clip(clip, ground, characters=k)
    placer.update(crowd[0], dt=clip.frame_time)  # warm

    def run():
        for poses in crowd:
            placer.update(poses, dt=clip.frame_time)

    w, c = (x / (frames * k) for x in clocked({"crowd": run}, max(3, repeats // 3))["crowd"])
    note = f"wall {us(w)}; {frames} updates of {k} characters per repeat"
    ratio = f"{c / 2e-5:.2f} x goal"
    return row(f"foot crowd placer, K = {k}", "<= 20 us/char-frame", us(c), ratio, c <= 20e-6, note)


def sec_startup(args):
    from _startup import startup_rows

    baseline = Path(args.baseline).resolve() if args.baseline else None
    return startup_rows(max(5, args.repeats), baseline, row)  # fresh processes: noisy


def sec_body(args):
    import bench_body as B

    path = B.SHARED / "bvh" / "cmu_01_01_jumps.bvh"
    if not path.is_file():
        return [row("body: six trackers", "<= 0.1 x mink", "skipped", note="no ../shared")]
    case = B.load_case(path, 300)
    six = B.target_sets(case)["six"]
    repeat = max(3, args.repeats // 3)
    mine = B.run_ikrig(B.body_api(), case, six, repeat)
    note = f"{case.name}, J={case.skeleton.num_joints}, F=300; joint err {mine.joint_err:.3f} % leg"
    try:
        peer = B.run_mink(case, six, repeat)
    except ImportError:
        return [row("body: six trackers, ms/frame", "<= 0.1 x mink",
                    f"{mine.ms_per_frame:.3f} ms", note=note + "; mink not installed")]  # fmt: skip
    r = mine.ms_per_frame / peer.ms_per_frame
    note += f"; mink {peer.ms_per_frame:.3f} ms/frame, joint err {peer.joint_err:.3f} % leg"
    return [row("body: six trackers, ms/frame", "<= 0.1 x mink", f"{mine.ms_per_frame:.3f} ms",
                f"{r:.3f}", r <= 0.1, note)]  # fmt: skip


def sec_ci(args):
    return [row("CI: bash .ci/run, cold cache", "<= 360 s wall", "not measured here",
                note="time `bash .ci/run` on a fresh clone, empty NUMBA_CACHE_DIR")]  # fmt: skip


# ---------------------------------------------------------------------------- main
SECTIONS = {"cold": sec_cold, "two_bone": sec_two_bone, "single": sec_single,
            "wrapper": sec_wrapper, "chains": sec_chains, "threads": sec_threads,
            "foot": sec_foot, "startup": sec_startup, "body": sec_body,
            "ci": sec_ci}  # fmt: skip


def machine():
    """CPU model, cores, load, versions and the ikrig measured, as two lines."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        cpu = re.search(r"model name\s*:\s*(.*)", text).group(1).strip()  # type: ignore[union-attr]
    except (OSError, AttributeError):
        cpu = "?"
    git = ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, capture_output=True, text=True).stdout.strip() or "?"
    import ikrig

    env = " ".join(f"{k}={os.environ.get(k, '-')}" for k in ("NUMBA_NUM_THREADS", "IKRIG_THREADS"))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"CPU: {cpu}; {os.cpu_count()} cores; load average {load}\npython"
            f" {sys.version.split()[0]}, numpy {np.__version__}, numba {numba.__version__}; ikrig"
            f" {Path(ikrig.__file__).parent} (HEAD {commit}); {env}")  # fmt: skip


def print_table(rows):
    cols = [("goal", 35), ("value", 20), ("measured", 17), ("ratio", 14), ("met", 4)]
    head = " | ".join(f"{'same-run ratio' if n == 'ratio' else n:<{w}}" for n, w in cols)
    print(head + "\n" + "-" * len(head))
    for r in rows:
        cells = {**r, "met": {True: "yes", False: "NO", None: "-"}[r["met"]]}
        print(" | ".join(f"{str(cells[n] or '-')[:w]:<{w}}" for n, w in cols).rstrip())
        if r["note"]:
            print(f"{'':>38}{r['note']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold-start section")
    ap.add_argument("--only", choices=list(SECTIONS), help="run this section only")
    ap.add_argument("--baseline", metavar="SRC", help="startup: also time this ikrig src folder")
    args = ap.parse_args()
    args.repeats = 3 if args.quick else 9
    args.cold_rounds = 1 if args.quick else 3
    names = [args.only] if args.only else [k for k in SECTIONS if k != "cold" or not args.no_cold]
    print(machine())
    print(f"repeats {args.repeats}; medians; compared calls interleaved; sections {names}\n")
    rows, t0 = [], time.perf_counter()
    for name in names:
        try:
            rows += SECTIONS[name](args)
        except Exception as e:  # a broken section is reported; the others still run
            rows.append(row(f"{name}: failed", "-", type(e).__name__, met=False, note=str(e)[:90]))
    print_table(rows)
    print("\n".join(VERBATIM))
    met = [r["met"] for r in rows if r["met"] is not None]
    print(f"\ngoals met: {sum(met)} of {len(met)}; load average at the end"
          f" {os.getloadavg()[0]:.2f}; {time.perf_counter() - t0:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
