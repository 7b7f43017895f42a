"""Who a certificate names, and for what: the checks both ends of the contract make of a party's certificate.

A party's certificate (``ppc credentials``) names the party as its common
name, carries the ExtendedKeyUsage clientAuth (a party is a TLS client) and
binds it to one session with a URI in its SubjectAlternativeName,
``party_uri(session, party)``. The coordinator's certificate names
``ppc-coordinator`` and carries serverAuth only. So a certificate made for
session A's party ``lab`` is refused by session B (its coordinator and its
parties alike), and the coordinator's certificate never passes for a party.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from cryptography import x509

#: The name on every coordinator certificate; checked whatever address a party dials.
COORDINATOR_NAME = "ppc-coordinator"
#: Names no party may take: a party named so could pass a certificate of the coordinator's for its own.
RESERVED_NAMES = (COORDINATOR_NAME,)


def party_uri(session: str, party: str) -> str:
    """``urn:ppcsim:v1:party:<session>:<party>``, each name percent-encoded (UTF-8, nothing kept but
    letters, digits and ``-._~``): the SubjectAlternativeName URI binding a party's certificate to its session."""
    return f"urn:ppcsim:v1:party:{quote(session, safe='')}:{quote(party, safe='')}"


def party_certificate_problem(cert: x509.Certificate, session: str, party: str) -> str | None:
    """Why ``cert`` is not party ``party``'s certificate for ``session`` (None if it is).

    Checks the common name, the ExtendedKeyUsage clientAuth and the
    SubjectAlternativeName URI; not the issuer (the caller checks that
    against its CA, or TLS did).
    """
    # imported here: a party process imports this module for COORDINATOR_NAME, and reads a certificate only
    # under mutual TLS (cryptography.x509 costs a process about 0.03 CPU-seconds)
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if party in RESERVED_NAMES:
        return f"names '{party}', which no party may take"
    names = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    if names != [party]:
        return f"names {names}, not '{party}'"
    try:
        usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        usage = None
    if usage is None or ExtendedKeyUsageOID.CLIENT_AUTH not in usage:
        return "is not for a TLS client (its ExtendedKeyUsage lacks clientAuth)"
    try:
        uris = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
            x509.UniformResourceIdentifier)
    except x509.ExtensionNotFound:
        uris = []
    if party_uri(session, party) not in uris:
        return (f"is not bound to session '{session}' (no SubjectAlternativeName URI "
                f"{party_uri(session, party)}; make the session's credentials with 'ppc credentials')")
    return None
