"""Secure aggregation in the report: each party sends partial distances (masked, or as secret shares when the
session opens the labels only); the rounds' section, and the argmin's relay when labels only."""

from __future__ import annotations

from coordinator.summary import SessionSummary
from ppcsim.report.model import Mpc, Party, Report, SecureAggregation
from ppcsim.report.protocols.base import ProtocolReport
from ppcsim.report.protocols.mpc import sequential
from ppcsim.scenario.load import Scenario
from protos.clustering import SECURE_FIELDS
from protos.vocabulary import SECURE

#: What the coordinator of a secure-aggregation session opening the labels only learns beside the ids
#: (coordinator.protocols.secagg_labels).
LABELS_COORDINATOR_LEARNS = [
    "the size, timing and direction of every frame of the parties' argmin, which it relays sealed under pair keys "
    "it cannot compute: no share, no distance, no centre",
    "the number of rounds (the parties stop once no label changed) and the final labels (the session's result), "
    "and so the cluster sizes; every round's labels are opened to every party, so treat them as known to it too",
    "which joined records start the centres (positions it drew with the scenario seed), not their values",
    "each party's X25519 public key, which it relays; not the secrets agreed from them",
]


class SecureAggregationReport(ProtocolReport):
    """Secure aggregation (coordinator.protocols.secagg; labels only: .secagg_labels)."""

    def party(self, party: Party, summary: SessionSummary, own: dict) -> None:
        labels_only = summary.clustering.labels_only  # secure aggregation's argmin as an MPC: relayed like one
        party.method, party.sends = SECURE, ("its partial distances as secret shares, sealed per peer and "
                                             "relayed" if labels_only else "masked partial distances")
        party.output_dims = summary.clustering.n_clusters
        accounts = summary.sections.get("secure_aggregation")
        if accounts and "by_party" in accounts:
            party.bytes.predicted = accounts["by_party"][party.name]["predicted"]["up"]
        party.rounds = own.get("rounds")

    def sections(self, report: Report, summary: SessionSummary, summaries: dict[str, dict]) -> None:
        accounts = summary.sections.get("secure_aggregation")
        if accounts is not None:
            report.secure_aggregation = SecureAggregation.from_json(accounts, "secure_aggregation")
        if summary.clustering.labels_only:
            report.mpc = Mpc.from_json(summary.sections["mpc"], "mpc")
            sequential(report.mpc, summaries)

    def settings_used(self, spec):
        """Its rounds' fields and a party's ``min_cluster_size``; opening the labels only, the MPC argmin's too."""
        return set(SECURE_FIELDS) | ({"mpc_bits", "mpc_frac", "helper", "engine"} if spec.labels_only else set())

    def learns(self, scenario: Scenario, ids: str, active: str) -> list[str]:
        if scenario.clustering.labels_only:
            return [ids, *LABELS_COORDINATOR_LEARNS, active
                    + ("; the pair keys seal every share it relays, so relaying keys of its own lets it open every "
                       "share and so read every party's partial distances" if not scenario.security.mutual else "")]
        return [
            ids,
            "every joined record's squared distance to every centre, every round (sums of masked partial "
            "distances), and so the labels; never a party's values, partial distances or centre blocks",
            "the clustering, which it returns to every party",
            "each party's X25519 public key, which it relays; not the secrets agreed from them",
            active,
            "as an active arbiter it still chooses the initial centres and every round's labels: k - 1 clusters of "
            "single records a round give it anchors spanning the d joined columns in about d / (k - 1) rounds, and "
            "with them every joined record's place (docs/secure-aggregation.md, 'Against an active coordinator'); "
            "the parties' checks stop lies about the alignment and labels told differently to different parties; "
            "reveal = \"labels\" (the default) leaves it no distance",
        ]
