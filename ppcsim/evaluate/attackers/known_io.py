"""The known input-output attacks (002 §6.2.4): the attacker knows a few records in both forms.

Three estimators, each named for what it is: ``known_io`` regresses the
original on the disguised data (ours; it also applies to a projection that
cannot be inverted), ``known_io_forward`` fits the forward map by ordinary
least squares with an intercept and inverts it (a variant of 002's), and
``known_io_002`` is 002's own: the forward map fitted on differences against
the (d+1)-th known record. All three are scored on the same draws of the
known records.
"""

from __future__ import annotations

import numpy as np

from ppcsim.evaluate.attackers.base import Attack, Target, sends_rows
from ppcsim.evaluate.attacks import known_io, known_io_002, known_io_forward
from ppcsim.evaluate.scores import average, scores


def _applies(target: Target) -> bool:
    return sends_rows(target.own)


def _knowledge(target: Target) -> str:
    q, n = target.known_count, len(target.rows)
    return f"{q} of {n} records ({q / n:.1%}) in original and disguised form"


def _run(estimator, target: Target) -> dict:
    """``estimator`` over the target's draws of the known records, each scored on the records it did not know."""
    X, Y = target.X, target.sent["data"][target.rows]
    return average([scores(X[unknown], estimator(X, Y, known)[unknown], target.columns, first_draw=i == 0)
                    for i, (known, unknown) in enumerate(target.known_records())])


def _run_known_io(target: Target) -> dict:
    out = _run(known_io, target)
    if target.artifacts is not None:  # one draw for the picture, from its own generator: the figures stay as measured
        n = len(target.rows)
        known = target.picture_rng().choice(n, size=target.known_count, replace=False)
        unknown = np.setdiff1d(np.arange(n), known)
        X, Y = target.X, target.sent["data"][target.rows]
        target.keep("known_io", X[unknown], known_io(X, Y, known)[unknown])
    return out


KNOWN_IO = Attack(
    applies=_applies, run=_run_known_io, knowledge=_knowledge,
    estimator="regress the original on the disguised data, [Y, 1] B", report_estimator=True,
    source="002 §6.2.4", plain="known input-output", term="known input-output attack",
    meaning="The attacker knows a few records both in the original and in the disguised form (5% by default) and "
    "fits the disguise by least squares; it undoes any linear disguise that keeps as many dimensions as it had.",
    missing="the known input-output attack does not apply to what they send")

def _fitted(estimate, estimator: str, source: str, plain: str, short: str) -> Attack:
    """A known input-output attack that fits the forward map and inverts it, by the estimator ``estimate``."""
    return Attack(applies=_applies, run=lambda target: _run(estimate, target), knowledge=_knowledge,
                  estimator=estimator, report_estimator=True, source=source, plain=plain, short=short)


KNOWN_IO_FORWARD = _fitted(
    known_io_forward, "a variant of 002 §6.2.4: fit Y ~ [X, 1] [R'; t] by ordinary least squares with an intercept, "
    "then X = (Y - t) pinv(R')", "a variant of 002 §6.2.4", "known input-output, forward map fitted with an intercept",
    "known input-output (forward, intercept)")

KNOWN_IO_002 = _fitted(
    known_io_002, "002 §6.2.4 steps 1-3: fit R' on the known records' differences against the (d+1)-th known "
    "record, t as the mean of Y - X R', then X = (Y - t) pinv(R')", "002 §6.2.4",
    "known input-output, 002's estimator (differences against the (d+1)-th known record)", "known input-output (002)")
