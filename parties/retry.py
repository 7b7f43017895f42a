"""When ``ppc party`` calls the coordinator again: one policy that every retried call of a party goes through.

Two failures are worth another try (docs/protocol.md, "Retrying and joining
again"); every other error is raised at once:

- the connection dropped (``UNAVAILABLE``): tried again ``RETRIES`` times,
  after ``BACKOFF``, then twice and four times as long;
- ``Join`` refused with ``FAILED_PRECONDITION`` because an earlier upload of
  this party is still being read (a party process that died mid-upload and
  was started again before the coordinator saw its stream break): tried
  again every ``STILL_READING_WAIT`` seconds, until the party's deadline.

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

T = TypeVar("T")


class Retry:
    """Calls for party ``name`` with retries; ``left()`` gives the seconds to its deadline, ``log`` hears each
    retry."""

    def __init__(self, name: str, left: Callable[[], float], log=sys.stderr, *, retries: int = RETRIES,
                 backoff: float = BACKOFF, sleep: Callable[[float], object] = time.sleep):
        self.name, self.left, self.log = name, left, log
        self.retries, self.backoff, self.sleep = retries, backoff, sleep

    def wait(self, what: str, exc: grpc.RpcError, dropped: int) -> float | None:
        """Seconds to wait before trying ``what`` again after ``exc`` (``dropped`` connections so far); None:
        do not."""
        code = exc.code() if hasattr(exc, "code") else None
        if code == grpc.StatusCode.UNAVAILABLE and dropped < self.retries:
            return self.backoff * 2**dropped
        if code == grpc.StatusCode.FAILED_PRECONDITION and what == "Join" and STILL_READING in (exc.details() or ""):
            return STILL_READING_WAIT
        return None

    def __call__(self, what: str, call: Callable[[], T], again: Callable[[], object] | None = None) -> T:
        """``call()``, tried again as the policy says; ``again()`` runs before each new try (an Upload joins
        again first: the coordinator discarded the broken one)."""
        dropped = 0
        while True:
            try:
                return call()
            except grpc.RpcError as exc:
                wait = self.wait(what, exc, dropped)
                if wait is None or self.left() <= wait:
                    raise
                if exc.code() == grpc.StatusCode.UNAVAILABLE:
                    dropped += 1
                    why = f"connection lost ({exc.details()}); trying again in {wait:g} s (retry {dropped} of " \
                          f"{self.retries})"
                else:
                    why = (f"the coordinator still reads this party's earlier upload; trying again in {wait:g} s "
                           f"({self.left():.0f} s left)")
                print(f"party {self.name}: {what}: {escaped(why)}", file=self.log, flush=True)
                self.sleep(wait)
                if again is not None:
                    again()
