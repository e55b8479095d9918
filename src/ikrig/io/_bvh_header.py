"""The ``HIERARCHY`` part of a BVH file: tokens and joint blocks (private to :mod:`ikrig.io.bvh`).

The text before ``MOTION`` is decoded (UTF-8, else Latin-1), split into tokens that keep their
line numbers, and parsed by recursive descent into a :class:`_Hierarchy` (joint names,
parents, offsets, channel names and end sites in file order, depth first) that gives the
:class:`~ikrig.skeleton.Skeleton`. Every problem is raised as a
:class:`~ikrig.errors.FileFormatError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..errors import FileFormatError
from ..skeleton import Skeleton
from ._bvh_channels import _CHANNEL_NAMES, _channel

# --------------------------------------------------------------------------------------------
# Reading: the hierarchy
# --------------------------------------------------------------------------------------------


class _Token(NamedTuple):
    text: str
    line: int  # 1-based line number in the file


_TOKEN = re.compile(r"[{}]|[^\s{}]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_COUNT = re.compile(r"[0-9]+\Z")
_BRACES = ("{", "}")


def _header_tokens(header: str) -> list[_Token]:
    """Split the hierarchy text into tokens (braces are always tokens of their own)."""
    return [
        _Token(match.group(), number)
        for number, line in enumerate(header.split("\n"), 1)
        for match in _TOKEN.finditer(line)
    ]


class _TokenStream:
    """A cursor over header tokens that reports problems as FileFormatError."""

    def __init__(self, tokens: list[_Token], path, end_line: int, end_what: str):
        self.tokens = tokens
        self.position = 0
        self.path = path
        self.end_line = end_line  # where to report "found the end"
        self.end_what = end_what  # "MOTION" or "the end of the file"

    def at_end(self) -> bool:
        return self.position >= len(self.tokens)

    def peek(self) -> _Token | None:
        return None if self.at_end() else self.tokens[self.position]

    def next(self, expected: str) -> _Token:
        """The next token; at the end, raise ``expected <expected>, found <the end>``."""
        if self.at_end():
            raise self.error(self.end_line, f"expected {expected}, found {self.end_what}")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def rest_of_line(self, line: int) -> list[_Token]:
        """Consume and return the tokens left on ``line``, stopping at a brace."""
        rest = []
        while (token := self.peek()) is not None and token.line == line:
            if token.text in _BRACES:
                break
            rest.append(self.next(""))
        return rest

    def error(self, line: int | None, reason: str) -> FileFormatError:
        return FileFormatError(self.path, line, reason)


@dataclass
class _Hierarchy:
    """Joints and end sites collected while parsing, in file (depth-first) order."""

    names: list[str] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    offsets: list[tuple[float, float, float]] = field(default_factory=list)
    channels: list[tuple[str, ...]] = field(default_factory=list)
    site_parents: list[int] = field(default_factory=list)
    site_offsets: list[tuple[float, float, float]] = field(default_factory=list)
    defined_at: dict[str, int] = field(default_factory=dict)  # name -> line

    def add_joint(self, name: str, parent: int, line: int) -> int:
        self.names.append(name)
        self.parents.append(parent)
        self.offsets.append((0.0, 0.0, 0.0))
        self.channels.append(())
        self.defined_at[name] = line
        return len(self.names) - 1

    def skeleton(self) -> Skeleton:
        return Skeleton(
            tuple(self.names),
            np.array(self.parents, dtype=np.int64),
            np.array(self.offsets, dtype=np.float64).reshape(-1, 3),
            np.array(self.site_parents, dtype=np.int64),
            np.array(self.site_offsets, dtype=np.float64).reshape(-1, 3),
        )


def _parse_hierarchy(stream: _TokenStream) -> _Hierarchy:
    """Parse ``HIERARCHY`` and its ``ROOT`` blocks (several roots are allowed)."""
    first = stream.next("'HIERARCHY'")
    if first.text.upper() != "HIERARCHY":
        raise stream.error(
            first.line, f"expected 'HIERARCHY' to start the file, found {first.text!r}"
        )
    hierarchy = _Hierarchy()
    last_close = None
    while not stream.at_end():
        token = stream.next("ROOT")
        if token.text.upper() == "ROOT":
            last_close = _parse_joint(stream, hierarchy, -1, token)
        elif token.text == "}":
            raise stream.error(token.line, "unexpected '}': more closing braces than opening ones")
        else:
            hint = ""
            if last_close is not None and token.text.upper() in ("JOINT", "OFFSET", "CHANNELS"):
                hint = f" (did an extra '}}' at line {last_close} close the root early?)"
            raise stream.error(token.line, f"expected ROOT or MOTION, found {token.text!r}{hint}")
    if not hierarchy.names:
        raise stream.error(stream.end_line, "expected ROOT: the hierarchy has no joints")
    return hierarchy


def _parse_joint(stream: _TokenStream, hierarchy: _Hierarchy, parent: int, keyword: _Token) -> int:
    """Parse a ``ROOT``/``JOINT`` block after its keyword; return the line of its ``}``."""
    name = _joint_name(stream, keyword)
    if name in hierarchy.defined_at:
        raise stream.error(
            keyword.line,
            f"duplicate joint name {name!r} (first defined at line {hierarchy.defined_at[name]})",
        )
    j = hierarchy.add_joint(name, parent, keyword.line)
    opening = _expect_open_brace(stream, f"after {keyword.text} {name}")
    seen: dict[str, int] = {}
    while True:
        token = stream.next(f"'}}' closing joint {name!r} (opened at line {opening.line})")
        word = token.text.upper()
        if token.text == "}":
            break
        if word in seen and word in ("OFFSET", "CHANNELS"):
            raise stream.error(
                token.line, f"joint {name!r} has a second {word} line (first at line {seen[word]})"
            )
        seen.setdefault(word, token.line)
        if word == "OFFSET":
            hierarchy.offsets[j] = _parse_offset(stream, token)
        elif word == "CHANNELS":
            hierarchy.channels[j] = _parse_channels(stream, token)
        elif word == "JOINT":
            _parse_joint(stream, hierarchy, j, token)
        elif word == "END":
            _parse_end_site(stream, hierarchy, j, token)
        else:
            raise stream.error(token.line, _unexpected_in_joint(token, name, opening.line))
    if "OFFSET" not in seen:
        raise stream.error(opening.line, f"joint {name!r} has no OFFSET line")
    return token.line


def _unexpected_in_joint(token: _Token, name: str, opened_at: int) -> str:
    """The message for a token that cannot appear inside a joint block."""
    if token.text.upper() == "ROOT":
        return f"expected '}}' closing joint {name!r} (opened at line {opened_at}) before ROOT"
    return (
        f"unexpected {token.text!r} in joint {name!r}: expected OFFSET, CHANNELS, JOINT,"
        " End Site or '}'"
    )


def _joint_name(stream: _TokenStream, keyword: _Token) -> str:
    """The joint name: every token after the keyword on its line, up to a brace."""
    parts = [token.text for token in stream.rest_of_line(keyword.line)]
    if not parts:
        raise stream.error(keyword.line, f"expected a joint name after {keyword.text}")
    return " ".join(parts)


def _expect_open_brace(stream: _TokenStream, context: str) -> _Token:
    token = stream.next(f"'{{' {context}")
    if token.text != "{":
        raise stream.error(token.line, f"expected '{{' {context}, found {token.text!r}")
    return token


def _parse_offset(stream: _TokenStream, keyword: _Token) -> tuple[float, float, float]:
    """The three numbers following ``OFFSET`` on its line."""
    values = stream.rest_of_line(keyword.line)
    if len(values) != 3:
        raise stream.error(keyword.line, f"expected 3 numbers after OFFSET, found {len(values)}")
    return tuple(_header_number(stream, token, "OFFSET") for token in values)


def _header_number(stream: _TokenStream, token: _Token, what: str) -> float:
    if not _NUMBER.match(token.text):
        raise stream.error(token.line, f"expected a number in {what}, found {token.text!r}")
    return float(token.text)


def _parse_channels(stream: _TokenStream, keyword: _Token) -> tuple[str, ...]:
    """The channel names of a ``CHANNELS <count> <names...>`` line, checked."""
    rest = stream.rest_of_line(keyword.line)
    if not rest or not _COUNT.match(rest[0].text):
        found = repr(rest[0].text) if rest else "nothing"
        raise stream.error(
            keyword.line, f"expected the channel count after CHANNELS, found {found}"
        )
    count, names = int(rest[0].text), [token.text for token in rest[1:]]
    if count != len(names):
        raise stream.error(
            keyword.line, f"CHANNELS says {count} channels but lists {len(names)} names"
        )
    for name in names:
        if _channel(name) is None:
            raise stream.error(keyword.line, f"unknown channel {name!r}; expected {_CHANNEL_NAMES}")
    positions = [_channel(name).axis for name in names if _channel(name).kind == "position"]
    if len(set(positions)) != len(positions):
        raise stream.error(keyword.line, "a position channel is listed twice")
    return tuple(names)


def _parse_end_site(stream: _TokenStream, hierarchy: _Hierarchy, parent: int, keyword: _Token):
    """Parse an ``End Site { OFFSET x y z }`` block after its ``End`` keyword."""
    rest = stream.rest_of_line(keyword.line)
    if not rest or rest[0].text.upper() != "SITE":
        raise stream.error(keyword.line, "expected 'End Site'")
    opening = _expect_open_brace(stream, "after End Site")
    offset = None
    while (
        token := stream.next(f"'}}' closing End Site (opened at line {opening.line})")
    ).text != "}":
        if token.text.upper() != "OFFSET" or offset is not None:
            raise stream.error(token.line, f"expected one OFFSET in End Site, found {token.text!r}")
        offset = _parse_offset(stream, token)
    if offset is None:
        raise stream.error(opening.line, "End Site has no OFFSET line")
    hierarchy.site_parents.append(parent)
    hierarchy.site_offsets.append(offset)


def _decode(data: bytes) -> str:
    """Text of the hierarchy: UTF-8 when valid, else Latin-1 (which never fails)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
