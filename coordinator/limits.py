"""What one caller, one session and the whole coordinator may take: calls in flight, waiting time, memory.

A shared coordinator serves parties it does not trust to behave: an outsider
that opens streams and sends nothing, a party that parks hundreds of waiting
calls, an upload whose few compressed bytes decode into gigabytes. Each of
them is bounded here, and refused with ``RESOURCE_EXHAUSTED`` (or
``DEADLINE_EXCEEDED`` for a stream that stays silent) by a message that names
the cap, so that no caller, party or session can starve another:

- :class:`Limits`, the numbers (set per coordinator: ``ppc coordinator``'s
  options, defaults below);
- :class:`Calls`, the calls in flight per party, per session and before a
  stream has named its session;
- :class:`Budget`, bytes as the coordinator stores them (decoded ids,
  arrays, the ledger), reserved before they are allocated, per session and
  for the whole coordinator, with the peak kept for the report.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from coordinator.errors import ResourceExhausted
from coordinator.text import shown, size
from parties.retry import BUSY

#: Bytes of ids an upload may store per record it announces (``n_ids`` x this is the upload's id budget), counted
#: as the coordinator stores them (``protos.ids.stored_bytes``: 8 an integer id, 16 a pseudonym, 16 a text id of
#: up to 15 UTF-8 bytes, and a longer one its bytes and 8 more, with a quarter for the buffer's growth). A few
#: thousand bytes of compressed text can decode into ids that take gigabytes; this bounds them by what the upload
#: declares, whatever the session's memory budget.
ID_BYTES_PER_RECORD = 256


def physical_memory() -> int:
    """Bytes of physical memory of this machine (8 GiB when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


@dataclass(frozen=True)
class Limits:
    """The coordinator's caps. Every one is answered as documented in docs/protocol.md ("Limits")."""

    #: Calls in flight that the coordinator admits on the whole server, every party's and GetStatus's together
    #: (streams that have not sent their first message and prove no party are counted apart, by
    #: ``anonymous_streams``). A waiting call is a coroutine, not a thread, so this can be large.
    server_calls: int = 4096
    #: Of ``server_calls``, the calls only GetStatus may take: however many calls the sessions' parties hold,
    #: this many status calls are still answered.
    reserve: int = 256
    #: Calls in flight of one party of one session (a party needs two or three at a time), counted from the
    #: moment the call is seen when its token or certificate proves the party (coordinator.gate).
    party_calls: int = 16
    #: Calls in flight of one session, all its parties together (GetStatus apart): a session's share of the
    #: server's calls, so that other sessions always find some.
    session_calls: int = 512
    #: Streams that have not yet sent their first message (so have named no session): outsiders cost this.
    anonymous_streams: int = 1024
    #: Seconds a stream may take to send its first message (its header), before DEADLINE_EXCEEDED.
    first_message_seconds: float = 10.0
    #: Seconds a stream may go without a message once it has started, before DEADLINE_EXCEEDED.
    idle_seconds: float = 60.0
    #: Threads that read uploads and round posts (a thread only while messages are being taken in). Each stream
    #: being taken in holds a message or two (about 3 MiB at the default chunk size) in gRPC and in the thread;
    #: the streams waiting for a thread hold only their HTTP/2 window. OSBR with 32 parties peaked at 348 MiB with
    #: 8 threads against 422 with 32 (``bench/osbr_memory.py --parties 4 32``), as fast: the sums take one
    #: chunk at a time and the matrix's columns are written at memory speed.
    stream_threads: int = 8

    @property
    def grpc_calls(self) -> int:
        """gRPC's own ``maximum_concurrent_rpcs``, the last line behind the caps above: the calls the coordinator
        admits, the anonymous streams, and as many again for calls being refused (each is refused at once, but
        holds its place in gRPC until its status is sent)."""
        return 2 * (self.server_calls + self.anonymous_streams)

    @property
    def session_stream_threads(self) -> int:
        """Stream threads one session may hold at once: half of them, so that another session always has some."""
        return max(1, self.stream_threads // 2)


class Budget:
    """Bytes a session (or the coordinator) may hold as stored, reserved before allocating; thread-safe.

    ``take`` reserves or raises ResourceExhausted naming this budget (and its
    parent's, when that is the one exceeded); ``give`` returns bytes once
    let go. ``peak`` is the most ever held at once.
    """

    def __init__(self, name: str, limit: int, parent: Budget | None = None, kind: str = "memory budget"):
        """``kind``: what the refusal calls this budget ("memory budget", or e.g. "id budget (...)")."""
        self.name, self.limit, self.parent, self.kind = name, limit, parent, kind
        self.used = 0
        self.peak = 0
        self._lock = threading.Lock()

    def take(self, n: int, what: str) -> None:
        """Reserve ``n`` bytes for ``what`` (a phrase naming the party and what it sent)."""
        if n <= 0:
            return
        with self._lock:
            if self.limit and self.used + n > self.limit:
                raise ResourceExhausted(
                    f"{what}: {size(n)} more would pass {self.name}'s {self.kind} of {size(self.limit)} "
                    f"({size(self.used)} held)")
            self.used += n
        if self.parent is not None:
            try:
                self.parent.take(n, what)
            except ResourceExhausted:
                with self._lock:
                    self.used -= n
                raise
        with self._lock:
            self.peak = max(self.peak, self.used)

    def give(self, n: int) -> None:
        if n <= 0:
            return
        with self._lock:
            n = min(n, self.used)
            self.used -= n
        if self.parent is not None:
            self.parent.give(n)

    def summary(self) -> dict[str, int]:
        """``{"budget", "peak", "held"}`` in bytes (budget 0: none of its own)."""
        with self._lock:
            return {"budget": self.limit, "peak": self.peak, "held": self.used}


class Calls:
    """Calls in flight per party, per session, on the whole server, and before a stream names its session.

    Used from the server's event loop only (no lock needed): ``enter`` and
    ``enter_status`` raise ResourceExhausted naming the cap reached (its
    message says the server is busy: ``parties.retry.BUSY``, which ``ppc
    party`` retries with backoff); ``leave`` undoes them.
    """

    def __init__(self, limits: Limits):
        self.limits = limits
        self.by_party: dict[tuple[str, str, str], int] = {}
        self.by_session: dict[str, int] = {}
        self.status: dict[tuple[str, str, str], int] = {}
        #: Calls admitted on the whole server (parties' and GetStatus's).
        self.total = 0
        self.anonymous = 0

    def _busy(self, message: str) -> ResourceExhausted:
        return ResourceExhausted(f"{message} ({BUSY}: try again once a call ends)")

    def enter(self, session: str, party: str, connection: str = "") -> None:
        """Count a call of ``party`` of ``session``; ``connection``, when given (a session whose calls prove no
        identity), counts the party's calls on that connection apart from its other connections'."""
        key = (session, party, connection)
        if self.by_party.get(key, 0) >= self.limits.party_calls:
            who = f"party '{shown(party)}'" if party else "the status caller"
            where = " on this connection (the session proves no party's identity: calls are counted by the name " \
                    "they claim and their connection)" if connection else ""
            raise self._busy(f"{who} of session '{shown(session)}' has {self.limits.party_calls} calls in flight"
                             f"{where}, the cap per party")
        if self.by_session.get(session, 0) >= self.limits.session_calls:
            raise self._busy(f"session '{shown(session)}' has {self.limits.session_calls} calls in flight, the cap "
                             "per session")
        if self.total >= self.limits.server_calls - self.limits.reserve:
            raise self._busy(f"the coordinator has {self.total} calls in flight; the last {self.limits.reserve} of "
                             f"its {self.limits.server_calls} are kept for GetStatus")
        self.by_party[key] = self.by_party.get(key, 0) + 1
        self.by_session[session] = self.by_session.get(session, 0) + 1
        self.total += 1

    def leave(self, session: str, party: str, connection: str = "") -> None:
        key = (session, party, connection)
        self.by_party[key] -= 1
        if not self.by_party[key]:
            del self.by_party[key]
        self.by_session[session] -= 1
        if not self.by_session[session]:
            del self.by_session[session]
        self.total -= 1

    def enter_status(self, session: str, party: str, connection: str = "") -> None:
        """Count a GetStatus call of ``party`` of ``session`` (or of its connection): ``party_calls`` per caller,
        outside the session's share, drawing on the whole server's calls and their reserve."""
        key = (session, party, connection)
        if self.status.get(key, 0) >= self.limits.party_calls:
            raise self._busy(f"the status caller of session '{shown(session)}' has {self.limits.party_calls} "
                             "GetStatus calls in flight, the cap per caller")
        if self.total >= self.limits.server_calls:
            raise self._busy(f"the coordinator has {self.limits.server_calls} calls in flight, its cap")
        self.status[key] = self.status.get(key, 0) + 1
        self.total += 1

    def leave_status(self, session: str, party: str, connection: str = "") -> None:
        key = (session, party, connection)
        self.status[key] -= 1
        if not self.status[key]:
            del self.status[key]
        self.total -= 1

    def enter_anonymous(self) -> None:
        if self.anonymous >= self.limits.anonymous_streams:
            raise self._busy(f"{self.limits.anonymous_streams} streams are waiting for their first message, the cap "
                             "for the whole coordinator; send the header at once")
        self.anonymous += 1

    def leave_anonymous(self) -> None:
        self.anonymous -= 1
