"""The party's gRPC client: every call a party makes, its requests built and its answers decoded (parties.serde).

``CoordinatorClient`` speaks for one party of one session; ``GrpcLink`` is
the secure-aggregation rounds' link over it (parties.secagg.Link). The key
agreement (``checked_peers``, ``agree_pseudonym_key``) works on the plain
values ``parties.serde`` decodes, against any ``KeyRelay``: this client, or
the in-process simulation's handlers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import grpc
import numpy as np

from parties import serde
from parties.errors import PartyError
from parties.keys import KeyPair, pseudonym_key, seal, sign_key, unseal, verify_peer
from parties.secagg import Link

# IDS_PER_CHUNK and upload_messages belong to parties.serde; code that sends uploads imports them from here too
from parties.serde import IDS_PER_CHUNK, Joined, Peer, SealedKey, upload_messages  # noqa: F401
from parties.text import escaped
from protos.identity import COORDINATOR_NAME
from protos.ppcsim.v1 import session_pb2, session_pb2_grpc
from protos.serde import ArrayAssembler, labels_spec

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

    header: serde.ResultHeader
    labels: np.ndarray  # int32, aligned with the party's ids; -1 noise, -2 not joined


def _serialise(message: session_pb2.UploadMessage | bytes) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


class CoordinatorClient:
    """A channel to the coordinator for one party of one session.

    With ``security``, the channel is TLS (mutual when the party has a
    certificate) and every call carries the party's token; without, plaintext
    (which the coordinator serves on loopback only).
    """

    def __init__(self, address: str, session: str, party: str, security: ClientSecurity | None = None, *, tls: bool = True):
        self.address, self.session, self.party = address, session, party
        self.channel = security.channel(address) if security and tls else grpc.insecure_channel(address)
        self.metadata = (("authorization", f"Bearer {security.token}"),) if security and security.token else None
        self.stub = session_pb2_grpc.CoordinatorStub(self.channel)
        # Upload as the stub calls it, but a message serialised already (upload_messages(serialised=True)) is sent
        # as it is
        self._upload = self.channel.stream_unary("/ppcsim.v1.Coordinator/Upload", request_serializer=_serialise,
                                                 response_deserializer=session_pb2.UploadReply.FromString,
                                                 _registered_method=True)

    def close(self) -> None:
        self.channel.close()

    def join(self, timeout: float, public_key: bytes = b"", signature: bytes = b"") -> Joined:
        """Join the session with our key-agreement ``public_key``, waiting up to ``timeout`` s for the
        coordinator to come up."""
        request = session_pb2.JoinRequest(session=self.session, party=self.party, public_key=public_key,
                                          key_signature=signature)
        reply = self.stub.Join(request, timeout=timeout, wait_for_ready=True, metadata=self.metadata)
        return serde.joined_from_proto(reply)

    def peers(self, timeout: float) -> list[Peer]:
        """Every party's public key, once all have joined."""
        request = session_pb2.PeersRequest(session=self.session, party=self.party)
        return [serde.peer_from_proto(p)
                for p in self.stub.GetPeers(request, timeout=timeout, metadata=self.metadata).peers]

    def post_sealed(self, keys: list[SealedKey], timeout: float) -> None:
        request = session_pb2.SealedKeys(session=self.session, party=self.party,
                                         keys=[serde.sealed_to_proto(k) for k in keys])
        self.stub.PostSealedKeys(request, timeout=timeout, metadata=self.metadata)

    def sealed_key(self, timeout: float) -> SealedKey:
        request = session_pb2.SealedKeyRequest(session=self.session, party=self.party)
        return serde.sealed_from_proto(self.stub.GetSealedKey(request, timeout=timeout, metadata=self.metadata))

    def upload(self, messages: Iterator[session_pb2.UploadMessage | bytes], timeout: float) -> session_pb2.UploadReply:
        """Send an Upload stream (``parties.serde.upload_messages``): UploadMessages, or their bytes."""
        return self._upload(messages, timeout=timeout, metadata=self.metadata)

    def result(self, timeout: float) -> Result:
        """Wait for the clustering and return this party's labels."""
        request = session_pb2.ResultRequest(session=self.session, party=self.party)
        header: serde.ResultHeader | None = None
        labels: ArrayAssembler | None = None
        for message in self.stub.GetResult(request, timeout=timeout, metadata=self.metadata):
            if message.HasField("header"):
                header = serde.outcome_from_proto(message.header)
                labels = ArrayAssembler(labels_spec(header.n_labels))
            elif labels is None:
                raise PartyError("the coordinator sent labels before the result's header")
            else:
                labels.add(message.labels)
        if header is None or labels is None:
            raise PartyError("the coordinator's result stream ended without a header")
        return Result(header=header, labels=labels.array())

    def status(self, timeout: float) -> serde.Status:
        """The session's state and who has joined and uploaded (GetStatus)."""
        reply = self.stub.GetStatus(session_pb2.StatusRequest(session=self.session), timeout=timeout,
                                    metadata=self.metadata)
        return serde.status_from_proto(reply)

    def relay(self, items: Iterable[serde.Frame | serde.Mark | serde.RelayResult], timeout: float) -> Iterator[serde.Frame]:
        """The party's MPC Relay stream: ``items`` go up (after the opening), the relayed frames come back."""
        responses = self.stub.Relay(serde.relay_requests(self.session, self.party, items), timeout=timeout,
                                    metadata=self.metadata)
        return serde.relay_frames(responses)


class GrpcLink(Link):
    """The secure-aggregation rounds' link (parties.secagg.Link) over a party's CoordinatorClient."""

    def __init__(self, client: CoordinatorClient, timeout, retry=None):
        """``timeout``: a function giving the seconds left; ``retry``: a parties.retry.Retry that tries a call
        again when the coordinator is busy (None: no retry). A round's post is not tried again: its messages may
        have been taken before the refusal came."""
        self.client, self.timeout = client, timeout
        self.retry = retry if retry is not None else (lambda what, call: call())

    def _request(self, cls, **fields):
        return cls(session=self.client.session, party=self.client.party, **fields)

    def alignment(self) -> tuple[serde.AlignmentHeader, np.ndarray]:
        return self.retry("GetAlignment", lambda: serde.read_int32(self.client.stub.GetAlignment(
            self._request(session_pb2.AlignmentRequest), timeout=self.timeout(), metadata=self.client.metadata),
            "positions"))

    def post(self, messages: Iterator[session_pb2.DistanceMessage]) -> None:
        self.client.stub.PostDistances(messages, timeout=self.timeout(), metadata=self.client.metadata)

    def labels(self, round_: int, seeding: bool = False) -> tuple[serde.LabelsHeader, np.ndarray]:
        request = self._request(session_pb2.LabelsRequest, round=round_, seeding=seeding)
        return self.retry("GetLabels", lambda: serde.read_int32(self.client.stub.GetLabels(
            request, timeout=self.timeout(), metadata=self.client.metadata), "labels"))

    def confirm(self, tags: list[serde.ConfirmTag]) -> list[serde.ConfirmTag]:
        request = self._request(session_pb2.ConfirmRequest, tags=[serde.tag_to_proto(t) for t in tags])
        try:
            reply = self.retry("Confirm", lambda: self.client.stub.Confirm(request, timeout=self.timeout(),
                                                                            metadata=self.client.metadata))
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
            raise PartyError("the coordinator does not relay the parties' confirmations (Confirm): it cannot show "
                             "that it told every party the same alignment, so this party posts nothing") from None
        return [serde.tag_from_proto(t) for t in reply.tags]

    def relay(self, items):
        return self.client.relay(items, timeout=self.timeout())

    def refuse(self, why: str) -> None:
        try:
            self.client.stub.Confirm(self._request(session_pb2.ConfirmRequest, refusal=why[:1024]),
                                     timeout=min(self.timeout(), 10.0), metadata=self.client.metadata)
        except grpc.RpcError:
            pass  # the session fails as asked (FAILED_PRECONDITION), or the coordinator did not listen


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

    def peers(self, timeout: float) -> list[Peer]: ...

    def post_sealed(self, keys: list[SealedKey], timeout: float) -> None: ...

    def sealed_key(self, timeout: float) -> SealedKey: ...


def checked_peers(
    client: KeyRelay,
    reply: Joined,
    pair: KeyPair,
    security: ClientSecurity | None,
    timeout: float,
    mutual: bool = False,
) -> list[Peer]:
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
    reply: Joined,
    pair: KeyPair,
    seed: int | None,
    security: ClientSecurity | None,
    timeout: float,
    mutual: bool = False,
    peers: list[Peer] | None = None,
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
        key = pseudonym_key(seed, session)
        sealed = []
        for name in reply.parties[1:]:
            nonce, ciphertext = seal(pair, by_name[name].public_key, key, session, me, name)
            sealed.append(SealedKey(to=name, nonce=nonce, ciphertext=ciphertext))
        client.post_sealed(sealed, timeout)
        return key
    envelope = client.sealed_key(timeout)
    return unseal(pair, by_name[leader].public_key, envelope.nonce, envelope.ciphertext, session, leader, me)


def rpc_message(exc: grpc.RpcError) -> str:
    """The coordinator's explanation of a failed call, in one line, escaped (parties.text: it is the
    coordinator's text)."""
    code = exc.code() if hasattr(exc, "code") else None
    detail = escaped(exc.details() if hasattr(exc, "details") else str(exc))
    if code == grpc.StatusCode.UNAVAILABLE:
        return f"coordinator unreachable or its certificate not trusted ({detail})"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"a call to the coordinator ran out of time ({detail})"
    return detail or str(code)
