"""protos.identity: the certificate URI's encoding as docs/protocol.md states it, and the gate reading it back."""

from __future__ import annotations

from conftest import ROOT
from protos.identity import party_uri


def test_the_uri_percent_encodes_every_byte_but_unreserved_ascii_in_upper_case():
    uri = party_uri("s/1", "é x")
    assert uri == "urn:ppcsim:v1:party:s%2F1:%C3%A9%20x"
    assert f"`{uri}`" in (ROOT / "docs" / "protocol.md").read_text()
    assert party_uri("A-z_0.9~", "a:b") == "urn:ppcsim:v1:party:A-z_0.9~:a%3Ab"


def test_the_gate_reads_session_and_party_back_from_a_certificate():
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from coordinator.gate import certificate_sessions

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "é x")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.UniformResourceIdentifier(party_uri("s/1", "é x")),
                                                        x509.UniformResourceIdentifier("urn:other:thing")]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    assert certificate_sessions(cert.public_bytes(serialization.Encoding.PEM)) == (("s/1", "é x"),)
    assert certificate_sessions(b"not a certificate") == ()
