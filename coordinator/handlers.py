"""What each RPC does to a session, as plain functions that count every message in the ledger.

The gRPC servicer calls these with the messages it received; the in-process
simulation (``ppc sweep --in-process``) calls them with the very same
messages, so both account for the same bytes. Errors are SessionError.

Only messages of a party the session expects are counted: a request naming
a party the session does not know is refused without touching the session
(not even its ledger).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from coordinator.clustering import MPC, SECURE
from coordinator.ledger import DOWN, UP, Ledger
from coordinator.session import Session
from coordinator.upload import Received
from coordinator.waits import asked
from protos.ppcsim.v1 import session_pb2
from protos.serde import array_chunks

Message = TypeVar("Message")


def counted(messages: Iterator[Received], ledger: Ledger, party: str, rpc: str) -> Iterator[Received]:
    """Pass ``messages`` through, recording each one in ``ledger`` as it arrives."""
    for item in messages:
        ledger.record(party, rpc, UP, item.message, 0 if item.data is None else len(item.data), item.size)
        yield item


def join(session: Session, request: session_pb2.JoinRequest, certificate: bytes = b"") -> session_pb2.JoinReply:
    """``certificate``: the party's TLS client certificate (PEM) under mutual TLS, relayed with its key."""
    def respond() -> session_pb2.JoinReply:
        session.join(request.party, request.public_key, request.key_signature, certificate)
        return session_pb2.JoinReply(
            chunk_bytes=session.spec.chunk_bytes,
            seconds_left=session.seconds_left(),
            ids=session_pb2.IDS_PSEUDONYMOUS if session.spec.ids == "pseudonymous" else session_pb2.IDS_PLAIN,
            parties=session.spec.parties,
            protocol={SECURE: session_pb2.PROTOCOL_SECURE_AGGREGATION, MPC: session_pb2.PROTOCOL_MPC}.get(
                session.spec.clustering.protocol, session_pb2.PROTOCOL_UPLOAD),
        )

    return _exchange(session, request.party, "Join", request, respond)


def _exchange(session: Session, party: str, rpc: str, request, respond: Callable[[], Message]) -> Message:
    """Count ``request`` (from a party the session expects), make the reply with ``respond``, count it."""
    reply = asked(session, party, rpc, request, respond)
    session.ledger.record(party, rpc, DOWN, reply)
    return reply


def peers(session: Session, request: session_pb2.PeersRequest) -> session_pb2.PeersReply:
    """Every party's public key, once all have joined (waits until then, or the deadline)."""
    def respond() -> session_pb2.PeersReply:
        keys = session.peers(request.party, timeout=session.seconds_left() + 1.0)
        return session_pb2.PeersReply(peers=[
            session_pb2.PeerKey(party=p, public_key=k.public_key, key_signature=k.signature, certificate=k.certificate)
            for p, k in keys
        ])

    return _exchange(session, request.party, "GetPeers", request, respond)


def post_sealed(session: Session, request: session_pb2.SealedKeys) -> session_pb2.SealedKeysReply:
    def respond() -> session_pb2.SealedKeysReply:
        session.post_sealed(request.party, list(request.keys))
        return session_pb2.SealedKeysReply()

    return _exchange(session, request.party, "PostSealedKeys", request, respond)


def sealed_key(session: Session, request: session_pb2.SealedKeyRequest) -> session_pb2.SealedKey:
    """The pseudonym key sealed to the caller (waits for the key leader to post it)."""
    return _exchange(session, request.party, "GetSealedKey", request,
                     lambda: session.sealed_for(request.party, timeout=session.seconds_left() + 1.0))


def upload(
    session: Session, first: Received, rest: Iterator[Received], cancel: Callable[[], None] | None = None
) -> session_pb2.UploadReply:
    """``first`` is the upload's header message, ``rest`` the ids and chunks that follow it, each as received.

    ``cancel`` cuts the stream off should the session fail while it is read (see Session.receive).
    """
    header = first.message.header
    if session.expects(header.party):
        session.ledger.record(header.party, "Upload", UP, first.message, size=first.size)
    payload = session.receive(header, counted(rest, session.ledger, header.party, "Upload"), cancel, first.size)
    reply = session_pb2.UploadReply(payload_bytes=payload)
    session.ledger.record(header.party, "Upload", DOWN, reply)
    return reply


def result(session: Session, request: session_pb2.ResultRequest) -> Iterator[session_pb2.ResultMessage]:
    """Wait for the clustering, then the header and this party's labels in chunks.

    Raises SessionError before the first message if the session failed.
    """
    outcome, labels = asked(session, request.party, "GetResult", request,
                            lambda: session.result_for(request.party, timeout=session.seconds_left() + 1.0))
    header = session_pb2.ResultHeader(
        algorithm=session.spec.clustering.algorithm,
        n_clusters=len(outcome.sizes),
        sizes=outcome.sizes,
        noise=outcome.noise,
        n_joined=len(outcome.join.ids),
        n_labels=len(labels),
    )
    messages = [(session_pb2.ResultMessage(header=header), 0)] + [
        (session_pb2.ResultMessage(labels=chunk), len(chunk.data))
        for chunk in array_chunks(0, labels, session.spec.chunk_bytes)
    ]

    def send():
        for message, payload in messages:
            session.ledger.record(request.party, "GetResult", DOWN, message, payload)
            yield message

    return send()


def status(session: Session, request: session_pb2.StatusRequest) -> session_pb2.StatusReply:
    session.ledger.record("", "GetStatus", UP, request)
    reply = session_pb2.StatusReply(
        state=session.state,
        error=session.error,
        parties=[session_pb2.PartyStatus(**p) for p in session.party_status()],
        ledger=[
            session_pb2.LedgerEntry(
                party=e.party, rpc=e.rpc, direction=e.direction,
                payload_bytes=e.payload, serialized_bytes=e.serialized, time=e.time,
            )
            for e in session.ledger.entries()
        ],
    )
    session.ledger.record("", "GetStatus", DOWN, reply)
    return reply
