"""Text for the terminal: names read from files printed safely."""

from __future__ import annotations

__all__ = ["printable"]


def printable(text: str) -> str:
    """``text`` with control and format characters escaped (``\x1b`` as ``\\x1b``), so that
    names read from a file cannot drive the terminal (set its title, clear it, reorder
    text); newlines too, so that a message stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
