"""What ``ppc run`` measures of a session, per protocol: an observer holding every party's data.

Each protocol's observer is a class registered by the protocol's name in
``OBSERVERS`` (as the coordinator's and the parties' parts are in
coordinator.protocols and parties.protocols): ``evaluate`` measures the
run's utility and privacy (the report's two sections) from the finished
session, and ``in_process`` runs the session in this process (threads, no
gRPC) for the API and ``ppc sweep --in-process``, or says why it cannot.
The observer of the upload protocol is ppcsim.run.observer (the disguises'
attacks); of secure aggregation ``secure_aggregation`` (and
``secure_labels`` for reveal = "labels"); of an MPC ``mpc``. A protocol
registered without an observer is measured as an upload is: on what its
parties sent.
"""

from __future__ import annotations

import importlib
from typing import Any

from protos.vocabulary import MPC, SECURE, UPLOAD


class Observer:
    """The observer of one protocol; subclass it and register it in ``OBSERVERS``."""

    def evaluate(self, scenario, session, settings, own=None, artifacts=None):
        """The run's typed ``Evaluation`` (utility and privacy) from its finished ``session``; ``own``: each
        party's data and disguise when the caller has them (else replayed from the scenario); ``artifacts``
        (ppcsim.evaluate.artifacts.RunArtifacts) receives the arrays behind the numbers when given."""
        from ppcsim.run.observer import evaluate

        return evaluate(scenario, session.wait(0), session.contributions, settings, own=own, artifacts=artifacts)

    def in_process(self, scenario, log) -> tuple[Any, dict]:
        """Run the session in this process: its finished session and each party's ``Disguised``."""
        from ppcsim.run.inprocess import simulate

        return simulate(scenario)

    def modules(self, scenario) -> list[str]:
        """The modules ``evaluate`` imports (scikit-learn and scipy among them: a second or more)."""
        return ["ppcsim.run.observer"]

    def prepare_early(self, scenario) -> bool:
        """Whether ``ppc run`` imports the evaluation's modules (``prepare``) while the parties start and
        compute (True), or once the session is over, while the parties fetch their results and exit (False):
        for a session whose rounds wait on messages in sequence through the coordinator (an MPC over the
        relay), where an import holding the coordinator's interpreter lock delays every message it relays."""
        return True

    def prepare(self, scenario) -> None:
        """Import what ``evaluate`` will need (``modules``), so that ``ppc run`` can do it in a thread of its
        own beside the session (``prepare_early`` says when), not after it; nothing else changes."""
        for name in self.modules(scenario):
            importlib.import_module(name)

    def uploaded(self, party: str, payload_bytes: int) -> str:
        """``ppc run``'s line once ``party``'s upload is in."""
        return f"party {party} uploaded ({payload_bytes:,} bytes of arrays)"

    def progress(self, session) -> str | None:
        """``ppc run``'s line, every few seconds while the session clusters, on how its rounds go; None: none."""
        return None

    def needs_processes(self, scenario) -> str | None:
        """What of this session needs each party to be an OS process of its own (an MPC), in words for the
        message that refuses to run it in one process; None when it can."""
        return None


def rounds_progress(session) -> str | None:
    """How the rounds go: the round each MPC party marked (an MPC, or secure aggregation opening the labels only),
    or secure aggregation's round (or k-means++ seeding step) and the labels the last one changed."""
    from coordinator.session import CLUSTERING

    arbiter = session.arbiter
    if arbiter is not None and arbiter.hub is not None:  # MPC: the rounds each party marked
        if session.state != CLUSTERING:
            return None
        marks = dict(arbiter.hub.current)
        return "mpc: " + (", ".join(f"{p} round {r}" if r >= 0 else f"{p} sharing its input"
                                    for p, r in marks.items()) or "connecting the parties")
    if arbiter is not None and not arbiter.done:
        last = arbiter.records[arbiter.round - 1].changed if arbiter.round else None
        return (f"secure aggregation: seeding step {arbiter.step} of {arbiter.seeding_steps}" if arbiter.seeding
                else f"secure aggregation: round {arbiter.round}"
                + (f" ({last:,} labels changed in the last)" if last is not None else ""))
    return None


class SecureAggregationObserver(Observer):
    """Secure aggregation: what the arbiter saw and could place (ppcsim.run.observers.secure_aggregation), or,
    opening the labels only, what each role learned (ppcsim.run.observers.secure_labels)."""

    def evaluate(self, scenario, session, settings, own=None, artifacts=None):
        if scenario.clustering.labels_only:  # the argmin as an MPC
            from ppcsim.run.observers.secure_labels import evaluate_labels

            return evaluate_labels(scenario, session, settings, own=own)
        from ppcsim.run.observers.secure_aggregation import evaluate_secure

        return evaluate_secure(scenario, session, settings, own=own)

    def modules(self, scenario):
        return ["ppcsim.run.observers." + ("secure_labels" if scenario.clustering.labels_only
                                           else "secure_aggregation")]

    def uploaded(self, party, payload_bytes):
        return f"party {party} sent its ids (secure aggregation: its columns stay with it)"

    def progress(self, session):
        return rounds_progress(session)

    def in_process(self, scenario, log):
        from ppcsim.run.inprocess import simulate_secure

        session, _, own = simulate_secure(scenario, log=log)  # rounds, each party a thread
        return session, own

    def prepare_early(self, scenario):
        return not scenario.clustering.labels_only  # the argmin's messages go through the relay in sequence

    def needs_processes(self, scenario):
        return 'protocol = "secure_aggregation" with reveal = "labels" (an MPC argmin)' \
            if scenario.clustering.labels_only else None


class MpcObserver(Observer):
    """An MPC: what each role learned (ppcsim.run.observers.mpc)."""

    def evaluate(self, scenario, session, settings, own=None, artifacts=None):
        from ppcsim.run.observers.mpc import evaluate_mpc

        return evaluate_mpc(scenario, session, settings, own=own)

    def modules(self, scenario):
        return ["ppcsim.run.observers.mpc"]

    def prepare_early(self, scenario):
        return False  # every MPC message goes through the relay in sequence

    def progress(self, session):
        return rounds_progress(session)

    def needs_processes(self, scenario):
        return 'protocol = "mpc"'


#: The observers by protocol name; a protocol absent here is observed as an upload (``observer``).
OBSERVERS: dict[str, Observer] = {UPLOAD: Observer(), SECURE: SecureAggregationObserver(), MPC: MpcObserver()}


def observer(protocol: str) -> Observer:
    """The observer of ``protocol``: its registered one, else the upload's (it reads what the parties sent)."""
    return OBSERVERS.get(protocol, OBSERVERS[UPLOAD])


__all__ = ["OBSERVERS", "MpcObserver", "Observer", "SecureAggregationObserver", "observer"]
