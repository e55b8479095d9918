"""The ``HIERARCHY`` part of a BVH file: tokens and joint blocks (private to :mod:`ikrig.io.bvh`).

The text before ``MOTION`` is decoded (UTF-8, else Latin-1), split into tokens that keep their
line numbers, and parsed with an explicit stack of open joints (no recursion: any depth) into
a :class:`_Hierarchy` (joint names, parents, offsets, channel names in file order, depth
first; end sites in the order the writer puts them, each joint's after those of its
descendants, so that a round trip keeps their order) that gives the
:class:`~ikrig.skeleton.Skeleton`. Every problem is raised as a
:class:`~ikrig.errors.FileFormatError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple, cast

import numpy as np

from ...errors import FileFormatError
from ...skeleton import Skeleton
from ._channels import _CHANNEL_NAMES, _Channel, _channel, _rotation_problem

MAX_COORDINATE = 1e30  # largest |value| of an OFFSET or a position channel
_SHOWN_CHARACTERS = 40  # longest piece of the file quoted in a message


def _cut(text: str, limit: int = _SHOWN_CHARACTERS) -> str:
    """``text`` cut to ``limit`` characters (then ``...``), unquoted, for a message."""
    return text if len(text) <= limit else text[:limit] + "..."


def _shown(text: str | bytes, limit: int = _SHOWN_CHARACTERS) -> str:
    """A token, name or value of the file quoted for a message: ``repr``, at most ``limit``
    characters of it (then ``...``). Every message that quotes the file goes through this, so
    no message echoes a megabyte token."""
    whole = text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text
    cut = whole[:limit]
    while len(repr(cut)) > limit + 2:  # escapes (control characters) count too
        cut = cut[:-1]
    return repr(cut) + ("..." if len(cut) < len(whole) else "")


# --------------------------------------------------------------------------------------------
# Reading: the hierarchy
# --------------------------------------------------------------------------------------------


class _Token(NamedTuple):
    text: str
    line: int  # 1-based line number in the file


# a brace or a word; separators are ASCII whitespace only (as in the rows)
_TOKEN = re.compile(r"[{}]|[^\s{}]+", re.ASCII)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_COUNT = re.compile(r"[0-9]+\Z")
_BRACES = ("{", "}")


def _header_tokens(header: str) -> tuple[list[str], list[int]]:
    """Split the hierarchy text into tokens (braces are always tokens of their own): their
    texts and their 1-based line numbers, as two lists (no object per token: fast)."""
    texts, lines = [], []
    for number, line in enumerate(header.split("\n"), 1):
        words = _TOKEN.findall(line)
        if words:
            texts += words
            lines += [number] * len(words)
    return texts, lines


class _TokenStream:
    """A cursor over header tokens that reports problems as FileFormatError."""

    def __init__(self, tokens: tuple[list[str], list[int]], path, end_line: int, end_what: str):
        self.texts, self.lines = tokens
        self.position = 0
        self.path = path
        self.end_line = end_line  # where to report "found the end"
        self.end_what = end_what  # "MOTION" or "the end of the file"
        self.checked_channels: dict[tuple[str, ...], tuple[str, ...]] = {}  # valid lines

    def at_end(self) -> bool:
        return self.position >= len(self.texts)

    def next(self, expected: str) -> _Token:
        """The next token; at the end, raise ``expected <expected>, found <the end>``."""
        i = self.position
        if i >= len(self.texts):
            raise self.error(self.end_line, f"expected {expected}, found {self.end_what}")
        self.position = i + 1
        return _Token(self.texts[i], self.lines[i])

    def rest_of_line(self, line: int) -> list[str]:
        """Consume and return the texts of the tokens left on ``line``, up to a brace."""
        texts, lines, start = self.texts, self.lines, self.position
        end = start
        while end < len(texts) and lines[end] == line and texts[end] not in _BRACES:
            end += 1
        self.position = end
        return texts[start:end]

    def error(self, line: int | None, reason: str) -> FileFormatError:
        return FileFormatError(self.path, line, reason)


@dataclass
class _Hierarchy:
    """Joints (in file order, depth first) and end sites collected while parsing."""

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


class _OpenJoint(NamedTuple):
    """A joint block whose closing brace has not been read yet."""

    joint: int  # its index
    name: str
    opened_at: int  # line of its '{'
    seen: dict[str, int]  # OFFSET / CHANNELS -> line, to refuse a second one
    sites: list[tuple[float, float, float]]  # its End Site offsets, added when it closes


def _parse_hierarchy(stream: _TokenStream) -> _Hierarchy:
    """Parse ``HIERARCHY`` and its ``ROOT`` blocks (several roots are allowed).

    Joint blocks are parsed with an explicit stack of open joints, not by recursion, so a
    hierarchy of any depth parses (in time and memory linear in its size).
    """
    first = stream.next("'HIERARCHY'")
    if first.text.upper() != "HIERARCHY":
        raise stream.error(
            first.line, f"expected 'HIERARCHY' to start the file, found {_shown(first.text)}"
        )
    hierarchy = _Hierarchy()
    open_joints: list[_OpenJoint] = []
    last_close = None
    while open_joints or not stream.at_end():
        if not open_joints:
            token = stream.next("ROOT")
            if token.text.upper() == "ROOT":
                open_joints.append(_open_joint(stream, hierarchy, -1, token))
            elif token.text == "}":
                raise stream.error(
                    token.line, "unexpected '}': more closing braces than opening ones"
                )
            else:
                raise stream.error(token.line, _unexpected_at_top(token, last_close))
            continue
        joint = open_joints[-1]
        if stream.at_end():
            raise stream.error(
                stream.end_line,
                f"expected '}}' closing joint {_shown(joint.name)} (opened at line"
                f" {joint.opened_at}), found {stream.end_what}",
            )
        token = stream.next("")
        word = token.text.upper()
        if token.text == "}":
            if "OFFSET" not in joint.seen:
                raise stream.error(
                    joint.opened_at, f"joint {_shown(joint.name)} has no OFFSET line"
                )
            open_joints.pop()
            hierarchy.site_parents += [joint.joint] * len(joint.sites)
            hierarchy.site_offsets += joint.sites
            last_close = token.line
            continue
        if word in joint.seen and word in ("OFFSET", "CHANNELS"):
            raise stream.error(
                token.line,
                f"joint {_shown(joint.name)} has a second {word} line (first at line"
                f" {joint.seen[word]})",
            )
        joint.seen.setdefault(word, token.line)
        if word == "OFFSET":
            hierarchy.offsets[joint.joint] = _parse_offset(stream, token)
        elif word == "CHANNELS":
            hierarchy.channels[joint.joint] = _parse_channels(stream, token, joint.name)
        elif word == "JOINT":
            open_joints.append(_open_joint(stream, hierarchy, joint.joint, token))
        elif word == "END":
            joint.sites.append(_parse_end_site(stream, token))
        else:
            raise stream.error(token.line, _unexpected_in_joint(token, joint.name, joint.opened_at))
    if not hierarchy.names:
        raise stream.error(stream.end_line, "expected ROOT: the hierarchy has no joints")
    return hierarchy


def _unexpected_at_top(token: _Token, last_close: int | None) -> str:
    """The message for a token other than ROOT or MOTION after a root's block."""
    hint = ""
    if last_close is not None and token.text.upper() in ("JOINT", "OFFSET", "CHANNELS"):
        hint = f" (did an extra '}}' at line {last_close} close the root early?)"
    return f"expected ROOT or MOTION, found {_shown(token.text)}{hint}"


def _open_joint(
    stream: _TokenStream, hierarchy: _Hierarchy, parent: int, keyword: _Token
) -> _OpenJoint:
    """Read a ``ROOT``/``JOINT`` line and its ``{``; add the joint; return it as open."""
    name = _joint_name(stream, keyword)
    if name in hierarchy.defined_at:
        raise stream.error(
            keyword.line,
            f"duplicate joint name {_shown(name)} (first defined at line"
            f" {hierarchy.defined_at[name]})",
        )
    j = hierarchy.add_joint(name, parent, keyword.line)
    opening = _expect_open_brace(stream, f"after {keyword.text.upper()} {_cut(name)}")
    return _OpenJoint(j, name, opening.line, {}, [])


def _unexpected_in_joint(token: _Token, name: str, opened_at: int) -> str:
    """The message for a token that cannot appear inside a joint block."""
    if token.text.upper() == "ROOT":
        return (
            f"expected '}}' closing joint {_shown(name)} (opened at line {opened_at}) before ROOT"
        )
    return (
        f"unexpected {_shown(token.text)} in joint {_shown(name)}: expected OFFSET, CHANNELS,"
        " JOINT,"
        " End Site or '}'"
    )


def _joint_name(stream: _TokenStream, keyword: _Token) -> str:
    """The joint name: every token after the keyword on its line, up to a brace."""
    parts = stream.rest_of_line(keyword.line)
    if not parts:
        raise stream.error(keyword.line, f"expected a joint name after {keyword.text}")
    return " ".join(parts)


def _expect_open_brace(stream: _TokenStream, context: str) -> _Token:
    token = stream.next(f"'{{' {context}")
    if token.text != "{":
        raise stream.error(token.line, f"expected '{{' {context}, found {_shown(token.text)}")
    return token


def _parse_offset(stream: _TokenStream, keyword: _Token) -> tuple[float, float, float]:
    """The three numbers following ``OFFSET`` on its line."""
    values = stream.rest_of_line(keyword.line)
    if len(values) != 3:
        raise stream.error(keyword.line, f"expected 3 numbers after OFFSET, found {len(values)}")
    x, y, z = (_header_number(stream, text, keyword.line, "OFFSET") for text in values)
    return x, y, z


def _header_number(stream: _TokenStream, text: str, line: int, what: str) -> float:
    """A number of the hierarchy, at most :data:`MAX_COORDINATE` in magnitude."""
    if not _NUMBER.match(text):
        raise stream.error(line, f"expected a number in {what}, found {_shown(text)}")
    value = float(text)
    if not abs(value) <= MAX_COORDINATE:
        raise stream.error(line, f"{what} value {_shown(text)} is out of range (|x| <= 1e30)")
    return value


def _parse_channels(stream: _TokenStream, keyword: _Token, joint: str) -> tuple[str, ...]:
    """The channel names of a ``CHANNELS <count> <names...>`` line, checked.

    Refused as well as unknown names: a position axis listed twice, and rotation channels
    that the writer could not write back as Euler angles (more than three, or two
    neighbours about the same axis, see :func:`~ikrig.io.bvh._channels._rotation_problem`).
    """
    rest = stream.rest_of_line(keyword.line)
    checked = stream.checked_channels.get(tuple(rest))
    if checked is not None:  # the same few CHANNELS lines repeat over the joints
        return checked
    if not rest or not _COUNT.match(rest[0]):
        found = _shown(rest[0]) if rest else "nothing"
        raise stream.error(
            keyword.line, f"expected the channel count after CHANNELS, found {found}"
        )
    count, names = rest[0], rest[1:]
    if len(count) > 9 or int(count) != len(names):
        raise stream.error(
            keyword.line, f"CHANNELS says {_cut(count)} channels but lists {len(names)} names"
        )
    found_kinds = [_channel(name) for name in names]
    if None in found_kinds:
        unknown = names[found_kinds.index(None)]
        raise stream.error(
            keyword.line, f"unknown channel {_shown(unknown)}; expected {_CHANNEL_NAMES}"
        )
    kinds = cast("list[_Channel]", found_kinds)
    positions = [channel.axis for channel in kinds if channel.kind == "position"]
    if len(set(positions)) != len(positions):
        raise stream.error(keyword.line, "a position channel is listed twice")
    axes = tuple(channel.axis for channel in kinds if channel.kind == "rotation")
    problem = _rotation_problem(axes)
    if problem:
        raise stream.error(keyword.line, f"joint {_shown(joint)}: {problem}")
    stream.checked_channels[tuple(rest)] = tuple(names)
    return tuple(names)


def _parse_end_site(stream: _TokenStream, keyword: _Token) -> tuple[float, float, float]:
    """Parse an ``End Site { OFFSET x y z }`` block after its ``End`` keyword; its offset."""
    rest = stream.rest_of_line(keyword.line)
    if not rest or rest[0].upper() != "SITE":
        raise stream.error(keyword.line, "expected 'End Site'")
    opening = _expect_open_brace(stream, "after End Site")
    offset = None
    while (
        token := stream.next(f"'}}' closing End Site (opened at line {opening.line})")
    ).text != "}":
        if token.text.upper() != "OFFSET" or offset is not None:
            raise stream.error(
                token.line, f"expected one OFFSET in End Site, found {_shown(token.text)}"
            )
        offset = _parse_offset(stream, token)
    if offset is None:
        raise stream.error(opening.line, "End Site has no OFFSET line")
    return offset


def _decode(data: bytes) -> str:
    """Text of the hierarchy: UTF-8 when valid, else Latin-1 (which never fails)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
