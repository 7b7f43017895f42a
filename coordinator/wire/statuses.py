"""The gRPC status of each kind of SessionError (coordinator.errors): how the servicer and the stream readers
answer a refusal."""

from __future__ import annotations

import grpc

from coordinator.errors import FailedPrecondition, InvalidArgument, PermissionDenied, ResourceExhausted

#: The gRPC status of each kind of SessionError (the first that matches).
STATUSES = (
    (InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (FailedPrecondition, grpc.StatusCode.FAILED_PRECONDITION),
    (ResourceExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
)


def status_of(exc: object, default: grpc.StatusCode) -> grpc.StatusCode:
    """The status of ``exc``'s kind (``STATUSES``), else ``default`` (for any other error, or a text)."""
    return next((code for kind, code in STATUSES if isinstance(exc, kind)), default)
