"""A clustering session: the parties it expects, their uploads, its deadline, the result.

The session is plain Python with no gRPC in it and no wire message either:
coordinator.handlers decodes each RPC (coordinator.wire.serde) and calls it.
It holds the state only: what it computes once every upload is in is
``coordinator.pipeline``, and it reads time through a ``coordinator.clock``
Clock (the real one unless given another), so deadlines can be tested
without waiting.

Who owns what. The session's lock (a condition variable, private to this
module) guards its own state: who joined, the uploads being read, the
contributions, the state and the error. The protocols that drive it are
objects of coordinator.protocols, each with its own state under its own
lock: the key relay (``relay``), the secure-aggregation rounds
(``arbiter``), the confirmations (``confirmations``) and the MPC hub
(``arbiter.hub``). The session's protocol (``protocol``, a registered
coordinator.protocols.base.SessionProtocol) drives it once every upload is
in: ``begin``, then ``complete`` or ``fail``; a protocol that sets the
session's state does so through ``publish``, under the session's lock. One rule keeps them apart: a protocol's lock may be taken
while the session's is held (a wait's ``ready`` reads a protocol's state,
see ``wait_for``), never the other way round; a protocol that changed what a
wait reads calls ``notify`` once its own lock is released. An upload being
read (coordinator.protocols.upload.Upload) belongs to the one thread that
reads its stream; the session registers it, and takes its contribution,
under its lock.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from coordinator.clock import REAL, Clock, Scheduled
from coordinator.clustering import ClusteringSpec
from coordinator.errors import FailedPrecondition, InvalidArgument, ResourceExhausted, SessionError
from coordinator.ledger import Ledger, predicted_payload
from coordinator.limits import Budget
from coordinator.matrix import FeatureMatrix
from coordinator.messages import PeerKey, Received, SealedKey, Terms, UploadHeader
from coordinator.protocols.base import SessionProtocol, protocol_class
from coordinator.protocols.builtin import Upload as _Upload  # noqa: F401 - registers the built-in protocols
from coordinator.protocols.confirm import Confirmations
from coordinator.protocols.keys import KeyRelay
from coordinator.protocols.upload import MAX_UPLOAD_BYTES, Upload, UploadRules, plan_upload
from coordinator.sums import PairSums
from coordinator.text import clip, shown
from coordinator.types import Contribution, Outcome
from coordinator.waits import PROBING, WouldWait
from protos.serde import CHUNK_BYTES

if TYPE_CHECKING:  # secure aggregation is loaded only by the sessions that use it (coordinator.protocols.builtin)
    from coordinator.protocols.secagg import Arbiter

#: The session's states (the numbers are the wire's SessionState, which coordinator.wire.serde checks).
WAITING, CLUSTERING, DONE, FAILED = 1, 2, 3, 4
STATE_NAMES = {WAITING: "waiting", CLUSTERING: "clustering", DONE: "done", FAILED: "failed"}

__all__ = ["CLUSTERING", "DONE", "FAILED", "STATE_NAMES", "STOP_GRACE", "WAITING", "Contribution", "Outcome",
           "PeerKey", "Refusal", "Session", "SessionSpec"]

#: Seconds an upload still being read may go on after its session failed, so it hears why, before it is cut.
STOP_GRACE = 2.0


@dataclass
class SessionSpec:
    """What a session expects: its parties, its clustering, its deadline in seconds."""

    name: str
    parties: tuple[str, ...]
    clustering: ClusteringSpec = field(default_factory=ClusteringSpec)
    deadline: float = 600.0
    chunk_bytes: int = CHUNK_BYTES
    #: SHA-256 of each party's token; None when the session takes no tokens.
    tokens: dict[str, str] | None = None
    #: Whether each party must also present a client certificate naming it (mutual TLS).
    mutual: bool = False
    #: Most bytes one party's upload may announce and send (array bytes plus id characters);
    #: a header announcing more is refused before anything is allocated.
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    #: Whether to keep each party's arrays (for sent/ and the observer). Without, the coordinator holds
    #: one condensed matrix per summed quantity of dissimilarities, whatever the parties, and clusters it
    #: in place (coordinator.linkage), and lets go of feature uploads once they are joined.
    keep_uploads: bool = True
    #: How record ids travel: "pseudonymous" (keyed pseudonyms; the coordinator never sees a raw id) or "plain".
    #: A scenario's [security] ids sets it, pseudonymous unless it says otherwise.
    ids: str = "plain"
    #: Per party, the disguise method and the public parameters the session expects in its upload header
    #: (as the header carries them: text); a party absent here is not checked.
    expected: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    #: Secure aggregation: whether parties may post unmasked partial distances (a benchmark's control run only).
    allow_unmasked: bool = False
    #: Per party, the columns its rows must have (a drbt party's declared k); a party absent here is not checked.
    dims: dict[str, int] = field(default_factory=dict)
    #: Bytes this session may hold as stored (decoded ids, arrays, the ledger); 0: only the coordinator's budget
    #: bounds it. An upload that would pass it is refused with RESOURCE_EXHAUSTED naming it.
    memory: int = 0

    @property
    def leader(self) -> str:
        """The party that draws and seals the pseudonym key: the session's first."""
        return self.parties[0]


@dataclass(frozen=True)
class Refusal:
    """An upload the session refused and discarded: who, why, and what it cost on the wire."""

    party: str
    error: str
    messages: int
    serialized: int
    payload: int


class _Ended(Exception):
    """The session ended while an upload was being read (not the upload's fault)."""




class Session:
    """One session's state, guarded by a condition variable; all methods are thread-safe (see the module
    docstring for what the protocols own)."""

    def __init__(self, spec: SessionSpec, clock: Clock | None = None, budget: Budget | None = None):
        """``budget``: the coordinator's memory budget, which this session's (``spec.memory``) draws on."""
        self.spec = spec
        #: What the session holds as stored, reserved before it is allocated (coordinator.limits).
        self.budget = Budget(f"session '{spec.name}'", spec.memory, parent=budget)
        #: Where the session reads the time and schedules its deadline (coordinator.clock).
        self.clock: Clock = clock if clock is not None else REAL
        self.ledger = Ledger(self.budget)
        self.state = WAITING
        self.error = ""
        self.joined: set[str] = set()
        self.uploads: dict[str, Upload] = {}  # the upload being read, or accepted, of each party
        self.contributions: dict[str, Contribution] = {}
        # dissimilarity uploads summed as they arrive, when uploads are not kept (else summed once joined, so
        # that a refused upload leaves nothing behind)
        self.sums = PairSums() if not spec.keep_uploads else None
        # feature uploads written straight into the matrix to cluster; kept uploads (sent/, the observer) are views
        # of their columns there, not a buffer each beside it
        self.matrix = FeatureMatrix(spec.parties)
        self.outcome: Outcome | None = None
        self.timing: dict[str, float] = {}
        self.protection: dict[str, dict] = {}  # per party: how its connection was secured and it was identified
        #: The session's protocol, which drives it once every upload is in (coordinator.protocols.base).
        self.protocol: SessionProtocol = protocol_class(spec.clustering.protocol)(self)
        # the parties' keys (coordinator.protocols.keys)
        self.relay = KeyRelay(spec.name, spec.parties, spec.ids,
                              self.protocol.name if self.protocol.terms.pair_keys else "")
        self.refused: list[Refusal] = []  # uploads refused and discarded, in order
        self.arbiter: Arbiter | None = None  # secure aggregation: the rounds, once the ids are joined
        self.confirmations = Confirmations(spec.parties)  # the tags each party posted (coordinator.protocols.confirm)
        self._start = self.clock.now()
        self._cond = threading.Condition()
        self._on_fail: list[Callable[[], None]] = []  # called once when the session fails (open uploads)
        self._watchers: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []  # coroutines in ``until``
        self._timer = self.clock.call_later(spec.deadline, self._expire)
        self.protocol.start()

    # -- parties ---------------------------------------------------------------------------
    def expects(self, party: str) -> bool:
        return party in self.spec.parties

    def _expected(self, party: str) -> None:
        if party not in self.spec.parties:
            raise SessionError(
                f"session '{self.spec.name}' expects no party '{shown(party)}' "
                f"(it expects {', '.join(self.spec.parties)})"
            )

    def _open(self) -> None:
        if self.state == FAILED:
            raise SessionError(f"session '{self.spec.name}' failed: {self.error}")
        if self.state != WAITING:
            raise SessionError(f"session '{self.spec.name}' takes no more uploads")

    @property
    def failed(self) -> bool:
        return self.state == FAILED

    def seconds_left(self) -> float:
        return max(self.spec.deadline - self._elapsed(), 0.0)

    def _elapsed(self) -> float:
        return self.clock.now() - self._start

    def join(self, party: str, public_key: bytes = b"", signature: bytes = b"", certificate: bytes = b"") -> None:
        """Take a party's Join (again, after a refused upload, is fine while the session waits).

        ``public_key`` is its X25519 key (needed for pseudonymous ids), fixed
        at its first Join: a later Join must give the same one (the key relay,
        coordinator.protocols.keys).
        """
        with self._cond:
            self._expected(party)
            self._open()
            self.relay.check(party, public_key, signature, certificate)
            if party in self.contributions:
                raise SessionError(f"party '{party}' has uploaded to session '{self.spec.name}' already")
            if party in self.uploads:  # "is uploading to session": the phrase docs/protocol.md gives clients to retry on
                raise SessionError(f"party '{party}' is uploading to session '{self.spec.name}' now; join again "
                                   "once that upload has ended")
            self.relay.keep(party, public_key, signature, certificate)
            self.joined.add(party)
            self.timing.setdefault("first_join", self._elapsed())
            self._wake()

    def protect(self, party: str, encrypted: bool) -> None:
        """Record, for the report's ``security``, how ``party``'s connection was secured (``encrypted``: over TLS,
        else plaintext on the loopback) and how its calls were identified (token, certificate, or its name alone)."""
        spec = self.spec
        identity = " and ".join(w for w, on in (("token", spec.tokens is not None), ("certificate", spec.mutual)) if on)
        with self._cond:
            self.protection[party] = {
                "transport": ("mutual TLS" if spec.mutual else "TLS") if encrypted else "plaintext (loopback)",
                "identity": identity or "none (claimed name only)",
            }

    def terms(self) -> Terms:
        """What Join answers: the session's chunk size, time left, id mode, parties and protocol, and the
        clustering terms its protocol announces (none for an upload)."""
        spec, announced = self.spec.clustering, self.protocol.terms.terms
        return Terms(self.spec.chunk_bytes, self.seconds_left(), self.spec.ids, tuple(self.spec.parties),
                     self.protocol.name, {k: getattr(spec, k) for k in announced} if announced else None)

    # -- keys (the key relay, coordinator.protocols.keys) ------------------------------------
    @property
    def keys(self) -> dict[str, PeerKey]:
        """Each party's key-agreement public key as it joined with it."""
        return self.relay.keys

    def peers(self, party: str, timeout: float | None = None) -> list[tuple[str, PeerKey]]:
        """Every party's public key, once every party has joined; SessionError if the session ends first."""
        self._expected(party)
        with self._cond:
            if party not in self.joined:
                raise SessionError(f"party '{party}' must Join before it asks for its peers' keys")
            self._await(lambda: len(self.joined) == len(self.spec.parties), timeout, lambda: (
                "not every party has joined yet (waiting for "
                + ", ".join(p for p in self.spec.parties if p not in self.joined) + ")"))
        return self.relay.all_keys()

    def post_sealed(self, party: str, keys: list[SealedKey] | tuple[SealedKey, ...]) -> None:
        """The key leader's pseudonym key, sealed to every other party (KeyRelay.post)."""
        self._expected(party)
        with self._cond:
            self._open()
        if self.relay.post(party, keys):
            self.notify()

    def sealed_for(self, party: str, timeout: float | None = None) -> SealedKey:
        """The pseudonym key sealed to ``party``, once the leader has posted it."""
        self._expected(party)
        if party == self.spec.leader:
            return self.relay.sealed_to(party)  # refused: the leader has none
        self.wait_for(self.relay.posted, timeout,
                      lambda: f"the key leader '{self.spec.leader}' has not posted the sealed keys yet")
        return self.relay.sealed_to(party)

    def receive(
        self,
        header: UploadHeader,
        messages: Iterable[Received],
        cancel: Callable[[], None] | None = None,
        header_size: int = 0,
    ) -> int:
        """Take one party's upload stream (after its header), as received; returns the payload bytes received.

        An upload that is refused (a header the session does not expect, a
        malformed message, a NaN) or broken off (the party went away) is
        discarded and counted in ``refused`` with its bytes; the session goes
        on waiting and the party may upload again from scratch until the
        deadline. Only when dissimilarities were already added into the
        running sums (uploads not kept) can a broken upload not be taken back,
        and the session fails. ``cancel`` cuts the stream off if the session
        fails while it is being read (the deadline passes), STOP_GRACE seconds
        after, so that a party that stopped sending does not hold the
        coordinator. ``header_size`` is the header message's size on the wire.
        """
        party = header.party
        with self._cond:
            self._expected(party)
            self._open()
            if party not in self.joined:
                raise SessionError(f"party '{party}' must Join before it uploads")
            if party in self.contributions:
                raise SessionError(f"party '{party}' has uploaded already")
            if party in self.uploads:
                raise SessionError(f"party '{party}' is uploading already; one upload at a time")
            try:
                upload = Upload(plan_upload(header, self._rules(party)), self.sums, self.spec.keep_uploads,
                                budget=self.budget, matrix=self.matrix)
            except SessionError as exc:
                self._refuse(party, str(exc), 1, header_size, 0)
                raise (ResourceExhausted if isinstance(exc, ResourceExhausted) else InvalidArgument)(str(exc)) \
                    from None
            except Exception as exc:  # noqa: BLE001 - a header no check foresaw must still be refused cleanly
                why = f"party '{party}': the upload header cannot be used ({type(exc).__name__}: {exc})"
                self._refuse(party, why, 1, header_size, 0)
                raise InvalidArgument(why) from None
            self.uploads[party] = upload
            stopper: list[Scheduled] = []

            def stop() -> None:
                if cancel is not None:
                    stopper.append(self.clock.call_later(STOP_GRACE, cancel))

            self._on_fail.append(stop)
        count, serialized = 1, header_size
        try:
            for item in messages:
                if self.state == FAILED:
                    raise _Ended(f"party '{party}': upload stopped, the session failed: {self.error}")
                count, serialized = count + 1, serialized + item.size
                upload.add(item.part)
            contribution = upload.finish()
        except _Ended as exc:
            upload.release()
            raise FailedPrecondition(str(exc)) from None
        except Exception as exc:  # refused (SessionError), or the stream broke: the party went away mid-upload
            upload.release()
            if self.state == FAILED and not isinstance(exc, SessionError):  # cut off because the session failed
                raise FailedPrecondition(f"party '{party}': upload stopped, the session failed: {self.error}") \
                    from None
            why = str(exc) if isinstance(exc, SessionError) else (
                f"party '{party}': upload broken off after {upload.received} of {upload.expected} bytes "
                f"({str(exc) or type(exc).__name__})")
            with self._cond:
                self.uploads.pop(party, None)
            if upload.added:  # its values are in the running sums: they cannot be taken back
                self.fail(f"{why}; {upload.added} of its dissimilarities were already added into the running sums "
                          "(the coordinator keeps no uploads), so the session cannot take them back")
                raise SessionError(self.error) from None
            if upload.adder is not None and self.sums is not None:  # attached, added nothing: as if never sent
                self.sums.detach()
            self._refuse(party, why, count, serialized, upload.received)
            raise (ResourceExhausted if isinstance(exc, ResourceExhausted) else InvalidArgument)(why) from None
        finally:
            with self._cond:
                if stop in self._on_fail:
                    self._on_fail.remove(stop)
            for timer in stopper:
                timer.cancel()
        with self._cond:
            self._open()
            self.contributions[party] = contribution
            if len(self.contributions) == len(self.spec.parties):
                self.state = CLUSTERING
                self.timing["uploaded"] = self._elapsed()
                threading.Thread(target=self._finish, name=f"cluster-{self.spec.name}", daemon=True).start()
            self._wake()
        return upload.received

    def _rules(self, party: str) -> UploadRules:
        """What this session expects of ``party``'s upload (its header is checked against it)."""
        method, params = self.spec.expected.get(party, (None, {}))
        return UploadRules(self.spec.name, self.spec.max_upload_bytes, self.spec.chunk_bytes,
                           self.protocol.terms.ids_only, method, params, self.spec.dims.get(party),
                           self.spec.ids)

    def _refuse(self, party: str, error: str, messages: int, serialized: int, payload: int) -> None:
        with self._cond:
            self.refused.append(Refusal(party, clip(error), messages, serialized, payload))

    # -- clustering (the session's protocol, coordinator.protocols.base) ------------------------------
    def _finish(self) -> None:
        """Every upload is in: the protocol runs, to ``complete`` or ``fail``."""
        self.protocol.begin()

    def publish(self, change: Callable[[], None]) -> None:
        """Run ``change`` (a protocol setting its part of the session's state, e.g. ``arbiter``) under the
        session's lock, then wake every waiter."""
        with self._cond:
            change()
            self._wake()

    def time_phase(self, name: str, seconds: float) -> None:
        """Record how long a protocol's phase took (``timing[name]``, in the report's coordinator timings)."""
        with self._cond:
            self.timing[name] = seconds

    def notify(self) -> None:
        """Wake every waiter: a protocol object changed what a wait reads (call with no protocol's lock held)."""
        with self._cond:
            self._wake()

    def wait_for(self, ready: Callable[[], bool], timeout: float | None, not_yet: Callable[[], str]) -> None:
        """Until ``ready()`` (read under the session's lock: it may take a protocol's lock, never the other way
        round); SessionError saying why the session failed, or ``not_yet()`` when ``timeout`` passed first. Under
        PROBING, WouldWait instead of waiting."""
        with self._cond:
            self._await(ready, timeout, not_yet)

    def complete(self, outcome: Outcome) -> None:
        """The protocol's result is the session's: it is done (unless it has failed meanwhile)."""
        with self._cond:
            if self.state == CLUSTERING:
                self.outcome = outcome
                self.state = DONE
                self.timing.update(outcome.seconds)
                self.timing["done"] = self._elapsed()
                self._timer.cancel()
            self._wake()

    def fail(self, error: str) -> None:
        """End the session with ``error`` (kept if it has already ended); wakes every waiter
        and has every upload still being read cut off after STOP_GRACE seconds."""
        with self._cond:
            if self.state in (DONE, FAILED):
                return
            self.state, self.error = FAILED, clip(error)
            self._timer.cancel()
            self._wake()
            watchers, self._on_fail = self._on_fail, []
        for stop in watchers:
            stop()

    def when_failed(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from the thread that fails the session) once the session fails; at once if it has."""
        with self._cond:
            if self.state != FAILED:
                self._on_fail.append(callback)
                return
        callback()

    def _expire(self) -> None:
        with self._cond:
            missing = [p for p in self.spec.parties if p not in self.joined]
            pending = [p for p in self.spec.parties if p in self.joined and p not in self.contributions]
        why = []
        if missing:
            why.append(f"never joined: {', '.join(missing)}")
        if pending:
            why.append(f"upload not finished: {', '.join(pending)}")
        self.fail(f"deadline of {self.spec.deadline:g} s passed" + (f" ({'; '.join(why)})" if why else ""))

    def _wake(self) -> None:
        """Wake every waiter, thread or coroutine (call with the lock held)."""
        self._cond.notify_all()
        for loop, event in self._watchers:
            loop.call_soon_threadsafe(event.set)

    async def until(self, ready: Callable[[], bool]) -> None:
        """Wait, as a coroutine holding no thread, until ``ready()`` (read under the lock) or the session failed.

        The session's deadline fails it, so this always ends; a cancelled call
        cancels the coroutine at once.
        """
        loop = asyncio.get_running_loop()
        watcher = (loop, asyncio.Event())
        with self._cond:
            self._watchers.append(watcher)
        try:
            while True:
                with self._cond:
                    if ready() or self.state == FAILED:
                        return
                    watcher[1].clear()
                await watcher[1].wait()
        finally:
            with self._cond:
                self._watchers.remove(watcher)

    def _await(self, ready: Callable[[], bool], timeout: float | None, not_yet: Callable[[], str]) -> None:
        """With the lock held: wait until ``ready()`` or the session fails; SessionError saying why the session
        failed, or ``not_yet()`` when ``timeout`` passed first. Under PROBING, WouldWait instead of waiting."""
        if PROBING.get() and not (ready() or self.state == FAILED):
            raise WouldWait(ready)
        self._cond.wait_for(lambda: ready() or self.state == FAILED, timeout)
        if self.state == FAILED:
            raise SessionError(f"session '{self.spec.name}' failed: {self.error}")
        if not ready():
            raise SessionError(f"session '{self.spec.name}': {not_yet()}")

    def wait(self, timeout: float | None = None) -> Outcome:
        """Block until the session is done; SessionError if it failed or ``timeout`` passed."""
        with self._cond:
            if PROBING.get() and self.state not in (DONE, FAILED):
                raise WouldWait(lambda: self.state == DONE)
            self._cond.wait_for(lambda: self.state in (DONE, FAILED), timeout)
            if self.state == FAILED:
                raise SessionError(f"session '{self.spec.name}' failed: {self.error}")
            if self.state != DONE or self.outcome is None:
                raise SessionError(f"session '{self.spec.name}' is not done yet")
            return self.outcome

    def result_for(self, party: str, timeout: float | None = None) -> tuple[Outcome, np.ndarray]:
        self._expected(party)
        outcome = self.wait(timeout)
        return outcome, outcome.by_party[party]

    # -- reporting -------------------------------------------------------------------------
    def party_status(self) -> list[dict]:
        with self._cond:
            return [
                {
                    "party": p,
                    "joined": p in self.joined,
                    "uploaded": p in self.contributions,
                    "payload_bytes": self.uploads[p].received if p in self.uploads else 0,
                    "payload_expected": self.uploads[p].expected if p in self.uploads else 0,
                }
                for p in self.spec.parties
            ]

    def byte_summary(self) -> dict[str, dict]:
        """Per party: upload bytes predicted by the paper, payload and serialised, and downloads."""
        totals = self.ledger.totals()
        out = {}
        for p in self.spec.parties:
            up = totals.get(p, {}).get("up", {"messages": 0, "payload": 0, "serialized": 0})
            down = totals.get(p, {}).get("down", {"messages": 0, "payload": 0, "serialized": 0})
            predicted = None
            if p in self.uploads and self.uploads[p].plan.arrays:
                plan = self.uploads[p].plan
                itemsize = np.dtype(plan.arrays[0].dtype).itemsize
                predicted = predicted_payload(plan.n, [tuple(a.shape) for a in plan.arrays], itemsize)
            refused = [r for r in self.refused if r.party == p]
            wasted = {"attempts": len(refused), "messages": sum(r.messages for r in refused),
                      "serialized": sum(r.serialized for r in refused), "payload": sum(r.payload for r in refused)}
            # the accepted exchange; refused uploads' bytes apart (they crossed the wire too: see "refused")
            out[p] = {"predicted": predicted, "payload": up["payload"] - wasted["payload"],
                      "serialized": up["serialized"] - wasted["serialized"],
                      "messages": up["messages"] - wasted["messages"], "down": down, "refused": wasted}
        return out
