"""glibc's malloc settings, for the few places that tune them: one wrapper of ``mallopt`` and ``malloc_trim``.

Each call does nothing, and says so by returning False, where the C library is
not glibc (no ``mallopt``). The parameter numbers are glibc's (malloc.h).
"""

from __future__ import annotations

import ctypes

#: mallopt's parameter numbers (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def _libc():
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt, libc.malloc_trim  # noqa: B018 - both must exist (glibc)
    except (OSError, AttributeError):
        return None
    return libc


def mallopt(param: int, value: int) -> bool:
    """glibc's ``mallopt(param, value)``; whether it was set (False where there is no glibc)."""
    libc = _libc()
    return libc is not None and libc.mallopt(param, value) == 1


def malloc_trim() -> bool:
    """glibc's ``malloc_trim(0)``: hand free memory at the heaps' tops and in their free pages back to the system;
    whether any was (False where there is no glibc)."""
    libc = _libc()
    return libc is not None and libc.malloc_trim(0) == 1
