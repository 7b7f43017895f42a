"""Embeddings the coordinator computes from joined dissimilarities before clustering.

A party asks for one with the public ``embed`` parameter of its upload (and
the embedding's own public parameters); ``EMBEDDINGS`` holds, for each name
the coordinator can compute, its function and the parameters every party
must send alike (``Embedding``). A disguise declares the one it asks for
(``Disguise.embedding``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from coordinator.errors import SessionError
from coordinator.types import Combined, Contribution

#: Kruskal's stress-1 (000 eq. 3.12) above this is a poor fit (Kruskal 1964 calls 0.2 "poor"): the run warns.
POOR_STRESS = 0.2
#: SMACOF stops when the relative decrease of the stress falls below this (scikit-learn's ``eps``).
EPS = 1e-7


def requested_embedding(contributions: list[Contribution]) -> dict[str, str] | None:
    """The embedding every dissimilarity party asked for (``nmds`` and its dims), None if none.

    SessionError if they ask for different ones."""
    asks = {c.party: {k: c.params[k] for k in _defining(c.params) if k in c.params} for c in contributions}
    wanted = {tuple(sorted(a.items())) for a in asks.values()}
    if len(wanted) > 1:
        shown = "; ".join(f"{p}: {a.get('embed', 'none')} {a.get('dims', '')}".strip() for p, a in asks.items())
        raise SessionError(f"the parties ask for different embeddings at the coordinator ({shown})")
    return next(iter(asks.values()), None) or None


def kruskal_stress_1(dissimilarity: np.ndarray, Y: np.ndarray) -> float:
    """Kruskal's stress-1 of a final configuration (000 eq. 3.12).

    ``S = sqrt(sum (d_ij - dhat_ij)^2 / sum d_ij^2)`` over all pairs, with
    ``d`` the Euclidean distances of the configuration ``Y`` and ``dhat`` the
    disparities: the least-squares monotone (isotonic) regression of ``d`` on
    the order of the dissimilarities (eqs. 3.10-3.13; scikit-learn's
    ``IsotonicRegression``, tied dissimilarities pooled). This is the stress
    of ``Y`` itself; scikit-learn's SMACOF ``stress_`` is computed with the
    disparities of the previous iteration, rescaled, and is not this number.

    Parameters
    ----------
    dissimilarity : ndarray of shape (n_pairs,)
        The dissimilarities, condensed as scipy's ``pdist``.
    Y : ndarray of shape (m, p)
        The configuration, one row per object.

    Returns
    -------
    float
        Stress-1; 0 when every distance of ``Y`` is 0.
    """
    from scipy.spatial.distance import pdist
    from sklearn.isotonic import IsotonicRegression

    d = pdist(np.asarray(Y, dtype=np.float64))
    denominator = float(np.dot(d, d))
    if denominator == 0.0:
        return 0.0
    dhat = IsotonicRegression().fit_transform(np.asarray(dissimilarity, dtype=np.float64), d)
    return float(np.sqrt(np.sum((d - dhat) ** 2) / denominator))


def nmds(combined: Combined, ask: dict[str, str], seed: int) -> Combined:
    """Non-metric MDS (Kruskal stress-1, 000 ch. 3) of the joined dissimilarities to ``dims`` features.

    With ``init = "classical"`` (the default) SMACOF starts from the classical
    (Torgerson) scaling of the dissimilarities, as 000 §5.2.3.1 does, and runs
    once; with ``"random"`` it starts from ``n_init`` seeded random
    configurations and keeps the best. Either way it iterates until the
    stress no longer falls (relative change below ``EPS``) or ``max_iter``
    iterations. On wine (13 z-scored columns, 12 dims) the classical start
    reaches stress-1 0.004 where four random starts stop at 0.03.

    The embedding's ``info`` records the start, the iterations and whether
    SMACOF converged, ``kruskal_stress_1`` (000 eq. 3.12 of the final
    configuration, :func:`kruskal_stress_1`) beside ``smacof_stress``
    (scikit-learn's figure, from the previous iteration's disparities, which
    sits above it: 0.332 against 0.315 on z-scored wine in 1 dimension), and
    carries a ``warning`` when stress-1 is above ``POOR_STRESS``: the
    embedding then keeps the rank order badly, and a clustering of it says
    little about the data.
    """
    from scipy.spatial.distance import squareform
    from sklearn.manifold import MDS  # only a coordinator that embeds needs it

    D = squareform(combined.dissimilarity)
    dims, n_init = int(ask["dims"]), int(ask.get("n_init", 4))
    init = ask.get("init", "random")  # a party of an older version sends no init: its random starts
    max_iter = int(ask.get("max_iter", 300))
    if dims >= D.shape[0]:
        raise SessionError(f"nmds dims = {dims} needs more than {dims} joined records, got {D.shape[0]}")
    if init not in ("classical", "random"):
        raise SessionError(f"nmds init must be 'classical' or 'random', got {init!r}")
    model = MDS(n_components=dims, metric_mds=False, metric="precomputed", n_init=n_init,
                init="classical_mds" if init == "classical" else "random", max_iter=max_iter, eps=EPS,
                random_state=seed, normalized_stress=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Y = model.fit_transform(D)
    stress_1 = kruskal_stress_1(combined.require_dissimilarity(), Y)
    info = {"embedding": "nmds", "dims": dims, "init": init, "n_init": 1 if init == "classical" else n_init,
            "max_iter": max_iter, "n_iter": int(model.n_iter_), "converged": int(model.n_iter_) < max_iter,
            "kruskal_stress_1": stress_1, "smacof_stress": float(model.stress_),
            "runs_at": "coordinator, on the joined dissimilarities"}
    if stress_1 > POOR_STRESS:
        info["warning"] = (f"nmds stress-1 {stress_1:.3f} is above {POOR_STRESS}: the {dims}-dim embedding keeps "
                           "the dissimilarities' rank order poorly")
    description = f"non-metric MDS to {dims} dims (stress-1 {stress_1:.4f}) of {combined.description}"
    return Combined(features=np.asarray(Y, dtype=np.float64), description=description, embedding=info)


@dataclass(frozen=True)
class Embedding:
    """One embedding the coordinator computes: ``compute(combined, ask, seed)`` takes the combined
    dissimilarities, the public parameters asked for and the coordinator's seed; ``keys`` are its public
    parameters, which every party asking for it must send with the same values."""

    compute: Callable[[Combined, dict[str, str], int], Combined]
    keys: tuple[str, ...] = ()


#: The embeddings the coordinator computes, by the name a party's ``embed`` parameter gives.
EMBEDDINGS: dict[str, Embedding] = {"nmds": Embedding(nmds, keys=("dims", "n_init", "init", "max_iter"))}


def _defining(params: dict[str, str]) -> tuple[str, ...]:
    """The public parameters that define the embedding ``params`` ask for: ``embed`` and its own keys."""
    known = EMBEDDINGS.get(params.get("embed", ""))
    return ("embed", *known.keys) if known else ("embed",)


def embed(combined: Combined, ask: dict[str, str], seed: int) -> Combined:
    """The embedding ``ask`` names (``EMBEDDINGS``) of ``combined``; SessionError if none is registered so."""
    name = ask.get("embed", "")
    if name not in EMBEDDINGS:
        raise SessionError(f"the parties ask for an embedding {name!r} this coordinator does not compute "
                           f"(it computes {', '.join(EMBEDDINGS)})")
    return EMBEDDINGS[name].compute(combined, ask, seed)
