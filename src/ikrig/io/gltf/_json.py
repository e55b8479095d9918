"""glTF JSON into pygltflib's classes, fast: the same objects ``GLTF2.from_json`` builds.

pygltflib decodes its JSON with dataclasses-json, which looks up every field's type hints
again for each of the document's objects: about 0.15 ms per object, so a game character
with 3,300 accessors, nodes and channels took half a second to a second to open, and more
to write (the writer re-reads what it built). Here each class's decoding plan (field,
default and how to decode its value) is worked out once from the same type hints, and a
document is decoded in one pass over the parsed JSON.

The result equals dataclasses-json's, value for value and type for type (tested on every
shared glTF file and on edge cases): missing fields take their dataclass defaults (or
None, as ``infer_missing`` does), unknown keys are dropped, a number is converted to its
field's type (``1`` in a ``float`` field becomes ``1.0``), ``Dict[str, Any]`` values
(extensions, extras) are kept as parsed, and a primitive's ``attributes`` become
``pygltflib.Attributes`` while morph ``targets`` stay dicts, as pygltflib leaves them.
Containers (GLB chunks, ``.gltf`` files) are still read by pygltflib itself:
:func:`gltf2_class` gives a subclass of ``GLTF2`` whose ``load`` and ``gltf_from_json``
decode this way and return plain ``GLTF2`` documents.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["decode_document", "gltf2_class"]

Decode = Callable[[Any], Any]

_PRIMITIVES = (bool, int, float, str)


def _keep(value: Any) -> Any:
    return value


def _primitive(kind: type) -> Decode:
    def decode(value: Any) -> Any:
        return value if isinstance(value, kind) else kind(value)

    return decode


def _optional(inner: Decode) -> Decode:
    def decode(value: Any) -> Any:
        return None if value is None else inner(value)

    return decode


def _list(item: Decode) -> Decode:
    if item is _keep:
        return list

    def decode(value: Any) -> Any:
        return [item(v) for v in value]

    return decode


def _dict(item: Decode) -> Decode:
    if item is _keep:
        return dict

    def decode(value: Any) -> Any:
        return {k: item(v) for k, v in value.items()}

    return decode


def _value_decoder(hint: Any) -> Decode:
    """How a field hinted ``hint`` decodes its JSON value (dataclasses-json's rules)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return _optional(_value_decoder(rest[0]))
        return _keep
    if origin is list:
        return _list(_value_decoder(args[0]) if args else _keep)
    if origin is dict:
        return _dict(_value_decoder(args[1]) if len(args) == 2 else _keep)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _dataclass_decoder(hint)
    if hint in _PRIMITIVES:
        return _primitive(hint)
    return _keep  # Any, and pygltflib.Attributes (not a dataclass: see decode_document)


def _default(f: dataclasses.Field) -> Callable[[], Any]:
    """A missing field's value: its default, a fresh one from its factory, or None (as
    dataclasses-json's ``infer_missing``)."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory
    value = None if f.default is dataclasses.MISSING else f.default
    return lambda: value


@cache
def _dataclass_decoder(cls: type) -> Decode:
    hints = typing.get_type_hints(cls)
    plan: list[tuple[str, Decode, Callable[[], Any]]] = []  # (field, decode, its default)
    for f in dataclasses.fields(cls):
        if f.init:
            plan.append((f.name, _optional(_value_decoder(hints[f.name])), _default(f)))

    def decode(value: Any) -> Any:
        if not isinstance(value, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(value).__name__}")
        return cls(**{k: (dec(value[k]) if k in value else make()) for k, dec, make in plan})

    return decode


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is beyond float64")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not a JSON number")


def decode_document(pygltflib: Any, text: str | bytes) -> Any:
    """A ``pygltflib.GLTF2`` from glTF JSON text, equal to ``GLTF2.from_json(text,
    infer_missing=True)``; raises what ``json.loads`` or a malformed object raises, and
    ``ValueError`` for ``NaN``, ``Infinity`` or a number beyond float64 (not JSON: the
    writer could not write them back)."""
    data = json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    doc = _dataclass_decoder(pygltflib.GLTF2)(data)
    for mesh in doc.meshes or []:
        for primitive in mesh.primitives or []:
            if primitive.attributes:
                primitive.attributes = pygltflib.Attributes(**primitive.attributes)
    return doc


@cache
def gltf2_class(pygltflib: Any) -> Any:
    """A subclass of ``pygltflib.GLTF2`` whose class methods (``load``, ``load_binary``,
    ``load_json``, ``load_from_bytes``, ``gltf_from_json``) decode with
    :func:`decode_document`; the documents they return are plain ``GLTF2``."""

    class FastGLTF2(pygltflib.GLTF2):
        @classmethod
        def from_json(cls, s: str, *args: Any, **kwargs: Any) -> Any:
            return decode_document(pygltflib, s)

    return FastGLTF2
