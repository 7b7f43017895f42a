"""What a finished (or failed) session tells its report: one value, read once, instead of the session's internals.

``summarise(session)`` reads the session under no further contract than
this module's: the state and error, the outcome, each party's accepted
upload (rows, array shapes, how its ids travelled), the bytes counted, the
refusals, how each party's connection was secured, the timing and memory,
and the protocol's own sections (``SessionProtocol.summary``: the rounds of
secure aggregation, the MPC's relay). The report (ppcsim.report.outputs.build)
reads this value and no attribute of the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coordinator.clustering import ClusteringSpec
from coordinator.types import Outcome
from coordinator.wire.serde import id_encoding_name


@dataclass(frozen=True)
class UploadSummary:
    """One party's accepted upload: its records, each array's shape, how its ids travelled and their bytes
    (the packed block, or the characters of text ids)."""

    rows: int
    shapes: dict[str, list[int]]
    id_encoding: str
    id_bytes: int


@dataclass(frozen=True)
class SessionSummary:
    """A session as its report reads it (``summarise``)."""

    name: str
    parties: tuple[str, ...]
    state: str
    error: str
    clustering: ClusteringSpec
    outcome: Outcome | None
    #: Per party with an accepted upload.
    uploads: dict[str, UploadSummary]
    #: Per party: the bytes predicted, counted and refused (Session.byte_summary).
    bytes: dict[str, dict]
    #: The ledger's totals per party and direction, and every entry.
    totals: dict[str, dict[str, dict[str, int]]]
    ledger: list[dict]
    refused: list[dict]
    #: Per party: how its connection was secured and it was identified.
    protection: dict[str, dict]
    timing: dict[str, float]
    budget_limit: int
    budget_peak: int
    #: The protocol's own sections of the report, by section name (``secure_aggregation``, ``mpc``), from
    #: coordinator.protocols.base.SessionProtocol.summary; empty when it has none.
    sections: dict[str, Any] = field(default_factory=dict)


def summarise(session) -> SessionSummary:
    """The summary of ``session`` (a coordinator.session.Session), as it stands."""
    from coordinator.session import STATE_NAMES

    uploads = {}
    for party, upload in session.uploads.items():
        contribution = session.contributions.get(party)
        if contribution is None:
            continue
        uploads[party] = UploadSummary(
            rows=len(contribution.ids), shapes={a.name: list(a.shape) for a in upload.plan.arrays},
            id_encoding=id_encoding_name(upload.plan.id_encoding),
            id_bytes=int(upload.plan.packed_id_bytes) or int(upload.id_chars))
    return SessionSummary(
        name=session.spec.name, parties=tuple(session.spec.parties), state=STATE_NAMES[session.state],
        error=session.error, clustering=session.spec.clustering, outcome=session.outcome, uploads=uploads,
        bytes=session.byte_summary(), totals=session.ledger.totals(), ledger=session.ledger.as_dicts(),
        refused=[dict(r.__dict__) for r in session.refused], protection=dict(session.protection),
        timing=dict(session.timing), budget_limit=session.budget.limit, budget_peak=session.budget.peak,
        sections=session.protocol.summary() or {})
