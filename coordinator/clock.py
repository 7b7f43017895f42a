"""Time as the coordinator reads it: now, and a call later. Injectable, so deadlines can be tested without waiting.

A session reads the time and schedules its deadline (and the cut-off of an
upload after the session failed) through a :class:`Clock`. The default,
:data:`REAL`, is the monotonic clock and ``threading.Timer``; tests give a
:class:`ManualClock` and move it forward with ``advance``, which runs what
fell due at once, in the calling thread.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from typing import Protocol


class Scheduled(Protocol):
    """A call scheduled for later; ``cancel`` stops it if it has not run."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Seconds that only go forward, and calls scheduled on them."""

    def now(self) -> float: ...

    def call_later(self, delay: float, fn: Callable[[], None]) -> Scheduled: ...


class RealClock:
    """``time.monotonic`` and a daemon ``threading.Timer`` per call."""

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, fn: Callable[[], None]) -> Scheduled:
        timer = threading.Timer(delay, fn)
        timer.daemon = True
        timer.start()
        return timer


#: The clock sessions use unless given another.
REAL: Clock = RealClock()


class _Call:
    def __init__(self, clock: ManualClock, due: float, fn: Callable[[], None]):
        self.clock, self.due, self.fn, self.cancelled = clock, due, fn, False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock that moves only when told (tests): ``advance(seconds)`` runs every call due by then, in order."""

    def __init__(self, start: float = 0.0):
        self._now = start
        self._lock = threading.Lock()
        self._due: list[tuple[float, int, _Call]] = []
        self._order = itertools.count()

    def now(self) -> float:
        with self._lock:
            return self._now

    def call_later(self, delay: float, fn: Callable[[], None]) -> Scheduled:
        with self._lock:
            call = _Call(self, self._now + max(delay, 0.0), fn)
            heapq.heappush(self._due, (call.due, next(self._order), call))
            return call

    @property
    def pending(self) -> int:
        """Calls scheduled and neither run nor cancelled."""
        with self._lock:
            return sum(not c.cancelled for _, _, c in self._due)

    def advance(self, seconds: float) -> None:
        """Move the time forward by ``seconds``, running each call that falls due (at its own time)."""
        with self._lock:
            end = self._now + seconds
        while True:
            with self._lock:
                if not self._due or self._due[0][0] > end:
                    self._now = end
                    return
                due, _, call = heapq.heappop(self._due)
                self._now = max(self._now, due)
            if not call.cancelled:
                call.fn()
