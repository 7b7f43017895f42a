"""A party floods the coordinator's MPC helper with valid frames (loopback, real helper and MPyC program): the
flood is refused within the session's memory budget, naming the party.

Party 'a' of a two-party session with a helper seals MPyC messages of 1 MiB under program counters the program
never asks for. Everything the coordinator's process tree holds of them is bounded by the session's budget
(16 MiB here): the frames until the helper's tunnel has written them to its program, and what the program holds
unasked-for. A 1 GB flood is refused at the same point as this one of at most 64 MiB: the test shows the refusal
comes after about the budget, not after the flood.
"""

from __future__ import annotations

import re
import struct
import time

import grpc
import pytest

from coordinator.clustering import ClusteringSpec
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.session import FAILED, SessionSpec
from parties.keys import KeyPair
from parties.mpc import PairCipher, handshake_bytes
from parties.serde import relay_requests
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc

pytest.importorskip("mpyc")

MiB = 1 << 20
BUDGET = 16 * MiB


@pytest.mark.parametrize("pace, columns, refusal", [
    # at full speed the hub refuses first, unless a loaded machine lets the program take the frames in as fast as
    # they come: then the program's own bound refuses them; either way within the budget
    (0.0, "2000", r"party 'a': frames relayed to 'helper' that its program has not taken in yet: 1 MiB more would "
                  r"pass session 'flood''s memory budget of 16 MiB|the coordinator's helper: the MPC program failed "
                  r"\(exit 4\): party 'a' sent 1[67]\d{6} bytes that the MPC program has not asked for, more than it "
                  r"may hold \(16777216 bytes: the session's memory budget\)"),
    (0.1, "2000", r"the coordinator's helper: the MPC program failed \(exit 4\): party 'a' sent 1[67]\d{6} bytes that "
                  r"the MPC program has not asked for, more than it may hold \(16777216 bytes: the session's memory "
                  r"budget\)"),
    (0.1, "2", r"the coordinator's helper: the MPC program failed \(exit 4\): party 'a' sent an MPC message of "
               r"1048576 bytes, longer than any this computation sends \(73932 bytes at most\)"),
])
def test_a_relay_flood_to_the_helper_is_refused_within_the_sessions_budget(pace, columns, refusal):
    """At full speed the frames pile up before the helper's program takes them in: the hub refuses them. Paced,
    the program takes each in and holds it unasked-for: it stops at its inbox, the session's budget, or at once
    when a message is longer than any the computation sends (with 2 columns a party, 1 MiB is)."""
    from ppcsim.run import helper

    registry = Registry()
    session = registry.create(SessionSpec(
        name="flood", parties=("a", "b"), ids="plain", deadline=120, memory=BUDGET,
        clustering=ClusteringSpec(protocol="mpc", n_clusters=2, max_iter=1, helper=True)))
    server, port = start_server("127.0.0.1:0", registry)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = session_pb2_grpc.CoordinatorStub(channel)
    pairs = {p: KeyPair.generate() for p in ("a", "b")}
    ids = [f"r{i}" for i in range(20)]
    thread = helper.start(session)
    sent = [0]
    try:
        for p in ("a", "b"):
            stub.Join(session_pb2.JoinRequest(session="flood", party=p, public_key=pairs[p].public), timeout=10)
        for p in ("a", "b"):
            stub.Upload(iter([
                session_pb2.UploadMessage(header=session_pb2.UploadHeader(
                    session="flood", party=p, method="mpc", n_ids=len(ids), params={"columns": columns})),
                session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=ids))]), timeout=10)
        header = next(iter(stub.GetAlignment(session_pb2.AlignmentRequest(session="flood", party="a"),
                                               timeout=30))).header
        assert header.mpc_helper == "helper" and len(header.mpc_helper_key) == 32
        cipher = PairCipher(pairs["a"], header.mpc_helper_key, "flood", "a", "helper", me_first=True)

        def flood():
            # MPyC's handshake as party 0 dialling party 2 (its id and PRSS keys), then 1 MiB messages nobody asks for
            yield cipher.seal(b"\x00\x00" + bytes(handshake_bytes(3, 0, 2) - 2))
            for pc in range(64):
                time.sleep(pace)
                sent[0] += MiB
                yield cipher.seal(struct.pack("<qI", 10**9 + pc, MiB) + bytes(MiB))

        with pytest.raises(grpc.RpcError):
            for _ in stub.Relay(relay_requests("flood", "a", flood()), timeout=60):
                pass
        deadline = time.monotonic() + 30
        while session.state != FAILED and time.monotonic() < deadline:
            time.sleep(0.1)
        assert session.state == FAILED, session.state
        assert re.match(refusal, session.error), session.error
        relayed = session.arbiter.hub.links[("a", "helper")].bytes
        assert relayed <= 2 * BUDGET + 4 * MiB, relayed  # refused at about the budget, not at the flood's end
        assert sent[0] <= 2 * BUDGET + 4 * MiB, sent[0]  # the flood was cut off there
        assert session.budget.used <= BUDGET
    finally:
        session.fail("test over")
        channel.close()
        server.stop(None).wait(10)
        if thread is not None:
            thread.join(10)
    # the failed session ended every stream, so the helper's program heard its links end and left
    assert thread is None or not thread.is_alive(), "the helper's MPC program outlived its failed session"
