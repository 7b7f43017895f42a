"""What the coordinator checks itself, naming the offender (docs/protocol.md's status table): a key signature
that does not verify under mutual TLS, a copy of another party's key, PostDistances before the id upload."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.x509.oid import NameOID

from coordinator.clustering import SECURE, ClusteringSpec
from coordinator.errors import FailedPrecondition, InvalidArgument
from coordinator.keycheck import signed_bytes
from coordinator.protocols import secagg
from coordinator.session import WAITING, Session, SessionSpec


def certificate(party: str) -> tuple[ec.EllipticCurvePrivateKey, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, party)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    return key, cert.public_bytes(serialization.Encoding.PEM)


def public() -> bytes:
    return X25519PrivateKey.generate().public_key().public_bytes(serialization.Encoding.Raw,
                                                                 serialization.PublicFormat.Raw)


def test_under_mutual_tls_a_join_whose_key_signature_does_not_verify_is_refused_naming_the_party():
    session = Session(SessionSpec(name="s", parties=("a", "b"), mutual=True, ids="pseudonymous"))
    key, pem = certificate("a")
    mine = public()
    other = public()
    wrong = key.sign(signed_bytes("s", "a", other), ec.ECDSA(hashes.SHA256()))  # over another key
    with pytest.raises(InvalidArgument, match="party 'a': key_signature does not verify over its public_key with "
                                              "the certificate of its TLS connection"):
        session.join("a", mine, wrong, pem)
    with pytest.raises(InvalidArgument, match="party 'a': Join under mutual TLS must carry key_signature"):
        session.join("a", mine, b"", pem)
    assert "a" not in session.joined and session.state == WAITING
    session.join("a", mine, key.sign(signed_bytes("s", "a", mine), ec.ECDSA(hashes.SHA256())), pem)
    assert "a" in session.joined


def test_a_copy_of_another_partys_public_key_is_refused():
    session = Session(SessionSpec(name="s", parties=("a", "b"), ids="pseudonymous"))
    key = public()
    session.join("a", key)
    with pytest.raises(InvalidArgument, match="party 'b': its public_key is the one party 'a' joined with"):
        session.join("b", key)
    session.join("b", public())
    session.join("a", key)  # a party joining again with its own key is fine


def test_post_distances_before_the_partys_id_upload_is_answered_at_once():
    session = Session(SessionSpec(name="s", parties=("a", "b"), ids="plain",
                                  clustering=ClusteringSpec(protocol=SECURE, n_clusters=2, reveal="distances")))
    session.join("a", public())
    with pytest.raises(FailedPrecondition, match="party 'a': PostDistances before its id upload was accepted"):
        secagg.ready_to_post(session, "a")


@pytest.mark.parametrize("protocol", [SECURE, "mpc"])
def test_a_join_without_a_public_key_is_refused_whatever_the_ids(protocol):
    """Secure aggregation and MPC need every party's key for their pair keys, with plain ids as with pseudonyms."""
    session = Session(SessionSpec(name="s", parties=("a", "b", "c"), ids="plain",
                                  clustering=ClusteringSpec(protocol=protocol, n_clusters=2)))
    with pytest.raises(InvalidArgument) as err:
        session.join("a")
    assert str(err.value) == (f"party 'a': session 's' clusters by {protocol}, whose pair keys need every party's "
                              "key; Join must carry the party's X25519 public_key")
    assert "a" not in session.joined
    plain = Session(SessionSpec(name="p", parties=("a", "b"), ids="plain"))
    plain.join("a")  # an upload session with plain ids needs no key


def test_a_post_after_the_id_upload_but_before_every_confirm_is_refused_at_once_not_taken_as_round_0():
    """Over the wire: a party uploads its ids and posts at once (before the alignment and Confirm): the post is
    answered FAILED_PRECONDITION within a second, and the session's round 0 is still to come."""
    import time

    import grpc

    from coordinator.registry import Registry
    from coordinator.server import start_server
    from protos.ppcsim.v1 import array_pb2, session_pb2, session_pb2_grpc

    registry = Registry()
    session = registry.create(SessionSpec(name="s", parties=("a", "b"), ids="plain", deadline=30,
                                          clustering=ClusteringSpec(protocol=SECURE, n_clusters=2, reveal="distances")))
    server, port = start_server("127.0.0.1:0", registry)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = session_pb2_grpc.CoordinatorStub(channel)
    ids = [f"r{i}" for i in range(4)]
    try:
        for p in ("a", "b"):
            stub.Join(session_pb2.JoinRequest(session="s", party=p, public_key=public()), timeout=10)

        def upload(p):
            yield session_pb2.UploadMessage(header=session_pb2.UploadHeader(session="s", party=p, method=SECURE,
                                                                            n_ids=len(ids)))
            yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=ids))

        def post():
            yield session_pb2.DistanceMessage(header=session_pb2.DistanceHeader(
                session="s", party="a", round=0, rows=4, cols=2, masked=True))
            yield session_pb2.DistanceMessage(chunk=array_pb2.ArrayChunk(array=0, offset=0, data=bytes(64)))

        stub.Upload(upload("a"), timeout=10)
        for before_b in (True, False):  # before the alignment exists, and once it does but nobody confirmed
            if not before_b:
                stub.Upload(upload("b"), timeout=10)
                secagg.rounds_of(session, timeout=10)
            start = time.monotonic()
            with pytest.raises(grpc.RpcError) as err:
                stub.PostDistances(post(), timeout=10)
            assert time.monotonic() - start < 1.0
            assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert err.value.details() == ("party 'a': PostDistances before every party's Confirm (GetAlignment, "
                                           "then Confirm, then post)")
        assert session.arbiter.round == 0 and not session.arbiter.posted
    finally:
        channel.close()
        server.stop(None).wait(10)


def test_a_drbt_upload_with_another_k_than_the_session_expects_is_refused():
    import numpy as np

    from coordinator.wire.serde import header_from_proto, upload_stream
    from parties.client import upload_messages
    from parties.methods.base import rows

    session = Session(SessionSpec(name="s", parties=("a", "b"), ids="plain", dims={"a": 2}))
    session.join("a")
    ids = np.array([f"r{i}" for i in range(5)])
    messages = upload_messages("s", "a", "drbt", {}, ids, [rows("data", np.ones((5, 3)))], 4, 4096)
    with pytest.raises(InvalidArgument, match="party 'a': array 'data' has 3 columns, but session 's' expects k = 2 "
                                              "from it"):
        session.receive(header_from_proto(next(messages).header), upload_stream(messages))
    assert session.state == WAITING
    messages = upload_messages("s", "a", "drbt", {}, ids, [rows("data", np.ones((5, 2)))], 4, 4096)
    assert session.receive(header_from_proto(next(messages).header), upload_stream(messages)) == 80
