"""The coordinator's side of the wire: every request decoded into coordinator.messages, every reply encoded.

One ``x_from_proto`` or ``x_to_proto`` function per message (as Flower's
``serde`` has), so that ``session_pb2`` is named here and in the servicer
only. Client-stream messages are decoded as they arrive into
:class:`~coordinator.messages.Received`, with the bytes each arrived in (gRPC
hands the raw bytes to :func:`upload_received` and friends) or, for messages
made in this process, its serialised size; replies are sized by serialising
them (``ByteSize``), so a gRPC run and an in-process run count the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import numpy as np
from google.protobuf.message import Message

from coordinator.messages import (
    AlignmentHeader,
    ArraySpec,
    Ask,
    Chunk,
    ConfirmPost,
    ConfirmTag,
    DistanceHeader,
    Frame,
    IdPart,
    JoinAsk,
    LabelsAsk,
    LabelsHeader,
    Mark,
    PeerKey,
    Received,
    RelayOpen,
    RelayResult,
    ResultHeader,
    SealedKey,
    SealedKeysPost,
    Status,
    Terms,
    UploadHeader,
)
from coordinator.session import CLUSTERING, DONE, FAILED, WAITING
from protos.ppcsim.v1 import array_pb2, session_pb2
from protos.serde import WireError, array_chunks, spec_nbytes
from protos.vocabulary import protocol_to_wire

#: The wire's enums, by the names the coordinator's logic uses.
ID_MODES = {"plain": session_pb2.IDS_PLAIN, "pseudonymous": session_pb2.IDS_PSEUDONYMOUS}
STATES = {WAITING: session_pb2.WAITING, CLUSTERING: session_pb2.CLUSTERING, DONE: session_pb2.DONE,
          FAILED: session_pb2.FAILED}


# -- keys ------------------------------------------------------------------------------------------

def id_encoding_name(value: int) -> str:
    """The wire's name of an upload's id encoding (``IdEncoding``, e.g. "ID_ENCODING_PSEUDONYM"), as the report
    gives it."""
    return session_pb2.IdEncoding.Name(value)


def join_from_proto(request: session_pb2.JoinRequest) -> JoinAsk:
    return JoinAsk(request.party, request.public_key, request.key_signature)


def terms_to_proto(terms: Terms) -> session_pb2.JoinReply:
    protocol, protocol_name = protocol_to_wire(terms.protocol)
    reply = session_pb2.JoinReply(chunk_bytes=terms.chunk_bytes, seconds_left=terms.seconds_left,
                                  ids=ID_MODES[terms.ids], parties=terms.parties, protocol=protocol,
                                  protocol_name=protocol_name)
    for name, value in (terms.clustering or {}).items():
        setattr(reply.clustering, name, value)
    return reply


def ask_from_proto(request) -> Ask:
    """PeersRequest, SealedKeyRequest, ResultRequest, AlignmentRequest: the party."""
    return Ask(request.party)


def peers_to_proto(keys: list[tuple[str, PeerKey]]) -> session_pb2.PeersReply:
    return session_pb2.PeersReply(peers=[
        session_pb2.PeerKey(party=p, public_key=k.public_key, key_signature=k.signature, certificate=k.certificate)
        for p, k in keys])


def sealed_from_proto(request: session_pb2.SealedKeys) -> SealedKeysPost:
    return SealedKeysPost(request.party, tuple(SealedKey(k.to, k.nonce, k.ciphertext, k.sender) for k in request.keys))


def sealed_to_proto(key: SealedKey) -> session_pb2.SealedKey:
    return session_pb2.SealedKey(to=key.to, nonce=key.nonce, ciphertext=key.ciphertext, sender=key.sender)


def posted_to_proto(_: None = None) -> session_pb2.SealedKeysReply:
    return session_pb2.SealedKeysReply()


# -- upload ----------------------------------------------------------------------------------------

def spec_from_proto(spec: array_pb2.ArraySpec) -> ArraySpec:
    """The announced array, sized: a spec the wire cannot size is decoded all the same, with the reason, so that
    the session refuses its upload (and counts it) with the header's other checks."""
    decoded = ArraySpec(spec.name, spec.dtype, tuple(int(n) for n in spec.shape), int(spec.layout))
    try:
        return replace(decoded, nbytes=spec_nbytes(decoded))
    except WireError as exc:
        return replace(decoded, unsized=str(exc))


def header_from_proto(header: session_pb2.UploadHeader) -> UploadHeader:
    return UploadHeader(header.party, header.method, dict(header.params), int(header.n_ids),
                        tuple(spec_from_proto(s) for s in header.arrays), int(header.id_encoding),
                        int(header.packed_id_bytes), header.session)


def chunk_from_proto(chunk: array_pb2.ArrayChunk) -> Chunk:
    return Chunk(chunk.array, chunk.offset, chunk.data)  # the one read of its bytes (each read copies them)


def upload_from_proto(message: session_pb2.UploadMessage, size: int) -> Received:
    """One UploadMessage as received in ``size`` bytes; its payload is its chunk's bytes (ids count none)."""
    part = message.WhichOneof("part")
    if part == "chunk":
        chunk = chunk_from_proto(message.chunk)
        return Received(chunk, size, len(chunk.data))
    if part == "ids":
        return Received(IdPart(tuple(message.ids.ids), message.ids.packed), size)
    if part == "header":
        return Received(header_from_proto(message.header), size)
    return Received(None, size)


def _varint(raw: bytes, at: int) -> tuple[int, int]:
    """The base-128 varint at ``raw[at]`` and the position after it; (-1, at) if there is none of at most 10
    bytes (the protobuf encoding's limit)."""
    value, shift = 0, 0
    for pos in range(at, min(at + 10, len(raw))):
        byte = raw[pos]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + 1
        shift += 7
    return -1, at


def chunk_in_place(raw: bytes) -> Chunk | None:
    """The ArrayChunk of an UploadMessage read where it lies in ``raw``: its data a view of ``raw``, not a copy.

    Taken only when ``raw`` is laid out exactly as protobuf serialises an
    UploadMessage that holds a chunk: field ``chunk`` (3) once, spanning the
    whole message, and in it ``array`` (1) and ``offset`` (2) when not zero,
    then ``data`` (3) to the end. Anything else (a header, ids, fields
    repeated or out of order, unknown fields, a value past its type's range)
    gives None, and the message is decoded by protobuf instead. The values
    read here are then those protobuf would read (tests/coordinator/test_wire_edge.py
    compares the two on every layout a party may send); only the data's copy
    out of the message is saved: a 1 MiB chunk read through protobuf is copied
    twice, into the message and out of it.
    """
    if type(raw) is not bytes or raw[:1] != b"\x1a":  # immutable bytes only: a view must not change under us
        return None
    size, at = _varint(raw, 1)
    if at + size != len(raw):
        return None
    array = offset = 0
    if raw[at : at + 1] == b"\x08":
        array, at = _varint(raw, at + 1)
        if not 0 <= array < 1 << 32:
            return None
    if raw[at : at + 1] == b"\x10":
        offset, at = _varint(raw, at + 1)
        if not 0 <= offset < 1 << 64:
            return None
    if raw[at : at + 1] != b"\x1a":
        return None
    size, at = _varint(raw, at + 1)
    if size < 0 or at + size != len(raw):
        return None
    return Chunk(array, offset, memoryview(raw)[at:])


def upload_received(raw: bytes) -> Received:
    """gRPC's request deserializer for Upload: decoded, sized by the bytes it arrived in (never re-serialised);
    an array chunk's bytes are left where they arrived (chunk_in_place)."""
    chunk = chunk_in_place(raw)
    if chunk is not None:
        return Received(chunk, len(raw), len(chunk.data))
    return upload_from_proto(session_pb2.UploadMessage.FromString(raw), len(raw))


def made(message) -> Received:
    """An UploadMessage made in this process (the in-process run, tests): sized by serialising it."""
    return upload_from_proto(message, message.ByteSize())


def upload_stream(messages: Iterable[session_pb2.UploadMessage]) -> Iterator[Received]:
    return (made(m) for m in messages)


def uploaded_to_proto(payload: int) -> session_pb2.UploadReply:
    return session_pb2.UploadReply(payload_bytes=payload)


# -- results ---------------------------------------------------------------------------------------

def result_to_proto(header: ResultHeader, labels: np.ndarray, chunk_bytes: int) -> Sequence[tuple[Message, int]]:
    """The header, then ``labels`` in chunks: each message with its payload bytes."""
    head = session_pb2.ResultHeader(algorithm=header.algorithm, n_clusters=header.clusters_found, sizes=header.sizes,
                                    noise=header.noise, n_joined=header.n_joined, n_labels=header.n_labels)
    return [(session_pb2.ResultMessage(header=head), 0)] + [
        (session_pb2.ResultMessage(labels=chunk), len(chunk.data)) for chunk in array_chunks(0, labels, chunk_bytes)]


def status_to_proto(status: Status) -> session_pb2.StatusReply:
    return session_pb2.StatusReply(
        state=STATES[status.state], error=status.error,
        parties=[session_pb2.PartyStatus(party=p.party, joined=p.joined, uploaded=p.uploaded,
                                         payload_bytes=p.payload_bytes, payload_expected=p.payload_expected)
                 for p in status.parties],
        ledger=[session_pb2.LedgerEntry(party=e.party, rpc=e.rpc, direction=e.direction, payload_bytes=e.payload,
                                        serialized_bytes=e.serialized, time=e.time) for e in status.ledger])


# -- secure aggregation ----------------------------------------------------------------------------

def int32_chunks(values: np.ndarray, chunk_bytes: int) -> Iterator[array_pb2.ArrayChunk]:
    """``values`` as int32 little-endian ArrayChunks (array 0) of at most ``chunk_bytes`` bytes."""
    data = np.ascontiguousarray(values, dtype="<i4").reshape(-1).view(np.uint8).data
    for offset in range(0, len(data), chunk_bytes):
        yield array_pb2.ArrayChunk(array=0, offset=offset, data=bytes(data[offset : offset + chunk_bytes]))


def alignment_header_to_proto(h: AlignmentHeader) -> session_pb2.AlignmentHeader:
    return session_pb2.AlignmentHeader(
        n_joined=h.n_joined, n_rows=h.n_rows, n_clusters=h.n_clusters, init=h.init, scale_bits=h.scale_bits,
        max_iter=h.max_iter, parties=h.parties, seeding_steps=h.seeding_steps, revision=h.revision,
        mpc_parties=h.mpc_parties, mpc_columns=h.mpc_columns, mpc_bits=h.mpc_bits, mpc_frac=h.mpc_frac,
        reveal_centres=h.reveal_centres, mpc_helper=h.mpc_helper, mpc_helper_key=h.mpc_helper_key,
        reveal=h.reveal, mpc_engine=h.mpc_engine)


def alignment_to_proto(header: AlignmentHeader, positions: np.ndarray, chunk_bytes: int) -> Sequence[tuple[Message, int]]:
    return [(session_pb2.AlignmentMessage(header=alignment_header_to_proto(header)), 0)] + [
        (session_pb2.AlignmentMessage(positions=c), len(c.data)) for c in int32_chunks(positions, chunk_bytes)]


def labels_header_to_proto(h: LabelsHeader) -> session_pb2.LabelsHeader:
    return session_pb2.LabelsHeader(round=h.round, done=h.done, changed=h.changed, sizes=h.sizes,
                                    n_labels=h.n_labels, seeding=h.seeding, centre=h.centre)


def labels_to_proto(header: LabelsHeader, labels: np.ndarray | None, chunk_bytes: int) -> Sequence[tuple[Message, int]]:
    """A round's header and its labels in chunks (a seeding step's header alone: ``labels`` None)."""
    head = session_pb2.LabelsMessage(header=labels_header_to_proto(header))
    if labels is None:
        return [(head, 0)]
    return [(head, 0)] + [(session_pb2.LabelsMessage(labels=c), len(c.data)) for c in int32_chunks(labels, chunk_bytes)]


def labels_from_proto(request: session_pb2.LabelsRequest) -> LabelsAsk:
    return LabelsAsk(request.party, request.round, request.seeding)


def distance_from_proto(message: session_pb2.DistanceMessage, size: int) -> Received:
    """One DistanceMessage: its header, or its chunk with the chunk's bytes as payload."""
    part = message.WhichOneof("part")
    if part == "header":
        h = message.header
        return Received(DistanceHeader(h.party, h.round, h.rows, h.cols, h.masked, h.seeding), size)
    if part == "chunk":
        chunk = chunk_from_proto(message.chunk)
        return Received(chunk, size, len(chunk.data))
    return Received(None, size)


def distances_made(messages: Iterable[session_pb2.DistanceMessage]) -> Iterator[Received]:
    """DistanceMessages made in this process, each sized by serialising it."""
    return (distance_from_proto(m, m.ByteSize()) for m in messages)


def posted_distances_to_proto(payload: int) -> session_pb2.DistanceReply:
    return session_pb2.DistanceReply(payload_bytes=payload)


def confirm_from_proto(request: session_pb2.ConfirmRequest) -> ConfirmPost:
    return ConfirmPost(request.party, tuple(ConfirmTag(to=t.to, sender=t.sender, field=t.field, mac=t.mac) for t in request.tags),
                       request.refusal)


def confirmed_to_proto(tags: list[ConfirmTag]) -> session_pb2.ConfirmReply:
    return session_pb2.ConfirmReply(tags=[session_pb2.ConfirmTag(to=t.to, sender=t.sender, field=t.field, mac=t.mac)
                                          for t in tags])


# -- MPC relay -------------------------------------------------------------------------------------

def relay_from_proto(message: session_pb2.RelayMessage, size: int) -> Received:
    """One RelayMessage: a frame's payload is its ciphertext, a result's its labels and centres."""
    part = message.WhichOneof("part")
    if part == "open":
        return Received(RelayOpen(message.open.party), size)
    if part == "frame":
        f = message.frame
        return Received(Frame(f.peer, f.seq, f.data), size, len(f.data))
    if part == "mark":
        return Received(Mark(int(message.mark.round)), size)
    if part == "result":
        r = message.result
        return Received(RelayResult(r.labels, r.centres), size, len(r.labels) + len(r.centres))
    return Received(None, size)


def relay_made(message: session_pb2.RelayMessage) -> Received:
    return relay_from_proto(message, message.ByteSize())


def frame_to_proto(frame: Frame) -> session_pb2.RelayMessage:
    return session_pb2.RelayMessage(frame=session_pb2.RelayFrame(peer=frame.peer, seq=frame.seq, data=frame.data))


#: The request message of each RPC, as named in an INVALID_ARGUMENT for one that does not decode.
REQUESTS = {"Join": "JoinRequest", "GetPeers": "PeersRequest", "PostSealedKeys": "SealedKeys",
            "GetSealedKey": "SealedKeyRequest", "GetResult": "ResultRequest", "GetStatus": "StatusRequest",
            "GetAlignment": "AlignmentRequest", "PostDistances": "DistanceMessage", "GetLabels": "LabelsRequest",
            "Relay": "RelayMessage", "Upload": "UploadMessage", "Confirm": "ConfirmRequest"}
