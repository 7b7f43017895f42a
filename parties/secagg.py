"""A party's side of secure-aggregation k-means: fixed point, pairwise masks, Lloyd's rounds on its own columns.

Each round r the party computes the squared distances of its joined records
(its own normalised columns) to its own block of every centre, an m x k
matrix D_p, so that the squared distance of record i to centre j is
sum_p D_p[i, j] (squared Euclidean distances add over column blocks). It
sends D_p in fixed point, ``e = round(D_p * 2^scale_bits)`` as int64 read as
uint64, plus a mask for each other party q: with q after it in the session's
order it adds M_pq,r, with q before it subtracts M_qp,r (mod 2^64). The masks
are AES-256-CTR keystreams (``cryptography``) under the pair's X25519/HKDF
secret (``KeyPair.pair_secret``, label "mask") with the round in the initial
counter block, so they cancel exactly in the arbiter's sum and no two rounds
or pairs reuse a keystream. The arbiter returns the labels; the party moves
each of its centre blocks to the mean of its records in that cluster (an
empty cluster keeps its centre) and the next round starts. The exact wire
format is in docs/secure-aggregation.md and the .proto.

Against an active coordinator (docs/secure-aggregation.md, "Against an
active coordinator") the party checks the alignment alone before it posts
anything (``check_alignment``), confirms it to every other party through
the coordinator with MACs under keys the coordinator cannot compute
(``confirm_alignment``), keys each post's masks by the transcript of what it
was told (``Transcript``), so that labels told differently to two parties
give the arbiter noise, and checks every answer after that (``check_labels``,
``check_result``).

The rounds are written against a small link (``Link``): over gRPC
(``parties.client.GrpcLink``) in a party process, or straight into the
coordinator's handler functions in one process (ppcsim.run.inprocess.simulate_secure).
They read the plain values ``parties.serde`` decodes (``AlignmentHeader``,
``LabelsHeader``, ``ConfirmTag``), and hand the link the DistanceMessage stream
``parties.serde.distance_messages`` builds.
"""

from __future__ import annotations

import hashlib
import hmac
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from parties.errors import PartyError
from parties.keys import KeyPair
from parties.protocols.terms import Terms
from parties.serde import (
    AlignmentHeader,
    ConfirmTag,
    LabelsHeader,
    distance_messages,
    read_int32,  # noqa: F401 - the in-process link (ppcsim.run.inprocess) imports it from here
    upload_messages,
)

#: Default fixed-point scale: values travel as round(value * 2^SCALE_BITS); each rounding errs by at most 2^-33.
SCALE_BITS = 32
#: Seeding step s of k-means++ masks with the keystream of "round" SEEDING_ROUNDS + s: never a Lloyd round's.
SEEDING_ROUNDS = 1 << 32
#: What the party names as its method in its ids-only upload header.
METHOD = "secure_aggregation"
#: The fixed-point scales a party accepts: the range a scenario's [clustering] 'scale_bits' may take.
SCALE_BITS_RANGE = (8, 48)
#: Most Lloyd rounds (max_iter) a party agrees to run, however many the coordinator announces.
MAX_ITER_LIMIT = 100_000
#: The secure-aggregation contract this party speaks (AlignmentHeader.revision; docs/secure-aggregation.md).
REVISION = 2


# -- fixed point -----------------------------------------------------------------------------------

def encode(values: np.ndarray, scale_bits: int = SCALE_BITS, parties: int = 1) -> np.ndarray:
    """``round(values * 2^scale_bits)`` as two's-complement int64 read as uint64 (sums then wrap modulo 2^64).

    Raises PartyError when ``parties`` such values could overflow the signed
    sum (|value| >= 2^(62 - scale_bits) / parties): lower ``scale_bits``.
    """
    limit = 2.0 ** (62 - scale_bits) / max(parties, 1)
    top = float(np.max(np.abs(values))) if values.size else 0.0
    if not np.isfinite(top) or top >= limit:
        raise PartyError(f"a partial squared distance of {top:.4g} does not fit the fixed-point scale 2^{scale_bits} "
                         f"with {parties} parties (the limit is {limit:.4g}); lower [clustering] 'scale_bits'")
    scaled = np.multiply(values, 2.0**scale_bits)
    np.rint(scaled, out=scaled)
    return scaled.astype(np.int64).view(np.uint64)


def decode(total: np.ndarray, scale_bits: int = SCALE_BITS) -> np.ndarray:
    """The value a sum of encodings stands for: the uint64 sum read as int64, over 2^scale_bits."""
    return total.view(np.int64) / 2.0**scale_bits


# -- masks -----------------------------------------------------------------------------------------

def counter_block(round_: int) -> bytes:
    """AES-CTR's initial counter block for round ``round_``: the round as 8 bytes big-endian, then 8 zero bytes."""
    return int(round_).to_bytes(8, "big") + bytes(8)


def mask(secret: bytes, round_: int, n: int) -> np.ndarray:
    """``n`` uint64 of AES-256-CTR keystream under ``secret`` (32 bytes) for round ``round_``, little-endian."""
    out = np.zeros(n, dtype="<u8")
    encryptor = Cipher(algorithms.AES(secret), modes.CTR(counter_block(round_))).encryptor()
    buffer = out.view(np.uint8).data
    encryptor.update_into(buffer, buffer)  # keystream XOR zeros, in place
    encryptor.finalize()
    return out


@dataclass(frozen=True)
class PairMask:
    """One pair's mask secret as this party uses it: +1 to add (the peer comes after us), -1 to subtract."""

    peer: str
    sign: int
    secret: bytes


def pair_masks(pair: KeyPair, peers: dict[str, bytes], order: list[str], session: str, me: str) -> list[PairMask]:
    """Our mask secret with every other party: HKDF of X25519 under label "mask", names in session order."""
    mine = order.index(me)
    out = []
    for i, name in enumerate(order):
        if name == me:
            continue
        a, b = (me, name) if mine < i else (name, me)
        out.append(PairMask(name, 1 if mine < i else -1, pair.pair_secret(peers[name], "mask", session, a, b)))
    return out


class Transcript:
    """What the arbiter told this party so far, as a SHA-256 chain that keys each post's masks (``keyed``).

    It starts from the confirmed fields (``FIELDS``, each as its length in 8
    bytes big-endian then its bytes, after "ppcsim.v1 transcript" 0x00) and
    takes in every answer: a seeding step's centre (8 bytes big-endian), a
    round's labels (int32 little-endian), each as ``digest = SHA-256(digest ||
    answer)``. Two parties' masks cancel only while they were told the same
    thing; a coordinator that tells two parties different labels gets a sum
    that is uniformly random, not one party's distances.
    """

    def __init__(self, fields: dict[str, bytes]):
        start = b"ppcsim.v1 transcript\x00" + b"".join(len(fields[f]).to_bytes(8, "big") + fields[f] for f in FIELDS)
        self.digest = hashlib.sha256(start).digest()

    def add(self, answer: bytes) -> None:
        self.digest = hashlib.sha256(self.digest + answer).digest()


def keyed(masks: list[PairMask], transcript: Transcript) -> list[PairMask]:
    """Each pair's mask key for the next post: HMAC-SHA256(pair secret, transcript digest)."""
    return [PairMask(pm.peer, pm.sign, hmac.new(pm.secret, transcript.digest, hashlib.sha256).digest())
            for pm in masks]


def apply_masks(values: np.ndarray, masks: list[PairMask], round_: int, scratch: np.ndarray | None = None) -> np.ndarray:
    """``values`` (uint64, flat) plus or minus each pair's mask of this round, modulo 2^64, in place.

    ``scratch``: a uint64 buffer of at least ``values.size`` to draw each
    keystream into (reused across rounds, it spares a fresh allocation per
    pair and round)."""
    n = values.size
    buffer = np.empty(n, dtype="<u8") if scratch is None or scratch.size < n else scratch[:n]
    view = buffer.view(np.uint8).data
    for pm in masks:
        buffer[:] = 0
        encryptor = Cipher(algorithms.AES(pm.secret), modes.CTR(counter_block(round_))).encryptor()
        encryptor.update_into(view, view)  # keystream XOR zeros, in place: mask(pm.secret, round_, n)
        encryptor.finalize()
        (np.add if pm.sign > 0 else np.subtract)(values, buffer, out=values)
    return values


# -- Lloyd's step on one column block --------------------------------------------------------------

def partial_distances(X: np.ndarray, centres: np.ndarray, x_norms: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances of the rows of ``X`` to those of ``centres`` (m x k), this block's part."""
    if x_norms is None:
        x_norms = np.einsum("ij,ij->i", X, X)
    D = X @ centres.T
    D *= -2.0
    D += x_norms[:, None]
    D += np.einsum("ij,ij->i", centres, centres)[None, :]
    return D


def update_centres(X: np.ndarray, labels: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Each centre block moved to the mean of its cluster's rows; an empty cluster keeps its centre."""
    k = len(centres)
    counts = np.bincount(labels, minlength=k)
    sums = _block_sums(X, labels, np.zeros_like(centres))
    out = centres.copy()
    full = counts > 0
    out[full] = sums[full] / counts[full, None]
    return out


def _block_sums(X: np.ndarray, labels: np.ndarray, out: np.ndarray) -> np.ndarray:
    for c in range(X.shape[1]):
        out[:, c] = np.bincount(labels, weights=X[:, c], minlength=len(out))
    return out


# -- what the coordinator told this party: checked alone, then against the other parties ------------

def _refuse(what: str) -> PartyError:
    return PartyError(f"refusing the coordinator's alignment: {what}; this party posts nothing (a coordinator "
                      "that sends this is broken or lying)")


def check_alignment(header: AlignmentHeader, positions: np.ndarray, n_rows: int, me: str,
                    parties: list[str] | None = None) -> None:
    """PartyError unless the alignment is one this party can take part in honestly.

    What one party can check alone (docs/secure-aggregation.md, "What a
    party checks"): the rows it uploaded, the parties (those it joined with,
    itself among them, none twice), as many positions as joined records, each
    a row it uploaded and none twice (a repeated row would make its partial
    distances those of one record, or 0, and leave the masked sum the other
    parties' alone), centres that are joined records, none twice, a
    fixed-point scale and round limit in the documented ranges.
    """
    if header.revision != REVISION:
        raise _refuse(f"it is of revision {header.revision} of the secure-aggregation contract; this party speaks "
                      f"revision {REVISION} (it checks the alignment with the other parties before round 0)")
    order = list(header.parties)
    if parties is not None and order != list(parties):
        raise _refuse(f"it names the parties {order}, but Join named {list(parties)}")
    if me not in order or len(set(order)) != len(order):
        raise _refuse(f"its parties {order} do not name this party ('{me}') exactly once each")
    if header.n_rows != n_rows:
        raise _refuse(f"it says this party uploaded {header.n_rows} rows; it uploaded {n_rows}")
    m, k = int(header.n_joined), int(header.n_clusters)
    if not 1 <= m <= n_rows:
        raise _refuse(f"it joins {m} records, but this party uploaded {n_rows}")
    if len(positions) != m:
        raise _refuse(f"it gives {len(positions)} positions for {m} joined records")
    if positions.min() < 0 or positions.max() >= n_rows:
        bad = int(positions[(positions < 0) | (positions >= n_rows)][0])
        raise _refuse(f"position {bad} is not one of this party's rows (0 to {n_rows - 1})")
    if len(np.unique(positions)) != m:
        values, counts = np.unique(positions, return_counts=True)
        raise _refuse(f"row {int(values[counts > 1][0])} is joined {int(counts.max())} times; a row joins at most "
                      "once")
    if not 1 <= k <= m:
        raise _refuse(f"{k} clusters for {m} joined records")
    if header.seeding_steps not in (0, k - 1):
        raise _refuse(f"{header.seeding_steps} seeding steps for {k} clusters (k-means++ takes {k - 1}, random "
                      "centres none)")
    init = [int(i) for i in header.init]
    want = 1 if header.seeding_steps else k
    if len(init) != want or len(set(init)) != len(init) or any(not 0 <= i < m for i in init):
        raise _refuse(f"initial centres {init[:8]}: {want} distinct joined records (0 to {m - 1}) are needed")
    low, high = SCALE_BITS_RANGE
    if not low <= header.scale_bits <= high:
        raise _refuse(f"scale_bits = {header.scale_bits}; the fixed-point scale is {low} to {high} bits")
    if not 1 <= header.max_iter <= MAX_ITER_LIMIT:
        raise _refuse(f"max_iter = {header.max_iter}; a party runs 1 to {MAX_ITER_LIMIT} rounds")


#: The fields the parties confirm to each other, in this order (docs/secure-aggregation.md gives their bytes).
FIELDS = ("parties", "n_joined", "n_clusters", "init", "seeding_steps", "scale_bits", "max_iter", "records")


def confirmed_fields(header: AlignmentHeader, positions: np.ndarray, ids: np.ndarray) -> dict[str, bytes]:
    """The bytes of every field of ``FIELDS`` as this party was told it.

    ``records`` is the joined records as this party holds them, in the
    join's order: its uploaded id (16 bytes of pseudonym, or the id's text in
    UTF-8 followed by one 0x00) at each position. Equal at two parties exactly
    when the coordinator joined the same records in the same order for both.
    """
    joined = ids[positions.astype(np.intp)]
    if joined.dtype.kind == "S":
        records = np.ascontiguousarray(joined).tobytes()
    else:
        records = b"".join(str(i).encode() + b"\x00" for i in joined.tolist())
    return {
        "parties": b"\x00".join(p.encode() for p in header.parties),
        "n_joined": int(header.n_joined).to_bytes(8, "big"),
        "n_clusters": int(header.n_clusters).to_bytes(4, "big"),
        "init": b"".join(int(i).to_bytes(8, "big") for i in header.init),
        "seeding_steps": int(header.seeding_steps).to_bytes(4, "big"),
        "scale_bits": int(header.scale_bits).to_bytes(4, "big"),
        "max_iter": int(header.max_iter).to_bytes(4, "big"),
        "records": records,
    }


def _tag(key: bytes, sender: str, to: str, field_: str, value: bytes) -> bytes:
    """HMAC-SHA256(key, "ppcsim.v1 confirm" 0x00 sender 0x00 to 0x00 field 0x00 value)."""
    prefix = b"\x00".join(x.encode() for x in ("ppcsim.v1 confirm", sender, to, field_)) + b"\x00"
    return hmac.new(key, prefix + value, hashlib.sha256).digest()


def _confirm_keys(pair: KeyPair, peers: dict[str, bytes], order: list[str], session: str, me: str) -> dict[str, bytes]:
    """Our confirmation key with every other party: HKDF of X25519 under label "confirm", names in session order."""
    mine = order.index(me)
    return {name: pair.pair_secret(peers[name], "confirm", session, *((me, name) if mine < i else (name, me)))
            for i, name in enumerate(order) if name != me}


def confirm_alignment(link: Link, pair: KeyPair, peers: dict[str, bytes], order: list[str], session: str, me: str,
                      fields: dict[str, bytes]) -> None:
    """Tell every other party, through the coordinator, what it told us; PartyError if any party was told else.

    ``fields``: the name and bytes of every field confirmed, in order (``confirmed_fields``; an MPC confirms
    more, parties.mpc.mpc_fields). One tag per other party and field (``_tag``), under a key the coordinator
    cannot compute; a tag that is missing or does not match what this party
    was told names the party and the fields that differ.
    """
    keys = _confirm_keys(pair, peers, order, session, me)
    tags = [ConfirmTag(to=name, field=f, mac=_tag(key, me, name, f, fields[f]))
            for name, key in keys.items() for f in fields]
    received = {(t.sender, t.field): t.mac for t in link.confirm(tags)}
    differ = {}
    for name, key in keys.items():
        wrong = [f for f in fields
                 if not hmac.compare_digest(received.get((name, f), b""), _tag(key, name, me, f, fields[f]))]
        if wrong:
            differ[name] = wrong
    problem = None
    if any(len(wrong) == len(fields) for wrong in differ.values()):
        names = ", ".join(f"'{name}'" for name, wrong in differ.items() if len(wrong) == len(fields))
        problem = (f"no confirmation from {names} matches, in any field: the coordinator relayed public keys of its "
                   "own (a man in the middle, which only mutual TLS stops) or altered the confirmations; this party "
                   "posts nothing")
    elif differ:
        said = "; ".join(f"'{name}' was told another {', '.join(wrong)}" for name, wrong in differ.items())
        problem = (f"the coordinator told the parties different things: {said} (or its confirmation was altered on "
                   "the way); this party posts nothing")
    if problem is not None:
        link.refuse(problem)  # the coordinator fails the session at once: nobody waits out the deadline
        raise PartyError(problem)


# -- the link to the arbiter -----------------------------------------------------------------------

class Link:
    """What the rounds need from the coordinator; see parties.client.GrpcLink and ppcsim.run.inprocess."""

    def alignment(self) -> tuple[AlignmentHeader, np.ndarray]:
        raise NotImplementedError

    def post(self, messages: Iterator) -> None:
        """Send one DistanceMessage stream (``parties.serde.distance_messages``)."""
        raise NotImplementedError

    def labels(self, round_: int, seeding: bool = False) -> tuple[LabelsHeader, np.ndarray]:
        """Round ``round_``'s labels; with ``seeding``, seeding step ``round_``'s header (its chosen centre)."""
        raise NotImplementedError

    def confirm(self, tags: list[ConfirmTag]) -> list[ConfirmTag]:
        """Post this party's confirmation tags; every other party's tags addressed to it, once all posted."""
        raise NotImplementedError

    def relay(self, items: Iterator) -> Iterator:
        """The party's Relay stream (a session that opens the labels only, parties.secagg_labels): ``items`` (Frame,
        Mark, RelayResult) go up, the relayed frames come back."""
        raise NotImplementedError

    def refuse(self, why: str) -> None:
        """Tell the coordinator (Confirm with ``refusal``) that this party refuses what it was sent, so that the
        session fails for every party at once; a failure to tell it is ignored (the party stops anyway)."""
        raise NotImplementedError


@dataclass
class RoundsResult:
    """What a party's rounds came to (its own view)."""

    rounds: int
    labels: np.ndarray  # of the joined records, in the join's order
    centres: np.ndarray  # this party's final centre blocks (k x d_p): never sent
    timing: dict[str, float] = field(default_factory=dict)
    positions: np.ndarray | None = None  # the joined records' rows, in the join's order (the checked alignment)


def run_rounds(link: Link, X: np.ndarray, pair: KeyPair, peers: dict[str, bytes], session: str, me: str,
               chunk_bytes: int, *, ids: np.ndarray, parties: list[str] | None = None, masked: bool = True,
               terms: Terms | None = None, log=sys.stderr,
               given: tuple[AlignmentHeader, np.ndarray] | None = None) -> RoundsResult:
    """This party's Lloyd's rounds on its normalised columns ``X`` (its rows, in its upload's order).

    ``peers``: every party's X25519 public key, as the coordinator relayed
    them; ``ids``: the ids (or pseudonyms) this party uploaded, in its row
    order; ``parties``: the session's parties as Join named them. Before its
    first post the party checks the alignment alone (``check_alignment``) and
    with every other party (``confirm_alignment``); every answer after that is
    checked against the alignment, and against this party's own ``terms``
    (parties.protocols.terms: its file's clustering terms and least cluster) when given. ``masked=False`` only for a benchmark's
    control run (the session must allow it): the same rounds with no mask
    added. ``given``: the alignment (header and positions) if the caller
    already asked for it.
    """
    timing = {"distances": 0.0, "encode": 0.0, "masks": 0.0, "post": 0.0, "wait_labels": 0.0, "update": 0.0}
    t = time.perf_counter()
    header, positions = link.alignment() if given is None else given
    timing["alignment"] = time.perf_counter() - t
    order = list(header.parties)
    try:
        check_alignment(header, positions, len(X), me, parties)
        if set(order) != set(peers):
            raise _refuse(f"its parties {order} are not those whose keys it relayed ({sorted(peers)})")
        if terms is not None:
            terms.check_alignment(header)
    except PartyError as exc:
        link.refuse(str(exc))
        raise
    t = time.perf_counter()
    fields = confirmed_fields(header, positions, ids)
    confirm_alignment(link, pair, peers, order, session, me, fields)
    transcript = Transcript(fields)
    timing["confirm"] = time.perf_counter() - t
    masks = pair_masks(pair, peers, order, session, me) if masked else []
    Xj = np.ascontiguousarray(X[positions.astype(np.intp)], dtype=np.float64)  # the joined rows, in the join's order
    m, k, bits = int(header.n_joined), int(header.n_clusters), int(header.scale_bits)
    norms = np.einsum("ij,ij->i", Xj, Xj)
    scratch = np.empty(m * k, dtype="<u8") if masks else None  # each round's keystreams, drawn into one buffer
    init = [int(i) for i in header.init]
    t = time.perf_counter()
    for step in range(1, header.seeding_steps + 1):  # k-means++: distances to the centre chosen last
        values = encode(partial_distances(Xj, Xj[init[-1]][None, :], norms), bits, len(order)).reshape(-1)
        apply_masks(values, keyed(masks, transcript), SEEDING_ROUNDS + step, scratch)
        link.post(distance_messages(session, me, step, values, (m, 1), masked, chunk_bytes, seeding=True))
        answer, _ = link.labels(step, seeding=True)
        if not answer.seeding or answer.round != step or answer.centre >= m:
            raise PartyError(f"seeding step {step}: the coordinator's answer names no joined record (step "
                             f"{answer.round}, centre {answer.centre} of {m})")
        init.append(int(answer.centre))
        transcript.add(int(answer.centre).to_bytes(8, "big"))
    timing["seeding"] = time.perf_counter() - t
    if len(init) != k:
        raise PartyError(f"the alignment gives {len(init)} initial centres for {k} clusters")
    centres = Xj[np.asarray(init, dtype=np.intp)].copy()
    round_, labels = 0, None
    previous: np.ndarray | None = None
    while True:
        t = time.perf_counter()
        D = partial_distances(Xj, centres, norms)
        t2 = time.perf_counter()
        values = encode(D, bits, len(order)).reshape(-1)
        t3 = time.perf_counter()
        apply_masks(values, keyed(masks, transcript), round_, scratch)
        t4 = time.perf_counter()
        link.post(distance_messages(session, me, round_, values, (m, k), masked, chunk_bytes))
        t5 = time.perf_counter()
        answer, labels = link.labels(round_)
        t6 = time.perf_counter()
        timing["distances"] += t2 - t
        timing["encode"] += t3 - t2
        timing["masks"] += t4 - t3
        timing["post"] += t5 - t4
        timing["wait_labels"] += t6 - t5
        check_labels(answer, labels, round_, m, k, int(header.max_iter))
        if terms is not None:
            _told(link, terms.check_labels, labels, round_, k, init, answer.done)
        check_summary(answer, labels, previous, k)
        previous = labels
        transcript.add(np.ascontiguousarray(labels, dtype="<i4").tobytes())
        if answer.done:
            break
        t = time.perf_counter()
        centres = update_centres(Xj, labels, centres)
        timing["update"] += time.perf_counter() - t
        round_ += 1
        if round_ % 10 == 0:
            print(f"party {me}: round {round_}, {answer.changed} labels changed", file=log, flush=True)
    return RoundsResult(round_ + 1, labels, centres, timing, positions)


def check_labels(answer: LabelsHeader, labels: np.ndarray, round_: int, m: int, k: int,
                 max_iter: int) -> None:
    """PartyError unless round ``round_``'s answer is that round's, with a label 0..k-1 for each of the m joined
    records, and ends the rounds by round ``max_iter`` at the latest."""
    if answer.round != round_ or answer.seeding:
        raise PartyError(f"round {round_}: the coordinator answered with round {answer.round}'s labels")
    if len(labels) != m or answer.n_labels != m:
        raise PartyError(f"round {round_}: the coordinator sent {len(labels)} labels for {m} joined records")
    if m and (labels.min() < 0 or labels.max() >= k):
        raise PartyError(f"round {round_}: the coordinator sent label {int(labels[(labels < 0) | (labels >= k)][0])}"
                         f"; there are {k} clusters (0 to {k - 1})")
    if not answer.done and round_ >= max_iter:
        raise PartyError(f"round {round_}: the coordinator asks for another round, past max_iter = {max_iter}")


def _told(link: Link, check, *args) -> None:
    """``check(*args)``; a PartyError it raises is told to the coordinator (``Link.refuse``) before it is raised."""
    try:
        check(*args)
    except PartyError as exc:
        link.refuse(str(exc))
        raise
def check_summary(answer: LabelsHeader, labels: np.ndarray, previous: np.ndarray | None, k: int) -> None:
    """PartyError unless the answer's ``sizes`` are the clusters' sizes in ``labels`` and ``changed`` the labels
    that differ from the round before (all m in round 0). They are not in the transcript because they follow
    from the labels, which are; checked here, they cannot differ between parties told the same labels."""
    sizes = np.bincount(labels, minlength=k).tolist() if len(labels) else [0] * k
    changed = len(labels) if previous is None else int(np.count_nonzero(labels != previous))
    if list(answer.sizes) != sizes or answer.changed != changed:
        raise PartyError(f"round {answer.round}: the coordinator says the clusters have sizes {list(answer.sizes)[:8]}"
                         f" and {answer.changed} labels changed; its labels give {sizes[:8]} and {changed}")


class OpenedRounds(Protocol):
    """What rounds of either secure protocol opened: the labels, and the rows they belong to (RoundsResult here,
    parties.mpc.MpcResult for an MPC, which builds on this module and so is not imported by it)."""

    labels: np.ndarray
    positions: np.ndarray | None


def check_result(labels: np.ndarray, n_rows: int, rounds: OpenedRounds | None, n_clusters: int) -> None:
    """PartyError unless GetResult gave one label per uploaded row, each a cluster, -1 or -2; after rounds, the
    last round's labels at the joined rows and -2 everywhere else."""
    if len(labels) != n_rows:
        raise PartyError(f"the coordinator's result has {len(labels)} labels; this party uploaded {n_rows} rows")
    if n_rows and (labels.min() < -2 or labels.max() >= n_clusters):
        raise PartyError(f"the coordinator's result holds label {int(labels[(labels < -2) | (labels >= n_clusters)][0])}"
                         f"; there are {n_clusters} clusters")
    if rounds is None or rounds.positions is None:
        return
    expected = np.full(n_rows, -2, dtype=np.int32)
    expected[rounds.positions.astype(np.intp)] = rounds.labels
    if not np.array_equal(labels, expected):
        raise PartyError(f"the coordinator's result differs from the last round's labels at "
                         f"{int(np.count_nonzero(labels != expected))} of this party's {n_rows} rows")


def secure_party(link: Link, upload, peers: list, pair: KeyPair, X: np.ndarray, ids: np.ndarray, session: str,
                 me: str, n_columns: int, chunk_bytes: int, *, parties: list[str] | None = None, masked: bool = True,
                 terms: Terms | None = None, log=sys.stderr) -> RoundsResult:
    """A joined party's whole secure-aggregation exchange after Join (and the pseudonym key, if any).

    ``upload`` sends an Upload stream (here: the ids only, for the
    alignment); ``peers`` are the keys GetPeers relayed (``parties.serde.Peer``); ``ids``
    are what the party uploads (its pseudonyms, or its ids); ``parties`` the
    session's parties as Join named them.
    """
    keys = {p.party: p.public_key for p in peers}
    if keys.get(me) != pair.public:
        raise PartyError("the coordinator relayed a public key for this party that is not its own")
    t = time.perf_counter()
    upload(upload_messages(session, me, METHOD, {}, ids, [], n_columns, chunk_bytes))
    t_upload = time.perf_counter() - t
    result = run_rounds(link, X, pair, keys, session, me, chunk_bytes, ids=ids, parties=parties, masked=masked,
                        terms=terms, log=log)
    result.timing["upload_ids"] = t_upload
    return result
