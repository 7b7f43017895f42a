"""Each protocol's part of the report, registered by the protocol's name (as its coordinator's part is in
coordinator.protocols and its observer in ppcsim.run.observers): ``REPORTS``; ``report_of`` gives a protocol
with none registered the upload's (``UploadReport``)."""

from __future__ import annotations

from ppcsim.report.protocols.base import ProtocolReport, UploadReport
from ppcsim.report.protocols.mpc import MpcReport
from ppcsim.report.protocols.secure_aggregation import SecureAggregationReport
from protos.vocabulary import MPC, SECURE, UPLOAD

#: The protocols' parts of the report, by protocol name.
REPORTS: dict[str, ProtocolReport] = {UPLOAD: UploadReport(), SECURE: SecureAggregationReport(), MPC: MpcReport()}


def report_of(protocol: str) -> ProtocolReport:
    """The report's part for ``protocol``: its registered one, else the upload's."""
    return REPORTS.get(protocol, REPORTS[UPLOAD])


__all__ = ["REPORTS", "MpcReport", "ProtocolReport", "SecureAggregationReport", "UploadReport", "report_of"]
