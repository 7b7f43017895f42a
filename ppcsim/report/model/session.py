"""The report's sections on the session: the join, the clustering, security, communication (the ledger),
timings and memory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ppcsim.report.model.base import ABSENT, Absent, Section


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
    """The clustering the coordinator ran (the settings of the scenario's ``[clustering]`` that the run used, and
    no other: ppcsim.report.settings) and what it found.

    Attributes
    ----------
    algorithm : str
        ``kmeans``, ``agglomerative``, ``dbscan``, ...
    n_clusters : int
        Clusters asked for (absent for an algorithm that finds its own number, DBSCAN).
    protocol : str
        ``upload`` (the disguised data, once), ``secure_aggregation`` (k-means rounds) or ``mpc``.
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
    min_cluster_size : int
        Secure aggregation: the smallest cluster a party accepts in a round's labels, a party's own term (0: the
        default, 2; parties.protocols.terms).
    """

    OPEN = True
    algorithm: str
    n_clusters: int | Absent = ABSENT
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
    min_cluster_size: int | Absent = ABSENT
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
    """Every message of the session, counted by the coordinator (ppcsim.report.ledger).

    Attributes
    ----------
    totals : Directions
        The parties' protocol messages, all parties together: not the helper's, not status polls.
    by_party : object
        Per party, its Directions.
    refused : array
        Every refused upload, in order.
    ids : object
        Per party, how its record ids travelled.
    ledger : array
        Every message, in order: the parties', the helper's (party ``helper``) and status polls (party ``""``).
    helper : Directions
        The coordinator's helper (MPC with ``helper = true``): its Relay stream, which runs in the coordinator's
        process and crosses no connection (no wire bytes); not in the totals. What it sends a party is in that
        party's ``down`` as well, as the party received it.
    status : Directions
        Status polls (``GetStatus``), asked by whoever watches the session (``ppc status``, a by-hand party's
        progress line): anonymous, no part of the protocol, not in the totals.
    """

    totals: Directions
    by_party: dict[str, Directions]
    refused: list[Refusal]
    ids: dict[str, IdBytes]
    ledger: list[LedgerEntry]
    helper: Directions | Absent = ABSENT
    status: Directions | Absent = ABSENT


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
