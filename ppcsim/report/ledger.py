"""The ledger's totals, split by who sent what: the parties' protocol traffic, the helper's, and status polls.

The coordinator's ledger (coordinator.ledger) counts every message it serves.
Three kinds of caller share it, and only the first crosses a party's
connection, where a relay counts its wire bytes:

* the **parties**, whose protocol messages are the session's traffic: the
  report's ``communication.totals`` and ``by_party``, the console's table and
  its ``messages:`` line, all below the wire bytes the relays counted;
* the **helper** (an MPC session of two parties with ``helper = true``): the
  third share-holder runs in the coordinator's own process, so its Relay
  stream crosses no connection and has no wire bytes. Its messages are shown
  apart (``communication.helper``) and left out of the totals; what it sends to
  a party is also in that party's ``down`` row, once, as the party receives it;
* **status polls** (``GetStatus``, ledger entries of party ``""``): asked by
  whoever watches a session (``ppc status``, a by-hand party's progress line),
  anonymous, and no part of any protocol: shown apart
  (``communication.status``) and left out of the totals.

Each layer holds the one inside it: wire >= serialized >= payload, on every
line. :func:`layer_problems` says where a report breaks that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ppcsim.report.model import ABSENT, Count, Directions, Report, given

#: The ledger's party name of a status poll (GetStatus is anonymous).
STATUS = ""
#: Why status polls are apart from the protocol's traffic, in words (the console and the page).
STATUS_WHY = "GetStatus, asked by whoever watches the session, no part of the protocol; not in the totals"
#: Why the helper's traffic is apart, in words.
HELPER_WHY = ("the MPC's third share-holder, run in the coordinator's process: no connection, no wire bytes; what it "
              "sends a party is in that party's down bytes; not in the totals")


def _directions(t: Mapping[str, Mapping[str, int]]) -> Directions:
    return Directions(up=Count(**t["up"]), down=Count(**t["down"]))


def _sum(rows: Iterable[Mapping[str, Mapping[str, int]]]) -> Directions:
    rows = list(rows)
    return Directions(**{d: Count(**{k: sum(r[d][k] for r in rows) for k in ("messages", "payload", "serialized")})
                         for d in ("up", "down")})


def split(totals: Mapping[str, Mapping[str, Mapping[str, int]]], parties: Iterable[str]
          ) -> tuple[Directions, dict[str, Directions], Directions | None, Directions | None]:
    """The ledger's ``{caller: {direction: counts}}`` (coordinator.ledger.Ledger.totals) split into the parties'
    total, each party's row, the helper's row and the status polls' (None where there were none).

    Any caller that is neither a party of the session nor a status poll is the coordinator's helper (its
    name is refused to a party where a helper runs)."""
    parties = list(parties)
    mine = {p: totals[p] for p in parties if p in totals}
    others = [t for name, t in totals.items() if name not in mine and name != STATUS]
    return (_sum(mine.values()), {p: _directions(t) for p, t in mine.items()},
            _sum(others) if others else None, _directions(totals[STATUS]) if STATUS in totals else None)


def _words(d: Directions) -> str:
    return (f"up {d.up.messages}, {d.up.serialized:,} B serialized ({d.up.payload:,} B payload); "
            f"down {d.down.messages}, {d.down.serialized:,} B serialized")


def apart_lines(report: Report) -> list[str]:
    """The console's lines for the traffic outside the totals: the helper's and the status polls'."""
    c = report.communication
    lines = []
    if c.helper is not ABSENT:
        lines.append(f"helper ({HELPER_WHY}): {_words(c.helper)}")
    if c.status is not ABSENT:
        lines.append(f"status polls ({STATUS_WHY}): {_words(c.status)}")
    return lines


def most_sent(report: Report) -> tuple[str, int]:
    """The party that sent the most payload bytes up, and those bytes, as the table shows them (an MPC party's
    sealed frames, with its ids and headers)."""
    top = max(report.parties, key=lambda p: p.bytes.payload, default=None)
    return (top.name, top.bytes.payload) if top is not None else ("", 0)


def layer_problems(report: Report) -> list[str]:
    """Every line of ``report`` where a layer holds less than the one inside it (wire >= serialized >= payload),
    in words; empty when every line adds up.

    The lines: each party's bytes (payload, serialized, and wire up where a relay counted it) and its ledger
    row in each direction against its wire bytes; the totals against the sum of the wire bytes; the helper's
    and the status polls' rows (payload <= serialized: they have no wire)."""
    problems = []

    def check(where: str, payload: int, serialized: int, wire: int | None = None) -> None:
        if payload > serialized:
            problems.append(f"{where}: payload {payload:,} B > serialized {serialized:,} B")
        if wire is not None and serialized > wire:
            problems.append(f"{where}: serialized {serialized:,} B > wire {wire:,} B")

    c = report.communication
    for p in report.parties:
        b = p.bytes
        check(f"party {p.name}", b.payload, b.serialized, given(b.wire))
        row = c.by_party.get(p.name)
        if row is not None:
            check(f"party {p.name}, ledger up", row.up.payload, row.up.serialized, given(b.wire))
            check(f"party {p.name}, ledger down", row.down.payload, row.down.serialized, given(b.wire_down))
    ups = [given(p.bytes.wire) for p in report.parties]
    downs = [given(p.bytes.wire_down) for p in report.parties]
    counted = bool(report.parties) and None not in ups and None not in downs
    check("totals up", c.totals.up.payload, c.totals.up.serialized, sum(ups) if counted else None)
    check("totals down", c.totals.down.payload, c.totals.down.serialized, sum(downs) if counted else None)
    for name, apart in (("helper", c.helper), ("status polls", c.status)):
        if isinstance(apart, Directions):
            check(f"{name} up", apart.up.payload, apart.up.serialized)
            check(f"{name} down", apart.down.payload, apart.down.serialized)
    return problems
