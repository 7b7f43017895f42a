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

import numpy as np
from scipy.spatial.distance import pdist

from coordinator.clustering import cluster
from coordinator.combine import Combined, Contribution, combine, reorder_condensed
from coordinator.join import join_ids
from coordinator.session import Outcome
from parties.config import PartyConfig
from parties.data import blob_labels, load_builtin, read_csv_columns
from parties.methods import method_class
from parties.run import Disguised, disguise
from ppcsim.evaluate.agreement import agreement
from ppcsim.evaluate.attacks import ica_attack, known_io, multilateration, multilateration_privacy
from ppcsim.evaluate.privacy import column_privacy, summary, vd
from ppcsim.evaluate.stress import stress
from ppcsim.evaluate.settings import Settings
from ppcsim.errors import RunError
from ppcsim.scenario import Scenario
from protos.ids import as_text
from protos.serde import Layout

#: Records sampled (seeded) for stress, whose cost is quadratic in the records.
STRESS_ROWS = 2000
#: Records an attack is evaluated on at most (seeded sample), to bound its cost.
ATTACK_ROWS = 20000


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
    ``attacks[party][attack]`` (``original``, ``estimate``, ``columns``).
    """
    own = own or {cfg.name: disguise(cfg) for cfg in scenario.parties}
    for cfg in scenario.parties:
        _check_replayed(cfg, own[cfg.name], sent[cfg.name])
    if details is not None:
        details["own"] = own
    report = {"utility": utility(scenario, outcome, own, details)}
    report["privacy"] = privacy(scenario, own, settings, details) if settings.attacks else {"skipped": "--no-attacks"}
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
    (every feature method, and Euclidean dissimilarities, whose parties
    normalise too); for eq. 5 or eq. 4 dissimilarities, the same metric
    computed by one party holding every joined column.
    """
    index = outcome.join.index
    X = np.hstack([own[p.name].X[index[p.name]] for p in scenario.parties])
    dissimilar = [own[p.name].method for p in scenario.parties if own[p.name].arrays[0].layout == Layout.CONDENSED]
    if not dissimilar or dissimilar[0].metric == "euclidean":
        return Combined(features=X)
    columns = [f"{p.name}.{c}" for p in scenario.parties for c in p.columns]
    params = {"metric": dissimilar[0].metric}
    for key in ("categorical", "binary"):
        params[key] = [f"{p.name}.{c}" for p in scenario.parties for c in p.params.get(key, [])]
    method = method_class("osbr")(**params)
    arrays = {s.name: s.array for s in method.disguise(X, columns)}
    whole = Contribution("all", "osbr", method.public_params(), outcome.join.ids, arrays, is_dissimilarity=True)
    return combine([whole], join_ids({"all": outcome.join.ids}))


def _distances(combined: Combined, rows: np.ndarray, n: int) -> np.ndarray:
    if combined.features is not None:
        return pdist(combined.features[rows])
    return reorder_condensed(combined.dissimilarity, n, rows)


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
    cells, _ = read_csv_columns(scenario.source, [scenario.id_column, scenario.label_column])
    by_id = dict(zip(cells[scenario.id_column], cells[scenario.label_column]))
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
    original = cluster(scenario.clustering, reference)
    if details is not None:
        index = outcome.join.index
        details["joined"] = np.hstack([own[p.name].X[index[p.name]] for p in scenario.parties])
        details["original_labels"] = np.asarray(original)
    out["vs_original"] = agreement(original, outcome.labels)
    first = scenario.parties[0].name  # the joined records by their own ids (the coordinator's may be pseudonyms)
    truth = true_labels(scenario, own[first].data.ids[outcome.join.index[first]])
    if truth is not None:
        out["vs_truth"] = agreement(truth, outcome.labels)
        out["original_vs_truth"] = agreement(truth, original)
    return out


# -- privacy ---------------------------------------------------------------------------------

def _scores(original: np.ndarray, estimate: np.ndarray, columns: list[str]) -> dict:
    p = column_privacy(original, estimate)
    return {"columns": dict(zip(columns, p.tolist())), **summary(p), "vd": vd(original, estimate)}


def _keep(details: dict | None, party: str, attack: str, original, estimate, columns) -> None:
    """Keep an attack's reconstruction beside the truth it is scored against, when asked to."""
    if details is not None:
        details.setdefault("attacks", {}).setdefault(party, {})[attack] = {
            "original": original, "estimate": estimate, "columns": list(columns)}


def privacy(scenario: Scenario, own: dict[str, Disguised], settings: Settings, details: dict | None = None) -> dict:
    """Per party and per original column: how well each applicable attack reconstructs the party's block."""
    out = {}
    for index, cfg in enumerate(scenario.parties):
        mine = own[cfg.name]
        X, m, d = mine.X, mine.X.shape[0], mine.X.shape[1]
        rng = np.random.default_rng([scenario.seed, 2, index])
        rows = np.sort(rng.choice(m, size=ATTACK_ROWS, replace=False)) if m > ATTACK_ROWS else np.arange(m)
        sent = mine.wire_arrays()  # the attacker sees what crossed the wire
        attacks = {}
        if mine.arrays[0].layout == Layout.ROWS:
            Y = sent["data"]
            q = min(max(math.ceil(settings.known_fraction * len(rows)), d + 1), len(rows))
            known = rng.choice(len(rows), size=q, replace=False)
            unknown = np.setdiff1d(np.arange(len(rows)), known)
            estimate = known_io(X[rows], Y[rows], known)
            _keep(details, cfg.name, "known_io", X[rows][unknown], estimate[unknown], mine.data.columns)
            attacks["known_io"] = {
                "knowledge": f"{q} of {len(rows)} records ({q / len(rows):.1%}) in original and disguised form",
                **_scores(X[rows][unknown], estimate[unknown], mine.data.columns),
            }
            estimate = ica_attack(X[rows], Y[rows], random_state=int(rng.integers(2**31)))
            _keep(details, cfg.name, "ica", X[rows], estimate, mine.data.columns)
            attacks["ica"] = {
                "knowledge": "each original column's min, max and histogram",
                **_scores(X[rows], estimate, mine.data.columns),
            }
        elif mine.method.metric == "euclidean":
            refs = rng.choice(len(rows), size=min(d + 1, len(rows)), replace=False)
            distances = np.sqrt(reorder_condensed(sent["sqdist"], m, rows))
            estimate = multilateration(distances, refs, X[rows][refs])
            others = np.setdiff1d(np.arange(len(rows)), refs)
            rho = multilateration_privacy(X[rows], estimate, refs)
            _keep(details, cfg.name, "multilateration", X[rows][others], estimate[others], mine.data.columns)
            attacks["multilateration"] = {
                "knowledge": f"{len(refs)} records' original values (n + 1) and the party's dissimilarities",
                **_scores(X[rows][others], estimate[others], mine.data.columns),
                "object_privacy_mean": float(np.mean(rho)),
            }
        else:
            attacks["multilateration"] = {"skipped": f"needs Euclidean distances, not metric '{mine.method.metric}'"}
        out[cfg.name] = {"method": cfg.method, "records": len(rows), "seed": scenario.seed, "attacks": attacks}
    return out
