"""Who is calling, charged from the moment a call is seen: the coordinator's gRPC server interceptor.

Every call passes the gate before the servicer (coordinator.servicer) sees
it, and before a stream has sent any message. The gate identifies the party
the call's credentials prove, from its metadata and TLS handshake alone:

- a bearer token (``authorization: Bearer <token>``) whose SHA-256 is a
  party's digest in some session's ``tokens.json``: that party of that
  session;
- a client certificate the TLS handshake verified, bound to a session by its
  SubjectAlternativeName URI (``urn:ppcsim:v1:party:<session>:<party>``,
  protos.identity) and checked as the servicer checks it: that party.

A proven call is charged at once to its party's and its session's share of
the server's calls (coordinator.limits.Calls: ``party_calls`` per party,
``session_calls`` per session, the whole server's ``server_calls`` less the
``reserve`` kept for GetStatus), and refused RESOURCE_EXHAUSTED, saying the
server is busy, past any of them; ``GetStatus`` is charged to its caller
apart from the session's share and may use the reserve. So one party of one
session that opens thousands of streams and sends nothing holds at most
``party_calls`` of them: the rest are refused as they come, and other
sessions and their GetStatus go on.

A call whose credentials prove no party (a session without tokens or mutual
TLS, where a party's name is only claimed) passes the gate uncharged: the
servicer counts it once it names its session, by the name it claims and its
connection, and a stream before its first message against
``anonymous_streams``.

The gate tells the servicer what it charged through :data:`CHARGED`.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

import grpc
from cryptography import x509

from coordinator.errors import ResourceExhausted
from coordinator.limits import Calls
from coordinator.logs import Quota
from coordinator.security import Refused, bearer_token, certificate_name, peer_certificate
from coordinator.text import clip

#: The gate's refusals, a few lines a period (coordinator.logs): thousands of refused streams write a handful.
refusals = Quota(logging.getLogger("ppcsim.coordinator"))

#: The prefix of the SubjectAlternativeName URI that binds a party's certificate to its session (protos.identity).
URI_PREFIX = "urn:ppcsim:v1:party:"


@dataclass(frozen=True)
class Caller:
    """The party of a session that a call's credentials prove."""

    session: str
    party: str


#: The caller the gate charged for the call being served (None: it proves no party; the servicer counts it).
CHARGED: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("charged", default=None)


@functools.lru_cache(maxsize=1024)
def certificate_sessions(pem: bytes) -> tuple[tuple[str, str], ...]:
    """The (session, party) pairs a PEM certificate's SubjectAlternativeName URIs name (none if unreadable)."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
        uris = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
            x509.UniformResourceIdentifier)
    except (ValueError, x509.ExtensionNotFound):
        return ()
    pairs = []
    for uri in uris:
        if uri.startswith(URI_PREFIX) and uri.count(":") == URI_PREFIX.count(":") + 1:
            session, party = uri[len(URI_PREFIX):].split(":")
            pairs.append((unquote(session), unquote(party)))
    return tuple(pairs)


class Gate(grpc.aio.ServerInterceptor):
    """Identify every call by its credentials and charge it to its party and session before it runs.

    ``sessions(digest)`` gives the (session, party) pairs whose token has that
    SHA-256 hex digest; ``mutual(session)`` whether a session is served under
    mutual TLS.
    """

    def __init__(self, calls: Calls, sessions: Callable[[str], list[tuple[str, str]]],
                 mutual: Callable[[str], bool]):
        self.calls, self.sessions, self.mutual = calls, sessions, mutual

    def identify(self, context) -> Caller | None:
        """The party the call's token or certificate proves; None if they prove none."""
        token = bearer_token(context)
        if token is not None:
            owners = self.sessions(hashlib.sha256(token.encode()).hexdigest())
            if owners:
                session, party = min(owners)
                return Caller(session, party)
        pem = peer_certificate(context)
        if pem:
            for session, party in certificate_sessions(pem):
                if not self.mutual(session):
                    continue
                try:
                    if certificate_name(context, session) == party:
                        return Caller(session, party)
                except Refused:
                    continue
        return None

    def enter(self, caller: Caller, status: bool) -> None:
        if status:
            self.calls.enter_status(caller.session, caller.party)
        else:
            self.calls.enter(caller.session, caller.party)

    def leave(self, caller: Caller, status: bool) -> None:
        if status:
            self.calls.leave_status(caller.session, caller.party)
        else:
            self.calls.leave(caller.session, caller.party)

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        status = handler_call_details.method.endswith("/GetStatus")
        gate = self

        async def admit(context) -> Caller | None:
            caller = gate.identify(context)
            if caller is None:
                return None
            try:
                gate.enter(caller, status)
            except ResourceExhausted as exc:
                refusals.warning("busy", "%s", clip(str(exc)))
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, clip(str(exc)))
            return caller

        def wrap_unary(behaviour):
            async def run(request, context):
                caller = await admit(context)
                token = CHARGED.set(caller)
                try:
                    return await behaviour(request, context)
                finally:
                    CHARGED.reset(token)
                    if caller is not None:
                        gate.leave(caller, status)
            return run

        def wrap_streaming(behaviour):
            async def run(request, context):
                caller = await admit(context)
                token = CHARGED.set(caller)
                try:
                    async for message in behaviour(request, context):
                        yield message
                finally:
                    try:
                        CHARGED.reset(token)
                    except ValueError:  # the generator was closed from another context
                        pass
                    if caller is not None:
                        gate.leave(caller, status)
            return run

        options = {"request_deserializer": handler.request_deserializer,
                   "response_serializer": handler.response_serializer}
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(wrap_unary(handler.unary_unary), **options)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(wrap_unary(handler.stream_unary), **options)
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(wrap_streaming(handler.unary_stream), **options)
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(wrap_streaming(handler.stream_stream), **options)
        return handler
