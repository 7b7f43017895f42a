"""The gRPC servicer: finds the session of each RPC, calls its handler, maps errors to gRPC statuses."""

from __future__ import annotations

import logging
import threading

import grpc

from coordinator import handlers
from coordinator.errors import SessionError
from coordinator.security import Refused, bearer_token, certificate_name, identify
from coordinator.session import Session, SessionSpec
from protos.ppcsim.v1 import session_pb2_grpc

log = logging.getLogger("ppcsim.coordinator")
# Without a handler, logging's last resort would print these warnings to the stderr of
# whatever process serves (e.g. ``ppc run``), duplicating its one-line error; ``ppc
# coordinator`` configures logging and still shows them.
log.addHandler(logging.NullHandler())


class Registry:
    """The sessions one coordinator serves, by name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}

    def create(self, spec: SessionSpec) -> Session:
        with self._lock:
            if spec.name in self._sessions:
                raise SessionError(f"a session named '{spec.name}' exists already")
            session = self._sessions[spec.name] = Session(spec)
            return session

    def get(self, name: str) -> Session:
        with self._lock:
            try:
                return self._sessions[name]
            except KeyError:
                raise SessionError(f"no session named '{name}' on this coordinator") from None


class CoordinatorServicer(session_pb2_grpc.CoordinatorServicer):
    """Thin: each RPC finds its session, calls it, and maps SessionError to a gRPC status."""

    def __init__(self, registry: Registry):
        self.registry = registry

    def _abort(self, context, exc: SessionError, code=grpc.StatusCode.FAILED_PRECONDITION):
        log.warning("%s", exc)
        context.abort(code, str(exc))

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
            log.warning("session %s: refused %s call from %s: %s", name, claimed or "status", context.peer(), exc)
            context.abort(exc.code, str(exc))
        return session

    def Join(self, request, context):
        session = self._session(request.session, context, request.party)
        try:
            reply = handlers.join(session, request)
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

    def Upload(self, request_iterator, context):
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "header":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "an upload starts with its header")
        session = self._session(first.header.session, context, first.header.party)
        try:
            reply = handlers.upload(session, first, request_iterator)
        except SessionError as exc:
            self._abort(context, exc, grpc.StatusCode.INVALID_ARGUMENT)
        log.info("session %s: party %s uploaded %d bytes", first.header.session, first.header.party, reply.payload_bytes)
        return reply

    def GetResult(self, request, context):
        session = self._session(request.session, context, request.party)
        try:
            messages = handlers.result(session, request)
        except SessionError as exc:
            self._abort(context, exc)
        yield from messages

    def GetStatus(self, request, context):
        return handlers.status(self._session(request.session, context, ""), request)
