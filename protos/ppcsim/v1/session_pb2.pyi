from protos.ppcsim.v1 import array_pb2 as _array_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Protocol(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROTOCOL_UPLOAD: _ClassVar[Protocol]
    PROTOCOL_SECURE_AGGREGATION: _ClassVar[Protocol]
    PROTOCOL_MPC: _ClassVar[Protocol]
    PROTOCOL_PLUGIN: _ClassVar[Protocol]

class IdMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IDS_PLAIN: _ClassVar[IdMode]
    IDS_PSEUDONYMOUS: _ClassVar[IdMode]

class IdEncoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ID_TEXT: _ClassVar[IdEncoding]
    ID_LINES_ZLIB: _ClassVar[IdEncoding]
    ID_INT_DELTAS_ZLIB: _ClassVar[IdEncoding]
    ID_PSEUDONYMS: _ClassVar[IdEncoding]
    ID_PSEUDONYMS_AES: _ClassVar[IdEncoding]

class SessionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_STATE_UNSPECIFIED: _ClassVar[SessionState]
    WAITING: _ClassVar[SessionState]
    CLUSTERING: _ClassVar[SessionState]
    DONE: _ClassVar[SessionState]
    FAILED: _ClassVar[SessionState]
PROTOCOL_UPLOAD: Protocol
PROTOCOL_SECURE_AGGREGATION: Protocol
PROTOCOL_MPC: Protocol
PROTOCOL_PLUGIN: Protocol
IDS_PLAIN: IdMode
IDS_PSEUDONYMOUS: IdMode
ID_TEXT: IdEncoding
ID_LINES_ZLIB: IdEncoding
ID_INT_DELTAS_ZLIB: IdEncoding
ID_PSEUDONYMS: IdEncoding
ID_PSEUDONYMS_AES: IdEncoding
SESSION_STATE_UNSPECIFIED: SessionState
WAITING: SessionState
CLUSTERING: SessionState
DONE: SessionState
FAILED: SessionState

class JoinRequest(_message.Message):
    __slots__ = ("session", "party", "public_key", "key_signature")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    KEY_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    public_key: bytes
    key_signature: bytes
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ..., public_key: _Optional[bytes] = ..., key_signature: _Optional[bytes] = ...) -> None: ...

class JoinReply(_message.Message):
    __slots__ = ("chunk_bytes", "seconds_left", "ids", "parties", "protocol", "clustering", "protocol_name")
    CHUNK_BYTES_FIELD_NUMBER: _ClassVar[int]
    SECONDS_LEFT_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    CLUSTERING_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_NAME_FIELD_NUMBER: _ClassVar[int]
    chunk_bytes: int
    seconds_left: float
    ids: IdMode
    parties: _containers.RepeatedScalarFieldContainer[str]
    protocol: Protocol
    clustering: ClusteringTerms
    protocol_name: str
    def __init__(self, chunk_bytes: _Optional[int] = ..., seconds_left: _Optional[float] = ..., ids: _Optional[_Union[IdMode, str]] = ..., parties: _Optional[_Iterable[str]] = ..., protocol: _Optional[_Union[Protocol, str]] = ..., clustering: _Optional[_Union[ClusteringTerms, _Mapping]] = ..., protocol_name: _Optional[str] = ...) -> None: ...

class ClusteringTerms(_message.Message):
    __slots__ = ("n_clusters", "max_iter", "scale_bits", "mpc_bits", "mpc_frac", "reveal_centres", "helper")
    N_CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    MAX_ITER_FIELD_NUMBER: _ClassVar[int]
    SCALE_BITS_FIELD_NUMBER: _ClassVar[int]
    MPC_BITS_FIELD_NUMBER: _ClassVar[int]
    MPC_FRAC_FIELD_NUMBER: _ClassVar[int]
    REVEAL_CENTRES_FIELD_NUMBER: _ClassVar[int]
    HELPER_FIELD_NUMBER: _ClassVar[int]
    n_clusters: int
    max_iter: int
    scale_bits: int
    mpc_bits: int
    mpc_frac: int
    reveal_centres: bool
    helper: bool
    def __init__(self, n_clusters: _Optional[int] = ..., max_iter: _Optional[int] = ..., scale_bits: _Optional[int] = ..., mpc_bits: _Optional[int] = ..., mpc_frac: _Optional[int] = ..., reveal_centres: _Optional[bool] = ..., helper: _Optional[bool] = ...) -> None: ...

class PeersRequest(_message.Message):
    __slots__ = ("session", "party")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ...) -> None: ...

class PeerKey(_message.Message):
    __slots__ = ("party", "public_key", "key_signature", "certificate")
    PARTY_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    KEY_SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    party: str
    public_key: bytes
    key_signature: bytes
    certificate: bytes
    def __init__(self, party: _Optional[str] = ..., public_key: _Optional[bytes] = ..., key_signature: _Optional[bytes] = ..., certificate: _Optional[bytes] = ...) -> None: ...

class PeersReply(_message.Message):
    __slots__ = ("peers",)
    PEERS_FIELD_NUMBER: _ClassVar[int]
    peers: _containers.RepeatedCompositeFieldContainer[PeerKey]
    def __init__(self, peers: _Optional[_Iterable[_Union[PeerKey, _Mapping]]] = ...) -> None: ...

class SealedKey(_message.Message):
    __slots__ = ("to", "nonce", "ciphertext", "sender")
    TO_FIELD_NUMBER: _ClassVar[int]
    NONCE_FIELD_NUMBER: _ClassVar[int]
    CIPHERTEXT_FIELD_NUMBER: _ClassVar[int]
    SENDER_FIELD_NUMBER: _ClassVar[int]
    to: str
    nonce: bytes
    ciphertext: bytes
    sender: str
    def __init__(self, to: _Optional[str] = ..., nonce: _Optional[bytes] = ..., ciphertext: _Optional[bytes] = ..., sender: _Optional[str] = ...) -> None: ...

class SealedKeys(_message.Message):
    __slots__ = ("session", "party", "keys")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    KEYS_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    keys: _containers.RepeatedCompositeFieldContainer[SealedKey]
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ..., keys: _Optional[_Iterable[_Union[SealedKey, _Mapping]]] = ...) -> None: ...

class SealedKeysReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SealedKeyRequest(_message.Message):
    __slots__ = ("session", "party")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ...) -> None: ...

class UploadHeader(_message.Message):
    __slots__ = ("session", "party", "method", "params", "n_ids", "arrays", "n_columns", "id_encoding", "packed_id_bytes")
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    N_IDS_FIELD_NUMBER: _ClassVar[int]
    ARRAYS_FIELD_NUMBER: _ClassVar[int]
    N_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    ID_ENCODING_FIELD_NUMBER: _ClassVar[int]
    PACKED_ID_BYTES_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    method: str
    params: _containers.ScalarMap[str, str]
    n_ids: int
    arrays: _containers.RepeatedCompositeFieldContainer[_array_pb2.ArraySpec]
    n_columns: int
    id_encoding: IdEncoding
    packed_id_bytes: int
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ..., method: _Optional[str] = ..., params: _Optional[_Mapping[str, str]] = ..., n_ids: _Optional[int] = ..., arrays: _Optional[_Iterable[_Union[_array_pb2.ArraySpec, _Mapping]]] = ..., n_columns: _Optional[int] = ..., id_encoding: _Optional[_Union[IdEncoding, str]] = ..., packed_id_bytes: _Optional[int] = ...) -> None: ...

class IdChunk(_message.Message):
    __slots__ = ("ids", "packed")
    IDS_FIELD_NUMBER: _ClassVar[int]
    PACKED_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[str]
    packed: bytes
    def __init__(self, ids: _Optional[_Iterable[str]] = ..., packed: _Optional[bytes] = ...) -> None: ...

class UploadMessage(_message.Message):
    __slots__ = ("header", "ids", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    IDS_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: UploadHeader
    ids: IdChunk
    chunk: _array_pb2.ArrayChunk
    def __init__(self, header: _Optional[_Union[UploadHeader, _Mapping]] = ..., ids: _Optional[_Union[IdChunk, _Mapping]] = ..., chunk: _Optional[_Union[_array_pb2.ArrayChunk, _Mapping]] = ...) -> None: ...

class UploadReply(_message.Message):
    __slots__ = ("payload_bytes",)
    PAYLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    payload_bytes: int
    def __init__(self, payload_bytes: _Optional[int] = ...) -> None: ...

class ResultRequest(_message.Message):
    __slots__ = ("session", "party")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ...) -> None: ...

class ResultHeader(_message.Message):
    __slots__ = ("algorithm", "n_clusters", "sizes", "noise", "n_joined", "n_labels")
    ALGORITHM_FIELD_NUMBER: _ClassVar[int]
    N_CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    SIZES_FIELD_NUMBER: _ClassVar[int]
    NOISE_FIELD_NUMBER: _ClassVar[int]
    N_JOINED_FIELD_NUMBER: _ClassVar[int]
    N_LABELS_FIELD_NUMBER: _ClassVar[int]
    algorithm: str
    n_clusters: int
    sizes: _containers.RepeatedScalarFieldContainer[int]
    noise: int
    n_joined: int
    n_labels: int
    def __init__(self, algorithm: _Optional[str] = ..., n_clusters: _Optional[int] = ..., sizes: _Optional[_Iterable[int]] = ..., noise: _Optional[int] = ..., n_joined: _Optional[int] = ..., n_labels: _Optional[int] = ...) -> None: ...

class ResultMessage(_message.Message):
    __slots__ = ("header", "labels")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    header: ResultHeader
    labels: _array_pb2.ArrayChunk
    def __init__(self, header: _Optional[_Union[ResultHeader, _Mapping]] = ..., labels: _Optional[_Union[_array_pb2.ArrayChunk, _Mapping]] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: str
    def __init__(self, session: _Optional[str] = ...) -> None: ...

class PartyStatus(_message.Message):
    __slots__ = ("party", "joined", "uploaded", "payload_bytes", "payload_expected")
    PARTY_FIELD_NUMBER: _ClassVar[int]
    JOINED_FIELD_NUMBER: _ClassVar[int]
    UPLOADED_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_EXPECTED_FIELD_NUMBER: _ClassVar[int]
    party: str
    joined: bool
    uploaded: bool
    payload_bytes: int
    payload_expected: int
    def __init__(self, party: _Optional[str] = ..., joined: _Optional[bool] = ..., uploaded: _Optional[bool] = ..., payload_bytes: _Optional[int] = ..., payload_expected: _Optional[int] = ...) -> None: ...

class LedgerEntry(_message.Message):
    __slots__ = ("party", "rpc", "direction", "payload_bytes", "serialized_bytes", "time")
    PARTY_FIELD_NUMBER: _ClassVar[int]
    RPC_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    SERIALIZED_BYTES_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    party: str
    rpc: str
    direction: str
    payload_bytes: int
    serialized_bytes: int
    time: float
    def __init__(self, party: _Optional[str] = ..., rpc: _Optional[str] = ..., direction: _Optional[str] = ..., payload_bytes: _Optional[int] = ..., serialized_bytes: _Optional[int] = ..., time: _Optional[float] = ...) -> None: ...

class StatusReply(_message.Message):
    __slots__ = ("state", "error", "parties", "ledger")
    STATE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    LEDGER_FIELD_NUMBER: _ClassVar[int]
    state: SessionState
    error: str
    parties: _containers.RepeatedCompositeFieldContainer[PartyStatus]
    ledger: _containers.RepeatedCompositeFieldContainer[LedgerEntry]
    def __init__(self, state: _Optional[_Union[SessionState, str]] = ..., error: _Optional[str] = ..., parties: _Optional[_Iterable[_Union[PartyStatus, _Mapping]]] = ..., ledger: _Optional[_Iterable[_Union[LedgerEntry, _Mapping]]] = ...) -> None: ...

class AlignmentRequest(_message.Message):
    __slots__ = ("session", "party")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ...) -> None: ...

class AlignmentHeader(_message.Message):
    __slots__ = ("n_joined", "n_rows", "n_clusters", "init", "scale_bits", "max_iter", "parties", "seeding_steps", "mpc_parties", "mpc_columns", "mpc_bits", "mpc_frac", "reveal_centres", "mpc_helper", "mpc_helper_key", "revision", "reveal", "mpc_engine")
    N_JOINED_FIELD_NUMBER: _ClassVar[int]
    N_ROWS_FIELD_NUMBER: _ClassVar[int]
    N_CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    INIT_FIELD_NUMBER: _ClassVar[int]
    SCALE_BITS_FIELD_NUMBER: _ClassVar[int]
    MAX_ITER_FIELD_NUMBER: _ClassVar[int]
    PARTIES_FIELD_NUMBER: _ClassVar[int]
    SEEDING_STEPS_FIELD_NUMBER: _ClassVar[int]
    MPC_PARTIES_FIELD_NUMBER: _ClassVar[int]
    MPC_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    MPC_BITS_FIELD_NUMBER: _ClassVar[int]
    MPC_FRAC_FIELD_NUMBER: _ClassVar[int]
    REVEAL_CENTRES_FIELD_NUMBER: _ClassVar[int]
    MPC_HELPER_FIELD_NUMBER: _ClassVar[int]
    MPC_HELPER_KEY_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    REVEAL_FIELD_NUMBER: _ClassVar[int]
    MPC_ENGINE_FIELD_NUMBER: _ClassVar[int]
    n_joined: int
    n_rows: int
    n_clusters: int
    init: _containers.RepeatedScalarFieldContainer[int]
    scale_bits: int
    max_iter: int
    parties: _containers.RepeatedScalarFieldContainer[str]
    seeding_steps: int
    mpc_parties: _containers.RepeatedScalarFieldContainer[str]
    mpc_columns: _containers.RepeatedScalarFieldContainer[int]
    mpc_bits: int
    mpc_frac: int
    reveal_centres: bool
    mpc_helper: str
    mpc_helper_key: bytes
    revision: int
    reveal: str
    mpc_engine: str
    def __init__(self, n_joined: _Optional[int] = ..., n_rows: _Optional[int] = ..., n_clusters: _Optional[int] = ..., init: _Optional[_Iterable[int]] = ..., scale_bits: _Optional[int] = ..., max_iter: _Optional[int] = ..., parties: _Optional[_Iterable[str]] = ..., seeding_steps: _Optional[int] = ..., mpc_parties: _Optional[_Iterable[str]] = ..., mpc_columns: _Optional[_Iterable[int]] = ..., mpc_bits: _Optional[int] = ..., mpc_frac: _Optional[int] = ..., reveal_centres: _Optional[bool] = ..., mpc_helper: _Optional[str] = ..., mpc_helper_key: _Optional[bytes] = ..., revision: _Optional[int] = ..., reveal: _Optional[str] = ..., mpc_engine: _Optional[str] = ...) -> None: ...

class AlignmentMessage(_message.Message):
    __slots__ = ("header", "positions")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    POSITIONS_FIELD_NUMBER: _ClassVar[int]
    header: AlignmentHeader
    positions: _array_pb2.ArrayChunk
    def __init__(self, header: _Optional[_Union[AlignmentHeader, _Mapping]] = ..., positions: _Optional[_Union[_array_pb2.ArrayChunk, _Mapping]] = ...) -> None: ...

class DistanceHeader(_message.Message):
    __slots__ = ("session", "party", "round", "rows", "cols", "masked", "seeding")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLS_FIELD_NUMBER: _ClassVar[int]
    MASKED_FIELD_NUMBER: _ClassVar[int]
    SEEDING_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    round: int
    rows: int
    cols: int
    masked: bool
    seeding: bool
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ..., round: _Optional[int] = ..., rows: _Optional[int] = ..., cols: _Optional[int] = ..., masked: _Optional[bool] = ..., seeding: _Optional[bool] = ...) -> None: ...

class DistanceMessage(_message.Message):
    __slots__ = ("header", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: DistanceHeader
    chunk: _array_pb2.ArrayChunk
    def __init__(self, header: _Optional[_Union[DistanceHeader, _Mapping]] = ..., chunk: _Optional[_Union[_array_pb2.ArrayChunk, _Mapping]] = ...) -> None: ...

class DistanceReply(_message.Message):
    __slots__ = ("payload_bytes",)
    PAYLOAD_BYTES_FIELD_NUMBER: _ClassVar[int]
    payload_bytes: int
    def __init__(self, payload_bytes: _Optional[int] = ...) -> None: ...

class LabelsRequest(_message.Message):
    __slots__ = ("session", "party", "round", "seeding")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    SEEDING_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    round: int
    seeding: bool
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ..., round: _Optional[int] = ..., seeding: _Optional[bool] = ...) -> None: ...

class LabelsHeader(_message.Message):
    __slots__ = ("round", "done", "changed", "sizes", "n_labels", "seeding", "centre")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    SIZES_FIELD_NUMBER: _ClassVar[int]
    N_LABELS_FIELD_NUMBER: _ClassVar[int]
    SEEDING_FIELD_NUMBER: _ClassVar[int]
    CENTRE_FIELD_NUMBER: _ClassVar[int]
    round: int
    done: bool
    changed: int
    sizes: _containers.RepeatedScalarFieldContainer[int]
    n_labels: int
    seeding: bool
    centre: int
    def __init__(self, round: _Optional[int] = ..., done: _Optional[bool] = ..., changed: _Optional[int] = ..., sizes: _Optional[_Iterable[int]] = ..., n_labels: _Optional[int] = ..., seeding: _Optional[bool] = ..., centre: _Optional[int] = ...) -> None: ...

class LabelsMessage(_message.Message):
    __slots__ = ("header", "labels")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    header: LabelsHeader
    labels: _array_pb2.ArrayChunk
    def __init__(self, header: _Optional[_Union[LabelsHeader, _Mapping]] = ..., labels: _Optional[_Union[_array_pb2.ArrayChunk, _Mapping]] = ...) -> None: ...

class ConfirmTag(_message.Message):
    __slots__ = ("to", "sender", "field", "mac")
    TO_FIELD_NUMBER: _ClassVar[int]
    SENDER_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    MAC_FIELD_NUMBER: _ClassVar[int]
    to: str
    sender: str
    field: str
    mac: bytes
    def __init__(self, to: _Optional[str] = ..., sender: _Optional[str] = ..., field: _Optional[str] = ..., mac: _Optional[bytes] = ...) -> None: ...

class ConfirmRequest(_message.Message):
    __slots__ = ("session", "party", "tags", "refusal")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    REFUSAL_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    tags: _containers.RepeatedCompositeFieldContainer[ConfirmTag]
    refusal: str
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ..., tags: _Optional[_Iterable[_Union[ConfirmTag, _Mapping]]] = ..., refusal: _Optional[str] = ...) -> None: ...

class ConfirmReply(_message.Message):
    __slots__ = ("tags",)
    TAGS_FIELD_NUMBER: _ClassVar[int]
    tags: _containers.RepeatedCompositeFieldContainer[ConfirmTag]
    def __init__(self, tags: _Optional[_Iterable[_Union[ConfirmTag, _Mapping]]] = ...) -> None: ...

class RelayOpen(_message.Message):
    __slots__ = ("session", "party")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PARTY_FIELD_NUMBER: _ClassVar[int]
    session: str
    party: str
    def __init__(self, session: _Optional[str] = ..., party: _Optional[str] = ...) -> None: ...

class RelayFrame(_message.Message):
    __slots__ = ("peer", "seq", "data")
    PEER_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    peer: str
    seq: int
    data: bytes
    def __init__(self, peer: _Optional[str] = ..., seq: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...

class RelayMark(_message.Message):
    __slots__ = ("round",)
    ROUND_FIELD_NUMBER: _ClassVar[int]
    round: int
    def __init__(self, round: _Optional[int] = ...) -> None: ...

class RelayResult(_message.Message):
    __slots__ = ("labels", "centres")
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CENTRES_FIELD_NUMBER: _ClassVar[int]
    labels: bytes
    centres: bytes
    def __init__(self, labels: _Optional[bytes] = ..., centres: _Optional[bytes] = ...) -> None: ...

class RelayMessage(_message.Message):
    __slots__ = ("open", "frame", "mark", "result")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    MARK_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    open: RelayOpen
    frame: RelayFrame
    mark: RelayMark
    result: RelayResult
    def __init__(self, open: _Optional[_Union[RelayOpen, _Mapping]] = ..., frame: _Optional[_Union[RelayFrame, _Mapping]] = ..., mark: _Optional[_Union[RelayMark, _Mapping]] = ..., result: _Optional[_Union[RelayResult, _Mapping]] = ...) -> None: ...
