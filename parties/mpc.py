"""A party's side of MPC k-means: the MPyC program in a child process, its links tunnelled through the coordinator.

MPyC's parties connect to each other over TCP (party i connects to every
party after it and listens for those before it). Parties across
organisations can usually reach only the coordinator, so each party process
gives its MPyC program local loopback ports instead of its peers' addresses:

- for a peer j after it, a listening port T_j on 127.0.0.1 that its program
  connects to as if it were party j;
- for a peer j before it, the port its program listens on, which the tunnel
  connects to when j's first frame arrives.

Every chunk the program writes to a link is sealed with AES-256-GCM
(``cryptography``) under the pair's key, ``KeyPair.pair_secret`` with label
"mpc tunnel" (HKDF-SHA256 of the X25519 secret the two parties agree; the
coordinator only relayed the public keys), and sent on the party's ``Relay``
stream to the coordinator, which forwards it to j. The nonce is the
direction (4 bytes big-endian: 0 from the pair's first party to its second,
1 back) then the frame's number on that directed link (8 bytes big-endian),
so no nonce repeats under a key, and the receiver takes frames in order
only: a frame dropped, repeated, reordered or altered fails to open and ends
the computation. The associated data binds the frame to the session and its
sender and receiver. A frame with an empty plaintext (its ciphertext is the
16-byte tag alone) says the sender's program closed the link. The wire format
is in docs/protocol.md. The tunnel works on the plain values of
``parties.serde`` (``Frame``, ``Mark``, ``RelayResult``); the Relay call given to
``run_mpc`` turns them into messages and back.
"""

from __future__ import annotations

import itertools
import os
import queue
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from parties.errors import PartyError
from parties.keys import KeyPair
from parties.mpc_kmeans import STOPPED
from parties.protocols.terms import Terms
from parties.secagg import check_alignment, confirm_alignment, confirmed_fields
from parties.serde import AlignmentHeader, Frame, Mark, RelayResult

#: HKDF label of a pair's tunnel key.
LABEL = "mpc tunnel"
#: Most plaintext bytes read from a link into one frame.
READ_BYTES = 1 << 16
#: Bytes of AES-GCM's tag, added to every frame.
TAG_BYTES = 16
#: What a party of an MPC session names as its method in its (ids only) upload header.
METHOD = "mpc"
#: The full MPC's k-means program (secure aggregation's labels-only argmin runs parties.secagg_argmin instead).
PROGRAM = "parties.mpc_kmeans"


def associated(session: str, sender: str, receiver: str) -> bytes:
    """A frame's associated data: ``"ppcsim.v1 mpc tunnel" 0x00 session 0x00 sender 0x00 receiver`` (UTF-8)."""
    return b"\x00".join([b"ppcsim.v1 " + LABEL.encode(), session.encode(), sender.encode(), receiver.encode()])


def nonce(direction: int, seq: int) -> bytes:
    """The 12-byte AES-GCM nonce of frame ``seq`` of a directed link: direction (4 bytes) || seq (8 bytes)."""
    return direction.to_bytes(4, "big") + seq.to_bytes(8, "big")


class PairCipher:
    """Both directions of one pair's link as one party sees them: seal what it sends, open what it receives."""

    def __init__(self, pair: KeyPair, peer_public: bytes, session: str, me: str, peer: str, me_first: bool):
        a, b = (me, peer) if me_first else (peer, me)
        self.aead = AESGCM(pair.pair_secret(peer_public, LABEL, session, a, b))
        self.peer = peer
        self.out_direction, self.in_direction = (0, 1) if me_first else (1, 0)
        self.out_ad, self.in_ad = associated(session, me, peer), associated(session, peer, me)
        self.sent = self.received = 0
        self.lock = threading.Lock()

    def seal(self, data: bytes) -> Frame:
        with self.lock:  # the counter is the nonce: one sealer at a time
            seq = self.sent
            self.sent += 1
            sealed = self.aead.encrypt(nonce(self.out_direction, seq), data, self.out_ad)
        return Frame(peer=self.peer, seq=seq, data=sealed)

    def open(self, frame: Frame) -> bytes:
        if frame.seq != self.received:
            raise PartyError(f"the coordinator relayed frame {frame.seq} from '{self.peer}' where frame "
                             f"{self.received} was due: a frame was dropped, repeated or reordered")
        try:
            data = self.aead.decrypt(nonce(self.in_direction, frame.seq), frame.data, self.in_ad)
        except InvalidTag:
            raise PartyError(f"frame {frame.seq} relayed from '{self.peer}' does not open under the pair's key: it "
                             "was altered or not sealed by that party") from None
        self.received += 1
        return data


class Framing:
    """MPyC's framing of one direction of a link (mpyc.asyncoro): the dialling party's handshake (its id, 2 bytes,
    and the PRSS keys it shares with the peer, 16 bytes each), then messages of an 8-byte program counter, a 4-byte
    little-endian length and the payload. ``feed`` says how many messages began and how many ended in the bytes
    it is given, in order, however the bytes were cut into frames."""

    def __init__(self, handshake: int):
        self.skip, self.header, self.left = handshake, b"", 0

    def feed(self, data: bytes) -> tuple[int, int]:
        began = ended = 0
        i = min(self.skip, len(data))
        self.skip -= i
        while i < len(data):
            if self.left:
                take = min(self.left, len(data) - i)
                self.left -= take
                i += take
                ended += not self.left
                continue
            take = min(12 - len(self.header), len(data) - i)
            self.header += data[i:i + take]
            i += take
            if len(self.header) == 12:
                began += 1
                self.left = struct.unpack_from("<I", self.header, 8)[0]
                self.header = b""
                ended += not self.left
        return began, ended


def handshake_bytes(n: int, sender: int, receiver: int) -> int:
    """Bytes MPyC's dialling party ``sender`` sends first to ``receiver`` among ``n`` parties: its id (2 bytes) and
    a 16-byte PRSS key for every subset of n - t parties (t = (n - 1) // 2) that it leads and ``receiver`` is in."""
    subsets = itertools.combinations(range(n), n - (n - 1) // 2)
    return 2 + 16 * sum(1 for c in subsets if c[0] == sender and receiver in c)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for the MPyC program to listen on)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RelayEnd:
    """What either engine's tunnel (``Tunnel`` here, parties.spu_run.SpuTunnel) does the same way: its threads,
    and the Relay stream's two directions. ``receive`` opens each relayed frame from a peer and hands it to the
    tunnel's ``deliver``; a bad frame or a broken stream is kept in ``errors`` and every link is told it ended;
    ``requests`` yields what the links and the program put out. The tunnel sets ``peers``, ``ciphers``,
    ``inbound`` (its queues, None: the relay ended), ``outgoing``, ``errors`` and ``threads``."""

    peers: list[str]
    ciphers: dict[str, PairCipher]
    inbound: dict
    outgoing: queue.Queue
    errors: list[str]
    threads: list[threading.Thread]

    def _thread(self, target, *args, name: str) -> threading.Thread:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        t.start()
        self.threads.append(t)
        return t

    def deliver(self, frame: Frame, data: bytes) -> None:
        """Hand ``data``, opened from ``frame``, to its link (PartyError if it names none)."""
        raise NotImplementedError

    def receive(self, responses) -> None:
        """Open every frame the coordinator relays and hand it to its link (run in its own thread)."""
        try:
            for frame in responses:
                if frame.peer not in self.peers:
                    raise PartyError(f"the coordinator relayed a frame from '{frame.peer}', not a peer of this MPC")
                self.deliver(frame, self.ciphers[frame.peer].open(frame))
        except PartyError as exc:
            self.errors.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - the stream broke: the computation cannot go on
            details = exc.details() if hasattr(exc, "details") else str(exc)
            self.errors.append(f"the relay stream ended: {details or type(exc).__name__}")
        for q in self.inbound.values():
            q.put(None)

    def requests(self):
        """What goes up the Relay stream after its opening: whatever the links and the program put out."""
        while True:
            message = self.outgoing.get()
            if message is None:
                return
            yield message


@dataclass
class Tunnel(RelayEnd):
    """One party's end of every MPC link: local sockets <-> sealed frames on the Relay stream."""

    session: str
    me: str
    order: list[str]
    ciphers: dict[str, PairCipher]
    deadline: float  # time.monotonic() by which everything must be over
    outgoing: queue.Queue = field(default_factory=queue.Queue)
    errors: list[str] = field(default_factory=list)
    #: The round the program last announced (-1: the input sharing, before round 0).
    round: int = -1
    #: Per round, this party's turns: the times its program began sending MPyC messages after a message from a
    #: peer had ended (the first send counts as one), i.e. the messages in sequence on its path.
    turns: dict[int, int] = field(default_factory=dict)
    #: Called with a peer's name each time a frame from it has been written to the program (None: nobody asks).
    written: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        mine = self.order.index(self.me)
        self.listeners: dict[str, socket.socket] = {}
        for peer in self.order[mine + 1:]:  # our program connects to these as if they were the peers
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            self.listeners[peer] = server
        self.own_port = free_port() if mine else 0  # party 0 listens for nobody
        self.peers = [p for p in self.order if p != self.me]
        self.inbound: dict[str, queue.Queue] = {p: queue.Queue() for p in self.peers}
        self.threads: list[threading.Thread] = []
        self.pumps: list[threading.Thread] = []
        n, me = len(self.order), self.order.index(self.me)
        rank = {p: self.order.index(p) for p in self.inbound}  # we dial the peers after us, those before us dial us
        self.sent_framing = {p: Framing(handshake_bytes(n, me, r) if r > me else 0) for p, r in rank.items()}
        self.received_framing = {p: Framing(handshake_bytes(n, r, me) if r < me else 0) for p, r in rank.items()}
        self.waited = True  # a peer's message ended since our program last began one (the first send counts)
        self.count_lock = threading.Lock()

    def addresses(self) -> list[str]:
        """MPyC's ``-P`` list: ours with an empty host, every peer at its local tunnel port."""
        out = []
        for p in self.order:
            if p == self.me:
                out.append(f":{self.own_port}")
            elif p in self.listeners:
                out.append(f"127.0.0.1:{self.listeners[p].getsockname()[1]}")
            else:
                out.append("127.0.0.1:1")  # a peer before us connects to us: its address is never dialled
        return out

    def start(self) -> None:
        for peer in self.inbound:
            self._thread(self._link, peer, name=f"mpc-link-{peer}")

    def _connect(self, peer: str) -> socket.socket:
        if peer in self.listeners:  # our program dials the peer: it arrives at our listener
            server = self.listeners[peer]
            server.settimeout(max(self.deadline - time.monotonic(), 0.1))
            conn, _ = server.accept()
            server.close()
            return conn
        while True:  # the peer dialled us: reach our program's listening port (it may not listen yet)
            try:
                return socket.create_connection(("127.0.0.1", self.own_port), timeout=5)
            except OSError:
                if time.monotonic() > self.deadline:
                    raise
                time.sleep(0.05)

    def _link(self, peer: str) -> None:
        """Connect the link to ``peer`` (when our program dials, or when the peer first speaks), then write what
        arrives for it into the socket; a pump seals what the socket gives."""
        inbound = self.inbound[peer]
        pending: list[bytes | None] = []
        try:
            if peer not in self.listeners:
                pending.append(inbound.get(timeout=max(self.deadline - time.monotonic(), 0.1)))
                if pending[0] is None:
                    return
            conn = self._connect(peer)
            conn.settimeout(None)
            self.pumps.append(self._thread(self._pump, peer, conn, name=f"mpc-pump-{peer}"))
            while True:
                data = pending.pop() if pending else inbound.get()
                if data is None:  # the relay stream ended: nothing more can come, so our program hears the link end
                    try:
                        conn.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if not data:  # the peer's program closed the link: so does ours
                    try:
                        conn.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    if self.written is not None:
                        self.written(peer)
                    return
                conn.sendall(data)
                if self.written is not None:
                    self.written(peer)
        except (OSError, queue.Empty) as exc:
            self.errors.append(f"the link to '{peer}': {exc or type(exc).__name__}")

    def _pump(self, peer: str, conn: socket.socket) -> None:
        cipher = self.ciphers[peer]
        try:
            while True:
                data = conn.recv(READ_BYTES)
                began, _ = self.sent_framing[peer].feed(data)
                if began:
                    with self.count_lock:
                        if self.waited:
                            self.turns[self.round] = self.turns.get(self.round, 0) + 1
                            self.waited = False
                self.outgoing.put(cipher.seal(data))
                if not data:  # our program closed the link: tell the peer (an empty sealed frame)
                    break
        except OSError as exc:
            self.errors.append(f"the link to '{peer}': {exc}")
            self.outgoing.put(cipher.seal(b""))

    def deliver(self, frame: Frame, data: bytes) -> None:
        if self.received_framing[frame.peer].feed(data)[1]:  # a peer's MPyC message ended
            with self.count_lock:
                self.waited = True
        self.inbound[frame.peer].put(data)


@dataclass
class MpcResult:
    """What this party's MPC opened (its own view)."""

    rounds: int
    labels: np.ndarray  # of the joined records, in the join's order
    centres: np.ndarray | None
    timing: dict[str, float] = field(default_factory=dict)
    #: This party's rows in the join's order (its alignment), so that GetResult's labels are checked against
    #: what the MPC opened (parties.secagg.check_result).
    positions: np.ndarray | None = None
    #: Per round (-1: the input sharing), the MPyC messages in sequence on this party's path (Tunnel.turns).
    turns: dict[int, int] = field(default_factory=dict)
    #: The session's protocol: "mpc", or "secure_aggregation" for its labels-only argmin (parties.secagg_labels).
    protocol: str = METHOD


#: What the MPC parties confirm to each other beyond secure aggregation's fields (parties.secagg.FIELDS), in
#: this order: everything else of the alignment header their programs compute with (docs/mpc.md gives the bytes).
MPC_FIELDS = ("mpc_parties", "mpc_columns", "mpc_bits", "mpc_frac", "reveal_centres", "mpc_helper", "mpc_helper_key")


def mpc_fields(header: AlignmentHeader, positions: np.ndarray, ids: np.ndarray) -> dict[str, bytes]:
    """The bytes of every field an MPC party confirms: secure aggregation's (``confirmed_fields``: the parties,
    joined count, k, initial centres, seeding steps, scale, rounds, the joined records' id sequence), then
    ``MPC_FIELDS``: names as UTF-8 joined by 0x00, numbers 4 bytes big-endian, the flag one byte, the helper's
    key its 32 bytes (empty without a helper)."""
    fields = confirmed_fields(header, positions, ids)
    fields.update({
        "mpc_parties": b"\x00".join(p.encode() for p in header.mpc_parties),
        "mpc_columns": b"".join(int(c).to_bytes(4, "big") for c in header.mpc_columns),
        "mpc_bits": int(header.mpc_bits).to_bytes(4, "big"),
        "mpc_frac": int(header.mpc_frac).to_bytes(4, "big"),
        "reveal_centres": bytes([int(header.reveal_centres)]),
        "mpc_helper": header.mpc_helper.encode(),
        "mpc_helper_key": bytes(header.mpc_helper_key),
    })
    if header.mpc_engine:  # MPyC sessions confirm what they always did (an empty engine)
        fields["mpc_engine"] = header.mpc_engine.encode()
    return fields


def check_mpc(link, header: AlignmentHeader, positions: np.ndarray, n_rows: int, me: str,
              terms: Terms | None = None) -> None:
    """Before anything of the MPC starts (its program, SPU's environment, any share): check the alignment alone
    (parties.secagg.check_alignment) and, with ``terms``, this party's own (parties.protocols.terms: its
    share-holders, helper, engine, k, rounds, scale and whether the centres are opened); a refusal is told to the
    coordinator, which fails the session."""
    try:
        check_alignment(header, positions, n_rows, me)
        if terms is not None:
            terms.check_alignment(header)
    except PartyError as exc:
        link.refuse(str(exc))
        raise


def confirm_mpc(link, header: AlignmentHeader, positions: np.ndarray, ids: np.ndarray, pair: KeyPair,
                peers: dict[str, bytes], session: str, me: str) -> None:
    """Before any share, once ``check_mpc`` has passed: confirm to every other data party, through the
    coordinator's Confirm, what the coordinator told this party (``mpc_fields``), as secure-aggregation parties do
    (parties.secagg.confirm_alignment: HMAC tags under an HKDF key of the pair's X25519 secret); PartyError,
    naming the fields, if another party was told otherwise. The helper holds no data and confirms nothing: the
    fields include its name and key, so every data party computes with the same helper."""
    confirm_alignment(link, pair, peers, list(header.parties), session, me, mpc_fields(header, positions, ids))


def program_input(path: Path, X: np.ndarray, header: AlignmentHeader, inbox: int = 0) -> None:
    """The MPyC program's input file (see parties.mpc_kmeans); ``inbox``: the most bytes of its peers' messages
    the program may hold before asking for them (0: no bound; parties.mpc_kmeans.guard_inbox)."""
    np.savez(path, X=X, columns=np.asarray(header.mpc_columns, dtype=np.int64), init=np.asarray(header.init),
             k=header.n_clusters, rounds=header.max_iter, bits=header.mpc_bits, frac=header.mpc_frac,
             m=header.n_joined, reveal_centres=header.reveal_centres, inbox=inbox,
             names=np.asarray(list(header.mpc_parties), dtype=str))


def start_program(command: list[str], env: dict[str, str], errfile: Path) -> subprocess.Popen:
    """Start an MPC program (either engine's: ``command``, in ``env``, its standard error to ``errfile``). Its
    standard input is a pipe this process writes nothing to (or one line: parties.spu_run's "go"), so that it
    exits if this process dies (``--watch-stdin``)."""
    with open(errfile, "wb") as err:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.PIPE, env=env)


def watch_program(command: list[str], env: dict[str, str], errfile: Path, tunnel, deadline: float, me: str,
                  log=sys.stderr, child: subprocess.Popen | None = None) -> tuple[int, int]:
    """Start an MPC program (``start_program``; or take ``child``, started so already) and watch it until it exits
    or ``deadline`` passes (then it is killed): each "round r" line it prints becomes the round of ``tunnel``'s
    counts and a ``Mark`` on its stream (every fifth said on ``log``). Returns its exit code and the last round
    it announced."""
    rounds = 0
    if child is None:
        child = start_program(command, env, errfile)
    timer = threading.Timer(max(deadline - time.monotonic(), 0.1), child.kill)
    timer.start()
    try:
        assert child.stdout is not None
        for line in child.stdout:  # "round r" as each round begins
            words = line.decode("utf-8", "replace").split()
            if len(words) == 2 and words[0] == "round" and words[1].isdigit():
                rounds = int(words[1])
                with tunnel.count_lock:
                    tunnel.round = rounds
                tunnel.outgoing.put(Mark(round=rounds))
                if rounds and rounds % 5 == 0:
                    print(f"party {me}: MPC round {rounds}", file=log, flush=True)
        code = child.wait()
    finally:
        timer.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdin is not None:
            child.stdin.close()
    return code, rounds


def run_mpc(relay, header: AlignmentHeader, X: np.ndarray, pair: KeyPair, peers: dict[str, bytes],
            session: str, me: str, deadline: float, log=sys.stderr, program: str = PROGRAM, *, inbox: int = 0,
            written: Callable[[str], None] | None = None) -> MpcResult:
    """Run this party's MPyC program on ``X`` (its joined rows, in the join's order; no columns for the helper)
    with its links tunnelled over ``relay`` (a function taking what goes up, ``Frame``, ``Mark`` and ``RelayResult``
    values after the stream's opening, and returning the relayed ``Frame`` values: the Relay call). ``program``: the
    MPyC program's module (the full k-means, or secure aggregation's argmin, parties.secagg_argmin).

    The coordinator's helper passes ``inbox`` (the most bytes of unasked-for messages its program may hold) and
    ``written`` (told each peer's frame as it is written to the program, so that the coordinator counts it
    against the session's budget until then)."""
    order = list(header.mpc_parties)
    if me not in order or not set(order) <= set(peers):
        raise PartyError("the coordinator's list of MPC parties does not match the relayed keys")
    mine = order.index(me)
    ciphers = {p: PairCipher(pair, peers[p], session, me, p, mine < i) for i, p in enumerate(order) if p != me}
    tunnel = Tunnel(session, me, order, ciphers, deadline, written=written)
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ppc-mpc-") as tmp:
        data, result, errfile = Path(tmp) / "in.npz", Path(tmp) / "out.npz", Path(tmp) / "stderr.txt"
        program_input(data, np.ascontiguousarray(X, dtype=np.float64), header, inbox)
        tunnel.start()
        responses = relay(tunnel.requests())
        receiver = threading.Thread(target=tunnel.receive, args=(responses,), name="mpc-receive", daemon=True)
        receiver.start()
        command = [sys.executable, "-m", program, "--data", str(data), "--result", str(result),
                   *[a for addr in tunnel.addresses() for a in ("-P", addr)], "-I", str(mine), "--no-log",
                   "--watch-stdin"]
        code, rounds = watch_program(command, {**os.environ, "PYTHONUNBUFFERED": "1"}, errfile, tunnel, deadline, me,
                                     log)
        timing["mpc"] = time.perf_counter() - t0
        for pump in list(tunnel.pumps):
            pump.join(timeout=max(deadline - time.monotonic(), 0.1))
        if code != 0 or not result.exists():
            tunnel.outgoing.put(None)
            said = errfile.read_text(errors="replace").strip().splitlines()[-1:]
            # a program the inbox guard stopped says why first; the links it broke only follow from that
            problems = "; ".join([*said, *tunnel.errors]) if code == STOPPED else "; ".join(tunnel.errors) or said
            out_of_time = time.monotonic() >= deadline
            raise PartyError(f"the MPC program {'ran out of time' if out_of_time else f'failed (exit {code})'}: "
                             f"{problems or 'no message'}")
        opened = np.load(result)
        labels, centres = opened["labels"].astype(np.int32), opened["centres"]
        tunnel.outgoing.put(RelayResult(labels=labels.astype("<i4").tobytes(), centres=centres.astype("<f8").tobytes()))
        tunnel.outgoing.put(None)
        receiver.join(timeout=max(deadline - time.monotonic(), 0.1))
    if len(labels) != header.n_joined:
        raise PartyError(f"the MPC opened {len(labels)} labels for {header.n_joined} joined records")
    return MpcResult(rounds + 1, labels, centres if header.reveal_centres else None, timing, turns=tunnel.turns)
