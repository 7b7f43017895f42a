"""Run a scenario in one process, without gRPC, through the same party and coordinator code.

Each party's disguise, its key agreement and pseudonyms, the upload messages,
the coordinator's handlers, the join, the combination and the clustering are
the ones a real run uses; only the sockets and processes are left out. The
ledger therefore counts the same messages with the same sizes, and every
number but the timings equals the real run's for the same seed
(tests/ppcsim/run/test_sweep.py checks this). For sweeps, where a point costs seconds of
process start-up otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from coordinator import handlers
from coordinator.errors import SessionError
from coordinator.session import Session
from coordinator.wire import serde
from parties.client import agree_pseudonym_key
from parties.disguise import Disguised, disguise
from parties.errors import PartyError
from parties.keys import KeyPair
from parties.pseudonyms import pseudonyms
from parties.serde import (
    Peer,
    SealedKey,
    joined_from_proto,
    peer_from_proto,
    sealed_from_proto,
    sealed_to_proto,
    tag_from_proto,
    tag_to_proto,
)
from ppcsim.scenario.load import Scenario
from protos.ppcsim.v1 import session_pb2


@dataclass
class _Direct:
    """What parties.client.CoordinatorClient offers for the key agreement, calling the handlers directly."""

    coordinator: Session
    session: str  # its name, as a client knows it
    party: str

    def peers(self, timeout: float) -> list[Peer]:
        request = session_pb2.PeersRequest(session=self.session, party=self.party)
        return [peer_from_proto(p) for p in handlers.peers(self.coordinator, request).peers]

    def post_sealed(self, keys: list[SealedKey], timeout: float) -> None:
        request = session_pb2.SealedKeys(session=self.session, party=self.party, keys=map(sealed_to_proto, keys))
        handlers.post_sealed(self.coordinator, request)

    def sealed_key(self, timeout: float) -> SealedKey:
        request = session_pb2.SealedKeyRequest(session=self.session, party=self.party)
        return sealed_from_proto(handlers.sealed_key(self.coordinator, request))


def simulate(scenario: Scenario) -> tuple[Session, dict[str, Disguised]]:
    """The finished session (done or failed) and each party's disguise. ``scenario`` carries every party's seed
    (as the observer loads it)."""
    session = Session(scenario.session_spec())
    own: dict[str, Disguised] = {}
    pairs: dict[str, KeyPair] = {}
    replies: dict[str, session_pb2.JoinReply] = {}
    for cfg in scenario.parties:
        try:
            own[cfg.name] = disguise(cfg)
        except PartyError as exc:  # as a party process says it: naming the party (ppc party)
            raise PartyError(f"party '{cfg.name}': {exc}") from None
        pairs[cfg.name] = KeyPair.generate(cfg.seed, scenario.name)
        request = session_pb2.JoinRequest(session=scenario.name, party=cfg.name, public_key=pairs[cfg.name].public)
        replies[cfg.name] = handlers.join(session, request)
    for cfg in scenario.parties:  # the key leader first: the others then find its sealed key waiting
        reply, ids = replies[cfg.name], None
        if reply.ids == session_pb2.IDS_PSEUDONYMOUS:
            key = agree_pseudonym_key(_Direct(session, scenario.name, cfg.name), joined_from_proto(reply),
                                      pairs[cfg.name], cfg.seed, None, 0.0)
            ids = pseudonyms(key, own[cfg.name].data.ids)
        messages = serde.upload_stream(own[cfg.name].upload(scenario.name, cfg.name, reply.chunk_bytes, ids))
        handlers.upload(session, next(messages), messages)
    for cfg in scenario.parties:
        for _ in handlers.result(session, session_pb2.ResultRequest(session=scenario.name, party=cfg.name)):
            pass
    return session, own


def simulate_secure(scenario: Scenario, *, masked: bool = True, deadline: float | None = None, log=None):
    """A secure-aggregation session run in one process: each party a thread, every message through the
    coordinator's handler functions (so the ledger counts what a real run sends), ids plain.

    ``masked=False`` runs the same rounds with no mask added: a benchmark's
    control, which only this function can select. ``log``: where the parties
    print their progress (standard error by default). Returns the finished
    session, each party's RoundsResult and its normalised data.
    """
    import threading
    from dataclasses import replace

    from parties.keys import KeyPair
    from parties.secagg import Link, read_int32, secure_party

    spec = replace(scenario.session_spec(), ids="plain", allow_unmasked=not masked,
                   deadline=deadline or scenario.deadline)
    session = Session(spec)
    own = {cfg.name: disguise(cfg) for cfg in scenario.parties}
    pairs = {cfg.name: KeyPair.generate() for cfg in scenario.parties}
    replies = {name: handlers.join(session, session_pb2.JoinRequest(session=spec.name, party=name,
                                                                     public_key=pairs[name].public))
               for name in own}

    class InProcess(Link):
        def __init__(self, party):
            self.party = party

        def alignment(self):
            request = session_pb2.AlignmentRequest(session=spec.name, party=self.party)
            return read_int32(handlers.alignment(session, request), "positions")

        def post(self, messages):
            handlers.post_distances(session, iter(messages))

        def labels(self, round_, seeding=False):
            request = session_pb2.LabelsRequest(session=spec.name, party=self.party, round=round_, seeding=seeding)
            return read_int32(handlers.labels(session, request), "labels")

        def confirm(self, tags):
            request = session_pb2.ConfirmRequest(session=spec.name, party=self.party, tags=map(tag_to_proto, tags))
            return [tag_from_proto(tag) for tag in handlers.confirm(session, request).tags]

        def refuse(self, why):
            try:
                handlers.confirm(session, session_pb2.ConfirmRequest(session=spec.name, party=self.party, refusal=why))
            except SessionError:
                pass  # the session failed, as asked

    results, errors = {}, []

    def party(name: str) -> None:
        try:
            peers = handlers.peers(session, session_pb2.PeersRequest(session=spec.name, party=name)).peers

            def upload(messages):
                stream = serde.upload_stream(messages)
                handlers.upload(session, next(stream), stream)

            done = own[name]
            results[name] = secure_party(InProcess(name), upload, list(peers), pairs[name], done.X, done.data.ids,
                                         spec.name, name, len(done.data.columns), replies[name].chunk_bytes,
                                         parties=list(replies[name].parties), masked=masked,
                                         **({"log": log} if log is not None else {}))
            for _ in handlers.result(session, session_pb2.ResultRequest(session=spec.name, party=name)):
                pass
        except Exception as exc:  # noqa: BLE001 - the other parties must be woken, then it is raised
            errors.append(exc)
            session.fail(f"party '{name}': {exc}")

    threads = [threading.Thread(target=party, args=(name,), daemon=True) for name in own]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return session, results, own

