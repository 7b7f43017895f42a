"""When ``ppc party`` calls the coordinator again: one policy that every retried call of a party goes through.

Three failures are worth another try (docs/protocol.md, "Retrying and joining
again"); every other error is raised at once:

- the connection dropped (``UNAVAILABLE``): tried again ``RETRIES`` times,
  after ``BACKOFF``, then twice and four times as long;
- ``Join`` refused with ``FAILED_PRECONDITION`` because an earlier upload of
  this party is still being read (a party process that died mid-upload and
  was started again before the coordinator saw its stream break): tried
  again every ``STILL_READING_WAIT`` seconds, until the party's deadline;
- the coordinator is busy (``RESOURCE_EXHAUSTED`` saying ``BUSY``, or gRPC's
  own "Concurrent RPC limit exceeded"): the call was refused before it did
  anything, so it is tried again after ``BUSY_BACKOFF`` seconds, doubled each
  time up to ``BUSY_MAX_WAIT``, until the party's deadline.

No wait goes past the deadline: a try that could not start before it is not
made, and the last error is raised.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TypeVar

import grpc

from parties.text import escaped

#: Times a call is tried again after its connection dropped, and the first wait in seconds (doubled each time).
RETRIES, BACKOFF = 3, 1.0
#: Seconds between Joins while the coordinator still reads this party's earlier upload.
STILL_READING_WAIT = 2.0
#: What the coordinator's FAILED_PRECONDITION at Join says when an upload of the party is still being read.
STILL_READING = "is uploading to session"

#: What every refusal of the coordinator's call caps says (coordinator.limits.Calls): the server is busy.
BUSY = "server busy"
#: What gRPC's own cap on calls in flight (maximum_concurrent_rpcs) answers.
GRPC_BUSY = "Concurrent RPC limit exceeded"
#: First wait after a busy refusal, and the longest (seconds).
BUSY_BACKOFF, BUSY_MAX_WAIT = 0.25, 8.0

T = TypeVar("T")


def is_busy(exc: grpc.RpcError) -> bool:
    """Whether ``exc`` is a refusal because the coordinator is busy (a call cap), which a later try may pass."""
    code = exc.code() if hasattr(exc, "code") else None
    details = (exc.details() if hasattr(exc, "details") else "") or ""
    return code == grpc.StatusCode.RESOURCE_EXHAUSTED and (BUSY in details or GRPC_BUSY in details)


class Retry:
    """Calls for party ``name`` with retries; ``left()`` gives the seconds to its deadline, ``log`` hears each
    retry."""

    def __init__(self, name: str, left: Callable[[], float], log=sys.stderr, *, retries: int = RETRIES,
                 backoff: float = BACKOFF, sleep: Callable[[float], object] = time.sleep):
        self.name, self.left, self.log = name, left, log
        self.retries, self.backoff, self.sleep = retries, backoff, sleep

    def wait(self, what: str, exc: grpc.RpcError, dropped: int, busy: int = 0) -> float | None:
        """Seconds to wait before trying ``what`` again after ``exc`` (``dropped`` connections and ``busy``
        refusals so far); None: do not."""
        code = exc.code() if hasattr(exc, "code") else None
        if is_busy(exc):
            return min(BUSY_BACKOFF * 2**busy, BUSY_MAX_WAIT)
        if code == grpc.StatusCode.UNAVAILABLE and dropped < self.retries:
            return self.backoff * 2**dropped
        if code == grpc.StatusCode.FAILED_PRECONDITION and what == "Join" and STILL_READING in (exc.details() or ""):
            return STILL_READING_WAIT
        return None

    def __call__(self, what: str, call: Callable[[], T], again: Callable[[], object] | None = None) -> T:
        """``call()``, tried again as the policy says; ``again()`` runs before each new try (an Upload joins
        again first: the coordinator discarded the broken one)."""
        dropped = busy = 0
        while True:
            try:
                return call()
            except grpc.RpcError as exc:
                wait = self.wait(what, exc, dropped, busy)
                if wait is None or self.left() <= wait:
                    raise
                if is_busy(exc):
                    busy += 1
                    why = f"the coordinator is busy ({exc.details()}); trying again in {wait:g} s"
                elif exc.code() == grpc.StatusCode.UNAVAILABLE:
                    dropped += 1
                    why = f"connection lost ({exc.details()}); trying again in {wait:g} s (retry {dropped} of " \
                          f"{self.retries})"
                else:
                    why = (f"the coordinator still reads this party's earlier upload; trying again in {wait:g} s "
                           f"({self.left():.0f} s left)")
                print(f"party {self.name}: {what}: {escaped(why)}", file=self.log, flush=True)
                self.sleep(wait)
                if again is not None and not is_busy(exc):  # a busy refusal was made before the call did anything
                    again()
