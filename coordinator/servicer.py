"""The gRPC servicer: finds the session of each RPC, calls its handler, maps errors to gRPC statuses.

Hostile or broken input gets a precise status and leaves the coordinator
serving: a request that does not name a session and a party it may act as is
refused before it reaches any session; a malformed upload from a party that
joined is refused (INVALID_ARGUMENT, naming the party and field) and
discarded, and the party may upload again. Messages gRPC cannot decode (not
protobuf, or a string field that is not UTF-8) are answered by gRPC itself
with INTERNAL "Exception deserializing request!" before the servicer sees them.
"""

from __future__ import annotations

import logging
import threading
from typing import NoReturn

import grpc

from coordinator import handlers, mpc, secagg
from coordinator.clock import REAL, Clock
from coordinator.errors import FailedPrecondition, InvalidArgument, PermissionDenied, SessionError
from coordinator.security import Refused, bearer_token, certificate_name, identify, peer_certificate
from coordinator.session import Session, SessionSpec
from coordinator.text import clip, shown
from coordinator.upload import BrokenStream, Received
from protos.ppcsim.v1 import session_pb2_grpc

log = logging.getLogger("ppcsim.coordinator")
# Without a handler, logging's last resort would print these warnings to the stderr of
# whatever process serves (e.g. ``ppc run``), duplicating its one-line error; ``ppc
# coordinator`` configures logging and still shows them.
log.addHandler(logging.NullHandler())

#: Seconds an Upload stream may take to send its header before it is cut off (it holds a worker thread).
HEADER_SECONDS = 30.0


class Registry:
    """The sessions one coordinator serves, by name."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        #: The clock of every session created here and of the servicer's header timeout (coordinator.clock).
        self.clock: Clock = clock if clock is not None else REAL

    def create(self, spec: SessionSpec) -> Session:
        with self._lock:
            if spec.name in self._sessions:
                raise SessionError(f"a session named '{spec.name}' exists already")
            session = self._sessions[spec.name] = Session(spec, self.clock)
            return session

    def get(self, name: str) -> Session:
        with self._lock:
            try:
                return self._sessions[name]
            except KeyError:
                raise SessionError(f"no session named '{shown(name)}' on this coordinator") from None


class CoordinatorServicer(session_pb2_grpc.CoordinatorServicer):
    """Thin: each RPC finds its session, calls it, and maps SessionError to a gRPC status."""

    #: See HEADER_SECONDS; an attribute so that tests can shorten it.
    header_timeout = HEADER_SECONDS

    def __init__(self, registry: Registry):
        self.registry = registry

    def _abort(self, context, exc: Exception | str, code=grpc.StatusCode.FAILED_PRECONDITION) -> NoReturn:
        """Abort the call: INVALID_ARGUMENT or PERMISSION_DENIED for those errors, else ``code``.

        ``context.abort`` raises, so this never returns.
        """
        if isinstance(exc, InvalidArgument):
            code = grpc.StatusCode.INVALID_ARGUMENT
        elif isinstance(exc, PermissionDenied):
            code = grpc.StatusCode.PERMISSION_DENIED
        elif isinstance(exc, FailedPrecondition):
            code = grpc.StatusCode.FAILED_PRECONDITION
        details = clip(str(exc))
        log.warning("%s", details)
        context.abort(code, details)
        raise AssertionError("grpc's context.abort returned")  # it raises; never reached

    def _session(self, name: str, context, claimed: str) -> Session:
        """The session called ``name`` once the caller proved it may act as ``claimed``; else abort.

        An unknown session and a caller without credentials for it get the same
        NOT_FOUND/UNAUTHENTICATED answers whatever the session holds.
        """
        try:
            session = self.registry.get(name)
        except SessionError as exc:
            self._abort(context, exc, grpc.StatusCode.NOT_FOUND)
        try:
            identify(session.spec.tokens, session.spec.mutual, claimed, bearer_token(context), certificate_name(context))
        except Refused as exc:
            log.warning("session %s: refused %s call from %s: %s", shown(name), shown(claimed) or "status",
                        context.peer(), clip(str(exc)))
            context.abort(exc.code, clip(str(exc)))
        return session

    def Join(self, request, context):
        session = self._session(request.session, context, request.party)
        try:
            reply = handlers.join(session, request, peer_certificate(context) if session.spec.mutual else b"")
        except SessionError as exc:
            self._abort(context, exc)
        secure = context.auth_context().get("transport_security_type", [b""])[0] == b"ssl"
        session.protection[request.party] = {
            "transport": ("mutual TLS" if session.spec.mutual else "TLS") if secure else "plaintext (loopback)",
            "identity": " and ".join(
                [w for w, on in (("token", session.spec.tokens is not None), ("certificate", session.spec.mutual)) if on]
            ) or "none (claimed name only)",
        }
        log.info("session %s: party %s joined", request.session, request.party)
        return reply

    def _unary(self, handler, request, context):
        """A unary RPC of a party: its session, then ``handler(session, request)``; SessionError aborts."""
        session = self._session(request.session, context, request.party)
        try:
            return handler(session, request)
        except SessionError as exc:
            self._abort(context, exc)

    def GetPeers(self, request, context):
        return self._unary(handlers.peers, request, context)

    def PostSealedKeys(self, request, context):
        return self._unary(handlers.post_sealed, request, context)

    def GetSealedKey(self, request, context):
        return self._unary(handlers.sealed_key, request, context)

    def Upload(self, request_iterator, context):
        """``request_iterator`` yields each message as Received (see register)."""
        first = self._header(request_iterator, context)
        header = first.message.header
        session = self._session(header.session, context, header.party)
        try:
            reply = handlers.upload(session, first, self._rest(request_iterator, context), context.cancel)
        except SessionError as exc:
            self._abort(context, exc, grpc.StatusCode.INVALID_ARGUMENT)
        log.info("session %s: party %s uploaded %d bytes", header.session, header.party, reply.payload_bytes)
        return reply

    def _header(self, request_iterator, context):
        """The upload's first message, a header; else abort. A stream that sends nothing for
        ``header_timeout`` seconds is cancelled: before its header it names no session or party,
        and must not hold one of the coordinator's worker threads."""
        expired = threading.Event()

        def expire():
            expired.set()
            context.cancel()

        timer = self.registry.clock.call_later(self.header_timeout, expire)
        try:
            first = next(request_iterator, None)
        except grpc.RpcError:
            if expired.is_set():
                log.warning("upload from %s: no header within %g s; cut off", context.peer(), self.header_timeout)
            raise  # cancelled: no status to send
        finally:
            timer.cancel()
        if first is None and not context.is_active():
            # gRPC could not decode the first message and has answered INTERNAL itself
            self._abort(context, f"upload from {context.peer()}: its first message is not a valid UploadMessage",
                        grpc.StatusCode.INVALID_ARGUMENT)
        if first is None:
            self._abort(context, "an upload starts with its header; the stream ended without any message",
                        grpc.StatusCode.INVALID_ARGUMENT)
        part = first.message.WhichOneof("part")
        if part != "header":
            self._abort(context, f"an upload starts with its header; its first message carries {part or 'nothing'}",
                        grpc.StatusCode.INVALID_ARGUMENT)
        return first

    @staticmethod
    def _rest(request_iterator, context):
        """The messages after the header; BrokenStream, saying which message, if the transport cut them short."""
        n = 1
        try:
            for message in request_iterator:
                n += 1
                yield message
        except grpc.RpcError:
            raise BrokenStream(f"the stream was cancelled or cut off after message {n}") from None
        if not context.is_active():  # gRPC ended the stream: it could not decode the next message
            raise BrokenStream(f"message {n + 1} is not a valid UploadMessage (not protobuf, or a string "
                               "that is not UTF-8)")

    def _stream(self, handler, request, context):
        """A server-streaming RPC of a party: ``handler(session, request)`` makes the messages (or refuses before
        the first, which aborts the call)."""
        session = self._session(request.session, context, request.party)
        try:
            messages = handler(session, request)
        except SessionError as exc:
            self._abort(context, exc)
        yield from messages

    def GetResult(self, request, context):
        return self._stream(handlers.result, request, context)

    # -- secure aggregation (coordinator.secagg) ----------------------------------------------
    def GetAlignment(self, request, context):
        return self._stream(secagg.alignment, request, context)

    def PostDistances(self, request_iterator, context):
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "header":
            self._abort(context, "PostDistances starts with its header", grpc.StatusCode.INVALID_ARGUMENT)
        session = self._session(first.header.session, context, first.header.party)

        def messages():
            yield first
            yield from request_iterator

        try:
            return secagg.post_distances(session, messages())
        except SessionError as exc:
            self._abort(context, exc, grpc.StatusCode.INVALID_ARGUMENT)

    def GetLabels(self, request, context):
        return self._stream(secagg.labels, request, context)

    def Relay(self, request_iterator, context):  # MPC traffic (coordinator.mpc)
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "open":
            self._abort(context, "Relay starts with RelayOpen", grpc.StatusCode.INVALID_ARGUMENT)
        yield from self._stream(lambda s, _: mpc.relay(s, first, request_iterator), first.open, context)

    def GetStatus(self, request, context):
        return handlers.status(self._session(request.session, context, ""), request)


def register(servicer: CoordinatorServicer, server: grpc.Server) -> None:
    """Add ``servicer`` to ``server`` with the generated method table, but Upload messages deserialised as
    Received, so that the ledger counts each by the bytes it arrived in (not by serialising it again) and its
    chunk's bytes are read out once."""

    class Table:  # takes the generated table in place of a server
        def add_generic_rpc_handlers(self, handlers):
            pass

        def add_registered_method_handlers(self, service, methods):
            self.service, self.methods = service, dict(methods)

    table = Table()
    session_pb2_grpc.add_CoordinatorServicer_to_server(servicer, table)
    upload = table.methods["Upload"]
    table.methods["Upload"] = grpc.stream_unary_rpc_method_handler(
        upload.stream_unary, request_deserializer=Received.parse, response_serializer=upload.response_serializer
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(table.service, table.methods),))
    server.add_registered_method_handlers(table.service, table.methods)
