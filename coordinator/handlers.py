"""Every RPC at the edge: decode the request (coordinator.wire.serde), let the session's protocols answer, encode.

The gRPC servicer calls these with the messages it received; the in-process
run (``ppc sweep --in-process``) calls them with the very same messages, so
both account for the same bytes. Every message in either direction is counted
by :func:`count`, the one place bytes are counted: the session's ledger, and
for the rounds of secure aggregation the round it belongs to. Errors are
SessionError.

Only messages of a party the session expects are counted: a request naming
a party the session does not know is refused without touching the session
(not even its ledger).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from coordinator.errors import InvalidArgument, PermissionDenied, SessionError
from coordinator.ledger import DOWN, UP
from coordinator.messages import (
    DistanceHeader,
    Frame,
    PartyStatus,
    Received,
    RelayOpen,
    ResultHeader,
    Status,
    Terms,
    UploadHeader,
)
from coordinator.protocols import confirm as confirmation
from coordinator.protocols import mpc, secagg
from coordinator.session import Session
from coordinator.text import shown
from coordinator.waits import WouldWait
from coordinator.wire import serde

Reply = TypeVar("Reply")
Value = TypeVar("Value")
#: The RPC of MPC traffic.
RELAY = mpc.RPC


def count(session: Session, party: str, rpc: str, direction: str, size: int, payload: int = 0,
          rounds: tuple[secagg.Arbiter, int, bool] | None = None, ledger: bool = True) -> None:
    """Count one message of ``size`` bytes on the wire carrying ``payload`` array bytes: in the session's ledger,
    and, with ``rounds`` (the arbiter, the round, whether a seeding step), in that round's record (only there
    with ``ledger`` false: a request the ledger counted already, once it is known to belong to a round)."""
    if ledger:
        session.ledger.record(party, rpc, direction, size, payload)
    if rounds is not None:
        arbiter, round_, seeding = rounds
        arbiter.record(round_, direction, payload, size, seeding)


def _asked(session: Session, party: str, rpc: str, request, respond: Callable[[], Reply]) -> Reply:
    """``respond()``, with ``request`` counted once (from a party the session expects) whether it answers or
    refuses, but not when it would wait (it is run again once the wait is over)."""
    try:
        reply = respond()
    except WouldWait:
        raise
    except BaseException:
        if session.expects(party):
            count(session, party, rpc, UP, request.ByteSize())
        raise
    if session.expects(party):
        count(session, party, rpc, UP, request.ByteSize())
    return reply


def _exchange(session: Session, party: str, rpc: str, request, respond: Callable[[], Value],
              encode: Callable[[Value], Reply]) -> Reply:
    """Count ``request``, make the reply's value with ``respond``, encode it and count it."""
    reply = encode(_asked(session, party, rpc, request, respond))
    count(session, party, rpc, DOWN, reply.ByteSize())  # type: ignore[attr-defined]
    return reply


def _sent(session: Session, party: str, rpc: str, messages: Sequence[tuple[Any, int]], rounds=None) -> Iterator:
    """Yield a streamed answer's messages, each counted as it goes."""
    for message, payload in messages:
        count(session, party, rpc, DOWN, message.ByteSize(), payload, rounds)  # type: ignore[attr-defined]
        yield message


# -- keys ------------------------------------------------------------------------------------------

def join(session: Session, request, certificate: bytes = b""):
    """JoinRequest -> JoinReply. ``certificate``: the party's TLS client certificate (PEM) under mutual TLS,
    relayed with its key."""
    ask = serde.join_from_proto(request)

    def respond() -> Terms:
        session.join(ask.party, ask.public_key, ask.signature, certificate)
        return session.terms()

    return _exchange(session, ask.party, "Join", request, respond, serde.terms_to_proto)


def peers(session: Session, request):
    """PeersRequest -> PeersReply: every party's public key, once all have joined (waits until then)."""
    party = serde.ask_from_proto(request).party
    return _exchange(session, party, "GetPeers", request,
                     lambda: session.peers(party, timeout=session.seconds_left() + 1.0), serde.peers_to_proto)


def post_sealed(session: Session, request):
    """SealedKeys -> SealedKeysReply."""
    post = serde.sealed_from_proto(request)
    return _exchange(session, post.party, "PostSealedKeys", request,
                     lambda: session.post_sealed(post.party, post.keys), serde.posted_to_proto)


def sealed_key(session: Session, request):
    """SealedKeyRequest -> SealedKey: the pseudonym key sealed to the caller (waits for the key leader)."""
    party = serde.ask_from_proto(request).party
    return _exchange(session, party, "GetSealedKey", request,
                     lambda: session.sealed_for(party, timeout=session.seconds_left() + 1.0), serde.sealed_to_proto)


# -- upload and result -----------------------------------------------------------------------------

def _counted(session: Session, items: Iterable[Received], party: str, rpc: str, rounds=None) -> Iterator[Received]:
    """Pass ``items`` through, counting each one as it arrives."""
    for item in items:
        count(session, party, rpc, UP, item.size, item.payload, rounds)
        yield item


def upload(session: Session, first: Received, rest: Iterable[Received], cancel: Callable[[], None] | None = None):
    """An upload -> UploadReply. ``first`` is its header message, ``rest`` the ids and chunks that follow it,
    each decoded as received (coordinator.wire.serde.upload_received, or made()).

    ``cancel`` cuts the stream off should the session fail while it is read (see Session.receive).
    """
    header = first.part
    if not isinstance(header, UploadHeader):
        raise InvalidArgument("an upload starts with its header")
    party = header.party
    if session.expects(party):
        count(session, party, "Upload", UP, first.size)
    payload = session.receive(header, _counted(session, rest, party, "Upload"), cancel, first.size)
    reply = serde.uploaded_to_proto(payload)
    count(session, party, "Upload", DOWN, reply.ByteSize())
    return reply


def result(session: Session, request) -> Iterator:
    """ResultRequest -> ResultMessages: wait for the clustering, then the header and this party's labels in
    chunks. Raises SessionError before the first message if the session failed."""
    party = serde.ask_from_proto(request).party
    outcome, labels = _asked(session, party, "GetResult", request,
                             lambda: session.result_for(party, timeout=session.seconds_left() + 1.0))
    header = ResultHeader(algorithm=session.spec.clustering.algorithm, clusters_found=len(outcome.sizes),
                          sizes=tuple(outcome.sizes), noise=outcome.noise, n_joined=len(outcome.join.ids),
                          n_labels=len(labels))
    return _sent(session, party, "GetResult", serde.result_to_proto(header, labels, session.spec.chunk_bytes))


def status(session: Session, request):
    """StatusRequest -> StatusReply: the state, every party's progress and the ledger's last entries."""
    count(session, "", "GetStatus", UP, request.ByteSize())
    reply = serde.status_to_proto(Status(session.state, session.error,
                                         tuple(PartyStatus(**p) for p in session.party_status()),
                                         tuple(session.ledger.recent())))
    count(session, "", "GetStatus", DOWN, reply.ByteSize())
    return reply


# -- secure aggregation ----------------------------------------------------------------------------

def alignment(session: Session, request) -> Iterator:
    """AlignmentRequest -> AlignmentMessages: this party's rows in the join's order, once every party's ids are
    joined."""
    party = serde.ask_from_proto(request).party
    arbiter = _asked(session, party, "GetAlignment", request, lambda: secagg.alignment_of(session, party))
    header, positions = secagg.alignment(session, arbiter, party)
    return _sent(session, party, "GetAlignment", serde.alignment_to_proto(header, positions, session.spec.chunk_bytes))


def ready_to_post(session: Session, party: str) -> secagg.Arbiter:
    """Before a PostDistances stream is read: FailedPrecondition if the party's ids are not in, else the rounds
    once every party's are joined (a wait)."""
    return secagg.ready_to_post(session, party)


def post_distances(session: Session, messages: Iterable) -> object:
    """DistanceMessages -> DistanceReply: one party's masked partial distances of one round, a header, then
    the uint64 values in chunks."""
    items = serde.distances_made(messages)
    first = next(items, None)
    if first is None or not isinstance(first.part, DistanceHeader):
        raise InvalidArgument("PostDistances starts with its header")
    header = first.part
    party = header.party
    arbiter = secagg.ready_to_post(session, party)
    rounds = (arbiter, header.round, header.seeding)
    try:
        want = secagg.begin_post(session, arbiter, header)
    except SessionError:
        count(session, party, "PostDistances", UP, first.size)
        raise
    count(session, party, "PostDistances", UP, first.size, 0, rounds)
    received = secagg.take_post(session, arbiter, header, items, want,
                                lambda item: count(session, party, "PostDistances", UP, item.size, item.payload,
                                                   rounds))
    reply = serde.posted_distances_to_proto(received)
    count(session, party, "PostDistances", DOWN, reply.ByteSize(), 0, rounds)
    return reply


def labels(session: Session, request) -> Iterator:
    """LabelsRequest -> LabelsMessages: the labels of a round (or a seeding step's centre) once every party
    posted it."""
    ask = serde.labels_from_proto(request)
    arbiter = _asked(session, ask.party, "GetLabels", request,
                     lambda: secagg.distances_arbiter(session, ask.party))
    rounds = (arbiter, ask.round, ask.seeding)
    try:
        if ask.seeding:
            header, values = secagg.seeding_step(session, arbiter, ask.party, ask.round), None
        else:
            header, values = secagg.round_labels(session, arbiter, ask.party, ask.round)
    except InvalidArgument:
        count(session, ask.party, "GetLabels", UP, request.ByteSize(), 0, rounds, ledger=False)
        raise
    count(session, ask.party, "GetLabels", UP, request.ByteSize(), 0, rounds, ledger=False)
    return _sent(session, ask.party, "GetLabels", serde.labels_to_proto(header, values, session.spec.chunk_bytes),
                 rounds)


def confirm(session: Session, request):
    """ConfirmRequest -> ConfirmReply: keep the party's tags; once every party posted, the tags addressed to it."""
    post = serde.confirm_from_proto(request)
    if not session.expects(post.party):
        raise PermissionDenied(f"session '{session.spec.name}' expects no party '{shown(post.party)}'")
    return _exchange(session, post.party, "Confirm", request, lambda: confirmation.confirm(session, post),
                     serde.confirmed_to_proto)


# -- MPC relay -------------------------------------------------------------------------------------

def relay_opening(session: Session, first, helper: bool = False) -> mpc.Hub:
    """The hub a Relay stream opened by ``first`` (a RelayMessage) joins, once every party's ids are joined;
    the opening counted once."""
    item = serde.relay_made(first)
    if not isinstance(item.part, RelayOpen):
        raise InvalidArgument("Relay starts with RelayOpen")
    party = item.part.party
    hub = _asked(session, party, RELAY, first, lambda: mpc.hub_of(session, party, helper))
    if helper:  # _asked counts the session's parties only
        count(session, party, RELAY, UP, item.size)
    return hub


def relay_in(session: Session, hub: mpc.Hub, party: str, message) -> None:
    """One RelayMessage of ``party``'s stream: counted, then handed to the hub."""
    item = serde.relay_made(message)
    hub.check(party, item.part)
    count(session, party, RELAY, UP, item.size, item.payload)
    hub.receive(party, item.part)


def relay_out(session: Session, hub: mpc.Hub, party: str, frame: Frame):
    """A frame taken out for ``party``'s stream: its RelayMessage, counted."""
    hub.delivered(party, frame)
    message = serde.frame_to_proto(frame)
    count(session, party, RELAY, DOWN, message.ByteSize(), len(frame.data))
    return message


def relay(session: Session, first, rest: Iterable, helper: bool = False) -> Iterator:
    """One Relay stream served by threads (the coordinator's own helper, ppcsim.run.helper): its messages read in a
    thread of its own, the frames its peers address to it returned as they come. The gRPC server serves the
    parties' streams as coroutines instead (coordinator.servicer's Relay)."""
    party = first.open.party
    hub = relay_opening(session, first, helper=helper)
    out: queue.Queue = queue.Queue()
    mpc.attach(session, hub, party, out.put)
    problems: list[str] = []

    def read() -> None:
        try:
            for message in rest:
                relay_in(session, hub, party, message)
        except SessionError as exc:
            problems.append(str(exc))
        except Exception as exc:  # noqa: BLE001 - the stream broke: the MPC cannot go on
            problems.append(f"party '{party}': its Relay stream broke ({type(exc).__name__})")
        if problems:
            session.fail(problems[0])
        hub.end(party)

    threading.Thread(target=read, name=f"relay-{party}", daemon=True).start()

    def send() -> Iterator:
        while True:
            frame = out.get()
            if frame is None:
                if problems:
                    raise InvalidArgument(problems[0])
                if session.error:
                    raise SessionError(session.error)
                return
            yield relay_out(session, hub, party, frame)

    return send()
