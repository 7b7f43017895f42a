"""Utility and privacy of a finished run, measured by an observer outside the protocol.

The launcher is the one place that sees every party's original columns. After
a run it rebuilds what each party held (the same loading, normalisation and
seeded disguise), then compares: the distances and the clustering the
coordinator worked on against those of the original joined data (utility),
and what an attacker can reconstruct from each party's sent arrays (privacy).
Nothing computed here is ever sent to the coordinator.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy.spatial.distance import pdist, squareform

from coordinator.clustering import cluster
from coordinator.combine import Combined, Contribution, combine, reorder_condensed
from coordinator.forms import FORMS
from coordinator.join import join_ids
from coordinator.session import Outcome
from parties.config import PartyConfig
from parties.data import blob_labels, load_builtin, read_csv_columns
from parties.methods.base import Disguise
from parties.run import Disguised, disguise
from ppcsim.errors import RunError
from ppcsim.evaluate.agreement import agreement
from ppcsim.evaluate.attacks import ica_attack, known_io, known_io_forward, multilateration, multilateration_privacy
from ppcsim.evaluate.distortion import distortion
from ppcsim.evaluate.neighbours import profile
from ppcsim.evaluate.privacy import column_privacy, column_privacy_002, summary, vd
from ppcsim.evaluate.settings import Settings
from ppcsim.evaluate.stress import stress
from ppcsim.scenario import Scenario
from protos.ids import as_text
from protos.serde import Layout

#: Records sampled (seeded) for stress, whose cost is quadratic in the records.
STRESS_ROWS = 2000
#: Records an attack is evaluated on at most (seeded sample), to bound its cost.
ATTACK_ROWS = 20000
#: Draws of the reference records for multilateration at most (each locates every record).
MULTILATERATION_DRAWS = 10
#: Known-record draws are capped so that draws x records stays within this (at least 10 draws):
#: 100 draws up to 4,000 records, 20 at 20,000.
DRAW_BUDGET = 400_000


def known_draws(settings: Settings, records: int) -> int:
    """How many draws of the known records an attack on ``records`` records gets (``DRAW_BUDGET``)."""
    return max(1, min(settings.known_draws, max(10, DRAW_BUDGET // max(records, 1))))


def evaluate(
    scenario: Scenario,
    outcome: Outcome,
    sent: dict[str, Contribution],
    settings: Settings,
    own: dict[str, Disguised] | None = None,
    details: dict | None = None,
) -> dict:
    """``{"utility": ..., "privacy": ...}`` for a run whose coordinator reached ``outcome``.

    ``own`` is each party's disguise when the caller has it already; otherwise
    it is replayed from the scenario (same data, normalisation and seed).
    ``details``, when given, is filled with the arrays behind the numbers, for
    pictures (ppcsim.pictures): ``own`` (each party's disguise), ``joined``
    (the original joined normalised columns, in the join's order),
    ``original_labels`` (the same clustering of the original data) and
    ``attacks[party][attack]`` (``original``, ``estimate``, ``columns``: one
    draw of the known records, drawn apart from the measured ones).
    """
    own = own or {cfg.name: disguise(cfg) for cfg in scenario.parties}
    for cfg in scenario.parties:
        _check_replayed(cfg, own[cfg.name], sent[cfg.name])
    if details is not None:
        details["own"] = own
    report = {"utility": utility(scenario, outcome, own, details)}
    report["privacy"] = (privacy(scenario, own, settings, outcome, details) if settings.attacks
                         else {"skipped": "--no-attacks"})
    return report


def _check_replayed(cfg: PartyConfig, mine: Disguised, received: Contribution) -> None:
    """The observer's replay must reproduce exactly what the party sent, or its numbers mean nothing."""
    for name, array in mine.wire_arrays().items():
        if not np.array_equal(array, received.arrays[name]):
            raise RunError(f"party '{cfg.name}': the observer's replay of array '{name}' differs from what was "
                           "sent, so its utility and privacy figures would not describe this run")


# -- utility ---------------------------------------------------------------------------------

def reference_combined(scenario: Scenario, outcome: Outcome, own: dict[str, Disguised]) -> Combined:
    """What the coordinator would cluster with no disguise.

    The joined normalised columns, whenever Euclidean distance is the measure
    (every feature method, and dissimilarities in a form feature rows can
    join, whose parties normalise too); otherwise the same combination form
    (eq. 5 or eq. 4, or a registered one) computed by one party holding every
    joined column: the method's ``undisguised`` counterpart, combined as the
    coordinator combines it.
    """
    index = outcome.join.index
    X = np.hstack([own[p.name].X[index[p.name]] for p in scenario.parties])
    dissimilar = [own[p.name].method for p in scenario.parties if own[p.name].method.sends_dissimilarities()]
    if not dissimilar or FORMS[_metric(dissimilar[0])].features:
        return Combined(features=X)
    first = dissimilar[0]
    columns = [f"{p.name}.{c}" for p in scenario.parties for c in p.columns]
    params = dict(next(p.params for p in scenario.parties if p.method == first.name))
    for key, spec in type(first).params.items():  # column lists: every party's, prefixed by its name
        if spec.type is list:
            params[key] = [f"{p.name}.{c}" for p in scenario.parties for c in p.params.get(key, [])]
    method = type(first).undisguised(params)
    arrays = {s.name: s.array for s in method.disguise(X, columns)}
    whole = Contribution("all", method.name, method.public_params(), outcome.join.ids, arrays, is_dissimilarity=True)
    return combine([whole], join_ids({"all": outcome.join.ids}))


def _metric(method: Disguise) -> str:
    """The combination form (the public ``metric``) of a method that sends dissimilarities (condensed arrays)."""
    form = method.form()
    if form is None:
        raise RunError(f"method '{method.name}' sends dissimilarities but names no metric")
    return form


def _distances(combined: Combined, rows: np.ndarray, n: int) -> np.ndarray:
    if combined.features is not None:
        return pdist(combined.features[rows])
    return reorder_condensed(combined.require_dissimilarity(), n, rows)


def true_labels(scenario: Scenario, ids: np.ndarray) -> np.ndarray | None:
    """The ``label_column`` of the scenario's shared data, aligned with ``ids``; None without one."""
    if not scenario.label_column or not scenario.source:
        return None
    if scenario.source.startswith("sklearn:"):
        target = load_builtin(scenario.source.split(":", 1)[1])[2]
        return target[ids.astype(int)]
    if scenario.source == "synthetic:blobs":
        options = next(p.source_options for p in scenario.parties if p.source == scenario.source)
        return blob_labels(options["rows"], options["clusters"], options["seed"])[ids.astype(int)]
    # [data] may leave the id column to each party that reads its file
    id_column = scenario.id_column or next(
        (p.id_column for p in scenario.parties if p.source == scenario.source and p.id_column), None)
    if id_column is None:
        raise RunError(f"[data]: 'id_column' is needed to read the labels '{scenario.label_column}' of {scenario.source}")
    cells, _ = read_csv_columns(Path(scenario.source), [id_column, scenario.label_column])
    by_id = dict(zip(cells[id_column], cells[scenario.label_column]))
    return np.unique([by_id[i] for i in as_text(ids).tolist()], return_inverse=True)[1]


def utility(scenario: Scenario, outcome: Outcome, own: dict[str, Disguised], details: dict | None = None) -> dict:
    """Stress (004 eq. 6) and agreement of the clustering with that of the original joined data."""
    n = len(outcome.join.ids)
    reference = reference_combined(scenario, outcome, own)
    rng = np.random.default_rng([scenario.seed, 1])
    rows = np.sort(rng.choice(n, size=STRESS_ROWS, replace=False)) if n > STRESS_ROWS else np.arange(n)
    d, dhat = _distances(reference, rows, n), _distances(outcome.combined, rows, n)
    if outcome.combined.embedding:  # an embedding's scale is arbitrary (000 ch. 3): fit it first
        dhat = dhat * (np.dot(d, dhat) / max(np.dot(dhat, dhat), 1e-300))
    out = {
        "stress": stress(d, dhat),
        "stress_records": len(rows),
        "reference": "the same clustering on the original joined data"
        + (" (normalised columns)" if reference.features is not None else " (dissimilarities of all joined columns)"),
    }
    first = scenario.parties[0].name  # the joined records by their own ids (the coordinator's may be pseudonyms)
    truth = true_labels(scenario, own[first].data.ids[outcome.join.index[first]])
    # 000 eqs. 5.21-5.23 on the same sampled records, averaged over k = 3..10
    out.update(profile(d, dhat, None if truth is None else truth[rows]))
    original = cluster(scenario.clustering, reference)
    if details is not None:  # the joined columns reference_combined built already, when it kept them as features
        index = outcome.join.index
        details["joined"] = (reference.features if reference.features is not None
                             else np.hstack([own[p.name].X[index[p.name]] for p in scenario.parties]))
        details["original_labels"] = np.asarray(original)
    out["vs_original"] = agreement(original, outcome.labels)
    if truth is not None:
        out["vs_truth"] = agreement(truth, outcome.labels)
        out["original_vs_truth"] = agreement(truth, original)
    return out


# -- privacy ---------------------------------------------------------------------------------

#: 001's rank metrics, which sort every column: measured on the first draw of the known records only.
RANKED = ("rp", "rm", "cp", "ck")


def _scores(original: np.ndarray, estimate: np.ndarray, columns: list[str], *, ranks: bool = True) -> dict:
    """Column privacy (both definitions of 002), its min and mean, and 001's distortion of the estimate.

    ``ranks=False`` leaves out 001's rank metrics (RP, RM, CP, CK), which cost
    a sort of every column, and keeps VD.
    """
    p, p002 = column_privacy(original, estimate), column_privacy_002(original, estimate)
    found = distortion(original, estimate) if ranks else {"vd": vd(original, estimate)}
    return {"columns": dict(zip(columns, p.tolist())), **summary(p),
            "privacy_002": {"columns": dict(zip(columns, p002.tolist())), **summary(p002)}, **found}


def _average(draws: list[dict]) -> dict:
    """The mean over draws of every number in the score dicts, and the spread of min and mean."""

    def mean(values: list):
        if isinstance(values[0], dict):
            return {key: mean([v[key] for v in values]) for key in values[0]}
        return float(np.mean(values))

    out = mean([{k: v for k, v in d.items() if k not in RANKED} for d in draws])
    out.update({k: draws[0][k] for k in RANKED if k in draws[0]})  # measured on the first draw only
    out["draws"] = len(draws)
    out["spread"] = {key: float(np.std([d[key] for d in draws], ddof=1)) if len(draws) > 1 else 0.0
                     for key in ("min", "mean")}
    out["privacy_002"]["spread"] = {key: float(np.std([d["privacy_002"][key] for d in draws], ddof=1))
                                    if len(draws) > 1 else 0.0 for key in ("min", "mean")}
    return out


def _known_io(X: np.ndarray, Y: np.ndarray, q: int, draws: int, rng: np.random.Generator, columns: list[str]):
    """Both known input-output estimators over ``draws`` draws of ``q`` known records, scored on the others."""
    mine, theirs = [], []
    for i in range(draws):
        known = rng.choice(X.shape[0], size=q, replace=False)
        unknown = np.setdiff1d(np.arange(X.shape[0]), known)
        if unknown.size == 0:  # every record known: score on all of them
            unknown = np.arange(X.shape[0])
        mine.append(_scores(X[unknown], known_io(X, Y, known)[unknown], columns, ranks=i == 0))
        theirs.append(_scores(X[unknown], known_io_forward(X, Y, known)[unknown], columns, ranks=i == 0))
    return _average(mine), _average(theirs)


def _multilateration(X: np.ndarray, distances: np.ndarray, draws: int, rng: np.random.Generator,
                     columns: list[str], *, fit_scale: bool = False, score: slice = slice(None)) -> dict:
    """Multilateration from n + 1 known records (000 §4.4), over ``draws`` draws of them.

    ``fit_scale`` first rescales ``distances`` to the references' known
    original distances (least squares), for an embedding whose scale is
    arbitrary. ``score`` picks the columns to score (a party's slice of the
    joined data).
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
        results.append(_scores(X[others][:, score], estimate[others][:, score], columns, ranks=i == 0))
    out = _average(results)
    out["object_privacy_mean"] = float(np.mean(rhos))
    return out


def _embedding_attack(scenario: Scenario, own: dict[str, Disguised], outcome: Outcome | None,
                      settings: Settings) -> dict[str, dict]:
    """Multilateration against the coordinator's nmds embedding, scored per nmds party (000 §4.4 on Y)."""
    if outcome is None or not outcome.combined.embedding or outcome.combined.features is None:
        return {}
    parties = [p for p in scenario.parties if own[p.name].method.name == "nmds"]
    if not parties:
        return {}
    index = outcome.join.index
    X = np.hstack([own[p.name].X[index[p.name]] for p in scenario.parties])
    rng = np.random.default_rng([scenario.seed, 3])
    rows = np.sort(rng.choice(len(X), size=ATTACK_ROWS, replace=False)) if len(X) > ATTACK_ROWS else np.arange(len(X))
    X, Y = X[rows], outcome.combined.features[rows]
    distances = squareform(pdist(Y))
    bounds = np.cumsum([0] + [len(p.columns) for p in scenario.parties])
    starts = {p.name: (a, b) for p, a, b in zip(scenario.parties, bounds, bounds[1:])}
    draws = max(1, min(settings.known_draws, MULTILATERATION_DRAWS))
    out = {}
    for p in parties:
        a, b = starts[p.name]
        found = _multilateration(X, distances, draws, np.random.default_rng([scenario.seed, 3, a]),
                                 own[p.name].data.columns, fit_scale=True, score=slice(a, b))
        out[p.name] = {"knowledge": f"{X.shape[1] + 1} records' original values (n + 1, all joined columns) and "
                                    "the coordinator's nmds embedding, its scale fitted to them", **found}
    return out


def _keep(details: dict | None, party: str, attack: str, original, estimate, columns) -> None:
    """Keep an attack's reconstruction beside the truth it is scored against, when asked to."""
    if details is not None:
        details.setdefault("attacks", {}).setdefault(party, {})[attack] = {
            "original": original, "estimate": estimate, "columns": list(columns)}


def privacy(scenario: Scenario, own: dict[str, Disguised], settings: Settings, outcome: Outcome | None = None,
            details: dict | None = None) -> dict:
    """Per party and per original column: how well each applicable attack reconstructs the party's block.

    The known-record attacks are repeated over ``settings.known_draws`` draws
    of the known records (fewer on many records, see ``known_draws``;
    multilateration over at most ``MULTILATERATION_DRAWS``)
    and report the mean over the draws with its ``spread`` (standard
    deviation); each gives 002's column privacy both as we measure it
    (``min``, ``mean``, ``columns``) and as 002 §6.1.1 defines it
    (``privacy_002``), and 001's distortion of the estimate (``vd`` over all
    draws; ``rp``, ``rm``, ``cp``, ``ck``, which sort every column, on the
    first draw). ``sent_distortion`` compares what the party sent
    with its original block when the two have the same shape.
    """
    out = {}
    embedded = _embedding_attack(scenario, own, outcome, settings)
    for index, cfg in enumerate(scenario.parties):
        mine = own[cfg.name]
        X, m, d = mine.X, mine.X.shape[0], mine.X.shape[1]
        rng = np.random.default_rng([scenario.seed, 2, index])
        rows = np.sort(rng.choice(m, size=ATTACK_ROWS, replace=False)) if m > ATTACK_ROWS else np.arange(m)
        sent = mine.wire_arrays()  # the attacker sees what crossed the wire
        attacks, entry = {}, {}
        draws = known_draws(settings, len(rows))
        if mine.arrays[0].layout == Layout.ROWS:
            Y = sent["data"]
            if Y.shape == X.shape:
                entry["sent_distortion"] = distortion(X[rows], Y[rows])
            q = min(max(math.ceil(settings.known_fraction * len(rows)), d + 1), len(rows))
            ours, theirs = _known_io(X[rows], Y[rows], q, draws, rng, mine.data.columns)
            if details is not None:  # one draw for the picture, from its own generator: the figures stay as measured
                known = np.random.default_rng([scenario.seed, 4, index]).choice(len(rows), size=q, replace=False)
                unknown = np.setdiff1d(np.arange(len(rows)), known)
                _keep(details, cfg.name, "known_io", X[rows][unknown], known_io(X[rows], Y[rows], known)[unknown],
                      mine.data.columns)
            knowledge = f"{q} of {len(rows)} records ({q / len(rows):.1%}) in original and disguised form"
            attacks["known_io"] = {"knowledge": knowledge, "estimator": "regress the original on the disguised "
                                   "data, [Y, 1] B", **ours}
            attacks["known_io_forward"] = {"knowledge": knowledge, "estimator": "002 §6.2.4: fit Y ~ [X, 1] "
                                           "[R'; t], then X = (Y - t) pinv(R')", **theirs}
            estimate = ica_attack(X[rows], Y[rows], random_state=int(rng.integers(2**31)))
            _keep(details, cfg.name, "ica", X[rows], estimate, mine.data.columns)
            attacks["ica"] = {
                "knowledge": "each original column's min, max and histogram",
                **_scores(X[rows], estimate, mine.data.columns),
            }
        elif _metric(mine.method) == "euclidean":
            distances = np.sqrt(squareform(reorder_condensed(sent["sqdist"], m, rows)))
            found = _multilateration(X[rows], distances, max(1, min(draws, MULTILATERATION_DRAWS)), rng,
                                     mine.data.columns)
            if details is not None:  # one draw for the picture, from its own generator: the figures stay as measured
                refs = np.random.default_rng([scenario.seed, 4, index]).choice(len(rows), size=min(d + 1, len(rows)),
                                                                              replace=False)
                others = np.setdiff1d(np.arange(len(rows)), refs)
                estimate = multilateration(distances, refs, X[rows][refs])
                _keep(details, cfg.name, "multilateration", X[rows][others], estimate[others], mine.data.columns)
            attacks["multilateration"] = {
                "knowledge": f"{min(d + 1, len(rows))} records' original values (n + 1) and the party's "
                             "dissimilarities", **found}
            if cfg.name in embedded:
                attacks["multilateration_nmds"] = embedded[cfg.name]
        else:
            attacks["multilateration"] = {"skipped": f"needs Euclidean distances, not metric '{_metric(mine.method)}'"}
        out[cfg.name] = {"method": cfg.method, "records": len(rows), "seed": scenario.seed, **entry,
                         "attacks": attacks}
    return out
