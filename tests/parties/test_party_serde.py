"""parties.serde: every value a party reads survives the round trip through its message, every message a party
builds is byte for byte the one it built by hand before, and the decoders refuse what a party must not take."""

from __future__ import annotations

import numpy as np
import pytest

from parties import serde
from parties.errors import PartyError
from parties.methods import Sent
from protos.ppcsim.v1 import array_pb2, session_pb2
from protos.serde import Layout

VALUES = [
    (serde.peer_to_proto, serde.peer_from_proto,
     serde.Peer(party="b", public_key=bytes(range(32)), key_signature=b"\x01" * 64, certificate=b"PEM")),
    (serde.sealed_to_proto, serde.sealed_from_proto,
     serde.SealedKey(to="c", nonce=b"\x02" * 12, ciphertext=b"\x03" * 48, sender="a")),
    (serde.outcome_to_proto, serde.outcome_from_proto,
     serde.ResultHeader(algorithm="kmeans", clusters_found=3, sizes=(5, 4, 1), noise=2, n_joined=10, n_labels=12)),
    (serde.alignment_to_proto, serde.alignment_from_proto,
     serde.AlignmentHeader(n_joined=9, n_rows=11, n_clusters=3, init=(0, 4, 8), scale_bits=30, max_iter=40,
                           parties=("a", "b"), seeding_steps=2, mpc_parties=("a", "b", "helper"), mpc_columns=(2, 3),
                           mpc_bits=64, mpc_frac=24, reveal_centres=True, mpc_helper="helper",
                           mpc_helper_key=b"\x04" * 32, revision=2)),
    (serde.labels_to_proto, serde.labels_from_proto,
     serde.LabelsHeader(round=7, done=True, changed=3, sizes=(4, 5), n_labels=9, seeding=False, centre=0)),
    (serde.tag_to_proto, serde.tag_from_proto, serde.ConfirmTag(to="b", field="records", mac=b"\x05" * 32, sender="a")),
    (serde.joined_to_proto, serde.joined_from_proto,
     serde.Joined(chunk_bytes=1 << 20, seconds_left=12.5, ids="pseudonymous", parties=["a", "b", "c"], protocol="mpc",
                  clustering={"n_clusters": 4, "max_iter": 9, "scale_bits": 32, "mpc_bits": 64, "mpc_frac": 24,
                              "reveal_centres": True, "helper": False})),
]


@pytest.mark.parametrize("to_proto, from_proto, value", VALUES, ids=lambda v: type(v).__name__)
def test_every_value_survives_its_message_and_back(to_proto, from_proto, value):
    message = to_proto(value)
    assert from_proto(message) == value
    again = type(message)()
    again.ParseFromString(message.SerializeToString())  # over the wire too
    assert from_proto(again) == value


@pytest.mark.parametrize("protocol, ids", [(session_pb2.PROTOCOL_UPLOAD, session_pb2.IDS_PLAIN),
                                           (session_pb2.PROTOCOL_SECURE_AGGREGATION, session_pb2.IDS_PSEUDONYMOUS),
                                           (session_pb2.PROTOCOL_MPC, session_pb2.IDS_PLAIN)])
def test_join_s_enums_read_as_names_and_back(protocol, ids):
    reply = session_pb2.JoinReply(chunk_bytes=1024, protocol=protocol, ids=ids, parties=["a", "b"])
    joined = serde.joined_from_proto(reply)
    assert joined.rounds == (protocol != session_pb2.PROTOCOL_UPLOAD)
    assert joined.ids == {session_pb2.IDS_PLAIN: "plain", session_pb2.IDS_PSEUDONYMOUS: "pseudonymous"}[ids]
    assert serde.joined_to_proto(joined).SerializeToString() == reply.SerializeToString()


def test_what_a_party_sends_is_the_bytes_it_sent_before():
    # the sealed keys and confirmation tags a party posts leave 'sender' empty: the coordinator fills it in
    sealed = serde.sealed_to_proto(serde.SealedKey(to="b", nonce=b"n" * 12, ciphertext=b"c" * 48))
    assert sealed.SerializeToString() == session_pb2.SealedKey(to="b", nonce=b"n" * 12,
                                                               ciphertext=b"c" * 48).SerializeToString()
    tag = serde.tag_to_proto(serde.ConfirmTag(to="b", field="n_joined", mac=b"m" * 32))
    assert tag.SerializeToString() == session_pb2.ConfirmTag(to="b", field="n_joined",
                                                             mac=b"m" * 32).SerializeToString()
    items = [serde.Frame("b", 0, b"sealed"), serde.Mark(3), serde.RelayResult(b"\x01\x00\x00\x00", b"")]
    sent = [m.SerializeToString() for m in serde.relay_requests("s", "a", items)]
    assert sent == [m.SerializeToString() for m in [
        session_pb2.RelayMessage(open=session_pb2.RelayOpen(session="s", party="a")),
        session_pb2.RelayMessage(frame=session_pb2.RelayFrame(peer="b", seq=0, data=b"sealed")),
        session_pb2.RelayMessage(mark=session_pb2.RelayMark(round=3)),
        session_pb2.RelayMessage(result=session_pb2.RelayResult(labels=b"\x01\x00\x00\x00", centres=b""))]]


def test_streams_are_decoded_into_values_and_anything_else_is_refused():
    frames = [session_pb2.RelayMessage(frame=session_pb2.RelayFrame(peer="b", seq=4, data=b"x"))]
    assert list(serde.relay_frames(frames)) == [serde.Frame("b", 4, b"x")]
    with pytest.raises(PartyError, match="relayed a 'mark' where only frames come"):
        list(serde.relay_frames([session_pb2.RelayMessage(mark=session_pb2.RelayMark(round=1))]))

    positions = np.array([3, 1, 2], dtype="<i4")
    header = session_pb2.AlignmentHeader(n_joined=3, n_rows=4, parties=["a", "b"])
    stream = [session_pb2.AlignmentMessage(header=header),
              session_pb2.AlignmentMessage(positions={"data": positions[:2].tobytes()}),
              session_pb2.AlignmentMessage(positions={"data": positions[2:].tobytes()})]
    alignment, got = serde.read_int32(stream, "positions")
    assert alignment == serde.alignment_from_proto(header) and isinstance(alignment, serde.AlignmentHeader)
    assert got.tolist() == [3, 1, 2]
    with pytest.raises(PartyError, match="had no header"):
        serde.read_int32(stream[1:], "positions")
    answer, labels = serde.read_int32([session_pb2.LabelsMessage(header=session_pb2.LabelsHeader(round=2, n_labels=1)),
                                       session_pb2.LabelsMessage(labels={"data": b"\x01\x00\x00\x00"})], "labels")
    assert answer == serde.LabelsHeader(round=2, n_labels=1) and labels.tolist() == [1]

    status = serde.status_from_proto(session_pb2.StatusReply(state=session_pb2.CLUSTERING, parties=[
        session_pb2.PartyStatus(party="a", joined=True, uploaded=True, payload_bytes=8, payload_expected=8)]))
    assert status == serde.Status("clustering", "", [serde.PartyStatus("a", True, True, 8, 8)])


@pytest.mark.parametrize("index, offset, size", [(0, 0, 1), (1, 8, 127), (2, 1 << 20, 128), (300, (1 << 40) + 3, 16384),
                                                 ((1 << 32) - 1, (1 << 64) - 1, (1 << 20) + 1)])
def test_a_chunk_serialised_directly_is_the_bytes_protobuf_makes(index, offset, size):
    data = np.random.default_rng(size).bytes(size)
    want = session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=index, offset=offset, data=data))
    assert serde.chunk_serialised(index, offset, memoryview(data)) == want.SerializeToString()


@pytest.mark.parametrize("ids, dtype, chunk_bytes", [
    (np.arange(50), None, 1000),  # int deltas; chunks that split elements
    (np.array([f"r{i}" for i in range(30)]), "float32", 64),  # text ids; converted a piece at a time
    (np.frombuffer(np.random.default_rng(1).bytes(16 * 40), dtype="S16"), None, 1 << 20),  # pseudonyms
])
def test_a_serialised_upload_is_the_serialisation_of_its_messages(ids, dtype, chunk_bytes):
    rng = np.random.default_rng(0)
    arrays = [Sent("a", rng.standard_normal((len(ids), 3)), Layout.ROWS),
              Sent("b", np.asfortranarray(rng.standard_normal((len(ids), 2))), Layout.ROWS)]  # not C-contiguous
    args = ("s", "p", "none", {"k": "2"}, ids, arrays, 5, chunk_bytes, dtype)
    sent = list(serde.upload_messages(*args, serialised=True))
    assert sent == [m.SerializeToString() for m in serde.upload_messages(*args)]
    assert sum(isinstance(m, bytes) for m in sent) == len(sent) > 3
