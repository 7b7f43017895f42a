"""Start and stop the coordinator's gRPC server: gRPC's asyncio server, on an event loop of its own thread."""

from __future__ import annotations

import asyncio
import atexit
import errno
import os
import sys
import threading

import grpc

from coordinator.errors import SessionError
from coordinator.gate import Gate
from coordinator.limits import Limits
from coordinator.malloc import M_ARENA_MAX, mallopt
from coordinator.registry import Registry
from coordinator.security import ServerSecurity, is_loopback
from coordinator.servicer import CoordinatorServicer
from coordinator.wire.table import register
from protos.serde import CHUNK_BYTES

#: HTTP/2 flow control of what the coordinator receives: each stream's window fixed at one chunk
#: (``CHUNK_BYTES``), where gRPC's bandwidth-delay probing grows it without a bound the coordinator sets. With
#: the probing, the bytes the transport held ahead of a slower reader raised the peak of a 1e6-record DRBT run
#: (4 parties) from about 670 MiB to 750-920 MiB, and 32 OSBR parties' by about 4 MiB each; a window of one
#: chunk per stream keeps what is in flight per party near one message (``bench/e2e_drbt.py``,
#: ``bench/osbr_memory.py --parties``).
FLOW_CONTROL = [("grpc.http2.bdp_probe", 0), ("grpc.http2.lookahead_bytes", CHUNK_BYTES)]


#: glibc malloc arenas the coordinator's process may use. glibc gives every thread that allocates an arena of its
#: own, up to eight per core, and an arena keeps what its thread freed for that thread to reuse: upload streams taken
#: in by many threads (and gRPC's own) left about 2 MiB a party in arenas that held freed memory. With two,
#: ``bench/osbr_memory.py --parties 4 32`` (OSBR, 5,000 records, two columns a party) measured the coordinator's
#: peak at 32 parties 375 MiB against 422 MiB with glibc's default; one arena gave 364 MiB but makes every thread
#: wait on one lock.
MALLOC_ARENAS = 2


def bound_malloc_arenas(arenas: int = MALLOC_ARENAS) -> int | None:
    """Cap this process's glibc malloc arenas at ``arenas`` (mallopt ``M_ARENA_MAX``), for the threads it starts
    from now on; the cap set, or None where it was not set: not Linux with glibc, or the user chose one already
    (``MALLOC_ARENA_MAX`` or ``GLIBC_TUNABLES`` naming ``glibc.malloc.arena_max``, which glibc read at the
    process's start and which are left as they are).

    ``start_server`` calls it, so that ``ppc coordinator`` and the coordinator ``ppc run`` hosts are alike.
    """
    if not sys.platform.startswith("linux") or "MALLOC_ARENA_MAX" in os.environ \
            or "glibc.malloc.arena_max" in os.environ.get("GLIBC_TUNABLES", ""):
        return None
    return arenas if mallopt(M_ARENA_MAX, arenas) else None


#: Set as the interpreter exits, when gRPC closes its sockets under every server still running.
EXITING = threading.Event()
atexit.register(EXITING.set)


def quiet_once_stopping(stopping: threading.Event):
    """An event loop's exception handler that drops the one error gRPC's asyncio layer can leave as its server
    stops (``stopping``) or the process exits (``EXITING``): its completion queue's poller woken on a socket
    already closed (an OSError, "Bad file descriptor", from ``PollerCompletionQueue._handle_events``), which
    asyncio would print as a traceback though nothing is lost. Every other error, and this one while serving,
    goes to the loop's default handler."""

    def handle(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        error = context.get("exception")
        ending = stopping.is_set() or EXITING.is_set()
        if ending and isinstance(error, OSError) and error.errno == errno.EBADF:
            return
        loop.default_exception_handler(context)

    return handle


class Server:
    """A running coordinator server; ``stop`` and ``wait_for_termination`` may be called from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, server: grpc.aio.Server, thread: threading.Thread,
                 servicer: CoordinatorServicer):
        self._loop, self._server, self._thread, self.servicer = loop, server, thread, servicer
        self._stopped = threading.Event()
        self._stopping = threading.Event()
        loop.set_exception_handler(quiet_once_stopping(self._stopping))

    def stop(self, grace: float | None = None) -> threading.Event:
        """Stop serving (calls in flight get ``grace`` seconds to finish); the Event is set once stopped."""
        self._stopping.set()
        if self._stopped.is_set() or not self._thread.is_alive():
            self._stopped.set()
            return self._stopped

        async def stop() -> None:
            try:
                await self._server.stop(grace)
            finally:
                self._loop.call_soon(self._loop.stop)

        def done(_future) -> None:
            self.servicer.pool.shutdown(wait=False, cancel_futures=True)
            self._stopped.set()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).add_done_callback(done)
        return self._stopped

    def wait_for_termination(self, timeout: float | None = None) -> bool:
        return self._stopped.wait(timeout)


def start_server(
    listen: str, registry: Registry, *, security: ServerSecurity = ServerSecurity(), limits: Limits | None = None
) -> tuple[Server, int]:
    """Serve ``registry`` on ``listen`` (HOST:PORT; port 0 picks a free one); returns (server, port).

    Plaintext is served on loopback addresses only. Raises SessionError naming
    the address when it cannot be bound (e.g. the port is in use).
    """
    if not security.tls and not is_loopback(listen):
        raise SessionError(f"cannot listen on {listen} in plaintext: plaintext is served on loopback only; "
                           "turn on [security] tls and pass --credentials")
    bound_malloc_arenas()  # before the server's threads start: each takes an arena at its first allocation
    servicer = CoordinatorServicer(registry, limits)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="coordinator", daemon=True)
    thread.start()

    async def build() -> tuple[grpc.aio.Server, int]:
        gate = Gate(servicer.calls, registry.owners, registry.mutual)
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0), *FLOW_CONTROL], interceptors=[gate],
                                 maximum_concurrent_rpcs=servicer.limits.grpc_calls)
        register(servicer, server)
        try:
            port = server.add_secure_port(listen, security.credentials()) if security.tls \
                else server.add_insecure_port(listen)
        except RuntimeError:
            port = 0
        if port:
            await server.start()
        return server, port

    server, port = asyncio.run_coroutine_threadsafe(build(), loop).result()
    if port == 0:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        raise SessionError(f"cannot listen on {listen}: the address is in use or not valid")
    return Server(loop, server, thread, servicer), port
