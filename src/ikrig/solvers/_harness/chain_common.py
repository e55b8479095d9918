"""Shared parts of the position-based chain kernels (FABRIK: :mod:`._fabrik_kernels`,
follow-the-target: :mod:`._follow_kernels`): the kernel contract, the named records the
kernels pass around and the helpers both use.

Private. The wrappers in :mod:`ikrig.solvers.fabrik` and :mod:`ikrig.solvers.follow`
validate and flatten (:mod:`ikrig.solvers._harness.problem`); every kernel takes flat C-contiguous
float64 arrays:

* ``pos (M, m, 3)`` the chain's joint positions (``m = n + 1``, root first), read only;
* ``target (N, 3)``;
* ``rot (M, n, 4)`` the start world rotations of the solved joints and ``parent (M, 4)`` the
  world rotation of the chain root's parent; here and below ``M`` is 1 (one array shared by
  every problem) or ``N`` (one per problem). For
  chains given as positions both are ``parent_rotation_world`` (the input pose is the rest
  pose: every local rotation is the identity);
* for the constrained kernels the packed constraints ``kinds (n,)``, ``params (M, n, P)``
  (:mod:`ikrig.kernels.constraints`; each row holds the unit bone direction in the joint's
  own frame at ``P_BONE``).
* ``settings``: a one-element structured array of the solver's settings (``FABRIK_SETTINGS``,
  ``FOLLOW_SETTINGS``); ``tol`` there is the tolerance as a fraction of each chain's length
  (sum of its bone lengths);
* outputs ``out (N, m, 3)``, ``rw`` and ``rl (N, n, 4)`` (world and local rotations),
  ``err (N,)``, ``iters (N,)``, ``reached (N,)``, passed in (cheaper than returning arrays).

They return ``bad``: ``-1`` normally, the index of the first batch element whose inputs
were not finite (the wrapper raises), or ``-2`` when some elements were out of range: a
bone or a target distance beyond ``BIG`` or a bone below ``SMALL`` (their squares would
overflow or underflow float64). Those elements are left unsolved with
``err = -1`` and the wrapper solves them again rescaled by a power of two
(:func:`ikrig.solvers._harness.rescale.rescue`). float32 inputs are never out of range.

Shared rules
------------
* Bone lengths are taken from the input and kept exactly: a joint is only ever placed at
  ``previous + length * unit direction``.
* A direction that cannot be formed (two points on top of each other) falls back to the
  bone's last well-defined direction, so nothing divides by zero.
* Straight-line stall: when every joint lies on the line from the root to the target (or,
  for a target at the root, on the chain's own line), FABRIK cannot leave that line. The
  chain is first bowed deterministically: bone ``i`` turns by
  ``BOW * (n - 1 - 2 i) / n`` radians about the bend axis (the user's ``bend_axis`` made
  perpendicular to the line, else :func:`v_any_perpendicular` of the line, which is +Z for a
  chain along X).
* Rotations. Free kernels turn each joint by the shortest arc from its input bone direction
  to its output one (world rotation ``W_i = arc_i * rot_i``; twist kept) and return the
  local rotations ``W_{i-1}^-1 W_i`` (``W_{-1}`` = ``parent``). Constrained kernels track each
  joint's world rotation: when a bone is placed with a wanted direction ``d``, ``d`` is
  projected (``project_direction`` with the parent frame as it now stands), the joint's
  rotation is turned by the shortest arc onto it, snapped with ``project_local`` and the
  child is placed along the snapped rotation's bone. Every forward placement therefore
  leaves the joint inside its limits.
* Constrained backward passes (FABRIK's, and follow's tail-first pass) place bones from the
  effector up. Bone ``i``'s wanted direction is projected with its parent frame as it
  stands (the parent has not moved yet: approximate), the joint is turned onto it, and if
  the child's rotation relative to bone ``i`` then breaks the child's limit, bone ``i`` is
  turned instead (``R_i = R_child * project_local(R_i^-1 R_child)^-1``) so that the child,
  which is already in place, stays inside its limit.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..._jit.setup import NUMPY_ERRORS, njit
from ...kernels.constraints import P_BONE, project_direction_t, project_local_t
from ...kernels.qmath import (
    pick,
    q_between,
    q_conj,
    q_from_array,
    q_get,
    q_mul,
    q_normalize,
    q_rotate,
    q_set,
    row_finite,
    v_any_perpendicular,
    v_cross,
    v_dot,
    v_get,
    v_norm,
    v_set,
)

BOW = 0.3  # radians: bow given to a chain that lies on the target line
EPS_LINE = 1e-6  # relative to the chain length: "on the line"
EPS_LEN = 1e-12  # relative to the chain length: "same point"
BIG = 2.0**400  # lengths beyond BIG or below SMALL: the element is rescaled (see above)
SMALL = 2.0**-400


FABRIK_SETTINGS = np.dtype(
    [("max_iter", np.int64), ("tol", np.float64), ("bend", np.float64, (3,))]
)
FOLLOW_SETTINGS = np.dtype([("tol", np.float64), ("bend", np.float64, (3,)), ("head", np.bool_)])


def settings_record(dtype: np.dtype, **values) -> np.ndarray:
    """A read-only one-element structured array of ``dtype`` holding ``values`` (a kernel's
    ``settings``)."""
    rec = np.zeros(1, dtype=dtype)
    for name, value in values.items():
        rec[0][name] = value
    rec.flags.writeable = False
    return rec


class ChainInputs(NamedTuple):
    """A kernel's flat inputs (see the module notes)."""

    pos: np.ndarray  # (M, m, 3)
    target: np.ndarray  # (N, 3)
    rot: np.ndarray  # (M, n, 4)
    parent: np.ndarray  # (M, 4)


class Scratch(NamedTuple):
    """Per-call scratch arrays."""

    lengths: np.ndarray  # (n,) bone lengths
    u: np.ndarray  # (n, 3) the bones' unit directions, world
    bl: np.ndarray  # (n, 3) the bones in their joints' own frames


class Start(NamedTuple):
    """Problem ``k``'s set-up (:func:`setup_k`, :func:`setup_free_k`)."""

    pq: tuple  # world rotation of the chain root's parent, xyzw
    total: float  # chain length
    bad: bool  # non-finite inputs


class ChainState(NamedTuple):
    """One problem's constrained chain while it is solved (arrays are updated in place)."""

    p: np.ndarray  # (m, 3) joint positions
    r: np.ndarray  # (n, 4) world rotations of the solved joints
    pq: tuple  # world rotation of the chain root's parent
    lengths: np.ndarray  # (n,)
    bl: np.ndarray  # (n, 3) bones in their joints' own frames
    total: float  # chain length
    kinds: np.ndarray  # (n,) constraint kinds
    params: np.ndarray  # (n, P) this problem's constraint parameters


# --------------------------------------------------------------------------------------
# Geometry and free rotations
# --------------------------------------------------------------------------------------


@njit(cache=True, **NUMPY_ERRORS)
def rodrigues(w, d, c, s):
    """Rotate ``d`` about unit ``w`` by the angle with cosine ``c`` and sine ``s``."""
    x = v_cross(w, d)
    k = v_dot(w, d) * (1.0 - c)
    return (
        d[0] * c + x[0] * s + w[0] * k,
        d[1] * c + x[1] * s + w[1] * k,
        d[2] * c + x[2] * s + w[2] * k,
    )


@njit(cache=True, **NUMPY_ERRORS)
def measure(p, lengths, u):
    """Bone lengths and unit directions of the chain ``p`` (``(1, 0, 0)`` for a zero-length
    bone); returns the chain length."""
    total = 0.0
    for i in range(lengths.shape[0]):
        dx, dy, dz = p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2]
        li = math.sqrt(dx * dx + dy * dy + dz * dz)
        lengths[i] = li
        total += li
        if li > 0.0:
            u[i, 0], u[i, 1], u[i, 2] = dx / li, dy / li, dz / li
        else:
            u[i, 0], u[i, 1], u[i, 2] = 1.0, 0.0, 0.0
    return total


@njit(cache=True, **NUMPY_ERRORS)
def line_axis(p, t, lengths, total, u):
    """Unit direction of the root->target line (or the chain's own line) and whether every
    joint lies on it. ``u`` holds the bones' unit directions."""
    n = lengths.shape[0]
    rx, ry, rz = p[0, 0], p[0, 1], p[0, 2]
    dx, dy, dz = t[0] - rx, t[1] - ry, t[2] - rz
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn > EPS_LINE * total:
        a = (dx / dn, dy / dn, dz / dn)
    else:
        ex, ey, ez = p[n, 0] - rx, p[n, 1] - ry, p[n, 2] - rz
        en = math.sqrt(ex * ex + ey * ey + ez * ez)
        if en > EPS_LINE * total:
            a = (ex / en, ey / en, ez / en)
        else:
            a = v_get(u, 0)
            for i in range(n):
                if lengths[i] > EPS_LEN * total:
                    a = v_get(u, i)
                    break
    lim = (EPS_LINE * total) ** 2
    for j in range(1, n + 1):
        vx, vy, vz = p[j, 0] - rx, p[j, 1] - ry, p[j, 2] - rz
        c = vx * a[0] + vy * a[1] + vz * a[2]
        if vx * vx + vy * vy + vz * vz - c * c > lim:
            return a, False
    return a, True


@njit(cache=True, **NUMPY_ERRORS)
def bend_axis(a, bend):
    """Unit axis perpendicular to ``a``: ``bend`` made perpendicular, else a fixed one."""
    k = v_dot(bend, a)
    w = (bend[0] - k * a[0], bend[1] - k * a[1], bend[2] - k * a[2])
    nw = v_norm(w)
    if nw > 1e-6 * (v_norm(bend) + 1e-300):
        return (w[0] / nw, w[1] / nw, w[2] / nw)
    return v_any_perpendicular(a)


@njit(cache=True, **NUMPY_ERRORS)
def bow_direction(i, n, w, d):
    ang = BOW * (n - 1 - 2 * i) / n
    return rodrigues(w, d, math.cos(ang), math.sin(ang))


@njit(cache=True, **NUMPY_ERRORS)
def place_along(p, i, li, d):
    """``p[i + 1] = p[i] + li * d``."""
    p[i + 1, 0] = p[i, 0] + li * d[0]
    p[i + 1, 1] = p[i, 1] + li * d[1]
    p[i + 1, 2] = p[i, 2] + li * d[2]


@njit(cache=True, **NUMPY_ERRORS)
def shortest_arc(a, b):
    """Shortest arc between two vectors of the same length (``q_between`` when opposite or
    zero)."""
    c = v_cross(a, b)
    w = v_dot(a, a) + v_dot(a, b)
    s2 = v_dot(c, c) + w * w
    if not w > 1e-12 * v_dot(a, a):
        return q_between(a, b)
    inv = 1.0 / math.sqrt(s2)
    return (c[0] * inv, c[1] * inv, c[2] * inv, w * inv)


@njit(cache=True, **NUMPY_ERRORS)
def free_rotations(pos_k, p, rot_k, pq, rw_k, rl_k):
    """Rotations of a free chain moved from ``pos_k`` to ``p``: each joint turns by the
    shortest arc from its old bone direction to its new one (``rw_k``, world) and
    ``rl_k`` gets the local rotations (relative to the previous joint, the root's to
    ``pq``). ``rw_k`` may be ``rl_k``."""
    prev = pq
    for i in range(rl_k.shape[0]):
        old = (pos_k[i + 1, 0] - pos_k[i, 0], pos_k[i + 1, 1] - pos_k[i, 1],
               pos_k[i + 1, 2] - pos_k[i, 2])  # fmt: skip
        new = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
        w = q_mul(shortest_arc(old, new), q_get(rot_k, i))
        q_set(rw_k, i, w)
        q_set(rl_k, i, q_mul(q_conj(prev), w))
        prev = w


# --------------------------------------------------------------------------------------
# The constrained placement step and per-problem set-up
# --------------------------------------------------------------------------------------


@njit(cache=True)
def chain_setup(pos_k, rot_k, params, p, r, lengths, bl):
    """Copy one element's positions and rotations, measure the bones and find each bone's
    direction in its joint's own frame (``rot^-1 (p[i+1] - p[i])``; the packed rest
    direction for a zero-length bone). Returns the chain length."""
    n = lengths.shape[0]
    for j in range(n + 1):
        p[j, 0], p[j, 1], p[j, 2] = pos_k[j, 0], pos_k[j, 1], pos_k[j, 2]
    total = 0.0
    for i in range(n):
        ri = q_normalize(q_get(rot_k, i))
        q_set(r, i, ri)
        d = (p[i + 1, 0] - p[i, 0], p[i + 1, 1] - p[i, 1], p[i + 1, 2] - p[i, 2])
        li = v_norm(d)
        lengths[i] = li
        total += li
        if li > 0.0:
            b = q_rotate(q_conj(ri), (d[0] / li, d[1] / li, d[2] / li))
        else:
            b = (params[i, P_BONE], params[i, P_BONE + 1], params[i, P_BONE + 2])
        v_set(bl, i, b)
    return total


@njit(cache=True, inline="always")  # no call boundary: it runs per bone per pass
def place(i, d, s):
    """Place bone ``i`` of the chain ``s`` (:class:`ChainState`) along wanted direction ``d``
    within joint ``i``'s constraint.

    Updates ``s.r[i]`` (world rotation) and ``s.p[i + 1]``; ``s.p[i]`` and the parent frame
    (``s.r[i - 1]`` or ``s.pq``) must be final.
    """
    r = s.r
    par = s.pq if i == 0 else q_get(r, i - 1)
    ri = q_get(r, i)
    b = v_get(s.bl, i)
    cur = q_rotate(ri, b)
    if v_norm(d) <= EPS_LEN * s.total:
        d = cur
    dp = project_direction_t(s.kinds[i], s.params[i], par, d)
    cand = q_mul(q_between(cur, dp), ri)
    q = project_local_t(s.kinds[i], s.params[i], q_mul(q_conj(par), cand))
    ri = q_normalize(q_mul(par, q))
    q_set(r, i, ri)
    place_along(s.p, i, s.lengths[i], q_rotate(ri, b))


@njit(cache=True, inline="always")
def turn_parent(i, arc, s):
    """Turn joint ``i`` of the chain ``s`` by the world rotation ``arc``, then, if its child's
    rotation relative to it breaks the child's limit, turn joint ``i`` instead so that the
    child (already placed) is inside. Updates ``s.r[i]``; returns bone ``i``'s new unit
    direction."""
    r, kinds, params = s.r, s.kinds, s.params
    ri = q_normalize(q_mul(arc, q_get(r, i)))
    if i < s.lengths.shape[0] - 1:
        child = q_get(r, i + 1)
        qc = project_local_t(kinds[i + 1], params[i + 1], q_mul(q_conj(ri), child))
        ri = q_normalize(q_mul(child, q_conj(qc)))
    q_set(r, i, ri)
    return q_rotate(ri, v_get(s.bl, i))


@njit(cache=True)
def snap_all(s):
    """Snap every joint's local rotation of the chain ``s`` into its limits, root first, and
    redo the FK."""
    p, r, lengths, kinds, params, bl = s.p, s.r, s.lengths, s.kinds, s.params, s.bl
    par = s.pq
    for i in range(lengths.shape[0]):
        q = project_local_t(kinds[i], params[i], q_mul(q_conj(par), q_get(r, i)))
        ri = q_normalize(q_mul(par, q))
        q_set(r, i, ri)
        place_along(p, i, lengths[i], q_rotate(ri, v_get(bl, i)))
        par = ri


@njit(cache=True, **NUMPY_ERRORS)
def scratch(n):
    """Per-call :class:`Scratch` of a chain of ``n`` bones."""
    return Scratch(np.empty(n), np.empty((n, 3)), np.empty((n, 3)))


@njit(cache=True)
def setup_k(inp, params, k, out, rw, sc):
    """Problem ``k`` of a constrained kernel (``inp`` its :class:`ChainInputs`, ``sc`` its
    :class:`Scratch`): copy its chain into ``out[k]``, its start rotations into ``rw[k]`` and
    measure it (:func:`chain_setup`). Returns a :class:`Start`."""
    pk = pick(inp.pos, k)
    pq = q_normalize(q_from_array(pick(inp.parent, k)))
    if not row_finite(pk, inp.target, k):
        return Start(pq, 0.0, True)
    total = chain_setup(pk, pick(inp.rot, k), pick(params, k), out[k], rw[k], sc.lengths, sc.bl)
    return Start(pq, total, False)


@njit(cache=True, **NUMPY_ERRORS)
def setup_free_k(inp, k, out, sc):
    """Problem ``k`` of a free kernel: copy its chain into ``out[k]`` and measure it
    (:func:`measure`, into ``sc.lengths`` and ``sc.u``). Returns a :class:`Start`."""
    pk = pick(inp.pos, k)
    pq = q_normalize(q_from_array(pick(inp.parent, k)))
    if not row_finite(pk, inp.target, k):
        return Start(pq, 0.0, True)
    p = out[k]
    for j in range(pk.shape[0]):
        p[j, 0], p[j, 1], p[j, 2] = pk[j, 0], pk[j, 1], pk[j, 2]
    return Start(pq, measure(p, sc.lengths, sc.u), False)


@njit(cache=True)
def local_rotations(r, parent_q, out_k):
    par = parent_q
    for i in range(r.shape[0]):
        ri = q_get(r, i)
        q_set(out_k, i, q_mul(q_conj(par), ri))
        par = ri


@njit(cache=True, **NUMPY_ERRORS)
def joint_dist(p, j, t):
    dx, dy, dz = p[j, 0] - t[0], p[j, 1] - t[1], p[j, 2] - t[2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, **NUMPY_ERRORS)
def out_of_range(p, j, t):
    """Whether the chain ``p``'s bones (their largest coordinate difference) or joint
    ``j``'s distance to ``t`` are out of the range the kernels square safely (see the
    module notes on ``bad``). Uses no squares, so it cannot overflow itself."""
    far = max(abs(p[j, 0] - t[0]), abs(p[j, 1] - t[1]), abs(p[j, 2] - t[2]))
    big = 0.0
    for i in range(p.shape[0] - 1):
        for c in range(3):
            big = max(big, abs(p[i + 1, c] - p[i, c]))
    return not (far <= BIG and big <= BIG) or 0.0 < big < SMALL


@njit(cache=True, **NUMPY_ERRORS)
def skip(k, rw, rl, err, reached):
    """Leave element ``k`` unsolved for the wrapper's rescaled solve (``err = -1``)."""
    for i in range(rl.shape[1]):
        q_set(rw[k], i, (0.0, 0.0, 0.0, 1.0))
        q_set(rl[k], i, (0.0, 0.0, 0.0, 1.0))
    err[k] = -1.0
    reached[k] = False


@njit(cache=True)
def bow_if_on_line(s, t, u, bend, need_turn, head):
    """Bow the chain ``s`` (:class:`ChainState`) when it lies straight on the target line
    (see the module notes), keeping the constraints (:func:`place`); ``u`` receives the
    bones' unit directions. With ``need_turn`` only when the first bone a follow pass moves
    would have to turn around (``head``: the root's bone; else the last bone)."""
    p, r, lengths, bl, total = s.p, s.r, s.lengths, s.bl, s.total
    n = lengths.shape[0]
    for i in range(n):
        v_set(u, i, q_rotate(q_get(r, i), v_get(bl, i)))
    a, on_line = line_axis(p, t, lengths, total, u)
    if not on_line or n < 2:
        return
    if need_turn:
        j = 0 if head else n - 1
        if head:
            d = (p[1, 0] - t[0], p[1, 1] - t[1], p[1, 2] - t[2])
        else:
            d = (t[0] - p[j, 0], t[1] - p[j, 1], t[2] - p[j, 2])
        if v_dot(d, v_get(u, j)) >= -EPS_LEN * total:
            return
    w = bend_axis(a, bend)
    for i in range(n):
        place(i, bow_direction(i, n, w, v_get(u, i)), s)
        v_set(u, i, q_rotate(q_get(r, i), v_get(bl, i)))
