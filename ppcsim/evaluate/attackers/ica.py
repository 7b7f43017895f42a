"""The ICA attack (002 §6.2.2): independent components of the disguised block, matched to columns by histogram."""

from __future__ import annotations

from ppcsim.evaluate.attackers.base import Attack, Target, sends_rows
from ppcsim.evaluate.attacks import ica_attack
from ppcsim.evaluate.scores import scores


def _run(target: Target) -> dict:
    estimate = ica_attack(target.X, target.sent["data"][target.rows], random_state=int(target.rng.integers(2**31)))
    target.keep("ica", target.X, estimate)
    return scores(target.X, estimate, target.columns)


ICA = Attack(
    applies=lambda target: sends_rows(target.own), run=_run,
    knowledge=lambda target: "each original column's min, max and histogram",
    estimator="FastICA on the disguised block, each component matched to the original column whose histogram it "
    "resembles most, rescaled to its range",
    source="002 §6.2.2", plain="independent component analysis (ICA)", short="ICA", term="ICA attack",
    meaning="Independent component analysis run on the disguised block, with each component matched to the "
    "original column whose histogram it resembles most; it needs only each column's range and histogram.",
    missing="the ICA attack does not apply to what they send")
