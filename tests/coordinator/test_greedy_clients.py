"""An adversary beside an honest session on one coordinator (loopback, bounded): outsiders that open streams and
send nothing, a party that parks more waiting calls than its share, uploads that would inflate. Each case
asserts the refusal named by docs/protocol.md ("Limits") and that an honest session on the same coordinator
completes on time, its GetStatus answered within a second throughout.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from types import SimpleNamespace

import grpc
import numpy as np
import pytest

from coordinator.limits import Limits
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.session import DONE, SessionSpec
from protos.ppcsim.v1 import array_pb2, session_pb2, session_pb2_grpc
from protos.serde import Layout

TIMEOUT = 20
LIMITS = Limits(party_calls=8, anonymous_streams=48, first_message_seconds=3.0, idle_seconds=3.0)
M, K = 40, 2
DATA = np.random.default_rng(0).normal(size=(M, K)).astype("<f8")
_names = itertools.count()


@pytest.fixture(scope="module")
def coordinator():
    registry = Registry()
    server, port = start_server("127.0.0.1:0", registry, limits=LIMITS)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield SimpleNamespace(registry=registry, stub=session_pb2_grpc.CoordinatorStub(channel), port=port)
    channel.close()
    server.stop(None).wait(10)


def session(c, parties=("a", "b"), **spec) -> str:
    spec.setdefault("deadline", 60)
    spec.setdefault("ids", "plain")
    name = f"adv{next(_names):04d}"
    c.registry.create(SessionSpec(name=name, parties=parties, **spec))
    return name


def upload(name, party, ids=None, data=DATA):
    ids = [f"r{i}" for i in range(len(data))] if ids is None else ids
    yield session_pb2.UploadMessage(header=session_pb2.UploadHeader(
        session=name, party=party, method="none", n_ids=len(ids), n_columns=data.shape[1],
        arrays=[array_pb2.ArraySpec(name="data", dtype="<f8", shape=list(data.shape), layout=Layout.ROWS)]))
    yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=ids))
    yield session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=0, offset=0, data=data.tobytes()))


def honest(c, name, parties=("a", "b"), tokens: dict[str, str] | None = None) -> float:
    """Run the session ``name`` as honest parties, one thread each, checking GetStatus every 0.1 s;
    returns the seconds it took. Asserts every status answered within 1 s."""
    slowest = []
    finished = threading.Event()

    def watch():
        while not finished.is_set():
            t = time.monotonic()
            c.stub.GetStatus(session_pb2.StatusRequest(session=name), timeout=TIMEOUT, metadata=auth(parties[0]))
            slowest.append(time.monotonic() - t)
            time.sleep(0.1)

    def auth(p):
        return (("authorization", f"Bearer {tokens[p]}"),) if tokens else ()

    def party(p):
        c.stub.Join(session_pb2.JoinRequest(session=name, party=p), timeout=TIMEOUT, metadata=auth(p))
        c.stub.Upload(upload(name, p), timeout=TIMEOUT, metadata=auth(p))
        list(c.stub.GetResult(session_pb2.ResultRequest(session=name, party=p), timeout=TIMEOUT, metadata=auth(p)))

    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.monotonic()
    try:
        threads = [threading.Thread(target=party, args=(p,)) for p in parties]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        finished.set()
        watcher.join()
    assert c.registry.get(name).state == DONE, c.registry.get(name).error
    assert max(slowest) < 1.0, max(slowest)
    return time.monotonic() - start


def silent(release: threading.Event):
    """A request stream that sends nothing until ``release`` is set."""
    release.wait()
    return
    yield  # a generator


def test_outsiders_and_a_greedy_party_do_not_stall_an_honest_session(coordinator):
    c = coordinator
    alone = honest(c, session(c))  # the baseline: no adversary
    greedy = session(c)  # party a parks GetPeers that wait for b, who never joins
    c.stub.Join(session_pb2.JoinRequest(session=greedy, party="a"), timeout=TIMEOUT)
    release = threading.Event()
    parked, outsiders = [], []
    try:
        for _ in range(3 * LIMITS.party_calls):
            parked.append(c.stub.GetPeers.future(session_pb2.PeersRequest(session=greedy, party="a"), timeout=30))
        for i in range(40):
            rpc = c.stub.Upload if i % 2 else c.stub.PostDistances
            outsiders.append(rpc.future(silent(release), timeout=30))
        time.sleep(0.5)
        refused = [f for f in parked if f.done()]
        assert len(refused) == 2 * LIMITS.party_calls  # past its share, at once
        for f in refused:
            assert f.exception().code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f.exception().details() == (f"party 'a' of session '{greedy}' has {LIMITS.party_calls} calls in "
                                               "flight on this connection (the session proves no party's identity: "
                                               "calls are counted by the name they claim and their connection), "
                                               "the cap per party (server busy: try again once a call ends)")
        took = honest(c, session(c))
        assert took < alone + 2.0, (took, alone)
        # a parked call the party cancels frees its place at once
        waiting = [f for f in parked if not f.done()]
        assert len(waiting) == LIMITS.party_calls
        waiting[0].cancel()
        time.sleep(0.2)
        again = c.stub.GetPeers.future(session_pb2.PeersRequest(session=greedy, party="a"), timeout=30)
        time.sleep(0.3)
        assert not again.done()  # admitted: it waits for b
        parked.append(again)
        # the outsiders are cut off once their first-message deadline passes
        for f in outsiders:
            err = f.exception(timeout=LIMITS.first_message_seconds + 5)
            assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED, err
            assert "no first message within 3 s" in err.details()
    finally:
        release.set()
        for f in parked:
            f.cancel()


def test_streams_that_name_no_session_are_capped(coordinator):
    c = coordinator
    release = threading.Event()
    streams = [c.stub.Upload.future(silent(release), timeout=30) for _ in range(LIMITS.anonymous_streams + 10)]
    try:
        time.sleep(1.0)
        # refused at once, past the cap; on a loaded machine the admitted ones may have reached their first-message
        # deadline by now as well (DEADLINE_EXCEEDED): those are not refusals
        refused = [f for f in streams if f.done() and f.exception().code() == grpc.StatusCode.RESOURCE_EXHAUSTED]
        assert len(refused) == 10
        assert refused[0].exception().code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused[0].exception().details() == (f"{LIMITS.anonymous_streams} streams are waiting for their first "
                                                    "message, the cap for the whole coordinator; send the header at "
                                                    "once (server busy: try again once a call ends)")
        # a party whose token proves it is no anonymous stream: it is served all the same
        tokens = {p: f"secret-{p}" for p in ("a", "b")}
        name = session(c, tokens={p: hashlib.sha256(t.encode()).hexdigest() for p, t in tokens.items()})
        honest(c, name, tokens=tokens)
    finally:
        release.set()
        for f in streams:
            f.cancel()


def test_a_stream_that_stops_sending_is_cut_off_after_the_idle_limit(coordinator):
    c = coordinator
    name = session(c)
    c.stub.Join(session_pb2.JoinRequest(session=name, party="a"), timeout=TIMEOUT)
    release = threading.Event()

    def stalled():
        messages = upload(name, "a")
        yield next(messages)
        release.wait()

    call = c.stub.Upload.future(stalled(), timeout=30)
    try:
        err = call.exception(timeout=LIMITS.idle_seconds + 5)
    finally:
        release.set()
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details() == "party 'a': upload broken off after 0 of 640 bytes (no message for 3 s after message 1 " \
                            "(the idle limit))"
    honest(c, name)  # the party uploads again and the session completes


def test_with_tokens_a_stream_without_a_valid_token_is_refused_before_its_first_message():
    registry = Registry()
    digests = {p: hashlib.sha256(f"token-{p}".encode()).hexdigest() for p in ("a", "b")}
    registry.create(SessionSpec(name="t", parties=("a", "b"), tokens=digests, ids="plain"))
    server, port = start_server("127.0.0.1:0", registry, limits=LIMITS)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = session_pb2_grpc.CoordinatorStub(channel)
    release = threading.Event()
    try:
        for metadata in ((), (("authorization", "Bearer nope"),)):
            start = time.monotonic()
            call = stub.Upload.future(silent(release), timeout=30, metadata=metadata)
            err = call.exception(timeout=5)
            assert time.monotonic() - start < 1.0
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED, err
    finally:
        release.set()
        channel.close()
        server.stop(None).wait(10)


def test_without_tokens_an_outsider_claiming_a_party_name_does_not_take_its_calls(coordinator):
    """A session that proves no identity counts a claimed name's calls per connection: an outsider that parks
    every call the cap allows under party 'a''s name, on a connection of its own, leaves the real 'a' (on its
    own connection) able to join, wait for its peers and finish the session."""
    c = coordinator
    name = session(c)
    # a channel of its own: gRPC would otherwise share one connection between channels of this process
    outsider = grpc.insecure_channel(f"127.0.0.1:{c.port}", options=[("grpc.use_local_subchannel_pool", 1)])
    stub = session_pb2_grpc.CoordinatorStub(outsider)
    try:
        stub.Join(session_pb2.JoinRequest(session=name, party="a"), timeout=TIMEOUT)
        parked = [stub.GetPeers.future(session_pb2.PeersRequest(session=name, party="a"), timeout=60)
                  for _ in range(LIMITS.party_calls + 1)]
        time.sleep(0.5)
        assert sum(f.done() for f in parked) == 1  # the outsider's own share is full
        took = honest(c, name)  # 'a' and 'b' on the test's connection: every call admitted
        assert c.registry.get(name).state == DONE and took < 30
    finally:
        outsider.close()
