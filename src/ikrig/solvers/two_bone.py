"""Analytic two-bone IK (thigh-knee-ankle, upper arm-elbow-wrist).

Three entry points, one algorithm (:mod:`ikrig.solvers._two_bone_kernels`):

* :func:`two_bone_positions` works on world positions over any batch shape and returns the
  new mid and end positions plus the world-space rotation deltas of the root and mid joints;
* :func:`two_bone_positions_soa` is the same solve for big batches stored component-first,
  ``(3, N)``, positions only (about 8x faster per element than the general path);
* :func:`solve_two_bone` solves three joints of a :class:`~ikrig.pose.Motion` and returns a
  new Motion with the root and mid (and, by default, end) local rotations changed.

Like ozz-animation's ``IKTwoBoneJob``: a small unit with documented inputs, a validation
step, and a run step that returns corrections plus ``reached``.

The solve, per problem (all positions in world space):

1. Bone lengths ``l1 = |mid - root|``, ``l2 = |end - mid|`` are measured from the input
   and kept (unless stretching is enabled).
2. Soft IK (``TwoBoneOptions.soften < 1``, the ozz rule): a target farther than
   ``da = soften * L`` (``L = l1 + l2``) is placed at ``da + ds (1 - 3^4 / (alpha + 3)^4)``,
   ``ds = L - da``, ``alpha = (d - da) / ds``, so the knee never snaps straight.
3. Stretch (``max_stretch > 1``): both bones lengthen by up to that factor so that the end
   reaches a target beyond the (softened) reach.
4. The end goes onto the root->target line at the reach distance, clamped to
   ``[|l1 - l2|, l1 + l2]``: an unreachable target gives the chain straightened toward it.
5. The mid joint goes into the plane of root, target and pole, on the pole's side
   (law of cosines); ``twist_angle`` then turns the chain about the root->target axis.
6. Rotations: the root delta maps the old thigh direction *and bend plane* onto the new
   ones, so it is not the shortest arc between the old and new thigh directions (it may
   add a twist about the thigh); the mid delta adds a hinge about the bend normal.
   ``TwoBoneOptions.root_rotation="shortest_arc"`` gives minimal rotations instead.
7. ``weight`` blends each rotation delta from the identity (normalised lerp after forcing
   ``w >= 0``, as ozz does) and the stretch from 1 (``1 + weight (s - 1)``); the positions
   follow: the old bones, scaled by the blended stretch, turned by the blended rotations.

float32 data are solved in float32 where that is safe (bone lengths within about 1e-6 to
1e6, targets and poles within 1e6 of the root) and in float64 otherwise, so every finite
input gives finite outputs.

Degenerate inputs never raise and never give NaN (see :func:`two_bone_positions`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .._numba import notify_compiling
from ..errors import HierarchyError, InputError
from ..math.quat import quat_conj, quat_mul
from ..pose import Motion, fk
from . import _two_bone_kernels as K
from . import _two_bone_loops as KL
from ._two_bone_args import (
    _F32,
    _F64,
    _check_out,
    _check_real,
    _dtype_and_batch,
    _filled_rows,
    _flat,
    _points,
    _raise_nonfinite,
    _scalar_or_array,
    _single_problem,
    _weight_rows,
)

__all__ = [
    "TwoBoneOptions",
    "TwoBonePositions",
    "TwoBoneResult",
    "TwoBoneSoA",
    "solve_two_bone",
    "two_bone_positions",
    "two_bone_positions_soa",
]

_finite = math.isfinite
ROOT_ROTATIONS = ("bend_plane", "shortest_arc")
# Batches at least this big go to the multi-threaded, vectorised kernels; smaller ones to
# the serial kernel (starting the thread pool costs a few microseconds).
PARALLEL_MIN = 256


@dataclass(frozen=True)
class TwoBoneOptions:
    """Options of the two-bone solver (validated on construction).

    Attributes:
        soften: ozz's soft-IK ratio in ``[0, 1]``; targets farther than ``soften * L``
            (``L`` the chain's length) are pulled in smoothly so the knee does not snap
            straight. ``1`` (default) turns softening off. A softened target is not
            reached: the end stops short of it, except just past ``soften * L``, where
            ozz's rule (slope 4/3 at its start) puts the end slightly *beyond* the
            target (for ``d - soften * L`` up to about ``0.38 (1 - soften) L``).
        max_stretch: ``>= 1``; bones may lengthen up to this factor (both by the same
            factor) to reach a target beyond the chain's reach. ``1`` (default) turns
            stretching off. Combined with ``soften`` the stretch starts at ``soften * L``
            and makes up for the softening, so the end reaches the target again.
        keep_end_rotation: pose level only (:func:`solve_two_bone`): the end joint keeps its
            world rotation, as engines do for feet (default True). If False the end keeps
            its local rotation and turns with the mid joint.
        tolerance: ``> 0``; ``reached`` means the end lies within ``tolerance * L`` of the
            target (default ``1e-5``).
        root_rotation: how the rotation deltas are chosen (the positions at weight 1 are the
            same either way). ``"bend_plane"`` (default, as ozz): the root delta takes the
            old thigh direction and bend plane onto the new ones, the mid joint turns about
            its bend normal (a pure hinge); the root delta is *not* the shortest arc
            between the thigh directions when the bend plane turns. ``"shortest_arc"``: the
            root delta is the minimal rotation taking the old root->mid direction onto the
            new one, and the mid joint's change (in the root's turned frame) is the minimal
            rotation of its bone onto the new one, which in general is not about the old
            bend normal. Weights blend these rotations, so weighted poses differ too.

    Raises:
        InputError: a value out of range or not a number.

    Example:
        >>> TwoBoneOptions(soften=0.97).max_stretch
        1.0
    """

    soften: float = 1.0
    max_stretch: float = 1.0
    keep_end_rotation: bool = True
    tolerance: float = 1e-5
    root_rotation: str = "bend_plane"

    def __post_init__(self):
        _check_real(self.soften, "soften", 0.0, 1.0)
        _check_real(self.max_stretch, "max_stretch", 1.0, math.inf)
        _check_real(self.tolerance, "tolerance", 0.0, math.inf, open_low=True)
        if not isinstance(self.keep_end_rotation, (bool, np.bool_)):
            raise InputError(
                f"keep_end_rotation: expected True or False, got {self.keep_end_rotation!r}"
            )
        if self.root_rotation not in ROOT_ROTATIONS:
            raise InputError(
                f"root_rotation: expected one of {ROOT_ROTATIONS}, got {self.root_rotation!r}"
            )


@dataclass(frozen=True, eq=False)
class TwoBonePositions:
    """Result of :func:`two_bone_positions`, over the problem's batch shape ``(...)``.

    Attributes:
        mid_world: ``(..., 3)`` new mid-joint (knee) position, world space.
        end_world: ``(..., 3)`` new end-joint (ankle) position, world space.
        root_rotation_world: ``(..., 4)`` xyzw world-space delta of the root joint:
            ``new_root_rotation_world = root_rotation_world * old_root_rotation_world``.
            By default it carries the bend plane and is not the shortest arc from the old
            to the new root->mid direction (see ``TwoBoneOptions.root_rotation``).
        mid_rotation_world: ``(..., 4)`` xyzw world-space delta of the mid joint (it includes
            the root's): ``new_mid_rotation_world = mid_rotation_world * old``.
        reached: ``(...)`` bool, the new end lies within ``tolerance * L`` of the target.
        stretch: ``(...)`` factor applied to both bone lengths (1 unless ``max_stretch > 1``;
            with ``weight < 1`` the blended ``1 + weight (s - 1)`` that was applied).

    Both deltas have ``w >= 0``; a degenerate chain gives identity deltas. For batches
    below ``PARALLEL_MIN`` the float arrays are views of one ``(..., 15)`` buffer (one
    allocation per call); copy one before resizing it in place.
    """

    mid_world: np.ndarray
    end_world: np.ndarray
    root_rotation_world: np.ndarray
    mid_rotation_world: np.ndarray
    reached: np.ndarray
    stretch: np.ndarray


class TwoBoneSoA(NamedTuple):
    """Result of :func:`two_bone_positions_soa` (component-first arrays).

    Attributes:
        mid_world: ``(3, N)`` new mid-joint positions, world space.
        end_world: ``(3, N)`` new end-joint positions, world space.
        reached: ``(N,)`` bool, the end lies within ``tolerance * L`` of the target.
    """

    mid_world: np.ndarray
    end_world: np.ndarray
    reached: np.ndarray


@dataclass(frozen=True, eq=False)
class TwoBoneResult:
    """Result of :func:`solve_two_bone`.

    Attributes:
        motion: the new :class:`~ikrig.pose.Motion` (batch shape: the motion's and the
            target's, broadcast). Only the root and mid local rotations changed (and the
            end's, with ``keep_end_rotation``), plus the mid and end local translations when
            a bone stretched.
        reached: ``(...)`` bool, the end lies within ``tolerance * L`` of the target.
        mid_world: ``(..., 3)`` new mid-joint position, world space.
        end_world: ``(..., 3)`` new end-joint position, world space.
    """

    motion: Motion
    reached: np.ndarray
    mid_world: np.ndarray
    end_world: np.ndarray


# ----------------------------------------------------------------------------- validation


@lru_cache(maxsize=64)
def _consts(dtype: np.dtype, soften: float, max_stretch: float, tolerance: float):
    """``(consts, c64)``: the kernels' constants for data of ``dtype``, in that dtype and
    in float64 (float32 data out of float32's safe range are solved in float64)."""
    return tuple(K.make_consts(dtype, soften, max_stretch, tolerance, f64) for f64 in (False, True))


_notified = False


def _notify() -> None:
    global _notified
    if not _notified:
        _notified = True
        notify_compiling()


# ---------------------------------------------------------------------- position level


def two_bone_positions(
    root_world,
    mid_world,
    end_world,
    target_world,
    pole_world=None,
    weight=1.0,
    twist_angle=0.0,
    options: TwoBoneOptions | None = None,
) -> TwoBonePositions:
    """Solve two-bone IK on world positions.

    Args:
        root_world: ``(..., 3)`` root joint (hip, shoulder), world space. It does not move.
        mid_world: ``(..., 3)`` mid joint (knee, elbow), world space.
        end_world: ``(..., 3)`` end joint (ankle, wrist), world space.
        target_world: ``(..., 3)`` where the end should go, world space.
        pole_world: ``(..., 3)`` a world-space *point* the mid joint should point toward
            (the "hint"): the mid joint ends in the plane of root, target and pole, on the
            pole's side. Default ``None``: the current mid position (the knee keeps its
            plane).
        weight: scalar or array broadcast to the batch, clamped to ``[0, 1]``: each
            rotation delta is blended from the identity (normalised lerp, as in ozz) and the
            stretch ``s`` from 1 (``1 + weight (s - 1)``); the positions are the old bones
            scaled and turned by these; default 1.
        twist_angle: scalar or array broadcast to the batch, radians: turns the solved
            chain about the root->target axis (right-handed); default 0.
        options: :class:`TwoBoneOptions` (``soften``, ``max_stretch``, ``tolerance``,
            ``root_rotation``).

    All arguments broadcast together. float32 positions give float32 outputs (whatever
    the dtype of ``weight`` and ``twist_angle``), computed in float32 where that is safe
    and in float64 otherwise (tiny or huge lengths, fallbacks, small batches); anything
    else is computed in float64.

    The root delta is not the shortest arc by default: it takes the old bend plane onto
    the new one (the knee stays a hinge), which can add a twist about the thigh. Pass
    ``TwoBoneOptions(root_rotation="shortest_arc")`` for minimal rotations.

    Returns:
        :class:`TwoBonePositions` with ``mid_world``, ``end_world`` ``(..., 3)``,
        ``root_rotation_world``, ``mid_rotation_world`` ``(..., 4)`` (world-space deltas,
        ``w >= 0``), ``reached`` ``(...)`` and ``stretch`` ``(...)``.

    Degenerate problems (per element; they never raise and never give NaN):

    * pole on the root->target line: the current mid position is used as the pole; if it
      is on the line too, the current bend plane and direction are kept (normal of root,
      mid, end); if the chain is straight as well, a fixed perpendicular of the aim axis
      (``axis x X``, or ``axis x Y`` when the axis is near X);
    * target at the root (closer than ~1e-5 of the chain's length): the chain folds along
      the current root->end direction (the end returns onto the root when ``l1 == l2``,
      and the mid joint then keeps its offset along that direction, as in ozz);
    * a zero-length bone (shorter than ~1e-5 of the other): the pose is returned
      unchanged with identity deltas and ``reached`` False;
    * an unreachable target: the chain straightened toward it (stretched when
      ``max_stretch > 1``), ``reached`` False unless within tolerance.

    ``reached`` is geometric: the final end lies within ``tolerance * L`` of the target,
    so ``weight < 1`` or softening that leaves the end short is not reached.

    Raises:
        InputError: wrong shapes, batch shapes that do not broadcast, or NaN/inf inputs
            (the message names the argument). Finiteness is checked inside the kernel,
            through squared lengths (in float64 for float32 data): coordinates must keep
            those finite (any finite float32; below about 1e150 in float64).

    Example:
        >>> import numpy as np
        >>> r = two_bone_positions([0, 1, 0], [0, 0.5, 0.1], [0, 0, 0], [0.3, 0.2, 0.2])
        >>> bool(r.reached), np.round(r.end_world, 6).tolist()
        (True, [0.3, 0.2, 0.2])
    """
    if options is None:
        options = _DEFAULT_OPTIONS
    # 1. validate (finiteness is checked inside the kernel)
    fast = _single_problem(root_world, mid_world, end_world, target_world, pole_world)
    if fast is not None:  # one problem, float ndarrays of shape (3,) ready for the kernel
        root, mid, end, target, pole = fr, fm, fe, ft, fp = fast
        dt, batch, n = root.dtype, (), 1
    else:
        root = _points(root_world, "root_world")
        mid = _points(mid_world, "mid_world")
        end = _points(end_world, "end_world")
        target = _points(target_world, "target_world")
        pole = None if pole_world is None else _points(pole_world, "pole_world")
    w = weight
    if type(w) is not float or not _finite(w):
        w = _scalar_or_array(weight, "weight")
    tw = twist_angle
    if type(tw) is not float or not _finite(tw):
        tw = _scalar_or_array(twist_angle, "twist_angle")
    if fast is None or type(w) is not float or type(tw) is not float:
        dt, batch, n = _dtype_and_batch(root, mid, end, target, pole, w, tw)
        fr, fm = _flat(root, batch, dt), _flat(mid, batch, dt)
        fe, ft = _flat(end, batch, dt), _flat(target, batch, dt)
        fp = fm if pole is None else _flat(pole, batch, dt)
    elif pole is None:
        fp = fm

    # 2. run
    if options is _DEFAULT_OPTIONS:
        (consts, c64), arc = _DEFAULT_CONSTS[dt], False
    else:
        consts, c64 = _consts(dt, options.soften, options.max_stretch, options.tolerance)
        arc = options.root_rotation == "shortest_arc"
    if not _notified:
        _notify()
    reached = np.empty(batch, dtype=np.bool_)
    flat_reached = reached if reached.ndim == 1 else reached.reshape(n)
    unweighted = type(w) is float and w >= 1.0 and type(tw) is float and tw == 0.0
    if n < PARALLEL_MIN:
        # serial kernel: weights broadcast, one output buffer (few objects per call)
        wct = _UNWEIGHTED[dt] if unweighted else _weight_rows(w, tw, batch, n, dt, True)
        out = np.empty(batch + (KL.OUT_WIDTH,), dtype=dt)
        flat_out = out if out.ndim == 1 else out.reshape(n * KL.OUT_WIDTH)
        nbad = KL.aos_solve(fr, fm, fe, ft, fp, wct, c64, arc, flat_out, flat_reached)
        result = _positions_result(out, reached)
    else:
        wct = _filled_rows(dt, n) if unweighted else _weight_rows(w, tw, batch, n, dt, False)
        mid_o, end_o = np.empty(batch + (3,), dt), np.empty(batch + (3,), dt)
        qr_o, qm_o = np.empty(batch + (4,), dt), np.empty(batch + (4,), dt)
        stretch_o = np.empty(batch, dt)
        kernel = KL.AOS_PARALLEL[dt == _F32, arc]
        nbad = kernel(
            fr, fm, fe, ft, fp, wct, consts, c64,
            mid_o.reshape(-1), end_o.reshape(-1), qr_o.reshape(-1), qm_o.reshape(-1),
            stretch_o.reshape(-1), flat_reached.view(np.uint8),
        )  # fmt: skip
        result = TwoBonePositions(mid_o, end_o, qr_o, qm_o, reached, stretch_o)
    if nbad:
        _raise_nonfinite(
            (
                ("root_world", root),
                ("mid_world", mid),
                ("end_world", end),
                ("target_world", target),
                ("pole_world", pole),
                ("weight", w),
            )
        )
    return result


def _positions_result(out: np.ndarray, reached: np.ndarray) -> TwoBonePositions:
    """Views of the kernel's output buffer as a :class:`TwoBonePositions` (fast init)."""
    res = _new_positions(TwoBonePositions)
    d = res.__dict__
    d["mid_world"] = out[..., KL.OUT_MID : KL.OUT_MID + 3]
    d["end_world"] = out[..., KL.OUT_END : KL.OUT_END + 3]
    d["root_rotation_world"] = out[..., KL.OUT_QR : KL.OUT_QR + 4]
    d["mid_rotation_world"] = out[..., KL.OUT_QM : KL.OUT_QM + 4]
    d["reached"] = reached
    d["stretch"] = out[..., KL.OUT_STRETCH]
    return res


_DEFAULT_OPTIONS = TwoBoneOptions()
_new_positions = object.__new__
_DEFAULT_CONSTS = {dt: _consts(dt, 1.0, 1.0, _DEFAULT_OPTIONS.tolerance) for dt in (_F32, _F64)}
# weight 1, cos 1, sin 0 for the serial kernel (one column, broadcast)
_UNWEIGHTED = {dt: np.array([[1.0], [1.0], [0.0]], dtype=dt) for dt in (_F32, _F64)}


def two_bone_positions_soa(
    root,
    mid,
    end,
    target,
    pole=None,
    weight=1.0,
    out=None,
    options: TwoBoneOptions | None = None,
) -> TwoBoneSoA:
    """Two-bone IK for big batches stored component-first (structure of arrays).

    The same solve as :func:`two_bone_positions`, positions only. With the default weight
    the kernel runs over contiguous rows of x, y and z and vectorises (AVX); elements that
    need a fallback (degenerate chain, target at the root, pole on the aim line) are
    re-solved in a second, serial pass.

    Args:
        root: ``(3, N)`` root joint positions, world space (float32 or float64).
        mid: ``(3, N)`` mid joint positions, world space.
        end: ``(3, N)`` end joint positions, world space.
        target: ``(3, N)`` targets, world space.
        pole: ``(3, N)`` pole points, world space; default ``None``: the current mid.
        weight: scalar or ``(N,)``; anything but the default 1 runs the general
            (array-of-structures) path on transposed copies.
        out: optional ``(mid_out (3, N), end_out (3, N), reached_out (N,) bool)`` to write
            into (C-contiguous, the input dtype).
        options: :class:`TwoBoneOptions`.

    Returns:
        :class:`TwoBoneSoA` ``(mid_world (3, N), end_world (3, N), reached (N,))``.

    Raises:
        InputError: wrong shapes or dtypes (all inputs must share one float dtype and be
            C-contiguous ``(3, N)``; read-only ones are copied), or NaN/inf inputs (the
            message names the argument).

    Example:
        >>> import numpy as np
        >>> col = lambda *p: np.array(p, dtype=np.float32).reshape(3, 1)
        >>> r = two_bone_positions_soa(col(0, 1, 0), col(0, 0.5, 0.1), col(0, 0, 0),
        ...                            col(0.3, 0.2, 0.2))
        >>> bool(r.reached[0]), np.round(r.end_world[:, 0].astype(float), 5).tolist()
        (True, [0.3, 0.2, 0.2])
    """
    if options is None:
        options = _DEFAULT_OPTIONS
    arrays = [("root", root), ("mid", mid), ("end", end), ("target", target)]
    if pole is not None:
        arrays.append(("pole", pole))
    first = arrays[0][1]
    if not isinstance(first, np.ndarray) or first.dtype not in (_F32, _F64):
        raise InputError(f"root: expected a float32 or float64 (3, N) array, got {first!r:.60}")
    dt = first.dtype
    for name, a in arrays:
        if not isinstance(a, np.ndarray) or a.dtype != dt:
            raise InputError(f"{name}: expected a {dt} array like root, got {type(a).__name__}")
        if a.ndim != 2 or a.shape[0] != 3 or a.shape != first.shape:
            raise InputError(f"{name}: expected shape (3, N) = {first.shape}, got {a.shape}")
        if not a.flags.c_contiguous:
            raise InputError(f"{name}: must be C-contiguous (use np.ascontiguousarray)")
    # read-only arrays are another type to Numba (another compilation): copy them
    arrays = [(name, a if a.flags.writeable else a.copy()) for name, a in arrays]
    root, mid, end, target = (a for _, a in arrays[:4])
    if pole is not None:
        pole = arrays[4][1]
    n = first.shape[1]
    if out is None:
        out_mid = np.empty((3, n), dtype=dt)
        out_end = np.empty((3, n), dtype=dt)
        out_reached = np.empty(n, dtype=np.bool_)
    else:
        out_mid, out_end, out_reached = _check_out(out, dt, n)
    if not (isinstance(weight, (float, int)) and weight >= 1.0):
        # general path: transpose, solve, transpose back
        r = two_bone_positions(
            root.T, mid.T, end.T, target.T, None if pole is None else pole.T, weight,
            options=options,
        )  # fmt: skip
        out_mid[...] = r.mid_world.T
        out_end[...] = r.end_world.T
        out_reached[...] = r.reached
        return TwoBoneSoA(out_mid, out_end, out_reached)
    consts, c64 = _consts(dt, options.soften, options.max_stretch, options.tolerance)
    kernel = KL.SOA[dt == _F32, options.soften < 1.0 or options.max_stretch > 1.0]
    _notify()
    nbad = kernel(
        root, mid, end, target, mid if pole is None else pole, consts, c64,
        out_mid, out_end, out_reached.view(np.uint8),
    )  # fmt: skip
    if nbad:
        _raise_nonfinite(arrays)
    return TwoBoneSoA(out_mid, out_end, out_reached)


# -------------------------------------------------------------------------- pose level


def solve_two_bone(
    motion: Motion,
    joints,
    target_world,
    pole_world=None,
    weight=1.0,
    twist_angle=0.0,
    options: TwoBoneOptions | None = None,
) -> TwoBoneResult:
    """Solve two-bone IK on three joints of a :class:`~ikrig.pose.Motion`.

    Args:
        motion: the pose, clip or crowd (batch shape ``B``).
        joints: ``(root, mid, end)`` joint names or indices; ``mid`` must be a child of
            ``root`` and ``end`` a child of ``mid``.
        target_world: ``(..., 3)`` where the end joint should go, world space; broadcast
            with ``B``.
        pole_world: ``(..., 3)`` world-space point the mid joint should point toward;
            default ``None``: the current mid position (the knee keeps its plane).
        weight: scalar or array broadcast to the batch, clamped to ``[0, 1]``; default 1.
        twist_angle: scalar or array, radians, about the root->target axis; default 0.
        options: :class:`TwoBoneOptions` (``keep_end_rotation`` applies here;
            ``root_rotation="shortest_arc"`` turns the root and mid joints by their
            shortest arcs instead of carrying the bend plane).

    Forward kinematics gives the three joints' world frames; :func:`two_bone_positions`
    gives the world deltas, which become local rotations:
    ``root_local' = parent_world^-1 * root_delta * root_world``,
    ``mid_local' = root_world'^-1 * mid_delta * mid_world`` and, with
    ``keep_end_rotation``, ``end_local' = mid_world'^-1 * end_world``. When a bone
    stretched, the mid and end local translations are scaled (by the stretch blended with
    ``weight``, as the positions).

    Returns:
        :class:`TwoBoneResult` ``(motion, reached, mid_world, end_world)``.

    Raises:
        InputError: unknown joints, wrong shapes, NaN/inf inputs.
        HierarchyError: ``mid`` is not a child of ``root`` or ``end`` not a child of ``mid``.

    Example:
        >>> import numpy as np
        >>> from ikrig.skeleton import Skeleton
        >>> sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1],
        ...               [[0, 1, 0], [0, -0.5, 0.05], [0, -0.5, -0.05]])
        >>> res = solve_two_bone(Motion.rest(sk), ("hip", "knee", "ankle"), [0.2, 0.3, 0.3])
        >>> bool(res.reached), np.round(res.motion.positions_world()[2], 5).tolist()
        (True, [0.2, 0.3, 0.3])
    """
    if options is None:
        options = _DEFAULT_OPTIONS
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected a Motion, got {type(motion).__name__}")
    sk = motion.skeleton
    try:
        names = tuple(joints)
    except TypeError:
        names = ()
    if len(names) != 3 or isinstance(joints, str):
        raise InputError(f"joints: expected (root, mid, end), got {joints!r}")
    ir, im, ie = (sk.index(j) for j in names)
    parents = sk.parents
    if parents[im] != ir:
        raise HierarchyError(f"joints: {sk.names[im]!r} is not a child of {sk.names[ir]!r}")
    if parents[ie] != im:
        raise HierarchyError(f"joints: {sk.names[ie]!r} is not a child of {sk.names[im]!r}")

    dt = motion.dtype
    rot_w, pos_w = _chain_world(motion, ir, im, ie)  # (..., 4, 4) and (..., 4, 3)
    target = _points(target_world, "target_world")
    r = two_bone_positions(
        pos_w[..., 1, :], pos_w[..., 2, :], pos_w[..., 3, :], target.astype(dt, copy=False),
        None if pole_world is None else _points(pole_world, "pole_world").astype(dt),
        weight, twist_angle, options,
    )  # fmt: skip
    batch = r.reached.shape
    parent_w = np.broadcast_to(rot_w[..., 0, :], batch + (4,))
    root_w = quat_mul(r.root_rotation_world, rot_w[..., 1, :])
    mid_w = quat_mul(r.mid_rotation_world, rot_w[..., 2, :])
    rl = np.array(
        np.broadcast_to(motion.rotations_local, batch + motion.rotations_local.shape[-2:])
    )
    rl[..., ir, :] = quat_mul(quat_conj(parent_w), root_w)
    rl[..., im, :] = quat_mul(quat_conj(root_w), mid_w)
    if options.keep_end_rotation:
        rl[..., ie, :] = quat_mul(quat_conj(mid_w), rot_w[..., 3, :])
    pl = motion.positions_local
    if pl.shape[:-2] != batch:
        pl = np.broadcast_to(pl, batch + pl.shape[-2:])
    if options.max_stretch > 1.0 and bool((r.stretch != 1).any()):
        pl = np.array(pl)
        s = r.stretch[..., None]
        pl[..., im, :] *= s
        pl[..., ie, :] *= s
    elif not pl.flags.writeable:
        pl = np.array(pl)
    new = Motion(sk, rl.astype(dt, copy=False), pl.astype(dt, copy=False), motion.frame_time)
    return TwoBoneResult(new, r.reached, r.mid_world, r.end_world)


def _chain_world(motion: Motion, ir: int, im: int, ie: int):
    """World rotations and positions of root's parent, root, mid and end: ``(..., 4, 4/3)``.

    Forward kinematics (:func:`ikrig.pose.fk`) along the root's ancestors and the three
    joints only, not the whole skeleton. The parent slot holds the identity and the origin
    for a root joint.
    """
    sk = motion.skeleton
    path = list(reversed(sk.ancestors(ir))) + [ir, im, ie]
    chain_parents = np.arange(-1, len(path) - 1)
    rot_w, pos_w = fk(
        chain_parents, motion.rotations_local[..., path, :], motion.positions_local[..., path, :]
    )
    k = len(path) - 3  # index of the root in the path
    if k == 0:
        parent_rot = np.zeros(rot_w.shape[:-2] + (1, 4), dtype=rot_w.dtype)
        parent_rot[..., 3] = 1
        parent_pos = np.zeros(pos_w.shape[:-2] + (1, 3), dtype=pos_w.dtype)
    else:
        parent_rot, parent_pos = rot_w[..., k - 1 : k, :], pos_w[..., k - 1 : k, :]
    rots = np.concatenate([parent_rot, rot_w[..., k:, :]], axis=-2)
    poss = np.concatenate([parent_pos, pos_w[..., k:, :]], axis=-2)
    return rots, poss
