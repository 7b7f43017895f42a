"""Embeddings the coordinator computes from joined dissimilarities before clustering."""

from __future__ import annotations

import warnings

import numpy as np

from coordinator.types import Combined, Contribution
from coordinator.errors import SessionError


def requested_embedding(contributions: list[Contribution]) -> dict[str, str] | None:
    """The embedding every dissimilarity party asked for (``nmds`` and its dims), None if none.

    SessionError if they ask for different ones."""
    asks = {c.party: {k: c.params[k] for k in ("embed", "dims", "n_init") if k in c.params} for c in contributions}
    wanted = {tuple(sorted(a.items())) for a in asks.values()}
    if len(wanted) > 1:
        shown = "; ".join(f"{p}: {a.get('embed', 'none')} {a.get('dims', '')}".strip() for p, a in asks.items())
        raise SessionError(f"the parties ask for different embeddings at the coordinator ({shown})")
    return next(iter(asks.values()), None) or None


def nmds(combined: Combined, ask: dict[str, str], seed: int) -> Combined:
    """Non-metric MDS (Kruskal stress-1, 000 ch. 3) of the joined dissimilarities to ``dims`` features."""
    from scipy.spatial.distance import squareform
    from sklearn.manifold import MDS  # only a coordinator that embeds needs it

    D = squareform(combined.dissimilarity)
    dims, n_init = int(ask["dims"]), int(ask.get("n_init", 4))
    if dims >= D.shape[0]:
        raise SessionError(f"nmds dims = {dims} needs more than {dims} joined records, got {D.shape[0]}")
    model = MDS(n_components=dims, metric_mds=False, metric="precomputed", n_init=n_init, init="random",
                random_state=seed, normalized_stress=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Y = model.fit_transform(D)
    info = {"embedding": "nmds", "dims": dims, "n_init": n_init, "kruskal_stress_1": float(model.stress_),
            "runs_at": "coordinator, on the joined dissimilarities"}
    description = f"non-metric MDS to {dims} dims (stress-1 {model.stress_:.4f}) of {combined.description}"
    return Combined(features=np.asarray(Y, dtype=np.float64), description=description, embedding=info)
