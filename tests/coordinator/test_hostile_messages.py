"""Messages that are not what they claim, over real gRPC channels: each gets a precise status, the coordinator
keeps serving.

Messages that cannot be decoded (protobuf refuses bytes that are not a message, and a message whose
string field (a session, party, array or id name) is not UTF-8) are answered INVALID_ARGUMENT, naming the
message type, before any session is touched; requests naming no valid session or party touch none; with tokens,
an unauthenticated upload never reaches the session; and hundreds of malformed messages drawn by hypothesis
leave the coordinator serving. (Broken uploads: tests/coordinator/test_hostile_uploads.py.)
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter

import grpc
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hostile_uploads import (
    BYTES,
    FAILED,
    INVALID,
    NOT_FOUND,
    OK,
    PRECONDITION,
    ROWS,
    TIMEOUT,
    WAITING,
    chunk,
    fresh,
    header,
    ids,
    refused,
    serve,
    spec,
    status,
    valid,
)

from coordinator.registry import Registry
from coordinator.session import SessionSpec
from parties.client import upload_messages
from parties.methods import Sent
from protos.ppcsim.v1 import session_pb2


@pytest.fixture(scope="module")
def coordinator():
    """One in-process coordinator on loopback for the whole file, as a long-running one would be."""
    yield from serve(Registry())


def non_utf8(message) -> bytes:
    """``message`` serialised, its "@@@@" (in some string field) made invalid UTF-8."""
    data = message.SerializeToString()
    assert data.count(b"@@@@") == 1
    return data.replace(b"@@@@", b"\xff\xfe\xc0@")


KINDS = {"Join": "JoinRequest", "GetResult": "ResultRequest", "GetStatus": "StatusRequest"}
WHY = ("party 'a': upload broken off after 0 of 64 bytes (message 2 is not a valid UploadMessage (not protobuf, "
       "or a string that is not UTF-8))")


def test_undecodable_messages_are_refused_and_touch_no_session(coordinator):
    c = coordinator
    session = fresh(c)
    name = session.spec.name
    before = len(session.ledger.entries())
    undecodable = {
        "Join": [non_utf8(session_pb2.JoinRequest(session=name, party="@@@@")), b"\xff\xff\xff"],
        "GetResult": [non_utf8(session_pb2.ResultRequest(session=name, party="@@@@")), b"\x0a\xff"],
        "GetStatus": [non_utf8(session_pb2.StatusRequest(session="@@@@")), b"\x08"],
    }
    for method, requests in undecodable.items():
        for request in requests:
            call = (lambda r=request, m=method: list(c.raw[m](r, timeout=TIMEOUT))) if method == "GetResult" else (
                lambda r=request, m=method: c.raw[m](r, timeout=TIMEOUT))
            code, details = refused(call)
            assert (code, details.split(" (")[0]) == (INVALID, f"the request is not a valid {KINDS[method]}")
    for stream in (
        [non_utf8(header("@@@@"))],  # a session name that is not UTF-8
        [non_utf8(header(name, party="@@@@"))],
        [non_utf8(header(name, arrays=[spec("@@@@")]))],  # a non-UTF-8 array name
        [b"\xff\xff"],
        [header(name).SerializeToString()[:-3]],  # a header cut short
    ):
        assert refused(lambda s=stream: c.raw["Upload"](iter(s), timeout=TIMEOUT)) == (
            INVALID, "upload: the first message is not a valid UploadMessage (not protobuf, or a string that is not "
                     "UTF-8)")
    assert session.state == WAITING and len(session.ledger.entries()) == before
    # the same mid-upload, from the party that joined: its upload is discarded, saying which message
    stream = [header(name).SerializeToString(), non_utf8(ids("r0", "@@@@"))]
    assert refused(lambda: c.raw["Upload"](iter(stream), timeout=TIMEOUT)) == (INVALID, WHY)
    assert len(session.refused) == 1
    assert session.refused[0].error == WHY
    assert status(c, session).state == WAITING and session.error == ""


# -- requests that identify no session or party ---------------------------------------------------

def test_requests_naming_no_valid_session_or_party_touch_no_session(coordinator):
    c = coordinator
    session = fresh(c)
    name = session.spec.name
    before = [e for e in session.ledger.entries() if e.party]
    join = lambda s, p: c.stub.Join(session_pb2.JoinRequest(session=s, party=p), timeout=TIMEOUT)  # noqa: E731
    result = lambda s, p: list(  # noqa: E731
        c.stub.GetResult(session_pb2.ResultRequest(session=s, party=p), timeout=TIMEOUT))
    upload = lambda msgs: c.stub.Upload(iter(msgs), timeout=TIMEOUT)  # noqa: E731

    assert refused(lambda: join("nope", "a")) == (NOT_FOUND, "no session named 'nope' on this coordinator")
    assert refused(lambda: upload(valid("nope"))) == (NOT_FOUND, "no session named 'nope' on this coordinator")
    assert refused(lambda: result("nope", "a")) == (NOT_FOUND, "no session named 'nope' on this coordinator")
    expects = f"session '{name}' expects no party 'mallory' (it expects a, b)"
    assert refused(lambda: join(name, "mallory")) == (PRECONDITION, expects)
    assert refused(lambda: result(name, "mallory")) == (PRECONDITION, expects)
    assert refused(lambda: upload(valid(name, "mallory") + [header(name, "mallory", arrays=[])])) == (INVALID, expects)
    # an expected party that has not joined may not upload; nothing changes
    assert refused(lambda: upload([header(name, "b", arrays=[spec(dtype="<f2")])])) == (
        INVALID, "party 'b' must Join before it uploads")
    # names far too long to echo, with control characters, are cut short and escaped
    code, details = refused(lambda: join(name, "\n" + "m" * 100_000))
    assert code == PRECONDITION
    assert f"expects no party '\\n{'m' * 79}... (100001 characters)'" in details
    code, details = refused(lambda: join("\x00" * 100_000, "a"))
    assert code == NOT_FOUND and details.startswith("no session named '\\x00\\x00") and "(100000 characters)" in details
    assert len(details.encode()) <= 1100
    assert session.state == WAITING and session.error == "" and session.joined == {"a"} and not session.uploads
    assert [e for e in session.ledger.entries() if e.party and e.party != "b"] == before
    # the session still completes
    c.stub.Upload(iter(valid(name)), timeout=TIMEOUT)
    assert status(c, session).parties[0].uploaded


def test_with_tokens_an_unauthenticated_hostile_upload_never_touches_the_session(coordinator):
    c = coordinator
    digest = lambda token: hashlib.sha256(token.encode()).hexdigest()  # noqa: E731
    bearer = lambda token: (("authorization", f"Bearer {token}"),)  # noqa: E731
    # a session without tokens beside it, whatever ran before on this worker: the coordinator then admits a stream
    # without a token to its first message, so each refusal below is the session's own, naming the party (with
    # token sessions alone it is refused before its first message, unnamed: Registry.admits)
    fresh(c, join=())
    session = fresh(c, tokens={"a": digest("token-a"), "b": digest("token-b")}, metadata=bearer("token-a"))
    name = session.spec.name
    before = session.ledger.entries()
    hostile = [header(name, n=10**12, arrays=[spec(shape=(10**12, 1))]), ids("r0"), chunk(b"\xff" * 64, 2**60)]
    for metadata, code, why in (
        (None, grpc.StatusCode.UNAUTHENTICATED, "party 'a': no token (authorization: Bearer ...)"),
        (bearer("guess"), grpc.StatusCode.UNAUTHENTICATED, "party 'a': the token is not valid for this session"),
        (bearer("token-b"), grpc.StatusCode.PERMISSION_DENIED, "'b' may not act as party 'a'"),
    ):
        assert refused(lambda m=metadata: c.stub.Upload(iter(hostile), timeout=TIMEOUT, metadata=m)) == (code, why)
        assert refused(lambda m=metadata: c.stub.Join(session_pb2.JoinRequest(session=name, party="a"),
                                                      timeout=TIMEOUT, metadata=m))[0] == code
    assert refused(lambda: c.stub.Upload(iter([header(name, "mallory")]), timeout=TIMEOUT)) == (
        grpc.StatusCode.UNAUTHENTICATED, "party 'mallory': no token (authorization: Bearer ...)")
    assert session.state == WAITING and session.error == "" and not session.uploads and session.joined == {"a"}
    assert session.ledger.entries() == before
    reply = c.stub.Upload(iter(valid(name)), timeout=TIMEOUT, metadata=bearer("token-a"))
    assert reply.payload_bytes == len(BYTES)


# -- a few hundred malformed messages against one coordinator --------------------------------------

STRINGS = st.sampled_from(["", "a", "b", "r0", "data", "\x00", "é", "<f8", "<f4", "<i4", ">f8", "<f2"]) | st.text(
    max_size=12)
BIG = st.integers(0, 10) | st.integers(0, 2**64 - 1)
SIGNED = st.integers(-3, 10) | st.integers(-(2**63), 2**63 - 1)


@st.composite
def malformed_upload(draw):
    """A correct upload of a few rows, broken one to three ways; as the bytes to send."""
    n, k = draw(st.integers(1, 5)), draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(["<f8", "<f4"]))
    data = np.random.default_rng(draw(st.integers(0, 2**32))).normal(size=(n, k)).astype(dtype)
    arrays = [Sent("data", data, ROWS)]
    messages = list(upload_messages("SESSION", "a", "none", {}, np.array([f"r{i}" for i in range(n)]), arrays, k,
                                    draw(st.sampled_from([8, 16, 1024]))))
    h = messages[0].header
    for op in draw(st.lists(st.sampled_from(OPS), min_size=1, max_size=3)):
        chunks = [m.chunk for m in messages if m.WhichOneof("part") == "chunk"]
        if op in ("dtype", "shape", "huge", "layout") and not h.arrays:
            h.arrays.add()
        if op == "dtype":
            h.arrays[0].dtype = draw(STRINGS)
        elif op == "shape":
            h.arrays[0].ClearField("shape")
            h.arrays[0].shape.extend(draw(st.lists(SIGNED, max_size=4)))
        elif op == "n_ids":
            h.n_ids = draw(BIG)
        elif op == "huge":  # consistent, and large
            rows = draw(st.integers(0, 2**40))
            h.n_ids = rows
            h.arrays[0].ClearField("shape")
            h.arrays[0].shape.extend([rows, draw(st.integers(1, 2**40))])
        elif op == "layout":
            h.arrays[0].layout = draw(st.integers(0, 5))
        elif op == "arrays":
            h.arrays.add(name=draw(STRINGS), dtype=draw(STRINGS), shape=draw(st.lists(SIGNED, max_size=3)),
                         layout=draw(st.integers(0, 3)))
        elif op == "no arrays":
            h.ClearField("arrays")
        elif op == "osbr":
            h.method = "osbr"
            h.params["metric"] = draw(st.sampled_from(["euclidean", "gower", "jaccard", "nope"]))
        elif op == "party":
            h.party = draw(STRINGS)
        elif op == "session":
            h.session = draw(st.sampled_from(["nope", ""]) | st.text(max_size=8))
        elif op == "truncate":
            messages = messages[: draw(st.integers(0, len(messages)))]
        elif op == "drop" and len(messages) > 1:
            del messages[draw(st.integers(1, len(messages) - 1))]
        elif op == "repeat" and messages:
            i = draw(st.integers(0, len(messages) - 1))
            messages.insert(i, messages[i])
        elif op == "swap" and len(messages) > 1:
            i, j = draw(st.integers(0, len(messages) - 1)), draw(st.integers(0, len(messages) - 1))
            messages[i], messages[j] = messages[j], messages[i]
        elif op == "insert":
            extra = draw(st.sampled_from(["header", "empty", "ids", "chunk"]))
            messages.insert(draw(st.integers(0, len(messages))), {
                "header": lambda: session_pb2.UploadMessage(header=h),
                "empty": session_pb2.UploadMessage,
                "ids": lambda: ids(*draw(st.lists(STRINGS, max_size=4))),
                "chunk": lambda: chunk(draw(st.binary(max_size=40)), draw(BIG), draw(st.integers(0, 3))),
            }[extra]())
        elif op == "offset" and chunks:
            draw(st.sampled_from(chunks)).offset = draw(BIG)
        elif op == "array index" and chunks:
            draw(st.sampled_from(chunks)).array = draw(st.integers(0, 2**32 - 1))
        elif op == "data" and chunks:
            draw(st.sampled_from(chunks)).data = draw(st.binary(max_size=48))
        elif op == "nan" and chunks:
            target = draw(st.sampled_from(chunks))
            values = bytearray(target.data)
            at = draw(st.integers(0, max(len(values) - 4, 0)))
            values[at : at + 4] = np.array([draw(st.sampled_from([np.nan, np.inf, -np.inf]))], "<f4").tobytes()
            target.data = bytes(values)
        elif op == "ids":
            for m in messages:
                if m.WhichOneof("part") == "ids" and m.ids.ids:
                    m.ids.ids[draw(st.integers(0, len(m.ids.ids) - 1))] = draw(STRINGS)
    raw = [m.SerializeToString() for m in messages]
    # now and then, break the bytes themselves
    for op in draw(st.lists(st.sampled_from(["none"] * 9 + ["flip", "cut", "garbage", "utf8"]), max_size=1)):
        if op == "none" or not raw:
            continue
        i = draw(st.integers(0, len(raw) - 1))
        if op == "flip" and raw[i]:
            at = draw(st.integers(0, len(raw[i]) - 1))
            raw[i] = raw[i][:at] + bytes([draw(st.integers(0, 255))]) + raw[i][at + 1 :]
        elif op == "cut":
            raw[i] = raw[i][: draw(st.integers(0, len(raw[i])))]
        elif op == "garbage":
            raw.insert(i, draw(st.binary(max_size=64)))
        elif op == "utf8":
            raw[i] = non_utf8(session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=["@@@@"])))
    return raw


OPS = ["dtype", "shape", "n_ids", "huge", "layout", "arrays", "no arrays", "osbr", "party", "session", "truncate",
       "drop", "repeat", "swap", "insert", "offset", "array index", "data", "nan", "ids"]

REQUESTS = {
    "Join": session_pb2.JoinRequest, "GetResult": session_pb2.ResultRequest, "GetStatus": session_pb2.StatusRequest,
}

CASE = st.one_of(
    st.tuples(st.just("upload"), malformed_upload()),
    st.tuples(st.just("request"), st.sampled_from(sorted(REQUESTS)), st.sampled_from(["shared", "nope"]) | STRINGS,
              STRINGS.filter(lambda p: p not in ("a", "b"))),
    st.tuples(st.just("raw"), st.sampled_from(["Join", "GetResult", "GetStatus", "Upload"]),
              st.lists(st.binary(max_size=64), min_size=1, max_size=3)),
)

#: What the fuzz may get back: never UNKNOWN (an exception the servicer did not expect), never a timeout.
ANSWERS = {OK, INVALID, NOT_FOUND, PRECONDITION}


def test_fuzz_hundreds_of_malformed_messages_and_the_coordinator_still_serves(coordinator):
    c = coordinator
    shared = c.registry.create(SessionSpec(name="shared", parties=("a", "b"), deadline=120))
    c.stub.Join(session_pb2.JoinRequest(session="shared", party="a"), timeout=TIMEOUT)
    shared_ledger = [e for e in shared.ledger.entries() if e.party]
    seen: Counter = Counter()

    def call(fn):
        start = time.monotonic()
        try:
            answer = fn()
            code, details = OK, ""
        except grpc.RpcError as err:
            answer, code, details = None, err.code(), err.details() or ""
        assert time.monotonic() - start < TIMEOUT - 1, "the coordinator took too long to answer"
        assert code in ANSWERS, (code, details)
        assert code == OK or details, code
        assert len(details.encode()) <= 1100
        seen[code.name] += 1
        return answer, code, details

    @settings(max_examples=350, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=CASE)
    def run(case):
        kind = case[0]
        if kind == "upload":
            session = fresh(c)
            name = session.spec.name.encode()
            assert len(name) == len(b"SESSION")  # the same length: the messages' length prefixes stay right
            stream = [m.replace(b"SESSION", name) for m in case[1]]
            _, code, details = call(lambda: c.raw["Upload"](iter(stream), timeout=TIMEOUT))
            if code == OK:
                assert session.party_status()[0]["uploaded"]
            elif code == INVALID and session.state == FAILED:
                assert session.error == details
            if session.state == FAILED:  # the other party is told
                _, code, told = call(lambda: list(c.stub.GetResult(
                    session_pb2.ResultRequest(session=session.spec.name, party="b"), timeout=TIMEOUT)))
                assert code == PRECONDITION and session.error in told
        elif kind == "request":
            _, method, session, party = case
            request = REQUESTS[method](session=session, **({} if method == "GetStatus" else {"party": party}))
            rpc = getattr(c.stub, method)
            if method == "GetResult":
                call(lambda: list(rpc(request, timeout=TIMEOUT)))
            else:
                call(lambda: rpc(request, timeout=TIMEOUT))
        else:
            _, method, chunks = case
            rpc = c.raw[method]
            if method == "Upload":
                call(lambda: rpc(iter(chunks), timeout=TIMEOUT))
            elif method == "GetResult":
                call(lambda: list(rpc(chunks[0], timeout=TIMEOUT)))
            else:
                call(lambda: rpc(chunks[0], timeout=TIMEOUT))

    start = time.monotonic()
    run()
    elapsed = time.monotonic() - start
    assert sum(seen.values()) >= 300, seen
    assert {"INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION"} <= set(seen), seen
    assert elapsed < 60, elapsed
    # nothing that named no valid party touched the shared session
    assert shared.state == WAITING and shared.error == "" and shared.joined == {"a"} and not shared.uploads
    assert [e for e in shared.ledger.entries() if e.party] == shared_ledger
    # a fresh, valid two-party session on the same coordinator still completes
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=10, size=(3, 4))
    rows = np.vstack([centres[i % 3] + rng.normal(size=4) for i in range(30)])
    record_ids = np.array([f"id{i}" for i in range(30)])
    session = c.registry.create(SessionSpec(name="after-fuzz", parties=("a", "b"), deadline=60))
    for party in ("a", "b"):
        c.stub.Join(session_pb2.JoinRequest(session="after-fuzz", party=party), timeout=TIMEOUT)
    for party, cols in (("a", rows[:, :2]), ("b", rows[:, 2:])):
        messages = upload_messages("after-fuzz", party, "none", {}, record_ids, [Sent("data", cols, ROWS)], 2, 64)
        assert c.stub.Upload(messages, timeout=TIMEOUT).payload_bytes == cols.nbytes
    for party in ("a", "b"):
        results = list(c.stub.GetResult(session_pb2.ResultRequest(session="after-fuzz", party=party), timeout=TIMEOUT))
        assert results[0].header.n_labels == 30 and sum(results[0].header.sizes) == 30
    reply = status(c, session)
    assert reply.state == session_pb2.DONE and reply.error == ""
    assert c.stub.GetStatus(session_pb2.StatusRequest(session="shared"), timeout=TIMEOUT).state == WAITING
