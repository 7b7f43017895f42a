"""A session's protocol as a party runs it after its Join, registered by the name the coordinator gives.

A party joins, agrees keys when its protocol or its ids need them
(parties.run.Steps), then hands over to the protocol the coordinator named
in ``JoinReply.protocol`` / ``protocol_name`` (protos.vocabulary): the
class registered under that name in ``PROTOCOLS`` runs the party's steps up
to the result (``run``), which the party then waits for (GetResult) and
checks. What both sides know of the protocol (whether a party keeps its
columns at home, needs pair keys) is its ``ProtocolTerms``
(protos.clustering). docs/writing-a-protocol.md shows a whole protocol.
"""

from __future__ import annotations

from typing import Any, ClassVar

from parties.errors import PartyError
from protos.clustering import PROTOCOL_TERMS, ProtocolTerms, register_protocol
from protos.vocabulary import MPC, SECURE, UPLOAD


class PartyProtocol:
    """A party's part of one protocol; subclass it and ``register``.

    ``run(steps, joined, done, peers, ids)`` is called once the party has
    joined (``joined``: parties.serde.Joined) and agreed its keys:
    ``steps`` is the party's parties.run.Steps (its client, retries,
    deadline, key pair, log and terms), ``done`` its data and disguise
    (parties.run.Disguised), ``peers`` every party's checked key (empty
    unless the protocol's terms ask for pair keys or the ids are
    pseudonymous), ``ids`` its pseudonyms (None: its own ids travel). It
    returns what the party's summary records of its rounds
    (parties.secagg.RoundsResult, parties.mpc.MpcResult), or None.
    """

    terms: ClassVar[ProtocolTerms]
    #: How the party says, in a refusal, that the session runs this protocol ("by secure aggregation").
    doing: ClassVar[str] = ""

    def run(self, steps: Any, joined: Any, done: Any, peers: list, ids: Any) -> Any:
        raise NotImplementedError


#: The registered protocols, by name.
PROTOCOLS: dict[str, type[PartyProtocol]] = {}


def register(cls: type[PartyProtocol]) -> type[PartyProtocol]:
    """Register ``cls`` (a decorator) under its terms' name; the ``[clustering]`` schema then accepts it."""
    register_protocol(cls.terms)
    PROTOCOLS[cls.terms.name] = cls
    return cls


def party_protocol(name: str) -> PartyProtocol:
    """The protocol registered as ``name``, to run; PartyError naming the ones this party knows otherwise."""
    try:
        return PROTOCOLS[name]()
    except KeyError:
        raise PartyError(f"the coordinator runs this session by protocol '{name}', which this party does not know "
                         f"(it knows {', '.join(PROTOCOLS)}): refusing before sending anything") from None


@register
class Upload(PartyProtocol):
    """Upload the disguised arrays once (again from scratch after a dropped connection)."""

    terms = PROTOCOL_TERMS[UPLOAD]
    doing = "by an upload of disguised data"

    def run(self, steps, joined, done, peers, ids):
        steps.upload(joined, done, ids)
        return None


@register
class SecureAggregation(PartyProtocol):
    """The rounds of secure aggregation on the party's own columns (parties.secagg, parties.secagg_labels)."""

    terms = PROTOCOL_TERMS[SECURE]
    doing = "by secure aggregation"

    def run(self, steps, joined, done, peers, ids):
        return steps.secure_rounds(joined, done, peers, ids, steps.reveal)


@register
class Mpc(PartyProtocol):
    """k-means as an MPC over the coordinator's relay (parties.mpc, parties.spu_run)."""

    terms = PROTOCOL_TERMS[MPC]
    doing = "as an MPC"

    def run(self, steps, joined, done, peers, ids):
        return steps.mpc_rounds(joined, done, peers, ids)
