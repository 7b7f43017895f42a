"""The coordinator's MPC relay (coordinator.protocols.mpc) on the asynchronous server, without MPyC: frames forwarded as
coroutines, idle streams cut naming the party, refusals naming the party and frames held against the budget."""

from __future__ import annotations

import time

import numpy as np
import pytest

# -- the relay on the asynchronous server, without MPyC -----------------------------------------------

def _relay_coordinator(parties=("a", "b", "c"), **limits):
    """A coordinator whose MPC session has its ids joined (a stand-in for the rounds: the relay needs its hub)."""
    import types

    from coordinator.clustering import ClusteringSpec
    from coordinator.limits import Limits
    from coordinator.protocols.mpc import Hub
    from coordinator.registry import Registry
    from coordinator.server import start_server
    from coordinator.session import CLUSTERING, SessionSpec

    registry = Registry()
    session = registry.create(SessionSpec(name="r", parties=parties, ids="plain", deadline=60,
                                          memory=limits.pop("memory", 0),
                                          clustering=ClusteringSpec(protocol="mpc", n_clusters=2, max_iter=1)))
    session.arbiter = types.SimpleNamespace(hub=Hub(session, list(parties)), m=4, k=2, spec=session.spec.clustering,
                                            outcome=lambda labels, description: ("outcome", labels.tolist()))
    session.state = CLUSTERING
    server, port = start_server("127.0.0.1:0", registry, limits=Limits(**limits))
    return session, server, port


class _Party:
    """One party's Relay call: ``send`` puts a message on its stream, ``close`` ends it; ``got`` what it read."""

    def __init__(self, stub, name: str, session: str = "r"):
        import queue
        import threading

        import grpc

        self.name, self.out, self.got, self.error = name, queue.Queue(), [], None
        self.out.put(_relay_message(open=(session, name)))

        def requests():
            while (message := self.out.get()) is not None:
                yield message

        self.call = stub.Relay(requests(), timeout=30)

        def read():
            try:
                for message in self.call:
                    self.got.append(message)
            except grpc.RpcError as exc:
                self.error = exc
        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()

    def send(self, **part):
        self.out.put(_relay_message(**part))

    def close(self):
        self.out.put(None)

    def wait(self, timeout=20):
        self.reader.join(timeout)
        assert not self.reader.is_alive(), f"{self.name}'s Relay did not end"


def _relay_message(open=None, frame=None, result=None):  # noqa: A002 - the oneof's name
    from protos.ppcsim.v1 import session_pb2

    if open is not None:
        return session_pb2.RelayMessage(open=session_pb2.RelayOpen(session=open[0], party=open[1]))
    if frame is not None:
        return session_pb2.RelayMessage(frame=session_pb2.RelayFrame(peer=frame[0], seq=frame[1], data=frame[2]))
    return session_pb2.RelayMessage(result=session_pb2.RelayResult(labels=np.asarray(result, "<i4").tobytes()))


def _stub(port):
    import grpc

    from protos.ppcsim.v1 import session_pb2_grpc

    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    return channel, session_pb2_grpc.CoordinatorStub(channel)


def test_the_relay_forwards_frames_as_coroutines_holding_no_stream_thread():
    """Frames for a party not yet connected wait for it; each arrives named by its authenticated sender; the
    parties' agreeing labels become the result; no stream thread was taken, waiting or forwarding."""
    from coordinator.session import DONE

    session, server, port = _relay_coordinator()
    channel, stub = _stub(port)
    try:
        a, b = _Party(stub, "a"), _Party(stub, "b")
        a.send(frame=("c", 0, b"\x01" * 40))  # c has not opened its stream: held for it
        a.send(frame=("b", 0, b"\x02" * 20))
        time.sleep(1.0)
        c = _Party(stub, "c")
        c.send(frame=("a", 0, b"\x03" * 16))
        deadline = time.monotonic() + 20
        while not (a.got and b.got and c.got) and time.monotonic() < deadline:
            time.sleep(0.05)  # a party that ends its stream is sent nothing more: let every frame arrive first
        for p in (a, b, c):
            p.send(result=[0, 1, 1, 0])
            p.close()
        for p in (a, b, c):
            p.wait()
        assert [(m.frame.peer, m.frame.data) for m in c.got] == [("a", b"\x01" * 40)]
        assert [(m.frame.peer, m.frame.data) for m in b.got] == [("a", b"\x02" * 20)]
        assert [(m.frame.peer, m.frame.data) for m in a.got] == [("c", b"\x03" * 16)]
        assert all(p.error is None for p in (a, b, c)), [p.error for p in (a, b, c)]
        assert session.state == DONE and session.outcome == ("outcome", [0, 1, 1, 0])
        hub = session.arbiter.hub
        assert hub.links[("a", "c")].bytes == 40 and hub.held == 0
        assert not server.servicer.pool._threads  # the relay never took one of the stream threads
        relayed = [e for e in session.ledger.entries() if e.rpc == "Relay"]
        assert sum(e.payload for e in relayed if e.direction == "down") == 76
    finally:
        channel.close()
        server.stop(None).wait(10)


def test_a_relay_quiet_only_before_every_stream_is_open_is_not_idle_but_after_it_is_cut_naming_the_party():
    import grpc

    session, server, port = _relay_coordinator(idle_seconds=1.5)
    channel, stub = _stub(port)
    try:
        a, b = _Party(stub, "a"), _Party(stub, "b")
        time.sleep(2.5)  # past the idle limit, but c has not opened: a and b wait for their peer
        assert a.error is None and b.error is None and session.error == ""
        c = _Party(stub, "c")
        for seq in range(12):  # a and b talk; c neither sends nor is sent anything
            a.send(frame=("b", seq, b"\x00" * 16))
            b.send(frame=("a", seq, b"\x00" * 16))
            time.sleep(0.25)
            if c.error is not None:
                break
        c.wait()
        assert c.error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert c.error.details() == "party 'c': no Relay message to or from it for 1.5 s after message 1 " \
                                    "(the idle limit)"
        a.wait()
        b.wait()
        assert a.error.code() == grpc.StatusCode.FAILED_PRECONDITION and "party 'c': no Relay message" in \
            a.error.details()
        assert session.error.startswith("party 'c': no Relay message")
    finally:
        for p in ("a", "b", "c"):
            party = locals().get(p)
            if party is not None:
                party.close()
        channel.close()
        server.stop(None).wait(10)


def test_relay_refusals_name_the_party_and_frames_held_for_a_party_count_against_the_budget():
    import grpc

    session, server, port = _relay_coordinator(memory=1 << 20)
    channel, stub = _stub(port)
    try:
        with pytest.raises(grpc.RpcError) as err:  # the stream must open
            list(stub.Relay(iter([_relay_message(frame=("b", 0, bytes(16)))]), timeout=10))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "RelayOpen" in err.value.details()
        with pytest.raises(grpc.RpcError) as err:  # only the coordinator runs a helper
            list(stub.Relay(iter([_relay_message(open=("r", "helper"))]), timeout=10))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and "'helper'" in err.value.details()
        a = _Party(stub, "a")
        time.sleep(0.5)
        second = _Party(stub, "a")
        second.wait()
        assert second.error.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert second.error.details() == "party 'a': a second Relay stream; one per party per session"
        for seq in range(20):  # c never opens: 2 MB held for it would pass the session's 1 MiB
            a.send(frame=("c", seq, bytes(100_000)))
        a.wait()
        assert a.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert a.error.details().startswith("party 'a': frames relayed to 'c' and not yet delivered: ")
        assert "session 'r''s memory budget of 1 MiB" in a.error.details()
        assert session.error.startswith("party 'a': frames relayed to 'c'")
        assert session.arbiter.hub.held == 0 and session.budget.used < 1 << 20  # given back with the session
    finally:
        channel.close()
        server.stop(None).wait(10)
