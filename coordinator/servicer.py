"""The gRPC servicer: finds the session of each RPC, calls its handler, maps errors to gRPC statuses.

Hostile or broken input gets a precise status and leaves the coordinator
serving: a request that does not name a session and a party it may act as is
refused before it reaches any session; a malformed upload from a party that
joined is refused (INVALID_ARGUMENT, naming the party and field) and
discarded, and the party may upload again. Messages that do not decode (not
protobuf, or a string field that is not UTF-8) are answered INVALID_ARGUMENT,
naming the message type, before any session is looked up. Calls past a cap of
coordinator.limits get RESOURCE_EXHAUSTED naming it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import NoReturn, TypeVar

import grpc

from coordinator import handlers
from coordinator.errors import ResourceExhausted, SessionError
from coordinator.gate import CHARGED
from coordinator.limits import Calls, Limits
from coordinator.logs import Quota
from coordinator.registry import Registry
from coordinator.security import Refused, bearer_token, certificate_name, identify, peer_certificate, presented_name
from coordinator.session import FAILED, Session
from coordinator.text import clip, shown
from coordinator.waits import PROBING, WouldWait
from coordinator.wire import openings
from coordinator.wire.relay import RelayCall
from coordinator.wire.statuses import status_of
from coordinator.wire.streams import Streams
from protos.ppcsim.v1 import session_pb2_grpc

log = logging.getLogger("ppcsim.coordinator")
# Without a handler, logging's last resort would print these warnings to the stderr of
# whatever process serves (e.g. ``ppc run``), duplicating its one-line error; ``ppc
# coordinator`` configures logging and still shows them.
log.addHandler(logging.NullHandler())
#: Refusals are logged a few lines a period per kind (coordinator.logs): an outsider cannot flood the log.
refusals = Quota(log)

#: Seconds a stream may take to send its first message (the default of Limits.first_message_seconds).
HEADER_SECONDS = 10.0

Message = TypeVar("Message")


class CoordinatorServicer(session_pb2_grpc.CoordinatorServicer):
    """Thin: each RPC finds its session, calls its handler, and maps SessionError to a gRPC status.

    Served by gRPC's asyncio server: a call that waits (GetPeers until every
    party joined, GetResult until the clustering is done, a stream until its
    next message) is a coroutine, not a thread, so the number of parties and
    of waiting calls is bounded by the caps of ``limits`` (coordinator.limits),
    not by a pool of threads. Handlers run under PROBING (coordinator.waits):
    one that would wait says so and is run again once its event happened.
    Streams are read as coroutines, each message within a deadline; an upload's
    messages are taken in by one of ``limits.stream_threads`` threads.
    """

    #: Seconds a stream may take to send its first message; an attribute so that tests can shorten it.
    header_timeout = HEADER_SECONDS

    def __init__(self, registry: Registry, limits: Limits | None = None):
        self.registry = registry
        self.limits = limits if limits is not None else Limits(first_message_seconds=self.header_timeout)
        self.calls = Calls(self.limits)
        #: Reads the client streams (coordinator.wire.streams): each message within a deadline, uploads in threads.
        self.streams = Streams(self.limits, registry.clock)
        self.pool = self.streams.pool

    async def _abort(self, context, exc: Exception | str, code=grpc.StatusCode.FAILED_PRECONDITION) -> NoReturn:
        """Abort the call: the status of the error's kind (coordinator.errors), else ``code``."""
        code = status_of(exc, code)
        details = clip(str(exc))
        refusals.warning(f"refused {code.name}", "%s", details)
        await context.abort(code, details)
        raise AssertionError("grpc's context.abort returned")  # it raises; never reached

    async def _session(self, name: str, context, claimed: str) -> Session:
        """The session called ``name`` once the caller proved it may act as ``claimed``; else abort.

        An unknown session and a caller without credentials for it get the same
        NOT_FOUND/UNAUTHENTICATED answers whatever the session holds.
        """
        try:
            session = self.registry.get(name)
        except SessionError as exc:
            await self._abort(context, exc, grpc.StatusCode.NOT_FOUND)
        try:
            identify(session.spec.tokens, session.spec.mutual, claimed, bearer_token(context),
                     certificate_name(context, name) if session.spec.mutual else None)
        except Refused as exc:
            refusals.warning("unidentified", "session %s: refused %s call from %s: %s", shown(name),
                             shown(claimed) or "status", context.peer(), clip(str(exc)))
            await context.abort(exc.code, clip(str(exc)))
        return session

    async def _outsider(self, context) -> bool:
        """Before a stream's first message: whether its credentials prove a party (Registry.admits); refuse
        at once a caller whose metadata proves no party of any session this coordinator serves (a token that
        is no session's, or no token where every session wants one)."""
        try:
            return self.registry.admits(bearer_token(context), presented_name(context))
        except Refused as exc:
            refusals.warning("outsider", "refused a stream from %s before its first message: %s", context.peer(),
                             clip(str(exc)))
            await context.abort(exc.code, clip(str(exc)))
            raise AssertionError("grpc's context.abort returned") from None

    @contextlib.asynccontextmanager
    async def _caller(self, context, session: Session, party: str, status: bool = False):
        """Count the call against its party's and its session's caps for as long as it runs (``status``: a
        GetStatus call, counted apart from the session's share), unless coordinator.gate counted it already.

        In a session whose calls prove no identity (no tokens, no mutual TLS) a
        party's name is only claimed: its cap counts the calls of that name on
        one connection (the caller's address and port), so that an outsider
        claiming a party's name takes its own share, not the party's."""
        charged = CHARGED.get()
        if charged is not None and charged.session == session.spec.name and (status or charged.party == party):
            # coordinator.gate counts it
            yield
            return
        proven = session.spec.tokens is not None or session.spec.mutual
        connection = "" if proven else context.peer()
        enter, leave = (self.calls.enter_status, self.calls.leave_status) if status else \
            (self.calls.enter, self.calls.leave)
        try:
            enter(session.spec.name, party, connection)
        except ResourceExhausted as exc:
            await self._abort(context, exc)
        try:
            yield
        finally:
            leave(session.spec.name, party, connection)

    async def _answer(self, context, session: Session, handler: Callable[[], Message]) -> Message:
        """``handler()`` under PROBING: while it would wait, wait as a coroutine and run it again; SessionError
        aborts the call."""
        while True:
            token = PROBING.set(True)
            try:
                return handler()
            except WouldWait as wait:
                ready = wait.ready
            except SessionError as exc:
                await self._abort(context, exc)
            finally:
                PROBING.reset(token)
            await session.until(ready)

    async def Join(self, request, context):
        session = await self._session(request.session, context, request.party)
        async with self._caller(context, session, request.party):
            certificate = peer_certificate(context) if session.spec.mutual else b""
            reply = await self._answer(context, session, lambda: handlers.join(session, request, certificate))
        session.protect(request.party, context.auth_context().get("transport_security_type", [b""])[0] == b"ssl")
        log.info("session %s: party %s joined", request.session, request.party)
        return reply

    async def _unary(self, handler, request, context, party: str | None = None):
        """A unary RPC of a party: its session, then ``handler(session, request)``."""
        status = party is not None
        party = request.party if party is None else party
        session = await self._session(request.session, context, party)
        async with self._caller(context, session, party, status):
            return await self._answer(context, session, lambda: handler(session, request))

    async def GetPeers(self, request, context):
        return await self._unary(handlers.peers, request, context)

    async def PostSealedKeys(self, request, context):
        return await self._unary(handlers.post_sealed, request, context)

    async def GetSealedKey(self, request, context):
        return await self._unary(handlers.sealed_key, request, context)

    async def GetStatus(self, request, context):
        return await self._unary(handlers.status, request, context, party="")

    async def _stream(self, handler, request, context):
        """A server-streaming RPC of a party: ``handler(session, request)`` makes the messages (or refuses before
        the first, which aborts the call)."""
        session = await self._session(request.session, context, request.party)
        async with self._caller(context, session, request.party):
            messages = await self._answer(context, session, lambda: handler(session, request))
            for message in messages:
                yield message

    async def GetResult(self, request, context):
        async for message in self._stream(handlers.result, request, context):
            yield message

    async def GetAlignment(self, request, context):
        async for message in self._stream(handlers.alignment, request, context):
            yield message

    async def GetLabels(self, request, context):
        async for message in self._stream(handlers.labels, request, context):
            yield message

    async def Confirm(self, request, context):
        return await self._unary(handlers.confirm, request, context)

    # -- client streams ---------------------------------------------------------------------------
    async def _first(self, request_iterator, context, kind: str, opening: Callable):
        """The stream's first message (coordinator.wire.openings), read within ``limits.first_message_seconds``
        and checked by ``opening``, and what ``opening`` returns of it; abort if it does not come or does not open
        the stream.

        A stream whose credentials prove no party is counted against the cap on anonymous streams until then."""
        anonymous = not await self._outsider(context)
        if anonymous:
            try:
                self.calls.enter_anonymous()
            except ResourceExhausted as exc:
                await self._abort(context, exc)
        try:
            first = await openings.first(self.streams, request_iterator, kind)
            return first, opening(first)
        except openings.Refused as exc:
            await self._abort(context, exc.text, exc.code)
        finally:
            if anonymous:
                self.calls.leave_anonymous()

    async def Upload(self, request_iterator, context):
        """``request_iterator`` yields each message decoded, as coordinator.messages.Received (see register)."""
        first, header = await self._first(request_iterator, context, "upload", openings.upload_header)
        session = await self._session(header.session, context, header.party)
        async with self._caller(context, session, header.party):
            try:
                reply = await self.streams.in_thread(session.spec.name, request_iterator,
                                                     lambda rest, cancel: handlers.upload(session, first, rest, cancel))
            except SessionError as exc:
                await self._abort(context, exc, grpc.StatusCode.INVALID_ARGUMENT)
        log.info("session %s: party %s uploaded %d bytes", header.session, header.party, reply.payload_bytes)
        return reply

    async def PostDistances(self, request_iterator, context):
        first, header = await self._first(request_iterator, context, "PostDistances", openings.distances_header)
        party = header.party
        session = await self._session(header.session, context, party)
        async with self._caller(context, session, party):
            await self._answer(context, session, lambda: handlers.ready_to_post(session, party))

            def take(rest, cancel):
                def messages():
                    yield first
                    yield from rest
                return handlers.post_distances(session, messages())

            try:
                return await self.streams.in_thread(session.spec.name, request_iterator, take)
            except SessionError as exc:
                await self._abort(context, exc, grpc.StatusCode.INVALID_ARGUMENT)

    async def Relay(self, request_iterator, context):
        """MPC traffic (coordinator.protocols.mpc): the party's frames forwarded to its peers, theirs written back to it.

        Authenticated, capped and held to the first-message deadline like the
        other streams; waits as a coroutine (the opening until every party's
        ids are joined, each frame for the party in an asyncio queue the hub
        fills), so a relay holds no thread while its link is quiet. A message
        is only counted and handed on, so it is taken in on the event loop,
        not in a stream thread. The idle limit runs once every MPC party's
        stream is open and restarts with every message the party sends or is
        sent (docs/protocol.md, "Limits"); past it the party is cut off and
        the session fails, naming it.
        """
        first, opened = await self._first(request_iterator, context, "Relay", openings.relay_open)
        party = opened.party
        session = await self._session(opened.session, context, party)
        async with self._caller(context, session, party):
            hub = await self._answer(context, session, lambda: handlers.relay_opening(session, first))
            call = RelayCall(request_iterator, session, hub, party, self.limits.idle_seconds,
                             take=lambda item: handlers.relay_in(session, hub, party, item),
                             give=lambda frame: handlers.relay_out(session, hub, party, frame))
            try:
                call.attach()
            except SessionError as exc:
                await self._abort(context, exc)
            try:
                async for message in call.frames():
                    yield message
                if call.problem is not None:
                    await context.abort(*call.problem)
                if session.state == FAILED:
                    await self._abort(context, f"session '{session.spec.name}' failed: {session.error}")
            finally:
                await call.close()
