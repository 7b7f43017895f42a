"""What each RPC carries, as plain values: the coordinator's logic reads and answers these, never the wire's messages.

``coordinator.wire.serde`` turns every request into one of these and every
reply back into its message (docs/protocol.md describes the fields); the
servicer and the in-process run go through it alike, so both count the same
bytes. Arrays are the raw bytes they travel in (serde makes them of numpy arrays); the field
names follow the ``.proto`` so that a reader can go from one to the other.
"""

from __future__ import annotations

from dataclasses import dataclass

# the messages both sides decode alike: one set of types (protos.messages), read here by the coordinator's names
from protos.messages import (  # noqa: F401
    AlignmentHeader,
    ConfirmTag,
    Frame,
    LabelsHeader,
    Mark,
    PartyStatus,
    RelayResult,
    ResultHeader,
    SealedKey,
)

# -- keys ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JoinAsk:
    """A party's Join: its name and its X25519 key-agreement key (with its signature under mutual TLS)."""

    party: str
    public_key: bytes = b""
    signature: bytes = b""


@dataclass(frozen=True)
class Terms:
    """What Join answers: the session's terms. ``ids`` is "plain" or "pseudonymous"; ``protocol`` the
    session's clustering protocol ("upload", "secure_aggregation" or "mpc")."""

    chunk_bytes: int
    seconds_left: float
    ids: str
    parties: tuple[str, ...]
    protocol: str
    #: A session with rounds: its clustering terms (``CLUSTERING_TERMS``, by name), announced at Join so that a
    #: party can hold them to its own file before it uploads anything; None otherwise.
    clustering: dict[str, int | bool] | None = None


#: The fields of JoinReply.clustering, a session's clustering terms (the [clustering] fields of the same names).
CLUSTERING_TERMS = ("n_clusters", "max_iter", "scale_bits", "mpc_bits", "mpc_frac", "reveal_centres", "helper")


@dataclass(frozen=True)
class PeerKey:
    """A party's key-agreement public key as it gave it, with its signature and certificate (mutual TLS)."""

    public_key: bytes
    signature: bytes = b""
    certificate: bytes = b""


@dataclass(frozen=True)
class Ask:
    """A request that names only its party (GetPeers, GetSealedKey, GetResult, GetAlignment)."""

    party: str


@dataclass(frozen=True)
class SealedKeysPost:
    """The key leader's PostSealedKeys: one sealed key for every other party."""

    party: str
    keys: tuple[SealedKey, ...]


# -- upload ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArraySpec:
    """One announced array: its name, element type (numpy dtype text), shape and layout (protos.serde.Layout),
    and its size in bytes by the wire's rules (protos.serde.spec_nbytes, reckoned where the spec is decoded), or
    None with ``unsized`` saying why (a dtype the wire does not carry, a negative dimension)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    layout: int
    nbytes: int | None = None
    unsized: str = ""


@dataclass(frozen=True)
class UploadHeader:
    """The first message of an upload: the party, its method and public parameters, its ids and arrays.

    ``id_encoding`` is one of protos.ids.ENCODINGS (or a retired or unknown number, refused by the session)."""

    party: str
    method: str
    params: dict[str, str]
    n_ids: int
    arrays: tuple[ArraySpec, ...]
    id_encoding: int
    packed_id_bytes: int
    session: str = ""


@dataclass(frozen=True)
class IdPart:
    """Record ids: as text (``ids``) or a slice of the packed block (``packed``)."""

    ids: tuple[str, ...] = ()
    packed: bytes = b""


@dataclass(frozen=True)
class Chunk:
    """``data`` of array ``array`` from byte ``offset`` on (an upload's, a post's); a view of the message's bytes
    as they arrived, when read in place (coordinator.wire.serde.chunk_in_place)."""

    array: int
    offset: int
    data: bytes | memoryview


#: One message of an upload after its header (None: a message with no part).
UploadPart = IdPart | Chunk | UploadHeader | None


# -- results ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """GetStatus's answer: the state, the error, each party's progress and the ledger entries sent (the last
    ``coordinator.ledger.STATUS_ENTRIES``, see Ledger.recent)."""

    state: int
    error: str
    parties: tuple[PartyStatus, ...]
    ledger: tuple = ()


# -- secure aggregation and MPC --------------------------------------------------------------------


@dataclass(frozen=True)
class DistanceHeader:
    party: str
    round: int
    rows: int
    cols: int
    masked: bool
    seeding: bool


@dataclass(frozen=True)
class LabelsAsk:
    party: str
    round: int
    seeding: bool


@dataclass(frozen=True)
class ConfirmPost:
    """A party's Confirm: its tags to the others, or its refusal of what the coordinator told it."""

    party: str
    tags: tuple[ConfirmTag, ...] = ()
    refusal: str = ""


@dataclass(frozen=True)
class RelayOpen:
    party: str


@dataclass(frozen=True, slots=True)
class Received:
    """One message of a client stream, decoded, with what it cost on the wire: ``size``, the bytes it arrived in
    (or its serialised size when made in this process), and ``payload``, the array bytes it carries."""

    part: object
    size: int
    payload: int = 0
