"""The coordinator's protocol registry (coordinator.protocols.base): a session runs the class registered under
its protocol's name, announces the terms that class's ProtocolTerms name, and refuses a name nobody registered."""

from __future__ import annotations

import pytest

from coordinator.clustering import ClusteringSpec
from coordinator.errors import SessionError
from coordinator.protocols.base import PROTOCOLS, SessionProtocol, protocol_class
from coordinator.protocols.builtin import Mpc, SecureAggregation, Upload
from coordinator.session import Session, SessionSpec
from protos.clustering import PROTOCOL_TERMS, ProtocolTerms


def test_the_built_in_protocols_are_registered_by_name():
    assert {name: PROTOCOLS[name] for name in ("upload", "secure_aggregation", "mpc")} == {
        "upload": Upload, "secure_aggregation": SecureAggregation, "mpc": Mpc}


def test_an_unregistered_name_is_refused_naming_the_registered_ones():
    with pytest.raises(SessionError, match="runs no protocol 'nope' \\(it runs upload, secure_aggregation, mpc"):
        protocol_class("nope")


@pytest.mark.parametrize("protocol, announced", [("upload", None), ("mpc", 7), ("secure_aggregation", 7)])
def test_join_announces_the_terms_the_protocol_names(protocol, announced):
    session = Session(SessionSpec("s", ("a", "b", "c"), ClusteringSpec(protocol=protocol)))
    terms = session.terms()
    session.fail("done")
    assert terms.protocol == protocol
    assert (None if terms.clustering is None else len(terms.clustering)) == announced


def test_a_registered_protocol_drives_its_session(monkeypatch):
    """A protocol registered here (and only here): the session calls its start at once and its begin once every
    upload is in; what it completes is the session's outcome."""
    calls = []

    class Echo(SessionProtocol):
        terms = ProtocolTerms("echo")

        def start(self):
            calls.append("start")

        def begin(self):
            calls.append("begin")

    monkeypatch.setitem(PROTOCOLS, "echo", Echo)
    monkeypatch.setitem(PROTOCOL_TERMS, "echo", Echo.terms)
    session = Session(SessionSpec("s", ("a",), ClusteringSpec(protocol="echo")))
    assert isinstance(session.protocol, Echo) and calls == ["start"]
    assert session.terms().protocol == "echo" and session.relay.rounds == ""
    session._finish()
    assert calls == ["start", "begin"]
    session.fail("done")
