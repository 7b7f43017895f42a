"""The built-in protocols as the session runs them: one upload of disguised data, secure aggregation, MPC.

Each is a ``SessionProtocol`` (coordinator.protocols.base) registered by
its name; what it runs is in its own modules (coordinator.pipeline for the
upload; coordinator.protocols.secagg, .secagg_labels and .mpc for the
rounds), imported by the sessions that use them.
"""

from __future__ import annotations

from typing import Any

from coordinator.errors import SessionError
from coordinator.protocols.base import SessionProtocol, register
from protos.clustering import PROTOCOL_TERMS
from protos.vocabulary import MPC, SECURE, UPLOAD


@register
class Upload(SessionProtocol):
    """Each party uploads its disguised data once; the coordinator joins, combines and clusters it
    (coordinator.pipeline)."""

    terms = PROTOCOL_TERMS[UPLOAD]

    def start(self) -> None:
        from coordinator.clustering import preload_in_background

        preload_in_background()  # scikit-learn imports while the parties start, not inside the clustering

    def begin(self) -> None:
        from coordinator.pipeline import pipeline

        session = self.session
        contributions = [session.contributions[p] for p in session.spec.parties]
        try:  # without keep_uploads, the pipeline uses the uploads and the running sums up (see there)
            outcome = pipeline(contributions, session.spec.clustering, session.sums, keep=session.spec.keep_uploads,
                               clock=session.clock.now, matrix=session.matrix)
        except SessionError as exc:
            session.fail(str(exc))
            return
        except Exception as exc:  # a bug or a resource limit; the parties must still be told
            session.fail(f"clustering failed: {type(exc).__name__}: {exc}")
            return
        session.complete(outcome)


class Rounds(SessionProtocol):
    """A protocol whose parties upload ids alone and then run rounds over the join (secure aggregation, MPC)."""

    def begin(self) -> None:
        """Every party's ids are in: join them and open the rounds (and the MPC's relay, when the parties compute
        among themselves)."""
        from coordinator.protocols.mpc import open_hub
        from coordinator.protocols.secagg import begin

        session = self.session
        try:
            t = session.clock.now()
            arbiter = begin(session)
            if session.spec.clustering.relayed:  # an MPC, or secure aggregation opening the labels only
                open_hub(session, arbiter)
            session.time_phase("join_seconds", session.clock.now() - t)
        except SessionError as exc:
            session.fail(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a bug must fail the session with a message, not end the thread
            session.fail(f"joining the ids failed: {type(exc).__name__}: {exc}")
            return
        session.publish(lambda: setattr(session, "arbiter", arbiter))


@register
class SecureAggregation(Rounds):
    """k-means by rounds of secure aggregation (coordinator.protocols.secagg; labels only: .secagg_labels)."""

    terms = PROTOCOL_TERMS[SECURE]

    def summary(self) -> dict[str, Any] | None:
        """The rounds and their bytes (coordinator.protocols.secagg.accounting); opening the labels only, with the
        argmin's relay (coordinator.protocols.secagg_labels.accounting)."""
        if self.session.spec.clustering.labels_only:
            from coordinator.protocols.secagg_labels import accounting as labels_accounting

            accounts, relay = labels_accounting(self.session)
            return {"secure_aggregation": accounts, "mpc": relay}
        from coordinator.protocols.secagg import accounting

        return {"secure_aggregation": accounting(self.session)}


@register
class Mpc(Rounds):
    """k-means as a secure multiparty computation over the coordinator's relay (coordinator.protocols.mpc)."""

    terms = PROTOCOL_TERMS[MPC]

    def summary(self) -> dict[str, Any] | None:
        """The MPC's relay: parties, threshold, bytes per party, link and round (coordinator.protocols.mpc)."""
        from coordinator.protocols.mpc import accounting

        return {"mpc": accounting(self.session)}
