"""The party's side of the wire: Join, a chunked Upload, and GetResult."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import grpc
import numpy as np

from parties.errors import PartyError
from parties.keys import KeyPair, pseudonym_key, seal, sign_key, unseal, verify_peer
from parties.methods import Sent
from protos.identity import COORDINATOR_NAME
from protos.ids import TEXT as ID_TEXT
from protos.ids import pack as pack_ids
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc
from protos.serde import ArrayAssembler, array_pieces, array_spec, labels_spec

#: Ids per IdChunk message; keeps each message well under gRPC's 4 MiB limit.
IDS_PER_CHUNK = 20_000
#: What an active coordinator could do where mutual TLS is off: said by ``ppc run``, ``ppc party`` and the report.
WITHOUT_MUTUAL_TLS = ("without mutual TLS nothing binds a party's X25519 key to the party: an active coordinator "
                      "could relay keys of its own (a man in the middle), learn the pseudonym key and find raw ids "
                      "by hashing guesses, and read each party's masked values; [security] mutual = true stops it")


@dataclass(frozen=True)
class ClientSecurity:
    """A party's credentials: the CA to trust, its certificate and key (mutual TLS), its token."""

    ca: bytes = b""
    certificate: bytes = b""
    key: bytes = b""
    token: str = ""

    @classmethod
    def load(cls, folder: Path, party: str) -> ClientSecurity:
        """From a ``ppc credentials`` folder: the whole one, or this party's ``parties/<name>`` folder."""
        folder = Path(folder)
        if (folder / "parties" / party).is_dir():
            folder = folder / "parties" / party
        def read(name: str) -> bytes:
            try:
                return (folder / name).read_bytes()
            except OSError as exc:
                raise PartyError(f"credentials: cannot read {folder / name}: {exc.strerror}") from None
        return cls(read("ca.pem"), read("cert.pem"), read("key.pem"), read("token").decode().strip())

    def channel(self, address: str) -> grpc.Channel:
        """A TLS channel to the coordinator, checking its certificate against our CA whatever address we dial."""
        credentials = grpc.ssl_channel_credentials(
            root_certificates=self.ca, private_key=self.key or None, certificate_chain=self.certificate or None
        )
        return grpc.secure_channel(address, credentials, options=[("grpc.ssl_target_name_override", COORDINATOR_NAME)])


@dataclass
class Result:
    """What the coordinator returned to this party."""

    header: session_pb2.ResultHeader
    labels: np.ndarray  # int32, aligned with the party's ids; -1 noise, -2 not joined


def upload_messages(
    session: str,
    party: str,
    method: str,
    params: dict[str, str],
    ids: np.ndarray,
    arrays: list[Sent],
    n_columns: int,
    chunk_bytes: int,
    dtype: str | None = None,
) -> Iterator[session_pb2.UploadMessage]:
    """The upload stream: a header, the ids (as text or packed, whichever is smaller), then each array in chunks
    (as ``dtype`` when given, else as computed)."""
    encoding, packed = pack_ids(ids)
    header = session_pb2.UploadHeader(
        session=session,
        party=party,
        method=method,
        params=params,
        n_ids=len(ids),
        arrays=[array_spec(s.name, s.array, s.layout, dtype) for s in arrays],
        n_columns=n_columns,
        id_encoding=encoding,
        packed_id_bytes=len(packed),
    )
    yield session_pb2.UploadMessage(header=header)
    if encoding == ID_TEXT:
        id_list = ids.tolist()
        for start in range(0, len(id_list), IDS_PER_CHUNK):
            yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(ids=id_list[start : start + IDS_PER_CHUNK]))
    for start in range(0, len(packed), chunk_bytes):
        yield session_pb2.UploadMessage(ids=session_pb2.IdChunk(packed=packed[start : start + chunk_bytes]))
    for index, sent in enumerate(arrays):
        for offset, data in array_pieces(sent.array, chunk_bytes, dtype):
            message = session_pb2.UploadMessage()  # filled in place: wrapping an ArrayChunk would copy it again
            message.chunk.array, message.chunk.offset, message.chunk.data = index, offset, data
            yield message


class CoordinatorClient:
    """A channel to the coordinator for one party of one session.

    With ``security``, the channel is TLS (mutual when the party has a
    certificate) and every call carries the party's token; without, plaintext
    (which the coordinator serves on loopback only).
    """

    def __init__(self, address: str, session: str, party: str, security: ClientSecurity | None = None, *, tls: bool = True):
        self.session, self.party = session, party
        self.channel = security.channel(address) if security and tls else grpc.insecure_channel(address)
        self.metadata = (("authorization", f"Bearer {security.token}"),) if security and security.token else None
        self.stub = session_pb2_grpc.CoordinatorStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def join(self, timeout: float, public_key: bytes = b"", signature: bytes = b"") -> session_pb2.JoinReply:
        """Join the session with our key-agreement ``public_key``, waiting up to ``timeout`` s for the
        coordinator to come up."""
        request = session_pb2.JoinRequest(session=self.session, party=self.party, public_key=public_key,
                                          key_signature=signature)
        return self.stub.Join(request, timeout=timeout, wait_for_ready=True, metadata=self.metadata)

    def peers(self, timeout: float) -> list[session_pb2.PeerKey]:
        """Every party's public key, once all have joined."""
        request = session_pb2.PeersRequest(session=self.session, party=self.party)
        return list(self.stub.GetPeers(request, timeout=timeout, metadata=self.metadata).peers)

    def post_sealed(self, keys: list[session_pb2.SealedKey], timeout: float) -> None:
        request = session_pb2.SealedKeys(session=self.session, party=self.party, keys=keys)
        self.stub.PostSealedKeys(request, timeout=timeout, metadata=self.metadata)

    def sealed_key(self, timeout: float) -> session_pb2.SealedKey:
        request = session_pb2.SealedKeyRequest(session=self.session, party=self.party)
        return self.stub.GetSealedKey(request, timeout=timeout, metadata=self.metadata)

    def upload(self, messages: Iterator[session_pb2.UploadMessage], timeout: float) -> session_pb2.UploadReply:
        return self.stub.Upload(messages, timeout=timeout, metadata=self.metadata)

    def result(self, timeout: float) -> Result:
        """Wait for the clustering and return this party's labels."""
        request = session_pb2.ResultRequest(session=self.session, party=self.party)
        header: session_pb2.ResultHeader | None = None
        labels: ArrayAssembler | None = None
        for message in self.stub.GetResult(request, timeout=timeout, metadata=self.metadata):
            if message.HasField("header"):
                header = message.header
                labels = ArrayAssembler(labels_spec(header.n_labels))
            elif labels is None:
                raise PartyError("the coordinator sent labels before the result's header")
            else:
                labels.add(message.labels)
        if header is None or labels is None:
            raise PartyError("the coordinator's result stream ended without a header")
        return Result(header=header, labels=labels.array())


def key_signature(security: ClientSecurity | None, session: str, party: str, pair: KeyPair, mutual: bool) -> bytes:
    """Our public key signed with our TLS client key, under ``mutual`` TLS (else b"")."""
    if not mutual or security is None or not security.key or not security.certificate:
        return b""
    return sign_key(security.key, session, party, pair.public)


class KeyRelay(Protocol):
    """What the pseudonym-key agreement asks of the coordinator: a CoordinatorClient offers it, and the in-process
    simulation offers it by calling the coordinator's handlers directly."""

    session: str
    party: str

    def peers(self, timeout: float) -> list[session_pb2.PeerKey]: ...

    def post_sealed(self, keys: list[session_pb2.SealedKey], timeout: float) -> None: ...

    def sealed_key(self, timeout: float) -> session_pb2.SealedKey: ...


def checked_peers(
    client: KeyRelay,
    reply: session_pb2.JoinReply,
    pair: KeyPair,
    security: ClientSecurity | None,
    timeout: float,
    mutual: bool = False,
) -> list[session_pb2.PeerKey]:
    """Every party's public key as the coordinator relays it (GetPeers), checked once for all that uses them.

    The set must name exactly the session's parties and hold this party's own
    key unchanged; under ``mutual`` TLS every other party's key must be signed
    by its certificate, so a coordinator that substituted keys is caught
    (unless it also holds the CA's key). PartyError otherwise.
    """
    session, me = client.session, client.party
    peers = client.peers(timeout)
    by_name = {p.party: p for p in peers}
    if set(by_name) != set(reply.parties) or me not in by_name or by_name[me].public_key != pair.public:
        raise PartyError("the coordinator relayed a set of public keys that does not match the session's parties "
                         "or does not hold this party's own key")
    if mutual and security is not None:
        for name, peer in by_name.items():
            if name != me:
                verify_peer(security.ca, peer.certificate, peer.key_signature, session, name, peer.public_key)
    return peers


def agree_pseudonym_key(
    client: KeyRelay,
    reply: session_pb2.JoinReply,
    pair: KeyPair,
    seed: int | None,
    security: ClientSecurity | None,
    timeout: float,
    mutual: bool = False,
    peers: list[session_pb2.PeerKey] | None = None,
) -> bytes:
    """The session's pseudonym key, agreed through the coordinator without it learning the key.

    The key leader (the session's first party) draws the key (from ``seed``,
    else from this process's entropy) and seals it to each other party under
    their X25519 pair secret; every other party waits for its sealed key and
    opens it. ``peers`` are the public keys ``checked_peers`` returned, when
    the caller has them already; else they are fetched and checked here.
    """
    session, me = client.session, client.party
    if peers is None:
        peers = checked_peers(client, reply, pair, security, timeout, mutual)
    by_name = {p.party: p for p in peers}
    leader = reply.parties[0]
    if me == leader:
        key = pseudonym_key(seed)
        sealed = []
        for name in reply.parties[1:]:
            nonce, ciphertext = seal(pair, by_name[name].public_key, key, session, me, name)
            sealed.append(session_pb2.SealedKey(to=name, nonce=nonce, ciphertext=ciphertext))
        client.post_sealed(sealed, timeout)
        return key
    envelope = client.sealed_key(timeout)
    return unseal(pair, by_name[leader].public_key, envelope.nonce, envelope.ciphertext, session, leader, me)
