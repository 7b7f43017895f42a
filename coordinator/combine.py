"""Turn the parties' uploads, joined on id, into one thing to cluster.

Feature uploads (``drbt``, ``none``) are concatenated column-wise: the joined
data equal D * blockdiag(R_1..R_k) (004 §5.3). Dissimilarity uploads
(``osbr``, ``nmds``) are added in the form that combines exactly (reference
§4): squared Euclidean distances, eq. 5 numerators and denominators, or eq. 4
counts. Feature blocks beside Euclidean dissimilarities become squared
distances too.
"""

from __future__ import annotations

import numpy as np

from coordinator.condensed import condensed_index, reorder_condensed
from coordinator.errors import SessionError
from coordinator.join import Join
from coordinator.types import Combined, Contribution

__all__ = ["OSBR_ARRAYS", "Combined", "Contribution", "check_osbr_upload", "combine", "condensed_index",
           "reorder_condensed"]

#: Arrays an osbr upload must carry, by metric ("denominator" may instead be the "attributes" parameter).
OSBR_ARRAYS = {"euclidean": {"sqdist"}, "gower": {"numerator"}, "jaccard": {"q", "rs"}}


def check_osbr_upload(party: str, params: dict[str, str], names: set[str]) -> None:
    """SessionError unless a dissimilarity upload carries the arrays its metric needs."""
    metric = params.get("metric", "")
    if metric not in OSBR_ARRAYS:
        raise SessionError(f"party '{party}': osbr metric {metric!r} is not one of {', '.join(OSBR_ARRAYS)}")
    needed = set(OSBR_ARRAYS[metric])
    allowed = needed | ({"denominator"} if metric == "gower" else set())
    if not needed <= names or not names <= allowed:
        raise SessionError(f"party '{party}': osbr/{metric} sends arrays {sorted(needed)}, got {sorted(names)}")
    if metric == "gower" and "denominator" not in names:
        try:
            int(params.get("attributes", ""))
        except ValueError:
            raise SessionError(f"party '{party}': osbr/gower without a denominator array needs 'attributes'") from None


def _block(c: Contribution, join: Join) -> np.ndarray:
    """A feature party's rows, in the joined order."""
    rows = np.concatenate(list(c.arrays.values()), axis=1) if len(c.arrays) > 1 else next(iter(c.arrays.values()))
    index = join.index[c.party]
    if len(index) == len(rows) and np.array_equal(index, np.arange(len(rows))):
        return rows
    return rows[index]


def combine(contributions: list[Contribution], join: Join, sums=None) -> Combined:
    """Join every party's contribution on id and combine them (see the module docstring).

    A mixed consortium (feature parties beside Euclidean dissimilarity
    parties) is combined in the one form both have exactly: squared Euclidean
    distances per block, which add across blocks (reference §4).
    ``sums`` (coordinator.sums.PairSums), when given, already holds the
    dissimilarity arrays summed on arrival; it is used up (worked on in place).
    """
    features = [c for c in contributions if not c.is_dissimilarity]
    if len(features) == len(contributions):
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
    if features and metric != "euclidean":
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

    parties = ", ".join(c.party for c in contributions)
    if metric == "euclidean":
        from scipy.spatial.distance import pdist  # only for feature blocks beside dissimilarities

        squared = total("sqdist")
        for c in features:
            squared += pdist(_block(c, join), "sqeuclidean")
        converted = (f"; features of {', '.join(c.party for c in features)} turned into squared distances "
                     "at the coordinator and added") if features else ""
        return Combined(dissimilarity=np.sqrt(squared, out=squared),
                        description=f"eq. 3: root of the summed squared distances of {parties}{converted}")
    if metric == "jaccard":
        q, rs = total("q"), total("rs")
        d = np.divide(rs, q + rs, out=np.zeros_like(rs), where=(q + rs) > 0)
        return Combined(dissimilarity=d, description=f"eq. 4: summed counts r+s / (q+r+s) of {parties}")
    numerator = total("numerator")
    counted = [c for c in contributions if "denominator" not in c.names]  # a constant: the party's attribute count
    denominator = total("denominator") if len(counted) < len(contributions) else np.zeros_like(numerator)
    denominator += sum(int(c.params["attributes"]) for c in counted)
    d = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)
    return Combined(dissimilarity=d, description=f"eq. 5: summed numerators / summed denominators of {parties}")
