"""The Coordinator service over a real gRPC channel: status, ledger, and refusals with the right status."""

from __future__ import annotations

import subprocess
import sys

import grpc
import numpy as np
import pytest

from conftest import IRIS_DRBT_OSBR, NO_TLS, changed, scenario_toml, write_scenario
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.session import SessionSpec
from parties.client import upload_messages
from parties.methods import Sent
from ppcsim.scenario.load import load_scenario
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc
from protos.serde import Layout


@pytest.fixture
def coordinator():
    registry = Registry()
    server, port = start_server("127.0.0.1:0", registry)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield registry, session_pb2_grpc.CoordinatorStub(channel), port
    channel.close()
    server.stop(grace=None)


def test_status_and_ledger_after_two_party_processes(coordinator, tmp_path):
    registry, stub, port = coordinator
    path = write_scenario(tmp_path, scenario_toml("st", changed(IRIS_DRBT_OSBR, "b", method="none"), seed=5,
                                                  data="sklearn:iris", security=NO_TLS, clustering={"n_clusters": 3}))
    session = registry.create(load_scenario(path).session_spec())
    procs = [
        subprocess.Popen([sys.executable, "-m", "ppcsim", "party", "--coordinator", f"127.0.0.1:{port}",
                          "--scenario", str(path), "--party", name], stderr=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    before = len(session.ledger.entries())
    reply = stub.GetStatus(session_pb2.StatusRequest(session="st"), timeout=10)
    assert reply.state == session_pb2.DONE and reply.error == ""
    assert [(p.party, p.joined, p.uploaded) for p in reply.parties] == [("a", True, True), ("b", True, True)]
    assert [p.payload_bytes for p in reply.parties] == [150 * 1 * 8, 150 * 2 * 8]
    assert [p.payload_expected for p in reply.parties] == [150 * 8, 150 * 2 * 8]
    # the status request itself is in the ledger it returns; its reply is recorded after
    assert len(reply.ledger) == before + 1
    assert reply.ledger[-1].rpc == "GetStatus" and reply.ledger[-1].direction == "up"
    assert len(session.ledger.entries()) == before + 2
    assert sum(e.payload_bytes for e in reply.ledger if e.direction == "up") == 150 * 3 * 8


def test_refusals_carry_the_right_status_and_name_the_party(coordinator):
    registry, stub, _ = coordinator
    registry.create(SessionSpec(name="s", parties=("a", "b"), deadline=30, ids="pseudonymous"))
    with pytest.raises(grpc.RpcError) as err:
        stub.Join(session_pb2.JoinRequest(session="nope", party="a"), timeout=5)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and "no session named 'nope'" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        stub.Join(session_pb2.JoinRequest(session="s", party="mallory"), timeout=5)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "no party 'mallory'" in err.value.details()
    stub.Join(session_pb2.JoinRequest(session="s", party="a", public_key=bytes(32)), timeout=5)
    # joining again is fine (after a refused upload, say), with the key of the first Join only
    stub.Join(session_pb2.JoinRequest(session="s", party="a", public_key=bytes(32)), timeout=5)
    with pytest.raises(grpc.RpcError) as err:
        stub.Join(session_pb2.JoinRequest(session="s", party="a", public_key=bytes(31) + b"x"), timeout=5)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "joined session 's' before with another public key" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        stub.Join(session_pb2.JoinRequest(session="s", party="b", public_key=b"short"), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "has 5 bytes" in err.value.details()
    # an upload whose method is not what the session expects from the party is refused, naming both
    registry.create(SessionSpec(name="m", parties=("a",), deadline=30, expected={"a": ("none", {})}))
    stub.Join(session_pb2.JoinRequest(session="m", party="a"), timeout=5)
    rows = [Sent("data", np.zeros((2, 1)), Layout.ROWS)]
    with pytest.raises(grpc.RpcError) as err:
        stub.Upload(upload_messages("m", "a", "drbt", {}, np.array(["1", "2"]), rows, 1, 1024), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.details() == "party 'a': the upload says method 'drbt', but session 'm' expects 'none' from it"


def test_upload_with_wrong_shape_is_refused_and_a_correct_one_then_taken(coordinator):
    registry, stub, _ = coordinator
    session = registry.create(SessionSpec(name="s", parties=("a", "b"), deadline=30))
    stub.Join(session_pb2.JoinRequest(session="s", party="a"), timeout=5)
    ids = np.array(["1", "2", "3"])
    bad = [Sent("data", np.zeros((4, 2)), Layout.ROWS)]  # 4 rows for 3 ids
    with pytest.raises(grpc.RpcError) as err:
        stub.Upload(upload_messages("s", "a", "drbt", {}, ids, bad, 2, 1024), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "party 'a', array 'data': expected rows of shape (3, k), got (4, 2)" in err.value.details()
    # discarded: the session goes on waiting and counts the attempt
    assert session.error == "" and session.state == session_pb2.WAITING
    assert [r.error for r in session.refused] == [err.value.details()]
    good = [Sent("data", np.zeros((3, 2)), Layout.ROWS)]
    assert stub.Upload(upload_messages("s", "a", "drbt", {}, ids, good, 2, 1024), timeout=5).payload_bytes == 48


def test_upload_with_nan_or_repeated_ids_is_refused(coordinator):
    registry, stub, _ = coordinator
    for name, ids, data, why in (
        ("nan", np.array(["1", "2"]), np.array([[0.0], [np.nan]]), "NaN or infinite"),
        ("dup", np.array(["1", "1"]), np.zeros((2, 1)), "duplicate record ids"),
    ):
        registry.create(SessionSpec(name=name, parties=("a",), deadline=30))
        stub.Join(session_pb2.JoinRequest(session=name, party="a"), timeout=5)
        with pytest.raises(grpc.RpcError) as err:
            stub.Upload(upload_messages(name, "a", "none", {}, ids, [Sent("data", data, Layout.ROWS)], 1, 1024), timeout=5)
        assert why in err.value.details()
