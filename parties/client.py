"""The party's side of the wire: Join, a chunked Upload, and GetResult."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import numpy as np

from parties.methods import Sent
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc
from protos.serde import labels_spec, ArrayAssembler, array_chunks, array_spec

#: Ids per IdChunk message; keeps each message well under gRPC's 4 MiB limit.
IDS_PER_CHUNK = 20_000


@dataclass
class Result:
    """What the coordinator returned to this party."""

    header: session_pb2.ResultHeader
    labels: np.ndarray  # int32, aligned with the party's ids; -1 noise, -2 not joined


def upload_messages(
    session: str,
    party: str,
    method: str,
    params: dict[str, str],
    ids: np.ndarray,
    arrays: list[Sent],
    n_columns: int,
    chunk_bytes: int,
) -> Iterator[session_pb2.UploadMessage]:
    """The upload stream: a header, the ids in chunks, then each array in chunks."""
    header = session_pb2.UploadHeader(
        session=session,
        party=party,
        method=method,
        params=params,
        n_ids=len(ids),
        arrays=[array_spec(s.name, s.array, s.layout) for s in arrays],
        n_columns=n_columns,
    )
    yield session_pb2.UploadMessage(header=header)
    id_list = ids.tolist()
    for start in range(0, len(id_list), IDS_PER_CHUNK):
        yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=id_list[start : start + IDS_PER_CHUNK]))
    for index, sent in enumerate(arrays):
        for chunk in array_chunks(index, sent.array, chunk_bytes):
            yield session_pb2.UploadMessage(chunk=chunk)


class CoordinatorClient:
    """A channel to the coordinator for one party of one session."""

    def __init__(self, address: str, session: str, party: str):
        self.session, self.party = session, party
        self.channel = grpc.insecure_channel(address)
        self.stub = session_pb2_grpc.CoordinatorStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def join(self, timeout: float) -> session_pb2.JoinReply:
        """Join the session, waiting up to ``timeout`` s for the coordinator to come up."""
        request = session_pb2.JoinRequest(session=self.session, party=self.party)
        return self.stub.Join(request, timeout=timeout, wait_for_ready=True)

    def upload(self, messages: Iterator[session_pb2.UploadMessage], timeout: float) -> session_pb2.UploadReply:
        return self.stub.Upload(messages, timeout=timeout)

    def result(self, timeout: float) -> Result:
        """Wait for the clustering and return this party's labels."""
        request = session_pb2.ResultRequest(session=self.session, party=self.party)
        header, labels = None, None
        for message in self.stub.GetResult(request, timeout=timeout):
            if message.HasField("header"):
                header = message.header
                labels = ArrayAssembler(labels_spec(header.n_labels))
            else:
                labels.add(message.labels)
        return Result(header=header, labels=labels.array())
