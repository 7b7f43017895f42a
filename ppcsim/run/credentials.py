"""Throw-away credentials for a session: a CA, the coordinator's and each party's certificate, tokens.

Made with the ``cryptography`` library (EC P-256 keys, SHA-256 signatures);
nothing here is hand-rolled crypto. The layout of a credentials folder:

    ca.pem                          the throw-away certificate authority
    coordinator.pem, coordinator.key
    tokens.json                     session name and SHA-256 of each party's token
    parties/<name>/ca.pem, cert.pem, key.pem, token

The coordinator needs the top level; each party needs only its own folder.
For several sessions on one coordinator, ``tokens.json`` and ``parties/``
sit in one folder per session, ``<session>/``, under the shared CA.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from parties.errors import PartyError
from parties.files import private_folder, write_private
from protos.identity import COORDINATOR_NAME, RESERVED_NAMES, party_uri


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _certificate(subject: str, key, issuer_name, issuer_key, *, ca: bool = False, sans=(), usage=None, days: int = 7):
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    if usage:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def _write(path: Path, data: bytes) -> None:
    """Every credentials file, secret or not, as a fresh 0600 file (parties.files): a key or token left at a
    wider mode by an earlier run is replaced, and a symbolic link in its place is refused, never followed."""
    write_private(private_folder(path.parent) / path.name, data)


def _san(host: str):
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


@dataclass
class Authority:
    """A throw-away CA: its key and certificate."""

    key: object
    certificate: x509.Certificate

    @property
    def pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)


def make_authority(out: Path, name: str, hosts: Sequence[str] = ()) -> Authority:
    """A new CA (``ca.pem``) and the coordinator's certificate and key, written into ``out``.

    ``hosts`` are extra names or addresses the coordinator is reached at
    (it always carries ``ppc-coordinator``, ``localhost`` and 127.0.0.1).
    """
    ca_key = _key()
    ca = Authority(ca_key, _certificate(f"ppc-sim CA for {name}"[:64], ca_key, None, None, ca=True, days=2))
    _write(out / "ca.pem", ca.pem)
    key = _key()
    names = dict.fromkeys([COORDINATOR_NAME, "localhost", "127.0.0.1", *hosts])
    cert = _certificate(COORDINATOR_NAME, key, ca.certificate.subject, ca.key, sans=[_san(h) for h in names],
                        usage=ExtendedKeyUsageOID.SERVER_AUTH, days=2)
    _write(out / "coordinator.pem", cert.public_bytes(serialization.Encoding.PEM))
    _write(out / "coordinator.key", _pem_key(key))
    return ca


def make_session_credentials(out: Path, session: str, parties: list[str], ca: Authority) -> None:
    """Each party's certificate (signed by ``ca``), key and token, and the tokens' digests, into ``out``.

    A party's certificate is for a TLS client (ExtendedKeyUsage clientAuth)
    and bound to ``session`` by a SubjectAlternativeName URI
    (protos.identity.party_uri): the coordinator and the other parties refuse
    it in any other session, even one under the same CA.
    """
    reserved = [p for p in parties if p in RESERVED_NAMES]
    if reserved:
        raise PartyError(f"session '{session}': no party may be named '{reserved[0]}' (the coordinator's name)")
    digests = {}
    for party in parties:
        folder = out / "parties" / party
        key = _key()
        cert = _certificate(party, key, ca.certificate.subject, ca.key, usage=ExtendedKeyUsageOID.CLIENT_AUTH,
                            sans=[x509.UniformResourceIdentifier(party_uri(session, party))], days=2)
        token = secrets.token_urlsafe(32)
        digests[party] = token_digest(token)
        _write(folder / "ca.pem", ca.pem)
        _write(folder / "cert.pem", cert.public_bytes(serialization.Encoding.PEM))
        _write(folder / "key.pem", _pem_key(key))
        _write(folder / "token", token.encode())
    _write(out / "tokens.json", json.dumps({"session": session, "parties": digests}, indent=2).encode())


def make_credentials(out: Path, session: str, parties: list[str], hosts: Sequence[str] = ()) -> Path:
    """A throw-away CA, certificates for the coordinator and every party, and party tokens, in ``out``."""
    make_session_credentials(out, session, parties, make_authority(out, session, hosts))
    return out


def make_shared_credentials(out: Path, sessions: dict[str, list[str]], hosts: Sequence[str] = ()) -> Path:
    """One CA and coordinator certificate in ``out`` for several sessions on one coordinator,
    and each session's party credentials and tokens in ``out/<session>/``."""
    ca = make_authority(out, f"{len(sessions)} sessions", hosts)
    for session, parties in sessions.items():
        make_session_credentials(out / session, session, parties, ca)
    return out
