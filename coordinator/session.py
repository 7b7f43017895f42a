"""A clustering session: the parties it expects, their uploads, the join, the result.

The session is plain Python with no gRPC in it; the servicer adapts RPCs to it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from coordinator.clustering import ClusteringSpec, cluster, preload
from coordinator.combine import Combined, Contribution, combine
from coordinator.embed import nmds, requested_embedding
from coordinator.errors import SessionError
from coordinator.join import Join, join_ids
from coordinator.ledger import Ledger, predicted_payload
from coordinator.sums import PairSums
from coordinator.upload import MAX_UPLOAD_BYTES, Received, Upload, clip, shown
from protos.ppcsim.v1 import session_pb2
from protos.serde import CHUNK_BYTES

WAITING, CLUSTERING, DONE, FAILED = (
    session_pb2.WAITING,
    session_pb2.CLUSTERING,
    session_pb2.DONE,
    session_pb2.FAILED,
)
STATE_NAMES = {WAITING: "waiting", CLUSTERING: "clustering", DONE: "done", FAILED: "failed"}

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
        self.sums = PairSums()  # the dissimilarity uploads, summed as they arrive
        self.outcome: Outcome | None = None
        self.timing: dict[str, float] = {}
        self.protection: dict[str, dict] = {}  # per party: how its connection was secured and it was identified
        self._start = time.monotonic()
        self._cond = threading.Condition()
        self._on_fail: list[Callable[[], None]] = []  # called once when the session fails (open uploads)
        self._timer = threading.Timer(spec.deadline, self._expire)
        self._timer.daemon = True
        self._timer.start()

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

    def receive(
        self,
        header: session_pb2.UploadHeader,
        messages: Iterable[Received],
        cancel: Callable[[], None] | None = None,
    ) -> int:
        """Take one party's upload stream (after its header), as received; returns the payload bytes received.

        Once the header names a party that joined and may upload, any fault in
        the stream fails the session (the other parties are told). ``cancel``
        cuts the stream off if the session fails while it is being read (the
        deadline passes, another party fails it), STOP_GRACE seconds after, so
        that a party that stopped sending does not hold the coordinator.
        """
        party = header.party
        with self._cond:
            self._expected(party)
            self._open()
            if party not in self.joined:
                raise SessionError(f"party '{party}' must Join before it uploads")
            if party in self.uploads:
                raise SessionError(f"party '{party}' has uploaded already")
            try:
                # validates the header
                upload = Upload(party, header, self.spec.max_upload_bytes, self.sums, self.spec.keep_uploads)
            except SessionError as exc:
                self.fail(str(exc))
                raise
            except Exception as exc:  # noqa: BLE001 - a header no check foresaw must still fail cleanly
                self.fail(f"party '{party}': the upload header cannot be used ({type(exc).__name__}: {exc})")
                raise SessionError(self.error) from None
            self.uploads[party] = upload
            stopper: list[threading.Timer] = []

            def stop() -> None:
                if cancel is not None:
                    stopper.append(threading.Timer(STOP_GRACE, cancel))
                    stopper[-1].daemon = True
                    stopper[-1].start()

            self._on_fail.append(stop)
        try:
            for item in messages:
                if self.state == FAILED:
                    raise SessionError(f"party '{party}': upload stopped, the session failed: {self.error}")
                upload.add(item.message, item.data)
            contribution = upload.finish()
        except SessionError as exc:
            upload.release()
            self.fail(str(exc))
            raise
        except Exception as exc:  # the stream broke: the party went away mid-upload
            upload.release()
            why = str(exc) or type(exc).__name__
            self.fail(f"party '{party}': upload broken off after {upload.received} of {upload.expected} bytes ({why})")
            raise SessionError(self.error) from None
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
                self.timing["uploaded"] = time.monotonic() - self._start
                threading.Thread(target=self._finish, name=f"cluster-{self.spec.name}", daemon=True).start()
            self._cond.notify_all()
        return upload.received

    # -- clustering ------------------------------------------------------------------------
    def _finish(self) -> None:
        # scikit-learn imports while the join copies the uploads together (copies that release the GIL)
        threading.Thread(target=preload, name="preload", daemon=True).start()
        try:
            t = time.monotonic()
            contributions = [self.contributions[p] for p in self.spec.parties]
            joined = join_ids({c.party: c.ids for c in contributions})
            combined = combine(contributions, joined, self.sums)
            self.sums = PairSums()  # what combine did not take over (sums reordered to the join) can go
            if not self.spec.keep_uploads:  # combined holds what clustering reads; nothing else reads these
                for c in contributions:
                    c.arrays = {}
                    self.uploads[c.party].release()
            ask = requested_embedding([c for c in contributions if c.is_dissimilarity])
            if ask:
                combined = nmds(combined, ask, self.spec.clustering.seed)
            self.timing["join_seconds"] = time.monotonic() - t
            t = time.monotonic()
            labels = cluster(self.spec.clustering, combined, overwrite=not self.spec.keep_uploads)
            if not self.spec.keep_uploads:
                combined.dissimilarity = None  # used up by the clustering; nothing else reads it
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
        """End the session with ``error`` (kept if it has already ended); wakes every waiter
        and has every upload still being read cut off after STOP_GRACE seconds."""
        with self._cond:
            if self.state in (DONE, FAILED):
                return
            self.state, self.error = FAILED, clip(error)
            self._timer.cancel()
            self._cond.notify_all()
            watchers, self._on_fail = self._on_fail, []
        for stop in watchers:
            stop()

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
