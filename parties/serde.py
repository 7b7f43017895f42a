"""The party's side of the wire: protobuf messages to and from the plain values a party's logic works on.

The one module of ``parties/`` besides the gRPC client (``parties.client``)
that names ``session_pb2``: what the coordinator answers is decoded here
(``*_from_proto``), what a party sends is encoded here (``*_to_proto`` and
the stream builders ``upload_messages``, ``distance_messages``,
``relay_requests``), so key agreement, secure aggregation, the MPC tunnel and
the progress lines (``parties.keys``/``client``, ``secagg``, ``mpc``,
``progress``) read dataclasses, never messages. Every decoder reads the
message's fields by name into the dataclass of the same field names; every
encoder is the reverse, so a value survives ``x_from_proto(x_to_proto(v))``
unchanged (tests/parties/test_party_serde.py). Encoding changes no byte: the
messages a party sends are those it sent before this module existed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import numpy as np

from parties.errors import PartyError
from parties.methods import Sent
from protos.clustering import protocol_terms
from protos.ids import TEXT as ID_TEXT
from protos.ids import pack as pack_ids
from protos.messages import (  # noqa: F401 - the shared types, read here by the party's code
    AlignmentHeader,
    ConfirmTag,
    Frame,
    LabelsHeader,
    Mark,
    PartyStatus,
    RelayResult,
    ResultHeader,
    SealedKey,
)
from protos.ppcsim.v1 import session_pb2
from protos.serde import array_pieces, array_slices, array_spec
from protos.vocabulary import protocol_from_wire, protocol_to_wire

#: Ids per IdChunk message; keeps each message well under gRPC's 4 MiB limit.
IDS_PER_CHUNK = 20_000

#: JoinReply.ids by the names a party's logic uses (JoinReply.protocol: protos.vocabulary).
ID_MODES = {session_pb2.IDS_PLAIN: "plain", session_pb2.IDS_PSEUDONYMOUS: "pseudonymous"}
#: The fields of JoinReply.clustering: a session's clustering terms, named as in [clustering].
CLUSTERING_TERMS = ("n_clusters", "max_iter", "scale_bits", "mpc_bits", "mpc_frac", "reveal_centres", "helper")
#: StatusReply.state by name.
STATES = {session_pb2.SESSION_STATE_UNSPECIFIED: "unspecified", session_pb2.WAITING: "waiting",
          session_pb2.CLUSTERING: "clustering", session_pb2.DONE: "done", session_pb2.FAILED: "failed"}


# -- what the coordinator says -------------------------------------------------------------------------

@dataclass(frozen=True)
class Joined:
    """The coordinator's answer to Join: the session's protocol ("upload", "secure_aggregation" or "mpc"), its
    ids ("plain" or "pseudonymous"), its parties in order (the first is the key leader) and the upload's
    largest chunk."""

    chunk_bytes: int
    seconds_left: float
    ids: str
    parties: list[str]
    protocol: str
    #: A session with rounds: its clustering terms as JoinReply.clustering gives them (``CLUSTERING_TERMS``, by
    #: name); empty when the reply has none (an upload session).
    clustering: dict[str, int | bool] = field(default_factory=dict)

    @property
    def rounds(self) -> bool:
        """Whether the session's protocol needs every party's key for the parties' pair keys (secure aggregation,
        MPC: protos.clustering.ProtocolTerms.pair_keys)."""
        return protocol_terms(self.protocol).pair_keys


@dataclass(frozen=True)
class Peer:
    """A party's X25519 public key as the coordinator relays it, with its signature and certificate (mutual
    TLS)."""

    party: str
    public_key: bytes
    key_signature: bytes = b""
    certificate: bytes = b""


@dataclass(frozen=True)
class Status:
    """GetStatus: the session's state ("waiting", "clustering", "done", "failed") and every party's line."""

    state: str
    error: str
    parties: list[PartyStatus]


T = TypeVar("T")


def _from(cls: type[T], message: Any) -> T:
    """``cls`` from the fields of ``message`` of the same names (repeated fields as tuples)."""
    values = {}
    for f in fields(cls):  # type: ignore[arg-type]
        value = getattr(message, f.name)
        values[f.name] = value if isinstance(value, (str, bytes, bool, int, float)) else tuple(value)
    return cls(**values)


def _to(cls: Any, value: Any) -> Any:
    return cls(**{f.name: getattr(value, f.name) for f in fields(value)})


def joined_from_proto(message: session_pb2.JoinReply) -> Joined:
    terms = message.clustering
    clustering = {f: getattr(terms, f) for f in CLUSTERING_TERMS} if message.HasField("clustering") else {}
    return Joined(chunk_bytes=message.chunk_bytes, seconds_left=message.seconds_left, ids=ID_MODES[message.ids],
                  parties=list(message.parties), protocol=protocol_from_wire(message.protocol, message.protocol_name),
                  clustering=clustering)


def joined_to_proto(value: Joined) -> session_pb2.JoinReply:
    protocol, protocol_name = protocol_to_wire(value.protocol)
    reply = session_pb2.JoinReply(
        chunk_bytes=value.chunk_bytes, seconds_left=value.seconds_left, parties=value.parties,
        ids={v: k for k, v in ID_MODES.items()}[value.ids], protocol=protocol, protocol_name=protocol_name)
    for name, term in value.clustering.items():
        setattr(reply.clustering, name, term)
    return reply


def peer_from_proto(message: session_pb2.PeerKey) -> Peer:
    return _from(Peer, message)


def peer_to_proto(value: Peer) -> session_pb2.PeerKey:
    return _to(session_pb2.PeerKey, value)


def sealed_from_proto(message: session_pb2.SealedKey) -> SealedKey:
    return _from(SealedKey, message)


def sealed_to_proto(value: SealedKey) -> session_pb2.SealedKey:
    return _to(session_pb2.SealedKey, value)


def outcome_from_proto(message: session_pb2.ResultHeader) -> ResultHeader:
    """The header of GetResult; its ``n_clusters`` is the count found (``ResultHeader.clusters_found``)."""
    return ResultHeader(algorithm=message.algorithm, clusters_found=message.n_clusters, sizes=tuple(message.sizes),
                        noise=message.noise, n_joined=message.n_joined, n_labels=message.n_labels)


def outcome_to_proto(value: ResultHeader) -> session_pb2.ResultHeader:
    return session_pb2.ResultHeader(algorithm=value.algorithm, n_clusters=value.clusters_found, sizes=value.sizes,
                                    noise=value.noise, n_joined=value.n_joined, n_labels=value.n_labels)


def alignment_from_proto(message: session_pb2.AlignmentHeader) -> AlignmentHeader:
    return _from(AlignmentHeader, message)


def alignment_to_proto(value: AlignmentHeader) -> session_pb2.AlignmentHeader:
    return _to(session_pb2.AlignmentHeader, value)


def labels_from_proto(message: session_pb2.LabelsHeader) -> LabelsHeader:
    return _from(LabelsHeader, message)


def labels_to_proto(value: LabelsHeader) -> session_pb2.LabelsHeader:
    return _to(session_pb2.LabelsHeader, value)


def tag_from_proto(message: session_pb2.ConfirmTag) -> ConfirmTag:
    return _from(ConfirmTag, message)


def tag_to_proto(value: ConfirmTag) -> session_pb2.ConfirmTag:
    return _to(session_pb2.ConfirmTag, value)


def status_from_proto(message: session_pb2.StatusReply) -> Status:
    return Status(state=STATES.get(message.state, "unspecified"), error=message.error,
                  parties=[_from(PartyStatus, p) for p in message.parties])


def read_int32(messages: Iterable, part: str) -> tuple[Any, np.ndarray]:
    """(header, int32 array) from a GetAlignment (``part`` "positions": an AlignmentHeader) or GetLabels (``part``
    "labels": a LabelsHeader) stream of a header then chunks."""
    decode = alignment_from_proto if part == "positions" else labels_from_proto
    header, pieces = None, []
    for message in messages:
        if message.WhichOneof("part") == "header":
            header = decode(message.header)
        else:
            pieces.append(getattr(message, part).data)
    if header is None:
        raise PartyError("the coordinator's reply had no header")
    values = np.frombuffer(b"".join(pieces), dtype="<i4")
    return header, values


# -- what the party sends -------------------------------------------------------------------------------

def varint(n: int) -> bytes:
    """``n`` >= 0 as a protobuf base-128 varint."""
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def chunk_serialised(index: int, offset: int, data: bytes | memoryview) -> bytes:
    """``UploadMessage(chunk=ArrayChunk(array=index, offset=offset, data=data)).SerializeToString()``, byte for
    byte, made with one copy of ``data`` (through the message it takes three: into a bytes object, into the
    message, out of it)."""
    fields = (b"\x08" + varint(index) if index else b"") + (b"\x10" + varint(offset) if offset else b"")
    fields += b"\x1a" + varint(len(data))
    return b"".join((b"\x1a", varint(len(fields) + len(data)), fields, data))


def _header_and_ids(header: session_pb2.UploadHeader, ids: np.ndarray, packed: bytes,
                    chunk_bytes: int) -> Iterator[session_pb2.UploadMessage]:
    """An upload's first messages: its header, then its ids as text (ID_TEXT: ``packed`` is empty) or packed."""
    yield session_pb2.UploadMessage(header=header)
    if header.id_encoding == ID_TEXT:
        id_list = ids.tolist()
        for start in range(0, len(id_list), IDS_PER_CHUNK):
            yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=id_list[start : start + IDS_PER_CHUNK]))
    for start in range(0, len(packed), chunk_bytes):
        yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(packed=packed[start : start + chunk_bytes]))


def upload_messages(
    session: str,
    party: str,
    method: str,
    params: dict[str, str],
    ids: np.ndarray,
    arrays: list[Sent],
    n_columns: int,
    chunk_bytes: int,
    dtype: str | None = None,
    serialised: bool = False,
) -> Iterator[Any]:
    """The upload stream: a header, the ids (as text or packed, whichever is smaller), then each array in chunks
    (as ``dtype`` when given, else as computed): UploadMessages, or with ``serialised`` the bytes of each as
    protobuf serialises it (what ``CoordinatorClient.upload`` sends as they are), each chunk's made straight
    from the array's bytes (chunk_serialised)."""
    encoding, packed = pack_ids(ids)
    header = session_pb2.UploadHeader(
        session=session,
        party=party,
        method=method,
        params=params,
        n_ids=len(ids),
        arrays=[array_spec(s.name, s.array, s.layout, dtype) for s in arrays],
        n_columns=n_columns,
        id_encoding=encoding,
        packed_id_bytes=len(packed),
    )
    for message in _header_and_ids(header, ids, packed, chunk_bytes):
        yield message.SerializeToString() if serialised else message
    for index, sent in enumerate(arrays):
        if serialised:
            yield from (chunk_serialised(index, offset, data) for offset, data in array_slices(sent.array, chunk_bytes, dtype))
            continue
        for offset, data in array_pieces(sent.array, chunk_bytes, dtype):
            message = session_pb2.UploadMessage()  # filled in place: wrapping an ArrayChunk would copy it again
            message.chunk.array, message.chunk.offset, message.chunk.data = index, offset, data
            yield message


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


def relay_requests(session: str, party: str, items: Iterable[Frame | Mark | RelayResult]) -> Iterator[session_pb2.RelayMessage]:
    """A Relay stream's requests: its opening for ``party`` of ``session``, then each frame, mark or result."""
    yield session_pb2.RelayMessage(open=session_pb2.RelayOpen(session=session, party=party))
    for item in items:
        if isinstance(item, Frame):
            yield session_pb2.RelayMessage(frame=session_pb2.RelayFrame(peer=item.peer, seq=item.seq, data=item.data))
        elif isinstance(item, Mark):
            yield session_pb2.RelayMessage(mark=session_pb2.RelayMark(round=item.round))
        else:
            yield session_pb2.RelayMessage(result=session_pb2.RelayResult(labels=item.labels, centres=item.centres))


def relay_frames(responses: Iterable[session_pb2.RelayMessage]) -> Iterator[Frame]:
    """The frames a Relay stream relays to the party; PartyError at anything else."""
    for message in responses:
        if message.WhichOneof("part") != "frame":
            raise PartyError(f"the coordinator relayed a '{message.WhichOneof('part')}' where only frames come")
        yield Frame(message.frame.peer, message.frame.seq, message.frame.data)
