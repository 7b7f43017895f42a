"""Start and stop the coordinator's gRPC server."""

from __future__ import annotations

from concurrent import futures

import grpc

from coordinator.errors import SessionError
from coordinator.security import ServerSecurity, is_loopback
from coordinator.servicer import CoordinatorServicer, Registry, register


def start_server(
    listen: str, registry: Registry, *, security: ServerSecurity = ServerSecurity(), max_workers: int = 64
) -> tuple[grpc.Server, int]:
    """Serve ``registry`` on ``listen`` (HOST:PORT; port 0 picks a free one); returns (server, port).

    Plaintext is served on loopback addresses only. Raises SessionError naming
    the address when it cannot be bound (e.g. the port is in use).
    """
    if not security.tls and not is_loopback(listen):
        raise SessionError(f"cannot listen on {listen} in plaintext: plaintext is served on loopback only; "
                           "turn on [security] tls and pass --credentials")
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="coordinator"),
        options=[("grpc.so_reuseport", 0)],
    )
    register(CoordinatorServicer(registry), server)
    try:
        port = server.add_secure_port(listen, security.credentials()) if security.tls else server.add_insecure_port(listen)
    except RuntimeError:
        port = 0
    if port == 0:
        raise SessionError(f"cannot listen on {listen}: the address is in use or not valid")
    server.start()
    return server, port
