"""Errors the coordinator reports back to a party, naming the party and field at fault."""


class SessionError(ValueError):
    """A request or upload that the session refuses, or a session that cannot finish."""
