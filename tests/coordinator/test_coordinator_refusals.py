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
    session.join("a")
    with pytest.raises(FailedPrecondition, match="party 'a': PostDistances before its id upload was accepted"):
        secagg.ready_to_post(session, "a")


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
