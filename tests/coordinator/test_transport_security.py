"""Transport security and authorisation: who may join, upload and read, over real TLS channels."""

from __future__ import annotations

from pathlib import Path

import grpc
import numpy as np
import pytest

from conftest import IRIS, party_table, read_report, run_ppc, scenario_toml, write_scenario
from coordinator.errors import SessionError
from coordinator.registry import Registry
from coordinator.security import load_server_security, load_token_digests
from coordinator.server import start_server
from coordinator.session import SessionSpec
from parties.client import ClientSecurity, CoordinatorClient, upload_messages
from parties.methods import Sent
from ppcsim.run.credentials import make_credentials
from protos.ppcsim.v1 import session_pb2
from protos.serde import Layout


@pytest.fixture(scope="module")
def creds(tmp_path_factory) -> Path:
    return make_credentials(tmp_path_factory.mktemp("creds"), "s", ["a", "b"])


def serve(creds: Path, *, mutual: bool, sessions=("s",)):
    registry = Registry()
    tokens = load_token_digests(creds, "s")
    for name in sessions:
        registry.create(SessionSpec(name=name, parties=("a", "b"), deadline=60, tokens=tokens, mutual=mutual))
    server, port = start_server("127.0.0.1:0", registry, security=load_server_security(creds, tls=True, mutual=mutual))
    return registry, server, f"127.0.0.1:{port}"


def client(creds: Path, address: str, party: str, *, as_party: str | None = None, session: str = "s", **change):
    security = ClientSecurity.load(creds, as_party or party)
    if change:
        security = ClientSecurity(**{**security.__dict__, **change})
    return CoordinatorClient(address, session, party, security)


def code_of(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value.code(), err.value.details() or ""


def test_tokens_decide_who_may_act_as_whom(creds):
    registry, server, address = serve(creds, mutual=False)
    try:
        # a party with b's token, claiming to be a
        impostor = client(creds, address, "a", as_party="b")
        code, details = code_of(lambda: impostor.join(timeout=5))
        assert code == grpc.StatusCode.PERMISSION_DENIED and details == "'b' may not act as party 'a'"
        # no token at all, and a made-up token
        code, details = code_of(lambda: client(creds, address, "a", token="").join(timeout=5))
        assert code == grpc.StatusCode.UNAUTHENTICATED and "no token" in details
        code, details = code_of(lambda: client(creds, address, "a", token="guess").join(timeout=5))
        assert code == grpc.StatusCode.UNAUTHENTICATED and "not valid for this session" in details
        # the real a joins, uploads once; a second upload is refused
        a = client(creds, address, "a")
        a.join(timeout=5)
        ids = np.array(["1", "2", "3"])
        data = [Sent("data", np.arange(6.0).reshape(3, 2), Layout.ROWS)]
        a.upload(upload_messages("s", "a", "none", {}, ids, data, 2, 1024), timeout=5)
        code, details = code_of(lambda: a.upload(upload_messages("s", "a", "none", {}, ids, data, 2, 1024), timeout=5))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "has uploaded already" in details
        # b may not read a's result, nor upload as a
        b = client(creds, address, "b")
        stub_b = b.stub
        code, details = code_of(lambda: list(stub_b.GetResult(
            session_pb2.ResultRequest(session="s", party="a"), timeout=5, metadata=b.metadata)))
        assert code == grpc.StatusCode.PERMISSION_DENIED and details == "'b' may not act as party 'a'"
        code, _ = code_of(lambda: stub_b.Upload(upload_messages("s", "a", "none", {}, ids, data, 2, 1024),
                                                timeout=5, metadata=b.metadata))
        assert code == grpc.StatusCode.PERMISSION_DENIED
        assert registry.get("s").state == session_pb2.WAITING  # none of that touched the session
    finally:
        server.stop(None)


def test_a_second_session_never_accepts_the_first_sessions_tokens(creds, tmp_path):
    other = make_credentials(tmp_path / "other", "t", ["a", "b"])
    registry = Registry()
    registry.create(SessionSpec(name="s", parties=("a", "b"), deadline=60, tokens=load_token_digests(creds, "s")))
    registry.create(SessionSpec(name="t", parties=("a", "b"), deadline=60, tokens=load_token_digests(other, "t")))
    server, port = start_server("127.0.0.1:0", registry, security=load_server_security(creds, tls=True, mutual=False))
    try:
        code, details = code_of(lambda: client(creds, f"127.0.0.1:{port}", "a", session="t").join(timeout=5))
        assert code == grpc.StatusCode.UNAUTHENTICATED and "not valid for this session" in details
    finally:
        server.stop(None)


def test_mutual_tls_needs_a_certificate_naming_the_party(creds):
    _, server, address = serve(creds, mutual=True)
    try:
        client(creds, address, "a").join(timeout=5)
        # a's certificate with b's token: the two identities disagree
        mixed = client(creds, address, "b", token=ClientSecurity.load(creds, "b").token,
                       certificate=ClientSecurity.load(creds, "a").certificate, key=ClientSecurity.load(creds, "a").key)
        code, details = code_of(lambda: mixed.join(timeout=5))
        assert code == grpc.StatusCode.PERMISSION_DENIED and "certificate to 'a'" in details
        # no client certificate: the TLS handshake itself fails
        code, _ = code_of(lambda: client(creds, address, "b", certificate=b"", key=b"").join(timeout=3))
        assert code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    finally:
        server.stop(None)


def test_a_party_does_not_trust_a_coordinator_signed_by_another_ca(creds, tmp_path):
    _, server, address = serve(creds, mutual=False)
    stranger = make_credentials(tmp_path / "stranger", "s", ["a"])
    try:
        code, _ = code_of(lambda: client(creds, address, "a", ca=(stranger / "ca.pem").read_bytes()).join(timeout=3))
        assert code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    finally:
        server.stop(None)


def test_plaintext_is_served_on_loopback_only():
    with pytest.raises(SessionError, match="plaintext is served on loopback only"):
        start_server("0.0.0.0:0", Registry())


def test_a_run_with_mutual_tls_reports_what_protected_each_connection(tmp_path):
    path = write_scenario(tmp_path, scenario_toml(
        "mtls", [party_table("a", IRIS[:2], "rotation"), party_table("b", IRIS[2:], "drbt", k=1)], seed=1,
        security={"mutual": True}, data="sklearn:iris", clustering={"n_clusters": 3}))
    proc = run_ppc("run", path, "--out", tmp_path / "out", "--no-attacks")
    assert proc.returncode == 0, proc.stderr
    assert "security: mutual TLS, identified by token and certificate" in proc.stderr
    report = read_report(tmp_path / "out")
    assert report["security"]["parties"] == {
        p: {"transport": "mutual TLS", "identity": "token and certificate"} for p in ("a", "b")}
    assert not any(Path(tmp_path / "out").rglob("*.key")) and not any(Path(tmp_path / "out").rglob("token"))
