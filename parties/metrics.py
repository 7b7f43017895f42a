"""What a process measures of itself: its peak resident memory, read the same way by a party, the coordinator
and the process that hosts them (the report's ``peak_rss`` and ``memory.coordinator_peak_rss``)."""

from __future__ import annotations

import sys


def peak_rss() -> int | None:
    """This process's peak resident memory so far, in bytes; None where it cannot be read (Windows).

    VmHWM, which starts afresh at exec: getrusage's ru_maxrss would instead
    carry over the launcher's peak from before the fork.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import resource  # Unix only: imported here so that a party also starts where it is missing
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere
