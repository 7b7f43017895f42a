"""The messages both sides read alike, as plain values: the one set of types a party and the coordinator decode
the wire into (``parties.serde`` and ``coordinator.wire.serde``, each with its own encoders and decoders).

Each dataclass holds one message of ``protos/ppcsim/v1/session.proto`` field
for field (repeated fields as tuples), under the same field names, but for
:class:`ResultHeader`, whose ``clusters_found`` is the message's
``n_clusters`` (the count the clustering found, which a density clustering
chooses itself, not the ``n_clusters`` a scenario asks for). Messages only one
side reads stay with that side (``coordinator.messages``: an upload's header,
a Join request; ``parties.serde``: what Join answers, as a party checks it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SealedKey:
    """The pseudonym key sealed by ``sender`` (the key leader) to party ``to``."""

    to: str
    nonce: bytes
    ciphertext: bytes
    sender: str = ""


@dataclass(frozen=True)
class ResultHeader:
    """The header of GetResult: the clustering's algorithm, the clusters it found (``clusters_found``, the
    message's ``n_clusters``) and their sizes, its noise, the joined records and the labels that follow."""

    algorithm: str
    clusters_found: int
    sizes: tuple[int, ...]
    noise: int
    n_joined: int
    n_labels: int


@dataclass(frozen=True)
class PartyStatus:
    """One party's line of GetStatus."""

    party: str
    joined: bool
    uploaded: bool
    payload_bytes: int = 0
    payload_expected: int = 0


@dataclass(frozen=True)
class AlignmentHeader:
    """The header of GetAlignment (secure aggregation and MPC): the join as the arbiter fixed it, the rounds'
    parameters, and for an MPC its share-holders (docs/secure-aggregation.md, docs/protocol.md)."""

    n_joined: int = 0
    n_rows: int = 0
    n_clusters: int = 0
    init: tuple[int, ...] = ()
    scale_bits: int = 0
    max_iter: int = 0
    parties: tuple[str, ...] = ()
    seeding_steps: int = 0
    revision: int = 0
    mpc_parties: tuple[str, ...] = ()
    mpc_columns: tuple[int, ...] = ()
    mpc_bits: int = 0
    mpc_frac: int = 0
    reveal_centres: bool = False
    mpc_helper: str = ""
    mpc_helper_key: bytes = b""
    reveal: str = ""
    #: The MPC's engine: "" for MPyC, "spu" for SPU (ABY3).
    mpc_engine: str = ""


@dataclass(frozen=True)
class LabelsHeader:
    """The header of GetLabels: round ``round``'s answer (with ``seeding``, a seeding step's chosen centre)."""

    round: int = 0
    done: bool = False
    changed: int = 0
    sizes: tuple[int, ...] = ()
    n_labels: int = 0
    seeding: bool = False
    centre: int = 0


@dataclass(frozen=True)
class ConfirmTag:
    """A confirmation MAC from ``sender`` to ``to`` over one confirmed field (docs/secure-aggregation.md)."""

    to: str
    field: str
    mac: bytes
    sender: str = ""


@dataclass(frozen=True)
class Frame:
    """One sealed frame of an MPC link, to ``peer`` as sent, from ``peer`` as delivered; ``seq`` counts the
    directed link, ``data`` is AES-GCM ciphertext and tag."""

    peer: str
    seq: int
    data: bytes


@dataclass(frozen=True)
class Mark:
    """A note on the Relay stream that the party's MPC program began round ``round``."""

    round: int


@dataclass(frozen=True)
class RelayResult:
    """What the party's MPC opened, told to the coordinator at the end of its Relay stream."""

    labels: bytes
    centres: bytes
