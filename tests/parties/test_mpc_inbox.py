"""parties.mpc_kmeans.guard_inbox: the helper's MPyC program holds at most its inbox of messages it has not asked
for, and refuses a message longer than any the computation sends, before holding it."""

from __future__ import annotations

import struct
import types

import pytest

from parties.mpc_kmeans import guard_inbox, longest_message

asyncoro = pytest.importorskip("mpyc.asyncoro")

MiB = 1 << 20


def exchanger(inbox: int, longest: int):
    """A MessageExchanger class of its own, guarded, talking to peer 0 ('a'); the reasons it stopped."""
    stops: list[str] = []

    class Exchanger(asyncoro.MessageExchanger):
        pass

    guard_inbox(Exchanger, inbox, longest, ["a", "b", "helper"], stops.append)
    runtime = types.SimpleNamespace(options=types.SimpleNamespace(no_prss=True), _loop=None)
    return Exchanger(runtime, peer_pid=0), stops


def message(pc: int, payload: bytes) -> bytes:
    return struct.pack("<qI", pc, len(payload)) + payload


def test_a_flood_of_messages_nobody_asked_for_stops_the_program_at_its_inbox():
    """A party sends the helper 1 MiB messages under program counters the program never asks for: it stops once
    16 MiB are held, naming the party. A 1 GB flood would stop at the same point: the inbox, not the flood's
    size, bounds what the program holds."""
    ex, stops = exchanger(16 * MiB, 2 * MiB)
    sent = 0
    while not stops and sent < 64:
        ex.data_received(message(1000 + sent, bytes(MiB)))
        sent += 1
    assert sent == 17 and stops == [f"party 'a' sent {17 * MiB} bytes that the MPC program has not asked for, more "
                                    f"than it may hold ({16 * MiB} bytes: the session's memory budget)"]


def test_messages_the_program_takes_in_do_not_count():
    ex, stops = exchanger(4 * MiB, 2 * MiB)
    for pc in range(40):
        ex.data_received(message(pc, bytes(MiB)))
        assert ex.receive(pc) == bytes(MiB)  # asked for: the program holds none of it
    assert stops == []


def test_a_message_longer_than_the_computation_sends_is_refused_from_its_header():
    ex, stops = exchanger(1 << 40, 100_000)
    ex.data_received(struct.pack("<qI", 7, 100_001) + bytes(10))  # its header and 10 bytes: nothing more is held
    assert stops == ["party 'a' sent an MPC message of 100001 bytes, longer than any this computation sends "
                     "(100000 bytes at most)"]


def test_the_longest_message_bound_covers_what_a_run_sends():
    """45 records, 6 columns, 3 clusters, SecFxp(32): the longest message of a real run with the helper
    (tests/ppcsim/run/test_mpc_runs.py) carried 27,198 payload bytes; the bound is nine times that."""
    assert longest_message(45, 3, 6, 32) == 249_492 > 9 * 27_198
