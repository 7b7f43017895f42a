"""Utility and privacy of a finished run, measured by an observer outside the protocol.

The launcher is the one place that sees every party's original columns. After
a run it rebuilds what each party held (the same loading, normalisation and
seeded disguise), then compares: the distances and the clustering the
coordinator worked on against those of the original joined data (utility),
and what an attacker can reconstruct from each party's sent arrays (privacy).
Nothing computed here is ever sent to the coordinator.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist

from coordinator.clustering import cluster
from coordinator.combine import Combined, Contribution, combine, reorder_condensed
from coordinator.forms import FORMS
from coordinator.join import join_ids
from coordinator.session import Outcome
from parties.config import PartyConfig
from parties.disguise import Disguised, disguise
from parties.sources import source_kind
from ppcsim.errors import RunError
from ppcsim.evaluate.agreement import agreement
from ppcsim.evaluate.artifacts import RunArtifacts
from ppcsim.evaluate.attackers import ATTACKS, Target
from ppcsim.evaluate.attackers.base import ATTACK_ROWS, dissimilarity_metric, known_draws, sends_rows
from ppcsim.evaluate.classification import classification
from ppcsim.evaluate.neighbours import profile
from ppcsim.evaluate.scores import sent_scores
from ppcsim.evaluate.settings import Settings
from ppcsim.evaluate.stress import stress
from ppcsim.report.model import Evaluation, Privacy, Utility, parse
from ppcsim.scenario.load import Scenario

#: Records sampled (seeded) for stress, whose cost is quadratic in the records.
STRESS_ROWS = 2000
# ATTACK_ROWS and known_draws, which bound the attacks' cost, are in ppcsim.evaluate.attackers.base


def evaluate(
    scenario: Scenario,
    outcome: Outcome,
    sent: dict[str, Contribution],
    settings: Settings,
    own: dict[str, Disguised] | None = None,
    artifacts: RunArtifacts | None = None,
) -> Evaluation:
    """The utility and privacy (a typed ``Evaluation``, the report's two sections) of a run whose
    coordinator reached ``outcome``.

    ``own`` is each party's disguise when the caller has it already; otherwise
    it is replayed from the scenario (same data, normalisation and seed).
    ``artifacts``, when given, is filled with the arrays behind the numbers,
    for pictures (ppcsim.report.plots): ``own``, ``joined``,
    ``original_labels`` and ``attacks`` (see RunArtifacts).
    """
    own = own or {cfg.name: disguise(cfg) for cfg in scenario.parties}
    for cfg in scenario.parties:
        _check_replayed(cfg, own[cfg.name], sent[cfg.name])
    if artifacts is not None:
        artifacts.own = own
    measured = utility(scenario, outcome, own, artifacts)
    found = (privacy(scenario, own, settings, outcome, artifacts) if settings.attacks
             else {"skipped": "--no-attacks"})
    return Evaluation(utility=Utility.from_json(measured, "utility"), privacy=parse(Privacy, found, "privacy"))


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
    if not dissimilar or FORMS[dissimilarity_metric(dissimilar[0])].features:
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


def _distances(combined: Combined, rows: np.ndarray, n: int) -> np.ndarray:
    if combined.features is not None:
        return pdist(combined.features[rows])
    return reorder_condensed(combined.require_dissimilarity(), n, rows)


def true_labels(scenario: Scenario, ids: np.ndarray) -> np.ndarray | None:
    """The ``label_column`` of the scenario's shared data, aligned with ``ids``; None without one. Its kind of
    source (``parties.sources``) reads them: a built-in set's target, a generator's clusters, a file's column."""
    if not scenario.label_column or not scenario.source:
        return None
    kind = source_kind(scenario.source)
    options = next((p.source_options for p in scenario.parties if p.source == scenario.source), {})
    # [data] may leave the id column to each party that reads its file
    id_column = scenario.id_column or next(
        (p.id_column for p in scenario.parties if p.source == scenario.source and p.id_column), None)
    return kind.labels(scenario.source, options, ids, scenario.label_column, id_column)


def utility(scenario: Scenario, outcome: Outcome, own: dict[str, Disguised],
            artifacts: RunArtifacts | None = None) -> dict:
    """Stress (004 eq. 6) and agreement of the clustering with that of the original joined data; with true labels,
    agreement with them and the classifiers' cross-validated accuracy (``classification``, 000 §5.3)."""
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
    if artifacts is not None:  # the joined columns reference_combined built already, when it kept them as features
        index = outcome.join.index
        artifacts.joined = (reference.features if reference.features is not None
                            else np.hstack([own[p.name].X[index[p.name]] for p in scenario.parties]))
        artifacts.original_labels = np.asarray(original)
    out["vs_original"] = agreement(original, outcome.labels)
    if truth is not None:
        out["vs_truth"] = agreement(truth, outcome.labels)
        out["original_vs_truth"] = agreement(truth, original)
        out["classification"] = _classification(scenario, outcome, own, reference, truth)
    return out


def _classification(scenario: Scenario, outcome: Outcome, own: dict[str, Disguised], reference: Combined,
                    truth: np.ndarray) -> dict:
    """Cross-validated accuracy on the coordinator's joined features beside the original's (000 §5.3, 003)."""
    if outcome.combined.features is None:
        return {"skipped": "the coordinator joined dissimilarities, not features: there is nothing to classify"}
    index = outcome.join.index
    X = (reference.features if reference.features is not None
         else np.hstack([own[p.name].X[index[p.name]] for p in scenario.parties]))
    return classification(X, outcome.combined.features, truth, scenario.seed)


# -- privacy ---------------------------------------------------------------------------------

def privacy(scenario: Scenario, own: dict[str, Disguised], settings: Settings, outcome: Outcome | None = None,
            artifacts: RunArtifacts | None = None) -> dict:
    """Per party and per original column: how well each applicable attack reconstructs the party's block.

    Every attack of ``ppcsim.evaluate.attackers.ATTACKS`` that applies to
    what the party sent runs, in the registry's order, on at most
    ``ATTACK_ROWS`` sampled records. The known-record attacks are repeated
    over ``settings.known_draws`` draws of the known records (fewer on many
    records, see ``known_draws``; multilateration over at most
    ``MULTILATERATION_DRAWS``) and report the mean over the draws with its
    ``spread`` (standard deviation); each gives every metric of
    ``ppcsim.evaluate.scores.PRIVACY_METRICS``: 002's column privacy both as
    we measure it (``min``, ``mean``, ``columns``) and as 002 §6.1.1 defines
    it (``privacy_002``), and 001's distortion of the estimate (``vd`` over
    all draws; ``rp``, ``rm``, ``cp``, ``ck``, which sort every column, on
    the first draw). ``sent_distortion`` gives the one-figure metrics of what
    the party sent against its original block: all of them when the two have
    the same shape, else those that compare blocks of different widths (001's
    CCA and knnM). A party no attack applies to gets each attack's reason for not
    applying, as ``{"skipped": ...}``.
    """
    out = {}
    cache: dict = {}  # shared by the parties' attacks: e.g. the coordinator's embedding, computed once
    for index, cfg in enumerate(scenario.parties):
        mine = own[cfg.name]
        m = mine.X.shape[0]
        rng = np.random.default_rng([scenario.seed, 2, index])
        rows = np.sort(rng.choice(m, size=ATTACK_ROWS, replace=False)) if m > ATTACK_ROWS else np.arange(m)
        target = Target(scenario, index, cfg, mine, rows, rng, known_draws(settings, len(rows)), settings, outcome,
                        own, cache, artifacts)
        entry = {}
        if sends_rows(mine):  # the attacker sees what crossed the wire; fewer columns: the measures that allow it
            entry["sent_distortion"] = sent_scores(target.X, target.sent["data"][rows])
        attacks = {name: attack.record(target) for name, attack in ATTACKS.items() if attack.applies(target)}
        if not attacks:
            attacks = {name: {"skipped": why} for name, attack in ATTACKS.items()
                       if (why := attack.skipped(target)) is not None}
        out[cfg.name] = {"method": cfg.method, "records": len(rows), "seed": scenario.seed, **entry,
                         "attacks": attacks}
    return out
