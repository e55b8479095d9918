"""glTF animations and skins: choosing one by name or index, decoding its channels.

A channel animates one path (``translation``, ``rotation``, ``scale``, ``weights``) of one
node through a sampler (input key times, output values, interpolation). ``weights``
(morph targets) and channels without a node are not skeleton motion and are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import InputError
from ._records import Animation
from ._sample import INTERPOLATIONS
from ._spec import COMPONENTS
from .document import GltfDocument
from .uri import short_text

PATH_WIDTH = {"translation": 3, "rotation": 4, "scale": 3}


@dataclass(frozen=True)
class Channel:
    """One decoded TRS channel: ``keys (K,)``, ``values (K or 3K, width)``."""

    node: int
    path: str
    interpolation: str
    keys: np.ndarray
    values: np.ndarray


def _listing(names: list[str]) -> str:
    shown = ", ".join(f"{i} {short_text(n, 24)}" for i, n in enumerate(names[:5]))
    return shown + (f", ... ({len(names)} in all)" if len(names) > 5 else "")


def pick_animation(doc: GltfDocument, animation: str | int | None, where: str) -> int | None:
    """Index of the asked animation (``None``: the first, or ``None`` when there is none).

    Raises:
        InputError: no animations while one is asked for, or no animation of that name or
            index (the message lists the file's animations).
    """
    anims = doc.animations
    names = [a.label for a in anims]
    if animation is None:
        return 0 if anims else None
    if not anims:
        raise InputError(f"{where}: the file has no animations (asked for {short_text(animation)})")
    if isinstance(animation, (int, np.integer)) and not isinstance(animation, bool):
        if 0 <= int(animation) < len(anims):
            return int(animation)
    elif isinstance(animation, str):
        if animation in names:
            return names.index(animation)
        if animation.strip().isdigit() and int(animation) < len(anims):
            return int(animation)
    listing = _listing(names)
    raise InputError(
        f"{where}: no animation {short_text(animation)}; the file's animations: {listing}"
    )


def list_skins(doc: GltfDocument | Any) -> list[tuple[int, str, int]]:
    """The skins of a glTF document (a :class:`~ikrig.io.gltf.document.GltfDocument` or the
    ``pygltflib.GLTF2`` it wraps): ``(index, name, joint count)`` each; unnamed skins are
    listed as ``skin<index>`` (a name :func:`pick_skin` accepts)."""
    doc = doc if isinstance(doc, GltfDocument) else GltfDocument(doc)
    return [(s.index, s.label, len(s.joints)) for s in doc.skins]


def pick_skin(doc: GltfDocument, skin: str | int | None, where: str) -> tuple[int, str | None]:
    """``(index, quirk)`` of the asked skin (``None``: the one with the most joints; a
    string of digits is an index unless a skin has that name).

    Raises:
        InputError: the file has no skins, or no skin of that name or index.
    """
    skins = doc.skins
    if not skins:
        raise InputError(f"{where}: the file has no skins (ikrig reads skinned characters)")
    names = [name for _, name, _ in list_skins(doc)]
    sizes = [size for _, _, size in list_skins(doc)]
    if skin is None:
        i = int(np.argmax(sizes))
        quirk = None
        if len(skins) > 1:
            quirk = f"{len(skins)} skins; using skin {i} {short_text(names[i])} ({sizes[i]} joints)"
        return i, quirk
    if isinstance(skin, (int, np.integer)) and not isinstance(skin, bool):
        if 0 <= int(skin) < len(skins):
            return int(skin), None
    elif isinstance(skin, str) and skin in names:
        return names.index(skin), None
    elif isinstance(skin, str) and skin.strip().isdigit() and int(skin) < len(skins):
        return int(skin), None
    raise InputError(f"{where}: no skin {short_text(skin)}; the file's skins: {_listing(names)}")


def _check_output(doc: GltfDocument, index: int, path: str) -> None:
    if not 0 <= index < len(doc.accessors):
        raise doc.fail(f"accessor {index} does not exist")
    acc = doc.accessors[index]
    ctype, atype = acc.component_type, acc.type
    width = PATH_WIDTH[path]
    ok_type = atype == ("VEC4" if width == 4 else "VEC3")
    ok_comp = ctype == 5126 or (
        ctype in (5120, 5121, 5122, 5123) and (path != "rotation" or acc.normalized)
    )
    if not (ok_type and ok_comp and ctype in COMPONENTS):
        raise InputError(
            f"{doc.path}: accessor {index} ({atype}, componentType {ctype}) is not a supported"
            f" {path} output"
        )


def key_times(doc: GltfDocument, index: int, cache: dict[int, np.ndarray]) -> np.ndarray:
    """The ``(K,)`` key times of input accessor ``index``, checked (finite, increasing)."""
    if index in cache:
        return cache[index]
    if not 0 <= index < len(doc.accessors):
        raise doc.fail(f"accessor {index} does not exist")
    acc = doc.accessors[index]
    if acc.component_type != 5126 or acc.type != "SCALAR":
        raise InputError(f"{doc.path}: accessor {index} (animation input) must be float SCALAR")
    keys = doc.accessor(index)[:, 0]
    if len(keys) == 0:
        raise doc.fail(f"accessor {index}: animation input without keys")
    if not np.isfinite(keys).all() or (np.diff(keys) < 0).any():
        raise doc.fail(f"accessor {index}: animation key times must be finite and increasing")
    if keys[0] < 0:
        raise doc.fail(f"accessor {index}: negative animation key times (glTF times are >= 0)")
    cache[index] = keys
    return keys


def channels(doc: GltfDocument, anim_index: int) -> tuple[list[Channel], list[np.ndarray]]:
    """``(TRS channels, key times of every sampler used)`` of animation ``anim_index``.

    Raises:
        FileFormatError: a channel or sampler index out of range, output count not matching
            the keys, no channels at all.
        InputError: an unknown interpolation or an output accessor of an unsupported layout.
    """
    anim: Animation = doc.animations[anim_index]
    samplers = anim.samplers
    name = short_text(anim.label)
    nodes = len(doc.nodes)
    cache: dict[int, np.ndarray] = {}
    out, all_keys = [], []
    for c, ch in enumerate(anim.channels):
        si = ch.sampler
        if not isinstance(si, int) or not 0 <= si < len(samplers):
            raise doc.fail(f"animation {name} channel {c}: sampler {short_text(si)} does not exist")
        sampler = samplers[si]
        keys = key_times(doc, int(sampler.input), cache)
        all_keys.append(keys)
        node, path = ch.node, ch.path
        if node is None or path not in PATH_WIDTH:
            continue
        if not isinstance(node, int) or not 0 <= node < nodes:
            raise doc.fail(f"animation {name} channel {c}: node {short_text(node)} does not exist")
        interp = sampler.interpolation
        if interp not in INTERPOLATIONS:
            raise InputError(
                f"{doc.path}: animation {name} channel {c}: unsupported interpolation"
                f" {short_text(interp)}"
            )
        oi = int(sampler.output)
        _check_output(doc, oi, path)
        values = doc.accessor(oi)
        need = len(keys) * (3 if interp == "CUBICSPLINE" else 1)
        if len(values) != need:
            raise doc.fail(
                f"animation {name} channel {c}: {len(values)} output values for"
                f" {len(keys)} keys ({interp})"
            )
        if not np.isfinite(values).all():
            raise doc.fail(f"animation {name} channel {c}: NaN or infinite output values")
        out.append(Channel(node, path, interp, keys, values))
    if not all_keys:
        raise doc.fail(f"animation {name} has no channels")
    return out, all_keys


def animation_ranges(doc: GltfDocument) -> list[tuple[int, str, float, float]]:
    """``(index, name, first key, last key)`` of every animation."""
    out = []
    for anim in doc.animations:
        cache: dict[int, np.ndarray] = {}
        keys = [key_times(doc, int(s.input), cache) for s in anim.samplers]
        start = min((float(k[0]) for k in keys), default=0.0)
        end = max((float(k[-1]) for k in keys), default=0.0)
        out.append((anim.index, anim.label, start, end))
    return out
