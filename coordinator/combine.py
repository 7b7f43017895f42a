"""Turn the parties' uploads, joined on id, into one thing to cluster.

Feature uploads (``drbt``, ``none``) are concatenated column-wise: the joined
data equal D * blockdiag(R_1..R_k) (004 §5.3). Dissimilarity uploads
(``osbr``, ``nmds``) are added in the combination form their public
``metric`` names (``coordinator.forms``, sums over columns): squared Euclidean
distances, eq. 5 numerators and denominators, or eq. 4 counts. Feature blocks
beside a form that takes them (squared Euclidean distances) become squared
distances too.
"""

from __future__ import annotations

import numpy as np

from coordinator.condensed import condensed_index, reorder_condensed
from coordinator.errors import SessionError
from coordinator.forms import Parts, check_upload, form_of
from coordinator.join import Join
from coordinator.matrix import FeatureMatrix, whole
from coordinator.types import Combined, Contribution

__all__ = ["Combined", "Contribution", "check_upload", "combine", "condensed_index", "reorder_condensed"]

def _identity(c: Contribution, join: Join) -> bool:
    """Whether the join keeps every row of the party, in its own order."""
    index = join.index[c.party]
    return len(index) == len(c.ids) and bool(np.array_equal(index, np.arange(len(index))))


def _block(c: Contribution, join: Join) -> np.ndarray:
    """A feature party's rows, in the joined order."""
    rows = np.concatenate(list(c.arrays.values()), axis=1) if len(c.arrays) > 1 else next(iter(c.arrays.values()))
    return rows if _identity(c, join) else rows[join.index[c.party]]


def combine(contributions: list[Contribution], join: Join, sums=None, matrix: FeatureMatrix | None = None) -> Combined:
    """Join every party's contribution on id and combine them (see the module docstring).

    A mixed consortium (feature parties beside Euclidean dissimilarity
    parties) is combined in the one form both have exactly: squared Euclidean
    distances per block, which add across blocks (004 eq. 3 is a sum over columns).
    ``sums`` (coordinator.sums.PairSums), when given, already holds the
    dissimilarity arrays summed on arrival; it is used up (worked on in place).
    ``matrix`` (coordinator.matrix.FeatureMatrix), when given, holds the
    feature uploads written in place as they arrived: when the join keeps
    every party's rows in its own order, it is the combined matrix (the
    uploads that ended before it existed are moved into it first).
    """
    features = [c for c in contributions if not c.is_dissimilarity]
    if len(features) == len(contributions):
        if all(_identity(c, join) for c in contributions):
            if matrix is not None:
                matrix.adopt(contributions)
            # written in place into one matrix as they arrived (coordinator.matrix): that matrix, not a copy
            clustered = whole([a for c in contributions for a in c.arrays.values()])
            if clustered is not None:
                parts = ", ".join(f"{c.party} ({c.method}, {sum(a.shape[1] for a in c.arrays.values())} dims)"
                                  for c in contributions)
                return Combined(features=clustered, description=f"columns concatenated: {parts}")
        blocks = [_block(c, join) for c in contributions]
        parts = ", ".join(f"{c.party} ({c.method}, {b.shape[1]} dims)" for c, b in zip(contributions, blocks))
        return Combined(features=np.hstack(blocks), description=f"columns concatenated: {parts}")
    return _combine_dissimilarities([c for c in contributions if c.is_dissimilarity], join, features, sums)


def _combine_dissimilarities(contributions: list[Contribution], join: Join, features: list[Contribution],
                             sums) -> Combined:
    metrics = {c.params["metric"] for c in contributions}
    if len(metrics) > 1:
        used = ", ".join(f"{c.party}: {c.params['metric']}" for c in contributions)
        raise SessionError(f"dissimilarity parties must use one metric to be combined ({used})")
    metric = metrics.pop()
    form = form_of(contributions[0].party, contributions[0].params)  # checked on arrival, unless made by hand
    if features and not form.features:
        raise SessionError(
            f"parties {', '.join(c.party for c in features)} send features, which combine exactly only with "
            f"Euclidean dissimilarities, not '{metric}' ({', '.join(c.party for c in contributions)})"
        )
    n = len(join.ids)

    def total(name: str) -> np.ndarray:
        if sums is not None:
            return sums.joined(name, join.ids)
        acc = np.zeros(n * (n - 1) // 2)
        for c in (c for c in contributions if name in c.names):
            acc += reorder_condensed(c.arrays[name], len(c.ids), join.index[c.party])
        return acc

    blocks = [(c, _block(c, join)) for c in features]
    return form.combine(Parts(contributions, total, n, blocks))
