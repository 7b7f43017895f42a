"""Utility and privacy of an MPC k-means run, measured by the observer (see observer.py).

Utility: the labels the MPC opened against scikit-learn's KMeans on the
joined normalised data from the same initial records (``n_init = 1``,
``max_iter`` = the session's rounds): equal unless a fixed-point rounding of
SecFxp(l, f) flips a near tie; the opened centres (when the session opens
them) against scikit-learn's, their largest difference; and the agreement
with the usual clustering of the original data and with the true labels.

Privacy: nothing is measured on the coordinator's view because it holds
nothing to attack: sealed frames whose sizes and timing follow from the
public settings. The report says what each role learned and under which
assumption (reference.md §13).
"""

from __future__ import annotations

import numpy as np

from coordinator.protocols.mpc import HELPER, threshold
from ppcsim.evaluate.settings import Settings
from ppcsim.report.model import Arbiter, Evaluation, MpcPrivacy, Skipped
from ppcsim.run.observers.secure_aggregation import rounds_utility
from ppcsim.scenario.load import Scenario


def roles(n_parties: int, helper: bool, reveal_centres: bool, engine: str = "mpyc") -> MpcPrivacy:
    """What each role of an MPC session learns, in words (``engine``: "mpyc" or "spu")."""
    t = threshold(n_parties + helper)
    opened = "the labels of every joined record" + (" and the final centres" if reveal_centres else "")
    out = {
        "coordinator": Arbiter(
            sees=["the size, timing and direction of every relayed frame (they follow from the public settings: "
                  "records, columns, k, rounds, fixed-point type)",
                  "the labels the parties opened (the session's result), and so the cluster sizes",
                  "which joined records start the centres (positions drawn with the scenario seed)",
                  *([f"through the {HELPER} it runs, a share of every value, every party's columns included: with "
                     "either party's shares, all of the other party's data"] if helper else []),
                  "with a party colluding: the pseudonym key (every party holds it), so every party's ids that can "
                  "be guessed, by dictionary tests on their pseudonyms"],
            never_sees=["a share in a relayed frame (each is sealed under a key of the two parties of its link)",
                        "any value, distance, centre or comparison of the computation"
                        + (", so long as its helper colludes with no party" if helper else "")]),
        "each party": Arbiter(
            sees=[f"its own columns and {opened}", "which records start the centres, and how many columns each "
                  "party inputs", "shares of every secret: random-looking to any t = "
                  f"{t} share-holder{'s' if t != 1 else ''} together"],
            never_sees=["another party's values, the distances, the centres during the rounds"
                        + ("" if reveal_centres else " or at the end"),
                        "whether labels changed between rounds (the MPC runs every round; no early stop)"]),
    }
    if helper:
        out[HELPER] = Arbiter(
            sees=[f"a share of everything: the parties' columns and every intermediate value, and {opened}",
                  "with either party's shares (t = 1), every value: all of the other party's data"],
            never_sees=["any value from its shares alone (it runs in the coordinator's process: the coordinator "
                        "and either party together read the other's data)"])
    return MpcPrivacy(assumption=honest_majority(engine, n_parties, helper, "every value"), roles=out)


def honest_majority(engine: str, n_parties: int, helper: bool, what: str, ring: str = "Z_2^64 or Z_2^128") -> str:
    """The trust an MPC of ``n_parties`` (and the coordinator's helper) rests on, in words: the engine's sharing
    hides ``what`` from any t share-holders (t: coordinator.protocols.mpc.threshold)."""
    t = threshold(n_parties + helper)
    sharing = (f"SPU's ABY3 (replicated secret sharing over the ring {ring})" if engine == "spu"
               else "Shamir secret sharing")
    return (f"honest majority: {sharing} with threshold t = {t} over {n_parties + helper} share-holders hides "
            f"{what} from any t of them, if all follow the protocol (honest but curious); "
            + ("the helper is run beside the coordinator and must not collude with either party" if helper
               else f"no {t + 1} parties collude"))


def evaluate_mpc(scenario: Scenario, session, settings: Settings | None, own=None) -> Evaluation:
    """The ``utility`` and ``privacy`` of a finished MPC session."""
    spec = session.spec.clustering
    _, _, utility, same = rounds_utility(scenario, session, own, described=f"max_iter = {spec.max_iter}")
    opened = {p: r[1] for p, r in session.arbiter.hub.results.items()}
    first = opened.get(scenario.parties[0].name, b"")
    if spec.reveal_centres and first:
        centres = np.frombuffer(first, dtype="<f8").reshape(spec.n_clusters, -1)
        if centres.shape == same.cluster_centers_.shape:
            utility.extra["centres_max_abs_error"] = float(np.abs(centres - same.cluster_centers_).max())
    privacy = roles(len(scenario.parties), spec.helper, spec.reveal_centres, spec.engine)
    return Evaluation(utility=utility, privacy=privacy if settings is None or settings.attacks
                      else Skipped(skipped="--no-attacks"))

