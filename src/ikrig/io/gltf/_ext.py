"""Extensions a glTF file requires (``extensionsRequired``) that ikrig does not know.

ikrig knows the extensions in :data:`~ikrig.io.gltf._wpack.HANDLED_EXTENSIONS`: it reads
what it needs of them (``KHR_mesh_quantization``: integer and normalized animation outputs)
and writes them back. An unknown required extension may change the meaning of whatever
carries it. Where it sits on something ikrig reads (nodes, skins, animations, accessors,
bufferViews, buffers), the file is refused in one line naming it; where it sits only on
things ikrig does not read (meshes, materials, textures, images, cameras, the scene, the
document), the file is read, the extension noted in ``quirks``, and the writer keeps it as
it was (its JSON unchanged, no accessor or bufferView dropped, see
:mod:`ikrig.io.gltf._wpack`). The meshopt extensions are refused earlier, by
:func:`~ikrig.io.gltf.check.check_document`.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ._records import field
from ._wpack import HANDLED_EXTENSIONS
from .document import GltfDocument
from .uri import short_text

READ_TABLES = ("nodes", "skins", "animations", "accessors", "bufferViews", "buffers")
"""The top-level arrays whose objects ikrig reads; an unknown required extension on one of
them (or inside an animation's samplers and channels, an accessor's sparse part) is
refused."""


def _carriers(obj: Any) -> list[Any]:
    """``obj`` and the objects nested in it that may carry extensions ikrig reads."""
    out = [obj]
    for key in ("samplers", "channels"):
        out += list(field(obj, key, []))
    out += [field(ch, "target") for ch in field(obj, "channels", [])]
    sparse = field(obj, "sparse")
    if sparse is not None:
        out += [sparse, field(sparse, "indices"), field(sparse, "values")]
    return [o for o in out if o is not None]


def unknown_required(doc: GltfDocument) -> list[str]:
    """Quirk lines on the unknown required extensions that touch nothing ikrig reads.

    Raises:
        InputError: one line naming the first unknown required extension found on
            something ikrig reads, and where.
    """
    unknown = [e for e in dict.fromkeys(doc.extensions_required) if e not in HANDLED_EXTENSIONS]
    if not unknown:
        return []
    for table in READ_TABLES:
        for i, item in enumerate(doc.table(table)):
            for obj in _carriers(item):
                found = [e for e in unknown if e in (field(obj, "extensions") or {})]
                if found:
                    raise InputError(
                        f"{doc.path}: requires extension {short_text(found[0])}, which ikrig does"
                        f" not know, on {table[:-1]} {i}; not read"
                    )
    return [
        f"requires extension {short_text(name)}, which ikrig does not know, on nothing ikrig"
        " reads; kept as it is"
        for name in unknown
    ]
