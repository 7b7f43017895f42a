"""A counting (and optionally shaping) TCP relay between one party and the coordinator.

The launcher puts one relay in front of the coordinator for each party. It
forwards the TCP stream untouched (TLS, HTTP/2 frames and headers included),
counts the bytes that really cross the connection in each direction, and can
impose a link's bandwidth and one-way latency, so a run shows what a
protocol's bytes cost on a slower network.

Each direction of a connection is one thread. An unshaped link moves bytes
with splice(2) through a pipe, inside the kernel, so relaying costs the
coordinator's process (where the launcher runs the relays) almost no CPU and
never its interpreter lock; a shaped link reads each chunk, holds it for its
transmission time and latency, and writes it on.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
import time
from dataclasses import dataclass, field

from ppcsim.scenario.network import Link

READ_BYTES = 1 << 18
#: Chunks a shaped link holds in flight before it stops reading (back-pressure).
IN_FLIGHT = 64


@dataclass
class Direction:
    """Bytes relayed one way."""

    bytes: int = 0


@dataclass
class Counts:
    up: Direction = field(default_factory=Direction)  # party -> coordinator
    down: Direction = field(default_factory=Direction)  # coordinator -> party
    connections: int = 0


def _splice(src: socket.socket, dst: socket.socket, count: Direction) -> bool:
    """Move src's bytes to dst inside the kernel until src ends; False if this system cannot splice sockets."""
    if not hasattr(os, "splice"):  # Linux only: elsewhere the relay copies
        return False
    import fcntl

    r, w = os.pipe()
    try:
        try:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass  # the default pipe size (64 KiB) works, in more calls
        first = True
        while True:
            try:
                n = os.splice(src.fileno(), w, 1 << 20)
            except OSError:
                if first:
                    return False
                raise
            first = False
            if n == 0:
                return True
            while n:
                moved = os.splice(r, dst.fileno(), n)
                count.bytes += moved
                n -= moved
    finally:
        os.close(r)
        os.close(w)


def _copy(src: socket.socket, dst: socket.socket, link: Link, count: Direction) -> None:
    """Copy src to dst through this process; on a shaped link each chunk leaves after its transmission time
    at the link's rate, plus latency."""
    rate = link.bandwidth_mbit * 1e6 / 8 if link.bandwidth_mbit else None
    line: queue.Queue = queue.Queue(IN_FLIGHT)

    def deliver():
        broken = False
        while (item := line.get())[1] is not None:
            due, data = item
            if broken:
                continue  # drain, so that the reader never waits on a full line
            if (delay := due - time.monotonic()) > 0:
                time.sleep(delay)
            try:
                dst.sendall(data)
                count.bytes += len(data)
            except OSError:  # the receiving side went away: stop reading too
                broken = True
                try:
                    src.shutdown(socket.SHUT_RD)
                except OSError:
                    pass

    sender = threading.Thread(target=deliver, name="relay-line", daemon=True)
    sender.start()
    line_free = time.monotonic()
    try:
        while data := src.recv(READ_BYTES):
            now = time.monotonic()
            line_free = max(line_free, now) + len(data) / rate if rate else now
            line.put((line_free + link.latency_ms / 1000, data))
    finally:
        line.put((0.0, None))
        sender.join()


def _pump(src: socket.socket, dst: socket.socket, link: Link, count: Direction) -> None:
    """Relay one direction of a connection until it ends, then pass the end on."""
    try:
        if link.shaped or not _splice(src, dst, count):
            _copy(src, dst, link, count)
    except OSError:
        pass  # either side went away: the other is told below
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class Relay:
    """Listens on ``host`` (127.0.0.1 unless parties run on other hosts) and relays every connection to
    ``target`` (HOST:PORT), counting bytes."""

    def __init__(self, target: str, link: Link = Link(), host: str = "127.0.0.1"):
        self.target_host, port = target.rsplit(":", 1)
        self.target_port = int(port)
        self.link = link
        self.counts = Counts()
        self.host = host
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._accept, name="relay", daemon=True)

    def start(self) -> Relay:
        self._thread.start()
        return self

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                party, _ = self._listener.accept()
            except OSError:
                return  # stopped
            self.counts.connections += 1
            try:
                coordinator = socket.create_connection((self.target_host, self.target_port))
            except OSError:
                party.close()
                continue
            for sock in (party, coordinator):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sockets += [party, coordinator]
            for src, dst, count in ((party, coordinator, self.counts.up), (coordinator, party, self.counts.down)):
                thread = threading.Thread(target=_pump, args=(src, dst, self.link, count), name="relay-pump",
                                          daemon=True)
                thread.start()
                self._threads.append(thread)

    def stop(self) -> None:
        """Stop listening, end the connections still open, and wait for their counts to settle."""
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone would not)
        except OSError:
            pass
        self._listener.close()
        self._thread.join(5)
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(5)
        for sock in self._sockets:
            sock.close()
