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

import asyncio
import contextlib
import hashlib
import hmac
import logging
import threading
from collections.abc import Callable
from typing import NoReturn, TypeVar

import grpc

from coordinator import handlers
from coordinator.clock import REAL, Clock
from coordinator.errors import FailedPrecondition, InvalidArgument, PermissionDenied, ResourceExhausted, SessionError
from coordinator.gate import CHARGED
from coordinator.limits import Budget, Calls, Limits, physical_memory
from coordinator.logs import Quota
from coordinator.messages import UploadHeader
from coordinator.protocols import mpc
from coordinator.security import Refused, bearer_token, certificate_name, identify, peer_certificate, presented_name
from coordinator.session import DONE, FAILED, Session, SessionSpec
from coordinator.text import clip, shown
from coordinator.waits import PROBING, WouldWait
from coordinator.wire.streams import Garbled, Silent, Streams, void
from coordinator.wire.table import Undecodable
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


class Registry:
    """The sessions one coordinator serves, by name."""

    def __init__(self, clock: Clock | None = None, memory: int = 0) -> None:
        """``memory``: bytes all sessions together may hold (0: half this machine's memory)."""
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        #: The coordinator's memory budget, which every session's draws on (coordinator.limits).
        self.budget = Budget("the coordinator", memory or physical_memory() // 2)
        #: The clock of every session created here and of the servicer's header timeout (coordinator.clock).
        self.clock: Clock = clock if clock is not None else REAL

    def create(self, spec: SessionSpec) -> Session:
        with self._lock:
            if spec.name in self._sessions:
                raise SessionError(f"a session named '{spec.name}' exists already")
            session = self._sessions[spec.name] = Session(spec, self.clock, self.budget)
            return session

    def admits(self, token: str | None, common_name: str | None) -> bool:
        """Whether the credentials prove a party of some session here (a session's token, or a client
        certificate the TLS handshake verified); Refused (UNAUTHENTICATED) unless they could be a party's at all:
        a token is one of a session's, or some session takes calls without one."""
        with self._lock:
            sessions = list(self._sessions.values())
        if token is None and common_name is None and sessions and all(
                s.spec.tokens is not None or s.spec.mutual for s in sessions):
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "no token (authorization: Bearer ...)")
        if token is not None and all(s.spec.tokens is not None for s in sessions):
            digest = hashlib.sha256(token.encode()).hexdigest()
            if not any(hmac.compare_digest(d, digest) for s in sessions for d in (s.spec.tokens or {}).values()):
                raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the token is not valid for any session here")
        if common_name is not None:
            return True
        if token is None:
            return False
        digest = hashlib.sha256(token.encode()).hexdigest()
        return any(hmac.compare_digest(d, digest) for s in sessions for d in (s.spec.tokens or {}).values())

    def owners(self, digest: str) -> list[tuple[str, str]]:
        """The (session, party) pairs whose token has the SHA-256 hex ``digest`` (coordinator.gate)."""
        with self._lock:
            sessions = list(self._sessions.values())
        return [(s.spec.name, p) for s in sessions for p, d in (s.spec.tokens or {}).items()
                if hmac.compare_digest(d, digest)]

    def mutual(self, name: str) -> bool:
        """Whether the session called ``name`` is served under mutual TLS (False: no such session)."""
        with self._lock:
            session = self._sessions.get(name)
        return session is not None and session.spec.mutual

    def get(self, name: str) -> Session:
        with self._lock:
            try:
                return self._sessions[name]
            except KeyError:
                raise SessionError(f"no session named '{shown(name)}' on this coordinator") from None


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
        for kind, status in STATUSES:
            if isinstance(exc, kind):
                code = status
                break
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
        secure = context.auth_context().get("transport_security_type", [b""])[0] == b"ssl"
        session.protection[request.party] = {
            "transport": ("mutual TLS" if session.spec.mutual else "TLS") if secure else "plaintext (loopback)",
            "identity": " and ".join(
                [w for w, on in (("token", session.spec.tokens is not None), ("certificate", session.spec.mutual)) if on]
            ) or "none (claimed name only)",
        }
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
    async def _first(self, request_iterator, context, kind: str):
        """The stream's first message, within ``limits.first_message_seconds``; abort if none comes.

        A stream whose credentials prove no party is counted against the cap on anonymous streams until then."""
        anonymous = not await self._outsider(context)
        if anonymous:
            try:
                self.calls.enter_anonymous()
            except ResourceExhausted as exc:
                await self._abort(context, exc)
        try:
            first = await self.streams.next(request_iterator, self.limits.first_message_seconds)
        except Garbled as exc:
            await self._abort(context, f"{kind}: the first message is {exc}", grpc.StatusCode.INVALID_ARGUMENT)
        except Silent:
            refusals.warning("silent", "%s from %s: no first message within %g s; cut off", kind, context.peer(),
                        self.limits.first_message_seconds)
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"{kind}: no first message within {self.limits.first_message_seconds:g} s")
        finally:
            if anonymous:
                self.calls.leave_anonymous()
        return first

    async def Upload(self, request_iterator, context):
        """``request_iterator`` yields each message decoded, as coordinator.messages.Received (see register)."""
        first = await self._first(request_iterator, context, "upload")
        if first is None:
            await self._abort(context, "an upload starts with its header; the stream ended without any message",
                              grpc.StatusCode.INVALID_ARGUMENT)
        header = first.part
        if not isinstance(header, UploadHeader):
            part = {"IdPart": "ids", "Chunk": "chunk"}.get(type(header).__name__)
            await self._abort(context, f"an upload starts with its header; its first message carries "
                                       f"{part or 'nothing'}", grpc.StatusCode.INVALID_ARGUMENT)
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
        first = await self._first(request_iterator, context, "PostDistances")
        if first is None or first.WhichOneof("part") != "header":
            await self._abort(context, "PostDistances starts with its header", grpc.StatusCode.INVALID_ARGUMENT)
        party = first.header.party
        session = await self._session(first.header.session, context, party)
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
        first = await self._first(request_iterator, context, "Relay")
        if first is None or first.WhichOneof("part") != "open":
            await self._abort(context, "Relay starts with RelayOpen; the stream "
                                       + ("ended without any message" if first is None else
                                          f"began with {first.WhichOneof('part') or 'an empty message'}"),
                              grpc.StatusCode.INVALID_ARGUMENT)
        party = first.open.party
        session = await self._session(first.open.session, context, party)
        async with self._caller(context, session, party):
            hub = await self._answer(context, session, lambda: handlers.relay_opening(session, first))
            loop = asyncio.get_running_loop()
            out: asyncio.Queue = asyncio.Queue()
            try:
                mpc.attach(session, hub, party, mpc.loop_outbox(loop, out))
            except SessionError as exc:
                await self._abort(context, exc)
            problem: list[tuple[grpc.StatusCode, str]] = []
            reader = asyncio.ensure_future(self._relay_in(request_iterator, session, hub, party, problem))
            try:
                while True:
                    frame = await out.get()
                    if frame is None or hub.failed:
                        break
                    yield handlers.relay_out(session, hub, party, frame)
                if problem:
                    await context.abort(*problem[0])
                if session.state == FAILED:
                    await self._abort(context, f"session '{session.spec.name}' failed: {session.error}")
            finally:
                if not reader.done():  # the call ended first (cancelled by the party, or the session failed)
                    reader.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await reader
                    if party not in hub.ended and session.state not in (DONE, FAILED):
                        session.fail(f"party '{party}': its Relay stream was cancelled before it ended its own "
                                     "messages; the MPC cannot go on without it")

    async def _relay_in(self, request_iterator, session: Session, hub, party: str,
                        problem: list[tuple[grpc.StatusCode, str]]) -> None:
        """Read ``party``'s Relay messages as coroutines and hand them to the hub; a broken, idle or refused stream
        fails the session (the MPC cannot go on without the party) with ``problem`` saying why."""
        idle = self.limits.idle_seconds
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        session.when_failed(lambda: void(loop.call_soon_threadsafe(stopped.set)))
        stop = asyncio.ensure_future(stopped.wait())
        read: asyncio.Future | None = None
        n = 1
        try:
            while True:
                if read is None:
                    read = asyncio.ensure_future(request_iterator.__anext__())
                quiet = hub.idle(party)
                if quiet >= idle:
                    problem.append((grpc.StatusCode.DEADLINE_EXCEEDED,
                                    f"party '{party}': no Relay message to or from it for {idle:g} s after message "
                                    f"{n} (the idle limit)"))
                    break
                # before every stream is open the party waits for its peers: re-checked each idle period
                await asyncio.wait({read, stop}, timeout=idle - quiet, return_when=asyncio.FIRST_COMPLETED)
                if stop.done():
                    return
                if not read.done():
                    continue
                try:
                    item = read.result()
                except StopAsyncIteration:
                    break
                except Exception as exc:  # noqa: BLE001 - the stream was cancelled or broke
                    problem.append((grpc.StatusCode.CANCELLED,
                                    f"party '{party}': its Relay stream broke after message {n} "
                                    f"({type(exc).__name__})"))
                    break
                read = None
                n += 1
                if isinstance(item, Undecodable):
                    problem.append((grpc.StatusCode.INVALID_ARGUMENT,
                                    f"party '{party}': Relay message {n} is {item.explain()}"))
                    break
                try:
                    handlers.relay_in(session, hub, party, item)
                except SessionError as exc:
                    code = next((c for kind, c in STATUSES if isinstance(exc, kind)), grpc.StatusCode.INVALID_ARGUMENT)
                    problem.append((code, clip(str(exc))))
                    break
                except Exception as exc:  # noqa: BLE001 - a bug must fail the session with a message, not the stream
                    problem.append((grpc.StatusCode.INTERNAL, clip(f"party '{party}': Relay message {n} could not be "
                                                                   f"taken in ({type(exc).__name__}: {exc})")))
                    break
        finally:
            stop.cancel()
            if read is not None and not read.done():
                read.cancel()
        if problem:
            log.warning("session %s: %s", session.spec.name, problem[0][1])
            session.fail(problem[0][1])
        try:
            hub.end(party)  # the last party's end makes the result
        except Exception as exc:  # noqa: BLE001 - a bug must still end the session, not leave it waiting
            session.fail(f"the MPC's result could not be made once party '{party}' ended its stream "
                         f"({type(exc).__name__}: {exc})")


#: The gRPC status of each kind of SessionError (the first that matches).
STATUSES = (
    (InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (FailedPrecondition, grpc.StatusCode.FAILED_PRECONDITION),
    (ResourceExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
)
