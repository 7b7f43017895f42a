"""Who may do what: transport credentials and the identity check of every call.

A party proves who it is with a per-session token (sent as
``authorization: Bearer <token>`` metadata; the coordinator keeps only its
SHA-256) and, under mutual TLS, with a client certificate whose common name
is its party name, made for a TLS client and bound to the session
(protos.identity). A call on behalf of another party is refused with
PERMISSION_DENIED; one without valid credentials with UNAUTHENTICATED.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import json
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509

from coordinator.errors import SessionError
from protos.identity import party_certificate_problem

LOOPBACK_NAMES = ("localhost",)


class Refused(Exception):
    """A call the coordinator refuses: the gRPC status and a message naming the party."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ServerSecurity:
    """How the coordinator listens: TLS (optionally mutual) with these PEM bytes, or plaintext."""

    tls: bool = False
    mutual: bool = False
    certificate: bytes = b""
    key: bytes = b""
    ca: bytes = b""

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.ssl_server_credentials(
            [(self.key, self.certificate)], root_certificates=self.ca, require_client_auth=self.mutual
        )

    @property
    def transport(self) -> str:
        return "mutual TLS" if self.mutual else "TLS" if self.tls else "plaintext"


def read(folder: Path, name: str) -> bytes:
    try:
        return (Path(folder) / name).read_bytes()
    except OSError as exc:
        raise SessionError(f"credentials: cannot read {Path(folder) / name}: {exc.strerror}") from None


def load_server_security(folder: Path | None, *, tls: bool, mutual: bool) -> ServerSecurity:
    """The coordinator's certificate, key and CA from a ``ppc credentials`` folder, when TLS is on."""
    if not tls:
        return ServerSecurity()
    if folder is None:
        raise SessionError("the scenario's [security] asks for TLS: create credentials with 'ppc credentials' "
                           "and pass the folder with --credentials")
    return ServerSecurity(True, mutual, read(folder, "coordinator.pem"), read(folder, "coordinator.key"),
                          read(folder, "ca.pem"))


def load_token_digests(folder: Path, session: str) -> dict[str, str]:
    """The SHA-256 of each party's token for ``session``, from ``tokens.json``."""
    try:
        table = json.loads(read(folder, "tokens.json"))
    except json.JSONDecodeError as exc:
        raise SessionError(f"credentials: {Path(folder) / 'tokens.json'} is not JSON: {exc}") from None
    if table.get("session") != session:
        raise SessionError(f"credentials: {Path(folder) / 'tokens.json'} is for session "
                           f"'{table.get('session')}', not '{session}'")
    return dict(table["parties"])


def is_loopback(listen: str) -> bool:
    """Whether HOST:PORT names this machine's loopback interface only."""
    host = listen.rsplit(":", 1)[0].strip("[]")
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bearer_token(context) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and value.startswith("Bearer "):
            return value[len("Bearer "):]
    return None


def presented_name(context) -> str | None:
    """The common name of the client certificate the TLS handshake verified (None without one), before the call
    names its session: certificate_name checks it is a party's certificate for that session."""
    names = context.auth_context().get("x509_common_name") or []
    return names[0].decode() if names else None


def certificate_name(context, session: str) -> str | None:
    """The party the caller's TLS client certificate names (None without one); Refused (UNAUTHENTICATED) if the
    certificate is not a party's certificate for ``session`` (protos.identity: clientAuth, bound to the session
    by its SubjectAlternativeName URI), e.g. another session's party of the same name, or the coordinator's."""
    name = presented_name(context)
    if name is None:
        return None
    problem = _certificate_problem(peer_certificate(context), session, name)
    if problem:
        raise Refused(grpc.StatusCode.UNAUTHENTICATED, f"party '{name}': the client certificate {problem}")
    return name


@functools.lru_cache(maxsize=1024)
def _certificate_problem(pem: bytes, session: str, name: str) -> str | None:
    """protos.identity.party_certificate_problem of a PEM certificate, parsed once per certificate and session."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return "cannot be read"
    return party_certificate_problem(cert, session, name)


def peer_certificate(context) -> bytes:
    """The caller's TLS client certificate (PEM) as received in the handshake; b"" without one."""
    pems = context.auth_context().get("x509_pem_cert") or []
    return pems[0] if pems else b""


def identify(tokens: dict[str, str] | None, mutual: bool, claimed: str, token: str | None, common_name: str | None) -> str:
    """The party the caller proves to be; Refused unless it may act as ``claimed`` ("" = any party).

    ``tokens`` maps each party of the session to its token's SHA-256 (None:
    tokens are off); under ``mutual`` TLS the certificate's common name is
    the party's name.
    """
    proven = []
    if tokens is not None:
        if token is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, f"party '{claimed or '?'}': no token (authorization: Bearer ...)")
        digest = hashlib.sha256(token.encode()).hexdigest()
        owner = next((p for p, d in tokens.items() if hmac.compare_digest(d, digest)), None)
        if owner is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, f"party '{claimed or '?'}': the token is not valid for this session")
        proven.append(owner)
    if mutual:
        if not common_name:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, f"party '{claimed or '?'}': no client certificate")
        proven.append(common_name)
    if len(set(proven)) > 1:
        raise Refused(grpc.StatusCode.PERMISSION_DENIED,
                      f"the token belongs to '{proven[0]}' but the certificate to '{proven[1]}'")
    who = proven[0] if proven else claimed
    if claimed and who != claimed:
        raise Refused(grpc.StatusCode.PERMISSION_DENIED, f"'{who}' may not act as party '{claimed}'")
    return who
