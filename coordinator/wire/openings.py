"""How each client stream must begin: its first message read within ``limits.first_message_seconds``
(``first``), and of the kind that opens it (an upload's header, PostDistances' header, RelayOpen). A stream
that does not begin so is refused with :class:`Refused`, whose status and text the servicer answers with."""

from __future__ import annotations

import grpc

from coordinator.messages import UploadHeader
from coordinator.wire.streams import Garbled, Silent, Streams


class Refused(Exception):
    """A stream that does not begin as it must: the status to end its call with, and why."""

    def __init__(self, code: grpc.StatusCode, text: str):
        super().__init__(text)
        self.code, self.text = code, text


async def first(streams: Streams, request_iterator, kind: str):
    """The stream's first message (None: it ended without any), within ``first_message_seconds``."""
    seconds = streams.limits.first_message_seconds
    try:
        return await streams.next(request_iterator, seconds)
    except Garbled as exc:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, f"{kind}: the first message is {exc}") from None
    except Silent:
        raise Refused(grpc.StatusCode.DEADLINE_EXCEEDED, f"{kind}: no first message within {seconds:g} s") from None


def upload_header(first) -> UploadHeader:
    """An upload's first message (coordinator.messages.Received) must carry its header."""
    if first is None:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                      "an upload starts with its header; the stream ended without any message")
    header = first.part
    if not isinstance(header, UploadHeader):
        part = {"IdPart": "ids", "Chunk": "chunk"}.get(type(header).__name__)
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT,
                      f"an upload starts with its header; its first message carries {part or 'nothing'}")
    return header


def distances_header(first):
    """PostDistances' first message must carry its header; the header (session, party)."""
    if first is None or first.WhichOneof("part") != "header":
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "PostDistances starts with its header")
    return first.header


def relay_open(first):
    """A Relay stream's first message must be its RelayOpen; the opening (session, party)."""
    if first is None or first.WhichOneof("part") != "open":
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "Relay starts with RelayOpen; the stream " + (
            "ended without any message" if first is None else f"began with {first.WhichOneof('part') or 'an empty message'}"))
    return first.open
