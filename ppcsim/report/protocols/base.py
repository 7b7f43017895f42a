"""A protocol's part of the report: what it changes of each party's entry, its own sections, and what the
coordinator learned. The upload's part is ``UploadReport``; a protocol with none registered is reported as an
upload is (what its parties sent)."""

from __future__ import annotations

from coordinator.summary import SessionSummary
from ppcsim.report.model import Party, Report
from ppcsim.scenario.load import Scenario
from protos.clustering import ClusteringSpec


class ProtocolReport:
    """The report's words and sections for one protocol (registered in ppcsim.report.protocols.REPORTS)."""

    def party(self, party: Party, summary: SessionSummary, own: dict) -> None:
        """Adjust one party's entry, built from its upload (``own``: the party's own summary, when known)."""

    def sections(self, report: Report, summary: SessionSummary, summaries: dict[str, dict]) -> None:
        """Add the protocol's own sections to ``report`` from ``summary.sections``."""

    def settings_used(self, spec: ClusteringSpec) -> set[str]:
        """The ``[clustering]`` fields a run of this protocol uses beyond ppcsim.report.settings.ALWAYS: by
        default (an upload) the algorithm's own fields."""
        return set(spec.method.params) if spec.method is not None else set()

    def learns(self, scenario: Scenario, ids: str, active: str) -> list[str]:
        """In plain words, what the coordinator of such a session learned: ``ids`` says what it learned of the
        record ids and ``active`` what an active coordinator could do, as the scenario's security has it."""
        return [
            ids,
            "each party's disguised arrays as sent (sent/<party>.npz) and the public parameters needed to combine "
            "them; never a party's seed, random matrix, translation or noise",
            "the joined data it clusters and the clustering, which it returns to every party",
            "each party's X25519 public key, which it relays; not the secrets agreed from them",
            active,
        ]


class UploadReport(ProtocolReport):
    """One upload of disguised data: each party's entry as its upload made it (``ProtocolReport``)."""
