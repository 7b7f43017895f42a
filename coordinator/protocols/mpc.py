"""MPC k-means: the coordinator relays the parties' encrypted MPC traffic and counts every byte.

In a session with ``[clustering] protocol = "mpc"`` the parties compute
Lloyd's k-means among themselves as a secure multiparty computation (MPyC,
Shamir secret sharing, parties.mpc_kmeans; or with ``engine = "spu"`` SPU's
ABY3 among three share-holders, parties.spu_kmeans, whose two connections
per pair share a link here). They reach only the coordinator:
each party's ``Relay`` stream carries its links to every other MPC party as
AES-256-GCM frames under keys only the two ends of a link hold
(parties.mpc). The coordinator authenticates each stream's party, forwards
each frame to the party it names with the sender's name, and records it in
the session's ledger (payload: the frame's ciphertext bytes) and per
directed link and per round (each party marks the start of its Lloyd rounds
on its stream). It never holds a key that opens a frame, so it sees no share:
only the sizes and timing of the frames, which depend on the public settings
(m, k, columns, rounds, fixed-point type) and not on the data.

At the end every party sends the labels its MPC opened; the coordinator
checks that all agree and makes them the session's result (GetResult, as in
every session). With two data parties a third share-holder with no data
(the *helper*) gives threshold t = 1; ``ppc run`` and ``ppc coordinator``
start it beside the coordinator (``ppcsim.run.helper``); the assumption is that
it does not collude with either party.

Alignment reuses the secure-aggregation one (coordinator.protocols.secagg): each party
uploads its ids only, the session joins them and draws the initial centres,
k joined records, with the scenario seed (public positions).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from coordinator.clustering import MPC, SECURE, SPU
from coordinator.errors import InvalidArgument, SessionError
from coordinator.ledger import DOWN, UP
from coordinator.messages import Frame, Mark, RelayResult
from coordinator.protocols.secagg import Arbiter, arbiter_of, columns, rounds_of
from coordinator.text import shown

RPC = "Relay"
#: Bytes of AES-GCM's tag in every frame (parties.mpc).
TAG_BYTES = 16
#: The name of the helper share-holder of a two-party session (``[clustering] helper = true``).
HELPER = "helper"
#: Bytes a relayed frame held for its receiver costs the session's memory budget beyond its data.
FRAME_OVERHEAD = 128
#: Bytes the coordinator's helper holds per value of the MPC's input (m joined records x every party's declared
#: columns: the program's float64 stand-in for each other party's block, parties.mpc_kmeans), charged to the
#: session's memory budget before the MPC starts, so that a declared ``columns = 1000000`` is refused, not allocated.
HELPER_VALUE_BYTES = 8

#: What the hub hands a party's stream: a frame from a peer, or None for "your stream ends".
Deliver = Callable[[Frame | None], None]


def mpc_parties(spec) -> list[str]:
    """The MPC's parties in order (MPyC ids 0, 1, ...): the session's, then the helper if any."""
    return [*spec.parties, HELPER] if spec.clustering.helper else list(spec.parties)


def threshold(n: int) -> int:
    """MPyC's default Shamir threshold for ``n`` parties: t = (n - 1) // 2 (any t together learn nothing)."""
    return (n - 1) // 2


@dataclass
class Traffic:
    """Frames and bytes (ciphertext with tags) counted on one link or in one round."""

    frames: int = 0
    bytes: int = 0

    def add(self, n: int) -> None:
        self.frames += 1
        self.bytes += n


def loop_outbox(loop: asyncio.AbstractEventLoop, out: asyncio.Queue) -> Deliver:
    """A stream served by the asyncio server: put into ``out`` on ``loop``, from the loop or from any thread."""
    def deliver(message: Frame | None) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            out.put_nowait(message)
        else:
            loop.call_soon_threadsafe(out.put_nowait, message)
    return deliver


@dataclass
class Hub:
    """The relay of one MPC session: where each party's frames go, and what crossed each link and round.

    It never waits: a frame is handed to its receiver's stream at once (an
    asyncio queue of the server's loop, or a thread's queue for the
    coordinator's own helper), or held until the receiver opens its stream.
    Every frame held, not yet written to its receiver, is taken from the
    session's memory budget, so a party that floods a peer that does not read
    is refused (RESOURCE_EXHAUSTED naming it) instead of growing the
    coordinator. Thread-safe.
    """

    session: object
    parties: list[str]
    outboxes: dict[str, Deliver] = field(default_factory=dict)
    #: Frames for a party whose stream is not open yet, in order.
    pending: dict[str, list[Frame]] = field(default_factory=dict)
    opened: set[str] = field(default_factory=set)
    ended: set[str] = field(default_factory=set)
    links: dict[tuple[str, str], Traffic] = field(default_factory=dict)
    #: By party, by round (-1: before round 0, the input sharing), its frames up (sent) and down (delivered).
    rounds: dict[str, dict[int, dict[str, Traffic]]] = field(default_factory=dict)
    current: dict[str, int] = field(default_factory=dict)
    dropped: int = 0
    results: dict[str, tuple[np.ndarray, bytes]] = field(default_factory=dict)
    started: float | None = None
    finished: float | None = None
    #: time.monotonic() of the last message each party sent or was sent, once every stream is open (idle rule).
    active: dict[str, float] = field(default_factory=dict)
    #: Bytes of frames held for their receivers, taken from the session's budget.
    held: int = 0
    failed: bool = False
    #: Parties whose frames stay charged to the budget after they were taken out for them, until their program has
    #: taken them in (``consumed``): the coordinator's own helper, whose program runs in this process tree.
    tracked: set[str] = field(default_factory=set)
    #: Per (receiver, sender) of a tracked receiver, the charged bytes of each frame taken out, in order.
    unread: dict[tuple[str, str], deque] = field(default_factory=dict)
    #: Bytes taken from the budget for the helper's input before the MPC started (given back at its end).
    reserved: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The helper's X25519 public key, once the helper has made its key pair (coordinator.protocols.secagg.helper_key).
    helper_key: bytes = b""

    def __post_init__(self) -> None:
        self.pending = {p: [] for p in self.parties}

    def all_open(self) -> bool:
        """Whether every MPC party's stream is open (the computation can run; the idle rule applies)."""
        with self.lock:
            return len(self.opened) == len(self.parties)

    def open(self, party: str, deliver: Deliver) -> None:
        """``party``'s stream opens: frames for it go to ``deliver`` (those held for it first)."""
        with self.lock:
            if party in self.opened:
                raise InvalidArgument(f"party '{party}': a second Relay stream; one per party per session")
            if self.failed:
                raise SessionError(self.session.error)  # type: ignore[attr-defined]
            self.opened.add(party)
            if self.started is None:
                self.started = time.monotonic()
            self.current[party] = -1
            self.outboxes[party] = deliver
            waiting, self.pending[party] = self.pending[party], []
            if len(self.opened) == len(self.parties):  # the computation starts: every party's idle clock too
                now = time.monotonic()
                self.active = dict.fromkeys(self.parties, now)
            for message in waiting:
                deliver(message)

    def _count(self, party: str, direction: str, n: int) -> None:
        by_round = self.rounds.setdefault(party, {}).setdefault(self.current.get(party, -1),
                                                                {UP: Traffic(), DOWN: Traffic()})
        by_round[direction].add(n)

    def _hold(self, to: str, message: Frame, sender: str) -> None:
        """With the lock held: hand a frame to ``to``'s stream (held until it opens), its bytes from the budget."""
        n = len(message.data) + FRAME_OVERHEAD
        what = "that its program has not taken in yet" if to in self.tracked else "and not yet delivered"
        self.session.budget.take(n, f"party '{sender}': frames relayed to '{to}' {what}")  # type: ignore[attr-defined]
        self.held += n
        if to in self.outboxes:
            self.outboxes[to](message)
        else:
            self.pending[to].append(message)

    def check(self, party: str, part: object) -> None:
        """InvalidArgument unless ``part`` is a message a Relay stream may carry after its opening: a frame to
        another party of the MPC, at least a tag long; a mark; a result."""
        if isinstance(part, Frame):
            if part.peer not in self.parties or part.peer == party:
                raise InvalidArgument(f"party '{party}': a frame for '{shown(part.peer)}', not another party of the "
                                      f"MPC ({', '.join(self.parties)})")
            if len(part.data) < TAG_BYTES:
                raise InvalidArgument(f"party '{party}': a frame of {len(part.data)} bytes is shorter than its tag")
        elif isinstance(part, RelayResult):
            if len(part.labels) % 4 or len(part.centres) % 8:
                raise InvalidArgument(f"party '{party}': a RelayResult of {len(part.labels)} label bytes and "
                                      f"{len(part.centres)} centre bytes; labels are 4 bytes each (int32), centres "
                                      "8 (float64)")
        elif not isinstance(part, Mark):
            raise InvalidArgument(f"party '{party}': a Relay stream carries frames, marks and one result after its "
                                  f"opening, got {'an opening' if part is not None else 'an empty message'}")

    def receive(self, party: str, part: object) -> None:
        """One message of ``party``'s stream after its opening, decoded (checked by ``check`` and counted by
        coordinator.handlers first)."""
        self.check(party, part)
        if isinstance(part, Frame):
            to = part.peer
            forward = Frame(peer=party, seq=part.seq, data=part.data)
            with self.lock:
                self.active[party] = time.monotonic()
                self.links.setdefault((party, to), Traffic()).add(len(part.data))
                self._count(party, UP, len(part.data))
                if to in self.ended or self.failed:
                    self.dropped += 1  # its program has finished (a link's closing frame): nothing reads it
                    return
                self._hold(to, forward, party)
        elif isinstance(part, Mark):
            with self.lock:
                self.active[party] = time.monotonic()
                self.current[party] = part.round
        elif isinstance(part, RelayResult):
            labels = np.frombuffer(part.labels, dtype="<i4")
            with self.lock:
                self.active[party] = time.monotonic()
                if party in self.results:
                    raise InvalidArgument(f"party '{party}': a second RelayResult")
                self.results[party] = (labels, part.centres)

    def delivered(self, party: str, message: Frame) -> None:
        """``message`` was taken out to be written to ``party``'s stream: counted, its bytes back to the budget."""
        n = len(message.data)
        with self.lock:
            self.active[party] = time.monotonic()
            self._count(party, DOWN, n)
            if self.failed:  # fail() gave back every held byte already
                return
            if party in self.tracked:  # still charged until its program has taken it in (consumed)
                self.unread.setdefault((party, message.peer), deque()).append(n + FRAME_OVERHEAD)
                return
            self.held -= n + FRAME_OVERHEAD
        self.session.budget.give(n + FRAME_OVERHEAD)  # type: ignore[attr-defined]

    def consumed(self, party: str, sender: str) -> None:
        """The program of ``party`` (a tracked receiver: the helper) has taken in the next frame from ``sender``:
        its bytes back to the budget."""
        with self.lock:
            charged = self.unread.get((party, sender))
            if self.failed or not charged:
                return
            n = charged.popleft()
            self.held -= n
        self.session.budget.give(n)  # type: ignore[attr-defined]

    def release(self) -> None:
        """Give back what is still charged (the MPC is over): frames not consumed and the helper's input."""
        with self.lock:
            held, self.held = self.held, 0
            reserved, self.reserved = self.reserved, 0
            self.unread.clear()
        self.session.budget.give(held + reserved)  # type: ignore[attr-defined]

    def idle(self, party: str) -> float:
        """Seconds since ``party`` last sent or was sent a message; 0 until every stream is open."""
        with self.lock:
            if len(self.opened) < len(self.parties):
                return 0.0
            return time.monotonic() - self.active.get(party, time.monotonic())

    def end(self, party: str) -> None:
        """``party`` ended its stream: end the stream to it, and the session once every party is done."""
        with self.lock:
            if party in self.ended:
                return
            self.ended.add(party)
            if party in self.outboxes:
                self.outboxes[party](None)
            done = len(self.ended) == len(self.parties) and not self.failed
            if done:
                self.finished = time.monotonic()
        if done:
            self._complete()

    def fail(self) -> None:
        """The session failed: end every open stream (each hears the session's error), drop what is held."""
        with self.lock:
            self.failed = True
            for deliver in self.outboxes.values():
                deliver(None)
            self.pending = {p: [] for p in self.parties}
        self.release()

    def _complete(self) -> None:
        self.release()
        session = self.session
        arbiter = session.arbiter  # type: ignore[attr-defined]
        missing = [p for p in self.parties if p not in self.results]
        if missing:
            session.fail(f"the MPC ended without the labels of {', '.join(map(repr, missing))}")  # type: ignore[attr-defined]
            return
        first, labels = self.parties[0], self.results[self.parties[0]][0]
        for p in self.parties[1:]:
            other = self.results[p][0]
            if other.shape != labels.shape or not np.array_equal(other, labels):
                session.fail(f"the MPC opened different labels at '{first}' and '{p}'")  # type: ignore[attr-defined]
                return
        if labels.shape != (arbiter.m,) or (labels.size and (labels.min() < 0 or labels.max() >= arbiter.k)):
            session.fail(f"the MPC opened {labels.size} labels (values outside 0..{arbiter.k - 1} or not "  # type: ignore[attr-defined]
                         f"{arbiter.m} of them)")
            return
        parts = ", ".join(session.spec.parties)  # type: ignore[attr-defined]
        if arbiter.spec.labels_only:
            rounds = max(self.current.values(), default=0) + 1
            description = (f"k-means by secure aggregation over {parts}, opening the labels only: {rounds} rounds "
                           "of an MPC argmin over secret-shared partial squared distances")
        else:
            engine = "SPU, ABY3" if session.spec.clustering.engine == SPU else "MPyC"  # type: ignore[attr-defined]
            description = (f"k-means as a secure multiparty computation ({engine}) over {parts}: "
                           f"{arbiter.spec.max_iter + 1} assignments on secret shares, only the labels opened")
        outcome = arbiter.outcome(labels.astype(np.int32), description)
        session.complete(outcome)  # type: ignore[attr-defined]


def open_hub(session, arbiter: Arbiter) -> None:
    """Open the relay of an MPC session whose ids are joined: every party's upload names its columns
    (InvalidArgument naming the party otherwise)."""
    declared = sum(columns(session.contributions[party]) for party in session.spec.parties)
    hub = Hub(session, mpc_parties(session.spec))
    if session.spec.clustering.helper:
        hub.tracked.add(HELPER)
        n = HELPER_VALUE_BYTES * arbiter.m * declared
        session.budget.take(n, f"the coordinator's helper: the MPC's input of {arbiter.m} records x {declared} "
                               "declared columns")
        hub.reserved = n
        session.when_failed(hub.release)
    arbiter.hub = hub


def hub_of(session, party: str, helper: bool = False) -> Hub:
    """The hub a Relay stream opened by ``party`` joins, once every party's ids are joined (a wait: WouldWait
    under PROBING). ``helper``: the coordinator's own helper, in its process (ppcsim.run.helper); over gRPC only the
    session's parties may open a stream."""
    if helper and (party != HELPER or not session.spec.clustering.helper):
        raise InvalidArgument(f"session '{session.spec.name}' has no helper called '{shown(party)}'")
    arbiter = (rounds_of(session, timeout=session.seconds_left() + 1.0) if helper
               else arbiter_of(session, party, MPC, SECURE))
    hub = arbiter.hub
    if hub is None or party not in hub.parties:
        raise InvalidArgument(f"party '{shown(party)}' is not a party of this MPC")
    return hub


def attach(session, hub: Hub, party: str, deliver: Deliver) -> None:
    """Open ``party``'s stream on ``hub``; the first opening also has every stream ended if the session fails."""
    with hub.lock:
        first = not hub.opened
    if first:
        session.when_failed(hub.fail)
    hub.open(party, deliver)


def set_helper_key(session, hub: Hub, key: bytes) -> None:
    """The coordinator's helper made its key pair: GetAlignment of the parties waits for its public key."""
    with hub.lock:
        hub.helper_key = key
    session.notify()


def accounting(session) -> dict:
    """The report's view of an MPC session: parties, threshold, bytes per party, per link and per round."""
    arbiter = session.arbiter
    spec = session.spec.clustering
    parties = mpc_parties(session.spec)
    out: dict = {"protocol": MPC, "engine": spec.engine, "parties": parties, "threshold": threshold(len(parties)),
                 "helper": HELPER if spec.helper else None, "rounds": spec.max_iter,
                 "fixed_point": {"bits": spec.mpc_bits, "frac": spec.mpc_frac},
                 "reveal_centres": spec.reveal_centres}
    if arbiter is None or getattr(arbiter, "hub", None) is None:
        return out
    hub: Hub = arbiter.hub
    with hub.lock:
        by_party = {}
        for p in parties:
            up = sum(t[UP].bytes for t in hub.rounds.get(p, {}).values())
            down = sum(t[DOWN].bytes for t in hub.rounds.get(p, {}).values())
            frames_up = sum(t[UP].frames for t in hub.rounds.get(p, {}).values())
            frames_down = sum(t[DOWN].frames for t in hub.rounds.get(p, {}).values())
            by_party[p] = {"up": up, "down": down, "frames_up": frames_up, "frames_down": frames_down,
                           # what the MPC runtime wrote, without the tags the tunnel added
                           "plaintext_up": up - TAG_BYTES * frames_up}
        links = [{"sender": a, "receiver": b, "frames": t.frames, "bytes": t.bytes}
                 for (a, b), t in sorted(hub.links.items())]
        indices = sorted({r for p in hub.rounds.values() for r in p})
        per_round = [{"round": r,
                      "up": {p: hub.rounds.get(p, {}).get(r, {UP: Traffic()})[UP].bytes for p in parties},
                      "frames": sum(hub.rounds.get(p, {}).get(r, {UP: Traffic()})[UP].frames for p in parties)}
                     for r in indices]
        seconds = (hub.finished - hub.started) if hub.started is not None and hub.finished is not None else None
        out.update(n_joined=arbiter.m, init=[int(i) for i in arbiter.init], by_party=by_party, links=links,
                   per_round=per_round, dropped_frames=hub.dropped, seconds=seconds)
    return out
