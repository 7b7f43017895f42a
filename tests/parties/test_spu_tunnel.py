"""The SPU tunnel (parties.spu_run): both connections of every pair carried sealed over one relay, in order.

No SPU here: three stand-in programs speak the link pattern SPU's brpc links use (each listens on its own
address, dials each peer's to send to it a call in brpc's baidu_std framing, and the peer answers on the same
connection), through three tunnels joined by an in-memory relay that forwards frames as the coordinator does.
Each tunnel answers its own program's calls and drops its program's answers. Runs without SPU installed.
"""

from __future__ import annotations

import queue
import socket
import threading
import time

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from conftest import brpc_call
from parties.brpc import BRPC_HEADER, correlation_id
from parties.keys import KeyPair
from parties.mpc import LABEL, PairCipher, associated, nonce
from parties.serde import Frame
from parties.spu_run import DIALLED_BY_RECEIVER, DIALLED_BY_SENDER, SpuTunnel

ORDER = ["a", "b", "c"]


def read_call(conn: socket.socket) -> tuple[int, bytes]:
    """The next brpc call or answer on ``conn``: its correlation id and its message."""
    head = b""
    while len(head) < BRPC_HEADER:
        head += conn.recv(BRPC_HEADER - len(head))
    body, meta = int.from_bytes(head[4:8], "big"), int.from_bytes(head[8:12], "big")
    rest = b""
    while len(rest) < body:
        rest += conn.recv(body - len(rest))
    return correlation_id(rest[:meta]), rest[meta:]


def _tunnels(session="s"):
    keys = {p: KeyPair.generate(i + 1) for i, p in enumerate(ORDER)}
    tunnels = {}
    for i, me in enumerate(ORDER):
        ciphers = {p: PairCipher(keys[me], keys[p].public, session, me, p, i < j) for j, p in enumerate(ORDER)
                   if p != me}
        tunnels[me] = SpuTunnel(me, ORDER, ciphers, time.monotonic() + 60)
    inboxes = {p: queue.Queue() for p in ORDER}
    seen: list[tuple[str, Frame]] = []

    def route(sender):  # the coordinator: forward each frame to the party it names, as sent by `sender`
        for message in tunnels[sender].requests():
            if isinstance(message, Frame):
                seen.append((sender, message))
                inboxes[message.peer].put(Frame(peer=sender, seq=message.seq, data=message.data))

    for p in ORDER:
        tunnels[p].start()
        threading.Thread(target=route, args=(p,), daemon=True).start()
        threading.Thread(target=tunnels[p].receive, args=(iter(inboxes[p].get, None),), daemon=True).start()
    return tunnels, keys, seen


def _program(tunnel: SpuTunnel, me: str, got: dict, done: threading.Event):
    """A stand-in for one share-holder's program: serve its own port, send one call to each peer on a
    connection it dials and wait for its answer, and answer every call on the connection it came on."""
    own = tunnel.addresses()[ORDER.index(me)]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(own.rsplit(":", 1)[1])))
    server.listen(4)

    def serve():
        for _ in range(len(ORDER) - 1):
            conn, _ = server.accept()
            number, message = read_call(conn)
            got[(me, "request")].append(message)
            conn.sendall(brpc_call(number, b"ack:" + message))  # as SPU answers: the tunnel drops it
            time.sleep(0.2)
            conn.close()

    serving = threading.Thread(target=serve, daemon=True)
    serving.start()
    for i, (peer, address) in enumerate(zip(ORDER, tunnel.addresses())):
        if peer == me:
            continue
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as s:
            number = 100 * ORDER.index(me) + i
            s.sendall(brpc_call(number, f"{me}->{peer}".encode()))
            got[(me, "answer")].append((number, read_call(s)))  # from our tunnel, at once
    serving.join(20)  # the peers' calls: they come through the relay
    done.set()


def test_both_connections_of_every_pair_go_through_the_relay_sealed_and_arrive_in_order():
    tunnels, keys, seen = _tunnels()
    got = {(p, kind): [] for p in ORDER for kind in ("request", "answer")}
    done = {p: threading.Event() for p in ORDER}
    for p in ORDER:
        threading.Thread(target=_program, args=(tunnels[p], p, got, done[p]), daemon=True).start()
    assert all(done[p].wait(30) for p in ORDER), {p: tunnels[p].errors for p in ORDER}
    for p in ORDER:  # every program got a request from each peer, and each peer's answer
        assert sorted(got[(p, "request")]) == sorted(f"{q}->{p}".encode() for q in ORDER if q != p)
        # each call answered by the caller's own tunnel, "received", with the call's own correlation id
        assert all(answer == (number, b"\x0a\x00") for number, answer in got[(p, "answer")])
        assert len(got[(p, "answer")]) == len(ORDER) - 1
        assert not tunnels[p].errors
    # the relay saw frames on all six directed links, sealed: no plaintext in any frame
    assert {(s, f.peer) for s, f in seen} == {(s, r) for s in ORDER for r in ORDER if s != r}
    assert not any(b"->" in f.data for _, f in seen)
    # the first frame a sent b opens, under the pair's key and a's direction, to "0" + the request a dialled b with
    first = next(f for s, f in seen if s == "a" and f.peer == "b" and f.seq == 0)
    key = keys["a"].pair_secret(keys["b"].public, LABEL, "s", "a", "b")
    plain = AESGCM(key).decrypt(nonce(0, 0), first.data, associated("s", "a", "b"))
    assert plain[0] == DIALLED_BY_SENDER and plain.endswith(b"a->b")
    # no answer crossed: every frame a sent b on the connection b dialled is a close, its marker byte alone
    for f in (f for s, f in seen if s == "a" and f.peer == "b"):
        opened = AESGCM(key).decrypt(nonce(0, f.seq), f.data, associated("s", "a", "b"))
        assert opened[0] == DIALLED_BY_SENDER or opened == bytes([DIALLED_BY_RECEIVER]), opened
    # each directed link numbers its frames 0, 1, 2 ... across both connections
    for s in ORDER:
        for r in ORDER:
            if s != r:
                seqs = [f.seq for x, f in seen if x == s and f.peer == r]
                assert seqs == list(range(len(seqs)))


def test_a_frame_that_carries_a_peers_answer_is_refused_and_ends_the_relay():
    # a peer's tunnel answers its own program's calls: an answer arriving on connection 1 (more than its close
    # marker) is a peer that does not follow the protocol, and the link ends naming it
    keys = {p: KeyPair.generate(i + 1) for i, p in enumerate(ORDER)}
    a = SpuTunnel("a", ORDER, {p: PairCipher(keys["a"], keys[p].public, "s", "a", p, True) for p in "bc"},
                  time.monotonic() + 60)
    b_to_a = PairCipher(keys["b"], keys["a"].public, "s", "b", "a", False)
    close = b_to_a.seal(bytes([DIALLED_BY_RECEIVER]))
    answer = b_to_a.seal(bytes([DIALLED_BY_RECEIVER]) + brpc_call(1, b"\x0a\x00"))
    a.receive(iter([Frame(peer="b", seq=close.seq, data=close.data), Frame(peer="b", seq=answer.seq, data=answer.data)]))
    assert len(a.errors) == 1 and "answers never cross" in a.errors[0] and "'b'" in a.errors[0]
    a.close()
