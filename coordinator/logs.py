"""The coordinator's log of refusals, rate-limited: an outsider opening thousands of streams writes a few lines.

Every line a refusal writes passes :class:`Quota`: per kind of refusal, at
most ``burst`` lines in each ``period`` seconds; past that the lines are
counted, and the next line written for that kind says how many were left
out. What a caller sent reaches the log escaped (coordinator.text.shown).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

#: Lines of one kind of refusal logged per period, and the period in seconds.
BURST, PERIOD = 10, 10.0


class Quota:
    """Rate-limited warnings of ``logger``, by kind; thread-safe."""

    def __init__(self, logger: logging.Logger, burst: int = BURST, period: float = PERIOD,
                 clock: Callable[[], float] = time.monotonic):
        self.logger, self.burst, self.period, self.clock = logger, burst, period, clock
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[float, int, int]] = {}  # kind -> (window start, lines logged, left out)

    def warning(self, kind: str, message: str, *args: object) -> bool:
        """Log ``message % args`` as a warning unless ``kind`` has had ``burst`` lines this period; whether it did."""
        now = self.clock()
        with self._lock:
            start, logged, left_out = self._windows.get(kind, (now, 0, 0))
            if now - start >= self.period:
                start, logged = now, 0
            if logged >= self.burst:
                self._windows[kind] = (start, logged, left_out + 1)
                return False
            self._windows[kind] = (start, logged + 1, 0)
        if left_out:
            message += f" (and {left_out} more like it left out of the log)"
        self.logger.warning(message, *args)
        return True
