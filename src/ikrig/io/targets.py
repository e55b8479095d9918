"""The targets file of ``ikrig fit``: per-frame world goals for a skeleton's joints.

The format is fixed, so that other tools can write it with NumPy alone
(``np.savez("T.npz", names=..., positions=..., rotations=..., fps=...)``). One ``.npz``
archive holds four arrays:

=============  ============  ==========================================================
key            shape         meaning
=============  ============  ==========================================================
``names``      ``(J,)``      joint names (strings), each once; any subset of a
                             skeleton's joints, in any order
``positions``  ``(F, J, 3)`` world positions (the skeleton's units, Y up), a row of NaN
                             where a joint has no position goal that frame
``rotations``  ``(F, J, 4)`` world rotations as unit quaternions ``x, y, z, w``, a row of
                             NaN where a joint has no rotation goal that frame
``fps``        ``()``        frames per second, a number > 0
=============  ============  ==========================================================

A joint's world rotation is the orientation of its frame from forward kinematics
(:func:`ikrig.pose.fk`): its local rotation turns its children's offsets. A row is all
numbers or all NaN (``x`` NaN with ``y`` a number is an error); a rotation's length must be
1 within :data:`UNIT_TOLERANCE` (the rule of :mod:`ikrig._checks`), and rotations within it
are kept as given, bit for bit. Other keys in the archive are ignored. Archives are read
without pickle: an object array (names stored as Python objects) is refused.

:func:`read_targets` reads a file (mapped onto a skeleton's joint order when one is given),
:func:`write_targets` writes one atomically, :func:`targets_from_motion` makes the targets
of a clip by forward kinematics.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._checks import UNIT_TOLERANCE, as_float, check_real, float_dtype, off_unit
from .._files import write_bytes
from ..errors import FileFormatError, InputError
from ..pose import Motion
from ..skeleton import Skeleton

__all__ = ["KEYS", "UNIT_TOLERANCE", "Targets", "read_targets", "targets_from_motion",
           "write_targets"]  # fmt: skip

KEYS = ("names", "positions", "rotations", "fps")
"""The arrays of a targets file, in the order they are checked."""


_FIELDS = {"names": "names", "positions": "positions_world", "rotations": "rotations_world",
           "fps": "fps"}  # fmt: skip
"""The names errors give the parts of a :class:`Targets` built in Python (its fields)."""
_FILE_KEYS = {k: k for k in KEYS}
"""... and those of a file (its keys)."""


@dataclass(frozen=True, eq=False)
class Targets:
    """Per-frame world goals on named joints, as a targets file holds them.

    Attributes:
        names: ``J`` joint names, unique.
        positions_world: ``(F, J, 3)`` world positions, rows of NaN where no goal.
        rotations_world: ``(F, J, 4)`` world rotations ``x, y, z, w``, rows of NaN where no
            goal.
        fps: frames per second, > 0.

    float32 arrays stay float32 (both must be), anything else becomes float64.

    Raises:
        InputError: a rule of the format broken (module docstring); the message names the
            field and, for values, the first frame and joint at fault.

    Example:
        >>> import numpy as np
        >>> p = np.full((2, 1, 3), np.nan); p[1, 0] = (0.0, 1.0, 0.0)
        >>> t = Targets(("Head",), p, np.full((2, 1, 4), np.nan), fps=30)
        >>> t.num_frames, t.num_joints, t.has_position.tolist()
        (2, 1, [[False], [True]])
    """

    names: tuple[str, ...]
    positions_world: np.ndarray
    rotations_world: np.ndarray
    fps: float

    def __post_init__(self):
        checked = _validate(
            self.names, self.positions_world, self.rotations_world, self.fps, _FIELDS
        )
        for name, value in zip(("names", "positions_world", "rotations_world", "fps"), checked):
            object.__setattr__(self, name, value)

    @property
    def num_frames(self) -> int:
        """Frames ``F``."""
        return int(self.positions_world.shape[0])

    @property
    def num_joints(self) -> int:
        """Joints named ``J``."""
        return len(self.names)

    @property
    def frame_time(self) -> float:
        """Seconds per frame, ``1 / fps``."""
        return 1.0 / self.fps

    @property
    def has_position(self) -> np.ndarray:
        """``(F, J)`` bool: the joint has a position goal that frame."""
        return ~np.isnan(self.positions_world[..., 0])

    @property
    def has_rotation(self) -> np.ndarray:
        """``(F, J)`` bool: the joint has a rotation goal that frame."""
        return ~np.isnan(self.rotations_world[..., 0])

    def on_skeleton(self, skeleton: Skeleton) -> Targets:
        """These targets in ``skeleton``'s joint order: ``names`` become the skeleton's, the
        arrays ``(F, J_skeleton, ...)``, rows of NaN for the joints not named.

        Raises:
            InputError: names that are no joint of the skeleton (all of them listed).

        Example:
            >>> import numpy as np
            >>> sk = Skeleton(("hip", "knee", "ankle"), [-1, 0, 1], np.eye(3))
            >>> t = Targets(("ankle",), np.ones((4, 1, 3)), np.full((4, 1, 4), np.nan), 30)
            >>> t.on_skeleton(sk).has_position[0].tolist()
            [False, False, True]
        """
        where = {name: j for j, name in enumerate(skeleton.names)}
        unknown = [n for n in self.names if n not in where]
        if unknown:
            listed = ", ".join(map(repr, unknown))
            raise InputError(
                f"names: {len(unknown)} not joints of the skeleton ({skeleton.num_joints}"
                f" joints): {listed}"
            )
        cols = np.array([where[n] for n in self.names], dtype=np.int64)
        F, J, dt = self.num_frames, skeleton.num_joints, self.positions_world.dtype
        pos = np.full((F, J, 3), np.nan, dtype=dt)
        rot = np.full((F, J, 4), np.nan, dtype=dt)
        pos[:, cols] = self.positions_world
        rot[:, cols] = self.rotations_world
        return Targets(skeleton.names, pos, rot, self.fps)


def _names(value, label: str) -> tuple[str, ...]:
    """``value`` as a tuple of unique, non-empty joint names."""
    if isinstance(value, str):
        raise InputError(f"{label}: expected a sequence of joint names, got one string")
    try:
        a = np.asarray(value)
    except Exception:  # ragged nesting and the like
        raise InputError(f"{label}: expected a sequence of joint names") from None
    if a.ndim != 1 or a.size == 0:
        raise InputError(f"{label}: expected shape (J,) with J >= 1 names, got {a.shape}")
    if a.dtype.kind == "S":
        try:
            a = np.char.decode(a, "utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{label}: names are not UTF-8 text") from None
    if a.dtype.kind not in "UO" or not all(isinstance(n, str) for n in a.tolist()):
        raise InputError(f"{label}: expected strings, got dtype {a.dtype}")
    names = tuple(str(n) for n in a.tolist())
    seen: set[str] = set()
    for j, n in enumerate(names):
        if not n.strip():
            raise InputError(f"{label}: name {j} is empty")
        if n in seen:
            raise InputError(f"{label}: {n!r} appears twice")
        seen.add(n)
    return names


def _rows(a: np.ndarray, label: str, names: tuple[str, ...]) -> np.ndarray:
    """``(F, J)`` bool, True where the row is all NaN; InputError for infinities and rows
    partly NaN, naming the first frame and joint."""
    nan = np.isnan(a)
    empty = nan.all(axis=-1)
    for bad, what in (
        (np.isinf(a).any(axis=-1), "an infinite value"),
        (nan.any(axis=-1) & ~empty, "a row partly NaN (a row is all numbers, or all NaN: no goal)"),
    ):
        if bad.any():
            f, j = np.argwhere(bad)[0]
            raise InputError(f"{label}: {what} at frame {f}, joint {names[j]!r}")
    return empty


def _validate(
    names, positions, rotations, fps, labels: Mapping[str, str]
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, float]:
    """The one check of the format (module docstring): the checked ``(names, positions,
    rotations, fps)``, else InputError whose message starts with ``labels[key]``."""
    names = _names(names, labels["names"])
    J = len(names)
    arrays = []
    for key, last in (("positions", 3), ("rotations", 4)):
        a = as_float(positions if key == "positions" else rotations, labels[key], finite=False)
        if a.ndim != 3 or a.shape[1:] != (J, last):
            raise InputError(
                f"{labels[key]}: expected shape (F, {J}, {last}) for {J} names, got {a.shape}"
            )
        arrays.append(a)
    pos, rot = arrays
    if pos.shape[0] != rot.shape[0]:
        raise InputError(
            f"{labels['positions']} and {labels['rotations']}: frame counts differ"
            f" ({pos.shape[0]} and {rot.shape[0]})"
        )
    dt = float_dtype(pos, rot)
    pos, rot = pos.astype(dt, copy=False), rot.astype(dt, copy=False)
    _rows(pos, labels["positions"], names)
    no_rotation = _rows(rot, labels["rotations"], names)
    off = ~no_rotation & off_unit(rot)
    if off.any():
        length = np.linalg.norm(rot.astype(np.float64), axis=-1)
        f, j = np.argwhere(off)[0]
        raise InputError(
            f"{labels['rotations']}: not a unit quaternion at frame {f}, joint {names[j]!r}"
            f" (length {length[f, j]:.6g}; allowed 1 +- {UNIT_TOLERANCE:g})"
        )
    return names, pos, rot, _fps(fps, labels["fps"])


def _fps(value, label: str) -> float:
    if isinstance(value, np.ndarray):
        if value.shape != ():
            raise InputError(f"{label}: expected a scalar, got shape {value.shape}")
        value = value[()]
    return check_real(value, label, 0.0, np.inf, open_low=True)


def read_targets(path: str | os.PathLike[str], skeleton: Skeleton | None = None) -> Targets:
    """Read a targets file (format in the module docstring).

    Args:
        path: the ``.npz`` file (read without pickle).
        skeleton: if given, the targets come back in its joint order
            (:meth:`Targets.on_skeleton`): ``(F, J_skeleton, ...)`` arrays, NaN rows for the
            joints the file does not name.

    Returns:
        The checked :class:`Targets`; float32 arrays stay float32.

    Raises:
        FileFormatError: not an npz archive, a key missing or unreadable, a rule of the
            format broken, or names that are no joint of ``skeleton`` (listed); one line
            naming the file and the key.
        OSError: the file cannot be read.

    Example:
        >>> import tempfile, pathlib, numpy as np
        >>> out = pathlib.Path(tempfile.mkdtemp()) / "t.npz"
        >>> np.savez(out, names=["Head"], positions=np.zeros((3, 1, 3)),
        ...          rotations=np.full((3, 1, 4), np.nan), fps=30.0)
        >>> read_targets(out).positions_world.shape
        (3, 1, 3)
    """
    arrays = _load(path)
    try:
        names, pos, rot, fps = _validate(
            arrays["names"], arrays["positions"], arrays["rotations"], arrays["fps"], _FILE_KEYS
        )
        targets = Targets(names, pos, rot, fps)
        return targets if skeleton is None else targets.on_skeleton(skeleton)
    except InputError as exc:
        raise FileFormatError(path, None, str(exc)) from None


def _load(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The arrays of :data:`KEYS` in the archive at ``path``."""
    data = Path(os.fspath(path)).read_bytes()
    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile):
        raise FileFormatError(path, None, "not an .npz archive (expected np.savez)") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise FileFormatError(path, None, "a single .npy array, not an .npz archive")
    out = {}
    with archive:
        for key in KEYS:
            if key not in archive.files:
                has = ", ".join(archive.files) or "none"
                raise FileFormatError(path, None, f"{key}: missing (the archive has: {has})")
            try:
                out[key] = archive[key]
            except ValueError as exc:
                why = "an object array, which needs pickle" if "pickle" in str(exc) else exc
                raise FileFormatError(path, None, f"{key}: cannot be read ({why})") from None
            except (OSError, EOFError, zipfile.BadZipFile) as exc:
                raise FileFormatError(path, None, f"{key}: cannot be read ({exc})") from None
    return out


def write_targets(path: str | os.PathLike[str], targets: Targets) -> Path:
    """Write ``targets`` to ``path`` as a compressed ``.npz`` archive, atomically (a
    temporary file beside ``path`` replaces it in one step; see :mod:`ikrig._files`); the
    name is used as given (no ``.npz`` is appended). Returns the path.

    Raises:
        InputError: ``targets`` is no :class:`Targets`.
        OSError: the file cannot be written.

    Example:
        >>> import tempfile, pathlib, numpy as np
        >>> t = Targets(("a", "b"), np.zeros((2, 2, 3)), np.full((2, 2, 4), np.nan), 24.0)
        >>> out = write_targets(pathlib.Path(tempfile.mkdtemp()) / "t.npz", t)
        >>> read_targets(out).names
        ('a', 'b')
    """
    if not isinstance(targets, Targets):
        raise InputError(f"targets: expected Targets, got {type(targets).__name__}")
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        names=np.array(targets.names, dtype=str),
        positions=targets.positions_world,
        rotations=targets.rotations_world,
        fps=np.float64(targets.fps),
    )
    return write_bytes(path, buf.getvalue())


def targets_from_motion(
    motion: Motion,
    joints: Sequence[str | int] | None = None,
    rotations_for: Sequence[str | int] = (),
    fps: float | None = None,
) -> Targets:
    """The targets of a clip by forward kinematics: what ``ikrig fit`` should give back.

    Args:
        motion: a clip, batch shape ``(F,)`` (or ``()``: one frame).
        joints: the joints (names or indices) given a position goal on every frame; None:
            all of them, ``()``: none.
        rotations_for: the joints given a rotation goal (their FK world rotation).
        fps: frames per second; default ``1 / motion.frame_time``.

    Returns:
        :class:`Targets` naming every joint of the skeleton in its order, NaN rows for the
        joints without a goal; the motion's dtype.

    Raises:
        InputError: a batch shape with more than one axis, an unknown joint, or no ``fps``
            for a motion without a frame time.

    Example:
        >>> from ikrig.data.humanoid import humanoid_skeleton
        >>> clip = Motion.rest(humanoid_skeleton(), batch_shape=(5,), frame_time=1 / 30)
        >>> t = targets_from_motion(clip, joints=("Head",), rotations_for=("Head",))
        >>> int(t.has_position.sum()), int(t.has_rotation.sum()), t.fps
        (5, 5, 30.0)
    """
    if not isinstance(motion, Motion):
        raise InputError(f"motion: expected Motion, got {type(motion).__name__}")
    if len(motion.batch_shape) > 1:
        raise InputError(f"motion: expected a clip of batch shape (F,), got {motion.batch_shape}")
    if fps is None:
        if motion.frame_time is None:
            raise InputError("fps: the motion has no frame_time; give fps")
        fps = 1.0 / motion.frame_time
    sk = motion.skeleton
    rot_w, pos_w = motion.fk()
    if not motion.batch_shape:  # one pose: one frame
        rot_w, pos_w = rot_w[None], pos_w[None]
    J = sk.num_joints
    keep_pos = np.zeros(J, dtype=bool)
    keep_pos[list(range(J) if joints is None else sk.indices(joints))] = True
    keep_rot = np.zeros(J, dtype=bool)
    keep_rot[list(sk.indices(rotations_for))] = True
    pos = np.where(keep_pos[:, None], pos_w, np.nan).astype(motion.dtype, copy=False)
    rot = np.where(keep_rot[:, None], rot_w, np.nan).astype(motion.dtype, copy=False)
    return Targets(sk.names, pos, rot, fps)
