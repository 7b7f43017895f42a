"""coordinator.gate: every call is charged to the party its token proves from the moment it is seen (loopback).

A party of one session with a valid token opens 4,200 Upload streams that
never send a message (more than gRPC's 4,096 calls of old): it holds its
share, ``party_calls``, and every other stream is refused at once as busy,
while an honest session on the same coordinator completes and its GetStatus
is answered within a second throughout.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from types import SimpleNamespace

import grpc
import pytest

from coordinator.limits import Calls, Limits
from coordinator.registry import Registry
from coordinator.server import start_server
from coordinator.session import SessionSpec
from parties.retry import BUSY
from protos.ppcsim.v1 import session_pb2_grpc
from tests.coordinator.test_greedy_clients import honest

STREAMS = 4200
LIMITS = Limits(first_message_seconds=60.0, idle_seconds=60.0)


def tokens(session: str) -> tuple[dict[str, str], dict[str, str]]:
    plain = {p: f"{session}-token-{p}" for p in ("a", "b")}
    return plain, {p: hashlib.sha256(t.encode()).hexdigest() for p, t in plain.items()}


def hold_streams(port: int, token: str, n: int, held: threading.Event, release: threading.Event,
                 out: dict) -> None:
    """Open ``n`` Upload streams that send nothing, on one asyncio channel in a thread of their own; once every
    stream was either refused or is still open after a second, set ``held``; at ``release`` cancel the rest.
    Fills in ``out``: the counts of refusals by status and details, and of streams still open."""
    out.update(refused={}, open=0)

    async def main() -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = session_pb2_grpc.CoordinatorStub(channel)
            never = asyncio.Event()

            async def silent():
                await never.wait()
                return
                yield  # an async generator

            calls = [stub.Upload(silent(), metadata=(("authorization", f"Bearer {token}"),), timeout=120)
                     for _ in range(n)]
            tasks = [asyncio.ensure_future(c) for c in calls]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                done = sum(t.done() for t in tasks)
                if done >= n - LIMITS.party_calls:
                    break
            await asyncio.sleep(1.0)
            for t in tasks:
                if t.done():
                    err = t.exception()
                    key = (err.code(), err.details()) if isinstance(err, grpc.aio.AioRpcError) else repr(err)
                    out["refused"][key] = out["refused"].get(key, 0) + 1
            out["open"] = sum(not t.done() for t in tasks)
            held.set()
            await asyncio.get_running_loop().run_in_executor(None, release.wait)
            for c in calls:
                c.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


@pytest.fixture
def coordinator():
    registry = Registry()
    server, port = start_server("127.0.0.1:0", registry, limits=LIMITS)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    yield SimpleNamespace(registry=registry, stub=session_pb2_grpc.CoordinatorStub(channel), port=port,
                          server=server)
    channel.close()
    server.stop(None).wait(10)


def test_a_party_holding_4200_silent_streams_does_not_stall_another_session(coordinator):
    c = coordinator
    greedy_tokens, greedy_digests = tokens("greedy")
    c.registry.create(SessionSpec(name="greedy", parties=("a", "b"), tokens=greedy_digests, ids="plain",
                                  deadline=120))
    honest_tokens, honest_digests = tokens("honest")
    c.registry.create(SessionSpec(name="honest", parties=("a", "b"), tokens=honest_digests, ids="plain",
                                  deadline=120))
    held, release = threading.Event(), threading.Event()
    result: dict = {}
    thread = threading.Thread(target=hold_streams, args=(c.port, greedy_tokens["a"], STREAMS, held, release, result))
    thread.start()
    try:
        assert held.wait(90), "the streams were neither refused nor held within 90 s"
        busy = (grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"party 'a' of session 'greedy' has {LIMITS.party_calls} calls in flight, the cap per party "
                f"({BUSY}: try again once a call ends)")
        # every stream past the share was ended by the coordinator at once: with its busy status, or, for some
        # when thousands end together, a reset of the stream that reaches the client before the status
        refused = result["refused"]
        assert set(refused) <= {busy, (grpc.StatusCode.CANCELLED, "CANCELLED")}, refused
        assert refused[busy] >= STREAMS // 2 and sum(refused.values()) == STREAMS - LIMITS.party_calls, refused
        assert result["open"] == LIMITS.party_calls
        assert c.server.servicer.calls.by_party == {("greedy", "a", ""): LIMITS.party_calls}
        # charged from the moment they were seen, before any message: the server holds exactly the party's share
        honest(c, "honest", tokens=honest_tokens)  # asserts DONE and every GetStatus answered within 1 s
    finally:
        release.set()
        thread.join(30)


def test_getstatus_has_a_reserve_the_parties_cannot_take():
    limits = Limits(server_calls=10, reserve=2, party_calls=4, session_calls=6)
    calls = Calls(limits)
    for p in "abcdefgh":  # eight parties of four sessions: the parties may take 10 - 2 calls
        calls.enter(f"s{p in 'abcd'}{p}", p)
    with pytest.raises(Exception, match="the last 2 of its 10 are kept for GetStatus"):
        calls.enter("other", "x")
    calls.enter_status("other", "x")
    calls.enter_status("other", "y")
    with pytest.raises(Exception, match=f"10 calls in flight, its cap \\({BUSY}"):
        calls.enter_status("other", "z")
    calls.leave_status("other", "x")
    calls.enter_status("other", "z")
    with pytest.raises(Exception, match="session 's' has 6 calls in flight, the cap per session"):
        small = Calls(limits)
        for i in range(7):
            small.enter("s", f"p{i}")
