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

The rounds are written against a small link (``Link``): over gRPC
(``GrpcLink``) in a party process, or straight into the coordinator's handler
functions in one process (ppcsim.simulate.simulate_secure).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from parties.errors import PartyError
from parties.keys import KeyPair
from protos.ppcsim.v1 import session_pb2

#: Default fixed-point scale: values travel as round(value * 2^SCALE_BITS); each rounding errs by at most 2^-33.
SCALE_BITS = 32
#: Seeding step s of k-means++ masks with the keystream of "round" SEEDING_ROUNDS + s: never a Lloyd round's.
SEEDING_ROUNDS = 1 << 32
#: What the party names as its method in its ids-only upload header.
METHOD = "secure_aggregation"


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


# -- the link to the arbiter -----------------------------------------------------------------------

class Link:
    """What the rounds need from the coordinator; see GrpcLink and ppcsim.simulate."""

    def alignment(self) -> tuple[session_pb2.AlignmentHeader, np.ndarray]:
        raise NotImplementedError

    def post(self, messages: Iterator[session_pb2.DistanceMessage]) -> None:
        raise NotImplementedError

    def labels(self, round_: int, seeding: bool = False) -> tuple[session_pb2.LabelsHeader, np.ndarray]:
        """Round ``round_``'s labels; with ``seeding``, seeding step ``round_``'s header (its chosen centre)."""
        raise NotImplementedError


def read_int32(messages, part: str) -> tuple[object, np.ndarray]:
    """(header, int32 array) from a header-then-chunks stream whose chunk field is ``part``."""
    header, pieces = None, []
    for message in messages:
        if message.WhichOneof("part") == "header":
            header = message.header
        else:
            pieces.append(getattr(message, part).data)
    if header is None:
        raise PartyError("the coordinator's reply had no header")
    values = np.frombuffer(b"".join(pieces), dtype="<i4")
    return header, values


class GrpcLink(Link):
    """The rounds over a party's CoordinatorClient."""

    def __init__(self, client, timeout):
        self.client, self.timeout = client, timeout  # timeout: a function giving the seconds left

    def _request(self, cls, **fields):
        return cls(session=self.client.session, party=self.client.party, **fields)

    def alignment(self):
        stream = self.client.stub.GetAlignment(self._request(session_pb2.AlignmentRequest), timeout=self.timeout(),
                                               metadata=self.client.metadata)
        return read_int32(stream, "positions")

    def post(self, messages):
        self.client.stub.PostDistances(messages, timeout=self.timeout(), metadata=self.client.metadata)

    def labels(self, round_, seeding=False):
        stream = self.client.stub.GetLabels(self._request(session_pb2.LabelsRequest, round=round_, seeding=seeding),
                                            timeout=self.timeout(), metadata=self.client.metadata)
        return read_int32(stream, "labels")


def distance_messages(session: str, party: str, round_: int, values: np.ndarray, shape: tuple[int, int],
                      masked: bool, chunk_bytes: int, seeding: bool = False) -> Iterator[session_pb2.DistanceMessage]:
    """A header, then ``values`` (uint64) as little-endian ArrayChunks of at most ``chunk_bytes`` bytes."""
    yield session_pb2.DistanceMessage(header=session_pb2.DistanceHeader(
        session=session, party=party, round=round_, rows=shape[0], cols=shape[1], masked=masked, seeding=seeding))
    data = np.ascontiguousarray(values, dtype="<u8").reshape(-1).view(np.uint8).data
    for offset in range(0, len(data), chunk_bytes):
        message = session_pb2.DistanceMessage()
        message.chunk.array, message.chunk.offset, message.chunk.data = 0, offset, bytes(data[offset : offset + chunk_bytes])
        yield message


@dataclass
class RoundsResult:
    """What a party's rounds came to (its own view)."""

    rounds: int
    labels: np.ndarray  # of the joined records, in the join's order
    centres: np.ndarray  # this party's final centre blocks (k x d_p): never sent
    timing: dict[str, float] = field(default_factory=dict)


def run_rounds(link: Link, X: np.ndarray, pair: KeyPair, peers: dict[str, bytes], session: str, me: str,
               chunk_bytes: int, *, masked: bool = True, log=sys.stderr) -> RoundsResult:
    """This party's Lloyd's rounds on its normalised columns ``X`` (its rows, in its upload's order).

    ``peers``: every party's X25519 public key, as the coordinator relayed
    them. ``masked=False`` only for a benchmark's control run (the session
    must allow it): the same rounds with no mask added.
    """
    timing = {"distances": 0.0, "encode": 0.0, "masks": 0.0, "post": 0.0, "wait_labels": 0.0, "update": 0.0}
    t = time.perf_counter()
    header, positions = link.alignment()
    timing["alignment"] = time.perf_counter() - t
    order = list(header.parties)
    if me not in order or set(order) != set(peers):
        raise PartyError("the coordinator's party list for the rounds does not match the relayed keys")
    masks = pair_masks(pair, peers, order, session, me) if masked else []
    Xj = np.ascontiguousarray(X[positions.astype(np.intp)], dtype=np.float64)  # the joined rows, in the join's order
    m, k, bits = int(header.n_joined), int(header.n_clusters), int(header.scale_bits)
    if Xj.shape[0] != m:
        raise PartyError(f"the alignment gives {Xj.shape[0]} positions for {m} joined records")
    norms = np.einsum("ij,ij->i", Xj, Xj)
    scratch = np.empty(m * k, dtype="<u8") if masks else None  # each round's keystreams, drawn into one buffer
    init = [int(i) for i in header.init]
    t = time.perf_counter()
    for step in range(1, header.seeding_steps + 1):  # k-means++: distances to the centre chosen last
        values = encode(partial_distances(Xj, Xj[init[-1]][None, :], norms), bits, len(order)).reshape(-1)
        apply_masks(values, masks, SEEDING_ROUNDS + step, scratch)
        link.post(distance_messages(session, me, step, values, (m, 1), masked, chunk_bytes, seeding=True))
        answer, _ = link.labels(step, seeding=True)
        if not answer.seeding or answer.centre >= m:
            raise PartyError(f"seeding step {step}: the coordinator's answer names no joined record")
        init.append(int(answer.centre))
    timing["seeding"] = time.perf_counter() - t
    if len(init) != k:
        raise PartyError(f"the alignment gives {len(init)} initial centres for {k} clusters")
    centres = Xj[np.asarray(init, dtype=np.intp)].copy()
    round_, labels = 0, None
    while True:
        t = time.perf_counter()
        D = partial_distances(Xj, centres, norms)
        t2 = time.perf_counter()
        values = encode(D, bits, len(order)).reshape(-1)
        t3 = time.perf_counter()
        apply_masks(values, masks, round_, scratch)
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
        if len(labels) != m:
            raise PartyError(f"round {round_}: {len(labels)} labels for {m} joined records")
        if answer.done:
            break
        t = time.perf_counter()
        centres = update_centres(Xj, labels, centres)
        timing["update"] += time.perf_counter() - t
        round_ += 1
        if round_ % 10 == 0:
            print(f"party {me}: round {round_}, {answer.changed} labels changed", file=log, flush=True)
    return RoundsResult(round_ + 1, labels, centres, timing)


def secure_party(link: Link, upload, peers: list, pair: KeyPair, X: np.ndarray, ids: np.ndarray, session: str,
                 me: str, n_columns: int, chunk_bytes: int, *, masked: bool = True, log=sys.stderr) -> RoundsResult:
    """A joined party's whole secure-aggregation exchange after Join (and the pseudonym key, if any).

    ``upload`` sends an Upload stream (here: the ids only, for the
    alignment); ``peers`` are the PeerKey messages GetPeers relayed; ``ids``
    are what the party uploads (its pseudonyms, or its ids).
    """
    from parties.client import upload_messages  # the client module pulls in gRPC; the simulation needs none

    keys = {p.party: p.public_key for p in peers}
    if keys.get(me) != pair.public:
        raise PartyError("the coordinator relayed a public key for this party that is not its own")
    t = time.perf_counter()
    upload(upload_messages(session, me, METHOD, {}, ids, [], n_columns, chunk_bytes))
    t_upload = time.perf_counter() - t
    result = run_rounds(link, X, pair, keys, session, me, chunk_bytes, masked=masked, log=log)
    result.timing["upload_ids"] = t_upload
    return result
