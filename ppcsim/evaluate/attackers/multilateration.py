"""Multilateration from n + 1 known records (000 §4.4; 004 Lemma 2): on a party's distances or on an embedding."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist, squareform

from coordinator.condensed import reorder_condensed
from ppcsim.evaluate.attackers.base import (
    ATTACK_ROWS,
    MULTILATERATION_DRAWS,
    Attack,
    Target,
    dissimilarity_metric,
    embedded_at_coordinator,
    sends_euclidean_distances,
    sends_rows,
)
from ppcsim.evaluate.attacks import multilateration, multilateration_privacy
from ppcsim.evaluate.scores import average, scores


def locate(X: np.ndarray, distances: np.ndarray, draws: int, rng: np.random.Generator, columns: list[str], *,
           fit_scale: bool = False, score: slice = slice(None)) -> dict:
    """Multilateration from n + 1 known records (000 §4.4), over ``draws`` draws of them.

    ``fit_scale`` first rescales ``distances`` to the references' known
    original distances (least squares), for an embedding whose scale is
    arbitrary. ``score`` picks the columns to score (a party's slice of the
    joined data). The record adds ``object_privacy_mean``, the mean of 000's
    object privacy (eq. 4.3) over the draws.
    """
    m, n = X.shape
    results, rhos = [], []
    for i in range(draws):
        refs = rng.choice(m, size=min(n + 1, m), replace=False)
        D = distances
        if fit_scale:
            seen, true = distances[np.ix_(refs, refs)], squareform(pdist(X[refs]))
            D = distances * (np.sum(seen * true) / max(np.sum(seen * seen), 1e-300))
        # inexact (embedded) distances: Gauss-Newton settles to a few digits, not to 1e-10
        estimate = multilateration(D, refs, X[refs], max_iter=30, tol=1e-6) if fit_scale else multilateration(D, refs, X[refs])
        others = np.setdiff1d(np.arange(m), refs)
        rhos.append(float(np.mean(multilateration_privacy(X[:, score], estimate[:, score], refs))))
        results.append(scores(X[others][:, score], estimate[others][:, score], columns, first_draw=i == 0))
    out = average(results)
    out["object_privacy_mean"] = float(np.mean(rhos))
    return out


def _run(target: Target) -> dict:
    m, d = target.own.X.shape
    distances = np.sqrt(squareform(reorder_condensed(target.sent["sqdist"], m, target.rows)))
    found = locate(target.X, distances, max(1, min(target.draws, MULTILATERATION_DRAWS)), target.rng, target.columns)
    if target.details is not None:  # one draw for the picture, from its own generator: the figures stay as measured
        n = len(target.rows)
        refs = target.picture_rng().choice(n, size=min(d + 1, n), replace=False)
        others = np.setdiff1d(np.arange(n), refs)
        estimate = multilateration(distances, refs, target.X[refs])
        target.keep("multilateration", target.X[others], estimate[others])
    return found


def _skipped(target: Target) -> str | None:
    if sends_rows(target.own):
        return None
    return f"needs Euclidean distances, not metric '{dissimilarity_metric(target.method)}'"


MULTILATERATION = Attack(
    applies=lambda target: sends_euclidean_distances(target.own), run=_run,
    knowledge=lambda target: (f"{min(target.own.X.shape[1] + 1, len(target.rows))} records' original values "
                              "(n + 1) and the party's dissimilarities"),
    estimator="each other record's position solved from its distances to the known records (Gauss-Newton)",
    source="000 §4.4; 004 Lemma 2", plain="multilateration from known records", short="multilateration",
    term="multilateration", meaning="From n + 1 records whose values the attacker knows, and the distances a party "
    "sent, every other record's position is solved for, as a GPS receiver does.",
    missing="multilateration does not apply to what they send", skipped=_skipped)


def _embedding(target: Target) -> tuple[np.ndarray, np.ndarray, dict[str, tuple[int, int]]]:
    """The joined original columns and the embedding's distances on the sampled records, and each party's columns.

    Computed once for all the parties of an evaluation (``target.cache``);
    the records are sampled with ``default_rng([seed, 3])``.
    """
    if "nmds" not in target.cache:
        scenario, everyone, outcome = target.scenario, target.everyone, target.outcome
        assert outcome is not None and outcome.combined.features is not None  # as _applies_to_embedding checked
        index = outcome.join.index
        X = np.hstack([everyone[p.name].X[index[p.name]] for p in scenario.parties])
        rng = np.random.default_rng([scenario.seed, 3])
        rows = np.sort(rng.choice(len(X), size=ATTACK_ROWS, replace=False)) if len(X) > ATTACK_ROWS else np.arange(len(X))
        X, Y = X[rows], outcome.combined.features[rows]
        bounds = np.cumsum([0] + [len(p.columns) for p in scenario.parties])
        starts = {p.name: (int(a), int(b)) for p, a, b in zip(scenario.parties, bounds, bounds[1:])}
        target.cache["nmds"] = (X, squareform(pdist(Y)), starts)
    return target.cache["nmds"]


def _applies_to_embedding(target: Target) -> bool:
    outcome = target.outcome
    return (sends_euclidean_distances(target.own) and embedded_at_coordinator(target.own) and outcome is not None
            and bool(outcome.combined.embedding) and outcome.combined.features is not None)


def _run_on_embedding(target: Target) -> dict:
    X, distances, starts = _embedding(target)
    a, b = starts[target.name]
    draws = max(1, min(target.settings.known_draws, MULTILATERATION_DRAWS))
    return locate(X, distances, draws, np.random.default_rng([target.scenario.seed, 3, a]), target.columns,
                  fit_scale=True, score=slice(a, b))


MULTILATERATION_NMDS = Attack(
    applies=_applies_to_embedding, run=_run_on_embedding,
    knowledge=lambda target: (f"{_embedding(target)[0].shape[1] + 1} records' original values (n + 1, all joined "
                              "columns) and the coordinator's nmds embedding, its scale fitted to them"),
    estimator="multilateration on the coordinator's embedding, its scale fitted to the known records' original "
    "distances by least squares", source="000 §4.4 on the embedding of 000 ch. 3",
    plain="multilateration on the coordinator's nmds embedding", short="multilateration (nmds embedding)")
