"""Hostile and broken input over real gRPC channels: each gets a precise status, the coordinator keeps serving.

Messages that cannot be decoded (protobuf refuses bytes that are not a message, and a message whose
string field (a session, party, array or id name) is not UTF-8) are answered INVALID_ARGUMENT, naming the
message type, before any session is touched. When the undecodable message comes in the middle of a joined
party's upload, the coordinator discards that upload, saying which message it could not decode; the
session goes on waiting, and the party may upload again from scratch.
"""

from __future__ import annotations

import itertools
import resource
import threading
import time
from types import SimpleNamespace

import grpc
import numpy as np
import pytest

from coordinator.clock import ManualClock
from coordinator.clustering import ClusteringSpec
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.servicer import CoordinatorServicer
from coordinator.session import STOP_GRACE, SessionSpec
from protos.ppcsim.v1 import array_pb2, session_pb2, session_pb2_grpc
from protos.serde import Layout

OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
NOT_FOUND = grpc.StatusCode.NOT_FOUND
FAILED = session_pb2.FAILED
WAITING = session_pb2.WAITING
ROWS, CONDENSED = Layout.ROWS, Layout.CONDENSED
#: Deadline of every call: a coordinator that answers later than this has hung.
TIMEOUT = 5.0

M, K = 4, 2
DATA = np.arange(M * K, dtype="<f8").reshape(M, K)
BYTES = DATA.tobytes()  # 64 bytes
IDS = [f"r{i}" for i in range(M)]


@pytest.fixture(scope="module")
def coordinator():
    """One in-process coordinator on loopback for the whole file, as a long-running one would be."""
    yield from serve(Registry())


@pytest.fixture(scope="module")
def manual():
    """A coordinator whose sessions read a ManualClock (``.clock``): deadlines pass when a test says so."""
    yield from serve(Registry(ManualClock()))


def serve(registry):
    server, port = start_server("127.0.0.1:0", registry)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    raw = lambda method, kind: getattr(channel, kind)(  # noqa: E731 - bytes in, bytes out
        f"/ppcsim.v1.Coordinator/{method}", request_serializer=lambda b: b, response_deserializer=lambda b: b
    )
    yield SimpleNamespace(
        registry=registry,
        clock=registry.clock,
        stub=session_pb2_grpc.CoordinatorStub(channel),
        raw={
            "Join": raw("Join", "unary_unary"),
            "Upload": raw("Upload", "stream_unary"),
            "GetResult": raw("GetResult", "unary_stream"),
            "GetStatus": raw("GetStatus", "unary_unary"),
        },
    )
    channel.close()
    server.stop(None)


_names = itertools.count()


def fresh(c, parties=("a", "b"), join=("a",), metadata=None, **spec):
    """A new session on the coordinator, with ``join`` joined."""
    spec.setdefault("deadline", 60)
    spec.setdefault("ids", "plain")  # these uploads send their ids as text
    session = c.registry.create(SessionSpec(name=f"h{next(_names):06d}", parties=parties, **spec))
    for party in join:
        c.stub.Join(session_pb2.JoinRequest(session=session.spec.name, party=party), timeout=TIMEOUT, metadata=metadata)
    return session


def spec(name="data", dtype="<f8", shape=(M, K), layout=ROWS):
    return array_pb2.ArraySpec(name=name, dtype=dtype, shape=list(shape), layout=layout)


def header(session, party="a", n=M, arrays=None, method="none", params=None):
    return session_pb2.UploadMessage(header=session_pb2.UploadHeader(
        session=session, party=party, method=method, params=params or {}, n_ids=n,
        arrays=[spec()] if arrays is None else arrays, n_columns=K,
    ))


def ids(*values):
    return session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=list(values)))


def chunk(data, offset=0, array=0):
    return session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=array, offset=offset, data=data))


def valid(session, party="a"):
    """A correct upload of DATA under IDS: header, ids, two chunks."""
    return [header(session, party), ids(*IDS), chunk(BYTES[:32]), chunk(BYTES[32:], 32)]


def eventually(condition, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def refused(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value.code(), err.value.details() or ""


def status(c, session):
    return c.stub.GetStatus(session_pb2.StatusRequest(session=session.spec.name), timeout=TIMEOUT)


def assert_fails_session(c, session, messages, why, party="a", retry=True):
    """The upload is refused with INVALID_ARGUMENT naming ``why`` and discarded: the session goes on waiting,
    counts the refused attempt, and takes the same party's correct upload afterwards."""
    before = len(session.refused)
    code, details = refused(lambda: c.stub.Upload(iter(messages), timeout=TIMEOUT))
    assert code == INVALID, details
    assert why in details
    assert details.startswith(f"party '{party}'")
    assert session.state == WAITING and session.error == ""
    assert len(session.refused) == before + 1 and session.refused[-1].error == details
    assert session.refused[-1].party == party and session.refused[-1].serialized > 0
    assert status(c, session).state == WAITING  # still serving
    if retry:
        reply = c.stub.Upload(iter(valid(session.spec.name, party)), timeout=TIMEOUT)
        assert reply.payload_bytes == len(BYTES) and party in session.contributions
    return details


# -- one malformed upload at a time ---------------------------------------------------------------

def _rows(n=M, shape=(M, K), **kw):
    return lambda s: [header(s, n=n, arrays=[spec(shape=shape, **kw)])]


CASES = {
    # dtype, shape, length
    "wrong dtype": (_rows(dtype="<f2"), "party 'a': array 'data': dtype '<f2' is not one of <f8, <f4, <i4"),
    "big-endian dtype": (_rows(dtype=">f8"), "dtype '>f8' is not one of"),
    "numpy dtype name": (_rows(dtype="float64"), "dtype 'float64' is not one of"),
    "more rows than ids": (_rows(shape=(M + 1, K)),
                           "party 'a', array 'data': expected rows of shape (4, k), got (5, 2)"),
    "one-dimensional rows": (_rows(shape=(M,)), "expected rows of shape (4, k), got (4,)"),
    "no columns": (_rows(shape=(M, 0)), "expected rows of shape (4, k), got (4, 0)"),
    "negative columns": (_rows(shape=(M, -2)), "expected rows of shape (4, k), got (4, -2)"),
    "many dimensions": (_rows(shape=(M, K) + (1,) * 998), "got (4, 2, 1, 1, ... 1000 dimensions)"),
    "n_ids at the uint64 limit": (_rows(n=2**64 - 1), "expected rows of shape (18446744073709551615, k), got (4, 2)"),
    "condensed of the wrong length": (
        lambda s: [header(s, method="osbr", params={"metric": "euclidean"},
                          arrays=[spec("sqdist", shape=(5,), layout=CONDENSED)])],
        "party 'a', array 'sqdist': a condensed matrix over 4 ids has shape (6,), got (5,)"),
    "negative condensed length": (
        lambda s: [header(s, method="osbr", params={"metric": "euclidean"},
                          arrays=[spec("sqdist", shape=(-6,), layout=CONDENSED)])],
        "a condensed matrix over 4 ids has shape (6,), got (-6,)"),
    # arrays the header announces
    "no arrays": (lambda s: [header(s, arrays=[])], "party 'a': the upload announces no arrays"),
    "array name twice": (lambda s: [header(s, arrays=[spec(), spec()])], "array name 'data' is announced twice"),
    "layout unspecified": (_rows(layout=0), "party 'a', array 'data': layout 0 is neither ROWS nor CONDENSED"),
    "layout unknown": (_rows(layout=7), "layout 7 is neither ROWS nor CONDENSED"),
    "rows and condensed": (
        lambda s: [header(s, arrays=[spec(), spec("d", shape=(6,), layout=CONDENSED)])],
        "an upload sends either rows or condensed matrices, not both"),
    "long control-character name": (
        lambda s: [header(s, arrays=[spec("\n" + "x" * 10_000, shape=(M,))])],
        "array '\\nxxxxx"),
    # sizes beyond any buffer: refused before allocating
    "huge shape": (
        _rows(n=10**12, shape=(10**12, 1)),
        "party 'a': the header announces 8000000000000 array bytes (7.28 TiB), more than this session's "
        "max_upload_bytes of 17179869184 (16 GiB)"),
    "shape whose product overflows int64": (
        _rows(n=2**32, shape=(2**32, 2**32)), "the header announces 147573952589676412928 array bytes"),
    # chunks
    "more bytes than announced": (lambda s: valid(s)[:3] + [chunk(BYTES[32:] + b"\0" * 8, 32)],
                                  "party 'a': array 'data': 72 bytes sent for an array of 64 bytes"),
    "chunks out of order": (lambda s: [header(s), ids(*IDS), chunk(BYTES[32:], 32), chunk(BYTES[:32])],
                            "array 'data': chunk at byte 32 but 0 bytes received so far (chunks must arrive in order"),
    "a chunk twice": (lambda s: valid(s)[:3] + [chunk(BYTES[:32])], "chunk at byte 0 but 32 bytes received so far"),
    "offset at the uint64 limit": (lambda s: valid(s)[:2] + [chunk(BYTES, 2**64 - 1)],
                                   "chunk at byte 18446744073709551615 but 0 bytes received"),
    "array index out of range": (
        lambda s: valid(s)[:2] + [chunk(BYTES, array=3)],
        "party 'a': chunk for array 3, which was not announced (the header announces 1 array)"),
    "array index at the uint32 limit": (lambda s: valid(s)[:2] + [chunk(BYTES, array=2**32 - 1)],
                                        "chunk for array 4294967295, which was not announced"),
    "second header": (lambda s: valid(s)[:2] + [header(s)], "party 'a': a second header in the upload"),
    "empty message": (lambda s: valid(s)[:2] + [session_pb2.UploadMessage()],
                      "party 'a': an empty UploadMessage (neither ids nor an array chunk)"),
    # ids
    "more ids than announced": (lambda s: [header(s), ids(*IDS), ids("r9")],
                                "party 'a': 5 ids sent, more than the 4 announced"),
    "repeated ids": (lambda s: [header(s), ids("r0", "r1", "r1", "r3")] + valid(s)[2:],
                     "party 'a': duplicate record ids in the upload ('r1' and 0 more repeat)"),
    "NUL in an id": (lambda s: [header(s), ids("r0", "r1", "r\x002", "r3")],
                     "party 'a': record id 2 contains a NUL character"),
    # truncated streams
    "stream ends after the header": (lambda s: [header(s)], "party 'a': upload ended after 0 of 4 ids"),
    "stream ends mid-ids": (lambda s: [header(s), ids("r0", "r1")], "upload ended after 2 of 4 ids"),
    "stream ends mid-array": (lambda s: valid(s)[:3],
                              "party 'a': upload ended after 32 of 64 bytes (array 'data': 32 of 64 bytes)"),
    # values
    "NaN": (lambda s: valid(s)[:2] + [chunk(np.where(DATA == 2, np.nan, DATA).tobytes())],
            "party 'a', array 'data': NaN or infinite values (1 of 8, the first at index (1, 0))"),
    "infinities": (lambda s: valid(s)[:2] + [chunk(np.where(DATA > 5, -np.inf, DATA).tobytes())],
                   "NaN or infinite values (2 of 8, the first at index (3, 0))"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_upload_gets_a_precise_error_and_a_good_retry_is_taken(coordinator, case):
    build, why = CASES[case]
    bystander = fresh(coordinator)
    session = fresh(coordinator)
    details = assert_fails_session(coordinator, session, build(session.spec.name), why)
    assert len(details.encode()) <= 1100
    assert bystander.state == WAITING and bystander.error == ""
    # the coordinator still takes a whole upload in another session
    reply = coordinator.stub.Upload(iter(valid(bystander.spec.name)), timeout=TIMEOUT)
    assert reply.payload_bytes == len(BYTES)


def test_the_cap_counts_array_bytes_and_id_characters(coordinator):
    session = fresh(coordinator, max_upload_bytes=32)
    assert_fails_session(coordinator, session, valid(session.spec.name),
                         "party 'a': the header announces 64 array bytes (64 bytes), more than this session's "
                         "max_upload_bytes of 32 (32 bytes)", retry=False)
    session = fresh(coordinator, max_upload_bytes=70)
    assert_fails_session(coordinator, session, [header(session.spec.name), ids("rrr0", "rrr1", "rrr2", "rrr3")],
                         "party 'a': 16 characters of ids and 64 array bytes exceed this session's "
                         "max_upload_bytes of 70 (70 bytes)", retry=False)


def test_an_announced_upload_costs_no_memory_until_its_bytes_arrive(coordinator):
    session = fresh(coordinator)
    rows = 1 << 30  # 8 GiB of <f8 announced, under the 16 GiB cap: accepted, nothing sent
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert_fails_session(coordinator, session, [header(session.spec.name, n=rows, arrays=[spec(shape=(rows, 1))])],
                         f"party 'a': upload ended after 0 of {rows} ids")
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 512


# -- streams that do not end -----------------------------------------------------------------------

def endless(first, then):
    yield from first
    for i in itertools.count():
        yield then(i)


@pytest.mark.parametrize("name, stream, why", [
    ("ids", lambda s: endless([header(s)], lambda i: ids(f"x{i}")), "party 'a': 5 ids sent, more than the 4 announced"),
    ("bytes", lambda s: endless(valid(s)[:2], lambda i: chunk(BYTES[:16], 16 * i)),
     "party 'a': array 'data': 80 bytes sent for an array of 64 bytes"),
    ("empty id chunks", lambda s: endless([header(s)], lambda i: ids()),
     "party 'a': message 2 is an IdChunk with no ids"),
    ("empty array chunks", lambda s: endless(valid(s)[:2], lambda i: chunk(b"")),
     "party 'a': message 3 is an ArrayChunk with no bytes"),
])
def test_an_endless_stream_is_stopped_where_it_passes_its_announcement(coordinator, name, stream, why):
    session = fresh(coordinator)
    start = time.monotonic()
    assert_fails_session(coordinator, session, stream(session.spec.name), why)
    assert time.monotonic() - start < TIMEOUT


# -- streams cut off, stalled, cancelled -----------------------------------------------------------

def held(messages, release: threading.Event, then=()):
    """Yield ``messages``, wait for ``release`` (at most 30 s), then yield ``then``."""
    yield from messages
    release.wait(30)
    yield from then


def test_a_client_cancelling_mid_upload_is_discarded_and_may_upload_again(coordinator):
    c = coordinator
    session = fresh(c)
    release = threading.Event()
    call = c.stub.Upload.future(held(valid(session.spec.name)[:3], release), timeout=30)
    try:
        eventually(lambda: "a" in session.uploads and session.uploads["a"].received == 32)
        call.cancel()
        eventually(lambda: len(session.refused) == 1)
    finally:
        release.set()
    # gRPC ends the server's side of a cancelled stream either as a cancellation or, racing it, as an
    # early end of the stream; the upload is discarded, naming what was received, either way
    assert session.refused[0].error in (
        "party 'a': upload broken off after 32 of 64 bytes (the stream was cancelled or cut off after message 3)",
        "party 'a': upload ended after 32 of 64 bytes (array 'data': 32 of 64 bytes)",
    )
    assert session.refused[0].payload == 32
    assert call.cancelled()
    assert session.state == WAITING and status(c, session).parties[0].payload_bytes == 0
    # the same party joins again and uploads from scratch
    c.stub.Join(session_pb2.JoinRequest(session=session.spec.name, party="a"), timeout=TIMEOUT)
    assert c.stub.Upload(iter(valid(session.spec.name)), timeout=TIMEOUT).payload_bytes == len(BYTES)


def test_a_session_completes_after_a_refused_upload_and_counts_its_bytes(coordinator):
    """The whole story: a NaN upload is refused, the party uploads again, both parties get their labels."""
    c = coordinator
    session = fresh(c, join=("a", "b"), clustering=ClusteringSpec(algorithm="kmeans", n_clusters=2))
    name = session.spec.name
    bad = DATA.copy()
    bad[1, 1] = np.nan
    code, details = refused(lambda: c.stub.Upload(iter([header(name), ids(*IDS), chunk(bad.tobytes())]),
                                                   timeout=TIMEOUT))
    assert code == INVALID and "NaN or infinite values" in details
    for party in ("a", "b"):
        c.stub.Upload(iter(valid(name, party)), timeout=TIMEOUT)
    results = {p: list(c.stub.GetResult(session_pb2.ResultRequest(session=name, party=p), timeout=TIMEOUT))
               for p in ("a", "b")}
    assert session.state == session_pb2.DONE
    assert all(r[0].header.n_labels == M for r in results.values())
    waste = session.byte_summary()["a"]["refused"]
    assert waste["attempts"] == 1 and waste["messages"] == 3 and waste["payload"] == len(BYTES)
    # the accepted upload alone is the party's payload, as the paper predicts; the refused one is counted apart
    assert session.byte_summary()["a"]["payload"] == len(BYTES)
    assert waste["serialized"] == sum(m.ByteSize() for m in [header(name), ids(*IDS), chunk(bad.tobytes())])


def test_a_stalled_upload_is_cut_off_when_the_session_deadline_passes(manual):
    c = manual
    session = fresh(c, deadline=1.0)
    release = threading.Event()
    call = c.stub.Upload.future(held([header(session.spec.name)], release), timeout=30)
    try:
        eventually(lambda: "a" in session.uploads)
        c.clock.advance(0.75)  # binary fractions: the sums are exact
        assert session.state == WAITING and session.seconds_left() == 0.25
        c.clock.advance(0.25)  # the deadline: the session fails, the stalled upload has STOP_GRACE to hear it
        assert session.state == FAILED
        assert session.error == "deadline of 1 s passed (never joined: b; upload not finished: a)"
        c.clock.advance(STOP_GRACE - 0.25)
        assert not call.done()
        c.clock.advance(0.25)  # then it is cut off, though the party never sends again
        with pytest.raises(grpc.RpcError) as err:
            call.result(timeout=TIMEOUT)
    finally:
        release.set()
    assert err.value.code() == PRECONDITION  # cut off, and told why
    assert "upload stopped, the session failed: deadline of 1 s passed" in err.value.details()
    assert c.clock.pending == 0


def test_an_upload_in_progress_hears_that_the_session_failed(coordinator):
    c = coordinator
    session = fresh(c, join=("a", "b"))
    name = session.spec.name
    release = threading.Event()
    b = c.stub.Upload.future(held([header(name, "b")], release, valid(name, "b")[1:]), timeout=TIMEOUT)
    try:
        eventually(lambda: "b" in session.uploads)
        # a malformed upload from another party no longer ends the session; the session ending does
        assert_fails_session(c, session, [header(name, arrays=[spec(dtype="<f2")])], "dtype '<f2'")
        assert session.state == WAITING
        session.fail("stopped by the test")
    finally:
        release.set()
    with pytest.raises(grpc.RpcError) as err:
        b.result()
    assert err.value.code() == PRECONDITION
    assert err.value.details() == "party 'b': upload stopped, the session failed: stopped by the test"


def test_an_upload_without_a_header_is_cut_off(manual):
    c = manual
    release = threading.Event()
    before = c.clock.pending
    call = c.stub.Upload.future(held([], release), timeout=30)
    try:
        eventually(lambda: c.clock.pending == before + 1)  # the header timer is set
        c.clock.advance(CoordinatorServicer.header_timeout - 0.25)
        assert not call.done()
        c.clock.advance(0.25)
        with pytest.raises(grpc.RpcError) as err:
            call.result(timeout=TIMEOUT)
    finally:
        release.set()
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert err.value.details() == f"upload: no first message within {CoordinatorServicer.header_timeout:g} s"
    # an upload that does not start with its header
    code, details = refused(lambda: c.stub.Upload(iter([]), timeout=TIMEOUT))
    assert (code, details) == (INVALID, "an upload starts with its header; the stream ended without any message")
    code, details = refused(lambda: c.stub.Upload(iter([ids("r0")]), timeout=TIMEOUT))
    assert (code, details) == (INVALID, "an upload starts with its header; its first message carries ids")
    code, details = refused(lambda: c.stub.Upload(iter([session_pb2.UploadMessage()]), timeout=TIMEOUT))
    assert (code, details) == (INVALID, "an upload starts with its header; its first message carries nothing")


def test_a_message_over_grpcs_size_limit_is_refused_and_its_upload_discarded(coordinator):
    c = coordinator
    session = fresh(c)
    big = 5 << 20  # over gRPC's 4 MiB default for one message
    messages = [header(session.spec.name, arrays=[spec(shape=(M, big // 8 // M))]), ids(*IDS), chunk(b"\0" * big)]
    code, details = refused(lambda: c.stub.Upload(iter(messages), timeout=TIMEOUT))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "Received message larger than max" in details
    eventually(lambda: len(session.refused) == 1)
    # gRPC ends the coordinator's side of the stream as if it had ended early
    why = session.refused[0].error
    assert why.startswith("party 'a': upload ") and f"0 of {big} bytes" in why
    code, details = refused(lambda: c.stub.Join(session_pb2.JoinRequest(session="x" * big, party="a"), timeout=TIMEOUT))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "Received message larger than max" in details
    assert status(c, session).state == WAITING


# -- messages that cannot be decoded ---------------------------------------------------------------
