"""Utility and privacy of a secure-aggregation k-means run, measured by the observer (see observer.py).

Utility: the run's labels against scikit-learn's KMeans on the joined
normalised data from the same initial centres (``init`` = those records,
``n_init = 1``): equal up to the fixed-point scale; the fixed-point error of
the distances the arbiter read, measured; and the agreement with the usual
clustering of the original data (the scenario's k-means with its restarts)
and with the true labels.

Privacy: what the arbiter learns, measured on what it held. Each party's
post, as received, against the party's true partial distances (correlation,
and a Kolmogorov-Smirnov test of uniformity: the mask should leave nothing).
The sums it reads are squared distances of every record to every centre, and
in round 0 the centres are k records the arbiter drew itself: to an attacker
who knows those k records (000 §4.4's known objects), multilateration (000
eqs 4.13-4.18) locates every record from them once k >= d + 1, d the number
of joined columns. The attack is run when it applies.
"""

from __future__ import annotations

import numpy as np

from coordinator.clustering import cluster
from coordinator.combine import Combined
from parties.disguise import disguise
from ppcsim.evaluate.agreement import agreement
from ppcsim.evaluate.arbiter import place_from_round0, placement_error
from ppcsim.evaluate.attacks import multilateration, multilateration_privacy
from ppcsim.evaluate.scores import scores
from ppcsim.evaluate.settings import Settings
from ppcsim.report.model import (
    ABSENT,
    Absent,
    Arbiter,
    AttackScore,
    Evaluation,
    FixedPoint,
    Placement,
    Post,
    Posts,
    SecurePrivacy,
    Skipped,
    Utility,
    parse,
)
from ppcsim.run.observer import true_labels
from ppcsim.scenario.load import Scenario

#: Records the attack and the post statistics are evaluated on at most (seeded sample).
SAMPLE_ROWS = 2000


def joined_data(scenario: Scenario, outcome, own) -> np.ndarray:
    """The joined normalised columns, parties in scenario order, records in the join's order."""
    return np.hstack([own[p.name].X[outcome.join.index[p.name]] for p in scenario.parties])


def reference(X: np.ndarray, init: np.ndarray, k: int, max_iter: int):
    """scikit-learn's Lloyd's k-means from the records ``init``, fitted: one start, ``tol = 0``, so at most
    ``max_iter`` centre updates and fewer only where no label changes (an MPC's fixed rounds, secure aggregation's
    rounds to convergence)."""
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, init=X[init], n_init=1, max_iter=max_iter, tol=0.0, algorithm="lloyd").fit(X)


def rounds_utility(scenario: Scenario, session, own=None, described: str = "strict convergence"):
    """What the rounds' labels are measured against, for every protocol with rounds (secure aggregation in either
    reveal, the MPC): each party's data and disguise (``own``, else replayed from the scenario), the joined
    normalised data ``X``, the ``Utility`` against scikit-learn's Lloyd's from the same initial records (``reference``,
    ``described`` in the report's words), the scenario's usual clustering of ``X`` and the true labels where the
    data has them, and that reference's fitted model. Returns ``(own, X, utility, same)``."""
    own = own or {cfg.name: disguise(cfg) for cfg in scenario.parties}
    outcome, arbiter, spec = session.outcome, session.arbiter, session.spec.clustering
    X = joined_data(scenario, outcome, own)
    labels = outcome.labels
    same = reference(X, arbiter.init, spec.n_clusters, spec.max_iter)
    plain = cluster(scenario.clustering, Combined(features=X))
    utility = Utility(
        reference=f"scikit-learn KMeans from the same initial records (n_init = 1, Lloyd, {described})",
        labels_equal_same_init=bool(np.array_equal(same.labels_, labels)),
        vs_same_init=agreement(same.labels_, labels),
        vs_original=agreement(plain, labels),
        reference_original="the scenario's k-means on the joined normalised data (its restarts)",
    )
    first = scenario.parties[0].name  # the join's ids may be pseudonyms: the records' own ids from a party's rows
    truth = true_labels(scenario, own[first].data.ids[outcome.join.index[first]])
    if truth is not None:
        utility.vs_truth = agreement(truth, labels)
        utility.original_vs_truth = agreement(truth, plain)
    return own, X, utility, same


def evaluate_secure(scenario: Scenario, session, settings: Settings | None, own=None) -> Evaluation:
    """The ``utility`` and ``privacy`` of a finished secure-aggregation session (``result["utility"]`` reads one
    as report.json holds it)."""
    own, X, utility, _ = rounds_utility(scenario, session, own)
    outcome, arbiter, spec = session.outcome, session.arbiter, session.spec.clustering
    labels = outcome.labels
    # the fixed-point error of the last round's sums: at convergence its centres are the final clusters' means
    if arbiter.seen is not None and len(arbiter.records) > 1 and arbiter.records[-1].changed == 0:
        counts = np.bincount(labels, minlength=spec.n_clusters)
        centres = np.zeros((spec.n_clusters, X.shape[1]))
        for c in range(X.shape[1]):
            centres[:, c] = np.bincount(labels, weights=X[:, c], minlength=spec.n_clusters)
        full = counts > 0
        centres[full] /= counts[full, None]
        exact = ((X[:, None, :] - centres[None, full, :]) ** 2).sum(axis=2)
        read = arbiter.seen[:, full] / 2.0**spec.scale_bits
        utility.fixed_point = FixedPoint(scale_bits=spec.scale_bits, max_abs_error=float(np.abs(read - exact).max()),
                                         bound=len(scenario.parties) * 2.0 ** -(spec.scale_bits + 1))
    return Evaluation(utility=utility, privacy=privacy(scenario, session, own, X)
                      if settings is None or settings.attacks else Skipped(skipped="--no-attacks"))


def learns(m: int, k: int, rounds: int) -> Arbiter:
    """What the arbiter sees, in words and counts."""
    return Arbiter(
        sees=[
            f"the squared distance of every joined record to every centre in every round: {m:,} x {k} values "
            f"in each of {rounds} rounds ({m * k * rounds:,} in all), as sums over the parties",
            "in round 0, the centres are k joined records it drew itself: distances of every record to those",
            "the labels of every round, the cluster sizes, which records join (pseudonymous ids)",
            "with a party colluding: the pseudonym key (every party holds it), so every party's ids that can be "
            "guessed, by dictionary tests on their pseudonyms, and the other parties' summed partial distances",
        ],
        never_sees=["a party's values", "a party's partial distances (each post is masked)",
                    "a party's block of any centre"],
    )


#: The arbiter's attack, in words (ppcsim.evaluate.arbiter).
PLACEMENT = ("classical scaling of the k initial records from round 0's summed centre-to-centre distances, then "
             "multilateration of every joined record from its round-0 sums: no knowledge beyond what it saw")


def placement(arbiter, scale_bits: int, X: np.ndarray) -> Placement:
    """The arbiter's own attack on round 0's sums (ppcsim.evaluate.arbiter), scored against the joined
    normalised data ``X``."""
    if arbiter.seen_first is None:
        return Placement(attack=PLACEMENT, relative_error=None, records=0, dims=0,
                         skipped="round 0's sums were not kept (the session ended before round 0)")
    first = arbiter.seen_first.astype(np.float64) / 2.0**scale_bits
    estimate = place_from_round0(first, arbiter.init)
    return Placement(attack=PLACEMENT, relative_error=placement_error(estimate, X), records=len(X),
                     dims=int(estimate.shape[1]))


def privacy(scenario: Scenario, session, own, X: np.ndarray) -> SecurePrivacy:
    arbiter, spec = session.arbiter, session.spec.clustering
    m, k = arbiter.m, arbiter.k
    rng = np.random.default_rng([scenario.seed, 3])
    rows = np.sort(rng.choice(m, size=SAMPLE_ROWS, replace=False)) if m > SAMPLE_ROWS else np.arange(m)
    seen = learns(m, k, len(arbiter.records))
    seen.placement = placement(arbiter, spec.scale_bits, X)
    found: Posts | Absent = ABSENT
    posts = {}
    if arbiter.posts and arbiter.records[-1].changed == 0 and len(arbiter.records) > 1:
        from scipy.stats import kstest

        labels = session.outcome.labels
        counts = np.bincount(labels, minlength=k)
        for p in scenario.parties:
            Xp = own[p.name].X[session.outcome.join.index[p.name]]
            centres = np.zeros((k, Xp.shape[1]))
            for c in range(Xp.shape[1]):
                centres[:, c] = np.bincount(labels, weights=Xp[:, c], minlength=k)
            centres[counts > 0] /= counts[counts > 0, None]
            partial = ((Xp[rows][:, None, :] - centres[None]) ** 2).sum(axis=2).reshape(-1)
            post = arbiter.posts[p.name][rows].reshape(-1).astype(np.float64) / 2.0**64  # as received, in [0, 1)
            posts[p.name] = Post(
                correlation_with_partial_distances=float(np.corrcoef(post, partial)[0, 1]),
                uniformity_ks_pvalue=float(kstest(post, "uniform").pvalue),
                values=int(post.size),
            )
        found = Posts(what="each party's last-round post as the arbiter received it, against the party's true "
                           "partial squared distances (sampled records)", by_party=posts)
    d = X.shape[1]
    attack: dict[str, str | float | int] = {
        "knowledge": f"the {k} records drawn as initial centres, in original form (000 §4.4's known "
                     "objects), and round 0's sums",
    }
    if k < d + 1:
        attack["skipped"] = f"needs at least d + 1 = {d + 1} centres for {d} joined columns; the session has {k}"
    elif arbiter.seen_first is None:
        attack["skipped"] = "round 0's sums were not kept"
    else:
        targets = np.setdiff1d(rows, arbiter.init)
        order = np.concatenate([arbiter.init, targets])
        D = np.zeros((len(order), len(order)))
        squared = np.clip(arbiter.seen_first[targets] / 2.0**spec.scale_bits, 0, None)
        D[k:, :k] = np.sqrt(squared)
        D[:k, k:] = D[k:, :k].T
        estimate = multilateration(D, np.arange(k), X[arbiter.init])
        truth = X[order]
        attack.update(scores(truth[k:], estimate[k:], [f"{p.name}.{c}" for p in scenario.parties for c in p.columns]))
        attack["object_privacy_mean"] = float(np.mean(multilateration_privacy(truth, estimate, np.arange(k))))
        attack["records"] = int(len(targets))
    return SecurePrivacy(arbiter=seen, posts=found, multilateration=parse(AttackScore | Skipped, attack, "multilateration"))
