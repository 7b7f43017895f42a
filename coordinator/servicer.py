"""The gRPC servicer: adapts each RPC to a Session, counts every message in the ledger."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import grpc

from coordinator.errors import SessionError
from coordinator.ledger import DOWN, UP, Ledger
from coordinator.session import STATE_NAMES, Session, SessionSpec
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc
from protos.serde import array_chunks

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


def counted(messages: Iterator, ledger: Ledger, party: str, rpc: str) -> Iterator:
    """Pass ``messages`` through, recording each one in ``ledger`` as it arrives."""
    for message in messages:
        payload = len(message.chunk.data) if message.WhichOneof("part") == "chunk" else 0
        ledger.record(party, rpc, UP, message, payload)
        yield message


class CoordinatorServicer(session_pb2_grpc.CoordinatorServicer):
    """Thin: each RPC finds its session, calls it, and maps SessionError to a gRPC status."""

    def __init__(self, registry: Registry):
        self.registry = registry

    def _abort(self, context, exc: SessionError, code=grpc.StatusCode.FAILED_PRECONDITION):
        log.warning("%s", exc)
        context.abort(code, str(exc))

    def _session(self, name: str, context) -> Session:
        """The session called ``name``, or abort the call with NOT_FOUND."""
        try:
            return self.registry.get(name)
        except SessionError as exc:
            self._abort(context, exc, grpc.StatusCode.NOT_FOUND)

    def Join(self, request, context):
        session = self._session(request.session, context)
        session.ledger.record(request.party, "Join", UP, request)
        try:
            session.join(request.party)
        except SessionError as exc:
            self._abort(context, exc)
        reply = session_pb2.JoinReply(chunk_bytes=session.spec.chunk_bytes, seconds_left=session.seconds_left())
        session.ledger.record(request.party, "Join", DOWN, reply)
        log.info("session %s: party %s joined", request.session, request.party)
        return reply

    def Upload(self, request_iterator, context):
        first = next(request_iterator, None)
        if first is None or first.WhichOneof("part") != "header":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "an upload starts with its header")
        header = first.header
        session = self._session(header.session, context)
        session.ledger.record(header.party, "Upload", UP, first)
        try:
            payload = session.receive(header, counted(request_iterator, session.ledger, header.party, "Upload"))
        except SessionError as exc:
            self._abort(context, exc, grpc.StatusCode.INVALID_ARGUMENT)
        reply = session_pb2.UploadReply(payload_bytes=payload)
        session.ledger.record(header.party, "Upload", DOWN, reply)
        log.info("session %s: party %s uploaded %d bytes", header.session, header.party, payload)
        return reply

    def GetResult(self, request, context):
        session = self._session(request.session, context)
        session.ledger.record(request.party, "GetResult", UP, request)
        try:
            outcome, labels = session.result_for(request.party, timeout=session.seconds_left() + 1.0)
        except SessionError as exc:
            self._abort(context, exc)
        header = session_pb2.ResultHeader(
            algorithm=session.spec.clustering.algorithm,
            n_clusters=len(outcome.sizes),
            sizes=outcome.sizes,
            noise=outcome.noise,
            n_joined=len(outcome.join.ids),
            n_labels=len(labels),
        )
        yield self._sent(session, request.party, session_pb2.ResultMessage(header=header))
        for chunk in array_chunks(0, labels, session.spec.chunk_bytes):
            yield self._sent(session, request.party, session_pb2.ResultMessage(labels=chunk), len(chunk.data))

    @staticmethod
    def _sent(session: Session, party: str, message, payload: int = 0):
        session.ledger.record(party, "GetResult", DOWN, message, payload)
        return message

    def GetStatus(self, request, context):
        session = self._session(request.session, context)
        session.ledger.record("", "GetStatus", UP, request)
        reply = session_pb2.StatusReply(
            state=session.state,
            error=session.error,
            parties=[session_pb2.PartyStatus(**p) for p in session.party_status()],
            ledger=[
                session_pb2.LedgerEntry(
                    party=e.party, rpc=e.rpc, direction=e.direction,
                    payload_bytes=e.payload, serialized_bytes=e.serialized, time=e.time,
                )
                for e in session.ledger.entries()
            ],
        )
        session.ledger.record("", "GetStatus", DOWN, reply)
        return reply


__all__ = ["CoordinatorServicer", "Registry", "STATE_NAMES"]
