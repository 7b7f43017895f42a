"""Utility and privacy of a secure-aggregation run that opened the labels only, measured by the observer.

Utility: the labels against scikit-learn's Lloyd's k-means on the joined
normalised data from the same initial records (``n_init = 1``, strict
convergence, at most ``max_iter`` updates): the rounds stop, as
scikit-learn's do, once no label changed; equal unless the fixed-point
rounding (f fractional bits, on either engine) flips a near tie. Agreement with the usual
clustering and with the true labels as in every report.

Privacy: what each role learned, in words (ppcsim.run.observers.mpc.roles'
assumption: honest majority), and the arbiter's attack
(ppcsim.evaluate.arbiter), which has nothing to run on: the coordinator
never held a distance, only sealed frames, the number of rounds and the
labels.
"""

from __future__ import annotations

from coordinator.protocols.mpc import HELPER, threshold
from ppcsim.evaluate.settings import Settings
from ppcsim.report.model import Arbiter, Evaluation, MpcPrivacy, Placement, Skipped
from ppcsim.run.observers.mpc import honest_majority
from ppcsim.run.observers.secure_aggregation import PLACEMENT, rounds_utility
from ppcsim.scenario.load import Scenario

#: Why the arbiter's attack has nothing to run on in this mode.
NOTHING = ("nothing to run on: the coordinator held no distance, only sealed frames, the number of rounds and the "
           "labels (reveal = \"labels\")")


def roles(n_parties: int, helper: bool, engine: str = "mpyc") -> MpcPrivacy:
    """What each role of a labels-only secure-aggregation session learns, in words (``engine``: the argmin's,
    "mpyc" or "spu")."""
    t = threshold(n_parties + helper)
    out = {
        "coordinator": Arbiter(
            sees=["the size, timing and direction of every relayed frame (they follow from the public settings: "
                  "records, k, rounds, fixed-point type)",
                  "the number of rounds and the final labels (the session's result), and so the cluster sizes; "
                  "every round's labels are opened to every party, so they are best counted as known to it too",
                  "which joined records start the centres (positions drawn with the scenario seed)"],
            never_sees=["a share (each frame is sealed under a key of the two parties of its link)",
                        "any distance, partial distance, centre or comparison"],
            placement=Placement(attack=PLACEMENT, relative_error=None, records=0, dims=0, skipped=NOTHING)),
        "each party": Arbiter(
            sees=["its own columns and its own block of every centre, every round",
                  "the labels of every joined record in every round, and so the cluster sizes",
                  "which records start the centres, and how many columns each party inputs",
                  f"shares of every other party's partial distances: random-looking to any t = {t} share-holder"
                  f"{'s' if t != 1 else ''} together"],
            never_sees=["another party's values, partial distances or centre blocks",
                        "a summed distance, or which centre came second for a record"]),
    }
    if helper:
        out[HELPER] = Arbiter(
            sees=["shares of the parties' partial distances, and every round's labels"],
            never_sees=["any distance, so long as it does not collude with a party (with two parties t = 1: a party "
                        "and the helper together could open every share)"])
    return MpcPrivacy(assumption=honest_majority(engine, n_parties, helper, "every partial distance",
                                                 ring="Z_2^64"), roles=out)


def evaluate_labels(scenario: Scenario, session, settings: Settings | None, own=None) -> Evaluation:
    """The ``utility`` and ``privacy`` of a finished secure-aggregation session that opened the labels only."""
    _, _, utility, _ = rounds_utility(scenario, session, own)
    spec = session.spec.clustering
    privacy = roles(len(scenario.parties), spec.helper, spec.engine)
    return Evaluation(utility=utility, privacy=privacy if settings is None or settings.attacks
                      else Skipped(skipped="--no-attacks"))
