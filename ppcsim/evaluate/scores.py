"""Privacy metrics of an attacker's estimate, registered by name, and their score record.

Every attack scores its estimate of a party's original block with each
metric of ``PRIVACY_METRICS`` (:func:`scores`), and a known-record attack
averages the records over its draws (:func:`average`). The report's
``privacy.<party>.attacks.<attack>`` holds one entry per metric, the sweep's
CSV one column per attack and metric. A new metric is a function of
``(original, estimate)`` plus one line::

    PRIVACY_METRICS["rmse"] = PrivacyMetric(lambda a, b: float(np.sqrt(np.mean((a - b) ** 2))),
                                            plain="RMSE", source="root mean squared error")

A function returning one value per column (an array of shape ``(d,)``) is a
per-column metric: it is reported as ``{"columns", "min", "mean"}`` (002
§6.1's Phi1 and Phi2) with the ``spread`` of min and mean over the draws.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ppcsim.evaluate.distortion import (
    attribute_rank_change,
    attribute_rank_maintenance,
    rank_maintenance,
    rank_position,
    shared_ranks,
)
from ppcsim.evaluate.privacy import column_privacy, column_privacy_002, summary, vd
from ppcsim.evaluate.structure import cca, correlation_measure, knnm, knnm_neighbours


@dataclass(frozen=True)
class PrivacyMetric:
    """How close an estimate of a block is to the original, by one measure.

    Attributes
    ----------
    function : callable
        ``function(original, estimate)`` over two ``(m, d)`` blocks: a float
        (None where the metric is not meaningful on them), or with
        ``per_column`` an array of shape ``(d,)``.
    plain : str
        Its name in words, for pages.
    source : str
        Where it comes from (paper and equation; HTML).
    per_column : bool, default=False
        One value per column, summarised by min and mean (002 §6.1).
    headline : bool, default=False
        The per-column metric whose ``columns``, ``min``, ``mean`` and
        ``spread`` sit at the top of the score record (the report's "column
        privacy"); others are nested under their name.
    first_draw_only : bool, default=False
        Measured on the first draw of the known records only, not averaged:
        for costly metrics (001's rank metrics sort every column).
    term, meaning : str, default=""
        Its glossary entry on the report page; none when ``term`` is empty.
    any_width : bool, default=False
        It compares blocks of different widths too: it also measures what a
        party sent when that has fewer (or more) columns than the original.
    recovered : float, default=0.0
        Its value for an estimate equal to the original (1 for 001's CM and
        CCA, 5 for knnM as Table 7.5 reads it): pages mark only a metric
        whose 0 means "recovered exactly".
    """

    function: Callable[[np.ndarray, np.ndarray], float | np.ndarray | None]
    plain: str
    source: str
    per_column: bool = False
    headline: bool = False
    first_draw_only: bool = False
    term: str = ""
    meaning: str = ""
    any_width: bool = False
    recovered: float = 0.0


#: The privacy metrics by the name the report gives them, in the report's order (the headline first).
PRIVACY_METRICS: dict[str, PrivacyMetric] = {
    "column_privacy": PrivacyMetric(
        column_privacy, "column privacy", "002 §6.1.1", per_column=True, headline=True, term="column privacy",
        meaning="How far off an attacker's estimate of an original column is: the spread (standard deviation) of "
        "the error, on the column scaled to [0, 1]. 0: recovered exactly (up to a shift); 0.3 or more: little is "
        "learnt."),
    "privacy_002": PrivacyMetric(column_privacy_002, "column privacy as 002 defines it", "002 §6.1.1",
                                 per_column=True),
    "vd": PrivacyMetric(
        vd, "VD", "001 eq. 2.7", term="VD (value difference)",
        meaning="Size of the attacker's error over the size of the original block (Frobenius norms): 0 recovered, "
        "1 or more nothing recovered."),
    "rp": PrivacyMetric(rank_position, "RP (rank position change)", "001 eq. 2.8", first_draw_only=True),
    "rm": PrivacyMetric(rank_maintenance, "RM (rank maintenance)", "001 eq. 2.9", first_draw_only=True),
    "cp": PrivacyMetric(attribute_rank_change, "CP (attribute rank change)", "001 eq. 2.10", first_draw_only=True),
    "ck": PrivacyMetric(attribute_rank_maintenance, "CK (attribute rank maintenance)", "001 eq. 2.11",
                        first_draw_only=True),
    "cm": PrivacyMetric(
        correlation_measure, "CM", "001 eq. 7.1", recovered=1.0, term="CM (correlation measure)",
        meaning="The mean correlation of each original column with its counterpart: 1 a shifted copy, towards 0 "
        "as noise is added."),
    "cca": PrivacyMetric(
        cca, "CCA", "001 eqs. 7.9-7.10", any_width=True, recovered=1.0, term="CCA (canonical correlation)",
        meaning="The canonical correlations of the two blocks summed over the original's columns: 1 when one is "
        "any invertible linear map of the other (a rotation), lower as columns are lost or noise added."),
    "knnm": PrivacyMetric(
        knnm, "knnM(5)", "001 eq. 7.12", first_draw_only=True, any_width=True, term="knnM",
        meaning="How far a record's 5 nearest neighbours move in rank from it (001's kNN join, eq. 7.12): 0 "
        "when every neighbourhood keeps its order, as under a rotation."),
    "knnm_neighbours": PrivacyMetric(
        knnm_neighbours, "knnM(5) as 001 Table 7.5", "001 Table 7.5", first_draw_only=True, any_width=True,
        recovered=5.0, term="knnM as Table 7.5",
        meaning="How many of a record's 5 nearest neighbours stay among its 5 nearest (the figure 001's Table "
        "7.5 prints under the name knnM): 5 when every neighbourhood is kept."),
}


def single_figures() -> list[str]:
    """The metrics that give one figure per block (not per column), in the registry's order."""
    return [name for name, metric in PRIVACY_METRICS.items() if not metric.per_column]


def per_column_figures() -> list[str]:
    """The per-column metrics nested under their name (all but the headline), in the registry's order."""
    return [name for name, metric in PRIVACY_METRICS.items() if metric.per_column and not metric.headline]


def scores(original: np.ndarray, estimate: np.ndarray, columns: list[str], *, first_draw: bool = True) -> dict:
    """Every registered metric of ``estimate`` against ``original`` (both ``(m, d)``; ``columns`` names the d).

    ``first_draw=False`` leaves out the metrics marked ``first_draw_only``.
    With the metrics registered today the record is ``columns``, ``min``,
    ``mean`` (002 §6.1.1 column privacy as 002's experiments measure it,
    Phi1 and Phi2 of §6.1), ``privacy_002`` (the same as §6.1.1 defines it)
    and 001's ``vd``, ``rp``, ``rm``, ``cp``, ``ck`` (eqs. 2.7-2.11).
    """
    out: dict = {}
    with shared_ranks():  # the four rank metrics sort the two blocks once
        values = {name: metric.function(original, estimate) for name, metric in PRIVACY_METRICS.items()
                  if first_draw or not metric.first_draw_only}
    for name, value in values.items():
        metric = PRIVACY_METRICS[name]
        if not metric.per_column:
            out[name] = None if value is None else float(value)  # type: ignore[arg-type]
            continue
        p = np.asarray(value, dtype=np.float64)
        part = {"columns": dict(zip(columns, p.tolist())), **summary(p)}
        if metric.headline:
            out.update(part)
        else:
            out[name] = part
    return out


def single_scores(original: np.ndarray, estimate: np.ndarray) -> dict[str, float | None]:
    """The one-figure metrics of ``estimate`` against ``original`` (with today's: 001's VD, RP, RM, CP, CK).

    A metric that is not meaningful on these blocks (CP, CK with undetermined attribute ranks) gives None.
    """
    with shared_ranks():
        values = {name: PRIVACY_METRICS[name].function(original, estimate) for name in single_figures()}
    return {name: None if value is None else float(value) for name, value in values.items()}  # type: ignore[arg-type]


def sent_scores(original: np.ndarray, sent: np.ndarray) -> dict[str, float | None]:
    """The one-figure metrics of what a party sent against its original block.

    All of them when the two have the same shape; otherwise those that
    compare blocks of different widths (``any_width``: 001's CCA and knnM).
    """
    if sent.shape == original.shape:
        return single_scores(original, sent)
    values = {name: PRIVACY_METRICS[name].function(original, sent) for name in single_figures()
              if PRIVACY_METRICS[name].any_width}
    return {name: None if value is None else float(value) for name, value in values.items()}  # type: ignore[arg-type]


def average(draws: list[dict]) -> dict:
    """The mean over draws of every number in the score records, and the spread, median and IQR of min and mean.

    Metrics marked ``first_draw_only`` are taken from the first draw; every
    per-column metric gets, for its ``min`` and ``mean`` over the draws, the
    ``spread`` (standard deviation, n - 1; 0 for one draw), the ``median``
    and the ``iqr`` (interquartile range, numpy's linear interpolation; 0 for
    one draw). Known-record attacks are heavy-tailed (an unlucky draw of
    nearly collinear known records is far off): the median says what a
    typical draw gives, the mean what the draws give on average.
    """

    def mean(values: list):
        if isinstance(values[0], dict):
            return {key: mean([v[key] for v in values]) for key in values[0]}
        return float(np.mean(values))

    first = [name for name, metric in PRIVACY_METRICS.items() if metric.first_draw_only]
    out = mean([{k: v for k, v in d.items() if k not in first} for d in draws])
    out.update({k: draws[0][k] for k in first if k in draws[0]})  # measured on the first draw only
    out["draws"] = len(draws)
    for name, metric in PRIVACY_METRICS.items():
        if not metric.per_column or metric.first_draw_only:
            continue
        each = draws if metric.headline else [d[name] for d in draws]
        values = {key: np.array([e[key] for e in each], dtype=np.float64) for key in ("min", "mean")}
        part = out if metric.headline else out[name]
        part["spread"] = {key: float(np.std(v, ddof=1)) if v.size > 1 else 0.0 for key, v in values.items()}
        part["median"] = {key: float(np.median(v)) for key, v in values.items()}
        part["iqr"] = {key: float(np.subtract(*np.percentile(v, [75, 25]))) for key, v in values.items()}
    return out
