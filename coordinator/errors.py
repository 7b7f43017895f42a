"""Errors the coordinator reports back to a party, naming the party and field at fault."""


class SessionError(ValueError):
    """A request or upload that the session refuses, or a session that cannot finish."""


class InvalidArgument(SessionError):
    """A request whose content is wrong whatever the session's state (INVALID_ARGUMENT)."""


class PermissionDenied(SessionError):
    """A party asking for what only another party may do (PERMISSION_DENIED)."""


class FailedPrecondition(SessionError):
    """A request that cannot go on because of the session's state, whatever the RPC (FAILED_PRECONDITION)."""


class ResourceExhausted(SessionError):
    """A call or upload past one of the coordinator's caps, which the message names (RESOURCE_EXHAUSTED)."""
