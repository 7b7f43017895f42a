"""Secure-aggregation k-means: the coordinator as the arbiter of Lloyd's rounds.

The vertical k-means of production federated systems (FATE's HeteroKmeans,
for example): every party keeps its normalised columns and its own block of
each centre; in every round it sends the squared distances of its records to
its centre blocks, masked so that only the sum over all parties is readable;
the arbiter adds them (modulo 2^64), assigns each record to its nearest
centre and returns the labels, from which each party updates its own centre
block. The clustering is Lloyd's k-means exactly (up to the fixed-point scale,
see parties.secagg), at the cost of many rounds of m * k values per party.

The arbiter learns, in every round, the squared distance of every joined
record to every centre (the sum over parties) and so the labels and cluster
sizes; it never sees a party's values, a party's partial distances or a
centre block (each party's post is uniformly random without its pair secrets).

Alignment reuses the session's Upload: each party uploads its (pseudonymous)
ids with no arrays; once all are in, the session joins them and starts the
rounds here (``begin``) instead of clustering. Every message is recorded in
the session's ledger like any other, and counted per round.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coordinator.clustering import MPYC, ROUNDS, SECURE
from coordinator.errors import FailedPrecondition, InvalidArgument, PermissionDenied, SessionError
from coordinator.join import Join, check_clusters_fit, join_ids
from coordinator.ledger import DOWN, UP
from coordinator.messages import AlignmentHeader, Chunk, DistanceHeader, LabelsHeader
from coordinator.protocols.upload import MESSAGE_BYTES, MESSAGE_SLACK
from coordinator.text import shown
from coordinator.types import Combined, Outcome

#: Bytes of one masked fixed-point value (uint64) and of one label (int32).
VALUE_BYTES, LABEL_BYTES = 8, 4
#: What a secure-aggregation party names as its method in its (ids only) upload header.
METHOD = SECURE
#: The secure-aggregation contract served (AlignmentHeader.revision): parties check, Confirm, transcript-keyed masks.
REVISION = 2


@dataclass
class RoundRecord:
    """One round as the arbiter saw it."""

    index: int
    seconds: float = 0.0  # from the previous round's labels (or the alignment) to this round's
    changed: int = 0
    sizes: list[int] = field(default_factory=list)
    up_payload: int = 0
    up_serialized: int = 0
    up_messages: int = 0
    down_payload: int = 0
    down_serialized: int = 0
    down_messages: int = 0


class Arbiter:
    """The rounds of one secure-aggregation session.

    Its state is its own, under its own ``lock``: every method that reads or
    changes the rounds takes it. It never takes the session's lock while
    holding its own (the session's waits read the rounds through
    ``labels_of`` and ``seed_of``, which take it under the session's): what
    the rounds change in the session (the result) is handed to it once the
    lock is released.
    """

    def __init__(self, session, join: Join):
        spec = session.spec.clustering
        self.session, self.join, self.spec = session, join, spec
        self.lock = threading.Lock()
        self.m, self.k = len(join.ids), spec.n_clusters
        check_clusters_fit(self.k, self.m)
        # the initial centres: k distinct joined records drawn with the session seed (not a secret); for
        # k-means++ the first only, then one per seeding step (Arthur & Vassilvitskii's D^2 sampling)
        self.rng = np.random.default_rng(spec.seed)
        self.seeding_steps = self.k - 1 if spec.init == "k-means++" else 0
        if self.seeding_steps:
            self.init = self.rng.choice(self.m, 1)
            self.nearest = np.full(self.m, np.inf)  # each record's squared distance to its nearest centre so far
            self.step = 1
        else:
            self.init = self.rng.choice(self.m, self.k, replace=False)
            self.step = 0
        self.seeds: dict[int, LabelsHeader] = {}
        self.seeding_records: list[RoundRecord] = [RoundRecord(1)] if self.seeding_steps else []
        self.round = 0
        self.total = np.zeros((self.m, self.k), dtype=np.uint64)
        self.posted: set[str] = set()
        self.results: dict[int, tuple[LabelsHeader, np.ndarray]] = {}
        self.records: list[RoundRecord] = [RoundRecord(0)]
        self.done = False
        #: The last round's squared distances as the arbiter read them (the sum over parties), for the observer.
        self.seen: np.ndarray | None = None
        #: Round 0's: the squared distances of every record to the k records it drew as centres.
        self.seen_first: np.ndarray | None = None
        #: Each party's post of the current round as received (masked), kept when the session keeps uploads.
        self.posts: dict[str, np.ndarray] = {}
        self._mark = time.monotonic()
        #: MPC sessions: the relay (a coordinator.protocols.mpc.Hub, which coordinator.protocols.mpc.open_hub sets;
        #: typed loosely so that this module, which the MPC builds on, does not import it).
        self.hub: Any = None

    @property
    def seeding(self) -> bool:
        """Whether the k-means++ seeding steps are still going."""
        return 0 < self.step <= self.seeding_steps

    def record(self, round_: int, direction: str, payload: int, serialized: int, seeding: bool = False) -> None:
        """Count one message of round (or seeding step) ``round_`` (called by coordinator.handlers.count)."""
        with self.lock:
            self._record(round_, direction, payload, serialized, seeding)

    def _record(self, round_: int, direction: str, payload: int, serialized: int, seeding: bool) -> None:
        records, index = (self.seeding_records, round_ - 1) if seeding else (self.records, round_)
        if 0 <= index < len(records):
            r = records[index]
            if direction == UP:
                r.up_payload, r.up_serialized, r.up_messages = (r.up_payload + payload,
                                                                 r.up_serialized + serialized, r.up_messages + 1)
            else:
                r.down_payload, r.down_serialized, r.down_messages = (r.down_payload + payload,
                                                                      r.down_serialized + serialized,
                                                                      r.down_messages + 1)

    def check(self, header: DistanceHeader) -> None:
        """InvalidArgument unless ``header`` is the next post this party owes."""
        party, name = header.party, self.session.spec.name
        if self.done:
            raise InvalidArgument(f"party '{party}': session '{name}' has finished its rounds")
        if header.seeding != self.seeding or header.round != (self.step if self.seeding else self.round):
            now = f"seeding step {self.step}" if self.seeding else f"round {self.round}"
            asked = f"seeding step {header.round}" if header.seeding else f"round {header.round}"
            raise InvalidArgument(f"party '{party}': posted {asked}, but session '{name}' is in {now}")
        if party in self.posted:
            raise InvalidArgument(f"party '{party}': posted round {header.round} twice")
        if header.seeding and (header.rows != self.m or header.cols != 1):
            raise InvalidArgument(f"party '{party}': seeding step {header.round} is {header.rows} x {header.cols}; "
                                  f"the session needs {self.m} joined records x 1 centre")
        if not header.seeding and (header.rows != self.m or header.cols != self.k):
            raise InvalidArgument(f"party '{party}': round {header.round} is {header.rows} x {header.cols}; the "
                                  f"session needs {self.m} joined records x {self.k} centres")
        if not header.masked and not self.session.spec.allow_unmasked:
            raise InvalidArgument(f"party '{party}': an unmasked post; session '{name}' takes masked partial "
                                  "distances only")

    def post(self, party: str, header: DistanceHeader, values: np.ndarray) -> Outcome | None:
        """Add ``party``'s post once all its values came (under the lock); the session's result if it was the
        last round's last post. InvalidArgument if the round was posted meanwhile (two streams at once)."""
        with self.lock:
            if self.seeding != header.seeding or header.round != (self.step if header.seeding else self.round) \
                    or party in self.posted:
                raise InvalidArgument(f"party '{party}': round {header.round} was posted meanwhile")
            previous = self.posts.get(party) if not header.seeding else None
            outcome = self.add(party, values)
        if previous is not None:  # the party's post of the round before, kept until now: let go
            self.session.budget.give(previous.nbytes)
        return outcome

    def add(self, party: str, values: np.ndarray) -> Outcome | None:
        """One party's post of this round, added modulo 2^64; the round's labels once every party posted (and the
        session's result after the last round). Call with ``lock`` held."""
        if self.seeding:
            self._add_seeding(party, values)
            return None
        np.add(self.total, values.reshape(self.m, self.k), out=self.total)  # uint64 wraps: modulo 2^64
        if self.session.spec.keep_uploads:
            self.posts[party] = values.reshape(self.m, self.k)
        self.posted.add(party)
        if len(self.posted) == len(self.session.spec.parties):
            return self._assign()
        return None

    def _add_seeding(self, party: str, values: np.ndarray) -> None:
        if not self.posted:
            self.column = np.zeros(self.m, dtype=np.uint64)
        np.add(self.column, values, out=self.column)
        self.posted.add(party)
        if len(self.posted) < len(self.session.spec.parties):
            return
        # D^2 sampling: the next centre with probability proportional to the squared distance to the nearest so far
        np.minimum(self.nearest, np.maximum(self.column.view(np.int64), 0).astype(np.float64), out=self.nearest)
        total = self.nearest.sum()
        centre = int(self.rng.choice(self.m, p=self.nearest / total)) if total > 0 else int(self.rng.integers(self.m))
        self.init = np.append(self.init, centre)
        now = time.monotonic()
        record = self.seeding_records[self.step - 1]
        record.seconds, self._mark = now - self._mark, now
        self.seeds[self.step] = LabelsHeader(round=self.step, seeding=True, centre=centre)
        self.posted.clear()
        self.step += 1
        if self.seeding:
            self.seeding_records.append(RoundRecord(self.step))

    def _changed(self, labels: np.ndarray) -> int:
        previous = self.results.get(self.round - 1)
        return self.m if previous is None else int(np.count_nonzero(labels != previous[1]))

    def choose(self, signed: np.ndarray) -> tuple[np.ndarray, bool]:
        """This round's labels from the summed distances ``signed`` (m x k, int64), and whether the rounds end.

        Each record's nearest centre (exact: integers, ties to the first
        centre); the rounds end once at most tol * m labels changed, or at
        round max_iter. The parties cannot check this choice (they never see
        the sums): an active arbiter may answer any labels here, the same to
        every party (docs/secure-aggregation.md, "Against an active
        coordinator").
        """
        labels = np.argmin(signed, axis=1).astype(np.int32)
        done = (self.round > 0 and self._changed(labels) <= self.spec.tol * self.m) or self.round >= self.spec.max_iter
        return labels, done

    def _assign(self) -> Outcome | None:
        signed = self.total.view(np.int64)  # the sum of every party's e = round(d * 2^scale_bits)
        labels, done = self.choose(signed)
        changed = self._changed(labels)
        sizes = np.bincount(labels, minlength=self.k).tolist()
        self.seen = signed.copy()
        if self.round == 0:
            self.seen_first = self.seen
        now = time.monotonic()
        record = self.records[self.round]
        record.seconds, record.changed, record.sizes = now - self._mark, changed, sizes
        self._mark = now
        header = LabelsHeader(round=self.round, done=done, changed=changed, sizes=tuple(sizes), n_labels=self.m)
        self.results[self.round] = (header, labels)
        self.results.pop(self.round - 2, None)  # every party has fetched it: it posted the round after
        self.total[:] = 0
        self.posted.clear()
        if done:
            self.done = True
            return self.outcome(labels)
        self.round += 1
        self.records.append(RoundRecord(self.round))
        return None

    def labels_of(self, round_: int) -> tuple[LabelsHeader, np.ndarray] | None:
        """Round ``round_``'s header and labels once every party posted it, else None."""
        with self.lock:
            return self.results.get(round_)

    def labels_ready(self, round_: int) -> bool:
        """Whether round ``round_`` is over (its labels are out, or already dropped)."""
        with self.lock:
            return round_ in self.results or round_ < self.round - 1

    def seed_of(self, step: int) -> LabelsHeader | None:
        """The header naming seeding step ``step``'s centre, once every party posted the step."""
        with self.lock:
            return self.seeds.get(step)

    def outcome(self, labels: np.ndarray, description: str | None = None) -> Outcome:
        """The session's result: ``labels`` (the joined records', in the join's order) in each party's row order."""
        by_party = {}
        for party in self.session.spec.parties:
            own = np.full(len(self.session.contributions[party].ids), -2, dtype=np.int32)
            own[self.join.index[party]] = labels
            by_party[party] = own
        parts = ", ".join(f"{p} ({len(self.session.contributions[p].ids)} rows)" for p in self.session.spec.parties)
        combined = Combined(description=description or f"k-means by secure aggregation over {parts}: "
                                                       f"{len(self.records)} rounds of masked partial squared distances")
        return Outcome(self.join, combined, labels, by_party)

    def summary(self) -> dict:
        """The rounds for the report."""
        return {
            "n_joined": self.m,
            "init": [int(i) for i in self.init],
            "init_method": self.spec.init,
            "seeding_steps": self.seeding_steps,
            "per_seeding_step": [r.__dict__ for r in self.seeding_records],
            "rounds": len(self.records) if self.done else self.round,
            "converged": bool(self.done and self.records[-1].changed <= self.spec.tol * self.m and len(self.records) > 1),
            "per_round": [r.__dict__ for r in self.records],
        }


def begin(session) -> Arbiter:
    """Join the parties' ids (their ids-only uploads) and open round 0; called by the session once all are in
    (an MPC session's relay is then opened on this join by coordinator.protocols.mpc.open_hub)."""
    protocol = session.spec.clustering.protocol
    contributions = {p: session.contributions[p] for p in session.spec.parties}
    for c in contributions.values():
        if c.method != protocol or c.names:
            raise SessionError(f"party '{c.party}': a {protocol} session takes an upload of ids only "
                               f"(method '{protocol}', no arrays), got method '{shown(c.method)}' with "
                               f"{len(c.names)} arrays")
    join = join_ids({p: c.ids for p, c in contributions.items()})
    return Arbiter(session, join)


# -- what the RPCs ask of the rounds (coordinator.handlers decodes, counts and answers) -------------

def arbiter_of(session, party: str, *protocols: str) -> Arbiter:
    """The session's rounds once every party's ids are joined, if ``party`` may ask and the session runs one of
    ``protocols``."""
    if not session.expects(party):
        raise PermissionDenied(f"session '{session.spec.name}' expects no party '{shown(party)}'")
    if session.spec.clustering.protocol not in protocols:
        raise SessionError(f"session '{session.spec.name}' does not cluster by {' or '.join(protocols)}")
    return rounds_of(session, timeout=session.seconds_left() + 1.0)


def rounds_of(session, timeout: float | None = None) -> Arbiter:
    """The session's rounds once every party's ids are joined (coordinator.protocols.builtin.Rounds.begin);
    SessionError if the session fails first. Under PROBING, WouldWait instead of waiting."""
    session.wait_for(lambda: session.arbiter is not None, timeout, lambda: "not every party's ids are in yet")
    return session.arbiter


def _arbiter(session, party: str) -> Arbiter:
    return arbiter_of(session, party, SECURE)


def distances_arbiter(session, party: str) -> Arbiter:
    """The rounds, for a party asking for labels: FailedPrecondition in a session that opens the labels only
    (there the parties open them among themselves: GetLabels has nothing to answer)."""
    if session.expects(party) and session.spec.clustering.labels_only:
        raise FailedPrecondition(f"party '{party}': session '{session.spec.name}' opens the labels only (reveal = "
                                 "\"labels\"): the parties open each round's labels among themselves over Relay")
    return arbiter_of(session, party, SECURE)


def alignment_of(session, party: str) -> Arbiter:
    """The rounds, for a party asking for its alignment: once every party's ids are joined (and, in an MPC
    session with a helper, once the helper's key is made)."""
    arbiter = arbiter_of(session, party, *ROUNDS)
    if arbiter.hub is not None and session.spec.clustering.helper:  # its header names the helper's key
        helper_key(session, arbiter.hub, timeout=session.seconds_left() + 1.0)
    return arbiter


def alignment(session, arbiter: Arbiter, party: str) -> tuple[AlignmentHeader, np.ndarray]:
    """This party's AlignmentHeader and its rows' positions in the join's order."""
    spec = arbiter.spec
    header = AlignmentHeader(
        n_joined=arbiter.m, n_rows=len(session.contributions[party].ids), n_clusters=arbiter.k,
        init=tuple(int(i) for i in arbiter.init[: 1 if arbiter.seeding_steps else arbiter.k]),
        scale_bits=spec.scale_bits, max_iter=spec.max_iter, parties=tuple(session.spec.parties),
        seeding_steps=arbiter.seeding_steps, revision=REVISION, **(mpc_fields(session) if arbiter.hub else {}),
        reveal=spec.reveal if spec.protocol == SECURE else "")
    return header, arbiter.join.index[party]


def ready_to_post(session, party: str) -> Arbiter:
    """The rounds, for a party about to post: FailedPrecondition at once if its own ids are not in (it cannot
    post before its id upload) or if not every party has confirmed the alignment (coordinator.protocols.confirm:
    a post before it would be taken as round 0's), else the rounds."""
    if session.expects(party) and session.spec.clustering.labels_only:
        raise FailedPrecondition(f"party '{party}': session '{session.spec.name}' opens the labels only (reveal = "
                                 "\"labels\"): the parties compute the argmin among themselves over Relay; the "
                                 "arbiter takes no distances")
    if session.expects(party) and session.spec.clustering.protocol == SECURE:
        if party not in session.contributions:
            raise FailedPrecondition(f"party '{party}': PostDistances before its id upload was accepted (upload the "
                                     "ids, then GetAlignment, then Confirm, then post)")
        if not session.confirmations.complete():  # no wait: a post before the alignment is refused, not held
            raise FailedPrecondition(f"party '{party}': PostDistances before every party's Confirm (GetAlignment, "
                                     "then Confirm, then post)")
    return _arbiter(session, party)


#: Most columns one MPC party may declare (its upload's parameter ``columns``); what the declared columns cost the
#: coordinator's helper is also charged to the session's memory budget before the MPC starts (coordinator.protocols.mpc).
MAX_MPC_COLUMNS = 10_000


def columns(contribution) -> int:
    """The columns an MPC party inputs: its ids-only upload header's parameter ``columns``."""
    value = contribution.params.get("columns", "")
    # ASCII digits only: str.isdigit() takes "²" and other digits int() refuses
    if not (value.isascii() and value.isdigit()) or not 0 < int(value) <= MAX_MPC_COLUMNS:
        raise InvalidArgument(f"party '{shown(contribution.party)}': an MPC party's ids-only upload names the number "
                              f"of columns it inputs as parameter 'columns' (an integer from 1 to {MAX_MPC_COLUMNS}), "
                              f"got '{shown(value)}'")
    return int(value)


def helper_key(session, hub, timeout: float | None = None) -> bytes:
    """The MPC helper's public key once the coordinator's helper made it (coordinator.protocols.mpc); SessionError
    if the session fails first. Under PROBING, WouldWait instead of waiting."""
    session.wait_for(lambda: bool(hub.helper_key), timeout, lambda: "the coordinator's helper did not start in time")
    return hub.helper_key


def mpc_fields(session) -> dict:
    """The AlignmentHeader's fields of an MPC session: its parties (the helper last), their columns, SecFxp."""
    spec = session.spec.clustering
    hub = session.arbiter.hub
    fields = {"mpc_parties": tuple(hub.parties),
              "mpc_columns": tuple(columns(session.contributions[p]) if p in session.contributions else 0
                                   for p in hub.parties),
              "mpc_bits": spec.mpc_bits, "mpc_frac": spec.mpc_frac, "reveal_centres": spec.reveal_centres,
              "mpc_engine": "" if spec.engine == MPYC else spec.engine}
    if spec.helper:  # the helper's key, once the coordinator's helper made it (a wait: WouldWait under PROBING)
        fields.update(mpc_helper=hub.parties[-1],
                      mpc_helper_key=helper_key(session, hub, timeout=session.seconds_left() + 1.0))
    return fields


def begin_post(session, arbiter: Arbiter, header: DistanceHeader) -> int:
    """Check that ``header`` is the post its party owes now and take the post's bytes from the session's budget;
    the bytes the post must carry."""
    with arbiter.lock:
        arbiter.check(header)
    want = arbiter.m * (1 if header.seeding else arbiter.k) * VALUE_BYTES
    session.budget.take(want, f"party '{header.party}': round {header.round}'s post")
    return want


def take_post(session, arbiter: Arbiter, header: DistanceHeader, messages, want: int, count) -> int:
    """The values of one post after its header (each a coordinator.messages.Received), checked message by
    message and added once all are in; ``count(item)`` counts each message that belongs to the post. Returns
    the payload bytes received; the post's budget is given back unless the session keeps uploads."""
    try:
        received = _take_post(session, arbiter, header, messages, want, count)
    except BaseException:
        session.budget.give(want)
        raise
    if not session.spec.keep_uploads or header.seeding:  # added into the total and let go; else kept (the
        session.budget.give(want)                           # party's latest round's, for the observer)
    return received


def _take_post(session, arbiter: Arbiter, header: DistanceHeader, messages, want: int, count) -> int:
    party, round_ = header.party, header.round
    buffer = bytearray(want)
    received = 0
    most = MESSAGE_SLACK + want // MESSAGE_BYTES
    for n, item in enumerate(messages, start=2):
        if n > most + 1:
            raise InvalidArgument(f"party '{party}': round {round_}: more than {most} messages after the header for "
                                  f"{want} bytes (send chunks of up to chunk_bytes)")
        chunk = item.part if isinstance(item.part, Chunk) else None
        if chunk is not None and not item.payload:
            raise InvalidArgument(f"party '{party}': round {round_}: message {n} is a chunk with no bytes")
        if item.payload > session.spec.chunk_bytes:
            raise InvalidArgument(f"party '{party}': round {round_}: a chunk of {item.payload} bytes; each is at most "
                                  f"chunk_bytes ({session.spec.chunk_bytes})")
        count(item)
        if chunk is None or chunk.array != 0:
            raise InvalidArgument(f"party '{party}': round {round_}: a message after the header that is not a "
                                  "chunk of array 0")
        if chunk.offset != received or received + item.payload > want:
            raise InvalidArgument(f"party '{party}': round {round_}: chunk at byte {chunk.offset} of {want}, "
                                  f"expected {received}")
        buffer[received : received + item.payload] = chunk.data
        received += item.payload
    if received != want:
        raise InvalidArgument(f"party '{party}': round {round_}: {received} of {want} bytes")
    outcome = arbiter.post(party, header, np.frombuffer(buffer, dtype="<u8"))
    if outcome is not None:
        session.complete(outcome)
    session.notify()
    return received


def seeding_step(session, arbiter: Arbiter, party: str, step: int) -> LabelsHeader:
    """Seeding step ``step``'s header naming its centre, once every party posted the step."""
    if not 1 <= step <= arbiter.seeding_steps:
        raise InvalidArgument(f"party '{party}': there is no seeding step {step} (the session has "
                              f"{arbiter.seeding_steps})")
    session.wait_for(lambda: arbiter.seed_of(step) is not None, session.seconds_left() + 1.0,
                     lambda: f"seeding step {step} did not finish in time")
    header = arbiter.seed_of(step)
    assert header is not None
    return header


def round_labels(session, arbiter: Arbiter, party: str, round_: int) -> tuple[LabelsHeader, np.ndarray]:
    """Round ``round_``'s header and labels, once every party posted it."""
    if round_ > arbiter.round:
        raise InvalidArgument(f"party '{party}': asked for round {round_}; the session is in round {arbiter.round}")
    session.wait_for(lambda: arbiter.labels_ready(round_), session.seconds_left() + 1.0,
                     lambda: f"round {round_} did not finish in time")
    found = arbiter.labels_of(round_)
    if found is None:
        raise InvalidArgument(f"party '{party}': round {round_}'s labels are gone (rounds end once every party has "
                              "posted the next one)")
    return found


# -- accounting ----------------------------------------------------------------------------------

def predicted(m: int, k: int, rounds: int, rows: int, seeding_steps: int = 0) -> dict[str, int]:
    """Payload bytes one party sends and receives in a secure-aggregation session.

    Up: ``rounds * m * k * 8`` (the masked partial distances, uint64), plus
    ``seeding_steps * m * 8`` for k-means++ seeding (its answers carry no
    array: the chosen centre is in the header). Down:
    ``m * 4`` for the alignment, ``rounds * m * 4`` for the labels and
    ``rows * 4`` for the final result in the party's own row order (int32).
    The key exchange carries no array payload: 32 bytes of public key up
    (Join) and 32 per party down (GetPeers), counted in the serialised bytes.
    """
    return {"up": (rounds * k + seeding_steps) * m * VALUE_BYTES, "down": (m + rounds * m + rows) * LABEL_BYTES}


def accounting(session) -> dict:
    """The report's view of a secure-aggregation session: rounds, bytes per round and party, the prediction."""
    arbiter = session.arbiter
    if arbiter is None:
        return {"protocol": SECURE, "rounds": 0}
    out = arbiter.summary()
    rounds = len(arbiter.records) if arbiter.done else arbiter.round
    by_party = {}
    for party in session.spec.parties:
        rows = len(session.contributions[party].ids)
        measured = {UP: 0, DOWN: 0}
        keys = 0
        for e in session.ledger.entries():
            if e.party != party:
                continue
            measured[e.direction] += e.payload
            if e.rpc in ("Join", "GetPeers", "PostSealedKeys", "GetSealedKey"):
                keys += e.serialized
        pred = predicted(arbiter.m, arbiter.k, rounds, rows, arbiter.seeding_steps)
        by_party[party] = {"predicted": pred, "payload": measured, "key_exchange_serialized": keys,
                           "exact": pred["up"] == measured[UP] and pred["down"] == measured[DOWN]}
    out.update(protocol=SECURE, reveal=arbiter.spec.reveal, scale_bits=arbiter.spec.scale_bits, by_party=by_party)
    return out
