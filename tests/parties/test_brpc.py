"""brpc's baidu_std framing as an SPU tunnel reads it (parties.brpc): calls found however their bytes are cut, and
the answer the tunnel gives, byte for byte the one SPU's runtime gave in a real run."""

from __future__ import annotations

import pytest

from conftest import brpc_call
from parties.brpc import BRPC_HEADER, BrpcCalls, brpc_answer, correlation_id

#: A call and its answer as SPU 0.9.5's link sent them on a run's first connection (a party's tunnel read them):
#: the call's correlation id in both, the answer's message yacl's PushResponse with an empty header.
REAL_CALL = bytes.fromhex("50525043000000480000003a0a300a286f72672e696e746572636f6e6e656374696f6e2e6c696e6b2e526563"
                          "6569766572536572766963651204507573681800208280808030120c636f6e6e6563745f30010230")
REAL_ANSWER = bytes.fromhex("505250430000000e0000000c1202080018002082808080300a00")


def test_the_answer_is_the_one_spus_runtime_gives_to_the_call_it_answers():
    assert brpc_answer(correlation_id(REAL_CALL[BRPC_HEADER:BRPC_HEADER + 0x3a])) == REAL_ANSWER


def test_calls_are_found_however_their_bytes_are_cut():
    real = correlation_id(REAL_CALL[BRPC_HEADER:BRPC_HEADER + 0x3a])
    stream = REAL_CALL + brpc_call(7, b"x" * 300) + brpc_call(2**40, b"") + REAL_CALL
    for size in (1, 2, 5, 12, 13, 64, len(stream)):
        calls = BrpcCalls()
        found = [c for i in range(0, len(stream), size) for c in calls.feed(stream[i:i + size])]
        assert found == [real, 7, 2**40, real], size


def test_bytes_that_are_not_brpc_calls_are_refused():
    with pytest.raises(ValueError, match="PRPC"):
        BrpcCalls().feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(ValueError, match="no correlation id"):
        BrpcCalls().feed(b"PRPC" + (2).to_bytes(4, "big") + (2).to_bytes(4, "big") + b"\x18\x00")
