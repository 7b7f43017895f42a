"""The report's sections on each party: its bytes, refusals, network and what it sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ppcsim.report.model.base import ABSENT, Absent, Section


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
class OwnCheck(Section):
    """What a party measured of its own disguise before sending it, on its own block (never sent).

    Attributes
    ----------
    local_stress : number
        ``drbt``: stress (004 eq. 6) between the party's own block's original distances and those of the block
        it sent, on ``stress_records`` records: what 004 §5.2 step 3 has the data owner compute.
    tries_used : integer
        ``drbt``: projections drawn (at most ``tries``; fewer when ``max_stress`` stopped early).
    kept_draw : integer
        ``drbt``: which draw was kept, the least local stress (0 = the first).
    stress_records : integer
        Records the stress was computed on (a seeded sample when the party has more than ``stress_sample``).
    stress_1 : number
        ``nmds``: Kruskal's stress-1 of the configuration sent (000 eq. 3.12, isotonic disparities).
    start : text
        ``nmds``: the start that was kept: ``classical``, ``random``, or ``random: the classical start was already
        the best (000 §5.2.3.1)`` when the classical start could not be improved on and random starts replaced it.
    n_iter : integer
        ``nmds``: SMACOF iterations of the kept start.
    seconds : number
        Seconds the check (and, for ``nmds``, the embedding) took, within the party's ``disguise`` phase.
    trace : object
        What the party measured while fitting its disguise: ``geometric`` with ``optimize`` gives 002 Algorithm
        6.1's trace (``iterations``: per iteration ``naive_drawn``, the drawn rotation's minimum naive-inference
        privacy, ``naive``, after its rows were swapped (eq. 10), ``ica``, the ICA attack's minimum privacy or
        null when not tested, ``best``, the best so far; ``best_privacy``, ``rotation_privacy``, ``sigma``,
        ``distance_privacy``, ``target`` (phi), ``privacy`` (the guarantee, the least of the two), ``release``,
        ``sample``); ``cnmf``, ``scnmf`` and ``comnmf`` give ``objective_start`` and ``objective`` (001 eq. 3.26
        or 4.1), the ``updates`` made, and ``cnmf`` and ``scnmf`` also ``rounds`` (Algorithm 2's outer loop),
        ``alpha``, ``beta``, ``side_effect`` and ``hidden``; ``scnmf`` the entries ``zeroed``.
    """

    local_stress: float | Absent = ABSENT
    tries_used: int | Absent = ABSENT
    kept_draw: int | Absent = ABSENT
    stress_records: int | Absent = ABSENT
    stress_1: float | Absent = ABSENT
    start: str | Absent = ABSENT
    n_iter: int | Absent = ABSENT
    seconds: float | Absent = ABSENT
    trace: dict[str, Any] | Absent = ABSENT


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
    own_check : OwnCheck
        What it measured of its own disguise before sending (``drbt``'s local stress, ``nmds``' stress-1, the
        ``trace`` of ``geometric``'s optimisation and of the NMF methods' fit); only for methods that measure one.
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
    own_check: OwnCheck | Absent = ABSENT
