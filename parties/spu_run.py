"""A party's side of MPC k-means on SPU: the SPU program in its own environment, its links through the coordinator.

SPU's links (yacl's brpc transport) work differently from MPyC's: every
share-holder listens on one address of its own, and to send to a peer it
dials that peer's address, so there is one connection per *ordered* pair of
share-holders (two per pair), each carrying requests one way and the peer's
acknowledgements back. Parties across organisations reach only the
coordinator, so each party process gives its SPU program

- its own listening port on 127.0.0.1 (``own``), which the tunnel dials when
  a peer's program first sends to it;
- for every peer j, a listening port T_j on 127.0.0.1 as j's address, which
  its program dials to send to j.

Both connections of a pair are carried, sealed, on the party's ``Relay``
stream, with the pair's key and nonces (parties.mpc.PairCipher: one counter
per direction, so the two connections share it and no nonce repeats). The
first byte of every frame's plaintext says which of the pair's two
connections it belongs to: 0 for the one the *sender's* program dialled, 1
for the one the receiver's program dialled; a frame of that byte alone says
the sender's end of that connection closed. The coordinator sees which
party sends to which, as for MPyC, but not which connection a frame is on.

SPU's links speak brpc (its baidu_std protocol): every message is a call
that the receiving runtime answers on the same connection. Each tunnel
answers its own program's calls itself, as soon as it has read one
(``parties.brpc.brpc_answer``: "received", the answer the peer's runtime gives to every
message), and drops its program's answers to its peers' calls: the answers
never cross the relay, and a frame on connection 1 carries only its close.
The relay delivers every frame once and in order, or the MPC fails, so an
answer from the far end would say nothing more; on the relay's latency it
would cost every message a second frame.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from parties.brpc import BrpcCalls, brpc_answer
from parties.errors import PartyError
from parties.keys import KeyPair
from parties.mpc import READ_BYTES, MpcResult, PairCipher, RelayEnd, program_input, start_program, watch_program
from parties.serde import AlignmentHeader, RelayResult
from parties.spu_env import interpreter
from parties.spu_env import problem as spu_problem

#: The program each share-holder runs, started by path with the SPU environment's interpreter: the full k-means.
PROGRAM = Path(__file__).with_name("spu_kmeans.py")
#: Secure aggregation's labels-only argmin on SPU (parties.secagg_labels).
ARGMIN = Path(__file__).with_name("spu_argmin.py")
#: The first plaintext byte of a frame: on the connection its sender dialled, or the one its receiver dialled.
DIALLED_BY_SENDER, DIALLED_BY_RECEIVER = 0, 1


class WakingQueue(queue.Queue):
    """The tunnel's queue of what goes up besides the links' bytes (marks, the result, the end): each ``put``
    also wakes the thread that reads the links (``SpuTunnel.requests``), which waits on the sockets."""

    def __init__(self, wake: socket.socket):
        super().__init__()
        self.wake = wake

    def put(self, item, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        try:
            self.wake.send(b"\0")
        except OSError:
            pass  # the tunnel is closed: nobody reads any more


@dataclass
class SpuTunnel(RelayEnd):
    """One party's end of every SPU link: two local sockets per peer <-> sealed frames on the Relay stream.

    Each byte crosses as few threads as the stream allows, since SPU's messages follow each other in sequence
    (about 2,000 a run) and every hand-over between threads costs a wake-up on a busy machine: what the program
    writes is read, sealed and handed to the stream by the thread that feeds the stream (``requests`` waits on
    all the links' sockets at once), and what a peer sends is opened and written to the program's socket by the
    thread that reads the stream (``deliver``). Only accepting and opening the connections have threads of their
    own."""

    me: str
    order: list[str]
    ciphers: dict[str, PairCipher]
    deadline: float
    errors: list[str] = field(default_factory=list)
    round: int = -1
    #: Per round, the times this party's program began sending after it had received (chunks, not messages:
    #: brpc's framing is not parsed), the messages in sequence on its path.
    turns: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.peers = [p for p in self.order if p != self.me]
        self.listeners: dict[str, socket.socket] = {}
        for peer in self.peers:
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(4)
            self.listeners[peer] = server
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.own_port = s.getsockname()[1]
        self._woken, self._waker = socket.socketpair()
        self.outgoing: queue.Queue = WakingQueue(self._waker)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self._woken, selectors.EVENT_READ, None)
        #: Per (peer, the number frames *from* the peer carry for it), the connection once open, and what arrived
        #: for it before (b"": the peer's end closed).
        self.conns: dict[tuple[str, int], socket.socket] = {}
        self.pending: dict[tuple[str, int], list[bytes]] = {(p, c): [] for p in self.peers
                                                            for c in (DIALLED_BY_SENDER, DIALLED_BY_RECEIVER)}
        self.conn_lock = threading.Lock()
        self.inbound: dict = {}  # RelayEnd's per-link queues: this tunnel writes to the sockets directly
        self.threads: list[threading.Thread] = []
        self.open_links = 0  # connections registered and not yet closed by our program
        self.links_closed = threading.Condition()
        self.waited = True
        self.count_lock = threading.Lock()
        self.first_frame = self.last_frame = 0.0  # wall-clock times a peer's frame arrived first and last

    def close(self) -> None:
        """Close the listening ports (and the rest) of a tunnel that will not be started."""
        for server in self.listeners.values():
            server.close()
        self._close_all()

    def addresses(self) -> list[str]:
        """The program's ``--party`` list: its own listening address, each peer at the tunnel's port for it."""
        return [f"127.0.0.1:{self.own_port if p == self.me else self.listeners[p].getsockname()[1]}"
                for p in self.order]

    def start(self) -> None:
        for peer in self.peers:
            self._thread(self._dialled, peer, name=f"spu-accept-{peer}")

    def wait_closed(self, seconds: float) -> None:
        """Wait (at most ``seconds``) until our program has closed every connection it had and their ends were
        sent, so that nothing of it follows the result up the stream."""
        end = time.monotonic() + seconds
        with self.links_closed:
            while self.open_links and time.monotonic() < end:
                self.links_closed.wait(max(end - time.monotonic(), 0.01))

    def _open(self, key: tuple[str, int], conn: socket.socket) -> None:
        """Register a connection: write what arrived for it, then let ``deliver`` write to it and ``requests``
        read it (its frames marked with the number the peer knows it by)."""
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        peer, theirs = key
        mine = DIALLED_BY_RECEIVER if theirs == DIALLED_BY_SENDER else DIALLED_BY_SENDER
        with self.conn_lock:
            try:
                for data in self.pending.pop(key):
                    self._write(key, conn, data)
            except OSError as exc:
                self.errors.append(f"the link with '{peer}': {exc}")
            self.conns[key] = conn
        with self.links_closed:
            self.open_links += 1
        try:
            # our program's calls on the connection it dialled are answered here (the module's docstring)
            calls = BrpcCalls() if mine == DIALLED_BY_SENDER else None
            self.selector.register(conn, selectors.EVENT_READ, (peer, mine, calls))
            self._waker.send(b"\0")  # the reading thread waits on the sockets it had: it now has one more
        except (OSError, ValueError, RuntimeError):  # the stream has ended: nothing reads any more
            with self.links_closed:
                self.open_links -= 1
                self.links_closed.notify_all()

    def _write(self, key: tuple[str, int], conn: socket.socket, data: bytes) -> None:
        if data:
            conn.sendall(data)
        else:  # the peer's program closed its end: so does ours
            try:
                conn.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def _dialled(self, peer: str) -> None:
        """The connection our program dials to send to ``peer``: accepted at the tunnel's port for the peer."""
        server = self.listeners[peer]
        try:
            server.settimeout(max(self.deadline - time.monotonic(), 0.1))
            conn, _ = server.accept()
            server.close()
        except OSError as exc:
            self.errors.append(f"the link to '{peer}': our SPU program never connected ({exc})")
            return
        conn.settimeout(None)
        self._open((peer, DIALLED_BY_RECEIVER), conn)

    def _answered(self, peer: str) -> None:
        """The connection ``peer``'s program dialled: opened to our program's own port at its first frame."""
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", self.own_port), timeout=5)
                break
            except OSError as exc:
                if time.monotonic() > self.deadline:
                    self.errors.append(f"the link from '{peer}': our SPU program does not listen ({exc})")
                    return
                time.sleep(0.01)
        conn.settimeout(None)
        self._open((peer, DIALLED_BY_SENDER), conn)

    def requests(self):
        """What goes up the Relay stream: what the program writes on any connection, read as it comes and
        sealed here (the frame's number is its place on the stream), and what is put on ``outgoing``; once it
        ends, the tunnel's own waking sockets are closed."""
        try:
            yield from self._requests()
        finally:
            self._close_all()

    def _close_all(self) -> None:
        self.selector.close()
        self._woken.close()
        self._waker.close()
        with self.conn_lock:
            for conn in self.conns.values():
                conn.close()

    def _requests(self):
        while True:
            try:
                while True:
                    message = self.outgoing.get_nowait()
                    if message is None:
                        return
                    yield message
            except queue.Empty:
                pass
            for selected, _ in self.selector.select():
                if selected.data is None:
                    self._woken.recv(4096)
                    continue
                peer, mine, calls = selected.data
                conn = selected.fileobj
                try:
                    data = conn.recv(READ_BYTES)  # type: ignore[union-attr]
                except OSError as exc:
                    self.errors.append(f"the link with '{peer}': {exc}")
                    data = b""
                answers: list[int] = []
                if data:
                    if calls is None:
                        continue  # our program's answers to the peer's calls: the peer's tunnel gave them
                    try:
                        answers = calls.feed(data)
                    except ValueError as exc:
                        self.errors.append(f"the link to '{peer}': our SPU program sent what is not brpc's baidu_std "
                                           f"({exc})")
                        data = b""
                if data:
                    with self.count_lock:
                        if self.waited:
                            self.turns[self.round] = self.turns.get(self.round, 0) + 1
                            self.waited = False
                else:
                    self.selector.unregister(conn)
                yield self.ciphers[peer].seal(bytes([mine]) + data)
                if answers:  # after the call is on its way: our program needs the answer only to free the call
                    try:
                        conn.sendall(b"".join(brpc_answer(call) for call in answers))  # type: ignore[union-attr]
                    except OSError as exc:
                        self.errors.append(f"the link to '{peer}': {exc}")
                if not data:
                    with self.links_closed:
                        self.open_links -= 1
                        self.links_closed.notify_all()

    def deliver(self, frame, data: bytes) -> None:
        now = time.time()
        self.first_frame = self.first_frame or now
        self.last_frame = now
        if not data or data[0] not in (DIALLED_BY_SENDER, DIALLED_BY_RECEIVER):
            raise PartyError(f"frame {frame.seq} from '{frame.peer}' names no connection of the pair")
        if len(data) > 1:
            if data[0] == DIALLED_BY_RECEIVER:
                raise PartyError(f"frame {frame.seq} from '{frame.peer}' carries its program's answer to a call of "
                                 "ours: each tunnel answers its own program's calls, and answers never cross")
            with self.count_lock:
                self.waited = True
        key = (frame.peer, data[0])
        with self.conn_lock:
            conn = self.conns.get(key)
            if conn is None:
                waiting = self.pending[key]
                if not waiting and data[0] == DIALLED_BY_SENDER:  # the peer's program dialled ours: connect
                    self._thread(self._answered, frame.peer, name=f"spu-connect-{frame.peer}")
                waiting.append(data[1:])
                return
        try:
            self._write(key, conn, data[1:])
        except OSError as exc:
            self.errors.append(f"the link with '{frame.peer}': {exc}")

    def receive(self, responses) -> None:
        """``RelayEnd.receive``, then every connection told the relay ended."""
        super().receive(responses)
        with self.conn_lock:
            for conn in self.conns.values():
                try:
                    conn.shutdown(socket.SHUT_WR)
                except OSError:
                    pass


#: Set to 1 (``PPC_SPU_TRACE=1``), the party writes to its log when each step of its SPU engine ends, wall-clock
#: seconds since the epoch: "spu trace PARTY STEP SECONDS" (program spawned, tunnel up, first and last frame
#: relayed, result read) and its program's own steps (parties/spu_kmeans.py's ``trace``), so that a run's time
#: can be split (bench/mpc_engines.py --trace); last "spu trace PARTY cpu party SECONDS program SECONDS", the CPU
#: time of the party's process and of its program.
TRACE_VARIABLE = "PPC_SPU_TRACE"


def tracing() -> bool:
    """Whether ``PPC_SPU_TRACE`` asks for the steps' times."""
    return os.environ.get(TRACE_VARIABLE, "") == "1"


def trace(log, me: str, step: str, at: float | None = None) -> None:
    """Write "spu trace ME STEP SECONDS" to ``log`` if tracing (``at``: the step's wall-clock time, else now)."""
    if tracing():
        print(f"spu trace {me} {step} {time.time() if at is None else at:.4f}", file=log, flush=True)


def refuse_unless_ready(link, header: AlignmentHeader) -> None:
    """For an SPU session: tell the coordinator (``link.refuse``, which fails the session naming this party) and
    raise PartyError if SPU cannot run here, before any share exists; nothing for an MPyC session."""
    if header.mpc_engine != "spu":
        return
    problem = spu_problem()
    if problem:
        link.refuse(f"engine \"spu\": {problem}")
        raise PartyError(f"the session runs its MPC on SPU, but {problem}")


def program_command(data: Path, result: Path, rank: int, addresses: list[str], link_id: str,
                    seconds: float, program: Path = PROGRAM) -> list[str]:
    """The command line of one share-holder's SPU program (``parties/spu_kmeans.py``, or ``ARGMIN``)."""
    return [str(interpreter()), str(program), "--data", str(data), "--result", str(result), "--rank", str(rank),
            *[a for address in addresses for a in ("--party", address)], "--link-id", link_id,
            "--timeout", f"{max(seconds, 1.0):.0f}"]


def program_env() -> dict[str, str]:
    """The SPU program's environment: this one's, without this interpreter's paths, jax on the CPU only."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, "PYTHONUNBUFFERED": "1", "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "3"}


class Warm:
    """An SPU program started before its session's MPC (``--warm``): its interpreter and SPU's runtime load while
    the party uploads and the coordinator joins, not after the alignment, where every share-holder waits for the
    slowest. ``run_spu`` gives it its command line; ``close`` ends it if it never got one (it exits when its
    standard input closes) and removes its folder."""

    def __init__(self, program: Path = PROGRAM):
        self.folder = tempfile.TemporaryDirectory(prefix="ppc-spu-")
        self.errfile = Path(self.folder.name) / "stderr.txt"
        self.process = start_program([str(interpreter()), str(program), "--warm"], program_env(), self.errfile)

    def start(self, command: list[str]) -> subprocess.Popen:
        """Give the program ``command`` (``program_command``'s list, interpreter and path first) as if it had been
        started with it; the program."""
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(command[2:]) + "\n").encode())
        self.process.stdin.flush()
        return self.process

    def close(self) -> None:
        if self.process.poll() is None and self.process.stdin is not None:
            self.process.stdin.close()  # a program that never got its command line exits
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.folder.cleanup()


def warm(engine: str, program: Path = PROGRAM) -> Warm | None:
    """A ``Warm`` program if this party's own terms run the MPC on SPU (``engine``) and SPU can run here; None
    otherwise (the program then starts once the MPC does)."""
    return Warm(program) if engine == "spu" and spu_problem() is None else None


def run_spu(relay, header: AlignmentHeader, X: np.ndarray, pair: KeyPair, peers: dict[str, bytes],
            session: str, me: str, deadline: float, log=sys.stderr, program: Path = PROGRAM,
            confirm: Callable[[], None] | None = None, started: Warm | None = None) -> MpcResult:
    """Run this share-holder's SPU program on ``X`` (its joined rows in the join's order; no columns for the
    helper) with both connections of every pair tunnelled over ``relay`` (as ``parties.mpc.run_mpc``).
    ``program``: the full k-means (``PROGRAM``) or secure aggregation's labels-only argmin (``ARGMIN``).

    ``confirm``: the party's confirmation of the alignment with the others (it raises to refuse). The program is
    started first, with ``--wait-go``: it imports SPU and compiles (or reads its compiled program from the cache)
    while the parties confirm, and connects to no peer, so holds no share, until this process writes "go" after
    ``confirm`` returned; if ``confirm`` raises, the program is ended before it connected. ``started``: the
    program, started before the MPC (``warm``), given its command line here; the caller closes it."""
    problem = spu_problem()
    if problem:
        raise PartyError(problem)
    order = list(header.mpc_parties)
    if me not in order or not set(order) <= set(peers):
        raise PartyError("the coordinator's list of MPC parties does not match the relayed keys")
    if len(order) != 3:
        raise PartyError(f"engine \"spu\" runs ABY3 on three share-holders; the coordinator names {len(order)}")
    mine = order.index(me)
    ciphers = {p: PairCipher(pair, peers[p], session, me, p, mine < i) for i, p in enumerate(order) if p != me}
    tunnel = SpuTunnel(me, order, ciphers, deadline)
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    folder: contextlib.AbstractContextManager[str] = (
        contextlib.nullcontext(started.folder.name) if started else tempfile.TemporaryDirectory(prefix="ppc-spu-"))
    with folder as tmp:
        data, result, errfile = Path(tmp) / "in.npz", Path(tmp) / "out.npz", Path(tmp) / "stderr.txt"
        program_input(data, np.ascontiguousarray(X, dtype=np.float64), header)
        command = [*program_command(data, result, mine, tunnel.addresses(), f"ppc-{session}",
                                    deadline - time.monotonic(), program), "--watch-stdin"]
        child = None
        if confirm is not None or started is not None:
            given = [*command, "--wait-go"] if confirm is not None else command
            child = started.start(given) if started else start_program(given, program_env(), errfile)
            trace(log, me, "spawned")
        if confirm is not None:
            assert child is not None
            try:
                confirm()
                trace(log, me, "confirmed")
                assert child.stdin is not None
                child.stdin.write(b"go\n")
                child.stdin.flush()
            except BaseException:
                tunnel.close()
                if child.stdin is not None:
                    child.stdin.close()  # the program exits before connecting to any peer
                try:
                    child.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
                raise
        tunnel.start()
        responses = relay(tunnel.requests())
        receiver = threading.Thread(target=tunnel.receive, args=(responses,), name="spu-receive", daemon=True)
        receiver.start()
        trace(log, me, "tunnel")
        code, rounds = watch_program(command, program_env(), errfile, tunnel, deadline, me, log, child)
        timing["mpc"] = time.perf_counter() - t0
        tunnel.wait_closed(max(min(deadline - time.monotonic(), 5.0), 0.1))
        if code != 0 or not result.exists():
            tunnel.outgoing.put(None)
            lines = [ln for ln in errfile.read_text(errors="replace").splitlines()
                     if ln.strip() and not ln.startswith("#") and "[warning]" not in ln]
            problems = "; ".join(tunnel.errors) or (lines[-1] if lines else "")
            out_of_time = time.monotonic() >= deadline
            raise PartyError(f"the SPU program {'ran out of time' if out_of_time else f'failed (exit {code})'}: "
                             f"{problems or 'no message'}")
        opened = np.load(result)
        labels, centres = opened["labels"].astype(np.int32), opened["centres"]
        if tracing():
            for line in errfile.read_text(errors="replace").splitlines():
                if line.startswith("# trace "):
                    trace(log, me, "program-" + line.split()[2], float(line.split()[3]))
            trace(log, me, "first-frame", tunnel.first_frame)
            trace(log, me, "last-frame", tunnel.last_frame)
            trace(log, me, "result")
            import resource
            child_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
            print(f"spu trace {me} cpu party {time.process_time():.2f} program "
                  f"{child_cpu.ru_utime + child_cpu.ru_stime:.2f}", file=log, flush=True)
        tunnel.outgoing.put(RelayResult(labels=labels.astype("<i4").tobytes(), centres=centres.astype("<f8").tobytes()))
        tunnel.outgoing.put(None)
        receiver.join(timeout=max(deadline - time.monotonic(), 0.1))
    if len(labels) != header.n_joined:
        raise PartyError(f"the MPC opened {len(labels)} labels for {header.n_joined} joined records")
    return MpcResult(rounds + 1, labels, centres if header.reveal_centres else None, timing, turns=tunnel.turns)
