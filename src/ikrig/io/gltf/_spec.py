"""The glTF 2.0 numbers ikrig's reader, checker and writer share: component types,
components per accessor type, buffer targets and the GLB container's magic and chunk
types (one table each)."""

from __future__ import annotations

import numpy as np

COMPONENTS: dict[int, np.dtype] = {
    5120: np.dtype("<i1"),
    5121: np.dtype("<u1"),
    5122: np.dtype("<i2"),
    5123: np.dtype("<u2"),
    5125: np.dtype("<u4"),
    5126: np.dtype("<f4"),
}
"""glTF ``componentType`` -> little-endian NumPy dtype."""

NUM_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
"""glTF accessor ``type`` -> number of components per element."""

FLOAT = 5126
ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
GLB_MAGIC = b"glTF"
GLB_JSON = 0x4E4F534A
GLB_BIN = 0x004E4942
