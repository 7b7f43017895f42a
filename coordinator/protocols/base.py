"""A session's protocol as the coordinator runs it: the interface a protocol implements, and their registry.

A protocol is a class registered by its name (``[clustering] protocol``) in
``PROTOCOLS``, as disguises are in parties.methods and algorithms in
coordinator.clustering. The session (coordinator.session) holds the state:
who joined, the uploads, the contributions, its deadline and its result; it
makes one instance of its protocol's class when it is created and calls it:

- ``start()`` once, when the session is made (e.g. to import what it will
  need while the parties start);
- ``begin()`` once every party's upload is in (the session is then
  CLUSTERING): from there the protocol drives the session to its end, by
  ``session.complete(outcome)`` or ``session.fail(why)``, in this thread or
  in the rounds its own RPCs serve (coordinator.protocols.secagg, .mpc);
- ``summary()`` when the run is reported: the protocol's own section of the
  report (its rounds, what it opened), or None.

What both sides know of the protocol before either runs it (whether the
parties keep their columns, upload ids only, need pair keys, which terms
Join announces) is its ``ProtocolTerms`` in protos.clustering, which the
class names as ``terms``. docs/writing-a-protocol.md shows a whole one.
"""

from __future__ import annotations

from typing import Any, ClassVar

from coordinator.errors import SessionError
from protos.clustering import ProtocolTerms, register_protocol


class SessionProtocol:
    """The coordinator's part of one protocol for one session (``session``); subclass it and ``register``."""

    #: The protocol's name and what both sides know of it (protos.clustering.PROTOCOL_TERMS).
    terms: ClassVar[ProtocolTerms]

    def __init__(self, session: Any):
        """``session``: the coordinator.session.Session this protocol drives (untyped here: the session imports
        its protocols, not the other way round)."""
        self.session = session

    @property
    def name(self) -> str:
        return self.terms.name

    def start(self) -> None:
        """The session was made: prepare what ``begin`` will need (nothing by default)."""

    def begin(self) -> None:
        """Every party's upload is in: run the protocol to ``session.complete(outcome)`` or ``session.fail``."""
        raise NotImplementedError

    def summary(self) -> dict[str, Any] | None:
        """The protocol's sections of the report by name (``secure_aggregation``, ``mpc``: what it ran, what it
        opened, its bytes against the prediction), read into coordinator.summary.SessionSummary; None: none."""
        return None


#: The registered protocols, by the name ``[clustering] protocol`` gives.
PROTOCOLS: dict[str, type[SessionProtocol]] = {}


def register(cls: type[SessionProtocol]) -> type[SessionProtocol]:
    """Register ``cls`` (a decorator): the coordinator runs sessions of ``cls.terms.name`` with it, and the
    ``[clustering]`` schema accepts the name."""
    register_protocol(cls.terms)
    PROTOCOLS[cls.terms.name] = cls
    return cls


def protocol_class(name: str) -> type[SessionProtocol]:
    """The class registered as ``name``; SessionError naming the registered ones otherwise."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise SessionError(f"this coordinator runs no protocol '{name}' (it runs {', '.join(PROTOCOLS)})") from None
