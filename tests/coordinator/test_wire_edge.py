"""The coordinator's edge: every message decoded into plain values and encoded back, counted once, replies bounded."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator import handlers
from coordinator.errors import InvalidArgument
from coordinator.ledger import DOWN, STATUS_ENTRIES, UP
from coordinator.messages import Chunk, ConfirmTag, DistanceHeader, Frame, IdPart, Mark, RelayResult, UploadHeader
from coordinator.session import CLUSTERING, DONE, FAILED, WAITING, Session, SessionSpec
from coordinator.wire import serde
from protos.ppcsim.v1 import array_pb2, session_pb2

#: gRPC's default largest message.
GRPC_MAX = 4 << 20


def test_an_upload_header_decodes_into_plain_values_and_its_chunks_carry_their_bytes_as_payload():
    header = session_pb2.UploadHeader(session="s", party="a", method="drbt", params={"k": "2"}, n_ids=3,
                                      arrays=[array_pb2.ArraySpec(name="x", dtype="<f8", shape=[3, 2], layout=0)],
                                      id_encoding=session_pb2.ID_INT_DELTAS_ZLIB, packed_id_bytes=9)
    got = serde.made(session_pb2.UploadMessage(header=header))
    assert got.part == UploadHeader("a", "drbt", {"k": "2"}, 3, (serde.ArraySpec("x", "<f8", (3, 2), 0, 48),),
                                    session_pb2.ID_INT_DELTAS_ZLIB, 9, "s")
    # sized where decoded; a spec the wire cannot size is decoded with the reason, for the session to refuse
    odd = array_pb2.ArraySpec(name="y", dtype="<f2", shape=[3, 2], layout=0)
    assert serde.spec_from_proto(odd) == serde.ArraySpec("y", "<f2", (3, 2), 0, None,
                                                         "array 'y': dtype '<f2' is not one of <f8, <f4, <i4")
    assert got.size == session_pb2.UploadMessage(header=header).ByteSize() and got.payload == 0
    chunk = session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=1, offset=8, data=b"abcdefgh"))
    raw = chunk.SerializeToString()
    assert serde.upload_received(raw) == serde.Received(Chunk(1, 8, b"abcdefgh"), len(raw), 8)
    ids = serde.made(session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=["r1", "r2"])))
    assert ids.part == IdPart(("r1", "r2")) and ids.payload == 0
    assert serde.made(session_pb2.UploadMessage()).part is None


def test_secure_aggregation_and_relay_messages_round_trip():
    header = session_pb2.DistanceHeader(session="s", party="b", round=3, rows=5, cols=2, masked=True)
    assert serde.distance_from_proto(session_pb2.DistanceMessage(header=header), 7).part == \
        DistanceHeader("b", 3, 5, 2, True, False)
    frame = Frame("b", 4, b"x" * 20)
    message = serde.frame_to_proto(frame)
    assert serde.relay_made(message).part == frame and serde.relay_made(message).payload == 20
    assert serde.relay_made(session_pb2.RelayMessage(mark=session_pb2.RelayMark(round=2))).part == Mark(2)
    result = session_pb2.RelayMessage(result=session_pb2.RelayResult(labels=b"1234", centres=b"56"))
    assert serde.relay_made(result).part == RelayResult(b"1234", b"56") and serde.relay_made(result).payload == 6
    tags = [ConfirmTag(to="a", sender="b", field="k", mac=b"m" * 32)]
    reply = serde.confirmed_to_proto(tags)
    request = session_pb2.ConfirmRequest(session="s", party="b", tags=reply.tags)
    assert serde.confirm_from_proto(request).tags == tuple(tags)
    labels = np.arange(5, dtype=np.int32)
    messages = serde.labels_to_proto(serde.LabelsHeader(round=1, sizes=(2, 3), n_labels=5), labels, 8)
    assert [p for _, p in messages] == [0, 8, 8, 4]
    data = b"".join(m.labels.data for m, _ in messages[1:])
    np.testing.assert_array_equal(np.frombuffer(data, "<i4"), labels)


def test_the_session_states_are_the_wires():
    assert serde.STATES == {WAITING: session_pb2.WAITING, CLUSTERING: session_pb2.CLUSTERING,
                            DONE: session_pb2.DONE, FAILED: session_pb2.FAILED}
    assert all(ours == theirs for ours, theirs in serde.STATES.items())


def test_each_request_and_reply_is_counted_once_by_its_serialised_size():
    session = Session(SessionSpec("s", ("a", "b"), ids="plain"))
    request = session_pb2.JoinRequest(session="s", party="a")
    reply = handlers.join(session, request)
    assert reply.parties == ["a", "b"] and reply.ids == session_pb2.IDS_PLAIN
    assert [(e.party, e.rpc, e.direction, e.serialized) for e in session.ledger.entries()] == [
        ("a", "Join", UP, request.ByteSize()), ("a", "Join", DOWN, reply.ByteSize())]
    with pytest.raises(InvalidArgument):  # an upload must start with its header: refused, not counted as one
        handlers.upload(session, serde.made(session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=["r"]))), iter(()))
    outsider = session_pb2.JoinRequest(session="s", party="mallory")
    with pytest.raises(Exception, match="expects no party 'mallory'"):
        handlers.join(session, outsider)
    assert len(session.ledger.entries()) == 2  # a party the session does not expect is not counted


def test_get_status_sends_the_latest_entries_and_stays_below_grpcs_message_limit():
    """A long session's ledger (here 60,000 messages of a party with a long name) would make a GetStatus reply
    of over 4 MiB; the reply carries the latest STATUS_ENTRIES only."""
    party = "p" * 64
    session = Session(SessionSpec("s", (party,), ids="plain"))
    for i in range(60_000):
        session.ledger.record(party, "Upload", UP, 1000 + i, i)
    request = session_pb2.StatusRequest(session="s")
    reply = handlers.status(session, request)
    everything = session_pb2.StatusReply(ledger=[
        session_pb2.LedgerEntry(party=e.party, rpc=e.rpc, direction=e.direction, payload_bytes=e.payload,
                                serialized_bytes=e.serialized, time=e.time) for e in session.ledger.entries()])
    assert everything.ByteSize() > GRPC_MAX  # what the reply was before it was bounded
    assert reply.ByteSize() < GRPC_MAX and len(reply.ledger) == STATUS_ENTRIES
    assert reply.ledger[-1].rpc == "GetStatus" and reply.ledger[-1].direction == UP  # this call's request, last
    assert reply.ledger[0].payload_bytes == 60_000 - STATUS_ENTRIES + 1  # oldest first
    small = Session(SessionSpec("t", ("a",), ids="plain"))
    assert len(handlers.status(small, session_pb2.StatusRequest(session="t")).ledger) == 1  # all, when few


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    return bytes([tag]) + _varint(len(payload)) + payload


def _protobuf(raw: bytes) -> Chunk | None:
    """What protobuf reads from ``raw``: its chunk, or None if it is no chunk or does not decode."""
    try:
        message = session_pb2.UploadMessage.FromString(raw)
    except Exception:  # noqa: BLE001 - DecodeError
        return None
    return serde.chunk_from_proto(message.chunk) if message.WhichOneof("part") == "chunk" else None


@pytest.mark.parametrize("array, offset, size", [(0, 0, 1), (0, 1 << 20, 1 << 20), (1, 0, 7), (3, (1 << 40) + 5, 300),
                                                 ((1 << 32) - 1, (1 << 64) - 1, 2)])
def test_a_chunk_as_protobuf_serialises_it_is_read_in_place_with_protobufs_values(array, offset, size):
    data = np.random.default_rng(size).bytes(size)
    raw = session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=array, offset=offset, data=data)).SerializeToString()
    got = serde.chunk_in_place(raw)
    assert got == _protobuf(raw) == Chunk(array, offset, data)
    assert isinstance(got.data, memoryview) and got.data.obj is raw  # not a copy
    assert serde.upload_received(raw) == serde.Received(Chunk(array, offset, data), len(raw), size)


def test_any_other_layout_is_left_to_protobuf_and_nothing_read_in_place_differs_from_it():
    """Hostile or unusual layouts: repeated, reordered or unknown fields, wrong wire types, truncated or
    overlong varints, values past a field's range, trailing bytes. Whatever is read in place must be what
    protobuf reads; everything else falls back to protobuf."""
    data = b"abcdefgh"
    inner = [b"\x08" + _varint(2), b"\x10" + _varint(16), _field(0x1A, data)]
    layouts = {
        "canonical": _field(0x1A, b"".join(inner)),
        "explicit zeros": _field(0x1A, b"\x08\x00\x10\x00" + _field(0x1A, data)),
        "non-canonical varint": _field(0x1A, b"\x08\x82\x00" + inner[1] + inner[2]),
        "reordered": _field(0x1A, inner[1] + inner[0] + inner[2]),
        "data first": _field(0x1A, inner[2] + inner[0]),
        "array twice": _field(0x1A, inner[0] + inner[0] + inner[1] + inner[2]),
        "data twice": _field(0x1A, inner[0] + inner[1] + inner[2] + _field(0x1A, b"xy")),
        "unknown field": _field(0x1A, inner[0] + inner[1] + inner[2] + b"\x20\x01"),
        "unknown field first": _field(0x1A, b"\x20\x01" + b"".join(inner)),
        "chunk twice": _field(0x1A, b"".join(inner)) * 2,
        "header then chunk": b"\x0a\x00" + _field(0x1A, b"".join(inner)),
        "array as bytes": _field(0x1A, _field(0x0A, b"\x02") + inner[1] + inner[2]),
        "array past uint32": _field(0x1A, b"\x08" + _varint(1 << 32) + inner[1] + inner[2]),
        "offset past uint64": _field(0x1A, inner[0] + b"\x10" + _varint(1 << 64) + inner[2]),
        "overlong varint": _field(0x1A, inner[0] + b"\x10" + b"\x80" * 10 + b"\x01" + inner[2]),
        "data length short": b"\x1a" + _varint(len(b"".join(inner)) + 1) + b"".join(inner) + b"z",
        "trailing byte": _field(0x1A, b"".join(inner)) + b"\x00",
        "truncated": _field(0x1A, b"".join(inner))[:-1],
        "empty": b"",
        "ids": session_pb2.UploadMessage(ids=session_pb2.IdChunk(packed=data)).SerializeToString(),
    }
    read_in_place = {name for name, raw in layouts.items() if serde.chunk_in_place(raw) is not None}
    assert read_in_place == {"canonical", "explicit zeros", "non-canonical varint"}
    for name, raw in layouts.items():
        mine = serde.chunk_in_place(raw)
        assert mine is None or mine == _protobuf(raw), name
    assert serde.chunk_in_place(bytearray(layouts["canonical"])) is None  # a buffer that may change: copied


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"\x08", b"\x10", b"\x1a", b"\x0a", b"\x00", b"\x01", b"\x7f", b"\x80", b"\xff",
                                 b"\x03", b"\x08\x01", b"\x10\x80\x01", b"\x1a\x03abc"]), max_size=12))
def test_random_layouts_read_in_place_agree_with_protobuf(tokens):
    body = b"".join(tokens)
    for raw in (body, _field(0x1A, body)):
        mine = serde.chunk_in_place(raw)
        assert mine is None or mine == _protobuf(raw)
