"""The coordinator's computation, apart from session state and transport: join, combine, embed, cluster.

``pipeline`` takes what the parties uploaded and returns the outcome every
party is told. It knows nothing of sessions, deadlines, RPCs or the ledger;
the session calls it once every upload is in, and tests and benchmarks may
call it directly on contributions they made.

Memory: with ``keep=False`` the pipeline uses its inputs up as it goes. It is
the one place that does so (:func:`let_go`): once combined, every party's
arrays and running sums are given back, and the clustering then works on the
combined dissimilarities in place (``coordinator.linkage``), which are dropped
after. The coordinator's peak memory for dissimilarities then stays near one
condensed matrix (``bench/osbr_memory.py``); with ``keep=True`` (the default)
nothing given is changed, so the uploads can still be written to ``sent/``
and replayed by the observer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from coordinator.clustering import ClusteringSpec, cluster
from coordinator.combine import combine
from coordinator.embed import embed, requested_embedding
from coordinator.join import Join, join_ids
from coordinator.matrix import FeatureMatrix
from coordinator.sums import PairSums
from coordinator.types import Contribution, Outcome

__all__ = ["Outcome", "labels_by_party", "let_go", "pipeline"]


def let_go(contributions: Sequence[Contribution], sums: PairSums | None) -> None:
    """Give back what ``combine`` has read: each party's arrays (and its upload's buffers) and the running sums.

    The combined result keeps what it still needs (a sum over the same ids
    in the same order is the combined matrix itself), nothing else does.
    """
    for c in contributions:
        c.arrays = {}
        if c.release is not None:
            c.release()
    if sums is not None:
        sums.release()


def labels_by_party(contributions: Sequence[Contribution], join: Join, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Each party's labels in its own row order: -2 for its records that were not joined."""
    out = {}
    for c in contributions:
        own = np.full(len(c.ids), -2, dtype=np.int32)
        own[join.index[c.party]] = labels
        out[c.party] = own
    return out


def pipeline(
    contributions: Sequence[Contribution],
    spec: ClusteringSpec,
    sums: PairSums | None = None,
    *,
    keep: bool = True,
    clock: Callable[[], float] = time.monotonic,
    matrix: FeatureMatrix | None = None,
) -> Outcome:
    """Join ``contributions`` on id, combine them, embed if asked, cluster; the parties' shared outcome.

    Parameters
    ----------
    contributions
        One per party, in the session's party order.
    spec
        The clustering (its ``seed`` also seeds an embedding such as nmds).
    sums
        The dissimilarity uploads already summed on arrival (``coordinator.sums``),
        when the coordinator keeps no uploads; None when every array is in
        ``contributions``.
    keep
        False to use the inputs up as they are read (see the module docstring).
    clock
        Seconds, for the stage timings in ``Outcome.seconds``.
    matrix
        The feature uploads written in place as they arrived (``coordinator.matrix``;
        kept uploads are views of it); clustered as it is when the join keeps
        every party's rows in order (a copy of it with ``keep``).

    Raises
    ------
    SessionError
        When the contributions cannot be joined or combined (no common id,
        different metrics, different embeddings, too few records to cluster).
    """
    t = clock()
    joined = join_ids({c.party: c.ids for c in contributions})
    combined = combine(list(contributions), joined, sums, matrix)
    if not keep:
        let_go(contributions, sums)
    ask = requested_embedding([c for c in contributions if c.is_dissimilarity])
    if ask:
        combined = embed(combined, ask, spec.seed)
    seconds = {"join_seconds": clock() - t}
    t = clock()
    labels = cluster(spec, combined, overwrite=not keep)
    if not keep:
        combined.dissimilarity = None  # used up by the clustering, in place; nothing else reads it
    seconds["cluster_seconds"] = clock() - t
    return Outcome(joined, combined, labels, labels_by_party(contributions, joined, labels), seconds)
