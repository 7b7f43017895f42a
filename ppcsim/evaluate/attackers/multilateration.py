"""Multilateration from n + 1 + j known records (000 §4.4; 004 Lemma 2): on a party's distances, on the distances
between the rows it sent (any feature disguise), or on the coordinator's embedding."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform

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
from ppcsim.evaluate.attacks import multilateration_privacy, multilateration_to
from ppcsim.evaluate.scores import average, scores
from ppcsim.evaluate.settings import knowledge


def _references(extra: int, n: int, m: int) -> int:
    """How many records the attacker knows: n + 1 + j (000 §4.4, j the scenario's ``[attacks] known_extra``)."""
    return min(n + 1 + extra, m)


def locate(X: np.ndarray, distances, draws: int, rng: np.random.Generator, columns: list[str], *,
           fit_scale: bool = False, score: slice = slice(None), extra: int = 0, normal: bool = False) -> dict:
    """Multilateration from n + 1 + j known records (000 §4.4), over ``draws`` draws of them.

    ``distances`` is the ``m x m`` matrix the attacker sees, or a function
    ``distances(refs) -> (m, q)`` giving every record's distance to the
    references (for a sent feature block, ``cdist(Y, Y[refs])``).
    ``fit_scale`` first rescales the distances to the references' known
    original distances (least squares), for a block or an embedding whose
    scale is not the original's. ``extra`` is j (000 Figs. 4.12-4.13).
    ``normal`` solves the Gauss-Newton steps by the normal equations (see
    ``ppcsim.evaluate.attacks.multilateration_to``).
    ``score`` picks the columns to score (a party's slice of the joined
    data). The record adds ``object_privacy_mean``, the mean of 000's object
    privacy (eq. 4.20, averaged as eq. 4.21) over the draws.
    """
    m, n = X.shape
    to_references = distances if callable(distances) else (lambda refs: distances[:, refs])
    results, rhos = [], []
    for i in range(draws):
        refs = rng.choice(m, size=_references(extra, n, m), replace=False)
        D = to_references(refs)
        if fit_scale:
            seen, true = D[refs], squareform(pdist(X[refs]))
            D = D * (np.sum(seen * true) / max(np.sum(seen * seen), 1e-300))
        # inexact (rescaled) distances: Gauss-Newton settles to a few digits, not to 1e-10
        estimate = (multilateration_to(D, refs, X[refs], max_iter=30, tol=1e-6, normal=normal) if fit_scale
                    else multilateration_to(D, refs, X[refs]))
        others = np.setdiff1d(np.arange(m), refs)
        rhos.append(float(np.mean(multilateration_privacy(X[:, score], estimate[:, score], refs))))
        results.append(scores(X[others][:, score], estimate[others][:, score], columns, first_draw=i == 0))
    out = average(results)
    out["object_privacy_mean"] = float(np.mean(rhos))
    return out


def _row_distances(Y: np.ndarray):
    """Every record's Euclidean distance to the references, computed from the sent rows ``Y``."""
    return lambda refs: cdist(Y, Y[refs])


def _run(target: Target) -> dict:
    m, d = target.own.X.shape
    extra = knowledge(target.scenario).known_extra
    rows = sends_rows(target.own)
    if rows:  # a feature block: its distances, on a scale fitted to the known records' (as on an embedding)
        distances = _row_distances(np.asarray(target.sent["data"][target.rows], dtype=np.float64))
    else:
        distances = np.sqrt(squareform(reorder_condensed(target.sent["sqdist"], m, target.rows)))
    found = locate(target.X, distances, max(1, min(target.draws, MULTILATERATION_DRAWS)), target.rng, target.columns,
                   fit_scale=rows, extra=extra, normal=rows)
    if target.artifacts is not None:  # one draw for the picture, from its own generator: the figures stay as measured
        n = len(target.rows)
        refs = target.picture_rng().choice(n, size=_references(extra, d, n), replace=False)
        others = np.setdiff1d(np.arange(n), refs)
        D = distances(refs) if callable(distances) else distances[:, refs]
        if rows:
            seen, true = D[refs], squareform(pdist(target.X[refs]))
            D = D * (np.sum(seen * true) / max(np.sum(seen * seen), 1e-300))
        estimate = multilateration_to(D, refs, target.X[refs], max_iter=30 if rows else 100,
                                      tol=1e-6 if rows else 1e-10, normal=rows)
        target.keep("multilateration", target.X[others], estimate[others])
    return found


def _applies(target: Target) -> bool:
    return sends_euclidean_distances(target.own) or sends_rows(target.own)


def _skipped(target: Target) -> str | None:
    if _applies(target):
        return None
    return f"needs Euclidean distances, not metric '{dissimilarity_metric(target.method)}'"


def _knowledge(target: Target) -> str:
    n, j = target.own.X.shape[1], knowledge(target.scenario).known_extra
    q = _references(j, n, len(target.rows))
    how = (f"{q} records' original values (n + 1{f' + {j}' if j else ''})")
    if sends_rows(target.own):
        return how + " and the distances between the rows the party sent, their scale fitted to those records"
    return how + " and the party's dissimilarities"


MULTILATERATION = Attack(
    applies=_applies, run=_run, knowledge=_knowledge,
    estimator="each other record's position solved from its distances to the known records (Gauss-Newton); on "
    "a sent block, the distances between its rows, rescaled by least squares to the known records' original ones",
    source="000 §4.4; 004 Lemma 2", plain="multilateration from known records", short="multilateration",
    term="multilateration", meaning="From n + 1 (or more) records whose values the attacker knows, and the "
    "distances a party sent or the distances between the rows it sent, every other record's position is solved "
    "for, as a GPS receiver does.",
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
                  fit_scale=True, score=slice(a, b), extra=knowledge(target.scenario).known_extra)


MULTILATERATION_NMDS = Attack(
    applies=_applies_to_embedding, run=_run_on_embedding,
    knowledge=lambda target: (f"{_embedding(target)[0].shape[1] + 1 + knowledge(target.scenario).known_extra} "
                              "records' original values (n + 1 + j, all joined columns) and the coordinator's nmds "
                              "embedding, its scale fitted to them"),
    estimator="multilateration on the coordinator's embedding, its scale fitted to the known records' original "
    "distances by least squares", source="000 §4.4 on the embedding of 000 ch. 3",
    plain="multilateration on the coordinator's nmds embedding", short="multilateration (nmds embedding)")
