"""Streams and tables that stop short or come out of order get a clear error, not an AttributeError."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from parties.client import CoordinatorClient
from parties.errors import PartyError
from protos.ppcsim.v1 import array_pb2, session_pb2


def _client(messages: list[session_pb2.ResultMessage]) -> CoordinatorClient:
    client = CoordinatorClient("127.0.0.1:9", "s", "a", tls=False)  # no call reaches the channel
    client.stub = SimpleNamespace(GetResult=lambda request, timeout, metadata: iter(messages))
    return client


def _labels(values: list[int]) -> session_pb2.ResultMessage:
    data = np.asarray(values, dtype="<i4").tobytes()
    return session_pb2.ResultMessage(labels=array_pb2.ArrayChunk(array=0, offset=0, data=data))


def test_the_result_reads_the_header_then_the_labels():
    header = session_pb2.ResultHeader(algorithm="kmeans", n_clusters=2, n_joined=3, n_labels=3)
    client = _client([session_pb2.ResultMessage(header=header), _labels([1, 0, -2])])
    try:
        result = client.result(timeout=1)
    finally:
        client.close()
    assert result.header.n_labels == 3
    assert result.labels.tolist() == [1, 0, -2]


@pytest.mark.parametrize(
    ("messages", "message"),
    [([], "ended without a header"), ([_labels([1])], "labels before the result's header")],
    ids=["empty", "labels-first"],
)
def test_a_result_stream_without_its_header_is_a_party_error(messages, message):
    client = _client(messages)
    try:
        with pytest.raises(PartyError, match=message):
            client.result(timeout=1)
    finally:
        client.close()
