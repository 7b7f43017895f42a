"""The relay of the parties' confirmations: each tells every other, through us, what we told it.

Before round 0 of a secure-aggregation session every party sends every other
party a MAC of each field of what the coordinator told it (the session's
public parameters, the sequence of joined records), under a key derived from
the two parties' X25519 secret (parties.secagg.confirmation_tags). The
coordinator cannot compute that key, so it can neither read the tags nor
forge one: a coordinator that told two parties different things is caught by
both before either posts a partial distance (docs/secure-aggregation.md).
Here the coordinator only checks the tags' shape, keeps them and hands each
party the tags addressed to it once every party has posted.
"""

from __future__ import annotations

import threading

from coordinator.errors import FailedPrecondition, InvalidArgument, SessionError
from coordinator.messages import ConfirmPost, ConfirmTag
from coordinator.text import shown

#: Bytes of one tag (HMAC-SHA256), the longest field name, the most tags one party may address to another.
MAC_BYTES, FIELD_CHARS, TAGS_PER_PARTY = 32, 64, 64
#: Most bytes of a party's refusal kept in the session's error.
REFUSAL_CHARS = 1024


class Confirmations:
    """The tags each party posted, under a lock of their own (the session's waits read ``complete`` under the
    session's lock; nothing here takes the session's)."""

    def __init__(self, parties: tuple[str, ...]):
        self.parties = parties
        self._lock = threading.Lock()
        self._tags: dict[str, dict[tuple[str, str], bytes]] = {}

    def keep(self, party: str, tags: dict[tuple[str, str], bytes]) -> None:
        """Keep ``party``'s first post; a repeat must be the same (the asynchronous server runs a call again)."""
        with self._lock:
            kept = self._tags.setdefault(party, tags)
        if kept != tags:
            raise FailedPrecondition(f"party '{party}': posted other confirmations than its first; a party "
                                     "confirms once per session")

    def complete(self) -> bool:
        with self._lock:
            return len(self._tags) == len(self.parties)

    def missing(self) -> list[str]:
        with self._lock:
            return [p for p in self.parties if p not in self._tags]

    def to(self, party: str) -> list[ConfirmTag]:
        """The tags every other party addressed to ``party``."""
        with self._lock:
            return [ConfirmTag(to=party, sender=sender, field=field, mac=mac)
                    for sender in self.parties if sender != party
                    for (to, field), mac in self._tags[sender].items() if to == party]


def _checked(session, request: ConfirmPost) -> dict[tuple[str, str], bytes]:
    """The request's tags by (to, field); InvalidArgument naming the first that is malformed."""
    party = request.party
    others = [p for p in session.spec.parties if p != party]
    tags: dict[tuple[str, str], bytes] = {}
    for tag in request.tags:
        if tag.to not in others:
            raise InvalidArgument(f"party '{party}': a confirmation addressed to '{shown(tag.to)}', which is not "
                                  f"another party of session '{session.spec.name}'")
        if not tag.field or len(tag.field) > FIELD_CHARS:
            raise InvalidArgument(f"party '{party}': a confirmation's field must have 1 to {FIELD_CHARS} "
                                  f"characters, not {len(tag.field)}")
        if len(tag.mac) != MAC_BYTES:
            raise InvalidArgument(f"party '{party}': the confirmation of '{shown(tag.field)}' to '{shown(tag.to)}' has "
                                  f"{len(tag.mac)} bytes; a tag has {MAC_BYTES}")
        if (tag.to, tag.field) in tags:
            raise InvalidArgument(f"party '{party}': confirms '{shown(tag.field)}' to '{shown(tag.to)}' twice")
        tags[(tag.to, tag.field)] = tag.mac
    for to in others:
        if sum(1 for t, _ in tags if t == to) > TAGS_PER_PARTY:
            raise InvalidArgument(f"party '{party}': more than {TAGS_PER_PARTY} confirmations to '{to}'")
    return tags


def confirm(session, request: ConfirmPost) -> list[ConfirmTag]:
    """Keep ``request.party``'s tags; once every party posted, the tags addressed to it (waits until then).

    Run again by the asynchronous server when it would wait (coordinator.waits): a repeat of the same tags is
    the same post."""
    party = request.party
    if request.refusal:
        # escaped: the reason reaches every other party and the log, and must not carry control characters
        session.fail(f"party '{party}' refused what the coordinator sent it: {shown(request.refusal, REFUSAL_CHARS)}")
        raise FailedPrecondition(f"session '{session.spec.name}' failed: party '{party}' refused")
    tags = _checked(session, request)
    if session.failed:
        raise SessionError(f"session '{session.spec.name}' failed: {session.error}")
    confirmations = session.confirmations
    confirmations.keep(party, tags)
    session.notify()
    session.wait_for(confirmations.complete, session.seconds_left() + 1.0,
                     lambda: "not every party confirmed in time (waiting for " + ", ".join(confirmations.missing())
                             + ")")
    return confirmations.to(party)
