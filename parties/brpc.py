"""brpc's baidu_std framing, as far as an SPU tunnel reads it (parties.spu_run): where each call a program
sends begins and ends, its correlation id, and the answer SPU's runtime gives to every message it receives.

A call is "PRPC", the body's size and the meta's size (4 bytes big-endian each), then the body: the meta (a
protobuf RpcMeta, whose field 4 is the call's correlation id) and the message. docs/protocol.md (the MPC relay)
says what a party's tunnel answers.
"""

from __future__ import annotations

import struct

from parties.serde import varint

#: A call's first bytes, and the size of its header (the magic and the two sizes).
BRPC_MAGIC, BRPC_HEADER = b"PRPC", 12


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("a varint runs past the meta's end")
        byte = data[at]
        value, shift, at = value | (byte & 0x7F) << shift, shift + 7, at + 1
        if not byte & 0x80:
            return value, at


def correlation_id(meta: bytes) -> int:
    """The correlation id (field 4) of brpc's RpcMeta ``meta``; ValueError if it has none or does not parse."""
    at = 0
    while at < len(meta):
        key, at = _read_varint(meta, at)
        field, kind = key >> 3, key & 7
        if kind == 0:
            value, at = _read_varint(meta, at)
            if field == 4:
                return value
        elif kind == 2:
            size, at = _read_varint(meta, at)
            at += size
        elif kind in (1, 5):
            at += 8 if kind == 1 else 4
        else:
            raise ValueError(f"wire type {kind} in brpc's meta")
    raise ValueError("brpc's meta has no correlation id")


def brpc_answer(call: int) -> bytes:
    """The answer SPU's runtime (yacl's link) gives every message it receives, to call ``call``: the meta
    ``{response {error_code: 0}, compress_type: 0, correlation_id: call}`` and yacl's PushResponse with an empty
    header (error code 0: received)."""
    meta = b"\x12\x02\x08\x00\x18\x00\x20" + varint(call)
    body = meta + b"\x0a\x00"
    return BRPC_MAGIC + struct.pack(">II", len(body), len(meta)) + body


class BrpcCalls:
    """The calls a program sends on one brpc connection, however its bytes were cut: ``feed`` takes the next
    bytes and gives the correlation ids of the calls whose header and meta they completed; ValueError if the
    bytes are not baidu_std."""

    def __init__(self) -> None:
        self.head = b""  # the current call's header and meta, as far as read
        self.skip = 0  # the current call's message: bytes still to pass

    def feed(self, data: bytes) -> list[int]:
        calls, at = [], 0
        while at < len(data):
            if self.skip:
                take = min(self.skip, len(data) - at)
                self.skip, at = self.skip - take, at + take
                continue
            if len(self.head) < BRPC_HEADER:
                take = min(BRPC_HEADER - len(self.head), len(data) - at)
                self.head, at = self.head + data[at:at + take], at + take
                if len(self.head) < BRPC_HEADER:
                    break
                if not self.head.startswith(BRPC_MAGIC):
                    raise ValueError(f"a call begins {self.head[:4]!r}, not {BRPC_MAGIC!r}")
            body, meta = struct.unpack_from(">II", self.head, 4)
            if meta > body:
                raise ValueError(f"a call's meta ({meta} bytes) is longer than its body ({body})")
            take = min(BRPC_HEADER + meta - len(self.head), len(data) - at)
            self.head, at = self.head + data[at:at + take], at + take
            if len(self.head) == BRPC_HEADER + meta:
                calls.append(correlation_id(self.head[BRPC_HEADER:]))
                self.head, self.skip = b"", body - meta
        return calls
