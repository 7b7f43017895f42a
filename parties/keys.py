"""A party's keys: X25519 agreement with its peers, the sealed pseudonym key.

Everything here is from the ``cryptography`` library; nothing is hand-rolled.

- Each party makes an X25519 key pair per session (RFC 7748) and gives the
  public half to the coordinator in ``JoinRequest.public_key``; the
  coordinator relays every party's public key (``GetPeers``). Two parties
  then agree a secret the coordinator cannot compute (``pair_secret``: the
  X25519 shared value through HKDF-SHA256, bound to the session and both
  names).
- For pseudonymous record ids (``parties.pseudonyms``) the session's first party, the
  key leader, draws a 32-byte pseudonym key and seals it to every other party
  with AES-256-GCM under their pair secret (``seal`` / ``unseal``). The
  coordinator relays the sealed keys and learns nothing of the key.
- Pseudonyms under that key are parties.pseudonyms': the same id gives the
  same pseudonym at every party, and without the key nobody can compute or
  test one.
- Under mutual TLS a party signs its public key with its certificate's key
  (``sign_key`` / ``verify_peer``) so that a peer can tell its key from one
  an active coordinator substituted (a man in the middle).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from parties.errors import PartyError
from protos.identity import party_certificate_problem

#: Bytes of the shared pseudonym key.
KEY_BYTES = 32
_PREFIX = b"ppcsim.v1 "


def _context(label: str, *parts: str) -> bytes:
    """``"ppcsim.v1 <label>" 0x00 part 0x00 part ...``, the bytes that bind a key or a signature to its use."""
    return b"\x00".join([_PREFIX + label.encode()] + [p.encode() for p in parts])


@dataclass
class KeyPair:
    """A party's X25519 key pair for one session."""

    private: X25519PrivateKey

    @classmethod
    def generate(cls, seed: int | None = None, session: str = "") -> KeyPair:
        """A new key pair: from this process's entropy, or derived from the party's own ``seed`` and the
        ``session``'s name, so that a party process restarted with the same seed can join its session again with
        the same key, and the same seed in two sessions gives two unrelated keys."""
        if seed is None:
            return cls(X25519PrivateKey.generate())
        return cls(X25519PrivateKey.from_private_bytes(_from_seed(seed, "x25519 key", session)))

    @property
    def public(self) -> bytes:
        """The public key as 32 raw bytes (what ``JoinRequest.public_key`` carries)."""
        return self.private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    def pair_secret(self, peer_public: bytes, label: str, session: str, a: str, b: str) -> bytes:
        """A 32-byte secret only this party and the owner of ``peer_public`` can compute.

        HKDF-SHA256 of the X25519 shared value, with info binding it to
        ``label`` (its use), the session and the two parties' names in a
        fixed order (``a`` then ``b``, the same on both sides).
        """
        try:
            peer = X25519PublicKey.from_public_bytes(peer_public)
            shared = self.private.exchange(peer)
        except ValueError as exc:
            raise PartyError(f"a peer's public key is not a valid X25519 key: {exc}") from None
        return HKDF(hashes.SHA256(), 32, salt=None, info=_context(label, session, a, b)).derive(shared)


def seal(pair: KeyPair, peer_public: bytes, key: bytes, session: str, leader: str, to: str) -> tuple[bytes, bytes]:
    """``key`` sealed by ``leader`` to ``to``: (nonce, ciphertext) of AES-256-GCM under their pair secret."""
    secret = pair.pair_secret(peer_public, "seal", session, leader, to)
    nonce = os.urandom(12)
    return nonce, AESGCM(secret).encrypt(nonce, key, _context("seal", session, leader, to))


def unseal(pair: KeyPair, leader_public: bytes, nonce: bytes, ciphertext: bytes, session: str, leader: str,
           me: str) -> bytes:
    """The key ``leader`` sealed to ``me``; PartyError if it was not sealed by the holder of ``leader_public``."""
    secret = pair.pair_secret(leader_public, "seal", session, leader, me)
    try:
        key = AESGCM(secret).decrypt(nonce, ciphertext, _context("seal", session, leader, me))
    except (InvalidTag, ValueError):
        raise PartyError(f"the pseudonym key relayed from '{leader}' does not open with '{leader}''s public key: "
                         "it was altered or sealed under another key") from None
    if len(key) != KEY_BYTES:
        raise PartyError(f"the pseudonym key from '{leader}' has {len(key)} bytes, not {KEY_BYTES}")
    return key


def _from_seed(seed: int, label: str, session: str) -> bytes:
    """32 bytes derived from a party's ``seed`` for one use in one session: HKDF-SHA256 with info
    ``"ppcsim.v1 <label>" 0x00 session`` (the seed is as secret as they are). Bound to the session's name, so
    that a user who gives the same seed to two sessions gets keys, and pseudonyms, that nothing links."""
    material = int(seed).to_bytes((int(seed).bit_length() + 8) // 8 or 1, "little", signed=False)
    return HKDF(hashes.SHA256(), KEY_BYTES, salt=None, info=_context(label, session)).derive(material)


def pseudonym_key(seed: int | None, session: str = "") -> bytes:
    """A new pseudonym key: from this process's entropy, or derived from the party's own ``seed`` and the
    ``session``'s name (reproducible runs; the same seed in another session gives an unrelated key)."""
    return os.urandom(KEY_BYTES) if seed is None else _from_seed(seed, "pseudonym key", session)


# -- binding a key to a certificate (mutual TLS) -------------------------------------------------

def sign_key(private_key_pem: bytes, session: str, party: str, public: bytes) -> bytes:
    """ECDSA-SHA256 signature by the party's TLS key over its X25519 public key (``JoinRequest.key_signature``)."""
    key = serialization.load_pem_private_key(private_key_pem, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise PartyError("the party's TLS key is not an elliptic-curve key; cannot sign its public key")
    return key.sign(_context("key", session, party) + b"\x00" + public, ec.ECDSA(hashes.SHA256()))


def verify_peer(ca_pem: bytes, certificate_pem: bytes, signature: bytes, session: str, party: str,
                public: bytes) -> None:
    """PartyError unless ``certificate_pem`` is issued by our CA to ``party`` of ``session`` and signs ``public``.

    The certificate must name the party, be for a TLS client (ExtendedKeyUsage
    clientAuth: the coordinator's serverAuth certificate never passes for a
    party) and be bound to ``session`` (protos.identity.party_uri), so that
    another session's party of the same name cannot sign for this one.
    """
    from cryptography import x509  # only under mutual TLS: a party of the default transport never reads one

    try:
        cert = x509.load_pem_x509_certificate(certificate_pem)
        ca = x509.load_pem_x509_certificate(ca_pem)
    except ValueError:
        raise PartyError(f"party '{party}': the relayed certificate is not a PEM certificate") from None
    problem = party_certificate_problem(cert, session, party)
    if problem:
        raise PartyError(f"party '{party}': the relayed certificate {problem}")
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        raise PartyError(f"party '{party}': the relayed certificate is not issued by this party's CA") from None
    key = cert.public_key()
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise PartyError(f"party '{party}': the relayed certificate's key is not an elliptic-curve key")
    try:
        key.verify(signature, _context("key", session, party) + b"\x00" + public, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise PartyError(f"party '{party}': its public key's signature does not verify: the coordinator relayed a "
                         "key that is not the party's") from None
