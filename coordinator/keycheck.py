"""What the coordinator checks of a party's key-agreement key itself, so that a party's fault is named as its own.

Under mutual TLS a party signs its X25519 public key with its certificate's
key (docs/protocol.md, step 1). The coordinator holds that certificate (from
the TLS handshake), so it verifies the signature at ``Join``: a party whose
signature does not verify is refused there, naming it, instead of the other
parties stopping later with a fault they can only blame on the coordinator.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from coordinator.errors import InvalidArgument


def signed_bytes(session: str, party: str, public_key: bytes) -> bytes:
    """``"ppcsim.v1 key" 0x00 session 0x00 party 0x00 public_key``: what ``key_signature`` signs."""
    return b"\x00".join([b"ppcsim.v1 key", session.encode(), party.encode(), public_key])


def check_signature(certificate_pem: bytes, signature: bytes, session: str, party: str, public_key: bytes) -> None:
    """InvalidArgument naming ``party`` unless ``signature`` is ECDSA-SHA256 over its ``public_key`` by the key of
    ``certificate_pem`` (the client certificate of its TLS connection)."""
    try:
        key = x509.load_pem_x509_certificate(certificate_pem).public_key()
    except ValueError:
        raise InvalidArgument(f"party '{party}': its TLS client certificate cannot be read") from None
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise InvalidArgument(f"party '{party}': its TLS client certificate's key is not an elliptic-curve key")
    if not signature:
        raise InvalidArgument(f"party '{party}': Join under mutual TLS must carry key_signature (a party run with "
                              "'ppc party' signs its key when its scenario file says [security] mutual = true: add "
                              "it, with tls = true, and give the party its folder from 'ppc credentials')")
    try:
        key.verify(signature, signed_bytes(session, party, public_key), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise InvalidArgument(f"party '{party}': key_signature does not verify over its public_key with the "
                              "certificate of its TLS connection") from None
