"""A counting (and optionally shaping) TCP relay between one party and the coordinator.

The launcher puts one relay in front of the coordinator for each party. It
forwards the TCP stream untouched (TLS, HTTP/2 frames and headers included),
counts the bytes that really cross the connection in each direction, and can
impose a link's bandwidth and one-way latency, so a run shows what a
protocol's bytes cost on a slower network.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field

READ_BYTES = 1 << 18


@dataclass(frozen=True)
class Link:
    """A network link: bandwidth in Mbit/s (None: unlimited) and one-way latency in milliseconds."""

    bandwidth_mbit: float | None = None
    latency_ms: float = 0.0

    @property
    def shaped(self) -> bool:
        return self.bandwidth_mbit is not None or self.latency_ms > 0

    def describe(self) -> str:
        if not self.shaped:
            return "loopback, unshaped"
        rate = f"{self.bandwidth_mbit:g} Mbit/s" if self.bandwidth_mbit is not None else "unlimited bandwidth"
        return f"{rate}, {self.latency_ms:g} ms one way"


@dataclass
class Direction:
    """Bytes relayed one way."""

    bytes: int = 0


@dataclass
class Counts:
    up: Direction = field(default_factory=Direction)  # party -> coordinator
    down: Direction = field(default_factory=Direction)  # coordinator -> party
    connections: int = 0


async def _pump(reader, writer, link: Link, count: Direction) -> None:
    """Copy reader to writer; each chunk leaves after its transmission time at the link's rate, plus latency."""
    rate = link.bandwidth_mbit * 1e6 / 8 if link.bandwidth_mbit else None
    queue: asyncio.Queue = asyncio.Queue()
    loop = asyncio.get_running_loop()

    async def deliver():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            writer.write(data)
            await writer.drain()
            count.bytes += len(data)
        writer.close()

    sender = asyncio.create_task(deliver())
    line_free = loop.time()
    try:
        while data := await reader.read(READ_BYTES):
            now = loop.time()
            if rate:
                line_free = max(line_free, now) + len(data) / rate
                await queue.put((line_free + link.latency_ms / 1000, data))
            else:
                await queue.put((now + link.latency_ms / 1000, data))
            if rate and queue.qsize() > 64:  # back-pressure: do not read far ahead of the line
                await asyncio.sleep(len(data) / rate)
    except (ConnectionError, OSError):
        pass
    await queue.put((0.0, None))
    await sender


class Relay:
    """Listens on 127.0.0.1 and relays every connection to ``target`` (HOST:PORT), counting bytes."""

    def __init__(self, target: str, link: Link = Link()):
        self.target_host, port = target.rsplit(":", 1)
        self.target_port = int(port)
        self.link = link
        self.counts = Counts()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="relay", daemon=True)

    def start(self) -> "Relay":
        self._thread.start()
        self._ready.wait(10)
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()
        server.close()
        pending = asyncio.all_tasks(self._loop)
        for task in pending:
            task.cancel()
        self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.close()

    async def _handle(self, reader, writer) -> None:
        self.counts.connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            _pump(reader, up_writer, self.link, self.counts.up),
            _pump(up_reader, writer, self.link, self.counts.down),
        )

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
