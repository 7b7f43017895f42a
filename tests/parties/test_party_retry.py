"""parties.retry: the one policy a party's retried calls go through, as docs/protocol.md states it."""

from __future__ import annotations

import io

import grpc
import pytest

from parties.retry import STILL_READING_WAIT, Retry


class Failed(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str = ""):
        self._code, self._details = code, details

    def code(self):
        return self._code

    def details(self):
        return self._details


def failing(*errors):
    """A call that raises ``errors`` in turn, then returns "done"; ``calls`` counts its tries."""
    calls = []

    def call():
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return "done"

    return call, calls


def policy(left: float = 100.0):
    slept, log = [], io.StringIO()
    return Retry("a", lambda: left, log, sleep=slept.append), slept, log


def test_a_dropped_connection_is_tried_again_three_times_after_1_2_and_4_seconds():
    retry, slept, log = policy()
    call, calls = failing(*[Failed(grpc.StatusCode.UNAVAILABLE, "Socket closed")] * 3)
    assert retry("GetResult", call) == "done" and len(calls) == 4 and slept == [1.0, 2.0, 4.0]
    assert "party a: GetResult: connection lost (Socket closed); trying again in 4 s (retry 3 of 3)" in log.getvalue()
    call, calls = failing(*[Failed(grpc.StatusCode.UNAVAILABLE)] * 4)
    with pytest.raises(Failed):
        retry("GetResult", call)
    assert len(calls) == 4


def test_an_upload_tried_again_joins_again_first():
    retry, slept, _ = policy()
    joins = []
    call, calls = failing(Failed(grpc.StatusCode.UNAVAILABLE))
    assert retry("Upload", call, again=lambda: joins.append(1)) == "done"
    assert len(calls) == 2 and joins == [1]


def test_join_waits_while_the_coordinator_still_reads_the_party_s_earlier_upload_and_nothing_else():
    retry, slept, log = policy()
    still = Failed(grpc.StatusCode.FAILED_PRECONDITION,
                   "party 'a' is uploading to session 's' now; join again once that upload has ended")
    call, calls = failing(*[still] * 6)  # more than the dropped connections' three: it waits until the deadline
    assert retry("Join", call) == "done" and slept == [STILL_READING_WAIT] * 6
    assert "Join: the coordinator still reads this party's earlier upload; trying again in 2 s" in log.getvalue()
    for what, error in [("GetPeers", still),  # only Join waits so
                        ("Join", Failed(grpc.StatusCode.FAILED_PRECONDITION, "party 'a' has uploaded already")),
                        ("Join", Failed(grpc.StatusCode.INVALID_ARGUMENT)), ("Upload", Failed(grpc.StatusCode.INTERNAL))]:
        retry, slept, _ = policy()
        call, calls = failing(error)
        with pytest.raises(Failed):
            retry(what, call)
        assert len(calls) == 1 and slept == []


def test_no_wait_goes_past_the_deadline():
    retry, slept, _ = policy(left=1.5)
    call, calls = failing(Failed(grpc.StatusCode.UNAVAILABLE), Failed(grpc.StatusCode.UNAVAILABLE))
    with pytest.raises(Failed):
        retry("Join", call)
    assert slept == [1.0] and len(calls) == 2  # the second wait (2 s) would pass the deadline: not taken


def test_a_busy_coordinator_is_tried_again_with_backoff_until_the_deadline():
    from coordinator.errors import ResourceExhausted
    from coordinator.limits import Calls, Limits

    calls_ = Calls(Limits(party_calls=1))
    calls_.enter("s", "a")
    with pytest.raises(ResourceExhausted) as refused:  # the coordinator's own words
        calls_.enter("s", "a")
    busy = Failed(grpc.StatusCode.RESOURCE_EXHAUSTED, str(refused.value))
    grpc_busy = Failed(grpc.StatusCode.RESOURCE_EXHAUSTED, "Concurrent RPC limit exceeded!")
    retry, slept, log = policy()
    joins = []
    call, calls = failing(*[busy] * 7, grpc_busy)
    assert retry("Upload", call, again=lambda: joins.append(1)) == "done"
    assert len(calls) == 9 and slept == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert joins == []  # refused before it did anything: no Join again
    assert "party a: Upload: the coordinator is busy (party 'a' of session 's' has 1 calls" in log.getvalue()
    # no wait past the deadline
    retry, slept, _ = policy(left=3.0)
    call, calls = failing(*[busy] * 10)
    with pytest.raises(Failed):
        retry("Join", call)
    assert slept == [0.25, 0.5, 1.0, 2.0]
    # other resource refusals (a memory budget) are not the server being busy
    retry, slept, _ = policy()
    call, calls = failing(Failed(grpc.StatusCode.RESOURCE_EXHAUSTED, "session 's''s memory budget"))
    with pytest.raises(Failed):
        retry("Upload", call)
    assert slept == []


def test_the_rounds_link_tries_a_busy_confirm_again():
    from types import SimpleNamespace

    from parties.client import GrpcLink
    from protos.ppcsim.v1 import session_pb2

    answers = [Failed(grpc.StatusCode.RESOURCE_EXHAUSTED, "party 'a' of session 's' has 16 calls in flight, the cap "
                                                          "per party (server busy: try again once a call ends)"),
               session_pb2.ConfirmReply()]

    def confirm(request, timeout, metadata):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    client = SimpleNamespace(session="s", party="a", metadata=(), stub=SimpleNamespace(Confirm=confirm))
    retry, slept, log = policy()
    assert GrpcLink(client, lambda: 30.0, retry).confirm([]) == [] and slept == [0.25]
    assert "party a: Confirm: the coordinator is busy" in log.getvalue()
