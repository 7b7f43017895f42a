"""Reading the coordinator's client streams: each message as a coroutine within a deadline, uploads in threads.

The servicer (coordinator.servicer) hands a stream's request iterator here:
:meth:`Streams.next` waits for its next message on the server's event loop
(no thread per waiting stream) within a deadline timed by the coordinator's
clock; :meth:`Streams.in_thread` runs a handler that takes the rest of the
stream in one of ``limits.stream_threads`` threads, a session holding at
most ``limits.session_stream_threads`` of them, each message still read as a
coroutine and within ``limits.idle_seconds``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import grpc

from coordinator.clock import Clock, RealClock, Scheduled
from coordinator.limits import Limits
from coordinator.protocols.upload import BrokenStream
from coordinator.wire.table import Undecodable


def void(_value: object) -> None:
    """Drop a value (a callback's result no caller reads)."""


class Silent(Exception):
    """A stream sent nothing within its deadline."""


class Stopped(Exception):
    """A stream was cut off by its session."""


class Garbled(Exception):
    """A stream's message does not decode."""

    def __init__(self, item: Undecodable):
        super().__init__(item.explain())


class Streams:
    """The stream reading of one server: its threads, and each session's share of them."""

    def __init__(self, limits: Limits, clock: Clock):
        self.limits, self.clock = limits, clock
        self.pool = ThreadPoolExecutor(limits.stream_threads, thread_name_prefix="coordinator-stream")
        self._threads: dict[str, asyncio.Semaphore] = {}  # per session: its share of the stream threads

    async def next(self, request_iterator, seconds: float, stop: asyncio.Event | None = None):
        """The next message of ``request_iterator``, None at its end; Silent if none came within ``seconds``,
        Stopped if ``stop`` was set first, Garbled if it does not decode. Times by the coordinator's clock (a
        test's ManualClock, too)."""
        loop = asyncio.get_running_loop()
        read = asyncio.ensure_future(request_iterator.__anext__())
        read.add_done_callback(lambda t: t.cancelled() or t.exception())  # read even when nobody waits for it
        expired = asyncio.Event()
        timer: asyncio.TimerHandle | Scheduled
        if isinstance(self.clock, RealClock):  # the loop's own timer: no thread per stream
            timer = loop.call_later(seconds, expired.set)
        else:
            timer = self.clock.call_later(seconds, lambda: void(loop.call_soon_threadsafe(expired.set)))
        waits = {read, asyncio.ensure_future(expired.wait())}
        if stop is not None:
            waits.add(asyncio.ensure_future(stop.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            for w in waits - {read}:
                w.cancel()
            if not read.done():
                read.cancel()
        if read.done() and not read.cancelled():
            try:
                item = read.result()
            except StopAsyncIteration:
                return None
            if isinstance(item, Undecodable):
                raise Garbled(item)
            return item
        if stop is not None and stop.is_set():
            raise Stopped
        raise Silent

    async def in_thread(self, session: str, request_iterator, take: Callable):
        """``take(messages, cancel)`` in a stream thread, ``messages`` being the rest of the stream read here as
        coroutines (each within ``limits.idle_seconds``), ``cancel`` cutting it off. Session ``session`` holds
        at most ``limits.session_stream_threads`` threads; its other streams wait (as coroutines) for one."""
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        idle = self.limits.idle_seconds
        share = self._threads.setdefault(session, asyncio.Semaphore(self.limits.session_stream_threads))

        def messages():
            n = 1
            while True:
                future = asyncio.run_coroutine_threadsafe(self.next(request_iterator, idle, stop), loop)
                try:
                    item = future.result(timeout=idle + 5.0)  # bounded even if the loop stops under it
                except concurrent.futures.TimeoutError:
                    future.cancel()
                    raise BrokenStream(f"the server stopped while reading message {n + 1}") from None
                except Silent:
                    raise BrokenStream(f"no message for {idle:g} s after message {n} (the idle limit)") from None
                except Stopped:
                    # cut off by its session, or its caller cancelled (which stops the read first, racing gRPC)
                    raise BrokenStream(f"the stream was cancelled or cut off after message {n}") from None
                except Garbled as exc:
                    raise BrokenStream(f"message {n + 1} is {exc}") from None
                except (grpc.RpcError, asyncio.CancelledError, concurrent.futures.CancelledError):
                    raise BrokenStream(f"the stream was cancelled or cut off after message {n}") from None
                except Exception as exc:  # noqa: BLE001 - gRPC's own read errors
                    raise BrokenStream(f"message {n + 1} could not be read ({type(exc).__name__})") from None
                if item is None:
                    return
                n += 1
                yield item

        def cancel():
            loop.call_soon_threadsafe(stop.set)

        async with share:
            work = loop.run_in_executor(self.pool, take, messages(), cancel)
            try:
                return await asyncio.shield(work)
            except asyncio.CancelledError:  # the caller went away: cut the stream, let the thread finish
                stop.set()
                with contextlib.suppress(Exception):
                    await work
                raise
