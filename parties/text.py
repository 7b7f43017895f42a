"""How a party quotes what others said: whatever the coordinator or another party can put into a party's log
line or error message is escaped first, so that it cannot move the cursor, recolour or clear a terminal (ANSI
escape sequences), forge a line of its own (a newline) or hide text (a carriage return, bidirectional
controls)."""

from __future__ import annotations

#: Longest text quoted from a message in one line of a party's log or error.
QUOTED_CHARS = 2000


def escaped(text: str, limit: int = QUOTED_CHARS) -> str:
    """``text`` with every character that is not printable (control characters, ESC, newlines, the C1 range,
    bidirectional and other format characters) written as its Python escape (``\\x1b``, ``\\n``, ``\\u202e``),
    cut to ``limit`` characters, saying so."""
    text = str(text)
    out = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:limit])
    return out if len(text) <= limit else f"{out}... ({len(text)} characters)"
