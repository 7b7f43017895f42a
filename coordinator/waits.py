"""Waits that hold no thread: a handler run by the asynchronous server says it would wait instead of blocking.

The plain handlers (coordinator.handlers, coordinator.protocols.secagg) wait on their
session's condition variable, which suits the in-process simulation. The
gRPC server runs them under :data:`PROBING`: a wait that is not over raises
:class:`WouldWait` with what it waits for, the server awaits
``Session.until`` (a coroutine, no thread) and runs the handler again.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

#: True while the asynchronous server runs a handler.
PROBING: contextvars.ContextVar[bool] = contextvars.ContextVar("PROBING", default=False)


class WouldWait(Exception):
    """A handler run under PROBING reached a wait that is not over; ``ready`` says when it will be."""

    def __init__(self, ready: Callable[[], bool]):
        super().__init__("the call waits for an event of its session")
        self.ready = ready
