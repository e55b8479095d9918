"""Property tests of the chain solvers FABRIK, follow and DLS over random and degenerate
problems (issue 9), in float32 and float64, batch shapes ``()``, ``(n,)``, ``(a, b)`` and
chain scales from 1e-10 to 1e10.

Every public entry point (``fabrik``, ``solve_fabrik``, ``follow``, ``solve_follow``,
``dls``, ``solve_dls``; free and with every kind of constraint) must give finite outputs,
keep every bone's length (1e-6 relative in float64, 1e-4 in float32; a zero-length bone
stays exactly zero), return unit quaternions, say ``reached`` only within tolerance, report
an error that matches its pose and is never NaN, and keep each solver's own promise (FABRIK
and DLS keep the root; FABRIK returns the best pose so far, DLS never ends worse than it
started; follow puts its moving end on the target).

Degenerate cases: zero-length bones, coincident joints (all of them, or a chain folded back
on itself), straight chains, targets at the root, on the chain's line ahead or behind the
root, at the effector, out of reach, or 1e30 away; ``tolerance=0`` and
``max_iterations=0``. A follow chain dragged 1e30 away cannot keep its bones in floating
point (the bones are below the positions' rounding); there only finiteness is checked.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ikrig.constraints import AngleLimit2D, Cone, Hinge, TwistLimit
from ikrig.errors import InputError
from ikrig.math import quat_conj, quat_mul, quat_rotate
from ikrig.pose import Motion
from ikrig.skeleton import Skeleton
from ikrig.solvers.chain import Chain
from ikrig.solvers.dls import DLSOptions, dls, solve_dls
from ikrig.solvers.fabrik import FabrikOptions, fabrik, solve_fabrik
from ikrig.solvers.follow import FollowOptions, follow, solve_follow

SCALES = [1e-10, 1e-4, 1.0, 1e4, 1e10]
CHAINS = ["random", "mixed", "zero_bones", "all_zero", "folded", "straight", "straight_x",
          "nearly_straight"]  # fmt: skip
TARGETS = ["inside", "root", "near_root", "effector", "ahead", "behind", "edge", "unreachable",
           "far"]  # fmt: skip
CONSTRAINTS = [None, "cone", "hinge", "angle2d", "twist", "mixed"]
SOLVERS = ["fabrik", "follow_tail", "follow_head", "dls", "dls_rotation", "dls_two_goals"]
FAR = 1e30


def rtol_of(dtype):
    return 1e-6 if dtype == np.float64 else 1e-4


# --------------------------------------------------------------------------------------
# Problems
# --------------------------------------------------------------------------------------


def unit(rng, shape):
    v = rng.normal(size=tuple(shape) + (3,))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def make_chain(rng, kind, n, batch, scale, dtype=np.float64):
    """Joint positions ``batch + (n + 1, 3)`` float64 of one kind of chain."""
    lengths = rng.uniform(0.2, 1.0, size=tuple(batch) + (n,)) * scale
    dirs = unit(rng, tuple(batch) + (n,))
    if kind == "mixed":  # bones of very different lengths (as far as the dtype can hold)
        low = -6 if dtype == np.float64 else -2
        lengths = scale * 10.0 ** rng.uniform(low, 0, size=lengths.shape)
    elif kind == "zero_bones":
        lengths *= rng.random(lengths.shape) < 0.5
    elif kind == "all_zero":
        lengths[...] = 0.0
    elif kind == "folded":  # every other bone goes back: joints 0, 2, 4, ... coincide
        lengths[...] = lengths[..., :1]
        dirs[..., 1::2, :] = -dirs[..., :1, :]
        dirs[..., 0::2, :] = dirs[..., :1, :]
    elif kind == "straight":
        dirs[...] = dirs[..., :1, :]
    elif kind == "straight_x":
        dirs[...] = (1.0, 0.0, 0.0)
    elif kind == "nearly_straight":  # off the line by rounding-sized amounts
        dirs[...] = dirs[..., :1, :] + unit(rng, dirs.shape[:-1]) * 10.0 ** rng.uniform(-15, -7)
        dirs /= np.linalg.norm(dirs, axis=-1, keepdims=True)
    root = rng.uniform(-1, 1, size=tuple(batch) + (3,)) * scale
    if kind == "straight_x":
        root[...] = 0.0
    steps = np.cumsum(dirs * lengths[..., None], axis=-2)
    return np.concatenate([root[..., None, :], root[..., None, :] + steps], axis=-2)


def make_targets(rng, kind, pos, scale):
    """Targets ``pos.shape[:-2] + (3,)`` of one kind for chains ``pos``."""
    root, eff = pos[..., 0, :], pos[..., -1, :]
    total = np.linalg.norm(np.diff(pos, axis=-2), axis=-1).sum(-1)[..., None]
    bones = np.diff(pos, axis=-2)
    first = (
        bones[..., 0, :] / np.maximum(np.linalg.norm(bones[..., 0, :], axis=-1), 1e-300)[..., None]
    )
    first = np.where(np.linalg.norm(bones[..., 0, :], axis=-1)[..., None] > 0, first, [1, 0, 0])
    shape = root.shape[:-1]
    if kind == "inside":
        return root + unit(rng, shape) * total * rng.uniform(0, 0.9, shape + (1,))
    if kind == "root":
        return root.copy()
    if kind == "near_root":
        return root + unit(rng, shape) * total * 10.0 ** rng.uniform(-16, -8, shape + (1,))
    if kind == "edge":  # at the chain's reach, just inside or just outside
        return root + unit(rng, shape) * total * (1 + rng.uniform(-1e-9, 1e-9, shape + (1,)))
    if kind == "effector":
        return eff.copy()
    if kind == "ahead":
        return root + first * total * rng.uniform(0.05, 0.95, shape + (1,))
    if kind == "behind":
        return root - first * total * rng.uniform(0.05, 2.0, shape + (1,))
    if kind == "unreachable":
        return root + unit(rng, shape) * (total * rng.uniform(1.01, 5.0, shape + (1,)) + scale)
    return unit(rng, shape) * FAR


def make_constraints(rng, kind, n):
    """``None`` or ``n`` constraints (some ``None``) of one kind, random and degenerate."""
    if kind is None:
        return None
    out = []
    for _ in range(n):
        k = kind if kind != "mixed" else rng.choice(["cone", "hinge", "angle2d", "twist", "none"])
        lo = -rng.choice([0.0, rng.uniform(0, np.pi)])
        hi = rng.choice([0.0, rng.uniform(0, np.pi), np.pi])
        axis = [unit(rng, ()), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)][rng.integers(3)]
        if k == "cone":
            out.append(Cone(float(rng.choice([0.0, rng.uniform(0, np.pi), np.pi]))))
        elif k == "hinge":
            out.append(Hinge(axis, lo, hi) if rng.random() < 0.7 else Hinge(axis))
        elif k == "angle2d":
            out.append(AngleLimit2D(lo, hi, axis))
        elif k == "twist":
            out.append(TwistLimit(lo, hi))
        else:
            out.append(None)
    return out


def random_quats(rng, shape):
    q = rng.normal(size=tuple(shape) + (4,))
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


CHOICES = {
    "dtype": [np.float32, np.float64],
    "batch": [(), (3,), (2, 2)],
    "n": [1, 2, 3, 4, 5, 6],
    "scale": SCALES,
    "chain": CHAINS,
    "target": TARGETS,
    "constraints": CONSTRAINTS,
    "tolerance": [0.0, 1e-3],
    "max_iterations": [0, 1, 3, 100],
    "turned": [False, True],
    "shared": [False, True],
}


def build(choices, seed):
    """A batch of problems of one kind: a dict of everything a solver call needs."""
    rng = np.random.default_rng(seed)
    p = dict(choices)
    shared = p["shared"] and p["batch"] != ()
    cb = () if shared else p["batch"]
    pos = make_chain(rng, p["chain"], p["n"], cb, p["scale"], p["dtype"])
    tgt = make_targets(rng, p["target"], np.broadcast_to(pos, p["batch"] + pos.shape[-2:]),
                       p["scale"])  # fmt: skip
    p["pos"] = pos.astype(p["dtype"])
    p["tgt"] = tgt.astype(p["dtype"])
    p["cons"] = make_constraints(rng, p["constraints"], p["n"])
    p["parent"] = random_quats(rng, ()) if p["turned"] else None
    p["trot"] = random_quats(rng, p["batch"]).astype(p["dtype"])
    return p


@st.composite
def problems(draw, solvers=SOLVERS):
    choices = {k: draw(st.sampled_from(v)) for k, v in CHOICES.items()}
    choices["solver"] = draw(st.sampled_from(solvers))
    return build(choices, draw(st.integers(0, 2**32 - 1)))


# --------------------------------------------------------------------------------------
# Running and checking
# --------------------------------------------------------------------------------------


def run(p, max_iterations=None):
    """Call the position-level entry point of ``p["solver"]``."""
    it = p["max_iterations"] if max_iterations is None else max_iterations
    tol = p["tolerance"]
    kw = {"constraints": p["cons"], "parent_rotation_world": p["parent"]}
    s = p["solver"]
    if s == "fabrik":
        return fabrik(p["pos"], p["tgt"], FabrikOptions(it, tol), **kw)
    if s.startswith("follow"):
        return follow(p["pos"], p["tgt"], FollowOptions(s[7:], tol), **kw)
    opts = DLSOptions(max_iterations=it, tolerance=tol, rotation_tolerance=max(tol, 1e-9))
    if s == "dls":
        return dls(p["pos"], p["tgt"], opts, **kw)
    if s == "dls_rotation":
        return dls(p["pos"], p["tgt"], opts, target_rotation_world=p["trot"], **kw)
    mid = p["n"] // 2
    tg = np.stack([p["tgt"], p["pos"][..., mid, :] + 0 * p["tgt"]], axis=-2)
    return dls(p["pos"], tg, opts, effectors=[-1, mid], **kw)


def bone_lengths(pos):
    return np.linalg.norm(np.diff(np.asarray(pos, dtype=np.float64), axis=-2), axis=-1)


def check_lengths(out, pos, dtype, where=""):
    """Each bone keeps its length (relative to itself); a zero-length bone stays zero."""
    before = np.broadcast_to(bone_lengths(pos), out.shape[:-1][:-1] + (out.shape[-2] - 1,))
    after = bone_lengths(out)
    zero = before == 0
    assert np.all(after[zero] == 0), f"{where}: a zero-length bone grew: {after[zero].max()}"
    rel = np.abs(after - before)[~zero] / before[~zero]
    assert rel.size == 0 or rel.max() <= rtol_of(dtype), f"{where}: bone length off by {rel.max()}"


def check_unit(q, dtype, where=""):
    assert q.dtype == dtype
    assert np.isfinite(q).all(), f"{where}: non-finite rotation"
    err = np.abs(np.linalg.norm(q.astype(np.float64), axis=-1) - 1)
    assert err.max() <= (1e-9 if dtype == np.float64 else 1e-5), f"{where}: |q| off by {err.max()}"


def fk_positions(pos, parent, rl):
    """Forward kinematics of a position-level chain from its input pose ``pos`` (the rest
    pose, every frame ``parent``) turned by ``rl (..., n, 4)``, from the input root."""
    pos = np.asarray(pos, np.float64)
    rl = np.asarray(rl, np.float64)
    batch = rl.shape[:-2]
    pq = np.array([0, 0, 0, 1.0]) if parent is None else np.asarray(parent, np.float64)
    bones = quat_rotate(quat_conj(pq), np.diff(pos, axis=-2))
    w = np.broadcast_to(pq, batch + (4,))
    out = [np.broadcast_to(pos[..., 0, :], batch + (3,))]
    for i in range(rl.shape[-2]):
        w = quat_mul(w, rl[..., i, :])
        out.append(out[-1] + quat_rotate(w, bones[..., i, :]))
    return np.stack(out, axis=-2), w


def scale_of(p):
    """A length the rounding of the problem is relative to: chain, root and target."""
    pos = np.asarray(p["pos"], np.float64)
    return np.maximum(bone_lengths(pos).sum(-1), np.abs(pos).max((-1, -2)))


def check_result(p, res):
    """The shared properties of a position-level result ``res`` of problem ``p``."""
    dtype, batch, n = p["dtype"], p["batch"], p["n"]
    s = p["solver"]
    out = res.positions_world
    where = f"{s} {p['chain']} chain, {p['target']} target, scale {p['scale']:g}"
    assert out.shape == batch + (n + 1, 3) and out.dtype == dtype
    for name in ("positions_world", "error", "rotations_local"):
        assert np.isfinite(getattr(res, name)).all(), f"{where}: non-finite {name}"
    assert res.error.dtype == dtype and res.reached.dtype == bool
    assert (res.error >= 0).all()
    check_unit(res.rotations_local, dtype, where)
    tgt = np.broadcast_to(p["tgt"], batch + (3,)).astype(np.float64)
    lengths = bone_lengths(np.broadcast_to(p["pos"], batch + (n + 1, 3)))
    total = lengths.sum(-1)
    far = np.linalg.norm(tgt, axis=-1) > 1e20
    eps = np.finfo(dtype).eps
    if s.startswith("follow"):
        # Only where the dragged chain is still representable at the target.
        small = np.where(lengths > 0, lengths, np.inf).min(-1)
        ok = np.abs(out.astype(np.float64)).max((-1, -2)) * eps * 16 <= rtol_of(dtype) * small
        check_lengths(out[ok], np.broadcast_to(p["pos"], out.shape)[ok], dtype, where)
    else:
        check_lengths(out, p["pos"], dtype, where)
        root = np.broadcast_to(p["pos"][..., 0, :], batch + (3,))
        assert np.array_equal(out[..., 0, :], root), f"{where}: the root moved"
    # The error is the pose's: the distance of the moving end (or the weighted residual).
    end = out[..., 0 if s == "follow_head" else -1, :].astype(np.float64)
    dist = np.linalg.norm(end - tgt, axis=-1)
    slack = 8 * eps * (np.abs(end).max(-1) + np.abs(tgt).max(-1) + scale_of(p))
    if s in ("fabrik", "dls") or s.startswith("follow"):
        assert np.all(np.abs(dist - res.error) <= slack + 8 * eps * dist), f"{where}: error"
    tol = p["tolerance"] * total * (1 + 4 * eps)
    if s == "dls_rotation":
        w = fk_positions(np.broadcast_to(p["pos"], out.shape), p["parent"],
                         res.rotations_local)[1]  # fmt: skip
        d = quat_mul(p["trot"].astype(np.float64), quat_conj(w))
        ang = 2 * np.arccos(np.clip(np.abs(d[..., 3]), 0, 1))
        rtol = max(p["tolerance"], 1e-9) + 1e-3 * (dtype == np.float32)
        assert np.all(~res.reached | ((dist <= tol + slack) & (ang <= rtol + 1e-6))), where
    elif s == "dls_two_goals":
        mid = np.broadcast_to(p["pos"], out.shape)[..., n // 2, :].astype(np.float64)
        d2 = np.linalg.norm(out[..., n // 2, :] - mid, axis=-1)
        assert np.all(~res.reached | ((dist <= tol + slack) & (d2 <= tol + slack))), where
    else:
        assert np.all(~res.reached | (dist <= tol + slack)), f"{where}: reached out of tolerance"
    if s.startswith("follow"):
        assert np.all(dist <= slack), f"{where}: the moving end is off the target"
    # rotations_local run through FK from the input pose give positions_world.
    if not s.startswith("follow"):
        got = fk_positions(np.broadcast_to(p["pos"], out.shape), p["parent"],
                           res.rotations_local)[0]  # fmt: skip
        err = np.abs(got - out).max((-1, -2)) / np.maximum(scale_of(p), 1e-300)
        assert np.all(err[~far] <= 1e-6 if dtype == np.float64 else 1e-3), f"{where}: FK"


# --------------------------------------------------------------------------------------
# Position level
# --------------------------------------------------------------------------------------


@pytest.mark.slow
@given(p=problems())
def test_position_level_properties(p):
    res = run(p)
    check_result(p, res)
    if p["solver"].startswith("follow"):
        assert np.all(res.iterations == 1)
    else:
        assert np.all(res.iterations <= p["max_iterations"])
        if p["max_iterations"] == 0:
            assert np.all(res.iterations == 0)


@pytest.mark.slow
@given(p=problems(solvers=["fabrik", "dls", "dls_rotation", "dls_two_goals"]))
def test_never_worse_than_the_start(p):
    """FABRIK returns the best pose so far (constrained: the start snapped into its limits,
    which is what ``max_iterations=0`` measures); DLS undoes steps that increase the error."""
    start = run(p, max_iterations=0).error.astype(np.float64)
    # rounding: FABRIK's error can wobble by a few ulps of the chain's size once converged
    slack = 64 * np.finfo(p["dtype"]).eps * scale_of(p)
    previous = start
    for it in (1, 2, 3, 5, 8, 100):
        err = run(p, max_iterations=it).error.astype(np.float64)
        where = f"{p['solver']} {p['constraints']}, {it} iterations"
        assert np.all(err <= start + slack), f"{where}: worse than the start"
        if p["solver"] == "fabrik":
            assert np.all(err <= previous + slack), f"{where}: worse than with fewer"
        previous = err


# --------------------------------------------------------------------------------------
# Pose level
# --------------------------------------------------------------------------------------


def build_pose(choices, seed):
    """A pose-level problem: a skeleton ``base -> j0 -> ... -> jn`` whose chain bones are
    those of :func:`build`'s chain, a random start pose and targets of the chosen kind."""
    rng = np.random.default_rng(seed)
    p = dict(choices)
    n, batch, dtype = p["n"], p["batch"], p["dtype"]
    rest = make_chain(rng, p["chain"], n, (), p["scale"], dtype)
    offsets = np.concatenate([[rest[0]], [np.zeros(3)], np.diff(rest, axis=0)])
    sk = Skeleton(tuple(f"j{i}" for i in range(n + 2)), np.arange(-1, n + 1), offsets)
    rl = random_quats(rng, batch + (n + 2,))
    if not p["turned"]:
        rl[..., 0, :] = [0, 0, 0, 1]
    pl = np.broadcast_to(offsets, batch + offsets.shape).copy()
    p["motion"] = Motion(sk, rl.astype(dtype), pl.astype(dtype))
    p["chain"] = Chain(tuple(range(1, n + 2)), make_constraints(rng, p["constraints"], n) or ())
    cpos = p["motion"].positions_world()[..., 1:, :].astype(np.float64)
    p["cpos"] = cpos
    p["lengths"] = np.linalg.norm(np.diff(rest, axis=0), axis=-1)
    p["tgt"] = make_targets(rng, p["target"], cpos, p["scale"]).astype(dtype)
    p["trot"] = random_quats(rng, batch).astype(dtype)
    return p


@st.composite
def pose_problems(draw):
    choices = {k: draw(st.sampled_from(v)) for k, v in CHOICES.items()}
    choices["solver"] = draw(st.sampled_from(SOLVERS[:-1]))
    return build_pose(choices, draw(st.integers(0, 2**32 - 1)))


def run_pose(p):
    it, tol, s = p["max_iterations"], p["tolerance"], p["solver"]
    args = (p["motion"], p["chain"], p["tgt"])
    if s == "fabrik":
        return solve_fabrik(*args, FabrikOptions(it, tol))
    if s.startswith("follow"):
        return solve_follow(*args, FollowOptions(s[7:], tol))
    opts = DLSOptions(max_iterations=it, tolerance=tol, rotation_tolerance=max(tol, 1e-9))
    trot = p["trot"] if s == "dls_rotation" else None
    return solve_dls(*args, opts, target_rotation_world=trot)


def check_pose_result(p, res):
    dtype, batch, n, s = p["dtype"], p["batch"], p["n"], p["solver"]
    where = f"pose {s} {p['chain']} chain, {p['target']} target, scale {p['scale']:g}"
    out = res.positions_world
    assert out.shape == batch + (n + 1, 3) and out.dtype == dtype
    for name in ("positions_world", "error", "rotations_local"):
        assert np.isfinite(getattr(res, name)).all(), f"{where}: non-finite {name}"
    check_unit(res.rotations_local, dtype, where)
    check_unit(res.motion.rotations_local, dtype, where)
    assert np.isfinite(res.motion.positions_local).all(), f"{where}: non-finite motion"
    eps = np.finfo(dtype).eps
    size = p["lengths"].sum() + np.abs(p["cpos"]).max() + p["scale"]
    tgt = p["tgt"].astype(np.float64)
    if not s.startswith("follow") or np.abs(tgt).max() < 1e3 * p["scale"]:
        lengths = np.broadcast_to(p["lengths"], batch + (n,))
        after = bone_lengths(out)
        assert np.all(after[lengths == 0] == 0), f"{where}: a zero-length bone grew"
        rel = np.abs(after - lengths)[lengths > 0] / lengths[lengths > 0]
        assert rel.size == 0 or rel.max() <= rtol_of(dtype), f"{where}: bone length {rel.max()}"
        # the new motion's FK puts the chain where the result says
        fk_pos = res.motion.positions_world()[..., 1:, :].astype(np.float64)
        err = np.abs(fk_pos - out).max() / size
        assert err <= (1e-9 if dtype == np.float64 else 1e-4), f"{where}: motion FK off {err}"
    if not s.startswith("follow"):
        assert np.array_equal(out[..., 0, :], p["cpos"][..., 0, :].astype(dtype)), where
    end = out[..., 0 if s == "follow_head" else -1, :].astype(np.float64)
    dist = np.linalg.norm(end - tgt, axis=-1)
    slack = 8 * eps * (np.abs(end).max(-1) + np.abs(tgt).max(-1) + size)
    tol = p["tolerance"] * p["lengths"].sum() * (1 + 4 * eps)
    assert np.all(~res.reached | (dist <= tol + slack)), f"{where}: reached out of tolerance"
    if s != "dls_rotation":
        assert np.all(np.abs(dist - res.error) <= slack + 8 * eps * dist), f"{where}: error"


@pytest.mark.slow
@given(p=pose_problems())
def test_pose_level_properties(p):
    check_pose_result(p, run_pose(p))


# --------------------------------------------------------------------------------------
# NaN and infinity
# --------------------------------------------------------------------------------------

CHAIN3 = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]])
CALLS = {
    "fabrik": lambda pos, t, **kw: fabrik(pos, t, **kw),
    "fabrik_cone": lambda pos, t, **kw: fabrik(pos, t, constraints=[Cone(1.0)] * 3, **kw),
    "follow": lambda pos, t, **kw: follow(pos, t, **kw),
    "follow_head_hinge": lambda pos, t, **kw: follow(
        pos, t, FollowOptions("head"), constraints=[Hinge((0, 0, 1))] * 3, **kw
    ),
    "dls": lambda pos, t, **kw: dls(pos, t, **kw),
    "dls_rotation": lambda pos, t, **kw: dls(pos, t, target_rotation_world=[0, 0, 0, 1], **kw),
    "dls_twist": lambda pos, t, **kw: dls(pos, t, constraints=[TwistLimit(-1, 1)] * 3, **kw),
}


@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract")  # inf - inf
@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("where", ["positions_world", "target_world", "parent_rotation_world"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_input_raises_one_line_input_error(call, where, bad, dtype):
    pos = np.broadcast_to(CHAIN3, (2, 3, 4, 3)).astype(dtype)
    tgt = np.full((2, 3, 3), 1.5, dtype=dtype)
    parent = np.broadcast_to(np.array([0, 0, 0, 1.0], dtype), (2, 3, 4)).copy()
    arrays = {"positions_world": pos.copy(), "target_world": tgt, "parent_rotation_world": parent}
    arrays[where][1, 2, ..., 0] = bad
    with pytest.raises(InputError) as exc:
        CALLS[call](arrays["positions_world"], arrays["target_world"],
                    parent_rotation_world=arrays["parent_rotation_world"])  # fmt: skip
    msg = str(exc.value)
    assert "\n" not in msg and where in msg, msg


def test_nan_rotation_target_and_pose_level_nan_raise():
    sk = Skeleton(("a", "b", "c"), [-1, 0, 1], [[0, 0, 0], [1, 0, 0], [1, 0, 0]])
    chain = Chain((0, 1, 2))
    for bad in (np.nan, np.inf):
        t = np.array([1.0, bad, 0.0])
        for solve in (solve_fabrik, solve_follow, solve_dls):
            with pytest.raises(InputError, match="target_world") as exc:
                solve(Motion.rest(sk, (2,)), chain, t)
            assert "\n" not in str(exc.value)
        with pytest.raises(InputError, match="target_rotation_world"):
            dls(CHAIN3, [1.0, 1.0, 0], target_rotation_world=[0, 0, bad, 1])
        with pytest.raises(InputError, match="target_rotation_world"):
            solve_dls(Motion.rest(sk), chain, None, target_rotation_world=[0, 0, bad, 1])


# --------------------------------------------------------------------------------------
# Beyond float64's squaring range
# --------------------------------------------------------------------------------------


def safe_lengths(pos):
    d = np.diff(np.asarray(pos, np.float64) * 0.5, axis=-2)
    m = np.abs(d).max(-1, keepdims=True)
    return 2 * m[..., 0] * np.sqrt(np.sum((d / np.where(m > 0, m, 1)) ** 2, -1))


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
@pytest.mark.parametrize("target", [1e-300, 1.0, 1e300])
@pytest.mark.parametrize("solver", SOLVERS[:-1])
@pytest.mark.parametrize("level", ["positions", "pose"])
def test_magnitudes_beyond_squaring_range(scale, target, solver, level):
    # Regression (issue 9): chains of 1e+-200 and targets at 1e300 squared out of float64's
    # range: NaN rotations, infinite errors, collapsed bones, and a ZeroDivisionError from
    # follow. Such problems are now solved rescaled by a power of two.
    rest = np.array([[0.0, 0, 0], [1, 0, 0], [1, 0, 0.5], [1, 1, 0]]) * scale
    p = {"solver": solver, "n": 3, "max_iterations": 100, "tolerance": 1e-3, "parent": None,
         "tgt": np.array([[0.3, -0.4, 0.2], [0.0, 0.0, 0.0]]) * target + [[0, 0, 0], rest[-1]],
         "pos": np.cumsum(rest, axis=0), "cons": [Cone(1.0), None, Hinge((0, 0, 1))]}  # fmt: skip
    p["trot"] = random_quats(np.random.default_rng(0), (2,))
    if level == "pose":
        sk = Skeleton(("a", "b", "c", "d"), [-1, 0, 1, 2], rest)
        p.update(motion=Motion.rest(sk, (2,)), chain=Chain((0, 1, 2, 3), p["cons"]))
    res = run_pose(p) if level == "pose" else run(p)
    for a in (res.positions_world, res.error, res.rotations_local):
        assert np.isfinite(a).all()
    kept = not solver.startswith("follow") or target <= scale * 1e10
    if kept:
        np.testing.assert_allclose(safe_lengths(res.positions_world), safe_lengths(p["pos"])[None]
                                   * np.ones((2, 1)), rtol=1e-9)  # fmt: skip
    end = res.positions_world[:, 0 if solver == "follow_head" else -1]
    dist = safe_lengths(np.stack([end, p["tgt"]], axis=-2))[:, 0]
    if solver != "dls_rotation":
        np.testing.assert_allclose(res.error, dist, rtol=1e-9)


@pytest.mark.parametrize("solver", SOLVERS)
def test_finite_coordinates_near_the_float64_limit_do_not_raise(solver):
    # Regression (issue 9): the kernels' finiteness check summed the coordinates, which
    # overflows for finite values near 1e308: InputError "inputs contain NaN or infinite
    # values" for a finite chain.
    p = {"solver": solver, "n": 2, "max_iterations": 100, "tolerance": 1e-3, "cons": None,
         "parent": None, "pos": np.array([[0.0, 0, 0], [1e308, 0, 0], [1.5e308, 0, 0]]),
         "tgt": np.array([1.0, 1.0, 0.0]), "trot": np.array([0.0, 0.0, 0.0, 1.0])}  # fmt: skip
    res = run(p)
    assert np.isfinite(res.positions_world).all() and np.isfinite(res.error)
    np.testing.assert_allclose(safe_lengths(res.positions_world), [1e308, 5e307], rtol=1e-9)
