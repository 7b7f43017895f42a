"""How the coordinator quotes what a client sent in its error messages: escaped, clipped, sized for people.

Every error the coordinator returns goes through these, so that a hostile
name cannot flood a trailer or a log, whichever module raises it.
"""

from __future__ import annotations

#: Longest client-supplied name quoted in an error message.
SHOWN_CHARS = 80
#: Most UTF-8 bytes of an error kept and sent back (gRPC refuses trailers over 16 KiB, percent-encoded).
ERROR_BYTES = 1024


def shown(name: str, limit: int = SHOWN_CHARS) -> str:
    """``name`` as quoted in an error: control characters escaped, at most ``limit`` characters of it."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in name[:limit])
    return text if len(name) <= limit else f"{text}... ({len(name)} characters)"


def clip(text: str, limit: int = ERROR_BYTES) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, saying so."""
    data = text.encode()
    if len(data) <= limit:
        return text
    return data[:limit].decode(errors="ignore") + f"... ({len(text)} characters)"


def size(n: int) -> str:
    """``n`` bytes for a person: "16 GiB", "1.5 MiB", "12 bytes"."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} bytes"
