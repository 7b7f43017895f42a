"""The gRPC method table of the Coordinator service, with every request decoded safely at the edge.

gRPC's asyncio server answers a request that does not decode with UNKNOWN
and logs a traceback; here every request is parsed by :func:`_safe`, which
hands the servicer an :class:`Undecodable` instead, answered INVALID_ARGUMENT
naming the message type. Upload messages are decoded as they arrive
(coordinator.wire.serde.upload_received), sized by the bytes they came in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc

from coordinator.wire import serde
from protos.ppcsim.v1 import session_pb2_grpc


@dataclass(frozen=True)
class Undecodable:
    """A message gRPC received that does not decode (not protobuf, or a string that is not UTF-8)."""

    kind: str

    def explain(self) -> str:
        return f"not a valid {self.kind} (not protobuf, or a string that is not UTF-8)"


def _safe(parse: Callable[[bytes], object], kind: str) -> Callable[[bytes], object]:
    """``parse``, but an Undecodable for bytes it cannot decode, so that the servicer answers INVALID_ARGUMENT
    (gRPC's asyncio server would answer UNKNOWN and log a traceback)."""
    def parsed(raw: bytes):
        try:
            return parse(raw)
        except Exception:  # noqa: BLE001 - DecodeError, or anything else protobuf raises on hostile bytes
            return Undecodable(kind)
    return parsed


def _refuse_undecodable(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """``handler`` with its request decoded by _safe and refused with INVALID_ARGUMENT when it does not decode."""
    if handler.unary_unary is not None:
        behaviour = handler.unary_unary

        async def unary(request, context):
            if isinstance(request, Undecodable):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request is {request.explain()}")
            return await behaviour(request, context)

        return grpc.unary_unary_rpc_method_handler(unary, request_deserializer=handler.request_deserializer,
                                                   response_serializer=handler.response_serializer)
    if handler.unary_stream is not None:
        streaming = handler.unary_stream

        async def unary_stream(request, context):
            if isinstance(request, Undecodable):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request is {request.explain()}")
            async for message in streaming(request, context):
                yield message

        return grpc.unary_stream_rpc_method_handler(unary_stream, request_deserializer=handler.request_deserializer,
                                                    response_serializer=handler.response_serializer)
    return handler  # client streams: the servicer checks each message (CoordinatorServicer._next)


def register(servicer: session_pb2_grpc.CoordinatorServicer, server) -> None:
    """Add ``servicer`` to ``server`` with the generated method table, but every request decoded by _safe, and
    Upload messages decoded as they arrive (coordinator.wire.serde.upload_received), so that the ledger counts
    each by the bytes it arrived in (not by serialising it again) and its chunk's bytes are read out once."""

    class Table:  # takes the generated table in place of a server
        def add_generic_rpc_handlers(self, handlers):
            pass

        def add_registered_method_handlers(self, service, methods):
            self.service, self.methods = service, dict(methods)

    table = Table()
    session_pb2_grpc.add_CoordinatorServicer_to_server(servicer, table)
    methods = {}
    for name, h in table.methods.items():
        parse = serde.upload_received if name == "Upload" else h.request_deserializer
        kind = serde.REQUESTS.get(name, "request")
        made = {"unary_unary": grpc.unary_unary_rpc_method_handler, "unary_stream": grpc.unary_stream_rpc_method_handler,
                "stream_unary": grpc.stream_unary_rpc_method_handler,
                "stream_stream": grpc.stream_stream_rpc_method_handler}
        shape = next(k for k in made if getattr(h, k) is not None)
        methods[name] = _refuse_undecodable(made[shape](getattr(h, shape), request_deserializer=_safe(parse, kind),
                                                        response_serializer=h.response_serializer))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(table.service, methods),))
    server.add_registered_method_handlers(table.service, methods)

