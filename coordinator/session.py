"""A clustering session: the parties it expects, their uploads, the join, the result.

The session is plain Python with no gRPC in it; the servicer adapts RPCs to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from coordinator.clustering import ClusteringSpec, cluster
from coordinator.combine import Combined, Contribution, check_osbr_upload, combine
from coordinator.embed import nmds, requested_embedding
from coordinator.errors import SessionError
from coordinator.join import Join, join_ids
from coordinator.ledger import Ledger, predicted_payload
from protos.ppcsim.v1 import session_pb2
from protos.serde import CHUNK_BYTES, ArrayAssembler, Layout, WireError

WAITING, CLUSTERING, DONE, FAILED = (
    session_pb2.WAITING,
    session_pb2.CLUSTERING,
    session_pb2.DONE,
    session_pb2.FAILED,
)
STATE_NAMES = {WAITING: "waiting", CLUSTERING: "clustering", DONE: "done", FAILED: "failed"}


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


@dataclass
class Outcome:
    """The shared result: joined ids, their labels, and each party's labels in its own row order."""

    join: Join
    combined: Combined
    labels: np.ndarray
    by_party: dict[str, np.ndarray]

    @property
    def sizes(self) -> list[int]:
        n = int(self.labels.max()) + 1 if (self.labels >= 0).any() else 0
        return np.bincount(self.labels[self.labels >= 0], minlength=n).tolist()

    @property
    def noise(self) -> int:
        return int((self.labels == -1).sum())


class Upload:
    """Assembles one party's upload stream: the header, then ids and array chunks."""

    def __init__(self, party: str, header: session_pb2.UploadHeader):
        self.party, self.header = party, header
        self.n = int(header.n_ids)
        if not header.arrays:
            raise SessionError(f"party '{party}': the upload announces no arrays")
        names = [a.name for a in header.arrays]
        if len(set(names)) != len(names):
            raise SessionError(f"party '{party}': array names repeat: {names}")
        layouts = {spec.layout for spec in header.arrays}
        if layouts not in ({Layout.ROWS}, {Layout.CONDENSED}):
            raise SessionError(f"party '{party}': an upload sends either rows or condensed matrices, not both")
        self.dissimilarity = layouts == {Layout.CONDENSED}
        for spec in header.arrays:
            self._check_shape(spec)
        if self.dissimilarity:
            check_osbr_upload(party, dict(header.params), set(names))
        try:
            self.assemblers = [ArrayAssembler(spec) for spec in header.arrays]
        except WireError as exc:
            raise SessionError(f"party '{party}': {exc}") from None
        self.ids: list[str] = []
        self.expected = sum(a.nbytes for a in self.assemblers)

    def _check_shape(self, spec) -> None:
        shape = tuple(spec.shape)
        where = f"party '{self.party}', array '{spec.name}'"
        if self.dissimilarity:
            want = (self.n * (self.n - 1) // 2,)
            if shape != want:
                raise SessionError(f"{where}: a condensed matrix over {self.n} ids has shape {want}, got {shape}")
        elif len(shape) != 2 or shape[0] != self.n or shape[1] < 1:
            raise SessionError(f"{where}: expected rows of shape ({self.n}, k), got {shape}")

    @property
    def received(self) -> int:
        return sum(a.received for a in self.assemblers)

    def add(self, message: session_pb2.UploadMessage) -> None:
        part = message.WhichOneof("part")
        if part == "ids":
            self.ids.extend(message.ids.ids)
            if len(self.ids) > self.n:
                raise SessionError(f"party '{self.party}': more than the {self.n} ids announced")
        elif part == "chunk":
            if message.chunk.array >= len(self.assemblers):
                raise SessionError(f"party '{self.party}': chunk for array {message.chunk.array}, which was not announced")
            try:
                self.assemblers[message.chunk.array].add(message.chunk)
            except WireError as exc:
                raise SessionError(f"party '{self.party}': {exc}") from None
        else:
            raise SessionError(f"party '{self.party}': a second header (or an empty message) in the upload")

    def finish(self) -> Contribution:
        if len(self.ids) != self.n:
            raise SessionError(f"party '{self.party}': upload ended after {len(self.ids)} of {self.n} ids")
        if self.received != self.expected:
            raise SessionError(f"party '{self.party}': upload ended after {self.received} of {self.expected} bytes")
        ids = np.array(self.ids, dtype=str)
        if len(np.unique(ids)) != len(ids):
            raise SessionError(f"party '{self.party}': duplicate record ids in the upload")
        arrays = {a.spec.name: a.array() for a in self.assemblers}
        for name, arr in arrays.items():
            if not np.isfinite(arr).all():
                raise SessionError(f"party '{self.party}', array '{name}': NaN or infinite values")
        return Contribution(self.party, self.header.method, dict(self.header.params), ids, arrays, self.dissimilarity)


class Session:
    """One session's state, guarded by a condition variable; all methods are thread-safe."""

    def __init__(self, spec: SessionSpec):
        self.spec = spec
        self.ledger = Ledger()
        self.state = WAITING
        self.error = ""
        self.joined: set[str] = set()
        self.uploads: dict[str, Upload] = {}
        self.contributions: dict[str, Contribution] = {}
        self.outcome: Outcome | None = None
        self.timing: dict[str, float] = {}
        self.protection: dict[str, dict] = {}  # per party: how its connection was secured and it was identified
        self._start = time.monotonic()
        self._cond = threading.Condition()
        self._timer = threading.Timer(spec.deadline, self._expire)
        self._timer.daemon = True
        self._timer.start()

    # -- parties ---------------------------------------------------------------------------
    def _expected(self, party: str) -> None:
        if party not in self.spec.parties:
            raise SessionError(
                f"session '{self.spec.name}' expects no party '{party}' (it expects {', '.join(self.spec.parties)})"
            )

    def _open(self) -> None:
        if self.state == FAILED:
            raise SessionError(f"session '{self.spec.name}' failed: {self.error}")
        if self.state != WAITING:
            raise SessionError(f"session '{self.spec.name}' takes no more uploads")

    def seconds_left(self) -> float:
        return max(self.spec.deadline - (time.monotonic() - self._start), 0.0)

    def join(self, party: str) -> None:
        with self._cond:
            self._expected(party)
            self._open()
            if party in self.joined:
                raise SessionError(f"party '{party}' has joined session '{self.spec.name}' already")
            self.joined.add(party)
            self.timing.setdefault("first_join", time.monotonic() - self._start)

    def receive(self, header: session_pb2.UploadHeader, messages: Iterable[session_pb2.UploadMessage]) -> int:
        """Take one party's upload stream (after its header); returns the payload bytes received."""
        party = header.party
        with self._cond:
            self._expected(party)
            self._open()
            if party not in self.joined:
                raise SessionError(f"party '{party}' must Join before it uploads")
            if party in self.uploads:
                raise SessionError(f"party '{party}' has uploaded already")
            try:
                upload = Upload(party, header)  # validates the header
            except SessionError as exc:
                self.fail(str(exc))
                raise
            self.uploads[party] = upload
        try:
            for message in messages:
                upload.add(message)
            contribution = upload.finish()
        except SessionError as exc:
            self.fail(str(exc))
            raise
        except Exception as exc:  # the stream broke: the party went away mid-upload
            self.fail(f"party '{party}': upload broken off after {upload.received} of {upload.expected} bytes ({exc})")
            raise SessionError(self.error) from None
        with self._cond:
            self._open()
            self.contributions[party] = contribution
            if len(self.contributions) == len(self.spec.parties):
                self.state = CLUSTERING
                self.timing["uploaded"] = time.monotonic() - self._start
                threading.Thread(target=self._finish, name=f"cluster-{self.spec.name}", daemon=True).start()
            self._cond.notify_all()
        return upload.received

    # -- clustering ------------------------------------------------------------------------
    def _finish(self) -> None:
        try:
            t = time.monotonic()
            contributions = [self.contributions[p] for p in self.spec.parties]
            joined = join_ids({c.party: c.ids for c in contributions})
            combined = combine(contributions, joined)
            ask = requested_embedding([c for c in contributions if c.is_dissimilarity])
            if ask:
                combined = nmds(combined, ask, self.spec.clustering.seed)
            self.timing["join_seconds"] = time.monotonic() - t
            t = time.monotonic()
            labels = cluster(self.spec.clustering, combined)
            self.timing["cluster_seconds"] = time.monotonic() - t
            by_party = {}
            for c in contributions:
                own = np.full(len(c.ids), -2, dtype=np.int32)
                own[joined.index[c.party]] = labels
                by_party[c.party] = own
            outcome = Outcome(joined, combined, labels, by_party)
        except SessionError as exc:
            self.fail(str(exc))
            return
        except Exception as exc:  # a bug or a resource limit; the parties must still be told
            self.fail(f"clustering failed: {type(exc).__name__}: {exc}")
            return
        with self._cond:
            if self.state == CLUSTERING:
                self.outcome = outcome
                self.state = DONE
                self.timing["done"] = time.monotonic() - self._start
                self._timer.cancel()
            self._cond.notify_all()

    def fail(self, error: str) -> None:
        """End the session with ``error`` (kept if it has already ended); wakes every waiter."""
        with self._cond:
            if self.state in (DONE, FAILED):
                return
            self.state, self.error = FAILED, error
            self._timer.cancel()
            self._cond.notify_all()

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

    def wait(self, timeout: float | None = None) -> Outcome:
        """Block until the session is done; SessionError if it failed or ``timeout`` passed."""
        with self._cond:
            self._cond.wait_for(lambda: self.state in (DONE, FAILED), timeout)
            if self.state == FAILED:
                raise SessionError(f"session '{self.spec.name}' failed: {self.error}")
            if self.state != DONE:
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
            if p in self.uploads:
                h = self.uploads[p].header
                itemsize = np.dtype(h.arrays[0].dtype).itemsize
                predicted = predicted_payload(int(h.n_ids), [tuple(a.shape) for a in h.arrays], itemsize)
            out[p] = {"predicted": predicted, "payload": up["payload"], "serialized": up["serialized"],
                      "messages": up["messages"], "down": down}
        return out
