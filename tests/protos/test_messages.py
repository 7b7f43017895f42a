"""One set of wire types: what the coordinator encodes, a party decodes into the very same value and type
(protos.messages), and the other way round."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import coordinator.messages
import protos.messages
from coordinator.wire import serde as coordinator_serde
from parties import serde as party_serde
from protos.messages import AlignmentHeader, ConfirmTag, Frame, LabelsHeader, ResultHeader, SealedKey
from protos.ppcsim.v1 import session_pb2

SHARED = [name for name, value in vars(protos.messages).items()
          if dataclasses.is_dataclass(value) and value.__module__ == "protos.messages"]


def test_both_sides_read_the_shared_types_and_define_none_of_their_own():
    assert sorted(SHARED) == ["AlignmentHeader", "ConfirmTag", "Frame", "LabelsHeader", "Mark", "PartyStatus",
                              "RelayResult", "ResultHeader", "SealedKey"]
    for name in SHARED:
        assert getattr(coordinator.messages, name) is getattr(party_serde, name) is getattr(protos.messages, name)
    for side in (coordinator.messages, party_serde):  # no second type of the same fields on either side
        own = [v for v in vars(side).values() if dataclasses.is_dataclass(v) and v.__module__ == side.__name__]
        shapes = {tuple(f.name for f in dataclasses.fields(getattr(protos.messages, n))) for n in SHARED}
        assert not [v.__name__ for v in own if tuple(f.name for f in dataclasses.fields(v)) in shapes]


def test_the_result_header_the_coordinator_sends_is_the_one_the_party_reads():
    header = ResultHeader(algorithm="dbscan", clusters_found=2, sizes=(3, 1), noise=1, n_joined=5, n_labels=5)
    messages = [m for m, _ in coordinator_serde.result_to_proto(header, np.array([0, 0, 1, -1, 0], dtype="<i4"), 1024)]
    wire = messages[0].header
    assert wire.n_clusters == 2  # the proto field keeps its name and number; the Python name says what it counts
    assert party_serde.outcome_from_proto(wire) == header


@pytest.mark.parametrize("seeding", [False, True])
def test_alignment_and_labels_headers_survive_the_coordinator_s_encoder_and_the_party_s_decoder(seeding):
    header = AlignmentHeader(n_joined=4, n_rows=5, n_clusters=2, init=(0, 3), scale_bits=32, max_iter=3,
                             parties=("a", "b"), seeding_steps=int(seeding), revision=2, mpc_parties=("a", "b"),
                             mpc_columns=(1, 2), mpc_bits=64, mpc_frac=24, reveal="labels")
    positions = np.array([3, 0, 2, 1], dtype="<i4")
    got, at = party_serde.read_int32([m for m, _ in coordinator_serde.alignment_to_proto(header, positions, 8)],
                                     "positions")
    assert got == header and at.tolist() == positions.tolist()
    answer = LabelsHeader(round=1, done=True, changed=2, sizes=(3, 1), n_labels=4, seeding=seeding, centre=2)
    got, labels = party_serde.read_int32(
        [m for m, _ in coordinator_serde.labels_to_proto(answer, np.array([1, 0, 0, 0]), 4)], "labels")
    assert got == answer and labels.tolist() == [1, 0, 0, 0]


def test_keys_tags_and_frames_cross_both_ways_as_the_same_values():
    key = SealedKey(to="b", nonce=b"n" * 12, ciphertext=b"c" * 48, sender="a")
    assert party_serde.sealed_from_proto(coordinator_serde.sealed_to_proto(key)) == key
    tag = ConfirmTag(to="b", field="records", mac=b"m" * 32, sender="a")
    assert [party_serde.tag_from_proto(t) for t in coordinator_serde.confirmed_to_proto([tag]).tags] == [tag]
    posted = coordinator_serde.confirm_from_proto(session_pb2.ConfirmRequest(
        session="s", party="a", tags=[party_serde.tag_to_proto(tag)]))
    assert posted.tags == (tag,)
    frame = Frame("b", 7, b"sealed")
    assert list(party_serde.relay_frames([coordinator_serde.frame_to_proto(frame)])) == [frame]
