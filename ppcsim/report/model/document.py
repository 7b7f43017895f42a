"""The whole ``report.json``: the top-level ``Report``, reading one back (``load``) and the JSON Schema
generated from the types (``schema``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from ppcsim.report.model.base import ABSENT, SCHEMA_ID, Absent, ReportError, Section, _section_schema
from ppcsim.report.model.evaluation import Observer, Privacy, Utility
from ppcsim.report.model.parties import Party
from ppcsim.report.model.protocols import Mpc, SecureAggregation
from ppcsim.report.model.session import Clustering, Communication, Join, Memory, Security, Timing


@dataclass(kw_only=True)
class Cluster(Section):
    """Where a run's parties ran on a Dask cluster (``ppc run --scheduler``).

    Attributes
    ----------
    scheduler : str
        The scheduler's address, or ``local:N``.
    placed : object
        Per party, the worker it ran on.
    """

    scheduler: str
    placed: dict[str, str]


@dataclass(kw_only=True)
class Report(Section):
    """``report.json``: everything a run measured.

    Attributes
    ----------
    format : int
        The layout's version (``FORMAT``); absent in format 1.
    scenario : str
        The scenario's (and session's) name.
    scenario_file : str
        The scenario file it ran.
    seed : int
        The scenario's seed.
    state : str
        How the session ended: ``done`` or ``failed``.
    error : str or null
        Why the run failed; null when it did not.
    parties : array
        Every party, in the scenario's order.
    join : Join
        The join on record id.
    clustering : Clustering
        The clustering and what it found.
    security : Security
        How the connections were protected and what the coordinator learned.
    communication : Communication
        Every message, counted by the coordinator.
    timing : Timing
        Seconds by phase.
    memory : Memory
        The coordinator's memory.
    secure_aggregation : SecureAggregation
        The rounds (secure-aggregation sessions only).
    mpc : Mpc
        The relayed MPC traffic (MPC sessions only).
    observer : Observer
        The seeds (``ppc run`` and the Python API only).
    utility : Utility
        Utility, measured by the observer (not with ``--no-eval``, nor by a by-hand coordinator).
    privacy : object
        Privacy, measured by the observer: per party its attacks, the arbiter's view (secure aggregation), or
        ``{"skipped": "--no-attacks"}``.
    cluster : Cluster
        Where the parties ran (``ppc run --scheduler`` only).
    not_measured : object
        A by-hand coordinator: what its report cannot hold (utility, privacy, observer), and why.
    """

    format: int | Absent = ABSENT
    scenario: str
    scenario_file: str
    seed: int
    state: str
    error: str | None
    parties: list[Party]
    join: Join
    clustering: Clustering
    security: Security
    communication: Communication
    timing: Timing
    memory: Memory
    secure_aggregation: SecureAggregation | Absent = ABSENT
    mpc: Mpc | Absent = ABSENT
    observer: Observer | Absent = ABSENT
    utility: Utility | Absent = ABSENT
    privacy: Privacy | Absent = ABSENT
    cluster: Cluster | Absent = ABSENT
    not_measured: dict[str, str] | Absent = ABSENT

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> Self:
        """As :meth:`Section.from_json`; a format-1 report's ``network.wire_down`` is read as ``bytes.wire_down``."""
        report = super().from_json(data, path)
        for party in report.parties:
            network = party.network
            if network is not ABSENT and network.wire_down is not ABSENT and party.bytes.wire_down is ABSENT:
                party.bytes.wire_down, network.wire_down = network.wire_down, ABSENT
        return report

    def dumps(self) -> str:
        """The report as ``report.json`` holds it."""
        return json.dumps(self.to_json(), indent=2)

    def party(self, name: str) -> Party:
        """The party called ``name``; KeyError naming the parties there are."""
        for p in self.parties:
            if p.name == name:
                return p
        raise KeyError(f"no party {name!r} in this report (parties: {', '.join(p.name for p in self.parties)})")


def as_report(report: Report | dict) -> Report:
    """``report`` as a :class:`Report`: itself, or read (and checked) from its JSON values."""
    return report if isinstance(report, Report) else Report.from_json(report)


def load(path: str | Path) -> Report:
    """A ``report.json`` read back as a :class:`Report`.

    Raises
    ------
    ReportError
        Naming the file and the field that does not have the report's shape.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReportError(str(path), f"not valid JSON: {exc}") from None
    try:
        return Report.from_json(data)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc.field}", exc.problem) from None



def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``report.json``, from the types below."""
    defs: dict[str, Any] = {}
    body = _section_schema(Report, defs)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "report.json of a ppc-sim run", **body, "$defs": dict(sorted(defs.items()))}


def schema_text() -> str:
    """:func:`schema` as ``docs/report.schema.json`` holds it."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"
