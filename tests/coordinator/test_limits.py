"""The coordinator's limits as docs/protocol.md ("Limits") states them: memory budgets counted as stored and
checked before allocating, chunk_bytes enforced, a refused upload of dissimilarities that added nothing
leaving the session waiting, a secure-aggregation id upload with an array refused without ending the session.
"""

from __future__ import annotations

import zlib

import grpc
import numpy as np
import pytest
from scipy.spatial.distance import pdist

from coordinator import handlers
from coordinator.clustering import SECURE, ClusteringSpec
from coordinator.errors import InvalidArgument, ResourceExhausted, SessionError
from coordinator.limits import Budget
from coordinator.protocols.secagg import rounds_of
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.session import DONE, FAILED, WAITING, Session, SessionSpec
from coordinator.wire.serde import header_from_proto, upload_stream
from parties.client import upload_messages
from parties.keys import KeyPair
from parties.methods import Sent
from parties.methods.base import condensed
from protos.ids import LINES
from protos.ppcsim.v1 import array_pb2, session_pb2, session_pb2_grpc
from protos.serde import Layout

RNG = np.random.default_rng(3)
IDS = np.array([f"r{i}" for i in range(40)])
BLOCKS = {p: RNG.normal(size=(40, 3)) for p in ("a", "b")}


def rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


def bomb(session: str, rows: int = 100_000, width: int = 1000):
    """The id bomb: ``rows`` ids of ``width`` characters, zlib-packed to under a megabyte, and a small array."""
    text = "\n".join(f"{i:0{width}d}" for i in range(rows)).encode()
    block = zlib.compress(text, 9)
    data = np.zeros((rows, 1), dtype="<f8").tobytes()
    header = session_pb2.UploadHeader(
        session=session, party="a", method="none", n_ids=rows, n_columns=1, id_encoding=LINES,
        packed_id_bytes=len(block),
        arrays=[array_pb2.ArraySpec(name="data", dtype="<f8", shape=[rows, 1], layout=Layout.ROWS)])
    yield session_pb2.UploadMessage(header=header)
    for i in range(0, len(block), 1 << 20):
        yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(packed=block[i : i + (1 << 20)]))
    for i in range(0, len(data), 1 << 20):
        yield session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=0, offset=i, data=data[i : i + (1 << 20)]))


def test_the_id_bomb_is_refused_at_the_default_settings_naming_the_id_budget_before_it_inflates():
    registry = Registry()  # the coordinator's budget, half the machine's memory, as ppc coordinator's default
    # and the session's, ppc coordinator's default --session-memory
    session = registry.create(SessionSpec(name="bomb", parties=("a", "b"), ids="plain", memory=4096 << 20))
    server, port = start_server("127.0.0.1:0", registry)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = session_pb2_grpc.CoordinatorStub(channel)
    try:
        stub.Join(session_pb2.JoinRequest(session="bomb", party="a"), timeout=10)
        messages = list(bomb("bomb"))  # made (100 MB of text compressed) before measuring
        assert sum(len(m.ids.packed) for m in messages) < 1 << 20
        before = rss()
        with pytest.raises(grpc.RpcError) as err:
            stub.Upload(iter(messages), timeout=60)
        grown = rss() - before
    finally:
        channel.close()
        server.stop(None).wait(10)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # 100,000 ids of 1,000 bytes: 16 bytes each and (1,000 + 8) x 5/4 beside = 127,600,000 bytes (122 MiB)
    assert err.value.details() == ("party 'a': ids as decoded and stored: 122 MiB more would pass party 'a''s id "
                                   "budget (256 bytes a record, 100,000 records) of 24.4 MiB (0 bytes held)")
    assert grown < 100 << 20, grown
    assert session.state == WAITING and session.budget.used < 1 << 20  # all given back but the ledger's
    assert session.budget.peak < 8 << 20  # the packed block and the array: nothing was inflated into memory


def test_ids_within_their_id_budget_are_still_refused_past_the_session_budget_naming_it():
    session = Session(SessionSpec(name="bomb", parties=("a", "b"), ids="plain", memory=16 << 20))
    session.join("a")
    messages = bomb("bomb", width=150)  # 100,000 x (16 + 158 x 5/4) = 21,350,000 bytes: within 256 a record
    with pytest.raises(ResourceExhausted, match=r"party 'a': ids as decoded and stored: 20.4 MiB more would pass "
                                                r"session 'bomb''s memory budget of 16 MiB"):
        session.receive(header_from_proto(next(messages).header), upload_stream(messages))
    assert session.state == WAITING and session.budget.used < 1 << 20


@pytest.mark.parametrize("packed", [True, False])
def test_ids_within_256_bytes_a_record_are_taken_and_longer_ones_refused_naming_the_id_budget(packed):
    def upload(width: int):
        ids = np.array([f"{i:0{width}d}" for i in range(1000)])
        if not packed:
            ids[0] = "a\nb"  # a newline: every id goes as text (ID_TEXT), and is counted as it arrives
        session = Session(SessionSpec(name="s", parties=("a", "b"), ids="plain"))
        session.join("a")
        messages = upload_messages("s", "a", "none", {}, ids, [Sent("data", np.zeros((1000, 1)), Layout.ROWS)], 1,
                                   1 << 20)
        session.receive(header_from_proto(next(messages).header), upload_stream(messages))
        return session

    assert upload(180).budget.used >= 1000 * (16 + (180 + 8) * 5 // 4)  # 251 bytes an id: within 256
    with pytest.raises(ResourceExhausted, match=r"party 'a': ids as (decoded and )?stored: .* would pass party "
                                                r"'a''s id budget \(256 bytes a record, 1,000 records\) of 250 KiB"):
        upload(200)  # 16 + 260 = 276 bytes an id


def test_a_budget_refuses_past_its_limit_and_its_parents():
    server = Budget("the coordinator", 1000)
    one = Budget("session 'x'", 800, parent=server)
    two = Budget("session 'y'", 0, parent=server)
    one.take(700, "party 'a': arrays")
    with pytest.raises(ResourceExhausted, match=r"party 'a': ids: 200 bytes more would pass session 'x''s memory "
                                                r"budget of 800 bytes \(700 bytes held\)"):
        one.take(200, "party 'a': ids")
    with pytest.raises(ResourceExhausted, match="the coordinator's memory budget of 1000 bytes"):
        two.take(400, "party 'b': arrays")
    assert (one.used, two.used, server.used) == (700, 0, 700)
    one.give(700)
    two.take(400, "party 'b': arrays")
    assert server.summary() == {"budget": 1000, "peak": 700, "held": 400}


def osbr(session: str, party: str, values: np.ndarray | None = None, chunk_bytes: int = 4096):
    values = pdist(BLOCKS[party], "sqeuclidean") if values is None else values
    return upload_messages(session, party, "osbr", {"metric": "euclidean"}, IDS, [condensed("sqdist", values)], 3,
                           chunk_bytes)


def test_a_refused_summed_upload_that_added_nothing_leaves_the_session_waiting():
    spec = SessionSpec(name="s", parties=("a", "b"), keep_uploads=False, ids="plain",
                       clustering=ClusteringSpec(algorithm="agglomerative", n_clusters=2))
    session = Session(spec)
    for p in ("a", "b"):
        session.join(p)
    bad = pdist(BLOCKS["a"], "sqeuclidean")
    bad[3] = np.nan  # in the first chunk: checked before anything is added
    messages = osbr("s", "a", bad)
    with pytest.raises(InvalidArgument, match=r"party 'a', array 'sqdist': NaN or infinite values"):
        session.receive(header_from_proto(next(messages).header), upload_stream(messages))
    assert session.state == WAITING and session.error == ""
    for p in ("a", "b"):
        messages = osbr("s", p)
        session.receive(header_from_proto(next(messages).header), upload_stream(messages))
    outcome = session.wait(30)
    assert session.state == DONE and len(outcome.join.ids) == 40


def test_a_summed_upload_refused_after_some_values_were_added_says_how_many():
    spec = SessionSpec(name="s", parties=("a", "b"), keep_uploads=False, ids="plain")
    session = Session(spec)
    session.join("a")
    bad = pdist(BLOCKS["a"], "sqeuclidean")
    bad[700] = np.inf  # the first chunks (512 values each) were added already
    messages = osbr("s", "a", bad)
    with pytest.raises(SessionError, match="512 of its dissimilarities were already added into the running sums"):
        session.receive(header_from_proto(next(messages).header), upload_stream(messages))


def test_a_chunk_larger_than_chunk_bytes_is_refused():
    session = Session(SessionSpec(name="s", parties=("a",), ids="plain", chunk_bytes=1024))
    session.join("a")
    messages = osbr("s", "a", chunk_bytes=2048)
    with pytest.raises(InvalidArgument, match=r"party 'a': a chunk of 2048 bytes for array 0; each slice is at most "
                                              r"chunk_bytes \(1024, as Join returned\)"):
        session.receive(header_from_proto(next(messages).header), upload_stream(messages))
    assert session.state == WAITING


def test_text_ids_one_per_message_are_taken():
    session = Session(SessionSpec(name="s", parties=("a",), ids="plain"))
    session.join("a")
    data = RNG.normal(size=(300, 2))
    header = session_pb2.UploadHeader(session="s", party="a", method="none", n_ids=300, n_columns=2, arrays=[
        array_pb2.ArraySpec(name="data", dtype="<f8", shape=[300, 2], layout=Layout.ROWS)])
    messages = [session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=[f"r{i}"])) for i in range(300)]
    messages.append(session_pb2.UploadMessage(chunk=array_pb2.ArrayChunk(array=0, offset=0, data=data.tobytes())))
    assert session.receive(header_from_proto(header), upload_stream(messages)) == data.nbytes


def test_a_secure_aggregation_id_upload_with_an_array_is_refused_and_the_session_goes_on():
    session = Session(SessionSpec(name="s", parties=("a", "b"), ids="plain",
                                  clustering=ClusteringSpec(protocol=SECURE, n_clusters=2)))
    session.join("a", KeyPair.generate().public)
    messages = osbr("s", "a")
    header = next(messages).header
    header.method = SECURE
    with pytest.raises(InvalidArgument, match="party 'a': a secure-aggregation session takes an upload of ids only; "
                                              "this one announces 1 array"):
        session.receive(header_from_proto(header), upload_stream(messages))
    assert session.state == WAITING and len(session.refused) == 1


def test_a_round_post_of_empty_chunks_is_refused_at_its_first():
    session = Session(SessionSpec(name="s", parties=("a", "b"), ids="plain",
                                  clustering=ClusteringSpec(protocol=SECURE, n_clusters=2, reveal="distances")))
    for p in ("a", "b"):
        session.join(p, KeyPair.generate().public)
        header = session_pb2.UploadHeader(session="s", party=p, method=SECURE, n_ids=len(IDS))
        session.receive(header_from_proto(header), upload_stream([session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=list(IDS)))]))
    rounds_of(session, timeout=30)
    for p in ("a", "b"):
        session.confirmations.keep(p, {})
    before = len(session.ledger.entries())

    def post():
        yield session_pb2.DistanceMessage(header=session_pb2.DistanceHeader(
            session="s", party="a", round=0, rows=len(IDS), cols=2, masked=True))
        while True:
            yield session_pb2.DistanceMessage(chunk=array_pb2.ArrayChunk(array=0, offset=0, data=b""))

    with pytest.raises(InvalidArgument, match="party 'a': round 0: message 2 is a chunk with no bytes"):
        handlers.post_distances(session, post())
    assert len(session.ledger.entries()) == before + 1  # the header alone
    assert session.state != FAILED and session.budget.used < 1 << 20
