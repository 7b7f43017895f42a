"""The report's sections on secure aggregation (its rounds and what the arbiter sees) and on MPC k-means."""

from __future__ import annotations

from dataclasses import dataclass

from ppcsim.report.model.base import ABSENT, Absent, Section


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
        Whether the measured payload equals the prediction (reveal = ``labels``: whether it lies within the
        tolerance of the prediction either way, coordinator.protocols.secagg_labels.TOLERANCE, or SPU_TOLERANCE on
        engine ``spu``).
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
    reveal : str
        What each round opened: ``labels`` (an MPC argmin; the relay's account is in ``mpc``) or ``distances``
        (the arbiter read the summed distances).
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
    reveal: str | Absent = ABSENT
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
    """The traffic of an MPC session (written only by one): k-means on MPyC or SPU, relayed by the coordinator.

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
    engine : str
        The MPC engine: `mpyc` (Shamir secret sharing) or `spu` (SPU's ABY3, three share-holders).
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
    engine: str | Absent = ABSENT
    n_joined: int | Absent = ABSENT
    init: list[int] | Absent = ABSENT
    by_party: dict[str, MpcParty] | Absent = ABSENT
    links: list[MpcLink] | Absent = ABSENT
    per_round: list[MpcRound] | Absent = ABSENT
    dropped_frames: int | Absent = ABSENT
    seconds: float | None | Absent = ABSENT
