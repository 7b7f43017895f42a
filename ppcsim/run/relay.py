"""A counting (and optionally shaping) TCP relay between one party and the coordinator.

The launcher puts one relay in front of the coordinator for each party. It
forwards the TCP stream untouched (TLS, HTTP/2 frames and headers included),
counts the bytes that really cross the connection in each direction, and can
impose a link's bandwidth and one-way latency, so a run shows what a
protocol's bytes cost on a slower network.

Each direction of a connection is one thread. An unshaped link moves bytes
with splice(2) through a pipe, inside the kernel; a shaped link reads each
chunk, holds it for its transmission time and latency, and writes it on.

``ppc run`` starts all of its relays in one child process of their own
(RelayProcess, ``python -m ppcsim.run.relay``), not in the coordinator's:
every splice call returns to Python, and in an MPC, where thousands of small
frames cross in sequence, waiting for the coordinator's interpreter lock at
each return delayed every frame. The child reports each relay's port when it
listens and each relay's counts when told to stop, and exits by itself when
its standard input ends (the launcher is gone). ``Relay`` alone runs its
threads in the calling process.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ppcsim.errors import RunError
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


#: Seconds the relay process gets to stop its relays and report their counts before it is killed.
STOP_SECONDS = 60.0


@dataclass
class ProcessRelay:
    """One party's relay in a RelayProcess, as the launcher and the report read it (``address``, ``port``,
    ``link``, ``counts``); its counts are filled in when the process stops (``RelayProcess.stop``)."""

    link: Link
    host: str
    port: int
    counts: Counts = field(default_factory=Counts)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


class RelayProcess:
    """The relays of one run, one per party, in one child process of their own (``python -m ppcsim.run.relay``).

    Parameters
    ----------
    target : str
        The coordinator's HOST:PORT, which every relay dials.
    links : mapping of str to Link
        Each party's link, by party name.
    host : str
        Where the relays listen (127.0.0.1 unless parties run on other hosts).
    """

    def __init__(self, target: str, links: Mapping[str, Link], host: str = "127.0.0.1"):
        self.target, self.links, self.host = target, dict(links), host
        self.relays: dict[str, ProcessRelay] = {}
        self.proc: subprocess.Popen | None = None
        #: Why the relay process failed (it died, or its counts never came), once it has; None while it is well.
        self.error: str | None = None
        self._stderr = tempfile.TemporaryFile()
        self._stopped = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> RelayProcess:
        """Start the process and wait until every relay listens; RunError if it cannot."""
        spec = {"target": self.target, "host": self.host,
                "links": [[link.bandwidth_mbit, link.latency_ms] for link in self.links.values()]}
        self.proc = subprocess.Popen([sys.executable, "-m", "ppcsim.run.relay", json.dumps(spec)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0)
        assert self.proc.stdout is not None  # stdout=PIPE
        line = self.proc.stdout.readline()  # unbuffered: reads this line and no further
        try:
            ports = json.loads(line)["ports"]
        except (ValueError, KeyError, TypeError):
            self._reap()
            error = self._died("before its relays listened")
            self._stderr.close()
            raise RunError(error) from None
        self.relays = {name: ProcessRelay(link, self.host, port)
                       for (name, link), port in zip(self.links.items(), ports)}
        return self

    def check(self) -> str | None:
        """Why the relays are gone if their process died while the run needs them, else None."""
        if self.proc is None or self._stopped or self.proc.poll() is None:
            return None
        return self._died("while the parties were connected through it")

    def stop(self) -> None:
        """Stop every relay, read their counts, and reap the process (killed if it does not answer); once."""
        if self._stopped or self.proc is None:
            return
        self._stopped = True
        proc, counts = self.proc, None
        if proc.poll() is None:
            try:
                out, _ = proc.communicate(b"stop\n", timeout=STOP_SECONDS)
                counts = json.loads(out.splitlines()[-1])["counts"]
            except subprocess.TimeoutExpired:
                self.error = (f"the relay process (pid {proc.pid}) did not report its byte counts within "
                              f"{STOP_SECONDS:g} s of being told to stop")
            except (ValueError, KeyError, IndexError):
                self.error = self._died("before it reported its byte counts")
        else:
            self.error = self._died("before the run ended")
        self._reap()
        self._stderr.close()
        if counts is not None:
            for relay, (up, down, connections) in zip(self.relays.values(), counts):
                relay.counts.up.bytes, relay.counts.down.bytes, relay.counts.connections = up, down, connections

    def _reap(self) -> None:
        proc = self.proc
        assert proc is not None
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    def _died(self, when: str) -> str:
        """The relay process's end in words: its pid, when, its exit code or signal, and its last line."""
        proc = self.proc
        assert proc is not None
        code = proc.poll()
        how = ("is still running" if code is None else f"was killed by signal {-code}" if code < 0
               else f"exited with code {code}")
        self._stderr.seek(0)
        lines = [line.strip() for line in self._stderr.read().decode(errors="replace").splitlines() if line.strip()]
        return f"the relay process (pid {proc.pid}) {how} {when}" + (f": {lines[-1]}" if lines else "")


def serve(spec: dict) -> int:
    """The relay process: start a Relay per link of ``spec`` (``target``, ``host``, ``links`` as [bandwidth,
    latency] pairs), print their ports as one JSON line, and when a line ``stop`` or the end of standard input
    comes, stop them and print their counts (up, down, connections) as one JSON line."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in ppc run: the launcher stops this process itself
    try:
        relays = [Relay(spec["target"], Link(bandwidth, latency), spec["host"]).start()
                  for bandwidth, latency in spec["links"]]
    except OSError as e:
        print(f"relay process: cannot listen on {spec['host']} or relay to {spec['target']}: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"ports": [relay.port for relay in relays]}), flush=True)
    while (line := sys.stdin.readline()) and line.strip() != "stop":
        pass  # the end of the input means the launcher is gone: stop all the same
    for relay in relays:
        relay.stop()
    counts = [[r.counts.up.bytes, r.counts.down.bytes, r.counts.connections] for r in relays]
    try:
        print(json.dumps({"counts": counts}), flush=True)
    except OSError:
        pass  # nobody is left to read them
    return 0


if __name__ == "__main__":
    sys.exit(serve(json.loads(sys.argv[1])))
