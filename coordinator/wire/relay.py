"""One party's Relay stream (MPC traffic, coordinator.protocols.mpc), read and written as coroutines.

The servicer (coordinator.servicer) opens a :class:`RelayCall` once the
party's RelayOpen is accepted; the call attaches the party's outbox to the
session's hub, reads the party's frames (each handed to ``take``) and yields
the frames its peers send it (each encoded by ``give``). A relay so holds no
thread while its link is quiet. The idle limit runs once every MPC party's
stream is open and restarts with every message the party sends or is sent
(docs/protocol.md, "Limits"); past it, or when the stream breaks or a frame is
refused, the party is cut off and the session fails, naming it: ``problem``
then holds the status to end the call with.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from coordinator.errors import SessionError
from coordinator.protocols import mpc
from coordinator.session import DONE, FAILED, Session
from coordinator.text import clip
from coordinator.wire.statuses import status_of
from coordinator.wire.streams import void
from coordinator.wire.table import Undecodable

log = logging.getLogger("ppcsim.coordinator")


class RelayCall:
    """The reading and writing of one party's Relay call.

    ``take(item)`` takes in one decoded message of the party (SessionError
    refuses it); ``give(frame)`` encodes a frame for the party.
    """

    def __init__(self, request_iterator, session: Session, hub, party: str, idle: float,
                 take: Callable[[Any], None], give: Callable[[Any], Any]):
        self.request_iterator, self.session, self.hub, self.party, self.idle = \
            request_iterator, session, hub, party, idle
        self.take, self.give = take, give
        #: Why the call ends in error, as (status, text), once the party's stream was cut off.
        self.problem: tuple[grpc.StatusCode, str] | None = None
        self._out: asyncio.Queue = asyncio.Queue()
        self._reader: asyncio.Future | None = None

    def attach(self) -> None:
        """Open the party's stream on the hub, its frames delivered to this call (SessionError if refused)."""
        mpc.attach(self.session, self.hub, self.party, mpc.loop_outbox(asyncio.get_running_loop(), self._out))

    async def frames(self) -> AsyncIterator[Any]:
        """The party's frames to send, encoded, until its stream or the hub ends; reads the party's own
        messages meanwhile."""
        self._reader = asyncio.ensure_future(self._read())
        while True:
            frame = await self._out.get()
            if frame is None or self.hub.failed:
                return
            yield self.give(frame)

    async def close(self) -> None:
        """Once the call ends: a reader still running means the call ended first (cancelled by the party, or
        the session failed): stop it, and fail the session if the party had not ended its own messages."""
        reader = self._reader
        if reader is None or reader.done():
            return
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader
        if self.party not in self.hub.ended and self.session.state not in (DONE, FAILED):
            self.session.fail(f"party '{self.party}': its Relay stream was cancelled before it ended its own "
                              "messages; the MPC cannot go on without it")

    def _cut(self, code: grpc.StatusCode, text: str) -> None:
        if self.problem is None:
            self.problem = (code, text)

    async def _read(self) -> None:
        """Read the party's Relay messages as coroutines and hand them to ``take``; a broken, idle or refused
        stream fails the session (the MPC cannot go on without the party) with ``problem`` saying why.

        Each message costs one read and nothing else on the event loop, which every frame of the session
        crosses: the idle limit is kept by a watchdog that wakes once per idle period (``_watch``), and the
        session's failure cancels the reading, instead of every read waiting on a timer and an event."""
        session, hub, party = self.session, self.hub, self.party
        loop = asyncio.get_running_loop()
        reading = asyncio.current_task()
        assert reading is not None
        stopped = []

        def stop() -> None:
            stopped.append(True)
            reading.cancel()

        n = 1
        session.when_failed(lambda: void(loop.call_soon_threadsafe(stop)))
        watchdog = asyncio.ensure_future(self._watch(reading, lambda: n))
        try:
            while True:
                try:
                    item = await self.request_iterator.__anext__()
                except StopAsyncIteration:
                    break
                except asyncio.CancelledError:
                    if stopped:
                        return  # the session failed: nothing more to read or to end
                    if self.problem is not None:
                        break  # cut off by the watchdog (the idle limit)
                    raise  # the call ended first (close)
                except Exception as exc:  # noqa: BLE001 - the stream was cancelled or broke
                    self._cut(grpc.StatusCode.CANCELLED,
                              f"party '{party}': its Relay stream broke after message {n} ({type(exc).__name__})")
                    break
                n += 1
                if isinstance(item, Undecodable):
                    self._cut(grpc.StatusCode.INVALID_ARGUMENT, f"party '{party}': Relay message {n} is {item.explain()}")
                    break
                try:
                    self.take(item)
                except SessionError as exc:
                    self._cut(status_of(exc, grpc.StatusCode.INVALID_ARGUMENT), clip(str(exc)))
                    break
                except Exception as exc:  # noqa: BLE001 - a bug must fail the session with a message, not the stream
                    self._cut(grpc.StatusCode.INTERNAL, clip(f"party '{party}': Relay message {n} could not be taken "
                                                             f"in ({type(exc).__name__}: {exc})"))
                    break
        finally:
            watchdog.cancel()
        if self.problem is not None:
            log.warning("session %s: %s", session.spec.name, self.problem[1])
            session.fail(self.problem[1])
        try:
            hub.end(party)  # the last party's end makes the result
        except Exception as exc:  # noqa: BLE001 - a bug must still end the session, not leave it waiting
            session.fail(f"the MPC's result could not be made once party '{party}' ended its stream "
                         f"({type(exc).__name__}: {exc})")

    async def _watch(self, reading: asyncio.Task, count: Callable[[], int]) -> None:
        """The idle limit: once the party has neither sent nor been sent a message for ``idle`` seconds (counted
        once every MPC party's stream is open: before, the party waits for its peers), cut it off and stop the
        reading. Wakes once per idle period, or as the quiet time left says."""
        while True:
            quiet = self.hub.idle(self.party)
            if quiet >= self.idle:
                self._cut(grpc.StatusCode.DEADLINE_EXCEEDED,
                          f"party '{self.party}': no Relay message to or from it for {self.idle:g} s after message "
                          f"{count()} (the idle limit)")
                reading.cancel()
                return
            await asyncio.sleep(self.idle - quiet)
