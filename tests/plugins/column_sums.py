"""A toy protocol registered as a plug-in: each party uploads, for each of its records, the sum of its
normalised columns; the coordinator adds the parties' sums over the joined records and cuts the totals into
``n_clusters`` bins of equal counts (by rank). It protects nothing: it exists to show that a protocol is its
registry lines on each side (docs/writing-a-protocol.md), and tests/plugins/test_column_sums.py runs it through
real processes with ``PPC_PLUGINS=column_sums``.
"""

from __future__ import annotations

import numpy as np

from coordinator.errors import SessionError
from coordinator.join import join_ids
from coordinator.protocols.base import SessionProtocol
from coordinator.protocols.base import register as register_session
from coordinator.types import Combined, Outcome
from parties.methods import Sent
from parties.protocols import PartyProtocol
from parties.protocols import register as register_party
from parties.serde import upload_messages
from protos.clustering import ProtocolTerms
from protos.serde import Layout

NAME = "column_sums"
TERMS = ProtocolTerms(NAME, columns_at_home=True, terms=("n_clusters",),
                      doc="toy: each record's sum of normalised columns, binned by rank")


def bins(totals: np.ndarray, k: int) -> np.ndarray:
    """Label each total by its rank: the smallest m/k totals 0, the next 1, ... (ties by position)."""
    ranks = np.argsort(np.argsort(totals, kind="stable"), kind="stable")
    return (ranks * k // len(totals)).astype(np.int32)


@register_party
class ColumnSumsParty(PartyProtocol):
    """Upload the ids and one column: each record's sum over the party's normalised columns."""

    terms = TERMS
    doing = "by column sums"

    def run(self, steps, joined, done, peers, ids):
        steps.step = "uploading its column sums"
        sums = done.X.sum(axis=1, keepdims=True)
        client = steps.client
        client.upload(upload_messages(client.session, steps.cfg.name, NAME, {}, done.data.ids if ids is None else ids,
                                      [Sent("sums", sums, Layout.ROWS)], 1, joined.chunk_bytes), timeout=steps.left())
        return None


@register_session
class ColumnSumsSession(SessionProtocol):
    """Join the parties' ids, add their sums, bin the totals (``bins``) and complete the session."""

    terms = TERMS

    def begin(self) -> None:
        session = self.session
        parties = session.spec.parties
        contributions = {p: session.contributions[p] for p in parties}
        try:
            join = join_ids({p: c.ids for p, c in contributions.items()})
        except SessionError as exc:
            session.fail(str(exc))
            return
        totals = sum(np.asarray(contributions[p].arrays["sums"])[join.index[p], 0] for p in parties)
        labels = bins(np.asarray(totals, dtype=np.float64), session.spec.clustering.n_clusters)
        by_party = {}
        for p in parties:
            own = np.full(len(contributions[p].ids), -2, dtype=np.int32)
            own[join.index[p]] = labels
            by_party[p] = own
        combined = Combined(description=f"{NAME}: each record's summed columns over {', '.join(parties)}, binned")
        session.complete(Outcome(join, combined, labels, by_party))
