"""000's PCA-based attack (§4.5, Algorithm 4.3): a sample of the original distribution, eigenvectors matched by KS tests."""

from __future__ import annotations

import math

import numpy as np

from ppcsim.evaluate.attackers.base import Attack, Target, sends_rows
from ppcsim.evaluate.pca_attack import distance_error, md_eigenvalues, md_eigenvectors, pca_attack
from ppcsim.evaluate.scores import average, scores
from ppcsim.evaluate.settings import knowledge

#: Draws of the known sample at most (each runs the whole attack).
PCA_DRAWS = 3


def _size(target: Target) -> int:
    """The sample's records: ``[attacks] known_sample`` of them (30% by default, 000 §4.5.4), at least n + 1."""
    n, d = len(target.rows), target.own.X.shape[1]
    return min(max(math.ceil(knowledge(target.scenario).known_sample * n), d + 1), n)


def _applies(target: Target) -> bool:
    return sends_rows(target.own) and target.sent["data"].shape[1] <= target.own.X.shape[1]


def _run(target: Target) -> dict:
    X, Y = target.X, np.asarray(target.sent["data"][target.rows], dtype=np.float64)
    n, size = len(target.rows), _size(target)
    found: list[dict] = []
    extra: dict[str, list[float]] = {"distance_error": [], "md_eigenvalues": [], "md_eigenvectors": [], "ks_pvalue": []}
    exhaustive = False
    for i in range(max(1, min(target.draws, PCA_DRAWS))):
        known = target.rng.choice(n, size=size, replace=False)
        unknown = np.setdiff1d(np.arange(n), known)
        unknown = unknown if unknown.size else np.arange(n)
        out = pca_attack(X[known], Y, random_state=int(target.rng.integers(2**31 - 1)))
        exhaustive = out["exhaustive"]
        estimate = out["estimate"]
        found.append(scores(X[unknown], estimate[unknown], target.columns, first_draw=i == 0))
        extra["distance_error"].append(distance_error(X[unknown], estimate[unknown]))
        extra["md_eigenvalues"].append(md_eigenvalues(out["values_sample"], out["values_disguised"]))
        extra["md_eigenvectors"].append(md_eigenvectors(out["vectors_sample"], out["vectors_disguised"]))
        extra["ks_pvalue"].append(out["pvalue"])
        if i == 0:
            target.keep("pca_known_sample", X[unknown], estimate[unknown])
    record = average(found)
    record.update({key: float(np.mean(values)) for key, values in extra.items()})
    record["search"] = "all 2^n mirror images" if exhaustive else "each eigenvector's sign on its own"
    return record


def _knowledge(target: Target) -> str:
    size, n = _size(target), len(target.rows)
    return f"a sample of {size} of {n} records ({size / n:.0%}) of the original distribution"


PCA_KNOWN_SAMPLE = Attack(
    applies=_applies, run=_run, knowledge=_knowledge,
    estimator="the sent block padded with zero columns, its principal axes mapped onto the sample's, each "
    "eigenvector's mirror image picked by two-sample Kolmogorov-Smirnov p-values (all 2^n jointly up to 12 "
    "columns)", report_estimator=True, source="000 §4.5, Algorithm 4.3", plain="PCA attack with a known sample",
    short="PCA attack", term="PCA attack", meaning="The attacker holds a sample of records from the same "
    "distribution as the original data (30% by default), matches the principal axes of what was sent to the "
    "sample's and maps the sent rows back; it undoes a rotation up to the sample's error.",
    missing="the PCA attack does not apply to what they send (it needs rows of at most the original's width)")
