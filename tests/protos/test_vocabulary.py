"""The protocols' names on the wire (protos.vocabulary), as both sides encode and decode them."""

from __future__ import annotations

import pytest

from coordinator.messages import Terms
from coordinator.wire.serde import terms_to_proto
from parties.serde import Joined, joined_from_proto, joined_to_proto
from protos.ppcsim.v1 import session_pb2
from protos.vocabulary import BUILT_IN, protocol_from_wire, protocol_to_wire


@pytest.mark.parametrize("name, value", [("upload", 0), ("secure_aggregation", 1), ("mpc", 2)])
def test_a_built_in_protocol_is_its_own_enum_value_and_no_name(name, value):
    assert protocol_to_wire(name) == (value, "")
    assert protocol_from_wire(value) == name


def test_a_plugin_travels_as_protocol_plugin_with_its_name():
    assert protocol_to_wire("column_sums") == (session_pb2.PROTOCOL_PLUGIN, "column_sums")
    assert protocol_from_wire(session_pb2.PROTOCOL_PLUGIN, "column_sums") == "column_sums"


@pytest.mark.parametrize("value, name, why", [(session_pb2.PROTOCOL_PLUGIN, "", "protocol_name is empty"),
                                              (7, "", "unknown Protocol value 7")])
def test_a_protocol_the_reader_cannot_name_is_refused_saying_why(value, name, why):
    with pytest.raises(ValueError, match=why):
        protocol_from_wire(value, name)


@pytest.mark.parametrize("protocol", [*BUILT_IN, "column_sums"])
def test_the_coordinator_s_join_reply_reads_back_as_the_party_s(protocol):
    reply = terms_to_proto(Terms(1 << 20, 30.0, "plain", ("a", "b"), protocol))
    joined = joined_from_proto(session_pb2.JoinReply.FromString(reply.SerializeToString()))
    assert joined.protocol == protocol
    assert joined_to_proto(joined) == reply


def test_a_built_in_protocol_s_join_reply_is_the_bytes_it_was_before_plugins():
    reply = terms_to_proto(Terms(1 << 20, 30.0, "plain", ("a", "b"), "mpc"))
    before = session_pb2.JoinReply(chunk_bytes=1 << 20, seconds_left=30.0, parties=["a", "b"],
                                   protocol=session_pb2.PROTOCOL_MPC)
    assert reply.SerializeToString() == before.SerializeToString()
    assert isinstance(joined_to_proto(Joined(1, 1.0, "plain", ["a"], "upload")), session_pb2.JoinReply)
