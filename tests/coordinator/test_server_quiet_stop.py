"""The coordinator's event loop drops only gRPC's stale-socket error once its server is stopping
(coordinator.server.quiet_once_stopping): ``ppc coordinator`` printed it as a traceback at exit now and then."""

from __future__ import annotations

import errno
import threading

from coordinator.server import quiet_once_stopping


class Loop:
    def __init__(self):
        self.passed = []

    def default_exception_handler(self, context):
        self.passed.append(context)


def _context(error):
    return {"message": "Exception in callback None()", "exception": error}


def test_the_stale_socket_error_is_dropped_only_once_the_server_is_stopping():
    stopping, loop = threading.Event(), Loop()
    handle = quiet_once_stopping(stopping)
    stale = OSError(errno.EBADF, "Bad file descriptor")
    handle(loop, _context(stale))  # while serving: a closed socket is news, so it is reported
    assert [c["exception"] for c in loop.passed] == [stale]
    stopping.set()
    handle(loop, _context(stale))
    assert len(loop.passed) == 1
    others = [OSError(errno.ECONNRESET, "reset"), RuntimeError("a bug"), None]
    for error in others:
        handle(loop, _context(error))
    assert [c["exception"] for c in loop.passed[1:]] == others
