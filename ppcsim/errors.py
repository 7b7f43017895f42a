"""The error a run reports when it cannot finish (a party or the session failed, or the deadline passed)."""


class RunError(RuntimeError):
    """The run could not finish: a party failed, the session failed, or the deadline passed."""


class UsageError(ValueError):
    """A command-line argument, or a combination of them, that cannot be used; names the option."""
