"""The report of a run (``report.json``) as typed sections, read and written through one set of rules.

Each section is a dataclass; its fields, in order, are the keys of its JSON
object. Three rules cover every shape a report takes:

* a field typed ``... | Absent`` is a key that only some runs write (``ABSENT``
  leaves it out: a party's ``network`` exists only when it ran as a process);
  a field that may be ``null`` says ``| None``;
* names chosen by users or by registries (parties, columns, attacks,
  metrics, timing phases) are ``dict[str, ...]`` mappings, never fields;
* a section with ``OPEN = True`` keeps the keys it does not declare (in
  ``extra``, written back after its own), so that a new metric or parameter
  reaches ``report.json`` without a change here; the others refuse them.

:meth:`Section.to_json` writes a section as JSON-ready values,
:meth:`Section.from_json` reads one back and refuses a wrong type, a missing
key or an unknown one with :class:`ReportError` naming the field
(``parties[1].bytes.payload``), and :func:`schema` is the JSON Schema of
``report.json`` that ``docs/report.schema.json`` publishes
(``python -m ppcsim.report.schema`` writes it). The field descriptions of
the schema are the ``Attributes`` of each class's docstring.
"""

from __future__ import annotations

from ppcsim.report.model.base import ABSENT, FORMAT, SCHEMA_ID, Absent, ReportError, Section, given, parse
from ppcsim.report.model.document import Cluster, Report, as_report, load, schema, schema_text
from ppcsim.report.model.evaluation import (
    Accuracy,
    Arbiter,
    AttackScore,
    Classification,
    Distortion,
    Evaluation,
    FixedPoint,
    MpcPrivacy,
    Observer,
    PartyPrivacy,
    Placement,
    Post,
    Posts,
    Privacy,
    Privacy002,
    Profile,
    SecurePrivacy,
    Skipped,
    Utility,
)
from ppcsim.report.model.parties import Network, OwnCheck, Party, PartyBytes, RefusedCounts
from ppcsim.report.model.protocols import (
    FixedPointType,
    Mpc,
    MpcLink,
    MpcParty,
    MpcRound,
    RoundRecord,
    SecureAggregation,
    SecureParty,
    UpDown,
)
from ppcsim.report.model.session import (
    Clustering,
    Communication,
    Count,
    Directions,
    IdBytes,
    Join,
    LedgerEntry,
    Memory,
    Protection,
    Refusal,
    Security,
    Timing,
)

__all__ = ["ABSENT", "Absent", "ReportError", "Section", "Report", "as_report", "given", "load", "parse", "schema"]
