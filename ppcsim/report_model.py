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
(``python -m ppcsim.report_schema`` writes it). The field descriptions of
the schema are the ``Attributes`` of each class's docstring.
"""

from __future__ import annotations

import enum
import json
import re
import types
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = ["ABSENT", "Absent", "ReportError", "Section", "Report", "as_report", "given", "load", "parse", "schema"]


class _Absent(enum.Enum):
    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


#: A key this run does not write (not the same as ``null``).
ABSENT = _Absent.ABSENT
#: The type of a key that only some runs write: ``int | Absent``.
Absent = Literal[_Absent.ABSENT]

T = TypeVar("T")

#: The version of the report's layout; the schema's ``$id`` names it, and a report says it in ``format``.
#: 2: a party's wire bytes down are ``bytes.wire_down``, beside ``bytes.wire`` (up); format 1 held them in
#: ``network.wire_down``, which :meth:`Report.from_json` still reads.
FORMAT = 2
SCHEMA_ID = f"urn:ppc-sim:report:v{FORMAT}"


def given(value: T | _Absent, default: Any = None) -> T | Any:
    """``value``, or ``default`` when the report does not have it (``ABSENT``)."""
    return default if value is ABSENT else value


class ReportError(ValueError):
    """A report that does not have the report's shape: ``field`` names where (``parties[0].bytes.wire``)."""

    def __init__(self, where: str, problem: str):
        super().__init__(f"{where or 'report'}: {problem}")
        self.field, self.problem = where or "report", problem


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "text", bool: "a boolean", type(None): "null",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


def _at(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class Section:
    """A section of the report; subclasses are keyword-only dataclasses (see the module's rules)."""

    #: Whether keys this section does not declare are kept (in ``extra``) rather than refused.
    OPEN: ClassVar[bool] = False

    def to_json(self) -> dict[str, Any]:
        """This section as JSON-ready values (dicts, lists, numbers, text), keys in field order."""
        out = {}
        for f in fields(self):  # type: ignore[arg-type]  # every subclass is a dataclass
            value = getattr(self, f.name)
            if f.name != "extra" and value is not ABSENT:
                out[f.name] = _encode(value)
        for key, value in getattr(self, "extra", {}).items():
            out[key] = _encode(value)
        return out

    @classmethod
    def from_json(cls, data: Any, path: str = "") -> Self:
        """The section held by ``data`` (JSON values); ReportError naming the first field that is wrong."""
        if not isinstance(data, dict):
            raise ReportError(path, f"expected an object ({cls.__name__}), got {_kind(data)}")
        hints = _hints(cls)
        kwargs: dict[str, Any] = {}
        for name, tp in hints.items():
            if name == "extra":
                continue
            if name not in data:
                if not _absentable(tp):
                    raise ReportError(_at(path, name), "missing (a required field)")
                continue
            kwargs[name] = parse(tp, data[name], _at(path, name))
        unknown = {k: v for k, v in data.items() if k not in hints or k == "extra"}
        if unknown and not cls.OPEN:
            raise ReportError(_at(path, next(iter(unknown))),
                              f"not a field of {cls.__name__} (its fields: {', '.join(n for n in hints if n != 'extra')})")
        if cls.OPEN:
            kwargs["extra"] = unknown
        return cls(**kwargs)

    def __getitem__(self, key: str) -> Any:
        """The JSON value of field ``key`` (``report["parties"]``), as ``report.json`` holds it."""
        if key != "extra" and key in _hints(type(self)):
            value = getattr(self, key)
            if value is not ABSENT:
                return _encode(value)
        elif key in getattr(self, "extra", {}):
            return _encode(self.extra[key])  # type: ignore[attr-defined]  # OPEN sections have extra
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        try:
            self[key]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]``, or ``default`` when this report has no such key."""
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        """The keys ``to_json`` writes."""
        names = [name for name in _hints(type(self)) if name != "extra" and getattr(self, name) is not ABSENT]
        return names + list(getattr(self, "extra", {}))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())


def _encode(value: Any) -> Any:
    if isinstance(value, Section):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """A section's fields and their types, in order (resolved once per class)."""
    if cls not in _HINTS:
        hints = get_type_hints(cls)
        _HINTS[cls] = {f.name: hints[f.name] for f in fields(cls)}
    return _HINTS[cls]


def _alternatives(tp: Any) -> tuple[Any, ...]:
    return get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,)


def _absentable(tp: Any) -> bool:
    return Absent in _alternatives(tp)


def parse(tp: Any, value: Any, path: str = "") -> Any:
    """``value`` (JSON values) checked against the type ``tp``, sections built (``parse(Privacy, data)``);
    ReportError naming the first field that is wrong, below ``path``."""
    alternatives = [a for a in _alternatives(tp) if a is not Absent]
    if len(alternatives) > 1:
        if value is None and type(None) in alternatives:
            return None
        errors = []
        for a in alternatives:
            if a is type(None):
                continue
            try:
                return parse(a, value, path)
            except ReportError as exc:
                errors.append((exc, a))
        # the alternative that got deepest into the value, then the one sharing most of its keys, explains it best
        best = max(errors, key=lambda e: (e[0].field.count(".") + e[0].field.count("["), _overlap(e[1], value)))[0]
        if best.field != path:
            raise best
        raise ReportError(path, f"expected {' or '.join(_name(a) for a in alternatives)}, got {_kind(value)}")
    tp = alternatives[0]
    origin = get_origin(tp)
    if tp is Any:
        return value
    if isinstance(tp, type) and issubclass(tp, Section):
        return tp.from_json(value, path)
    if origin is list:
        if not isinstance(value, list):
            raise ReportError(path, f"expected an array, got {_kind(value)}")
        (item,) = get_args(tp)
        return [parse(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ReportError(path, f"expected an object, got {_kind(value)}")
        _, item = get_args(tp)
        return {k: parse(item, v, _at(path, str(k))) for k, v in value.items()}
    if origin is Literal:
        if value not in get_args(tp):
            raise ReportError(path, f"expected one of {', '.join(map(repr, get_args(tp)))}, got {value!r}")
        return value
    ok = {bool: isinstance(value, bool), int: isinstance(value, int) and not isinstance(value, bool),
          float: isinstance(value, int | float) and not isinstance(value, bool), str: isinstance(value, str),
          type(None): value is None}.get(tp)
    if ok is None:
        raise TypeError(f"report type {tp!r} at {path} is not supported")
    if not ok:
        raise ReportError(path, f"expected {_name(tp)}, got {_kind(value)}")
    return value


def _overlap(tp: Any, value: Any) -> int:
    """How many of ``value``'s keys the section type ``tp`` declares (0 for anything else)."""
    if isinstance(tp, type) and issubclass(tp, Section) and isinstance(value, dict):
        return len(set(value) & set(_hints(tp)))
    return 0


def _name(tp: Any) -> str:
    if isinstance(tp, type) and issubclass(tp, Section):
        return f"an object ({tp.__name__})"
    origin = get_origin(tp)
    if origin is list:
        return "an array"
    if origin is dict:
        return "an object"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "text", type(None): "null"}.get(tp, str(tp))


# -- the JSON Schema ---------------------------------------------------------------------------

def _docs(cls: type) -> tuple[str, dict[str, str]]:
    """A class docstring's first paragraph, and its ``Attributes`` (numpydoc) by name."""
    doc = (cls.__doc__ or "").strip("\n")
    lines = [line[4:] if line.startswith("    ") else line for line in doc.splitlines()]
    text = "\n".join(lines)
    summary = " ".join(text.split("\n\n")[0].split())
    attrs: dict[str, str] = {}
    if "Attributes\n----------" in text:
        block = text.split("Attributes\n----------", 1)[1]
        current = None
        for line in block.splitlines():
            m = re.match(r"^(\w+) :", line)
            if m:
                current = m.group(1)
                attrs[current] = ""
            elif current and line.strip():
                attrs[current] = (attrs[current] + " " + line.strip()).strip()
    return summary.replace("``", "`"), {k: v.replace("``", "`") for k, v in attrs.items()}


def _schema_of(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    alternatives = [a for a in _alternatives(tp) if a is not Absent]
    if len(alternatives) > 1:
        return {"anyOf": [_schema_of(a, defs) for a in alternatives]}
    tp = alternatives[0]
    origin = get_origin(tp)
    if tp is Any:
        return {}
    if isinstance(tp, type) and issubclass(tp, Section):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {}  # reserved first: a section may (indirectly) hold itself
            defs[tp.__name__] = _section_schema(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if origin is list:
        return {"type": "array", "items": _schema_of(get_args(tp)[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema_of(get_args(tp)[1], defs)}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    return {"type": {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}[tp]}


def _section_schema(cls: type[Section], defs: dict[str, Any]) -> dict[str, Any]:
    summary, attrs = _docs(cls)
    properties, required = {}, []
    for name, tp in _hints(cls).items():
        if name == "extra":
            continue
        prop = _schema_of(tp, defs)
        if name in attrs:
            prop = {"description": attrs[name], **prop}
        properties[name] = prop
        if not _absentable(tp):
            required.append(name)
    out: dict[str, Any] = {"type": "object", "description": summary, "properties": properties, "required": required}
    if not cls.OPEN:
        out["additionalProperties"] = False
    return out


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``report.json``, from the types below."""
    defs: dict[str, Any] = {}
    body = _section_schema(Report, defs)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "report.json of a ppc-sim run", **body, "$defs": dict(sorted(defs.items()))}


def schema_text() -> str:
    """:func:`schema` as ``docs/report.schema.json`` holds it."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


# -- the sections ------------------------------------------------------------------------------

@dataclass(kw_only=True)
class PartyBytes(Section):
    """What one party's accepted upload took, in bytes.

    Attributes
    ----------
    predicted : int or null
        The paper's communication cost of the upload (m k_j l for rows, m(m-1)/2 l per condensed array;
        secure aggregation: its prediction for every round); null before an upload's header arrived.
    payload : int
        The array bytes the coordinator received (refused uploads apart).
    serialized : int
        The protobuf messages of the accepted exchange, as serialised.
    wire : int
        What the party's TCP connection carried up (TLS and HTTP/2 included), counted by its relay; only when
        the party ran as a process.
    wire_down : int
        What its connection carried down, counted by its relay; only when the party ran as a process.
    """

    predicted: int | None
    payload: int
    serialized: int
    wire: int | Absent = ABSENT
    wire_down: int | Absent = ABSENT


@dataclass(kw_only=True)
class RefusedCounts(Section):
    """The uploads of one party that the coordinator refused and discarded (their bytes crossed the wire too).

    Attributes
    ----------
    attempts : int
        Refused uploads.
    messages : int
        Their messages.
    serialized : int
        Their serialised bytes.
    payload : int
        Their array bytes.
    """

    attempts: int
    messages: int
    serialized: int
    payload: int


@dataclass(kw_only=True)
class Network(Section):
    """How a party process's connection went (``ppc run`` only).

    Attributes
    ----------
    link : str
        The ``[network]`` link its relay shaped, in words ("loopback, unshaped", "10 Mbit/s, 20 ms one way").
    wire_down : int
        Format 1 only (now ``bytes.wire_down``): bytes its connection carried down; still read.
    connections : int
        TCP connections it opened.
    upload_seconds : number or null
        Seconds its Join and upload took, measured by the party.
    """

    link: str
    wire_down: int | Absent = ABSENT
    connections: int
    upload_seconds: float | None


@dataclass(kw_only=True)
class Party(Section):
    """One party: what it held, how it disguised it, what it sent and what that cost.

    Attributes
    ----------
    name : str
        The party's name.
    method : str
        Its disguise (``drbt``, ``osbr``, ...; ``secure_aggregation`` in a secure-aggregation session).
    params : object
        The method's parameters as the party used them.
    normalize : str or null
        The normalisation of its columns before the disguise.
    source : str or null
        Where its data came from (a file, ``sklearn:...``, ``synthetic:...``), as the scenario names it.
    rows : int or null
        Records in its accepted upload.
    columns : array of str
        Its original columns.
    output_dims : int or null
        Columns per record sent (feature methods), values per condensed array (dissimilarities), or k
        (secure aggregation).
    sends : str or null
        ``features``, ``dissimilarities`` or ``masked partial distances``.
    arrays : object
        The shape of each array it sent, by the array's name.
    bytes : PartyBytes
        Bytes of its accepted upload.
    refused : RefusedCounts
        Its uploads the coordinator refused.
    timing : object
        Seconds of each of its phases (load, disguise, upload, ...), measured by the party process.
    peak_rss : int or null
        The party process's peak resident memory, in bytes.
    rounds : int or null
        Secure aggregation: the rounds the party took part in.
    network : Network
        Its connection, counted by its relay (``ppc run`` only).
    """

    name: str
    method: str
    params: dict[str, Any]
    normalize: str | None
    source: str | None
    rows: int | None
    columns: list[str]
    output_dims: int | None
    sends: str | None
    arrays: dict[str, list[int]]
    bytes: PartyBytes
    refused: RefusedCounts
    timing: dict[str, float]
    peak_rss: int | None
    rounds: int | None | Absent = ABSENT
    network: Network | Absent = ABSENT


@dataclass(kw_only=True)
class Join(Section):
    """The join on record id.

    Attributes
    ----------
    rows_joined : int or null
        Records every party holds (null when the session ended before the join).
    dropped : object or null
        Per party, its records not in every party's set.
    """

    rows_joined: int | None
    dropped: dict[str, int] | None


@dataclass(kw_only=True)
class Clustering(Section):
    """The clustering the coordinator ran (the scenario's ``[clustering]``) and what it found.

    Attributes
    ----------
    algorithm : str
        ``kmeans``, ``agglomerative``, ``dbscan``, ...
    n_clusters : int
        Clusters asked for.
    protocol : str
        ``upload`` (the disguised data, once) or ``secure_aggregation`` (k-means rounds).
    input : str or null
        What it clustered, in words.
    embedding : object or null
        The NMDS embedding the coordinator computed (dims, iterations, Kruskal's stress-1, a warning when it is
        poor); null without one.
    sizes : array of int or null
        Records per cluster.
    noise : int or null
        Records DBSCAN left as noise.
    n_clusters_found : int or null
        Clusters found.
    """

    OPEN = True
    algorithm: str
    n_clusters: int
    linkage: str | Absent = ABSENT
    eps: float | Absent = ABSENT
    min_samples: int | Absent = ABSENT
    n_init: int | Absent = ABSENT
    seed: int | Absent = ABSENT
    protocol: str
    max_iter: int | Absent = ABSENT
    tol: float | Absent = ABSENT
    init: str | Absent = ABSENT
    scale_bits: int | Absent = ABSENT
    input: str | None
    embedding: dict[str, Any] | None
    sizes: list[int] | None
    noise: int | None
    n_clusters_found: int | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Protection(Section):
    """How one party's connection was protected.

    Attributes
    ----------
    transport : str
        ``TLS``, ``mutual TLS`` or ``plaintext (loopback)``.
    identity : str
        How the coordinator knew the party: ``token``, ``certificate``, ``token and certificate``, or
        ``none (claimed name only)``.
    """

    transport: str
    identity: str


@dataclass(kw_only=True)
class Security(Section):
    """The scenario's ``[security]`` and what the coordinator learned.

    Attributes
    ----------
    tls : bool
        Whether the connections used TLS.
    mutual : bool
        Whether parties presented certificates.
    tokens : bool
        Whether parties presented tokens.
    ids : str
        ``pseudonymous`` (keyed pseudonyms) or ``plain`` record ids.
    parties : object
        Per party, its Protection.
    coordinator_learns : array of str
        In words, what the coordinator of this session learned.
    """

    tls: bool
    mutual: bool
    tokens: bool
    ids: str
    parties: dict[str, Protection]
    coordinator_learns: list[str]


@dataclass(kw_only=True)
class Count(Section):
    """Messages and bytes one way.

    Attributes
    ----------
    messages : int
        Messages.
    payload : int
        Array bytes.
    serialized : int
        Serialised protobuf bytes.
    """

    messages: int
    payload: int
    serialized: int


@dataclass(kw_only=True)
class Directions(Section):
    """Up (party to coordinator) and down.

    Attributes
    ----------
    up : Count
        Party to coordinator.
    down : Count
        Coordinator to party.
    """

    up: Count
    down: Count


@dataclass(kw_only=True)
class Refusal(Section):
    """An upload the coordinator refused and discarded.

    Attributes
    ----------
    party : str
        Who sent it.
    error : str
        Why it was refused.
    messages : int
        Its messages.
    serialized : int
        Its serialised bytes.
    payload : int
        Its array bytes.
    """

    party: str
    error: str
    messages: int
    serialized: int
    payload: int


@dataclass(kw_only=True)
class IdBytes(Section):
    """How a party's record ids travelled.

    Attributes
    ----------
    encoding : str
        The encoding of its upload's ids, as the protocol names it (``ID_PSEUDONYMS_AES``, ``ID_INT_DELTAS_ZLIB``,
        ``ID_LINES_ZLIB``, ``ID_TEXT``).
    bytes : int
        Bytes of ids sent (packed block, or characters of text ids).
    plain_bytes : int or null
        What the smallest plain encoding of its raw ids would have taken (known to the party alone: null when
        the report was written without the party's summary).
    """

    encoding: str
    bytes: int
    plain_bytes: int | None


@dataclass(kw_only=True)
class LedgerEntry(Section):
    """One message that crossed the wire, as the coordinator counted it.

    Attributes
    ----------
    party : str
        The party.
    rpc : str
        The call (``Join``, ``Upload``, ``GetResult``, ...).
    direction : str
        ``up`` or ``down``.
    payload : int
        Array bytes.
    serialized : int
        Serialised protobuf bytes.
    time : number
        Seconds since the session was created.
    """

    party: str
    rpc: str
    direction: str
    payload: int
    serialized: int
    time: float


@dataclass(kw_only=True)
class Communication(Section):
    """Every message of the session, counted by the coordinator.

    Attributes
    ----------
    totals : Directions
        All parties together.
    by_party : object
        Per party, its Directions.
    refused : array
        Every refused upload, in order.
    ids : object
        Per party, how its record ids travelled.
    ledger : array
        Every message, in order.
    """

    totals: Directions
    by_party: dict[str, Directions]
    refused: list[Refusal]
    ids: dict[str, IdBytes]
    ledger: list[LedgerEntry]


@dataclass(kw_only=True)
class Timing(Section):
    """Seconds the run took, by phase.

    Attributes
    ----------
    start : number
        ``ppc run``: from the start to every party process started.
    parties_and_clustering : number
        ``ppc run``: from then to the coordinator's clustering done.
    coordinator : object
        The coordinator's own clock, in seconds since the session was created (``first_join``, ``uploaded``,
        ``done``) or spent (``join_seconds``, ``cluster_seconds``).
    evaluate : number
        The observer's measurements of utility and privacy.
    total : number
        The whole run (not written by a by-hand coordinator).
    """

    start: float | Absent = ABSENT
    parties_and_clustering: float | Absent = ABSENT
    coordinator: dict[str, float]
    evaluate: float | Absent = ABSENT
    total: float | Absent = ABSENT


@dataclass(kw_only=True)
class Memory(Section):
    """Memory of the process hosting the coordinator.

    Attributes
    ----------
    coordinator_peak_rss : int or null
        Its peak resident memory in bytes when the session was over, before any evaluation (null where it
        cannot be read).
    session_budget : int
        The session's memory budget in bytes, counted as the coordinator stores (decoded ids, arrays, ledger
        entries); 0 when the session has none of its own and only the coordinator's budget bounds it.
    session_peak : int
        The most bytes the session held against its budget at once.
    """

    coordinator_peak_rss: int | None
    session_budget: int = 0
    session_peak: int = 0


@dataclass(kw_only=True)
class RoundRecord(Section):
    """One round of secure aggregation (or one seeding step) as the arbiter saw it.

    Attributes
    ----------
    index : int
        The round (or step) number.
    seconds : number
        Seconds from the previous round's labels to this round's.
    changed : int
        Labels that changed.
    sizes : array of int
        Records per cluster after the round.
    up_payload : int
        Array bytes posted by the parties.
    up_serialized : int
        Their serialised bytes.
    up_messages : int
        Their messages.
    down_payload : int
        Array bytes sent back.
    down_serialized : int
        Their serialised bytes.
    down_messages : int
        Their messages.
    """

    index: int
    seconds: float
    changed: int
    sizes: list[int]
    up_payload: int
    up_serialized: int
    up_messages: int
    down_payload: int
    down_serialized: int
    down_messages: int


@dataclass(kw_only=True)
class UpDown(Section):
    """Bytes up and down.

    Attributes
    ----------
    up : int
        Party to coordinator.
    down : int
        Coordinator to party.
    """

    up: int
    down: int


@dataclass(kw_only=True)
class SecureParty(Section):
    """One party's bytes in secure aggregation, beside the prediction.

    Attributes
    ----------
    predicted : UpDown
        Payload predicted (m k 8 up and m 4 down per round, plus the seeding steps).
    payload : UpDown
        Payload measured.
    key_exchange_serialized : int
        Serialised bytes of its key exchange (Join, peers, sealed keys).
    exact : bool
        Whether the measured payload equals the prediction.
    """

    predicted: UpDown
    payload: UpDown
    key_exchange_serialized: int
    exact: bool


@dataclass(kw_only=True)
class SecureAggregation(Section):
    """The rounds of a secure-aggregation session (written only by one).

    Attributes
    ----------
    n_joined : int
        Joined records.
    init : array of int
        The records drawn as initial centres.
    init_method : str
        How they were drawn (``random``, ``k-means++``).
    seeding_steps : int
        k-means++ seeding steps.
    per_seeding_step : array
        Each seeding step's RoundRecord.
    rounds : int
        Rounds run (0 when the session ended before the first).
    converged : bool
        Whether the labels settled within ``tol``.
    per_round : array
        Each round's RoundRecord.
    protocol : str
        ``secure_aggregation``.
    scale_bits : int
        The fixed-point scale (values times 2^scale_bits).
    by_party : object
        Per party, its SecureParty bytes.
    """

    n_joined: int | Absent = ABSENT
    init: list[int] | Absent = ABSENT
    init_method: str | Absent = ABSENT
    seeding_steps: int | Absent = ABSENT
    per_seeding_step: list[RoundRecord] | Absent = ABSENT
    rounds: int
    converged: bool | Absent = ABSENT
    per_round: list[RoundRecord] | Absent = ABSENT
    protocol: str
    scale_bits: int | Absent = ABSENT
    by_party: dict[str, SecureParty] | Absent = ABSENT


@dataclass(kw_only=True)
class MpcParty(Section):
    """One MPC party's relayed traffic, as the coordinator counted it (ciphertext with tags).

    Attributes
    ----------
    up : int
        Bytes of the frames it sent (to every peer).
    down : int
        Bytes of the frames delivered to it.
    frames_up : int
        Frames it sent.
    frames_down : int
        Frames delivered to it.
    plaintext_up : int
        What its MPC runtime wrote: ``up`` less 16 bytes of AES-GCM tag per frame.
    """

    up: int
    down: int
    frames_up: int
    frames_down: int
    plaintext_up: int


@dataclass(kw_only=True)
class MpcLink(Section):
    """One directed link of the MPC, relayed.

    Attributes
    ----------
    sender : str
        The party that sealed the frames.
    receiver : str
        The party they were for.
    frames : int
        Frames.
    bytes : int
        Their bytes (ciphertext with tags).
    """

    sender: str
    receiver: str
    frames: int
    bytes: int


@dataclass(kw_only=True)
class MpcRound(Section):
    """The frames sent in one round of the MPC (each party's marks: round -1 is the input sharing, before round 0).

    Attributes
    ----------
    round : int
        The Lloyd round (-1: before round 0).
    up : object
        Per party, the bytes it sent in the round.
    frames : int
        Frames sent in the round, by every party.
    sequential : int
        MPyC messages in sequence in the round, counted by the data parties' tunnels: the most times any data
        party's program began sending after a peer's message had ended (its first send counts). Every such message
        crosses two links (party to coordinator to party), so the round waits at least twice this many one-way
        latencies. Absent where the parties' summaries are not at hand (``ppc coordinator``).
    """

    round: int
    up: dict[str, int]
    frames: int
    sequential: int | Absent = ABSENT


@dataclass(kw_only=True)
class FixedPointType(Section):
    """A secure fixed-point type, MPyC's SecFxp(l, f).

    Attributes
    ----------
    bits : int
        Bit length l.
    frac : int
        Fractional bits f.
    """

    bits: int
    frac: int


@dataclass(kw_only=True)
class Mpc(Section):
    """The traffic of an MPC session (written only by one): k-means on MPyC, relayed by the coordinator.

    Attributes
    ----------
    protocol : str
        ``mpc``.
    parties : array of str
        The MPC's parties in order (MPyC ids 0, 1, ...): the session's, then the helper.
    threshold : int
        Shamir threshold t = (n - 1) // 2: any t share-holders together learn nothing.
    helper : str or null
        The helper share-holder with no data (two parties), null if none.
    rounds : int
        Lloyd rounds (centre updates); the MPC assigns rounds + 1 times.
    fixed_point : FixedPointType
        The secure fixed-point type.
    reveal_centres : bool
        Whether the centres were opened besides the labels.
    n_joined : int
        Joined records.
    init : array of int
        The records whose values start the centres (positions in the join, drawn with the scenario seed).
    by_party : object
        Per MPC party, its MpcParty traffic.
    links : array
        Every directed link's MpcLink traffic.
    per_round : array
        Each round's MpcRound traffic.
    dropped_frames : int
        Frames for a party whose stream had ended (a link's closing frame), counted up but not delivered.
    seconds : number or null
        From the first party's Relay stream to the last one's end.
    """

    protocol: str
    parties: list[str]
    threshold: int
    helper: str | None
    rounds: int
    fixed_point: FixedPointType
    reveal_centres: bool
    n_joined: int | Absent = ABSENT
    init: list[int] | Absent = ABSENT
    by_party: dict[str, MpcParty] | Absent = ABSENT
    links: list[MpcLink] | Absent = ABSENT
    per_round: list[MpcRound] | Absent = ABSENT
    dropped_frames: int | Absent = ABSENT
    seconds: float | None | Absent = ABSENT


@dataclass(kw_only=True)
class Observer(Section):
    """What repeats the simulation, known to the observer (``ppc run``) alone.

    Attributes
    ----------
    seed : int
        The scenario's seed.
    party_seeds : object
        Every party's seed (its disguise's secrets derive from it).
    """

    seed: int
    party_seeds: dict[str, int | None]


@dataclass(kw_only=True)
class Profile(Section):
    """A measure at each neighbourhood size k = 3..10 and its mean (000 eqs. 5.21-5.23).

    Attributes
    ----------
    mean : number
        The mean over k.
    by_k : object
        The measure at each k (keys are k as text).
    """

    OPEN = True
    mean: float
    by_k: dict[str, float] | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class FixedPoint(Section):
    """Secure aggregation: the fixed-point error of the last round's distances.

    Attributes
    ----------
    scale_bits : int
        Values are sent times 2^scale_bits.
    max_abs_error : number
        The largest error of a distance read by the arbiter.
    bound : number
        The bound on it (parties x 2^-(scale_bits + 1)).
    """

    scale_bits: int
    max_abs_error: float
    bound: float


@dataclass(kw_only=True)
class Utility(Section):
    """How well the disguised clustering kept the original one, measured by the observer.

    Agreement records (``vs_original``, ...) map a metric's name to its value (``ari``, ``nmi``,
    ``misclassification``, ``variation_of_information``, ``f_measure``, ...).

    Attributes
    ----------
    stress : number
        Stress (004 eq. 6) between the original and the coordinator's distances, on sampled records.
    stress_records : int
        The records stress was measured on.
    reference : str
        What the clustering is compared with, in words.
    labels_equal_same_init : bool
        Secure aggregation: whether the labels equal scikit-learn's KMeans from the same initial records.
    vs_same_init : object
        Secure aggregation: agreement with that KMeans.
    fixed_point : FixedPoint
        Secure aggregation: the fixed-point error.
    np : Profile
        Neighbourhood preservation (000 eq. 5.21).
    cc : Profile
        Class compactness of the disguised data (000 eq. 5.22), with true labels.
    cc_original : Profile
        Class compactness of the original data (000 eq. 5.23), with true labels.
    vs_original : object
        Agreement with the same clustering of the original joined data.
    reference_original : str
        Secure aggregation: what ``vs_original`` compares with.
    vs_truth : object
        Agreement with the data's true labels, when it has them.
    original_vs_truth : object
        Agreement of the original data's clustering with the true labels.
    """

    OPEN = True
    stress: float | Absent = ABSENT
    stress_records: int | Absent = ABSENT
    reference: str | Absent = ABSENT
    labels_equal_same_init: bool | Absent = ABSENT
    vs_same_init: dict[str, float] | Absent = ABSENT
    fixed_point: FixedPoint | Absent = ABSENT
    np: Profile | Absent = ABSENT
    cc: Profile | Absent = ABSENT
    cc_original: Profile | Absent = ABSENT
    vs_original: dict[str, float]
    reference_original: str | Absent = ABSENT
    vs_truth: dict[str, float] | Absent = ABSENT
    original_vs_truth: dict[str, float] | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Skipped(Section):
    """A measurement that was not made, and why.

    Attributes
    ----------
    knowledge : str
        What the attacker would have known.
    skipped : str
        Why it was not made (``--no-attacks``, a metric without Euclidean distances, ...).
    """

    knowledge: str | Absent = ABSENT
    skipped: str


@dataclass(kw_only=True)
class Privacy002(Section):
    """Column privacy as 002 §6.1.1 defines it.

    Attributes
    ----------
    columns : object
        Per original column.
    min : number
        The lowest column's.
    mean : number
        The mean over columns.
    spread : object
        Standard deviations of ``min`` and ``mean`` over the draws of the known records.
    median : object
        Medians of ``min`` and ``mean`` over those draws.
    iqr : object
        Interquartile ranges of ``min`` and ``mean`` over those draws.
    """

    columns: dict[str, float]
    min: float
    mean: float
    spread: dict[str, float] | Absent = ABSENT
    median: dict[str, float] | Absent = ABSENT
    iqr: dict[str, float] | Absent = ABSENT


@dataclass(kw_only=True)
class Distortion(Section):
    """001's distortion measures (eqs. 2.7-2.11) of one matrix against the original.

    Attributes
    ----------
    vd : number
        Value difference.
    rp : number
        Average change of rank.
    rm : number
        Share of values keeping their rank.
    cp : number or null
        Average change of a column's rank by its range-normalised mean; null when two columns' means are
        within 1e-9 of each other (no rank order).
    ck : number or null
        Share of columns keeping that rank; null when CP is.
    """

    OPEN = True
    vd: float
    rp: float | Absent = ABSENT
    rm: float | Absent = ABSENT
    cp: float | None | Absent = ABSENT
    ck: float | None | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class AttackScore(Section):
    """How well one attack reconstructed the original columns (column privacy: 0 = recovered exactly).

    Attributes
    ----------
    knowledge : str
        What the attacker knew, in words.
    estimator : str
        How it estimated, in words.
    columns : object
        Column privacy of each original column (002, as measured here).
    min : number
        The lowest column's.
    mean : number
        The mean over columns.
    privacy_002 : Privacy002
        The same by 002 §6.1.1's definition.
    vd : number
        001's value difference of the estimate (eq. 2.7).
    rp : number
        001's RP of the estimate (first draw).
    rm : number
        001's RM of the estimate (first draw).
    cp : number or null
        001's CP of the estimate (first draw), on range-normalised columns; null when not meaningful.
    ck : number or null
        001's CK of the estimate (first draw), on range-normalised columns; null when not meaningful.
    draws : int
        Draws of the known records averaged.
    spread : object
        Standard deviations of ``min`` and ``mean`` over those draws.
    median : object
        Medians of ``min`` and ``mean`` over those draws.
    iqr : object
        Interquartile ranges of ``min`` and ``mean`` over those draws.
    object_privacy_mean : number
        Multilateration: the mean privacy of a record (000 §4.4).
    records : int
        Secure aggregation: the records attacked.
    """

    OPEN = True
    knowledge: str | Absent = ABSENT
    estimator: str | Absent = ABSENT
    columns: dict[str, float]
    min: float
    mean: float
    privacy_002: Privacy002 | Absent = ABSENT
    vd: float | Absent = ABSENT
    rp: float | Absent = ABSENT
    rm: float | Absent = ABSENT
    cp: float | None | Absent = ABSENT
    ck: float | None | Absent = ABSENT
    draws: int | Absent = ABSENT
    spread: dict[str, float] | Absent = ABSENT
    median: dict[str, float] | Absent = ABSENT
    iqr: dict[str, float] | Absent = ABSENT
    object_privacy_mean: float | Absent = ABSENT
    records: int | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class PartyPrivacy(Section):
    """The attacks on one party's sent arrays, measured by the observer.

    Attributes
    ----------
    method : str
        The party's disguise.
    records : int
        Records attacked (a seeded sample on large data).
    seed : int
        The scenario's seed.
    sent_distortion : Distortion
        001's distortion of what the party sent, when it has the original's shape.
    attacks : object
        Per attack name, its AttackScore or why it was Skipped.
    """

    OPEN = True
    method: str
    records: int
    seed: int
    sent_distortion: Distortion | Absent = ABSENT
    attacks: dict[str, AttackScore | Skipped]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Arbiter(Section):
    """What the arbiter of secure aggregation sees and never sees, in words.

    Attributes
    ----------
    sees : array of str
        What it sees.
    never_sees : array of str
        What it never sees.
    """

    sees: list[str]
    never_sees: list[str]


@dataclass(kw_only=True)
class Post(Section):
    """One party's last-round post against its true partial distances.

    Attributes
    ----------
    correlation_with_partial_distances : number
        Pearson correlation (0: the post tells nothing).
    uniformity_ks_pvalue : number
        Kolmogorov-Smirnov p-value of the posts against the uniform distribution.
    values : int
        Values compared.
    """

    correlation_with_partial_distances: float
    uniformity_ks_pvalue: float
    values: int


@dataclass(kw_only=True)
class Posts(Section):
    """The parties' posts as the arbiter received them.

    Attributes
    ----------
    what : str
        What was compared, in words.
    by_party : object
        Per party, its Post.
    """

    what: str
    by_party: dict[str, Post]


@dataclass(kw_only=True)
class SecurePrivacy(Section):
    """Privacy of a secure-aggregation run, measured by the observer.

    Attributes
    ----------
    arbiter : Arbiter
        What the arbiter sees.
    posts : Posts
        The posts against the truth (when the session converged).
    multilateration : object
        Multilateration of the joined records from the initial centres: an AttackScore, or why it was Skipped.
    """

    arbiter: Arbiter
    posts: Posts | Absent = ABSENT
    multilateration: AttackScore | Skipped


@dataclass(kw_only=True)
class MpcPrivacy(Section):
    """Privacy of an MPC run: what each role learned, in words, and the assumption it rests on.

    Attributes
    ----------
    assumption : str
        The trust assumption (honest majority: no t + 1 share-holders collude).
    roles : object
        Per role (``coordinator``, ``each party``, ``helper``), an Arbiter of what it sees and never sees.
    """

    assumption: str
    roles: dict[str, Arbiter]


@dataclass(kw_only=True)
class Evaluation(Section):
    """What the observer measured of a run: its utility and its privacy (the two sections of the report).

    Attributes
    ----------
    utility : Utility
        Utility.
    privacy : object
        Privacy (see Report).
    """

    utility: Utility
    privacy: Privacy


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


#: The privacy section: per party (upload sessions), the arbiter's view (secure aggregation), or skipped.
Privacy = Skipped | SecurePrivacy | MpcPrivacy | dict[str, PartyPrivacy]


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

