"""Naive inference (002 §6.1.2, §6.2.1): the attacker takes the disguised block itself as the original.

002's first and weakest attacker knows nothing but what was sent, ``O = P``:
it applies where every sent column stands for an original column (the sent
block has the party's shape: rotation, geometric perturbation, noise,
001's value-hiding methods at full rank). The record also gives 002 §6.1's
weighted guarantees, ``Phi1 = min_i p_i / w_i`` and ``Phi2 = mean_i p_i / w_i``,
when the party's method names column weights (``geometric``'s ``weights``).
"""

from __future__ import annotations

import numpy as np

from parties.attacks import column_privacy, weighted_privacy
from ppcsim.evaluate.attackers.base import Attack, Target, sends_rows
from ppcsim.evaluate.scores import scores


def _applies(target: Target) -> bool:
    return sends_rows(target.own) and target.sent["data"].shape == target.own.X.shape


def column_weights(target: Target) -> np.ndarray | None:
    """The weights w_i the party's method gives its columns (002 §6.1), or None when it names none."""
    weights = getattr(target.method, "column_weights", None)
    if weights is None or not getattr(target.method, "weights", None):
        return None
    return np.asarray(weights(target.columns), dtype=np.float64)


def _run(target: Target) -> dict:
    estimate = target.sent["data"][target.rows]
    target.keep("naive", target.X, estimate)
    out = scores(target.X, estimate, target.columns)
    weights = column_weights(target)
    if weights is not None:
        out["weighted"] = weighted_privacy(column_privacy(target.X, estimate), weights)
    return out


NAIVE = Attack(
    applies=_applies, run=_run, knowledge=lambda target: "nothing but the disguised block",
    estimator="the disguised block itself, column for column (O = P)",
    source="002 §6.1.2, §6.2.1", plain="naive inference", short="naive", term="naive inference",
    meaning="The attacker takes what a party sent as its original columns, one for one; it measures what the "
    "disguise hides when the attacker knows nothing else.",
    missing="naive inference applies only where each sent column stands for an original one")
